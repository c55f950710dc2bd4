"""Issue 37.5 and 37.7 (part): nothing the kit reads is held unbounded. A reply over
``Config.llm.max_reply_bytes`` is read no further and fails its item (asked once); a line over
``Config.corpus.max_row_bytes`` is a bad row, never held whole; a compressed corpus is decompressed at
most ``Config.corpus.max_decompressed_bytes``; a folder nested past ``Config.corpus.max_depth`` is flagged,
and one 1,500 folders deep is read, not refused. Peak memory of the full-size cases: bench/bench_bounds.py."""

from __future__ import annotations

import asyncio
import bz2
import gzip
import io
import lzma
import time
import tracemalloc
import zipfile

import pytest

from mabpd_kit import runs
from mabpd_kit.config import CorpusConfig, LLMConfig
from mabpd_kit.corpus import read
from mabpd_kit.corpus.rows import CorpusError
from mabpd_kit.decoding import iter_lines
from mabpd_kit.llm import connect
from mabpd_kit.llm.errors import ReplyTooLarge


def _held(fn):
    """``(fn(), peak MB of Python memory held while it ran)`` (tracemalloc: this call's own peak, whatever
    the process held before)."""
    tracemalloc.start()
    try:
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak / 1e6


# -- replies ---------------------------------------------------------------------------------------------


def test_a_huge_reply_fails_its_item_once_and_the_batch_goes_on(fake_server, tmp_path):
    srv = fake_server(lambda r: "x" * 3_000_000 if "huge" in r["messages"][-1]["content"] else "fine")
    llm = connect(base_url=srv.base_url, model="fake", config=LLMConfig(max_reply_bytes=200_000, max_retries=3),
                  cache_dir=tmp_path)

    async def step(item: runs.Item):
        return (await llm.achat(item.data)).text

    from pydantic import BaseModel

    class Rec(BaseModel):
        id: str
        text: str = ""
        failed: bool = False
        error: str | None = None

    async def ask(item):
        return Rec(id=item.id, text=await step(item))

    res = runs.run([runs.Item("a", "huge a"), runs.Item("b", "small b"), runs.Item("c", "huge c")], ask, record=Rec,
                   fail=lambda it, exc: Rec(id=it.id, failed=True, error=f"{type(exc).__name__}: {exc}"),
                   concurrency=2)
    by = {r.id: r for r in res}
    assert by["b"].text == "fine" and not by["b"].failed
    for k in "ac":
        assert by[k].failed and "ReplyTooLarge" in by[k].error and "max_reply_bytes = 0.2 MB" in by[k].error
    assert len(srv.requests) == 3  # a reply too large is not asked again (the same request, the same reply)
    assert llm.cache.stats()["entries"] == 1


def test_a_reply_without_a_length_is_read_no_further_than_the_bound():
    """No Content-Length (chunked): the body is read a chunk at a time and reading stops past the bound."""
    import openai

    from mabpd_kit.llm.transport import _read_bounded

    hx = __import__(openai.DefaultAsyncHttpxClient.__module__.split(".")[0])
    if not hasattr(hx, "Response"):  # the SDK's client lives in its own module: take its httpx
        import httpx as hx
    sent: list[int] = []

    async def body():
        for _ in range(1000):  # 1000 x 64 kB = 64 MB if it were all read
            sent.append(1)
            yield b"y" * 65536

    async def go():
        resp = hx.Response(200, content=body(), request=hx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
        with pytest.raises(ReplyTooLarge, match="larger than config.llm.max_reply_bytes = 1 MB"):
            await _read_bounded(resp, 1_000_000)

    asyncio.run(go())
    assert len(sent) == 16  # 16 chunks: the first past 1 MB; the other 984 never read


# -- lines, decompression ------------------------------------------------------------------------------


def test_iter_lines_never_holds_a_line_over_the_bound():
    data = b"a,b\n" + b"x" * 5_000_000 + b"\nshort\n"
    got = list(iter_lines(io.BytesIO(data), 1_000))
    assert got == [("a,b\n", False), (None, False), ("short\n", False)]
    wide = "a\n" + "b" * 5000 + "\nc\n"
    assert list(iter_lines(io.BytesIO(wide.encode("utf-16")), 100)) == [("a\n", False), (None, False), ("c\n", False)]


def _bomb(path, open_, cell_mb: int) -> None:
    with open_(path, "wb") as fh:
        fh.write(b"id,text\n1,A small first row.\n2,\"")
        block = b"The senator slammed the plan. " * 33_000
        for _ in range(cell_mb):
            fh.write(block)
        fh.write(b"\"\n3,A small last row.\n")


@pytest.mark.parametrize("suffix,open_", [(".csv.gz", gzip.open), (".csv.bz2", bz2.open), (".csv.xz", lzma.open)])
def test_a_huge_cell_in_a_compressed_csv_is_a_bad_row_in_bounded_memory(tmp_path, suffix, open_):
    peaks = []
    for mb in (10, 40):  # 10 and 40 MB of one cell, a few hundred kB on disk
        path = tmp_path / f"c{mb}{suffix}"
        _bomb(path, open_, mb)
        t0 = time.perf_counter()
        docs, peak = _held(lambda: list(read(path, id_col="id")))  # noqa: B023
        assert time.perf_counter() - t0 < 60
        assert [(d.id, d.ok) for d in docs] == [("1", True), ("line3", False), ("3", True)]
        assert docs[1].reason.startswith("too large (line 3 is over 4 MB")
        peaks.append(peak)
    # never held: the memory does not grow with the cell (measured: 10 MB for .gz/.bz2, 27 MB for .xz,
    # whose decompressor keeps its own buffers), and stays far below a 40 MB cell
    assert peaks[1] - peaks[0] < 2 and peaks[1] < 32, peaks


def test_a_huge_jsonl_line_is_a_bad_row(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b'{"text": "one fine row."}\n{"text": "' + b"z" * 3_000_000 + b'"}\n{"text": "the last row."}\n')
    docs = list(read(path, settings=CorpusConfig(max_row_bytes=1_000_000)))
    assert [d.ok for d in docs] == [True, False, True] and "line 2 is over 1 MB" in docs[1].reason


def test_a_compression_bomb_is_one_line_error_within_seconds(tmp_path):
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b"text\n")
        row = b"A sentence of a perfectly ordinary article.\n"
        for _ in range(200_000):  # 9 MB once decompressed
            fh.write(row)
    t0 = time.perf_counter()
    with pytest.raises(CorpusError, match=r"more than 2 MB once decompressed .*max_decompressed_bytes"):
        list(read(path, settings=CorpusConfig(max_decompressed_bytes=2_000_000)))
    assert time.perf_counter() - t0 < 10


