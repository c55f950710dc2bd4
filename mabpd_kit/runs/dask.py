"""The Dask executor (``mabpd-kit[scale]``; docs/scale.md): partitions of items run on a cluster, each
worker commits its lines to a part file (fsync, rename) and the parent folds the parts into the
checkpoint in partition order. A step must be picklable; on the LLM path it connects from the worker's own
environment (no key travels in a task). Dask is imported only when a run uses it.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import sys
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mabpd_kit.runs.executors import Emit, Item, Job, _pool, chunks
from mabpd_kit.runs.steps import run_sync

__all__ = ["Dask", "DaskMissing", "run_partition", "run_partition_on_loop"]

INSTALL_HINT = 'the Dask engine needs the scale extra: pip install "mabpd-kit[scale]"'

#: settings for the workers of a ``LocalCluster`` this executor starts: a batch, not an interactive session
QUIET_WORKERS: dict[str, Any] = {
    "distributed.worker.profile.enabled": False, "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s", "distributed.admin.tick.interval": "1s",
    "distributed.comm.timeouts.connect": "120s"}
#: on Linux a LocalCluster's workers fork from this process (mabpd-kit already imported), unless the
#: caller's configuration names a method other than Dask's default (spawn)
FORK_WORKERS: dict[str, Any] = {"distributed.worker.multiprocessing-method": "fork"}


class DaskMissing(ImportError, ValueError):
    """Dask is not installed (a ``ValueError`` too: the command line prints one line)."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise DaskMissing(INSTALL_HINT) from exc
    return distributed


class Dask:
    """Partitions of ``partition`` items on a Dask cluster: ``scheduler`` (an address), ``client`` (left
    running) or a ``LocalCluster`` of ``workers`` processes (``cluster``: more of its keywords; the dashboard
    is on a free port). ``concurrency``: items at once on each worker's loop (LLM); None drives them in turn."""

    needs_checkpoint = True  # the workers write part files beside the run's checkpoint

    def __init__(self, workers: int | None = None, scheduler: str | None = None, partition: int = 64,
                 concurrency: int | None = None, *, client: Any = None, **cluster: Any) -> None:
        _distributed()  # fail here, before the run opens its checkpoint
        self.workers = workers
        self.scheduler = scheduler
        self.partition = max(1, int(partition))
        self.concurrency = concurrency
        self.client = client
        self.cluster = cluster

    def __repr__(self) -> str:
        where = self.scheduler or ("a given client" if self.client is not None else
                                   f"LocalCluster({self.workers or os.cpu_count()} workers)")
        return f"Dask({where}, partition={self.partition}, concurrency={self.concurrency})"

    def _connect(self) -> tuple[Any, list[Any]]:
        distributed = _distributed()
        if self.client is not None:
            return self.client, []
        if self.scheduler is not None:
            client = distributed.Client(self.scheduler)
            return client, [client]
        opts = {"n_workers": self.workers or os.cpu_count() or 1, "threads_per_worker": 1, "processes": True,
                "dashboard_address": ":0", **self.cluster}  # a free port: 8787 may be another cluster's
        import dask

        settings = dict(QUIET_WORKERS)
        if self._forks():
            settings.update(FORK_WORKERS)
        with dask.config.set(settings):  # the workers take the configuration of this moment
            cluster = distributed.LocalCluster(**opts)
        try:
            client = distributed.Client(cluster)
        except BaseException:
            cluster.close()
            raise
        return client, [cluster, client]

    def _forks(self) -> bool:
        """Does this executor start a ``LocalCluster`` whose workers fork (:data:`FORK_WORKERS`)?"""
        if self.client is not None or self.scheduler is not None or not sys.platform.startswith("linux"):
            return False
        import dask

        return dask.config.get("distributed.worker.multiprocessing-method", "spawn") == "spawn"

    def _threads(self, client: Any) -> int:
        try:
            n = sum(client.nthreads().values())
        except Exception:  # noqa: BLE001 - a scheduler that cannot say: assume what was asked for
            n = 0
        return max(1, n or self.workers or 1)

    def execute(self, todo: Iterator[Item], job: Job, emit: Emit, *, checkpoint: Any) -> None:
        distributed = _distributed()
        parts = Path(checkpoint.parts_dir)
        parts.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex[:12]
        client, started = self._connect()
        ac = distributed.as_completed()
        inflight: dict[str, Any] = {}
        done: dict[int, tuple[str, list[tuple[str, bool]]]] = {}  # committed parts not folded yet, by index
        nxt_fold = [0]
        stream = enumerate(chunks(todo, self.partition))
        try:
            limit, checked = 2 * self._threads(client), time.monotonic()

            def top_up() -> None:  # committed parts waiting for an earlier one count too: memory stays flat
                while not job.fatal and ac.count() + len(done) < limit:
                    nxt = next(stream, None)
                    if nxt is None:
                        return
                    index, items = nxt
                    task = run_partition_on_loop if self.concurrency is None else run_partition
                    more = () if self.concurrency is None else (self.concurrency,)
                    fut = client.submit(task, job, items, str(parts), token, index, *more,
                                        key=f"mabpd-partition-{token}-{index}", pure=False)
                    inflight[fut.key] = fut
                    ac.add(fut)

            top_up()
            for fut in ac:
                inflight.pop(fut.key, None)
                name, rows, fatal = _result(fut, distributed)
                fut.release()
                if not (parts / name).exists():
                    raise RuntimeError(f"the part file {parts / name} a worker committed is not here: on a "
                                       "cluster the results file's folder must be on a filesystem every worker "
                                       "shares, mounted at the same path")
                done[int(name.rsplit("-", 1)[1].split(".")[0])] = (name, rows)
                while nxt_fold[0] in done:  # fold in partition order: the file ends in input order as it is
                    name, rows = done.pop(nxt_fold[0])
                    nxt_fold[0] += 1
                    checkpoint.fold(parts / name)
                    for id, failed in rows:
                        emit(id, None, failed, None)
                if fatal is not None and not job.fatal:
                    job.fatal.append(fatal)  # no further partition is sent; run() says it once
                if time.monotonic() - checked > 2.0:  # workers may join or leave a real cluster
                    limit, checked = 2 * self._threads(client), time.monotonic()
                top_up()
            if job.fatal:  # the items not sent: failed with the batch's reason, without running
                for it in todo:
                    rec = job.fail(it, job.fatal[0])
                    emit(it.id, job.line(it, rec), True, rec)
        finally:
            _close(client, list(inflight.values()), started, parts)


