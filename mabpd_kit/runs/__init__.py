"""The one batch runner for every method: a stream of items -> async step -> checkpoint -> :class:`Results`.

MABPD sentences, corpus articles, RADAR claims and identity-bias questions all run through :func:`run`:

- items come from any iterable (a list, or a generator over a corpus read in chunks); each
  finished record goes to the checkpoint as it ends, so memory stays flat whatever the batch size,
  and a run with a checkpoint returns its results read back from the file (lazily);
- the steps run where the run says (:mod:`.executors`): in this process (driven in turn without
  an event loop when rule-based, ``concurrency`` at once on a loop with an LLM), on local
  processes (``executor="processes"``, every core) or on a Dask cluster (``executor="dask"``,
  :mod:`.dask`); every executor keeps the one checkpoint contract (:mod:`.checkpoint`);
- a record is keyed by the item's id, the digest of its input and the fingerprint of the
  configuration, so a rerun after ``kill -9`` takes every finished item from the file and computes
  only the rest (with the LLM cache, calls already answered are not paid again); at the end the
  file is reconciled: it holds exactly this run's items, once each, in input order;
- a failing item becomes a failed record with its reason (``fail``); the batch goes on, and failed
  items are computed again on resume unless ``retry_failed=False`` or the item says ``retry=False``;
- with ``deadline_s`` each item's step has that many seconds (wall clock, all its calls);
- an exception with ``batch_fatal = True`` (the LLM layer's 401/403: a refused key) stops the
  batch: items not started yet fail with that reason without running, said once on stderr and in
  ``results.stopped``;
- one process writes a checkpoint at a time: a second one gets :class:`Busy`, one line naming the first;
- a checkpoint that cannot be written (a full disk) is batch-fatal too: no further item starts, the
  file keeps every whole line written before (no torn one), and :func:`run` raises its
  :class:`WriteFailed` (an ``OSError``: the CLI's one line and a non-zero exit).

>>> from mabpd_kit.runs import Item, run
>>> from mabpd_kit.types import Usage
>>> from pydantic import BaseModel
>>> class Echo(BaseModel):
...     id: str
...     value: int = 0
...     failed: bool = False
...     error: str | None = None
...     usage: Usage = Usage()
...     def row(self): return {"id": self.id, "value": self.value, "failed": self.failed}
>>> async def double(item): return Echo(id=item.id, value=2 * item.data)
>>> res = run((Item(str(i), i) for i in range(3)), double, record=Echo,
...           fail=lambda item, exc: Echo(id=item.id, failed=True, error=str(exc)))
>>> [r.value for r in res]
[0, 2, 4]
"""

from __future__ import annotations

import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from mabpd_kit.runs.checkpoint import Busy, Checkpoint, WriteFailed, digest, fingerprint, read_checkpoint
from mabpd_kit.runs.executors import InProcess, Item, Job, Processes
from mabpd_kit.runs.results import Results, progress_bar
from mabpd_kit.runs.steps import _gc_for_batch, _gc_restore, complete, drive, gather, run_sync

__all__ = ["Busy", "Item", "Results", "WriteFailed", "complete", "digest", "drive", "executor", "fingerprint", "gather",
           "progress_bar", "read_checkpoint", "run", "run_sync"]

R = TypeVar("R", bound=BaseModel)

ENGINES = ("local", "dask")


def executor(engine: str | Any = None, *, concurrency: int | None = None, workers: int | None = None,
             chunk: int = 64, scheduler: str | None = None) -> Any:
    """The executor a run asks for: ``None``/"local" is this process (``workers`` > 1 and no
    ``concurrency``: local processes), "dask" a Dask cluster (``scheduler`` its address, else a
    ``LocalCluster`` of ``workers``); an executor object is returned as is."""
    if engine is not None and not isinstance(engine, str):
        return engine
    if engine in (None, "local", "inprocess", "processes"):
        if engine == "processes" or (concurrency is None and workers is not None and workers > 1):
            return Processes(workers, chunk=chunk)
        return InProcess(concurrency)
    if engine == "dask":
        from mabpd_kit.runs.dask import Dask

        return Dask(workers=workers, scheduler=scheduler, partition=chunk, concurrency=concurrency)
    raise ValueError(f"unknown engine {engine!r}: one of {', '.join(ENGINES)}")


