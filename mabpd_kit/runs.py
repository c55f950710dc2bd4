"""The one batch runner for every method: items -> async step -> JSONL checkpoint -> :class:`Results`.

MABPD sentences, RADAR claims and identity-bias questions all run through :func:`run`:

- each item's step is a coroutine; with an LLM many run at once (every call still waits for its
  endpoint's shared limit), while the rule-based path drives the *same* coroutines one after the
  other without an event loop (:func:`drive`; they never wait on I/O);
- each finished record is appended to the checkpoint at once (one JSON line, flushed), keyed by
  the item's id, the digest of its input and the fingerprint of the configuration, so a rerun
  after ``kill -9`` takes every finished item from the file and computes only the rest (with the
  LLM cache, calls already answered are not paid again);
- a failing item becomes a failed record with its reason (``fail``); the batch goes on, and failed
  items are computed again on resume unless ``retry_failed=False``;
- usage is per item (``record.usage``) and per run (``results.usage``);
- with ``deadline_s`` each item's step has that many seconds (wall clock, all its calls); past
  it the item fails with a ``deadline: ...`` reason, so a hung server costs one deadline per item;
- an exception with ``batch_fatal = True`` (the LLM layer's 401/403: a refused key) stops the
  batch: items not started yet fail with that reason without running, and the reason is said
  once on stderr and in ``results.stopped`` (fix it and run again: failed items are retried).

>>> import asyncio
>>> from mabpd_kit.runs import Item, Results, run
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
>>> res = run([Item(str(i), i) for i in range(3)], double, record=Echo,
...           fail=lambda item, exc: Echo(id=item.id, failed=True, error=str(exc)))
>>> [r.value for r in res]
[0, 2, 4]
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from mabpd_kit.types import Usage

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Item", "Results", "complete", "digest", "drive", "fingerprint", "gather", "progress_bar", "read_checkpoint",
           "run"]

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)

# True while drive() runs a coroutine: gather() then awaits in turn instead of scheduling tasks.
_DRIVEN: contextvars.ContextVar[bool] = contextvars.ContextVar("mabpd_driven", default=False)


# =============================================================================================
# Running one coroutine
# =============================================================================================


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never waits on I/O (a rule-based step) to its end, without an event loop.

    This is what lets the rule-based path share every line of the async LLM path: its coroutines
    finish at the first ``send``. A coroutine that does wait on something is a bug here and
    raises ``RuntimeError``.
    """
    token = _DRIVEN.set(True)
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    except RuntimeError as exc:
        if "no running event loop" not in str(exc):
            raise
    finally:
        _DRIVEN.reset(token)
    coro.close()
    raise RuntimeError(_WAITED)


_WAITED = "drive(): the step waited on I/O; rule-based steps must not (give it an LLM and run it on a loop)"


def complete(coro: Coroutine[Any, Any, T], *, offline: bool) -> T:
    """A step's result from synchronous code: :func:`drive` offline, the LLM layer's ``run_sync`` online
    (which also works inside Jupyter's running loop)."""
    if offline:
        return drive(coro)
    from mabpd_kit.llm import run_sync

    return run_sync(coro)


async def gather(*aws: Awaitable[T]) -> list[T]:
    """Await several steps (the agents of one round): concurrently under an event loop, in turn when
    driven. Every step finishes before the first error is raised, so no call is left running
    unaccounted (the item's trace counts what it cost)."""
    if _DRIVEN.get():
        return [await a for a in aws]
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return list(results)


# =============================================================================================
# Items, fingerprints, checkpoints
# =============================================================================================


@dataclass(frozen=True)
class Item:
    """One unit of work. ``data`` is what the step receives; ``digest`` identifies the input (a
    checkpointed record is reused only while it matches; see :func:`digest`)."""

    id: str
    data: Any = None
    digest: str = ""


def digest(value: Any) -> str:
    """A stable hash of any JSON-able input (text as UTF-8; other values as sorted JSON)."""
    raw = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha1(raw.encode("utf-8", "replace")).hexdigest()


def fingerprint(*parts: Any) -> str:
    """What a checkpoint is valid for: a configuration (pydantic models are dumped), a model name, a
    method... Records made under another fingerprint are not reused."""
    norm = [p.model_dump(mode="json") if isinstance(p, BaseModel) else p for p in parts]
    return digest(norm)[:16]


