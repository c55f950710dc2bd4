"""Issue 37.4: a full disk. A failed cache write keeps the answer in hand; a full results file stops the
batch with one typed, batch-fatal error (no torn line left: pandas and jq read the file, and a rerun once
there is room resumes from it); a report or export that fails leaves no partial file.

A real full disk is a small tmpfs (root, where mounting is allowed; unmounted after the test); where it
is not, the test injects ENOSPC at the OS boundary (``os.write``) or skips, saying why."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from pydantic import BaseModel

from mabpd_kit import runs
from mabpd_kit.llm import connect


class Rec(BaseModel):
    id: str
    blob: str = ""
    failed: bool = False
    error: str | None = None


def _fail(item: runs.Item, exc: BaseException) -> Rec:
    return Rec(id=item.id, failed=True, error=str(exc))


def _step(seen: list[str]):
    async def step(item: runs.Item) -> Rec:
        seen.append(item.id)
        return Rec(id=item.id, blob="x" * 9_000)  # ~9 kB a line: a 64 kB disk holds a handful

    return step


def _items(n: int) -> list[runs.Item]:
    return [runs.Item(str(i), i, digest=str(i)) for i in range(n)]


@contextlib.contextmanager
def _small_disk(path: Path, size: str = "64k"):
    """A tmpfs of ``size`` at ``path`` (unmounted on exit), or a skip saying why not."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a real full disk needs root and mount (the ENOSPC injection tests still run)")
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True,
                         text=True)
    if got.returncode != 0:
        pytest.skip(f"mounting a small tmpfs is not permitted here: {got.stderr.strip()[:120]}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _fill(folder: Path) -> None:
    """Take every free byte of ``folder``'s file system."""
    with open(folder / "filler", "wb", buffering=0) as fh:
        with contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 4096)


def _readable(path: Path) -> int:
    """The file reads as JSON Lines with pandas and with jq (when installed); returns its rows."""
    rows = len(pd.read_json(path, lines=True)) if path.stat().st_size else 0
    if shutil.which("jq"):
        got = subprocess.run(["jq", "-c", ".id", str(path)], capture_output=True, text=True)
        assert got.returncode == 0, got.stderr
        assert len(got.stdout.split()) == rows
    return rows


def test_a_full_results_disk_stops_the_batch_and_leaves_no_torn_line(tmp_path):
    with _small_disk(tmp_path / "disk") as disk:
        ck = disk / "run.jsonl"
        seen: list[str] = []
        with pytest.raises(runs.WriteFailed, match="cannot write the results file .*run the same command again"):
            runs.run(_items(40), _step(seen), record=Rec, fail=_fail, checkpoint=ck)
        kept = _readable(ck)
        assert 0 < kept < 40
        assert len(seen) == kept + 1  # the batch stopped at the first item it could not keep
        subprocess.run(["mount", "-o", "remount,size=2m", str(disk)], check=True)
        again: list[str] = []
        res = runs.run(_items(40), _step(again), record=Rec, fail=_fail, checkpoint=ck)
        assert res.resumed == kept and len(again) == 40 - kept and not res.failed
        assert _readable(ck) == 40 and [r.id for r in res] == [str(i) for i in range(40)]


def test_enospc_at_the_os_boundary_cuts_the_line_back(tmp_path, monkeypatch):
    """Without a mount: the third line's write fails after part of it went out (a short write, then
    ENOSPC); the file keeps two whole lines, and the next run resumes from them."""
    import mabpd_kit.runs.checkpoint as cp

    real, calls = os.write, []

    def write(fd, data):
        calls.append(len(data))
        if len(calls) == 3:
            return real(fd, bytes(data[:100]))  # a short write: part of the line reached the file
        if len(calls) == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(cp.os, "write", write)
    ck = tmp_path / "run.jsonl"
    with pytest.raises(runs.WriteFailed, match="No space left on device"):
        runs.run(_items(5), _step([]), record=Rec, fail=_fail, checkpoint=ck)
    assert _readable(ck) == 2 and ck.read_bytes().endswith(b"}\n")
    monkeypatch.setattr(cp.os, "write", real)
    res = runs.run(_items(5), _step([]), record=Rec, fail=_fail, checkpoint=ck)
    assert res.resumed == 2 and _readable(ck) == 5


def test_a_torn_last_line_is_cut_off_on_resume(tmp_path):
    ck = tmp_path / "run.jsonl"
    runs.run(_items(3), _step([]), record=Rec, fail=_fail, checkpoint=ck)
    whole = ck.read_bytes()
    ck.write_bytes(whole + whole.splitlines(keepends=True)[0][:50])  # a run killed mid-line
    res = runs.run(_items(4), _step([]), record=Rec, fail=_fail, checkpoint=ck)
    assert res.resumed == 3 and _readable(ck) == 4


