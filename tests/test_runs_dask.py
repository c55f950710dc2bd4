"""The Dask executor (mabpd_kit.runs.dask) on a 2-worker LocalCluster: the same records as in this
process, item by item; kill -9 and Ctrl-C mid-run, then resume without repeating a finished item; a
worker killed mid-partition recomputed without a duplicate row; the LLM path's event loop per worker;
a refused key stopping the batch; one line when Dask is missing.

The steps are module-level classes: Dask pickles them to its worker processes, which import this
module by name (pytest put its folder on ``sys.path``; the spawned workers inherit it). Every
computation is logged as ``id pid`` to a file (the workers are other processes)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from mabpd_kit import runs
from mabpd_kit.runs.executors import InProcess

N = 300
TESTS = str(Path(__file__).resolve().parent)


class Rec(BaseModel):
    id: str
    value: int = 0
    text: str = ""
    failed: bool = False
    error: str | None = None


class Step:
    """Rule-based: never waits on I/O. Every 23rd item fails. ``kill_at``: the worker that meets that
    item while ``marker`` exists removes the marker and dies (``os._exit``), mid-partition."""

    def __init__(self, log: str | None = None, sleep_s: float = 0.0, kill_at: str | None = None,
                 marker: str | None = None) -> None:
        self.log, self.sleep_s, self.kill_at, self.marker = log, sleep_s, kill_at, marker

    def note(self, item: runs.Item) -> None:
        if self.log:
            with open(self.log, "a", encoding="utf-8") as fh:
                fh.write(f"{item.id} {os.getpid()}\n")

    async def __call__(self, item: runs.Item) -> Rec:
        self.note(item)
        if item.id == self.kill_at and self.marker:
            try:
                os.unlink(self.marker)
            except FileNotFoundError:
                pass
            else:
                os._exit(1)
        if self.sleep_s:
            time.sleep(self.sleep_s)
        if item.data % 23 == 0:
            raise ValueError(f"item {item.id} is bad")
        return Rec(id=item.id, value=item.data * item.data, text=f"item {item.data}")

    def fail(self, item: runs.Item, exc: BaseException) -> Rec:
        return Rec(id=item.id, failed=True, error=f"{type(exc).__name__}: {exc}")


class AsyncStep(Step):
    """The LLM path's shape: it awaits (so it runs only on an event loop)."""

    async def __call__(self, item: runs.Item) -> Rec:
        await asyncio.sleep(0.001)
        return await super().__call__(item)


class Refused(Exception):
    batch_fatal = True


class RefusingStep(Step):
    """Item 5 meets a refused key: the batch stops."""

    async def __call__(self, item: runs.Item) -> Rec:
        if item.id == "5":
            self.note(item)
            raise Refused("401: the key was refused")
        return await super().__call__(item)


def _items(n: int = N):
    return (runs.Item(str(i), i, runs.digest(str(i))) for i in range(n))


def _run(step: Step, ck: Path, engine, n: int = N, items=None) -> runs.Results:
    return runs.run(items if items is not None else _items(n), step, record=Rec, fail=step.fail,
                    checkpoint=ck, engine=engine)


def _logged(log: Path) -> list[tuple[str, int]]:
    if not log.exists():
        return []
    return [(a, int(b)) for a, b in (ln.split() for ln in log.read_text().splitlines() if ln.strip())]


def _finished(ck: Path) -> set[str]:
    """Ids finished on disk: whole lines of the results file and of committed (not yet folded) parts."""
    done = set(runs.read_checkpoint(ck, Rec))
    parts = ck.with_name(ck.name + ".parts")
    if parts.is_dir():
        for p in parts.glob("part-*.jsonl"):
            done |= set(runs.read_checkpoint(p, Rec))
    return done


def _ids_once(ck: Path) -> list[str]:
    import json

    return [json.loads(ln)["id"] for ln in ck.read_text().splitlines()]


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                 silence_logs=logging.ERROR)
    yield c
    c.close()


@pytest.fixture(scope="module")
def client(cluster):
    import distributed

    cl = distributed.Client(cluster)
    yield cl
    cl.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> bytes:
    """The results file of an uninterrupted in-process run."""
    ck = tmp_path_factory.mktemp("reference") / "run.jsonl"
    _run(Step(), ck, InProcess())
    return ck.read_bytes()


def _dask(client, **kw):
    from mabpd_kit.runs.dask import Dask

    return Dask(client=client, partition=kw.pop("partition", 10), **kw)


