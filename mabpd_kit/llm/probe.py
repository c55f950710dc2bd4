"""Capability probe: what does this endpoint+model *really* support?

Servers differ, and many silently ignore request fields they do not know: ask for
``logprobs`` and you simply get none back. Rather than trusting documentation, the probe sends
four tiny requests and looks at the answers:

- ``json_schema``: a schema requiring a key the prompt never mentions (``probe_token``). Only
  a server that really constrains output to the schema produces it.
- ``json_object``: does the server accept ``{"type": "json_object"}`` and answer with a JSON object?
- ``logprobs`` / ``top_logprobs``: are per-token log-probabilities (and alternatives) returned?

The result is kept in memory and in the cache database (table ``capabilities``), keyed by
endpoint+model, so a class of 30 students probes each endpoint once. Structured calls read it
to skip modes the server lacks.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import BaseModel

from . import registry
from . import structured as so
from .errors import EndpointError
from .results import Capabilities

if TYPE_CHECKING:
    from .client import LLM

__all__ = ["probe"]


class _ProbeAnswer(BaseModel):
    probe_token: int


async def _try(coro) -> object | None:  # type: ignore[no-untyped-def]
    """The Completion, or None when the server *refused* the feature (an HTTP 4xx such as
    400 "unsupported response_format"). A dead or failing endpoint is not an answer about
    features: that EndpointError propagates."""
    try:
        return await coro
    except EndpointError as exc:
        if exc.status in registry.MODE_REFUSED:
            return None
        raise


async def probe(llm: LLM, model: str, *, refresh: bool = False) -> Capabilities:
    """Probe (or recall) the capabilities of ``model`` at ``llm.endpoint``; runs on the I/O loop.

    Uses only the public :meth:`LLM.achat` (with a raw ``response_format`` where needed)."""
    ek = registry.endpoint_key(llm.endpoint, model)
    if not refresh:
        known = registry.capabilities(ek)
        if known is not None:
            return known
        if llm.cache is not None:
            stored = llm.cache.get_capabilities(ek)
            if stored is not None:
                caps = Capabilities.model_validate(stored)
                registry.remember_capabilities(ek, caps)
                return caps

    msgs = [{"role": "user", "content": "Say hello in one word."}]
    fmt = so.response_format(_ProbeAnswer, "json_schema")
    comp = await _try(llm.achat(msgs, model=model, max_tokens=20, response_format=fmt, tag="probe"))
    json_schema = comp is not None and so.validate(comp.text, _ProbeAnswer)[0] is not None  # type: ignore[attr-defined]

    msgs = [{"role": "user", "content": 'Reply with the JSON object {"hello": "world"}.'}]
    comp = await _try(llm.achat(msgs, model=model, max_tokens=20, response_format={"type": "json_object"}, tag="probe"))
    json_object = False
    if comp is not None:
        try:
            json_object = isinstance(json.loads(comp.text), dict)  # type: ignore[attr-defined]
        except ValueError:
            json_object = False

    comp = await _try(llm.achat([{"role": "user", "content": "Say hi."}], model=model, max_tokens=5, logprobs=True,
                                top_logprobs=2, tag="probe"))
    lps = getattr(comp, "logprobs", None) or []
    caps = Capabilities(
        json_schema=json_schema,
        json_object=json_object,
        logprobs=bool(lps),
        top_logprobs=any(t.top for t in lps),
    )
    registry.remember_capabilities(ek, caps)
    if llm.cache is not None:
        llm.cache.put_capabilities(ek, caps.model_dump())
    return caps