def _close(client: Any, inflight: list[Any], started: list[Any], parts: Path) -> None:
    """The end of a run, also on Ctrl-C: queued partitions cancelled, what was started closed."""
    if inflight:
        try:
            client.cancel(inflight)
        except Exception:  # noqa: BLE001 - the client may be gone already
            pass
    for thing in reversed(started):
        try:
            thing.close()
        except Exception:  # noqa: BLE001 - closing must not hide the run's own error
            pass
    try:
        parts.rmdir()  # only when empty: what a killed or lost worker left is fold_all's
    except OSError:
        pass


def cluster_workers(scheduler: str) -> int:
    """How many workers the cluster at ``scheduler`` has now (at least 1)."""
    distributed = _distributed()
    with distributed.Client(scheduler, timeout="30s") as client:
        return max(1, len(client.scheduler_info().get("workers", {})))


def _result(fut: Any, distributed: Any) -> tuple[str, list[tuple[str, bool]], BaseException | None]:
    try:
        return fut.result()
    except distributed.KilledWorker as exc:
        raise RuntimeError(f"a partition killed every worker it was given ({exc}): an item that crashes its "
                           "process or exhausts its memory; every finished item is in the results file, "
                           "run the same call again to resume") from None


#: the first copy of each run's job this worker process received (its step's own caches last the run)
_JOBS: OrderedDict[str, Job] = OrderedDict()


def _job(token: str, job: Job) -> Job:
    kept = _JOBS.setdefault(token, job)
    _JOBS.move_to_end(token)
    while len(_JOBS) > 4:
        _JOBS.popitem(last=False)
    return kept


class _Part:
    """One partition's part file, committed whole (fsync, rename) when the block ends without an error."""

    def __init__(self, job: Job, parts_dir: str, token: str, index: int) -> None:
        self.job, self.dir = job, Path(parts_dir)
        self.name = f"part-{token}-{index:07d}.jsonl"
        self.rows: list[tuple[str, bool]] = []

    def __enter__(self) -> _Part:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.tmp = self.dir / f".{self.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"  # not .jsonl: fold_all drops it
        self.fh = self.tmp.open("w", encoding="utf-8")
        return self

    def done(self, it: Item, rec: BaseModel) -> None:
        self.fh.write(self.job.line(it, rec))
        self.rows.append((it.id, bool(getattr(rec, "failed", False))))

    def __exit__(self, kind: Any, *_: Any) -> None:
        try:
            if kind is None:
                self.fh.flush()
                os.fsync(self.fh.fileno())
            self.fh.close()
            if kind is None:
                os.replace(self.tmp, self.dir / self.name)  # committed: whole or not at all
                _sync_dir(self.dir)
        finally:
            self.tmp.unlink(missing_ok=True)  # gone already once committed

    def result(self) -> tuple[str, list[tuple[str, bool]], BaseException | None]:
        return self.name, self.rows, _shippable(self.job.fatal[0]) if self.job.fatal else None


def run_partition(job: Job, items: list[Item], parts_dir: str, token: str, index: int,
                  concurrency: int) -> tuple[str, list[tuple[str, bool]], BaseException | None]:
    """A worker's task on the LLM path: ``concurrency`` items at once on a loop of its own, their lines committed
    as one part file; returns the part's name, ``[(id, failed)]`` and the batch-fatal error, if any."""
    job = _job(token, job)
    with _Part(job, parts_dir, token, index) as part:
        run_sync(_pool(iter(items), job, part.done, concurrency))
    return part.result()


#: a partition driven on the worker's event loop gives the loop a turn (heartbeats, messages) this often
YIELD_S = 0.05


async def run_partition_on_loop(job: Job, items: list[Item], parts_dir: str, token: str,
                                index: int) -> tuple[str, list[tuple[str, bool]], BaseException | None]:
    """:func:`run_partition` for driven steps, on the worker's own loop (a turn every :data:`YIELD_S`)."""
    job = _job(token, job)
    with _Part(job, parts_dir, token, index) as part:
        mark = time.monotonic()
        for it in items:
            part.done(it, job.driven(it))
            if time.monotonic() - mark > YIELD_S:
                await asyncio.sleep(0)
                mark = time.monotonic()
    return part.result()


def _sync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:  # Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _shippable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a batch-fatal RuntimeError with its type and message."""
    try:
        back = pickle.loads(pickle.dumps(exc))
        if isinstance(back, BaseException):
            return back
    except Exception:  # noqa: BLE001 - many exception classes cannot be rebuilt from their args
        pass
    err = RuntimeError(f"{type(exc).__name__}: {exc}")
    err.batch_fatal = True  # type: ignore[attr-defined]
    return err