def test_dask_writes_the_in_process_records_item_by_item_and_reads_the_stream_as_it_goes(tmp_path, client,
                                                                                        reference):
    ck = tmp_path / "run.jsonl"
    behind: list[int] = []

    def items():
        for i, it in enumerate(_items()):
            if i % 10 == 0 and ck.exists():  # items read - items folded into the results file
                behind.append(i - len(ck.read_bytes().splitlines()))
            yield it

    res = _run(Step(), ck, _dask(client), items=items())
    assert ck.read_bytes() == reference  # same lines, same order: id, digest, fingerprint, record
    assert res.computed == N and res.resumed == 0 and len(res.failed) == len(range(0, N, 23))
    assert [r.id for r in res] == [str(i) for i in range(N)]
    assert max(behind) <= (2 * 2 + 1) * 10  # about two partitions per worker in flight, not the whole stream
    assert not ck.with_name("run.jsonl.parts").exists()  # every part folded and the folder removed
    assert client.status == "running"  # a client the run was given is left alone
    again = _run(Step(log=str(tmp_path / "log")), ck, _dask(client))
    assert again.resumed == N - len(again.failed) and again.computed == len(again.failed)  # failed ones retried


def test_a_worker_killed_mid_partition_is_recomputed_without_duplicate_rows(tmp_path, client, reference):
    ck, log, marker = tmp_path / "run.jsonl", tmp_path / "log", tmp_path / "kill-once"
    marker.touch()
    res = _run(Step(log=str(log), kill_at="37", marker=str(marker)), ck, _dask(client))  # partition 30-39
    assert not marker.exists()  # a worker did die on item 37
    seen = [id for id, _ in _logged(log)]
    assert all(seen.count(str(i)) >= 2 for i in range(30, 38))  # its partition ran again from the start
    assert ck.read_bytes() == reference  # every id once, as the uninterrupted run wrote it
    assert res.computed == N


def test_kill_9_mid_run_then_resume_repeats_no_finished_item(tmp_path, cluster, client, reference):
    """The child runs on the module's cluster (no second cluster to start): its partitions still running
    when it dies go on and commit their parts after the kill, which the resumed run folds."""
    from mabpd_kit.testing import kill_9_when

    ck, log = tmp_path / "run.jsonl", tmp_path / "log-first"
    code = (f"import sys; sys.path.insert(0, {TESTS!r}); import test_runs_dask as t; "
            f"t.child_run({str(ck)!r}, {str(log)!r}, {cluster.scheduler_address!r})")

    def ready() -> bool:  # a third of the items folded into the results file
        return ck.exists() and len(ck.read_bytes().splitlines()) >= N // 3

    kill_9_when([sys.executable, "-c", code], ready, timeout_s=120)
    done = _finished(ck)
    assert N // 3 <= len(done) < N

    log2 = tmp_path / "log-resume"
    res = _run(Step(log=str(log2)), ck, _dask(client))
    again = {id for id, _ in _logged(log2)}
    assert not again & {i for i in done if int(i) % 23}  # no finished item computed twice (failed ones retried)
    assert res.resumed + res.computed == N and res.resumed >= len(done) - len(range(0, N, 23))
    assert ck.read_bytes() == reference


def child_run(ck: str, log: str, scheduler: str) -> None:
    """The kill -9 test's child: ``mabpd analyze --engine dask --scheduler ADDRESS`` in small."""
    step = Step(log=log, sleep_s=0.01)
    runs.run(_items(), step, record=Rec, fail=step.fail, checkpoint=ck, engine="dask", scheduler=scheduler, chunk=10)


def test_a_run_starts_its_own_local_cluster_and_closes_it(tmp_path):
    """``engine="dask", workers=2`` without a checkpoint: a LocalCluster of its own and a temporary
    checkpoint for the part files; its worker processes are gone when the run returns."""
    psutil = pytest.importorskip("psutil")
    log = tmp_path / "log"
    step = Step(log=str(log))
    res = runs.run(_items(40), step, record=Rec, fail=step.fail, engine="dask", workers=2, chunk=8)
    mine = runs.run(_items(40), step, record=Rec, fail=step.fail)
    assert [r.model_dump() for r in res] == [r.model_dump() for r in mine] and res.checkpoint is None
    workers = {pid for _, pid in _logged(log)} - {os.getpid()}
    assert len(workers) == 2
    deadline = time.monotonic() + 20
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in workers):
        assert time.monotonic() < deadline, "the run's own Dask workers outlived it"
        time.sleep(0.1)


class ConfigStep(Step):
    """Records what the worker's Dask configuration says of its statistical profiler."""

    async def __call__(self, item: runs.Item) -> Rec:
        import dask

        return Rec(id=item.id, text=str(dask.config.get("distributed.worker.profile.enabled")))


