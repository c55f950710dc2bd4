"""Download path of mabpd_kit.data against a real HTTP server on 127.0.0.1 that the test starts."""

from __future__ import annotations

import hashlib
import io
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mabpd_kit import data


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        if self.path.startswith("/truncated"):
            # promise 1,000 bytes, send 10, hang up
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
            return
        self.server.hits.append(self.path)
        super().do_GET()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    httpd.hits = []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    monkeypatch.delenv("MABPD_DATA_DIR", raising=False)
    return tmp_path / "cache"


def _entry(url, content=None, **kw):
    sha = hashlib.sha256(content).hexdigest() if content is not None else None
    return data.FileEntry(dataset="Toy", relpath="sub/toy.csv", url=url, sha256=sha,
                        size=len(content) if content is not None else None, **kw)


def _no_partials(cache):
    return not list(cache.rglob(".part-*"))


def test_fetch_verifies_and_places_the_file(server, cache):
    root, base, _ = server
    body = b"text,label\nhello,1\n" * 50
    (root / "toy.csv").write_bytes(body)
    path = data.fetch(_entry(f"{base}/toy.csv", body), download_dir=cache, quiet=True)
    assert path == cache / "Toy" / "sub" / "toy.csv"
    assert path.read_bytes() == body and _no_partials(cache)


def test_checksum_mismatch_keeps_nothing(server, cache):
    root, base, _ = server
    (root / "toy.csv").write_bytes(b"tampered content")
    entry = data.FileEntry(dataset="Toy", relpath="sub/toy.csv", url=f"{base}/toy.csv", sha256="0" * 64)
    with pytest.raises(data.ChecksumError, match="does not match"):
        data.fetch(entry, download_dir=cache, quiet=True)
    assert not (cache / "Toy" / "sub" / "toy.csv").exists() and _no_partials(cache)


def test_truncated_download_is_rejected(server, cache):
    _, base, _ = server
    entry = data.FileEntry(dataset="Toy", relpath="sub/toy.csv", url=f"{base}/truncated")
    with pytest.raises(data.ChecksumError, match="truncated"):
        data.fetch(entry, download_dir=cache, quiet=True)
    assert not (cache / "Toy" / "sub" / "toy.csv").exists() and _no_partials(cache)


def test_size_mismatch_is_rejected(server, cache):
    root, base, _ = server
    (root / "toy.csv").write_bytes(b"short")
    entry = data.FileEntry(dataset="Toy", relpath="sub/toy.csv", url=f"{base}/toy.csv", size=999)
    with pytest.raises(data.ChecksumError, match="size"):
        data.fetch(entry, download_dir=cache, quiet=True)


def test_zip_member_is_extracted_and_verified(server, cache):
    root, base, _ = server
    member = b"<articles><article id='1'/></articles>"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("inner/articles.xml", member)
    (root / "a.zip").write_bytes(buf.getvalue())
    entry = _entry(f"{base}/a.zip", member, archive_member="articles.xml")
    path = data.fetch(entry, download_dir=cache, quiet=True)
    assert path.read_bytes() == member and _no_partials(cache)


def test_corrupt_zip_is_rejected(server, cache):
    root, base, _ = server
    (root / "a.zip").write_bytes(b"this is not a zip archive")
    entry = data.FileEntry(dataset="Toy", relpath="sub/toy.csv", url=f"{base}/a.zip", archive_member="x.xml")
    with pytest.raises(data.ChecksumError, match="not a valid zip"):
        data.fetch(entry, download_dir=cache, quiet=True)
    assert _no_partials(cache)


def test_http_error_becomes_a_clear_missing_error(server, cache):
    _, base, _ = server
    entry = data.FileEntry(dataset="Toy", relpath="sub/toy.csv", url=f"{base}/absent.csv")
    with pytest.raises(data.DataMissingError, match="absent.csv") as info:
        data.fetch(entry, download_dir=cache, quiet=True)
    assert isinstance(info.value, FileNotFoundError)


