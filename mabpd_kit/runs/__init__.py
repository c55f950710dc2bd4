"""The one batch runner for every method: a stream of items -> async step -> checkpoint -> :class:`Results`.

A record is keyed by the item's id, input digest and configuration fingerprint, so a rerun after ``kill -9``
computes only what is missing; a failing item becomes ``fail(item, exc)`` and the batch goes on; an exception
with ``batch_fatal = True`` stops the batch (items not started fail with that reason, said once).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from mabpd_kit.runs.checkpoint import Busy, Checkpoint, WriteFailed, digest, fingerprint, read_checkpoint, split
from mabpd_kit.runs.encoding import loads
from mabpd_kit.runs.executors import InProcess, Item, Job, Processes
from mabpd_kit.runs.results import Results, progress_bar
from mabpd_kit.runs.steps import complete, drive, gather, gc_for_batch, gc_restore, run_sync

__all__ = ["Busy", "Item", "Results", "RunSpec", "WriteFailed", "complete", "digest", "drive", "executor",
           "fingerprint", "gather", "progress_bar", "read_checkpoint", "run", "run_sync"]

R = TypeVar("R", bound=BaseModel)

ENGINES = ("local", "dask")

#: items in flight per endpoint call slot: an item waits on its calls in turn
INFLIGHT_PER_CALL = 2


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """How a batch runs. ``concurrency``: None drives the steps in turn (rule-based), a number runs that many
    items at once on an event loop (LLM); ``engine``: "local", "dask" or an executor object (:func:`executor`);
    ``progress``: a bar on stderr (a string is its label); ``results``: the class returned."""

    record: type
    fail: Callable[[Item, BaseException], Any]
    checkpoint: str | Path | None = None
    fingerprint: str = ""
    concurrency: int | None = None
    retry_failed: bool = True
    progress: bool | str = False
    results: Callable[..., Any] = Results
    deadline_s: float | None = None
    engine: Any = None
    workers: int | None = None
    chunk: int = 64
    total: int | None = None
    scheduler: str | None = None

    def with_llm(self, llm: Any, item_deadline_s: float | None, calls: int | None = None) -> RunSpec:
        """The in-flight and deadline policy of an LLM batch (``calls``: default ``llm.concurrency``)."""
        if llm is None:
            return self
        return dataclasses.replace(self, concurrency=INFLIGHT_PER_CALL * (calls or llm.concurrency),
                                   deadline_s=llm.item_deadline(item_deadline_s))


def executor(engine: str | Any = None, *, concurrency: int | None = None, workers: int | None = None,
             chunk: int = 64, scheduler: str | None = None) -> Any:
    """The executor a run asks for: None/"local" is this process (local processes for ``workers`` > 1 without
    ``concurrency``), "dask" a Dask cluster; an executor object is returned as is."""
    if engine is not None and not isinstance(engine, str):
        return engine
    if engine in (None, "local"):
        if concurrency is None and workers is not None and workers > 1:
            return Processes(workers, chunk=chunk)
        return InProcess(concurrency)
    if engine == "dask":
        from mabpd_kit.runs.dask import Dask

        return Dask(workers=workers, scheduler=scheduler, partition=chunk, concurrency=concurrency)
    raise ValueError(f"unknown engine {engine!r}: one of {', '.join(ENGINES)}")


def run(items: Iterable[Item], step: Callable[[Item], Coroutine[Any, Any, R]], spec: RunSpec | None = None,
        **kw: Any) -> Results[R]:
    """Run ``async def step(item) -> record`` on every item (unique ids) as ``spec`` and the keywords
    (:class:`RunSpec`'s fields) say."""
    spec = RunSpec(**kw) if spec is None else dataclasses.replace(spec, **kw) if kw else spec
    if isinstance(items, Sequence):
        ids = [it.id for it in items]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
            raise ValueError(f"item ids must be unique (the checkpoint is keyed by them); repeated: {dup}")
        spec = dataclasses.replace(spec, total=len(items))
    return _Batch(spec, step).go(items)


class _Batch:

    def __init__(self, spec: RunSpec, step: Callable[[Item], Coroutine[Any, Any, Any]]) -> None:
        self.spec = spec
        self.ex = executor(spec.engine, concurrency=spec.concurrency, workers=spec.workers, chunk=spec.chunk,
                           scheduler=spec.scheduler)
        self.tmp = None
        path = spec.checkpoint
        if path is None and getattr(self.ex, "needs_checkpoint", False):  # Dask's workers write part files
            self.tmp = tempfile.TemporaryDirectory(prefix="mabpd-run-")
            path = Path(self.tmp.name) / "run.jsonl"
        self.path = path
        self.ck = Checkpoint(path) if path is not None else None
        self.job = Job(step, spec.fail, spec.fingerprint, spec.deadline_s, lines=path is not None)
        self.keep: dict[str, Any] | None = {} if self.ck is None else None  # in memory only without a checkpoint
        self.order: list[str] = []
        self.hashes = array("q")
        self.counts = {"resumed": 0, "computed": 0, "failed": 0}

    @property
    def write_failed(self) -> bool:
        return bool(self.job.fatal) and isinstance(self.job.fatal[0], WriteFailed)

    def go(self, items: Iterable[Item]) -> Results[Any]:
        t0 = time.perf_counter()
        if self.ck is not None:
            self.ck.lock()
        gc_state = gc_for_batch()
        try:
            idx = None
            if self.ck is not None:
                self.ck.open()
                self.ck.fold_all()  # parts a killed Dask run committed but did not fold
                idx = self.ck.index()
            spec = self.spec
            self.bar = progress_bar(spec.total, disable=not spec.progress, unit="item",
                                    desc=spec.progress if isinstance(spec.progress, str) else "items")
            try:
                todo = self.todo(items, idx if idx is not None and len(idx) else None)
                if getattr(self.ex, "needs_checkpoint", False):
                    self.ex.execute(todo, self.job, self.emit, checkpoint=self.ck)
                else:
                    self.ex.execute(todo, self.job, self.emit)
            finally:
                self.bar.close()
            if self.write_failed:
                raise self.job.fatal[0]  # not reconciled: the file holds the whole lines written before the failure
            if self.ck is not None:
                self.ck.fold_all()
                self.ck.reconcile(self.hashes)
        finally:
            gc_restore(gc_state)
            if self.ck is not None:
                self.ck.close()
        return self.results(time.perf_counter() - t0)

    def todo(self, items: Iterable[Item], idx: Any) -> Iterator[Item]:
        """The items not reusable from the checkpoint, until a write fails."""
        seen: set[int] = set()
        spec = self.spec
        for it in items:
            if self.write_failed:
                return  # nothing more can be kept: no further item is started (nor sent to a worker)
            h = hash(it.id)
            if h in seen:
                raise ValueError(f"item ids must be unique (the checkpoint is keyed by them); repeated: {it.id!r}")
            seen.add(h)
            self.hashes.append(h)
            if self.keep is not None:
                self.order.append(it.id)
            if idx is not None and idx.reusable(it.id, it.digest, spec.fingerprint, spec.retry_failed and it.retry):
                self.counts["resumed"] += 1
                self.bar.update(1)
                continue
            yield it

    def emit(self, id: str, text: str | None, failed: bool, rec: BaseModel | None) -> None:
        if self.ck is not None and text is not None:
            if self.write_failed:
                return  # the file cannot take it: the run raises once the executor has stopped
            try:
                self.ck.write(text)
            except WriteFailed as exc:
                self.job.fatal.insert(0, exc)  # batch-fatal: items not started fail at once, no new one starts
                return
        if self.keep is not None:
            self.keep[id] = rec if rec is not None else _from_line(text, self.spec.record)
        self.counts["computed"] += 1
        self.counts["failed"] += failed
        self.bar.update(1)

    def results(self, wall: float) -> Results[Any]:
        spec, c = self.spec, self.counts
        kw = {"resumed": c["resumed"], "wall_s": wall, "computed": c["computed"]}
        if self.keep is not None:
            res = spec.results([self.keep[i] for i in self.order], checkpoint=None, **kw)
        else:
            res = spec.results(None, checkpoint=str(self.path), record=spec.record, **kw)
            if self.tmp is not None:  # a temporary checkpoint: read it now, before it goes
                res.records = list(res)
                res.checkpoint = None
                self.tmp.cleanup()
        if self.job.fatal:
            res.stopped = f"{type(self.job.fatal[0]).__name__}: {self.job.fatal[0]}"
            print(f"mabpd-kit: batch stopped, every item not yet started failed with: {res.stopped}", file=sys.stderr)
        return res


def _from_line(text: str | None, record: type[R]) -> R:
    got = split((text or "").encode("utf-8"))
    try:
        return loads(got[1], record)  # type: ignore[index]
    except (ValueError, KeyError, TypeError):  # TypeError: split found no whole line (None)
        raise RuntimeError("a worker returned a record that cannot be read back") from None
