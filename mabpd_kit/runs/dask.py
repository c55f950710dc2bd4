"""The Dask executor: a batch's steps on a Dask cluster (``mabpd-kit[scale]``), one checkpoint contract.

``runs.run(..., engine="dask", workers=N)`` starts a ``LocalCluster`` of ``N`` single-threaded worker
processes on this machine; ``scheduler="tcp://HOST:8786"`` uses a running cluster instead (``dask
scheduler`` and ``dask worker`` on other machines, or a SLURM cluster through dask-jobqueue), and
``Dask(client=...)`` a ``distributed.Client`` you hold. Built from Dask's own pieces: the parent
submits partitions with ``client.submit`` and takes them back with ``distributed.as_completed``.

- **Partitions.** The parent reads the item stream (already filtered of finished items by
  :func:`~mabpd_kit.runs.run`) in partitions of ``partition`` items, and keeps about two
  partitions per worker thread in flight: memory stays flat whatever the corpus size.
- **Parts.** A worker runs each item of its partition (``job.driven(item)`` on the rule-based path;
  with ``concurrency``, ``concurrency`` items at once on its own event loop, the LLM path) and
  writes the partition's checkpoint lines to a temporary file in ``checkpoint.parts_dir``, fsyncs
  it and renames it to ``part-<run token>-<index>.jsonl``: a part is committed whole or not at all.
- **Folding.** The parent appends each committed part to the results file and removes it
  (:meth:`~mabpd_kit.runs.checkpoint.Checkpoint.fold`) in partition order (a part that completes
  before an earlier one waits, committed, on disk), so the file ends in input order and the
  reconciliation at the end has nothing to rewrite.
- **Loss and resume.** A worker lost mid-partition (killed, out of memory, its machine gone) is
  recomputed by Dask on another worker; its uncommitted temporary file is dropped by ``fold_all``.
  A run killed itself leaves committed parts behind: the next run folds them first and skips
  their items. A part committed twice (a worker that was thought lost but finished) only
  duplicates identical lines, and the reconciliation at the end keeps one per id.
- **Stops.** A client or cluster this executor started is closed at the end, also on Ctrl-C or an
  error (its unfinished partitions are cancelled); a client you gave is left running. A
  ``batch_fatal`` error (a refused key) seen by a worker stops the run: no further partition is
  sent, and the items not started fail with that reason.

What a step for Dask must be:

- **picklable** (cloudpickle, as Dask ships it): a small object, not a closure over a pipeline.
  A step defined in a notebook or ``__main__`` is shipped by value; one defined in a module is
  shipped by reference, so that module (and mabpd-kit) must be installed on every worker;
- **cheap to ship, heavy once per worker process**: build the pipeline, lexicon or LLM connection
  lazily, on first use, in a module-level cache keyed by the step's fingerprint (as
  :class:`~mabpd_kit.corpus.parallel.ArticleStep` does). Within one run a worker keeps the first
  copy of the job it receives, so a cache on the step itself lasts the run too;
- **thread-safe, or run on single-threaded workers**: a worker with several threads runs several
  partitions at once (``dask worker ADDRESS --nthreads 1 --nworkers N`` for rule-based steps: the
  GIL gains nothing from threads anyway);
- on the LLM path each worker has its own LLM connection, answer cache and rate limit (the step
  builds them from the worker's environment; no key travels in a task).

On a real cluster the results file's folder must be on a filesystem every worker shares, mounted
at the same path (the workers write the part files there). From a script, start a run that makes
its own ``LocalCluster`` under ``if __name__ == "__main__":`` (on Linux its workers are forked from
this process, :data:`FORK_WORKERS`; elsewhere they are spawned and import the script again).
Nothing here imports Dask until a run uses it.
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
from mabpd_kit.runs.steps import _gc_for_batch, _gc_restore, run_sync

__all__ = ["Dask", "DaskMissing", "run_partition", "run_partition_on_loop"]

INSTALL_HINT = 'the Dask engine needs the scale extra: pip install "mabpd-kit[scale]"'

#: Dask settings for the workers of a ``LocalCluster`` this executor starts (a batch, not an interactive
#: session): no statistical profiler (it samples every worker's stack 100 times a second) and slower
#: housekeeping ticks. Measured on this project's 2-core machine, a worker running the rule-based pipeline
#: spent 14-16% more CPU than its task thread with Dask's defaults, 1-2% with these (3 runs each). A
#: cluster you start yourself keeps its own settings (``docs/scale.md``).
QUIET_WORKERS: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.tick.interval": "1s",
    # a worker process that starts slowly on a loaded machine (a classroom laptop) is waited for, not failed:
    # Dask's 30 s connect time-out was what timed out the nanny start-up beside a CPU-bound load
    "distributed.comm.timeouts.connect": "120s",
}
#: where fork is safe (Linux), a LocalCluster's workers are forked from this process (Dask's default is
#: spawn): they start with mabpd-kit imported and the lexicon built, instead of importing distributed and
#: mabpd-kit and compiling the lexicon again in each (2 workers: 9.3 -> 2.8 s for a 20-sentence run).
#: A method other than Dask's default (spawn) in the caller's configuration is left alone.
FORK_WORKERS: dict[str, Any] = {"distributed.worker.multiprocessing-method": "fork"}


class DaskMissing(ImportError, ValueError):
    """Dask is not installed. Also a ``ValueError``, so the command line prints it as one user-error line."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise DaskMissing(INSTALL_HINT) from exc
    return distributed