def read_checkpoint(path: str | Path, record: type[R]) -> dict[str, tuple[str, str, R]]:
    """``id -> (digest, fingerprint, record)`` from a checkpoint; the last line of an id wins and a
    torn or unreadable line (a run killed mid-write) is skipped."""
    p = Path(path)
    found: dict[str, tuple[str, str, R]] = {}
    if not p.exists():
        return found
    with p.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                found[str(rec["id"])] = (rec.get("digest", ""), rec.get("fingerprint", ""),
                                         record.model_validate(rec["record"]))
            except (ValueError, KeyError, TypeError, ValidationError):
                continue
    return found


class _Writer:
    """Appends one JSON line per finished record, flushed at once."""

    def __init__(self, path: str | Path | None, fp: str) -> None:
        self.fp, self._fh = fp, None
        if path is None:
            return
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        torn = p.exists() and p.stat().st_size > 0 and not _ends_with_newline(p)
        self._fh = p.open("a", encoding="utf-8")
        if torn:  # a killed run left half a line: end it so the next record starts on its own line
            self._fh.write("\n")

    def write(self, item: Item, rec: BaseModel) -> None:
        if self._fh is not None:
            line = {"id": item.id, "digest": item.digest, "fingerprint": self.fp, "record": rec.model_dump(mode="json")}
            self._fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


def _ends_with_newline(p: Path) -> bool:
    with p.open("rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1) == b"\n"


# =============================================================================================
# Results
# =============================================================================================


class Results(Generic[R]):
    """The records of a batch, in input order, with the run's bookkeeping.

    Records are pydantic models with ``id``, ``failed``, ``error``, ``usage`` and ``row()``. Methods
    subclass this to add their own measures to :meth:`metrics`. ``stopped`` is the reason the batch
    was stopped early (a ``batch_fatal`` error such as a refused key), else None.
    """

    stopped: str | None = None

    def __init__(self, records: Sequence[R], *, checkpoint: str | None = None, resumed: int = 0,
                 wall_s: float = 0.0) -> None:
        self.records: list[R] = list(records)
        self.checkpoint = checkpoint
        self.resumed = resumed
        self.wall_s = wall_s

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[R]:
        return iter(self.records)

    def __getitem__(self, i: int) -> R:
        return self.records[i]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.summary()})"

    @property
    def failed(self) -> list[R]:
        return [r for r in self.records if r.failed]

    @property
    def usage(self) -> Usage:
        """The run's LLM usage: the sum over its records (resumed ones included)."""
        return Usage.total(self.records)

    def to_frame(self) -> "pd.DataFrame":
        """One row per record (``record.row()``)."""
        import pandas as pd

        return pd.DataFrame([r.row() for r in self.records])

    def metrics(self) -> dict[str, float]:
        """Counts and usage; methods add their measures."""
        u = self.usage
        return {"n": len(self.records), "failed": len(self.failed), "calls": u.calls,
                "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}

    def summary(self) -> str:
        """One line: items, resumed, failed, calls, wall time."""
        u = self.usage
        calls = f", {u.calls} calls, {u.prompt_tokens}+{u.completion_tokens} tokens" if u.calls else ""
        stopped = f"; stopped: {self.stopped}" if self.stopped else ""
        return (f"{len(self)} items ({self.resumed} from checkpoint), {len(self.failed)} failed{calls}, "
                f"{self.wall_s:.1f} s{stopped}")


# =============================================================================================
# The runner
# =============================================================================================


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
) -> Results[R]:
    """Run ``step`` on every item; see the module docstring.

    Args:
        items: unique ids (the checkpoint is keyed by them).
        step: ``async def step(item) -> record``. It should turn its own failures into failed
            records; anything it raises anyway becomes ``fail(item, exc)``.
        record: the record type (to read the checkpoint back).
        checkpoint: JSONL file; reused records need the same id, digest and ``fingerprint``.
        concurrency: ``None`` drives the steps in turn without an event loop (rule-based);
            a number runs that many items at once on an event loop (LLM).
        retry_failed: compute failed records again on resume.
        progress: a tqdm bar on stderr (a string is its label).
        results: the :class:`Results` class to return.
        deadline_s: seconds one item's step may take on the event loop (LLM batches; callers pass
            ``config.llm.item_deadline_s``); past it the step is cancelled and the item fails with
            ``deadline: item took more than N s``. ``None``: no limit. Driven (rule-based) steps never wait.
    """
    items = list(items)
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise ValueError(f"item ids must be unique (the checkpoint is keyed by them); repeated: {dup}")
    t0 = time.perf_counter()
    done = read_checkpoint(checkpoint, record) if checkpoint else {}
    out: dict[str, R] = {}
    todo: list[Item] = []
    for it in items:
        old = done.get(it.id)
        if old is not None and old[0] == it.digest and old[1] == fingerprint and not (old[2].failed and retry_failed):
            out[it.id] = old[2]
        else:
            todo.append(it)
    resumed = len(out)
    writer = _Writer(checkpoint, fingerprint)
    bar = progress_bar(len(items), initial=resumed, disable=not progress or not todo, unit="item",
                       desc=progress if isinstance(progress, str) else "items")

    def finish(it: Item, rec: R) -> None:
        out[it.id] = rec
        writer.write(it, rec)
        bar.update(1)

    fatal: list[BaseException] = []  # the first batch_fatal error: no further item is started

    async def safe(it: Item) -> R:
        if fatal:
            return fail(it, fatal[0])
        try:
            if deadline_s is None or _DRIVEN.get():
                return await step(it)
            return await _within(step(it), deadline_s)
        except _Deadline:
            return fail(it, TimeoutError(f"deadline: item took more than {deadline_s:g} s (config.llm.item_deadline_s)"))
        except Exception as exc:  # one item never stops a batch; the reason is kept
            if getattr(exc, "batch_fatal", False) and not fatal:
                fatal.append(exc)
            return fail(it, exc)

    try:
        if concurrency is None:
            for it in todo:
                try:
                    rec = drive(safe(it))
                except RuntimeError as exc:
                    rec = fail(it, exc)
                finish(it, rec)
        elif todo:
            from mabpd_kit.llm import run_sync

            run_sync(_pool(todo, safe, finish, concurrency))
    finally:
        bar.close()
        writer.close()
    res = results([out[i] for i in ids], checkpoint=str(checkpoint) if checkpoint else None, resumed=resumed,
                  wall_s=time.perf_counter() - t0)
    if fatal:
        res.stopped = f"{type(fatal[0]).__name__}: {fatal[0]}"
        print(f"mabpd-kit: batch stopped, every item not yet started failed with: {res.stopped}", file=sys.stderr)
    return res


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class _KernelBar:
    """A text bar in a notebook: one output, redrawn in place through a display handle (at most every
    0.2 s), so the saved notebook and its HTML export keep the final state, never a frozen "0%|"."""

    def __init__(self, total: int | None, initial: int, desc: str, unit: str) -> None:
        from IPython.display import display
        from tqdm import tqdm

        self._format = tqdm.format_meter
        self.n, self.total, self.desc, self.unit = initial, total, desc, unit
        self.t0 = self._last = time.perf_counter()
        self.handle = display({"text/plain": self._line()}, raw=True, display_id=True)

    def _line(self) -> str:
        return self._format(self.n, self.total, time.perf_counter() - self.t0, prefix=self.desc, unit=self.unit)

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.perf_counter()
        if now - self._last >= 0.2:
            self._last = now
            self.handle.update({"text/plain": self._line()}, raw=True)

    def close(self) -> None:
        self.handle.update({"text/plain": self._line()}, raw=True)