def test_a_full_cache_disk_keeps_the_paid_answer(fake_server, tmp_path, capsys):
    with _small_disk(tmp_path / "cache", "256k") as disk:
        srv = fake_server(lambda r: "answer " + r["messages"][-1]["content"])
        llm = connect(base_url=srv.base_url, model="fake", cache_dir=disk)
        assert llm.chat("first").text == "answer first"  # the cache file exists, then the disk fills
        _fill(disk)
        big = "q" * 200_000  # its entry needs more room than is left
        texts = [llm.chat(f"{big}{i}").text for i in range(3)]
        assert texts == [f"answer {big}{i}" for i in range(3)]  # used, though not stored
        assert len(srv.requests) == 4
        err = capsys.readouterr().err
        assert err.count("cannot be written") == 1 and "full" in err
        assert llm.cache.write_error is not None


def test_a_failed_cache_write_is_not_an_error_and_is_said_once(tmp_path, capsys):
    import sqlite3

    from mabpd_kit.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path)
    assert cache.put("k", {"a": 1})

    class Full:
        def execute(self, *a):
            raise sqlite3.OperationalError("database or disk is full")

    cache._local.conn = Full()
    assert cache.put("k2", {"a": 2}) is False and cache.put("k3", {"a": 3}) is False
    cache.delete("k")
    assert capsys.readouterr().err.count("database or disk is full") == 1


def test_a_failed_report_or_export_leaves_no_partial_file(tmp_path):
    from mabpd_kit.files import atomic, write_text

    dest = tmp_path / "report.html"
    write_text(dest, "old report")
    with pytest.raises(OSError):
        with atomic(dest, "w", encoding="utf-8") as fh:
            fh.write("half of a new rep")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert dest.read_text() == "old report" and sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_the_corpus_export_is_all_or_nothing_on_a_full_disk(tmp_path):
    from mabpd_kit.corpus import analyze, read
    from mabpd_kit.corpus.store import export

    src = tmp_path / "c.csv"
    pd.DataFrame({"text": ["The senator slammed the disastrous plan." * 20] * 30}).to_csv(src, index=False)
    out = tmp_path / "res.jsonl"
    analyze(read(src), out)
    with _small_disk(tmp_path / "disk", "16k") as disk:
        with pytest.raises(OSError):
            export(out, disk / "sentences.csv", level="sentence")
        assert [p.name for p in disk.iterdir()] == []


def test_the_cli_says_a_full_results_disk_in_one_line_and_exits_non_zero(tmp_path, capsys):
    from mabpd_kit.cli import main

    src = tmp_path / "c.csv"
    pd.DataFrame({"text": [f"Article {i}. The senator slammed the disastrous plan. " * 30 for i in range(60)]}
                 ).to_csv(src, index=False)
    with _small_disk(tmp_path / "disk", "64k") as disk:
        rc = main(["analyze", str(src), "--out", str(disk / "res.jsonl"), "--quiet"])
        err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        assert rc != 0 and len(err) == 1 and "cannot write the results file" in err[0], err
        assert "Traceback" not in err[0]
        _readable(disk / "res.jsonl")


def test_a_new_cache_on_a_full_disk_is_a_miss_not_a_failure(fake_server, tmp_path, capsys):
    with _small_disk(tmp_path / "cache", "64k") as disk:
        _fill(disk)
        srv = fake_server(lambda r: "answer")
        llm = connect(base_url=srv.base_url, model="fake", cache_dir=disk / "new")
        assert [llm.chat(f"q{i}").text for i in range(2)] == ["answer", "answer"]
        assert len(srv.requests) == 2
        assert capsys.readouterr().err.count("cannot be written") == 1


def test_no_paid_answer_is_lost_when_the_results_disk_fills(fake_server, tmp_path):
    """The item whose line could not be written had its answer stored in the cache (another disk): the
    rerun once there is room asks the endpoint only for the items never asked, each request once in all."""
    srv = fake_server(lambda r: "y" * 9_000)
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache")

    async def step(item: runs.Item) -> Rec:
        return Rec(id=item.id, blob=(await llm.achat(f"item {item.id}")).text)

    with _small_disk(tmp_path / "disk") as disk:
        ck = disk / "run.jsonl"
        with pytest.raises(runs.WriteFailed):
            runs.run(_items(30), step, record=Rec, fail=_fail, checkpoint=ck, concurrency=1)
        kept, asked = _readable(ck), len(srv.requests)
        assert asked == kept + 1  # the one in hand when the disk filled was answered, not written
        subprocess.run(["mount", "-o", "remount,size=2m", str(disk)], check=True)
        res = runs.run(_items(30), step, record=Rec, fail=_fail, checkpoint=ck, concurrency=1)
        assert not res.failed and res.resumed == kept and _readable(ck) == 30
        prompts = [r["messages"][-1]["content"] for r in srv.requests]
        assert len(prompts) == 30 == len(set(prompts))  # every request sent once: none paid twice
