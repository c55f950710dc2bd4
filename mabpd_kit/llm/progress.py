"""Waiting for a local server that is still computing: a server the kit started is watched, and a call waits one
time-out window at a time while the server used at least ``config.llm.local_progress_cpu_s`` CPU-seconds in it
(at most ``config.llm.local_max_wait_s``), so a busy machine is not a hung server."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlparse

__all__ = ["cpu_seconds", "known_server", "server_pid", "wait_while_progressing"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU-seconds used so far by process ``pid``; None when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the command name may hold spaces: count after its ')'
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError, OSError):
        return None


def server_pid(endpoint: str) -> int | None:
    """The pid of the local server the kit started that answers ``endpoint`` (by port; else, on loopback, the one
    server this process started, behind a proxy); None otherwise."""
    from . import local

    url = urlparse(endpoint)
    if url.hostname not in _LOOPBACK:
        return None
    mine = local.started_servers()
    recorded = local.running()
    known = {**mine, recorded.port: recorded.pid} if recorded is not None else mine
    if url.port in known:
        return known[url.port]
    return next(iter(mine.values())) if len(mine) == 1 else None


def known_server(endpoint: str, configured: str) -> str:
    """``configured``, unless ``auto`` for a llama-cpp-python server the kit started (too busy to answer a probe)."""
    from . import local

    pid = server_pid(endpoint) if configured == "auto" else None
    return local.KIND if pid is not None and local.server_of(pid) == local.KIND else configured


async def wait_while_progressing(call: Awaitable[Any], *, window_s: float, progress: Callable[[], float | None],
                                 min_cpu_s: float, max_wait_s: float | None,
                                 timed_out: Callable[[float], BaseException]) -> Any:
    """``call``'s result, waiting ``window_s`` at a time while ``progress()`` grows by ``min_cpu_s``; else the call is
    cancelled and ``timed_out(seconds waited)`` raised."""
    task = asyncio.ensure_future(call)
    start, last = time.monotonic(), progress()
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=window_s)
            if done:
                return task.result()
            now, waited = progress(), time.monotonic() - start
            stalled = now is None or last is None or now - last < min_cpu_s
            if stalled or (max_wait_s is not None and waited + window_s > max_wait_s):
                raise timed_out(waited)
            last = now
    finally:
        if not task.done():
            task.cancel()