def test_trust_on_first_use_then_detects_corruption_and_redownloads(server, cache, monkeypatch, capsys):
    root, base, httpd = server
    body = b"first version\n"
    (root / "toy.csv").write_bytes(body)
    entry = _entry(f"{base}/toy.csv")  # no sha256 published
    monkeypatch.setattr(data.download, "manifest", lambda: {("Toy", "sub/toy.csv"): entry})
    path = data.locate("Toy", "sub/toy.csv", download_dir=cache)
    assert "trusting this first download" in capsys.readouterr().err
    record = path.with_name("toy.csv.sha256").read_text().split()[0]
    assert record == hashlib.sha256(body).hexdigest()
    # second read comes from the cache: no new request
    assert data.locate("Toy", "sub/toy.csv", download_dir=cache) == path and len(httpd.hits) == 1
    # the cached file gets corrupted: it is detected, deleted and fetched again
    path.write_bytes(b"first vers")
    assert data.locate("Toy", "sub/toy.csv", download_dir=cache).read_bytes() == body
    assert len(httpd.hits) == 2
    # corrupted while offline: a clear error, and the bad copy is gone
    path.write_bytes(b"garbage")
    monkeypatch.setenv("MABPD_OFFLINE", "1")
    with pytest.raises(data.ChecksumError, match="deleted"):
        data.locate("Toy", "sub/toy.csv", download_dir=cache)
    assert not path.exists()


def test_local_copy_wins_over_cache_and_network(server, cache, tmp_path, monkeypatch):
    _, base, httpd = server
    local = tmp_path / "local" / "Toy" / "sub" / "toy.csv"
    local.parent.mkdir(parents=True)
    local.write_text("mine")
    monkeypatch.setattr(data.download, "manifest", lambda: {("Toy", "sub/toy.csv"): _entry(f"{base}/toy.csv")})
    assert data.locate("Toy", "sub/toy.csv", data_dir=tmp_path / "local", download_dir=cache) == local
    monkeypatch.setenv("MABPD_DATA_DIR", str(tmp_path / "local"))
    assert data.locate("Toy", "sub/toy.csv", download_dir=cache) == local
    assert httpd.hits == []


def test_offline_message_names_url_and_destination(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("MABPD_OFFLINE", "1")
    with pytest.raises(data.DataMissingError) as info:
        data.load_babe("test", data_dir=tmp_path / "empty", download_dir=cache)
    msg = str(info.value)
    assert "https://huggingface.co/datasets/mediabiasgroup/BABE/resolve/bfcd0e66851ebef991d50b73da0eb9bad76ad9d1" in msg
    assert str(tmp_path / "empty" / "BABE" / "data" / "test-00000-of-00001.parquet") in msg
    assert "offline" in msg


def test_file_without_url_says_where_to_get_it(cache, tmp_path):
    with pytest.raises(data.DataMissingError, match="llm-annotations-annomatic"):
        data.locate("BABE", "annomatic_hf_split/babe_train_dev_annomatic.csv", data_dir=tmp_path, download_dir=cache)


def test_manifest_is_complete_and_well_formed():
    entries = data.manifest()
    datasets = {d for d, _ in entries}
    assert {"BABE", "SemEval2019-Task4-Hyperpartisan", "PolitiFact-Hidden", "RADAR", "LIAR", "LIAR-PLUS",
            "MMLU-professional_medicine", "GSM8K"} <= datasets
    assert ("RADAR", "outputs/continuation_decisions_summary.csv") in entries
    for (d, rel), e in entries.items():
        assert e.licence, f"{d}/{rel} has no licence"
        assert e.sha256 is None or len(e.sha256) == 64
        if e.url and "github" in e.url:
            assert len(e.revision or "") == 40, f"{d}/{rel}: GitHub URLs must pin a full commit"


def test_download_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path / "c"))
    assert data.download_dir() == tmp_path / "c" / "data"
    assert data.download_dir(tmp_path / "x") == tmp_path / "x"