def test_the_local_cluster_a_run_starts_has_quiet_workers_and_leaves_the_callers_config_alone():
    """The workers of the executor's own LocalCluster run without Dask's profiler (runs.dask.QUIET_WORKERS);
    the parent's configuration is what it was before the run."""
    import dask
    import distributed  # noqa: F401 - its defaults join dask.config on import

    from mabpd_kit.runs.dask import QUIET_WORKERS

    before = {k: dask.config.get(k) for k in QUIET_WORKERS}
    step = ConfigStep()
    res = runs.run(_items(6), step, record=Rec, fail=step.fail, engine="dask", workers=1, chunk=3)
    assert [r.text for r in res] == ["False"] * 6
    assert {k: dask.config.get(k) for k in QUIET_WORKERS} == before and before["distributed.worker.profile.enabled"]


class ForkStep(Step):
    """Records whether the worker holds what the parent process had in memory when the run began."""

    async def __call__(self, item: runs.Item) -> Rec:
        import mabpd_kit.runs.dask as d

        return Rec(id=item.id, text=str(getattr(d, "_parent_mark", None)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_the_local_cluster_a_run_starts_forks_its_workers_from_the_parent(monkeypatch):
    """On Linux the executor's own LocalCluster forks its workers (runs.dask.FORK_WORKERS): they start with
    what this process has loaded (mabpd-kit, the lexicon), not as fresh interpreters. A caller's own choice
    of method is kept."""
    import dask

    import mabpd_kit.runs.dask as d

    monkeypatch.setattr(d, "_parent_mark", "from the parent", raising=False)
    step = ForkStep()
    res = runs.run(_items(4), step, record=Rec, fail=step.fail, engine="dask", workers=1, chunk=2)
    assert [r.text for r in res] == ["from the parent"] * 4
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        res = runs.run(_items(2), step, record=Rec, fail=step.fail, engine="dask", workers=1, chunk=2)
    assert [r.text for r in res] == ["None"] * 2  # not forked from this process: the caller's method


def test_ctrl_c_in_the_parent_closes_its_client_and_resume_repeats_no_finished_item(tmp_path, cluster, client,
                                                                                    reference):
    from mabpd_kit.runs.dask import Dask

    ck, log = tmp_path / "run.jsonl", tmp_path / "log"
    clients = set(cluster.scheduler.clients)

    def items():
        for it in _items():
            if it.data == 150:
                raise KeyboardInterrupt
            yield it

    with pytest.raises(KeyboardInterrupt):
        _run(Step(sleep_s=0.002), ck, Dask(scheduler=cluster.scheduler_address, partition=10), items=items())
    deadline = time.monotonic() + 10
    while set(cluster.scheduler.clients) - clients:  # the client the executor opened is closed
        assert time.monotonic() < deadline, "the executor's own client was left connected"
        time.sleep(0.05)
    done = _finished(ck)
    assert 0 < len(done) <= 150
    res = _run(Step(log=str(log)), ck, _dask(client))
    assert not {id for id, _ in _logged(log)} & {i for i in done if int(i) % 23}
    assert ck.read_bytes() == reference and res.resumed + res.computed == N


def test_the_llm_path_runs_each_partition_on_the_workers_event_loop(tmp_path, client):
    ref, ck = tmp_path / "ref.jsonl", tmp_path / "run.jsonl"
    _run(AsyncStep(), ref, InProcess(concurrency=4), n=100)
    res = _run(AsyncStep(), ck, _dask(client, concurrency=4), n=100)
    assert ck.read_bytes() == ref.read_bytes() and res.computed == 100


def test_a_refused_key_on_a_worker_stops_the_batch(tmp_path, client, capsys):
    ck, log = tmp_path / "run.jsonl", tmp_path / "log"
    res = _run(RefusingStep(log=str(log)), ck, _dask(client, partition=5))
    assert res.stopped == "Refused: 401: the key was refused"
    ran = {id for id, _ in _logged(log)}
    assert len(ran) < N // 2  # no partition sent once the parent knew
    unrun = [r for r in res if r.id not in ran]
    assert unrun and all(r.failed and "401" in r.error for r in unrun)
    assert _ids_once(ck) == [str(i) for i in range(N)]
    assert "batch stopped" in capsys.readouterr().err


def test_without_dask_the_engine_says_how_to_install_it_in_one_line(monkeypatch):
    from mabpd_kit.cli import error_line

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(ImportError) as exc:
        runs.executor("dask", workers=2)
    assert str(exc.value) == 'the Dask engine needs the scale extra: pip install "mabpd-kit[scale]"'
    assert error_line(exc.value) == f"error: {exc.value}"
