"""Capability probe: what does this endpoint+model *really* support?

Servers differ, and many silently ignore request fields they do not know: ask for
``logprobs`` and you simply get none back. Rather than trusting documentation, the probe sends
three tiny requests (never answered from, nor written to, the response cache) and looks at the answers:

- ``json_schema``: a schema requiring a key the prompt never mentions (``probe_token``). Only
  a server that really constrains output to the schema produces it. It is asked first with
  ``strict: true`` (the strict-compatible schema): a server that produces the key that way supports
  ``strict_json_schema`` too; one that refuses strict is asked again without it.
- ``json_object``: does the server accept ``{"type": "json_object"}`` and answer with a JSON object?
- ``logprobs`` / ``top_logprobs``: are per-token log-probabilities (and alternatives) returned?

Each feature is *decided* by a positive answer or by a clear refusal (an HTTP 4xx whose message
names the field). Anything else (an empty or garbled reply, a 4xx about something else) leaves it
undecided: it counts as missing for this process only. The result is kept in memory, and in the
cache database (table ``capabilities``) only when every feature is decided, for
``config.llm.probe_ttl_h`` hours; a fault burst during ``mabpd doctor`` can therefore never
downgrade later processes. Time-outs and 5xx raise :class:`EndpointError` and store nothing.
``mabpd doctor --refresh`` (``llm.capabilities(refresh=True)``) probes again and overwrites.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from pydantic import BaseModel

from . import registry
from . import structured as so
from .errors import EndpointError
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


async def _try(call: Awaitable[Completion], feature: str) -> tuple[Completion | None, bool]:
    """``(completion, False)``, or ``(None, refused_clearly)`` when the server said no with a 4xx.
    A dead or failing endpoint (time-out, 5xx, 401) is not an answer about features: it raises."""
    try:
        return await call, False
    except EndpointError as exc:
        if exc.status in registry.MODE_REFUSED:
            said = f"{exc.detail} {exc}".lower()
            return None, exc.status in (400, 415, 422, 501) and any(w in said for w in _NAMES[feature])
        raise


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


async def probe(llm: LLM, model: str, *, refresh: bool = False) -> Capabilities:
    """Probe (or recall) the capabilities of ``model`` at ``llm.endpoint``; runs on the I/O loop.

    Uses only the public :meth:`LLM.achat` (with a raw ``response_format`` where needed)."""
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

    decided: dict[str, bool] = {}  # feature -> value, for the features the answers settle
    msgs = [{"role": "user", "content": "Say hello in one word."}]
    for strict in (True, False):
        fmt = so.response_format(_ProbeAnswer, "json_schema", strict=strict)
        comp, refused = await _try(llm.achat(msgs, model=model, max_tokens=20, response_format=fmt, tag="probe",
                                             cache=False), "json_schema")
        if comp is not None and so.validate(comp.text, _ProbeAnswer)[0] is not None:
            decided["json_schema"] = True
            decided["strict_json_schema"] = strict
            break
        if not refused:  # an answer that says nothing: undecided, no second try
            break
        if not strict:
            decided["json_schema"] = decided["strict_json_schema"] = False

    msgs = [{"role": "user", "content": 'Reply with the JSON object {"hello": "world"}.'}]
    comp, refused = await _try(llm.achat(msgs, model=model, max_tokens=20, response_format={"type": "json_object"},
                                         tag="probe", cache=False), "json_object")
    if comp is not None and _is_object(comp.text):
        decided["json_object"] = True
    elif refused:
        decided["json_object"] = False

    comp, refused = await _try(llm.achat([{"role": "user", "content": "Say hi."}], model=model, max_tokens=5,
                                         logprobs=True, top_logprobs=2, tag="probe", cache=False), "logprobs")
    lps = comp.logprobs if comp is not None and comp.logprobs else []
    if lps:
        decided["logprobs"] = True
        decided["top_logprobs"] = any(t.top for t in lps)  # a well-formed answer with or without alternatives
    elif refused:
        decided["logprobs"] = decided["top_logprobs"] = False

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