def test_a_zip_of_one_csv_is_read_and_of_two_is_refused(tmp_path):
    one, two = tmp_path / "one.csv.zip", tmp_path / "two.csv.zip"
    with zipfile.ZipFile(one, "w") as zf:
        zf.writestr("c.csv", "text\nA plain report.\n")
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("a.csv", "text\nx\n")
        zf.writestr("b.csv", "text\ny\n")
    assert [d.text for d in read(one)] == ["A plain report."]
    with pytest.raises(CorpusError, match="exactly one file, it holds 2"):
        list(read(two))


# -- folders -------------------------------------------------------------------------------------------


def _deep(root, depth: int):
    root.mkdir()
    here = root
    for _ in range(depth):  # one level at a time (mkdir(parents=True) recurses)
        here = here / "d"
        here.mkdir()
    (here / "deep.txt").write_text("A report at the bottom.")
    (root / "top.txt").write_text("A report at the top.")
    return here


def _remove_deep(root, depth: int) -> None:
    """Bottom up, one level at a time (shutil.rmtree, pytest's clean-up too, recurses past 1,000 levels)."""
    levels = [root]
    for _ in range(depth):
        levels.append(levels[-1] / "d")
    for here in reversed(levels):
        for p in here.iterdir():
            if not p.is_dir():
                p.unlink()
        here.rmdir()


def test_a_1500_deep_folder_is_read_not_refused(tmp_path):
    root = tmp_path / "corpus"
    _deep(root, 1500)
    try:
        docs = list(read(root))
    finally:
        _remove_deep(root, 1500)
    assert [d.id for d in docs if d.ok] == ["top.txt"]
    bad = [d for d in docs if not d.ok]
    assert len(bad) == 1 and "nested more than 64 deep" in bad[0].reason and bad[0].id.count("/") == 63


def test_files_within_the_depth_bound_are_read_in_order(tmp_path):
    root = tmp_path / "corpus"
    _deep(root, 3)
    (root / "a.txt").write_text("The first.")
    docs = list(read(root, settings=CorpusConfig(max_depth=4)))
    assert [(d.id, d.ok) for d in docs] == [("a.txt", True), ("d/d/d/deep.txt", True), ("top.txt", True)]
    docs = list(read(root, settings=CorpusConfig(max_depth=2)))
    assert [(d.id, d.ok) for d in docs] == [("a.txt", True), ("d/d", False), ("top.txt", True)]


def test_a_huge_quoted_field_over_many_lines_is_one_bad_row(tmp_path):
    """The cell's lines are read past to its closing quote, not read again as rows of their own."""
    path = tmp_path / "c.csv.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b'id,text\n1,A first row.\n2,"')
        for _ in range(200_000):  # 9.8 MB over 200,000 lines (held as lines: about 50 MB)
            fh.write(b"A line of the huge cell, quoted over many lines.\n")
        fh.write(b'"\n3,A last row.\n')
    docs, peak = _held(lambda: list(read(path, id_col="id", settings=CorpusConfig(max_row_bytes=1_000_000))))
    assert [(d.id, d.ok) for d in docs] == [("1", True), ("line3", False), ("3", True)]
    assert "a quoted field over 1 MB, lines 3-200003: not read" in docs[1].reason
    # the 1 MB of lines kept while the field is parsed (as str tuples) and csv's own field buffer; measured
    # 26.5 MB for 50,000 and for 200,000 lines of cell: it does not grow with the cell
    assert peak < 32
    never = tmp_path / "never.csv"
    never.write_text('id,text\n1,A first row.\n2,"never closed\n' + "x,row\n" * 30_000)
    docs = list(read(never, id_col="id", settings=CorpusConfig(max_row_bytes=100_000)))
    assert len(docs) == 2 and "its quote never closes: lines 3-30003 not read" in docs[1].reason


def test_the_cli_reads_a_compressed_corpus_as_a_corpus(tmp_path, capsys):
    from mabpd_kit.cli import main

    src = tmp_path / "c.csv.xz"
    with lzma.open(src, "wt", encoding="utf-8") as fh:
        fh.write("text\nThe senator slammed the disastrous plan.\nA plain report of the vote.\n")
    out = tmp_path / "res.jsonl"
    assert main(["analyze", str(src), "--out", str(out), "--quiet"]) == 0
    assert len(out.read_text().splitlines()) == 2 and "2 articles" in capsys.readouterr().err
