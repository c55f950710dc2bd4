"""Issue 37.7: counts that hide failures, and flags that take anything.

- a corpus ``--llm`` run whose endpoint failed some sentences said "0 failed" (articles) and so did its
  report: both now say how many sentences failed in how many decided articles, and that a rerun
  completes them (and a healthy rerun does);
- an endpoint's error text reaches the terminal with its control sequences written as visible escapes;
- every numeric flag of every command refuses nan, inf and out-of-range values in one line (exit 2);
  ``--by`` a column no article has is refused, not an empty report;
- two paths to one results file (a symbolic link) share one lock.
"""

from __future__ import annotations

import pandas as pd
import pytest

from mabpd_kit import cli
from mabpd_kit.runs import Busy
from mabpd_kit.runs.checkpoint import Checkpoint
from mabpd_kit.testing import Reply, all_text

CONTROL = ("\x1b", "\x07", "\x9b", "\r", "\u202e")


# -- numeric flags -----------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,flag", [
    (["analyze", "c.csv", "--threshold", "nan"], "--threshold"),
    (["analyze", "c.csv", "--threshold", "inf"], "--threshold"),
    (["analyze", "c.csv", "--threshold", "-1"], "--threshold"),
    (["analyze", "c.csv", "--workers", "0"], "--workers"),
    (["analyze", "c.csv", "--workers", "-3"], "--workers"),
    (["analyze", "c.csv", "--workers", "two"], "--workers"),
    (["report", "r.jsonl", "--threshold", "nan"], "--threshold"),
    (["radar", "debate", "a claim", "--tau-s", "nan"], "--tau-s"),
    (["radar", "debate", "a claim", "--tau-v", "1.5"], "--tau-v"),
    (["radar", "calibrate", "--simulate", "-5"], "--simulate"),
    (["radar", "calibrate", "--cost-per-round", "inf"], "--cost-per-round"),
    (["identity", "simulate", "--agents", "1"], "--agents"),
    (["identity", "simulate", "--w-peer", "nan"], "--w-peer"),
    (["identity", "simulate", "--questions", "0"], "--questions"),
    (["identity", "run", "--n", "-2"], "--n"),
    (["doctor", "--timeout", "0"], "--timeout"),
    (["serve", "--port", "70000"], "--port"),
])
def test_a_bad_number_is_one_line_naming_the_flag(argv, flag, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert not out and len(lines) == 1 and flag in lines[0] and "usage:" not in err, err
    assert not list(tmp_path.iterdir())  # nothing ran


def _corpus(tmp_path):
    pd.DataFrame({"text": ["Critics slammed the plan. The council met on Monday.", "The vote is next week."],
                  "outlet": ["a", "b"]}).to_csv(tmp_path / "c.csv", index=False)


def test_a_threshold_above_one_on_the_probability_and_a_missing_by_column_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _corpus(tmp_path)
    assert cli.main(["analyze", "c.csv", "--threshold", "5", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "p_biased" in err and "0 to 1" in err and not (tmp_path / "c.csv.mabpd.jsonl").exists()
    code = cli.main(["analyze", "c.csv", "--workers", "1", "--report", "r.html", "--by", "NOSUCHCOL", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "NOSUCHCOL" in err and "outlet" in err and not (tmp_path / "r.html").exists()
    assert cli.main(["report", "c.csv.mabpd.jsonl", "--by", "NOSUCHCOL", "-o", "r.html"]) == 2
    assert "NOSUCHCOL" in capsys.readouterr().err and not (tmp_path / "r.html").exists()
    assert cli.main(["report", "c.csv.mabpd.jsonl", "--by", "outlet", "-o", "r.html"]) == 0  # a real column works


# -- the lock ---------------------------------------------------------------------------------------------
def test_a_symlinked_results_path_shares_the_lock(tmp_path):
    real = tmp_path / "run.jsonl"
    real.write_text("")
    link = tmp_path / "alias.jsonl"
    link.symlink_to(real)
    first = Checkpoint(real)
    first.lock()
    try:
        with pytest.raises(Busy):
            Checkpoint(link).lock()
    finally:
        first.close()
    again = Checkpoint(link)
    again.lock()  # free once the first holder is done
    again.close()


# -- an endpoint's control sequences -------------------------------------------------------------------
def test_an_endpoints_control_sequences_never_reach_the_terminal(fake_server, tmp_path, capsys, monkeypatch):
    from mabpd_kit.config import Config
    from mabpd_kit.llm import EndpointError, connect
    from mabpd_kit.printable import Printable

    evil = "boom\x1b[2J\x1b]0;pwned\x07\r\x9b31m\u202eevil"
    srv = fake_server(lambda request: Reply(status=500, retry_after=0.01, error=evil))
    cfg = Config().replace(**{"llm.max_retries": 0, "llm.timeout_s": 10.0})
    llm = connect(base_url=srv.base_url, model="m", config=cfg, cache_dir=tmp_path / "cache", quiet=True)
    with pytest.raises(EndpointError) as got:
        llm.chat("hello", cache=False)
    err = got.value
    assert "boom" in str(err) and "\\x1b[2J" in str(err)  # what the server said, readable
    assert not any(c in str(err) + err.detail for c in CONTROL)

    def raises(args):
        from mabpd_kit.llm import LLMError

        raise LLMError(f"the endpoint said {evil}")

    monkeypatch.setattr("mabpd_kit.cli.demo.run", raises)
    assert cli.main(["demo"]) == 2
    err_text = capsys.readouterr().err
    assert "the endpoint said boom" in err_text and not any(c in err_text for c in CONTROL)

    class Sink:
        text = ""

        def write(self, s):
            self.text += s

    sink = Sink()
    Printable(sink).write(f"\r 50%|#####     | 5/10 {evil}\n")  # a progress bar keeps its \r, nothing else
    assert sink.text.startswith("\r 50%") and sink.text.count("\r") == 1 and "\x1b" not in sink.text


# -- failed sentences inside decided articles ------------------------------------------------------------
def _script(state):
    from test_corpus_llm import _script as panel  # the scripted panel of the corpus LLM tests ("slammed" is loaded)

    def reply(request):
        item = all_text(request).split("<article>")[-1].split("</article>")[0]
        if state["bad"] and "Tuesday" in item:
            return Reply(status=500, retry_after=0.01, error="upstream\x1b[31m failure")
        return panel(request)
    return reply


def test_failed_sentences_are_counted_and_a_rerun_completes_them(fake_server, tmp_path, capsys, monkeypatch):
    state = {"bad": True}
    srv = fake_server(_script(state))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MABPD_BASE_URL", srv.base_url)
    monkeypatch.setenv("MABPD_MODEL", "fake")
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    texts = ["Critics slammed the plan. The council met on Tuesday. The vote is next week.",
             "Rain is expected on Tuesday. The mayor spoke on Monday.", "The budget passed on Friday."]
    pd.DataFrame({"text": texts, "outlet": ["a", "b", "b"]}).to_csv("c.csv", index=False)
    argv = ["analyze", "c.csv", "--llm", "--out", "run.jsonl", "--report", "r.html", "--quiet"]
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert "3 articles (4 sentences analysed), 0 failed" in err  # the articles were decided...
    assert "2 of 6 sentences failed (in 2 decided articles): rerun the same analysis to complete them" in err
    assert not any(c in err for c in CONTROL)
    html = (tmp_path / "r.html").read_text()
    assert "2 of 6 sentences failed (in 2 decided articles)" in html
    state["bad"] = False
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert "(6 sentences analysed), 0 failed" in err and "sentences failed" not in err
    assert "sentences failed" not in (tmp_path / "r.html").read_text()