def _in_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
    except Exception:  # noqa: BLE001 - no shell, no kernel
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def progress_bar(total: int | None, *, initial: int = 0, desc: str = "items", unit: str = "item",
                 disable: bool = False) -> Any:
    """A progress bar with ``update(n)`` and ``close()``: in a Jupyter kernel one output line updated in
    place (what a saved or exported notebook keeps is the final state); elsewhere tqdm's text bar on
    stderr; nothing when ``disable``."""
    if disable:
        return _NoBar()
    if _in_kernel():
        return _KernelBar(total, initial, desc, unit)
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, file=sys.stderr, unit=unit, desc=desc)


class _Deadline(Exception):
    """The item's step ran past ``deadline_s`` (kept apart from any TimeoutError the step raises itself)."""


async def _within(coro: Coroutine[Any, Any, T], seconds: float) -> T:
    """``await coro``, cancelled after ``seconds`` (then :class:`_Deadline`)."""
    task = asyncio.ensure_future(coro)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        await asyncio.wait({task})  # let it unwind (its calls are cancelled too)
        raise _Deadline
    return task.result()


async def _pool(todo: list[Item], safe: Callable[[Item], Awaitable[R]], finish: Callable[[Item, R], None],
                concurrency: int) -> None:
    """``concurrency`` workers take items in order; each record is written as soon as it is in."""
    queue = iter(todo)

    async def worker() -> None:
        for it in queue:
            finish(it, await safe(it))

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(todo))))))
