"""One background event loop shared by every LLM object: the per-endpoint limit holds across sync calls, threads
and ``await`` inside Jupyter's loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Coroutine, Iterable
from typing import Any, TypeVar

from mabpd_kit.runs.steps import run_sync  # the one sync bridge lives in the runner, below this layer

__all__ = ["gather_limited", "in_io_thread", "io_loop", "run_sync", "submit"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def io_loop() -> asyncio.AbstractEventLoop:
    """The shared background loop (started on first use)."""
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed() or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def _run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            _thread = threading.Thread(target=_run, name="mabpd-llm-io", daemon=True)
            _thread.start()
            ready.wait()
            _loop = loop
        return _loop


def in_io_thread() -> bool:
    return _thread is not None and threading.current_thread() is _thread


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Schedule ``coro`` on the shared loop from any thread."""
    return asyncio.run_coroutine_threadsafe(coro, io_loop())


async def gather_limited(aws: Iterable[Awaitable[T]], *, limit: int | None = None, progress: bool | str = False,
                         return_exceptions: bool = False) -> list[T]:
    """Await many awaitables, results in input order; ``limit`` (besides each endpoint's own), ``progress`` (a tqdm
    bar, or its label), ``return_exceptions`` (a failing item yields its exception)."""
    items = list(aws)
    sem = asyncio.Semaphore(limit) if limit else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(items), desc=progress if isinstance(progress, str) else "LLM calls")

    async def one(aw: Awaitable[T]) -> T:
        try:
            if sem is None:
                return await aw
            async with sem:
                return await aw
        finally:
            if bar is not None:
                bar.update(1)

    try:
        return await asyncio.gather(*(one(a) for a in items), return_exceptions=return_exceptions)
    finally:
        if bar is not None:
            bar.close()
