"""Running one step: a coroutine driven without a loop (rule-based), or on an event loop (LLM).

The rule-based steps never wait on I/O, so :func:`drive` runs them to their end at the first
``send``; with an LLM the same coroutines run on a loop (:func:`run_sync`, which also works inside
Jupyter's running loop). :func:`gather` runs one round's steps together.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import gc
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

__all__ = ["complete", "drive", "driven", "gather", "run_sync", "settle"]

T = TypeVar("T")

# True while drive() runs a coroutine: gather() then awaits in turn instead of scheduling tasks.
_DRIVEN: contextvars.ContextVar[bool] = contextvars.ContextVar("mabpd_driven", default=False)

_WAITED = "drive(): the step waited on I/O; rule-based steps must not (give it an LLM and run it on a loop)"


def driven() -> bool:
    """True inside :func:`drive` (no event loop: steps run in turn)."""
    return _DRIVEN.get()


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


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from synchronous code and return its result.

    Without a running loop in this thread it is ``asyncio.run``. Inside a running loop
    (Jupyter), ``asyncio.run`` is forbidden, so the coroutine runs in a worker thread with a
    fresh loop of its own (LLM calls inside it still share the LLM layer's global limit).

    >>> async def two():
    ...     return [1, 2]
    >>> run_sync(two())
    [1, 2]
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(coro))
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mabpd-run-sync") as pool:
        return pool.submit(asyncio.run, _as_coroutine(coro)).result()


async def _as_coroutine(aw: Awaitable[T]) -> T:
    return await aw


def complete(coro: Coroutine[Any, Any, T], *, offline: bool) -> T:
    """A step's result from synchronous code: :func:`drive` offline, :func:`run_sync` online."""
    return drive(coro) if offline else run_sync(coro)


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


#: the collector's young generation during a batch (CPython's default: 700): a rule-based step allocates
#: thousands of short-lived objects, and at 700 the collector's passes over what the run keeps cost a fifth
#: of the rule-based CPU time (bench/bench_pipeline.py)
GC_YOUNG = 10_000

#: [True] while a batch manages the collector (between :func:`gc_for_batch` and :func:`gc_restore`)
_MANAGED: list[bool] = [False]


def gc_for_batch() -> tuple[int, int, int] | None:
    """For the run: what is alive before it is frozen out of the collector's passes (``gc.freeze``: nothing is
    freed or moved) and the young generation is larger; :func:`gc_restore` puts both back."""
    if not gc.isenabled() or gc.get_threshold()[0] >= GC_YOUNG:
        return None  # the caller manages the collector (or a run inside a run)
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(GC_YOUNG, *before[1:])
    _MANAGED[0] = True
    return before


def gc_restore(state: tuple[int, int, int] | None) -> None:
    if state is None:
        return
    _MANAGED[0] = False
    gc.set_threshold(*state)
    gc.unfreeze()


def settle() -> None:
    """After a driven (rule-based) item, while a batch manages the collector: what the item left alive (its
    record, kept by the run) is frozen too, so the collector does not walk every record again (a rule-based
    item leaves no reference cycles behind). Everything frozen goes back at the end of the run."""
    if _MANAGED[0]:
        gc.freeze()