def run(
    items: Iterable[Item],
    step: Callable[[Item], Coroutine[Any, Any, R]],
    *,
    record: type[R],
    fail: Callable[[Item, BaseException], R],
    checkpoint: str | Path | None = None,
    fingerprint: str = "",
    concurrency: int | None = None,
    retry_failed: bool = True,
    progress: bool | str = False,
    results: Callable[..., Results[R]] = Results,
    deadline_s: float | None = None,
    engine: str | Any = None,
    workers: int | None = None,
    chunk: int = 64,
    total: int | None = None,
    scheduler: str | None = None,
) -> Results[R]:
    """Run ``step`` on every item; see the module docstring.

    Args:
        items: unique ids (the checkpoint is keyed by them); any iterable, read once.
        step: ``async def step(item) -> record``. It should turn its own failures into failed
            records; anything it raises anyway becomes ``fail(item, exc)``. For local processes or
            Dask it must be picklable (or, for local processes on Linux, anything: workers are forked).
        record: the record type (to read the checkpoint back).
        checkpoint: JSONL file; reused records need the same id, digest and ``fingerprint``.
        concurrency: ``None`` drives the steps in turn without an event loop (rule-based);
            a number runs that many items at once on an event loop (LLM).
        retry_failed: compute failed records again on resume (never those of ``retry=False`` items).
        progress: a progress bar on stderr (a string is its label).
        results: the :class:`Results` class to return.
        deadline_s: seconds one item's step may take on the event loop (LLM batches).
        engine: "local" (default) or "dask", or an executor object (:func:`executor`).
        workers: local processes (rule-based), or Dask workers of a ``LocalCluster``.
        chunk: items per task (local processes) or per partition (Dask).
        total: the number of items, for the progress bar, when ``items`` has no ``len()``.
        scheduler: a Dask scheduler's address (``engine="dask"``; else a ``LocalCluster``).
    """
    if isinstance(items, Sequence):
        ids = [it.id for it in items]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
            raise ValueError(f"item ids must be unique (the checkpoint is keyed by them); repeated: {dup}")
        total = len(items)
    ex = executor(engine, concurrency=concurrency, workers=workers, chunk=chunk, scheduler=scheduler)
    t0 = time.perf_counter()
    tmp = None
    if checkpoint is None and getattr(ex, "needs_checkpoint", False):  # Dask's workers write part files
        tmp = tempfile.TemporaryDirectory(prefix="mabpd-run-")
        checkpoint = Path(tmp.name) / "run.jsonl"
    ck = Checkpoint(checkpoint) if checkpoint is not None else None
    job = Job(step, fail, fingerprint, deadline_s, lines=checkpoint is not None)
    keep: dict[str, R] | None = {} if ck is None else None  # in memory only without a checkpoint
    order: list[str] = []
    hashes = array("q")
    counts = {"resumed": 0, "computed": 0, "failed": 0}
    reconciled = False
    if ck is not None:
        ck.lock()
    gc_state = _gc_for_batch()
    try:
        if ck is not None:
            ck.open()
            ck.fold_all()  # parts a killed Dask run committed but did not fold
        idx = ck.index() if ck is not None else None
        if idx is not None and not len(idx):
            idx = None  # a new file: no item to look up
        bar = progress_bar(total, disable=not progress, unit="item",
                           desc=progress if isinstance(progress, str) else "items")
        seen = _Seen()

        def todo() -> Iterator[Item]:
            for it in items:
                if job.fatal and isinstance(job.fatal[0], WriteFailed):
                    return  # nothing more can be kept: no further item is started (nor sent to a worker)
                h = hash(it.id)
                if seen.add(h):
                    raise ValueError(f"item ids must be unique (the checkpoint is keyed by them); repeated: {it.id!r}")
                hashes.append(h)
                if keep is not None:
                    order.append(it.id)
                if idx is not None and idx.reusable(it.id, it.digest, fingerprint, retry_failed and it.retry):
                    counts["resumed"] += 1
                    bar.update(1)
                    continue
                yield it

        def emit(id: str, text: str | None, failed: bool, rec: BaseModel | None) -> None:
            if ck is not None and text is not None:
                if job.fatal and isinstance(job.fatal[0], WriteFailed):
                    return  # the file cannot take it: the run raises once the executor has stopped
                try:
                    ck.write(text)
                except WriteFailed as exc:
                    job.fatal.insert(0, exc)  # batch-fatal: items not started fail at once, no new one starts
                    return
            if keep is not None:
                keep[id] = rec if rec is not None else _from_line(text, record)  # type: ignore[assignment]
            counts["computed"] += 1
            counts["failed"] += failed
            bar.update(1)

        try:
            if getattr(ex, "needs_checkpoint", False):
                ex.execute(todo(), job, emit, checkpoint=ck)
            else:
                ex.execute(todo(), job, emit)
        finally:
            bar.close()
        if job.fatal and isinstance(job.fatal[0], WriteFailed):
            raise job.fatal[0]  # not reconciled: the file holds the whole lines written before the failure
        if ck is not None:
            ck.fold_all()
            ck.reconcile(hashes)
            reconciled = True
    finally:
        _gc_restore(gc_state)
        if ck is not None:
            ck.close()
    wall = time.perf_counter() - t0
    kw = {"resumed": counts["resumed"], "wall_s": wall, "computed": counts["computed"]}
    if keep is not None:
        res = results([keep[i] for i in order], checkpoint=None, **kw)
    else:
        res = results(None, checkpoint=str(checkpoint), record=record, **kw)
        if reconciled:  # the file is exactly the run's items: count them in one pass, with no index
            res._counts = ck.tally()  # type: ignore[union-attr]
        if tmp is not None:  # a temporary checkpoint: read it now, before it goes
            res.records = list(res)
            res.checkpoint = None
            tmp.cleanup()
    if job.fatal:
        res.stopped = f"{type(job.fatal[0]).__name__}: {job.fatal[0]}"
        print(f"mabpd-kit: batch stopped, every item not yet started failed with: {res.stopped}", file=sys.stderr)
    return res


