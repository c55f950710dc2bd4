"""Per-process memory shared by every :class:`~mabpd_kit.llm.LLM` object, per endpoint (and model): the concurrency
semaphore (per loop), the server's kind and limit, the probed capabilities (and what the probe left undecided),
the modes the server refused, whether it takes strict schemas. Touched only on the I/O loop."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .errors import EndpointError, Failure
from .results import Capabilities
from .servers.base import MODE_STATUSES

if TYPE_CHECKING:
    from .servers import ServerKind

__all__ = ["MODE_REFUSED", "REFUSAL_WORDS", "capabilities", "end_strict_trial", "endpoint_key", "forget", "profile",
           "refuse_modes", "refused_modes", "refuses", "remember_capabilities", "remember_profile", "semaphore",
           "server_limit", "settle", "settle_strict", "strict", "strict_trial", "undecided"]

MODE_REFUSED = MODE_STATUSES  # the statuses with which servers refuse a request field

_SEMAPHORES: dict[tuple[int, str, int], asyncio.Semaphore] = {}  # (loop id, endpoint, limit)
_REFUSED: dict[str, set[str]] = {}  # "endpoint|model" -> structured modes the server refused
_CAPABILITIES: dict[str, Capabilities] = {}  # "endpoint|model" -> what the probe found
_UNDECIDED: dict[str, tuple[str, ...]] = {}  # "endpoint|model" -> features the probe's answers did not settle
_PROFILES: dict[str, tuple[ServerKind, int | None]] = {}  # endpoint -> (server kind, requests it computes at once)
_STRICT: dict[str, bool] = {}  # "endpoint|model" -> strict json_schema taken (True) or refused (False) by a real call
_TRIALS: dict[tuple[int, str], asyncio.Event] = {}  # (loop id, "endpoint|model") -> set when its strict trial ends

#: words a server's refusal names for each request field the kit tries (the probe, and a call trying strict)
REFUSAL_WORDS = {
    "json_schema": ("response_format", "json_schema", "schema", "structured", "strict"),
    "json_object": ("response_format", "json_object", "json"),
    "logprobs": ("logprobs", "logprob", "top_logprobs"),
}


def endpoint_key(endpoint: str, model: str) -> str:
    """The key capabilities and refused modes are remembered under."""
    return f"{endpoint}|{model}"


def semaphore(endpoint: str, limit: int) -> asyncio.Semaphore:
    """The in-flight limit for ``endpoint`` on the running loop, shared by every LLM object in this process."""
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
    if "strict_json_schema" not in undecided:
        _STRICT.pop(key, None)  # the probe's answer is the newest


def undecided(key: str) -> tuple[str, ...]:
    """The features the last probe in this process could not settle."""
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
    """How many requests the server behind ``endpoint`` computes at once, when known."""
    known = _PROFILES.get(endpoint)
    return None if known is None else known[1]


def remember_profile(endpoint: str, prof: ServerKind, limit: int | None) -> None:
    """Keep the server's kind and its own concurrency limit for this process."""
    _PROFILES[endpoint] = (prof, limit)


def settle(key: str, feature: str, value: bool) -> None:
    """A real call answered what the probe could not: ``feature`` is ``value`` from now on."""
    left = _UNDECIDED.get(key, ())
    if feature not in left or key not in _CAPABILITIES:
        return
    _CAPABILITIES[key] = _CAPABILITIES[key].model_copy(update={feature: value})
    _UNDECIDED[key] = tuple(f for f in left if f != feature)


def refuses(exc: EndpointError, feature: str) -> bool:
    """Did the server refuse the request field ``feature``? A ``REFUSED_FIELD`` error whose message names it."""
    said = f"{exc.detail} {exc}".lower()
    return exc.kind is Failure.REFUSED_FIELD and any(w in said for w in REFUSAL_WORDS[feature])


def strict(key: str) -> bool | None:
    """Does the server behind ``key`` take strict json_schema? A real call's finding, else the probe's, else None."""
    if key in _STRICT:
        return _STRICT[key]
    caps = _CAPABILITIES.get(key)
    if caps is None or "strict_json_schema" in _UNDECIDED.get(key, ()):
        return None
    return caps.strict_json_schema


def strict_trial(key: str) -> asyncio.Event | None:
    """Open the strict trial of ``key`` on the running loop: None when the caller now holds it (it settles it, then
    :func:`end_strict_trial`), else the event the trial in flight sets when it ends."""
    tkey = (id(asyncio.get_running_loop()), key)
    if (running := _TRIALS.get(tkey)) is not None:
        return running
    _TRIALS[tkey] = asyncio.Event()
    return None


def end_strict_trial(key: str) -> None:
    """The trial of ``key`` ended: the calls waiting for it go on."""
    if (running := _TRIALS.pop((id(asyncio.get_running_loop()), key), None)) is not None:
        running.set()


def settle_strict(key: str, value: bool) -> None:
    """A real call found whether the server takes strict json_schema: so for every later call."""
    _STRICT[key] = value
    settle(key, "strict_json_schema", value)
    end_strict_trial(key)


def forget() -> None:
    """Clear the capability, refused-mode and server-kind memory (as in a fresh process); limits stay."""
    _STRICT.clear()
    _CAPABILITIES.clear()
    _UNDECIDED.clear()
    _REFUSED.clear()
    _PROFILES.clear()
