"""Where a batch's steps run: :class:`InProcess` (driven in turn, or on an event loop), :class:`Processes`
(local processes, rule-based), :class:`~mabpd_kit.runs.dask.Dask`.

An executor calls ``emit(id, line, failed, record)`` once per finished item: ``line`` is None when the
executor committed it to the file already, ``record`` None when it was made in another process. A step for
:class:`Processes` or Dask must be picklable: a small object that builds its pipeline once per process.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeVar

from pydantic import BaseModel

from mabpd_kit.runs.checkpoint import line
from mabpd_kit.runs.steps import drive, driven, run_sync, settle

__all__ = ["Emit", "InProcess", "Item", "Job", "Processes", "chunks"]

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)

Emit = Callable[[str, "str | None", bool, "BaseModel | None"], None]


@dataclass(frozen=True)
class Item:
    """One unit of work: ``data`` for the step, ``digest`` of the input; ``retry=False``: a failure is final."""

    id: str
    data: Any = None
    digest: str = ""
    retry: bool = True


@dataclass
class Job:
    """What every executor runs for one item: the step, its failure record and the run's limits."""

    step: Callable[[Item], Coroutine[Any, Any, Any]]
    fail: Callable[[Item, BaseException], Any]
    fingerprint: str = ""
    deadline_s: float | None = None
    fatal: list[BaseException] = field(default_factory=list)
    lines: bool = True  # False: no checkpoint, so an in-process record is never serialised

    async def attempt(self, it: Item) -> Any:
        if self.fatal:
            return self.fail(it, self.fatal[0])
        try:
            if self.deadline_s is None or driven():
                return await self.step(it)
            return await _within(self.step(it), self.deadline_s)
        except _Deadline:
            return self.fail(it, TimeoutError(f"deadline: item took more than {self.deadline_s:g} s "
                                              "(config.llm.item_deadline_s)"))
        except Exception as exc:  # one item never stops a batch; the reason is kept
            if getattr(exc, "batch_fatal", False) and not self.fatal:
                self.fatal.append(exc)
            return self.fail(it, exc)

    def driven(self, it: Item) -> Any:
        """The item's record, its step driven without a loop (rule-based)."""
        try:
            return drive(self.attempt(it))
        except RuntimeError as exc:
            return self.fail(it, exc)
        finally:
            settle()

    def line(self, it: Item, rec: BaseModel) -> str:
        return line(it.id, it.digest, self.fingerprint, rec)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "fatal": []}


def chunks(it: Iterator[T], n: int) -> Iterator[list[T]]:
    while chunk := list(islice(it, n)):
        yield chunk


class InProcess:
    """This process: driven in turn (``concurrency=None``, rule-based) or on an event loop."""

    def __init__(self, concurrency: int | None = None) -> None:
        self.concurrency = concurrency

    def execute(self, todo: Iterator[Item], job: Job, emit: Emit) -> None:
        def done(it: Item, rec: BaseModel) -> None:
            emit(it.id, job.line(it, rec) if job.lines else None, bool(getattr(rec, "failed", False)), rec)

        if self.concurrency is None:
            for it in todo:
                done(it, job.driven(it))
            return
        run_sync(_pool(todo, job, done, self.concurrency))


async def _pool(todo: Iterator[Item], job: Job, done: Callable[[Item, BaseModel], None], concurrency: int) -> None:
    """``concurrency`` workers take items in order from the stream."""

    async def worker() -> None:
        for it in todo:  # one shared iterator: the stream is read as workers free up, never all at once
            done(it, await job.attempt(it))

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))


class _Deadline(Exception):
    """The item's step ran past ``deadline_s`` (not a TimeoutError the step raises itself)."""


async def _within(coro: Coroutine[Any, Any, T], seconds: float) -> T:
    task = asyncio.ensure_future(coro)
    try:
        finished, _ = await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not finished:
        task.cancel()
        await asyncio.wait({task})  # let it unwind (its calls are cancelled too)
        raise _Deadline
    return task.result()


_JOB: dict[str, Job] = {}


def _init(job: Job | None) -> None:
    if job is not None:  # not inherited by fork: unpickled here, once per worker
        _JOB["job"] = job
    _exit_with_parent(os.getppid())


def _exit_with_parent(parent: int, every_s: float = 0.5) -> None:
    """End this worker when the run's process dies (``kill -9``): siblings hold the task pipe open."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _work(chunk: list[Item]) -> list[tuple[str, str, bool]]:
    """A worker's task: each item's ``(id, checkpoint line, failed)``."""
    job = _JOB["job"]
    out = []
    for it in chunk:
        rec = job.driven(it)
        out.append((it.id, job.line(it, rec), bool(getattr(rec, "failed", False))))
    return out


class Processes:
    """``workers`` local processes for driven (rule-based) steps; chunks of ``chunk`` items per task."""

    def __init__(self, workers: int | None = None, chunk: int = 64) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.chunk = max(1, chunk)

    def execute(self, todo: Iterator[Item], job: Job, emit: Emit) -> None:
        import multiprocessing as mp
        from concurrent.futures.process import BrokenProcessPool

        prepare = getattr(job.step, "prepare", None)
        fork = mp.get_start_method(allow_none=True) in (None, "fork") and "fork" in mp.get_all_start_methods() \
            and sys.platform.startswith("linux")
        if fork:
            # forked workers inherit what the job built here (a pipeline, its lexicon): pages shared until written
            if prepare is not None:
                prepare()
            _JOB["job"] = job
        ex = ProcessPoolExecutor(max_workers=self.workers, initializer=_init, initargs=(None if fork else job,))
        try:
            # records are emitted in input order, so the reconciliation has nothing to rewrite
            pending: deque[Future[list[tuple[str, str, bool]]]] = deque()
            for chunk in chunks(todo, self.chunk):
                pending.append(ex.submit(_work, chunk))
                if len(pending) >= 2 * self.workers:
                    _drain(pending.popleft(), emit)
            while pending:
                _drain(pending.popleft(), emit)
        except BrokenProcessPool:
            ex.shutdown(wait=False, cancel_futures=True)
            raise RuntimeError("a worker process died (out of memory, or killed); every finished item is in the "
                               "checkpoint: run the same call again to resume") from None
        except BaseException:  # Ctrl-C in a notebook: drop the queued chunks instead of finishing them
            ex.shutdown(wait=False, cancel_futures=True)
            raise
        ex.shutdown(wait=True)


def _drain(fut: Future[list[tuple[str, str, bool]]], emit: Emit) -> None:
    for id, text, failed in fut.result():
        emit(id, text, failed, None)
