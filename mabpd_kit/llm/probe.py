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
    from .client import _MODE_REFUSED

    try:
        return await coro
    except EndpointError as exc:
        if exc.status in _MODE_REFUSED:
            return None
        raise


async def probe(llm: LLM, model: str, *, refresh: bool = False) -> Capabilities:
    """Probe (or recall) the capabilities of ``model`` at ``llm.endpoint``; runs on the I/O loop."""
    from .client import _CAPABILITIES

    ek = f"{llm.endpoint}|{model}"
    if not refresh:
        if ek in _CAPABILITIES:
            return _CAPABILITIES[ek]
        if llm.cache is not None:
            stored = llm.cache.get_capabilities(ek)
            if stored is not None:
                caps = Capabilities.model_validate(stored)
                _CAPABILITIES[ek] = caps
                return caps

    msgs = [{"role": "user", "content": "Say hello in one word."}]
    fmt = so.response_format(_ProbeAnswer, "json_schema")
    req = llm._request(msgs, model=model, temperature=0.0, max_tokens=20, seed=None, sample_index=0,
                       logprobs=False, top_logprobs=None, response_format=fmt)
    comp = await _try(llm._call(req, 0, "probe"))
    json_schema = comp is not None and so.validate(comp.text, _ProbeAnswer)[0] is not None  # type: ignore[attr-defined]

    msgs = [{"role": "user", "content": 'Reply with the JSON object {"hello": "world"}.'}]
    req = llm._request(msgs, model=model, temperature=0.0, max_tokens=20, seed=None, sample_index=0,
                       logprobs=False, top_logprobs=None, response_format={"type": "json_object"})
    comp = await _try(llm._call(req, 0, "probe"))
    json_object = False
    if comp is not None:
        try:
            json_object = isinstance(json.loads(comp.text), dict)  # type: ignore[attr-defined]
        except ValueError:
            json_object = False

    req = llm._request([{"role": "user", "content": "Say hi."}], model=model, temperature=0.0, max_tokens=5,
                       seed=None, sample_index=0, logprobs=True, top_logprobs=2)
    comp = await _try(llm._call(req, 0, "probe"))
    lps = getattr(comp, "logprobs", None) or []
    caps = Capabilities(
        json_schema=json_schema,
        json_object=json_object,
        logprobs=bool(lps),
        top_logprobs=any(t.top for t in lps),
    )
    _CAPABILITIES[ek] = caps
    if llm.cache is not None:
        llm.cache.put_capabilities(ek, caps.model_dump())
    return caps
