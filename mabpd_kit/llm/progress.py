"""Waiting for a local server that is still computing.

A server the kit started (:mod:`.local`) is a process the kit can watch: while it keeps using CPU it is
computing (this request or the ones queued before it), so a busy machine is not a hung server. A call waits one
time-out window at a time and goes on only if the server used at least ``config.llm.local_progress_cpu_s``
CPU-seconds in that window (and, when set, until ``config.llm.local_max_wait_s``). Elsewhere nothing changes.
"""

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
    """User plus system CPU-seconds used so far by process ``pid`` (all its threads); None when unknown."""
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
    """The pid of the local server the kit started that answers ``endpoint``: the one on its port (started
    by this process or recorded for the machine); else, for a loopback endpoint in a process that started
    exactly one server, that server (a proxy in front of it, as the real-model test tier has). None otherwise."""
    from . import local

    url = urlparse(endpoint)
    if url.hostname not in _LOOPBACK:
        return None
    known = local.started_servers()
    recorded = local.running()
    if recorded is not None:
        known = {**known, recorded.port: recorded.pid}
    if url.port in known:
        return known[url.port]
    mine = local.started_servers()
    return next(iter(mine.values())) if len(mine) == 1 else None


def known_server(endpoint: str, configured: str) -> str:
    """The server profile to use without asking the server: ``configured`` (``config.llm.server``) unless it
    is ``auto`` and ``endpoint`` is a llama-cpp-python server the kit started (its kind is known: :data:`.local.KIND`).
    A busy llama-cpp-python server answers the ``/v1/models`` probe only after the request it is computing, too
    late; a llama-server the kit started is asked (it answers ``/props``, its slot count, while it computes)."""
    from . import local

    pid = server_pid(endpoint) if configured == "auto" else None
    return local.KIND if pid is not None and local.server_of(pid) == local.KIND else configured


async def wait_while_progressing(call: Awaitable[Any], *, window_s: float, progress: Callable[[], float | None],
                                 min_cpu_s: float, max_wait_s: float | None,
                                 timed_out: Callable[[float], BaseException]) -> Any:
    """``call``'s result, waiting ``window_s`` at a time while ``progress()`` (CPU-seconds) grows by at least
    ``min_cpu_s`` a window; otherwise the call is cancelled and ``timed_out(seconds waited)`` is raised."""
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
