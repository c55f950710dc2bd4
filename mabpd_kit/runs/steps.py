"""Running one step: a coroutine driven without a loop (rule-based), or on an event loop (LLM)."""

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
    """Run a coroutine that never waits on I/O (a rule-based step) to its end without an event loop."""
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
    """Run a coroutine to completion from synchronous code, also inside a running loop (Jupyter)."""
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
    """Await several steps: concurrently on a loop, in turn when driven. Every step finishes before the
    first error is raised, so no call is left running unaccounted."""
    if _DRIVEN.get():
        return [await a for a in aws]
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return list(results)


#: the collector's young generation during a batch (CPython's default 700 costs a fifth of the rule-based CPU
#: time in passes over what the run keeps: bench/bench_pipeline.py)
GC_YOUNG = 10_000

_MANAGED: list[bool] = [False]  # True while a batch manages the collector


def gc_for_batch() -> tuple[int, int, int] | None:
    """Freeze what is alive before the run and enlarge the young generation; :func:`gc_restore` undoes both."""
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
    """After a driven item in a managed batch, freeze what it left alive (rule-based items leave no cycles)."""
    if _MANAGED[0]:
        gc.freeze()
