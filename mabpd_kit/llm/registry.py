"""Per-process memory shared by every :class:`~mabpd_kit.llm.LLM` object, per endpoint (and model): the
concurrency semaphore (per event loop), the server's kind and its own limit, the probed capabilities (and what
the probe left undecided), and the structured-output modes the server refused. Touched only on the I/O loop.

>>> endpoint_key("http://127.0.0.1:8000/v1", "m")
'http://127.0.0.1:8000/v1|m'
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .results import Capabilities
from .servers.base import MODE_STATUSES

if TYPE_CHECKING:
    from .servers import ServerKind

__all__ = ["MODE_REFUSED", "capabilities", "endpoint_key", "forget", "profile", "refuse_modes", "refused_modes",
           "remember_capabilities", "remember_profile", "semaphore", "server_limit", "settle", "undecided"]

MODE_REFUSED = MODE_STATUSES  # the statuses with which servers refuse a request field

_SEMAPHORES: dict[tuple[int, str, int], asyncio.Semaphore] = {}  # (loop id, endpoint, limit)
_REFUSED: dict[str, set[str]] = {}  # "endpoint|model" -> structured modes the server refused
_CAPABILITIES: dict[str, Capabilities] = {}  # "endpoint|model" -> what the probe found
_UNDECIDED: dict[str, tuple[str, ...]] = {}  # "endpoint|model" -> features the probe's answers did not settle
_PROFILES: dict[str, tuple[ServerKind, int | None]] = {}  # endpoint -> (server kind, requests it computes at once)


def endpoint_key(endpoint: str, model: str) -> str:
    """The key capabilities and refused modes are remembered under."""
    return f"{endpoint}|{model}"


def semaphore(endpoint: str, limit: int) -> asyncio.Semaphore:
    """The in-flight limit for ``endpoint`` on the running loop, shared by every LLM object that
    uses the same endpoint and ``concurrency`` setting in this process."""
    key = (id(asyncio.get_running_loop()), endpoint, limit)
    sem = _SEMAPHORES.get(key)
    if sem is None:
        sem = _SEMAPHORES[key] = asyncio.Semaphore(limit)
    return sem


def capabilities(key: str) -> Capabilities | None:
    """The capabilities probed for ``key`` in this process, or None."""
    return _CAPABILITIES.get(key)


def remember_capabilities(key: str, caps: Capabilities, *, undecided: list[str] | tuple[str, ...] = ()) -> None:
    """Keep the probe's result for this process; ``undecided`` features count as missing here only."""
    _CAPABILITIES[key] = caps
    _UNDECIDED[key] = tuple(undecided)


def undecided(key: str) -> tuple[str, ...]:
    """The features the last probe in this process could not settle (not stored on disk)."""
    return _UNDECIDED.get(key, ())


def refused_modes(key: str) -> frozenset[str]:
    """The structured-output modes the server behind ``key`` refused so far."""
    return frozenset(_REFUSED.get(key, ()))


def refuse_modes(key: str, modes: list[str] | set[str]) -> None:
    """Remember that the server behind ``key`` refused these structured-output modes."""
    _REFUSED.setdefault(key, set()).update(modes)


def profile(endpoint: str) -> ServerKind | None:
    """The server kind found for ``endpoint`` in this process (:mod:`.servers`), or None."""
    known = _PROFILES.get(endpoint)
    return None if known is None else known[0]


def server_limit(endpoint: str) -> int | None:
    """How many requests the server behind ``endpoint`` computes at once, when it said (or its profile knows)."""
    known = _PROFILES.get(endpoint)
    return None if known is None else known[1]


def remember_profile(endpoint: str, prof: ServerKind, limit: int | None) -> None:
    """Keep the server's kind and its own concurrency limit for this process."""
    _PROFILES[endpoint] = (prof, limit)


def settle(key: str, feature: str, value: bool) -> None:
    """A real call answered what the probe could not: ``feature`` is ``value`` from now on (this process)."""
    left = _UNDECIDED.get(key, ())
    if feature not in left or key not in _CAPABILITIES:
        return
    _CAPABILITIES[key] = _CAPABILITIES[key].model_copy(update={feature: value})
    _UNDECIDED[key] = tuple(f for f in left if f != feature)


def forget() -> None:
    """Clear the capability, refused-mode and server-kind memory (as in a fresh process); limits stay."""
    _CAPABILITIES.clear()
    _UNDECIDED.clear()
    _REFUSED.clear()
    _PROFILES.clear()
