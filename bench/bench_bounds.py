"""Issue 37.5: memory held by huge LLM replies and by a gzip bomb in a corpus, as peak RSS of this process.

    PYTHONPATH=$PWD MABPD_OFFLINE=1 .venv/bin/python bench/bench_bounds.py replies   # 50 MB replies x 3 sentences
    PYTHONPATH=$PWD MABPD_OFFLINE=1 .venv/bin/python bench/bench_bounds.py gzip      # 1.5 MB .csv.gz, one 524 MB cell

``replies``: FakeLLMServer (in a child process, so its own copy of the replies is not counted) answers every
call with 50 MB; three sentences go through the MABPD pipeline with the LLM. ``gzip``: a CSV whose second
row's text cell is 524 MB of one repeated sentence, gzipped (about 1.5 MB), read with ``corpus.read``.
Each prints the seconds, the peak RSS (``ru_maxrss``) and what became of the items. Run each mode in its own
process (the peak is per process).
"""

from __future__ import annotations

import gzip
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from pathlib import Path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _serve(conn, size: int) -> None:  # the child: a fake endpoint answering every call with `size` bytes
    from mabpd_kit.testing import FakeLLMServer

    big = "x" * size
    srv = FakeLLMServer(lambda r: big).start()
    conn.send(srv.base_url)
    conn.recv()  # until the parent is done
    srv.stop()


def replies(size: int = 50_000_000, sentences: int = 3) -> None:
    parent, child = mp.Pipe()
    proc = mp.get_context("fork").Process(target=_serve, args=(child, size), daemon=True)
    proc.start()
    url = parent.recv()
    from mabpd_kit.llm import connect
    from mabpd_kit.mabpd.pipeline import Pipeline

    base = _peak_mb()
    with tempfile.TemporaryDirectory() as cache:
        llm = connect(base_url=url, model="fake", cache_dir=cache)
        t0 = time.perf_counter()
        texts = [f"The senator's disastrous plan {i} was slammed by critics, who called it reckless." for i in range(sentences)]
        res = Pipeline(llm=llm).analyze_many(texts, progress=False)
        wall = time.perf_counter() - t0
        frame = res.to_frame()
        stored = sum(p.stat().st_size for p in Path(cache).rglob("*") if p.is_file())
    parent.send("done")
    proc.join(10)
    failed = int(frame["failed"].sum()) if "failed" in frame else 0
    print(f"replies: {sentences} sentences, {size / 1e6:g} MB replies: {wall:.1f} s, peak RSS {_peak_mb():.0f} MB "
          f"(after imports {base:.0f} MB), cache on disk {stored / 1e6:.1f} MB, {failed} sentences failed")
    if failed:
        print("  reason:", str(frame.loc[frame["failed"], "error"].iloc[0])[:160])


def gzip_cell(cell_mb: int = 524) -> None:
    from mabpd_kit.corpus import read

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bomb.csv.gz"
        unit = b"The senator slammed the plan. "
        with gzip.open(path, "wb", compresslevel=9) as fh:
            fh.write(b"id,text\n1,A small first row.\n2,\"")
            block = unit * (1_000_000 // len(unit))
            for _ in range(cell_mb):
                fh.write(block)
            fh.write(b"\"\n3,A small last row.\n")
        size = path.stat().st_size
        base = _peak_mb()
        t0 = time.perf_counter()
        try:
            docs = [(d.id, d.reason) for d in read(path, id_col="id")]
            outcome = "; ".join(f"{i}: {r or 'ok'}" for i, r in docs)
        except Exception as exc:  # noqa: BLE001 - a one-line error is one of the two answers the bound may give
            outcome = f"{type(exc).__name__}: {exc}"
        wall = time.perf_counter() - t0
    print(f"gzip: {size / 1e6:.1f} MB .csv.gz, one {cell_mb} MB cell: {wall:.1f} s, peak RSS {_peak_mb():.0f} MB "
          f"(before reading {base:.0f} MB)\n  {outcome[:300]}")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "replies"
    replies() if what == "replies" else gzip_cell()
