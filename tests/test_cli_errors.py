"""Every CLI failure is one line on stderr and an exit code, never a traceback (issue 16)."""

from __future__ import annotations

import socket

import pytest

from mabpd_kit import cli
from mabpd_kit.testing import Reply


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    """Run in a scratch folder (checkpoints, reports), online mode, no debug tracebacks."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    monkeypatch.delenv("MABPD_DEBUG", raising=False)


def free_port() -> int:
    """A port with nothing listening on it (a dead server)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str, command: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.startswith(f"mabpd {command}:")]
    assert "Traceback" not in err, err
    assert lines, err
    return lines[-1]


# -- endpoints ----------------------------------------------------------------------------------


def test_analyze_llm_endpoint_without_model(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MABPD_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    (tmp_path / "a.txt").write_text("The senator slammed the bill.\n")
    code, _, err = run_cli(capsys, "analyze", "a.txt", "--llm")
    assert code == 2
    assert "MABPD_MODEL" in one_line(err, "analyze")


def test_evaluate_endpoint_without_model(capsys):
    code, _, err = run_cli(capsys, "evaluate", "--endpoint", f"http://127.0.0.1:{free_port()}/v1", "--limit", "2")
    assert code == 2
    assert "no model" in one_line(err, "evaluate")


def test_identity_run_endpoint_without_model(capsys, monkeypatch):
    monkeypatch.setenv("MABPD_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    code, _, err = run_cli(capsys, "identity", "run", "--n", "1")
    assert code == 2
    assert "MABPD_MODEL" in one_line(err, "identity")


def test_remote_url_without_key(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MABPD_BASE_URL", "https://llm.example.invalid/v1")
    monkeypatch.setenv("MABPD_MODEL", "m")
    (tmp_path / "a.txt").write_text("The senator slammed the bill.\n")
    code, _, err = run_cli(capsys, "analyze", "a.txt", "--llm")
    assert code == 2
    assert "MABPD_API_KEY" in one_line(err, "analyze")


def test_radar_debate_dead_port(capsys, monkeypatch):
    monkeypatch.setenv("MABPD_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.setenv("MABPD_MODEL", "m")
    code, out, err = run_cli(capsys, "radar", "debate", "The sky is green.", "--evidence", "The sky is blue.")
    assert code in (1, 2)
    assert "Traceback" not in out
    assert "reach" in one_line(err, "radar debate")


def test_radar_debate_key_refused(capsys, monkeypatch, fake_server):
    srv = fake_server(lambda request: Reply(status=401, error="invalid api key"))
    monkeypatch.setenv("MABPD_BASE_URL", srv.base_url)
    monkeypatch.setenv("MABPD_MODEL", "m")
    code, out, err = run_cli(capsys, "radar", "debate", "The sky is green.", "--evidence", "The sky is blue.")
    assert code in (1, 2)
    assert "Traceback" not in out
    assert "401" in one_line(err, "radar debate")


# -- input files --------------------------------------------------------------------------------


def test_analyze_empty_directory(tmp_path, capsys):
    (tmp_path / "d").mkdir()
    code, _, err = run_cli(capsys, "analyze", "d")
    assert code == 2
    line = one_line(err, "analyze")
    assert "no .txt or .html files in d" in line


def test_analyze_directory_of_texts_is_a_corpus(tmp_path, capsys):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("The senator slammed the disastrous bill. The vote is on Friday.")
    (tmp_path / "d" / "b.html").write_text("<p>The council met on Tuesday.</p>")
    code, _, err = run_cli(capsys, "analyze", "d")
    assert code == 0 and "2 articles analysed" in err
    assert len((tmp_path / "d.mabpd.jsonl").read_text().splitlines()) == 2


def test_whitespace_only_file_with_lines(tmp_path, capsys):
    (tmp_path / "ws.txt").write_text("   \n\t\n \n")
    code, _, err = run_cli(capsys, "analyze", "ws.txt", "--lines")
    assert code == 2
    assert one_line(err, "analyze") == "mabpd analyze: error: no text in ws.txt"


def test_binary_file_is_refused(tmp_path, capsys):
    import random

    rnd = random.Random(1)
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(rnd.randrange(256) for _ in range(4000)))
    code, out, err = run_cli(capsys, "analyze", "blob.bin", "--lines")
    assert code == 2 and out == ""
    assert "binary" in one_line(err, "analyze")


@pytest.mark.parametrize("name,body", [
    ("items.csv", "id,text\n1,The senator slammed the bill.\n"),
    ("items.tsv", "id\ttext\n1\tThe senator slammed the bill.\n"),
    ("items.jsonl", '{"id": "1", "text": "The senator slammed the bill."}\n'),
])
def test_tabular_file_is_a_corpus(tmp_path, capsys, name, body):
    (tmp_path / name).write_text(body)
    code, out, err = run_cli(capsys, "analyze", name)
    assert code == 0 and out == "" and "1 articles analysed" in err  # not the header as a sentence
    assert (tmp_path / f"{name}.mabpd.jsonl").exists()


def test_a_file_that_is_not_parquet_is_one_line(tmp_path, capsys):
    (tmp_path / "items.parquet").write_text("id,text\n1,The senator slammed the bill.\n")
    code, out, err = run_cli(capsys, "analyze", "items.parquet")
    assert code == 2 and out == ""
    assert "parquet" in one_line(err, "analyze").lower()


def test_cp1252_file_is_decoded_as_the_api_does(tmp_path, capsys):
    import json

    from mabpd_kit.text import clean

    raw = "The mayor\x92s \x93plan\x94 is a disgrace.\n".encode("latin-1")
    (tmp_path / "l1.txt").write_bytes(raw)
    code, out, _ = run_cli(capsys, "analyze", "l1.txt", "--lines", "--format", "json")
    assert code == 0
    d = json.loads(out.splitlines()[0])
    assert "\ufffd" not in d["text"]
    assert d["clean_text"] == clean(raw).text.strip() == 'The mayor\'s "plan" is a disgrace.'


def test_progress_goes_to_a_terminal_stderr_and_json_stdout_stays_clean(tmp_path, capsys, monkeypatch):
    import json
    import sys

    (tmp_path / "a.txt").write_text("The senator slammed the bill.\nThe bill passed.\n")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code, out, err = run_cli(capsys, "analyze", "a.txt", "--lines", "--format", "json")
    assert code == 0
    assert [json.loads(ln)["id"] for ln in out.splitlines()] == ["0", "1"]
    assert "2/2" in err  # the tqdm bar
    code, out, err = run_cli(capsys, "analyze", "a.txt", "--lines", "--format", "json", "--quiet")
    assert code == 0 and "2/2" not in err


# -- unexpected errors --------------------------------------------------------------------------


def test_unexpected_error_is_one_line_with_the_debug_hint(capsys, monkeypatch):
    import mabpd_kit.cli.demo as demo

    def boom(args):
        raise RuntimeError("something broke\nin two lines")

    monkeypatch.setattr(demo, "run", boom)
    code, _, err = run_cli(capsys, "demo")
    assert code == 2
    assert one_line(err, "demo") == ("mabpd demo: unexpected error: RuntimeError: something broke in two lines "
                                     "(set MABPD_DEBUG=1 for the traceback)")
    monkeypatch.setenv("MABPD_DEBUG", "1")
    with pytest.raises(RuntimeError, match="something broke"):
        cli.main(["demo"])


def test_os_error_is_one_line(capsys, monkeypatch):
    import mabpd_kit.cli.demo as demo

    def denied(args):
        raise PermissionError(13, "Permission denied", "reports/demo.html")

    monkeypatch.setattr(demo, "run", denied)
    code, _, err = run_cli(capsys, "demo")
    assert code == 2
    assert one_line(err, "demo") == "mabpd demo: error: Permission denied: reports/demo.html"


def test_subprocess_prints_no_traceback(tmp_path):
    """The installed entry point too (not only main()): a directory, as a user would type it."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "mabpd_kit.cli", "analyze", str(tmp_path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("mabpd analyze: error:")


def test_radar_evidence_file_is_read_like_analyze_input(tmp_path, capsys):
    (tmp_path / "ev.csv").write_text("id,text\n1,The sky is blue.\n")
    code, out, err = run_cli(capsys, "radar", "debate", "The sky is green.", "--evidence-file", "ev.csv")
    assert code == 2 and out == ""
    line = one_line(err, "radar")
    assert "tabular input" in line and "--lines" not in line
