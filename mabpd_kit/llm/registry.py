"""Per-process memory shared by every :class:`~mabpd_kit.llm.LLM` object: limits and capabilities.

Three things are remembered per endpoint (and model) for the life of the process, whatever LLM
object (whatever agent) made the call:

- the **concurrency limit**: one ``asyncio.Semaphore`` per (event loop, endpoint, limit), so all
  agents talking to one server share its in-flight slots;
- the **capabilities** found by the probe (:mod:`mabpd_kit.llm.probe`);
- the structured-output **modes a server refused** with a 4xx during a call, so they are skipped
  next time.

The client and the probe both read and write here; neither imports the other's internals.
Everything is touched only on the LLM I/O loop thread, so no lock is needed.

>>> endpoint_key("http://127.0.0.1:8000/v1", "m")
'http://127.0.0.1:8000/v1|m'
"""

from __future__ import annotations

import asyncio

from .results import Capabilities

__all__ = [
    "MODE_REFUSED",
    "capabilities",
    "endpoint_key",
    "forget",
    "refused_modes",
    "refuse_modes",
    "remember_capabilities",
    "semaphore",
    "undecided",
]

#: HTTP statuses with which servers refuse a ``response_format`` (or a feature such as logprobs).
MODE_REFUSED = (400, 404, 415, 422, 501)

_SEMAPHORES: dict[tuple[int, str, int], asyncio.Semaphore] = {}  # (loop id, endpoint, limit)
_REFUSED: dict[str, set[str]] = {}  # "endpoint|model" -> structured modes the server refused
_CAPABILITIES: dict[str, Capabilities] = {}  # "endpoint|model" -> what the probe found
_UNDECIDED: dict[str, tuple[str, ...]] = {}  # "endpoint|model" -> features the probe's answers did not settle


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


def forget() -> None:
    """Clear the capability and refused-mode memory (as in a fresh process); limits stay."""
    _CAPABILITIES.clear()
    _UNDECIDED.clear()
    _REFUSED.clear()