class Dask:
    """Partitions of ``partition`` items on a Dask cluster; see the module docstring.

    ``workers``: worker processes of the ``LocalCluster`` started when neither ``scheduler`` (a
    cluster's address) nor ``client`` (a ``distributed.Client``, left running) is given; every
    core by default. ``concurrency``: items at once on each worker's event loop (the LLM path);
    ``None`` drives them in turn (rule-based). ``cluster``: more ``LocalCluster`` keywords
    (the scheduler's web server, with Dask's dashboard when bokeh is installed, is on a free port:
    ``dashboard_address=":8787"`` for the usual one).
    """

    name = "dask"
    needs_checkpoint = True  # the workers write part files beside the run's checkpoint

    def __init__(self, workers: int | None = None, scheduler: str | None = None, partition: int = 64,
                 concurrency: int | None = None, *, client: Any = None, **cluster: Any) -> None:
        _distributed()  # fail here, before the run opens its checkpoint
        if scheduler is not None and not isinstance(scheduler, str):
            client, scheduler = scheduler, None  # a Client given where an address was expected
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

    # -- the cluster -----------------------------------------------------------------------------

    def _connect(self) -> tuple[Any, list[Any]]:
        """The client to use, and what this executor started (closed at the end, last first)."""
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
        """Does this executor start a ``LocalCluster`` whose workers fork from this process (:data:`FORK_WORKERS`)?"""
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

    # -- the run ---------------------------------------------------------------------------------

    def execute(self, todo: Iterator[Item], job: Job, emit: Emit, *, checkpoint: Any) -> None:
        distributed = _distributed()
        parts = Path(checkpoint.parts_dir)
        parts.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex[:12]
        prepare = getattr(job.step, "prepare", None)
        if prepare is not None and not getattr(job.step, "online", False) and self._forks():
            # built here, before the fork, as the local pool does: the workers inherit the pipeline (not on
            # the LLM path: a connection stays in the process that opened it). Measured
            # on 200,000 sentences (2 workers): 101-109 CPU-s in the workers against 117-118 when each built its own
            prepare()
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
                    args: tuple[Any, ...] = (job, items, str(parts), token, index)
                    task = run_partition_on_loop if self.concurrency is None else run_partition
                    if self.concurrency is not None:
                        args += (self.concurrency,)
                    fut = client.submit(task, *args, key=f"mabpd-partition-{token}-{index}", pure=False)
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
            if inflight:  # Ctrl-C or an error: drop what is queued (a running partition may still commit)
                try:
                    client.cancel(list(inflight.values()))
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
    """How many workers the cluster at ``scheduler`` has now (at least 1): the LLM path divides the
    endpoint's limit among them."""
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


# -- on the worker ---------------------------------------------------------------------------------

#: the first copy of each run's job this worker process received (its step's own caches last the run)
_JOBS: OrderedDict[str, Job] = OrderedDict()


def _job(token: str, job: Job) -> Job:
    kept = _JOBS.setdefault(token, job)
    _JOBS.move_to_end(token)
    while len(_JOBS) > 4:
        _JOBS.popitem(last=False)
    return kept


class _Part:
    """One partition's part file: lines go to a temporary file, committed whole (fsync, rename) when the
    block ends without an error, removed otherwise; the collector is set for a batch meanwhile."""

    def __init__(self, job: Job, parts_dir: str, token: str, index: int) -> None:
        self.job, self.dir = job, Path(parts_dir)
        self.name = f"part-{token}-{index:07d}.jsonl"
        self.rows: list[tuple[str, bool]] = []

    def __enter__(self) -> "_Part":
        self.dir.mkdir(parents=True, exist_ok=True)
        self.tmp = self.dir / f".{self.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"  # not .jsonl: fold_all drops it
        self.gc_state = _gc_for_batch()  # as in run(): a spawned or remote worker inherits no collector settings
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
            _gc_restore(self.gc_state)

    def result(self) -> tuple[str, list[tuple[str, bool]], BaseException | None]:
        return self.name, self.rows, _shippable(self.job.fatal[0]) if self.job.fatal else None


def run_partition(job: Job, items: list[Item], parts_dir: str, token: str, index: int,
                  concurrency: int | None = None) -> tuple[str, list[tuple[str, bool]], BaseException | None]:
    """A worker's task (in a thread of its pool): run the partition's items, commit their lines as one
    part file; returns the part's name, ``[(id, failed)]`` and the batch-fatal error seen, if any.
    With ``concurrency``, ``concurrency`` items at once on an event loop of the task's own (the LLM path)."""
    job = _job(token, job)
    with _Part(job, parts_dir, token, index) as part:
        if concurrency is None:
            for it in items:
                part.done(it, job.driven(it))
        else:
            run_sync(_pool(iter(items), job, part.done, concurrency))
    return part.result()


#: a partition driven on the worker's event loop gives the loop a turn (heartbeats, messages) this often
YIELD_S = 0.05


async def run_partition_on_loop(job: Job, items: list[Item], parts_dir: str, token: str,
                                index: int) -> tuple[str, list[tuple[str, bool]], BaseException | None]:
    """:func:`run_partition` for driven (rule-based) steps, as a coroutine function: Dask runs such a
    task on the worker's own thread (its event loop) instead of handing it to its thread pool, as the
    local pool runs a chunk in its worker's one thread. Measured on this project's 2-core machine, a local
    pool worker that ran its chunks in a thread spent 10-25% more CPU on the same items than in its main
    thread. Between items, the loop gets a turn every :data:`YIELD_S` seconds."""
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
    """``exc`` if it survives pickling back to the parent, else a RuntimeError with its type and message."""
    try:
        back = pickle.loads(pickle.dumps(exc))
        if isinstance(back, BaseException):
            return back
    except Exception:  # noqa: BLE001 - many exception classes cannot be rebuilt from their args
        pass
    err = RuntimeError(f"{type(exc).__name__}: {exc}")
    err.batch_fatal = True  # type: ignore[attr-defined]
    return err
