"""Capability probe: what an endpoint and model really support (many servers silently ignore fields they do not
know). Three tiny uncached requests: ``json_schema`` (strict first), ``json_object``, ``logprobs``. A feature is
decided by a positive answer or a clear refusal, else left undecided for the first real call to settle; stored
on disk only when all are decided, for ``config.llm.probe_ttl_h``."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from . import registry
from . import structured as so
from .errors import EndpointError
from .results import Capabilities, Completion

if TYPE_CHECKING:
    from .client import LLM

__all__ = ["FEATURES", "probe"]

FEATURES = ("json_schema", "json_object", "logprobs", "top_logprobs", "strict_json_schema")


class _ProbeAnswer(BaseModel):
    probe_token: int


async def _try(llm: LLM, call: Awaitable[Completion], feature: str,
               failures: list[EndpointError]) -> tuple[Completion | None, bool]:
    """``(completion, False)``, or ``(None, True)`` when the server refused the feature's field; another failure is
    noted in ``failures`` (undecided); a 401/403 or a dead endpoint raises."""
    try:
        return await call, False
    except EndpointError as exc:
        if exc.batch_fatal:
            raise
        if registry.refuses(exc, feature):  # the one reading of a refusal (a call trying strict reads it too)
            return None, True
        if exc.unreachable:
            raise  # no server, or no answer in time: the endpoint, not a feature
        failures.append(exc)
        return None, False


def _is_object(text: str) -> bool:
    """A JSON object, or the start of one cut off by ``max_tokens``."""
    try:
        return isinstance(so.extract_json(text), dict) and text.lstrip().startswith("{")
    except ValueError:
        return False


async def _json_schema(llm: LLM, model: str, prof: Any, failures: list[EndpointError]) -> tuple[dict[str, bool], int]:
    """``json_schema`` and ``strict_json_schema`` decided (or not), and the requests sent."""
    msgs = [{"role": "user", "content": "Say hello in one word."}]
    for sent, strict in enumerate((True, False), 1):
        fmt = so.response_format(_ProbeAnswer, "json_schema", strict=strict, profile=prof)
        comp, refused = await _try(llm, llm.achat(msgs, model=model, max_tokens=20, response_format=fmt, tag="probe",
                                                  cache=False), "json_schema", failures)
        if comp is not None and so.validate(comp.text, _ProbeAnswer)[0] is not None:
            return {"json_schema": True, "strict_json_schema": strict}, sent
        if not refused:  # an answer that says nothing: undecided, no second try
            return {}, sent
    return {"json_schema": False, "strict_json_schema": False}, 2


async def _json_object(llm: LLM, model: str, failures: list[EndpointError]) -> dict[str, bool]:
    msgs = [{"role": "user", "content": 'Reply with the JSON object {"hello": "world"}.'}]
    comp, refused = await _try(llm, llm.achat(msgs, model=model, max_tokens=60, response_format={"type": "json_object"},
                                              tag="probe", cache=False), "json_object", failures)
    if comp is not None and _is_object(comp.text):
        return {"json_object": True}
    return {"json_object": False} if refused else {}


async def _logprobs(llm: LLM, model: str, failures: list[EndpointError]) -> dict[str, bool]:
    comp, refused = await _try(llm, llm.achat([{"role": "user", "content": "Say hi."}], model=model, max_tokens=5,
                                              logprobs=True, top_logprobs=2, tag="probe", cache=False),
                               "logprobs", failures)
    lps = comp.logprobs if comp is not None and comp.logprobs else []
    if lps:  # a well-formed answer, with or without alternatives
        return {"logprobs": True, "top_logprobs": any(t.top for t in lps)}
    if refused or (comp is not None and comp.usable):
        return {"logprobs": False, "top_logprobs": False}  # a clear answer, without them
    return {}


def _recall(llm: LLM, ek: str) -> Capabilities | None:
    """What this process, or the cache within ``config.llm.probe_ttl_h``, already knows."""
    known = registry.capabilities(ek)
    if known is None and llm.cache is not None:
        stored = llm.cache.get_capabilities(ek, max_age_s=llm.config.probe_ttl_h * 3600)
        if stored is not None:
            known = Capabilities.model_validate(stored)
            registry.remember_capabilities(ek, known)
    return known


async def probe(llm: LLM, model: str, *, refresh: bool = False) -> Capabilities:
    """Probe (or recall) the capabilities of ``model``; an :class:`EndpointError` only when no request got an answer."""
    ek = registry.endpoint_key(llm.endpoint, model)
    if not refresh and (known := _recall(llm, ek)) is not None:
        return known
    failures: list[EndpointError] = []
    decided, sent = await _json_schema(llm, model, await llm._server(), failures)
    decided.update(await _json_object(llm, model, failures))
    decided.update(await _logprobs(llm, model, failures))
    if len(failures) == sent + 2 and registry.capabilities(ek) is None:
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