class _Seen:
    """The ids (``hash(id)``) a run has read, to refuse a repeated one: a sorted numpy array plus a small
    set of the latest, merged every ``batch`` ids (8 bytes an id, where a Python set of ints takes ~70)."""

    def __init__(self, batch: int = 8192) -> None:
        import numpy as np

        self._np = np
        self._old = np.empty(0, dtype=np.int64)
        self._new: set[int] = set()
        self._batch = batch

    def add(self, h: int) -> bool:
        """Record ``h``; True when it was already there."""
        if h in self._new:
            return True
        old = self._old
        if len(old):
            i = int(self._np.searchsorted(old, h))
            if i < len(old) and old[i] == h:
                return True
        self._new.add(h)
        if len(self._new) >= self._batch:
            np = self._np
            merged = np.concatenate([old, np.fromiter(self._new, dtype=np.int64, count=len(self._new))])
            merged.sort(kind="stable")  # two sorted runs: timsort merges them in one pass
            self._old = merged
            self._new = set()
        return False


def _from_line(text: str | None, record: type[R]) -> R:
    from mabpd_kit.runs.checkpoint import _parse

    rec = _parse((text or "").encode("utf-8"), record)
    if rec is None:
        raise RuntimeError("a worker returned a record that cannot be read back")
    return rec
