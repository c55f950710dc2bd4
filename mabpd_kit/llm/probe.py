"""Capability probe: what does this endpoint+model *really* support?

Many servers silently ignore fields they do not know (ask for ``logprobs``, get none), so the probe sends three
tiny requests (never cached) and reads the answers: ``json_schema`` (a schema requiring a key the prompt never
mentions, first with ``strict: true``), ``json_object``, and ``logprobs`` / ``top_logprobs``. A feature is
decided by a positive answer or a clear refusal; anything else leaves it undecided (missing for this process
only, and the first real call that uses it settles it). The result is kept in memory, and on disk only when
every feature is decided, for ``config.llm.probe_ttl_h`` hours. ``llm.capabilities(refresh=True)`` probes again.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from pydantic import BaseModel

from . import registry
from . import structured as so
from .errors import EndpointError, Failure
from .results import Capabilities, Completion

if TYPE_CHECKING:
    from .client import LLM

__all__ = ["FEATURES", "probe"]

FEATURES = ("json_schema", "json_object", "logprobs", "top_logprobs", "strict_json_schema")
_NAMES = {  # words a server's refusal names for each probed request field
    "json_schema": ("response_format", "json_schema", "schema", "structured", "strict"),
    "json_object": ("response_format", "json_object", "json"),
    "logprobs": ("logprobs", "logprob", "top_logprobs"),
}


class _ProbeAnswer(BaseModel):
    probe_token: int


async def _try(llm: LLM, call: Awaitable[Completion], feature: str,
               failures: list[EndpointError]) -> tuple[Completion | None, bool]:
    """``(completion, False)``, or ``(None, True)`` when the server refused the request field (an error of kind
    ``REFUSED_FIELD`` that names this feature). Any other failure (time-out, 5xx, garbled body) says nothing
    about the feature: it is noted in ``failures`` and the feature stays undecided; a 401/403 raises at once."""
    try:
        return await call, False
    except EndpointError as exc:
        if exc.batch_fatal:
            raise
        said = f"{exc.detail} {exc}".lower()
        if exc.kind is Failure.REFUSED_FIELD and any(w in said for w in _NAMES[feature]):
            return None, True
        if exc.unreachable:
            raise  # no server, or no answer in time: the endpoint, not a feature
        failures.append(exc)
        return None, False


def _is_object(text: str) -> bool:
    """A JSON object, or the start of one cut off by ``max_tokens`` (a small model may chatter on)."""
    try:
        return isinstance(so.extract_json(text), dict) and text.lstrip().startswith("{")
    except ValueError:
        return False


async def probe(llm: LLM, model: str, *, refresh: bool = False) -> Capabilities:
    """Probe (or recall) the capabilities of ``model`` at ``llm.endpoint``; runs on the I/O loop.

    Uses only the public :meth:`LLM.achat` (with a raw ``response_format`` where needed). A feature the
    probe could not settle (a garbled, empty or failed answer) is not taken as missing: the client tries
    it, and the first real call that uses it settles it (:func:`registry.settle`). Raises :class:`EndpointError` only when no probe request got an
    answer at all (a dead endpoint)."""
    ek = registry.endpoint_key(llm.endpoint, model)
    if not refresh:
        known = registry.capabilities(ek)
        if known is not None:
            return known
        if llm.cache is not None:
            stored = llm.cache.get_capabilities(ek, max_age_s=llm.config.probe_ttl_h * 3600)
            if stored is not None:
                caps = Capabilities.model_validate(stored)
                registry.remember_capabilities(ek, caps)
                return caps

    prof = await llm._server()
    decided: dict[str, bool] = {}  # feature -> value, for the features the answers settle
    failures: list[EndpointError] = []
    sent = 0
    if "json_schema" not in decided:
        msgs = [{"role": "user", "content": "Say hello in one word."}]
        for strict in (True, False):
            fmt = so.response_format(_ProbeAnswer, "json_schema", strict=strict, profile=prof)
            sent += 1
            comp, refused = await _try(llm, llm.achat(msgs, model=model, max_tokens=20, response_format=fmt,
                                                      tag="probe", cache=False), "json_schema", failures)
            if comp is not None and so.validate(comp.text, _ProbeAnswer)[0] is not None:
                decided["json_schema"] = True
                decided["strict_json_schema"] = strict
                break
            if not refused:  # an answer that says nothing: undecided, no second try
                break
            if not strict:
                decided["json_schema"] = decided["strict_json_schema"] = False

    if "json_object" not in decided:
        msgs = [{"role": "user", "content": 'Reply with the JSON object {"hello": "world"}.'}]
        sent += 1
        comp, refused = await _try(llm, llm.achat(msgs, model=model, max_tokens=60, response_format={"type": "json_object"},
                                                  tag="probe", cache=False), "json_object", failures)
        if comp is not None and _is_object(comp.text):
            decided["json_object"] = True
        elif refused:
            decided["json_object"] = False

    if "logprobs" not in decided:
        sent += 1
        comp, refused = await _try(llm, llm.achat([{"role": "user", "content": "Say hi."}], model=model, max_tokens=5,
                                                  logprobs=True, top_logprobs=2, tag="probe", cache=False),
                                   "logprobs", failures)
        lps = comp.logprobs if comp is not None and comp.logprobs else []
        if lps:
            decided["logprobs"] = True
            decided["top_logprobs"] = any(t.top for t in lps)  # a well-formed answer with or without alternatives
        elif refused or (comp is not None and comp.usable):
            decided["logprobs"] = decided["top_logprobs"] = False  # a clear answer, without them

    if sent and len(failures) == sent and registry.capabilities(ek) is None:
        raise failures[0]  # not one answer: the endpoint is down, not a feature missing
    caps = Capabilities(**{f: decided.get(f, False) for f in FEATURES})
    undecided = [f for f in FEATURES if f not in decided]
    registry.remember_capabilities(ek, caps, undecided=undecided)
    if llm.cache is not None:
        if undecided:  # never store a guess; a refresh that could not decide also drops the old answer
            if refresh:
                llm.cache.delete_capabilities(ek)
        else:
            llm.cache.put_capabilities(ek, caps.model_dump())
    return caps