def test_cli_locate_and_status(tmp_path, monkeypatch, capsys):
    from mabpd_kit.cli import main

    d = tmp_path / "d" / "GSM8K"
    d.mkdir(parents=True)
    (d / "test.jsonl").write_text('{"question": "1+1?", "answer": "2\\n#### 2"}\n')
    assert main(["data", "locate", "GSM8K", "test.jsonl", "--data-dir", str(tmp_path / "d")]) == 0
    assert str(d / "test.jsonl") in capsys.readouterr().out
    assert main(["data", "status", "--data-dir", str(tmp_path / "d"), "--download-dir", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "GSM8K" in out and "local" in out and "missing" in out
    df = data.load_gsm8k("test", data_dir=tmp_path / "d")
    assert df["answer"].tolist() == ["2"]


def test_babe_parquet_path_with_the_hugging_face_schema(tmp_path):
    """Without the reconstructed CSV the loader reads the HF parquet (schema of mediabiasgroup/BABE)."""
    import pandas as pd

    d = tmp_path / "BABE" / "data"
    d.mkdir(parents=True)
    pd.DataFrame({
        "text": ["A radical scheme.", "The vote was 52 to 48."], "news_link": ["", ""], "label": [1, 0],
        "outlet": ["X", "Y"], "topic": ["t", "t"], "type": ["left", None], "label_opinion": ["", ""],
        "biased_words": ["['radical']", "[]"], "uuid": ["a1", None],
    }).to_parquet(d / "test-00000-of-00001.parquet")
    df = data.load_babe("test", data_dir=tmp_path)
    assert df["label"].tolist() == [1, 0] and df["biased_words"].tolist() == [["radical"], []]
    assert df["id"].iloc[0] == "a1" and df["id"].iloc[1].startswith("babe-")  # stable id when uuid is missing
    assert not any(c.endswith("_label") for c in df.columns)


def test_mmlu_parquet_path(tmp_path):
    import pandas as pd

    d = tmp_path / "MMLU-professional_medicine" / "professional_medicine"
    d.mkdir(parents=True)
    pd.DataFrame({"question": ["Q1?", "Q2?"], "subject": ["professional_medicine"] * 2,
                  "choices": [["a", "b", "c", "d"], ["e", "f", "g", "h"]], "answer": [3, 0]}
                 ).to_parquet(d / "validation-00000-of-00001.parquet")
    df = data.load_mmlu("validation", data_dir=tmp_path)
    assert df[["A", "D", "answer"]].values.tolist() == [["a", "d", "D"], ["e", "h", "A"]]


def test_hyperpartisan_test_split_downloads_zip_and_parses(server, cache, monkeypatch):
    """The held-out test set is fetched from (here: a local stand-in for) Zenodo zips and parsed."""
    root, base, _ = server
    arts = (b'<?xml version="1.0" encoding="UTF-8"?><articles>'
            b'<article id="0000001" published-at="2018-01-01" title="A &amp;amp; B">'
            b'<p>First &amp;amp; paragraph with <a href="x">a link</a>.</p> tail text <p>Second one here.</p></article>'
            b'<article id="0000002" title="Calm"><p>Short.</p></article></articles>')
    truth = (b'<?xml version="1.0" ?><articles><article hyperpartisan="true" id="0000001" url="u1"/>'
             b'<article hyperpartisan="false" id="0000002" url="u2"/></articles>')
    entries = {}
    for name, body in (("articles-test-byarticle-20181207", arts), ("ground-truth-test-byarticle-20181207", truth)):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr(f"{name}.xml", body)
        (root / f"{name}.zip").write_bytes(buf.getvalue())
        entries[(data.HYPERPARTISAN, f"{name}.xml")] = data.FileEntry(
            dataset=data.HYPERPARTISAN, relpath=f"{name}.xml", url=f"{base}/{name}.zip", archive_member=f"{name}.xml")
    monkeypatch.setattr(data.download, "manifest", lambda: entries)
    df = data.load_hyperpartisan("test", download_dir=cache, truncate=3)
    assert df["label"].tolist() == [1, 0]
    assert df["title"].iloc[0] == "A & B"
    assert df["n_words"].iloc[0] == 11 and df["truncated"].tolist() == [True, False]
    assert df["text"].iloc[0] == "First & paragraph"
    assert df.attrs["n_truncated"] == 1
    full = data.load_hyperpartisan("test", download_dir=cache)  # now from the cache (TOFU records verify)
    assert full["text"].iloc[0] == "First & paragraph with a link.\ntail text\nSecond one here."


def test_cli_fetch_downloads_and_reports_failures(server, cache, monkeypatch, capsys):
    from mabpd_kit.cli import main

    root, base, _ = server
    (root / "ok.csv").write_bytes(b"a,b\n1,2\n")
    entries = {
        ("Toy", "ok.csv"): data.FileEntry(dataset="Toy", relpath="ok.csv", url=f"{base}/ok.csv",
                                        sha256=hashlib.sha256(b"a,b\n1,2\n").hexdigest()),
        ("Toy", "gone.csv"): data.FileEntry(dataset="Toy", relpath="gone.csv", url=f"{base}/gone.csv"),
        ("Other", "x.csv"): data.FileEntry(dataset="Other", relpath="x.csv", url=f"{base}/x.csv"),
    }
    monkeypatch.setattr(data.download, "manifest", lambda: entries)
    assert main(["data", "fetch", "Toy", "--download-dir", str(cache)]) == 1  # one of the two Toy files fails
    out = capsys.readouterr()
    assert (cache / "Toy" / "ok.csv").read_bytes() == b"a,b\n1,2\n"
    assert "Toy/gone.csv: FAILED" in out.err and "Other" not in out.out + out.err
    assert main(["data", "fetch", "Nope", "--download-dir", str(cache)]) == 2  # unknown dataset: a clear error
    assert "unknown dataset" in capsys.readouterr().err
