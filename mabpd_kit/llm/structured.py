"""Structured output: a validated pydantic object from the model, and the fallback chain that gets it.

Modes, best first: ``json_schema`` (strict where the endpoint takes it), ``json_object`` (the schema in the
prompt), ``text`` (JSON extracted from the reply). Each reply is validated; an invalid one gets one repair turn.
A mode the server refused or the probe found missing is skipped from then on."""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from . import registry
from .errors import EndpointError, Failure, LLMError, StructuredOutputError
from .results import Completion, Structured
from .servers import GENERIC, ServerKind
from .servers.base import transform

if TYPE_CHECKING:
    from .client import LLM

__all__ = ["MODES", "UNSUPPORTED_STRICT", "ask", "close_truncated", "extract_json", "repair_message", "required_schema",
           "response_format", "schema_instruction", "strict_schema", "validate", "with_instruction"]

S = TypeVar("S", bound=BaseModel)
MODES: tuple[str, ...] = ("json_schema", "json_object", "text")

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)(?:```|$)", re.DOTALL)


def required_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model with every property required at every level (sent when not strict)."""

    def fix(out: dict[str, Any]) -> dict[str, Any]:
        if "properties" in out:
            out["required"] = list(out["properties"])
        return out

    return transform(schema.model_json_schema(), fix)


#: keywords OpenAI's strict mode rejects (and constrained decoders often ignore): dropped from strict schemas
UNSUPPORTED_STRICT = frozenset({
    "default", "title", "examples", "minLength", "maxLength", "patternProperties", "unevaluatedProperties",
    "propertyNames", "minProperties", "maxProperties", "unevaluatedItems", "contains", "minContains",
    "maxContains", "uniqueItems", "const", "discriminator",
})


def strict_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """A JSON schema in OpenAI's ``strict: true`` subset: every object requires all its properties, no additional
    ones; unsupported keywords dropped; properties in declaration order (reasoning first)."""

    def fix(node: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in node.items() if k in ("properties", "$defs") or k not in UNSUPPORTED_STRICT}
        if out.get("type") == "object" or "properties" in out:
            out["required"] = list(out.get("properties", {}))
            out["additionalProperties"] = False
        return out

    return transform(schema.model_json_schema(), fix)


def response_format(schema: type[BaseModel], mode: str, *, strict: bool = False,
                    profile: ServerKind | None = None) -> dict[str, Any] | None:
    """The ``response_format`` for a mode (``None`` for ``text``) in the form the server's kind takes."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64]
    body = strict_schema(schema) if strict else required_schema(schema)
    return (profile or GENERIC).response_format(body, mode, name=name, strict=strict)


def schema_instruction(schema: type[BaseModel]) -> str:
    """The system-prompt addition that states the schema (json_object and text modes)."""
    return (
        "Reply with a single JSON object, no prose and no code fences, that validates against this JSON schema:\n"
        + json.dumps(required_schema(schema), separators=(",", ":"))
    )


def with_instruction(messages: list[dict[str, Any]], schema: type[BaseModel]) -> list[dict[str, Any]]:
    """The messages with the schema stated at the end of the last user message (the prompt's start stays shared)."""
    out = [dict(m) for m in messages]
    for m in reversed(out):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            m["content"] = f"{m['content']}\n\n{schema_instruction(schema)}"
            return out
    return [*out, {"role": "user", "content": schema_instruction(schema)}]


def close_truncated(text: str) -> str:
    """Best-effort completion of JSON cut off mid-way: a dangling key or comma dropped, strings and brackets closed."""
    stack: list[str] = []
    in_str = escape = False
    for ch in text:
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    out = text
    if in_str:
        if escape:
            out = out[:-1]  # a lone backslash would escape our closing quote
        m = re.search(r"(\\+)u[0-9a-fA-F]{0,3}$", out)
        if m and len(m.group(1)) % 2 == 1:
            out = out[: m.start() + len(m.group(1)) - 1]  # half a \uXXXX escape
        out += '"'
    key_tail = re.compile(r',?\s*"(?:[^"\\]|\\.)*"\s*:?$')
    while True:  # peel off what cannot stand at the end, one piece at a time
        out = out.rstrip()
        if out.endswith(","):
            out = out[:-1]
        elif stack and stack[-1] == "}" and re.search(r'[{,]\s*"(?:[^"\\]|\\.)*"\s*:?$', out):
            out = key_tail.sub("", out)  # a key that lost its value (or its colon)
        elif re.search(r"[:\[,]\s*(t|tr|tru|f|fa|fal|fals|n|nu|nul|-)$", out):
            out = re.sub(r"(t|tr|tru|f|fa|fal|fals|n|nu|nul|-)$", "", out)  # half a literal or a lone minus
        elif re.search(r"[0-9](\.|[eE][+-]?)$", out):
            out = re.sub(r"(\.|[eE][+-]?)$", "", out)  # half a number: 1.  2e  3e+
        elif out.endswith(":"):
            out = key_tail.sub("", out)
        else:
            break
    return out + "".join(reversed(stack))


def extract_json(text: str) -> Any:
    """The first JSON value in ``text`` (in a fence, amid prose, or cut off); ``ValueError`` when there is none.
    Control characters inside strings are accepted: small models wrap long strings with raw newlines."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder(strict=False)
    for cand in candidates:
        starts = [i for i in (cand.find("{"), cand.find("[")) if i >= 0]
        if not starts:
            continue
        start = min(starts)
        try:
            value, _ = decoder.raw_decode(cand, start)
            return value
        except ValueError:
            pass
        try:
            return json.loads(close_truncated(cand[start:].strip().removesuffix("```")), strict=False)
        except ValueError:
            continue
    raise ValueError("no JSON object found in the reply")


def validate(text: str, schema: type[BaseModel]) -> tuple[BaseModel | None, str]:
    """``(instance, "")`` on success, ``(None, error message)`` otherwise."""
    try:
        data = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    try:
        return schema.model_validate(data), ""
    except ValidationError as exc:
        return None, _short_errors(exc)


def _short_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:8]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def repair_message(error: str, schema: type[BaseModel]) -> str:
    """The repair turn: the validation problem and the schema again."""
    return f"Your previous reply could not be used: {error}.\n" + schema_instruction(schema)


def _modes(llm: LLM, model: str) -> list[str]:
    ek = registry.endpoint_key(llm.endpoint, model)
    caps, refused, unsure = registry.capabilities(ek), registry.refused_modes(ek), registry.undecided(ek)
    return [m for m in MODES if m not in refused
            and (caps is None or m == "text" or getattr(caps, m) or m in unsure)]


def _takes_strict(prof: ServerKind) -> bool:
    """Does the server's kind send ``strict`` at all?"""
    fmt = prof.response_format({"type": "object"}, "json_schema", name="strict", strict=True) or {}
    return fmt.get("type") == "json_schema" and (fmt.get("json_schema") or {}).get("strict") is True


def _recorded(llm: LLM, builds: dict[bool, Any], msgs: list[dict[str, Any]], sample_index: int) -> bool | None:
    """The ``strict`` setting whose request the cache answers (strict first), or None: replays as recorded."""
    if llm.cache is None or llm.cache_mode not in ("auto", "replay"):
        return None
    for strict in (True, False):
        try:
            if llm.cache.get(llm.answers.key(builds[strict](msgs), sample_index)) is not None:
                return strict
        except LLMError:  # a course pack's recorded failure of this request: it was sent so
            return strict
    return None


async def _strict(llm: LLM, ek: str, prof: ServerKind, builds: dict[bool, Any], msgs: list[dict[str, Any]],
                  sample_index: int) -> tuple[bool, bool]:
    """``(send strict, this call is the trial)`` for a json_schema request: one trial at a time per endpoint."""
    if not (llm.config.strict_schemas and _takes_strict(prof)):
        return False, False
    if (recorded := _recorded(llm, builds, msgs, sample_index)) is not None:
        return recorded, False
    while (known := registry.strict(ek)) is None:
        if (running := registry.strict_trial(ek)) is None:
            return True, True
        await running.wait()
    return known, False


async def ask(llm: LLM, messages: list[dict[str, Any]], schema: type[S], *, model: str, temperature: float,
              max_tokens: int | None, sample_index: int, tag: str) -> Structured[S]:
    """A validated ``schema`` instance: each mode in turn (the next one when the server refuses the mode), one repair
    turn within a mode; a refusal of ``strict`` is settled and answered in the same call without it."""
    calls: list[Completion] = []
    refused: list[str] = []  # modes refused during this call, remembered once a later mode is answered
    prof, ek = await llm._server(), registry.endpoint_key(llm.endpoint, model)
    fields = {"model": model, "temperature": temperature, "max_tokens": max_tokens, "seed": None,
              "sample_index": sample_index, "logprobs": False, "top_logprobs": None}
    for mode in _modes(llm, model):
        msgs = messages if mode == "json_schema" else with_instruction(messages, schema)
        builds = {s: functools.partial(llm._request, **fields, response_format=response_format(
            schema, mode, strict=s, profile=prof)) for s in ((True, False) if mode == "json_schema" else (False,))}
        strict, trial = await _strict(llm, ek, prof, builds, msgs, sample_index) if mode == "json_schema" \
            else (False, False)
        for sent in (True, False) if strict else (False,):
            first = builds[sent](msgs)
            try:
                return await _one_mode(llm, builds[sent], msgs, first, schema, mode, sample_index, tag, calls,
                                       refused, prof)
            except EndpointError as exc:
                if sent and registry.refuses(exc, "json_schema"):
                    registry.settle_strict(ek, False)  # and the same mode without strict, in this call
                    continue
                if first.get("response_format") is not None and exc.kind is Failure.REFUSED_FIELD:
                    refused.append(mode)
                    break
                raise llm.answers.note(first, sample_index, tag, exc) from None
            finally:
                if trial:  # settled or not, the calls waiting for this trial go on
                    registry.end_strict_trial(ek)
                    trial = False
    raise StructuredOutputError(f"{llm.endpoint} (model {model!r}): no structured-output mode left to try")


def _sent_strict(request: dict[str, Any]) -> bool:
    return ((request.get("response_format") or {}).get("json_schema") or {}).get("strict") is True


async def _one_mode(llm: LLM, build: Any, msgs: list[dict[str, Any]], first: dict[str, Any], schema: type[S], mode: str,
                    sample_index: int, tag: str, calls: list[Completion], refused: list[str],
                    prof: ServerKind) -> Structured[S]:
    """One mode: the first request and its repair turn; only a valid answer is stored (under the first request)."""
    model, req = str(first["model"]), first
    ek = registry.endpoint_key(llm.endpoint, model)
    chain: list[tuple[dict[str, Any], Completion]] = []
    repaired, error = False, ""
    async with llm.claim(first, sample_index, prof):
        for attempt in range(1 + llm.config.repair_retries):
            comp = await llm._call(req, sample_index, tag, store=False, claim=False)
            chain.append((req, comp))
            if attempt == 0 and _sent_strict(req) and registry.strict(ek) is None:
                registry.settle_strict(ek, True)  # the server took strict: every later call sends it
            if refused:  # a later mode was answered: the refusal was about the response_format
                registry.refuse_modes(ek, refused)
                refused.clear()
            calls.append(comp)
            value, error = validate(comp.text, schema)
            if value is not None:
                llm.answers.store_answer(first, sample_index, comp)
                if mode != "text":  # the probe may have left it open: this answer settles it
                    registry.settle(ek, mode, True)
                return Structured[schema](value=value, completion=comp, mode=mode, repaired=repaired,  # type: ignore[valid-type]
                                          calls=calls)
            if attempt < llm.config.repair_retries:
                msgs = [*msgs, {"role": "assistant", "content": comp.text},
                        {"role": "user", "content": repair_message(error, schema)}]
                req, repaired = build(msgs), True
        for r, c in chain:  # never replay a failure (entries recorded by older versions too)
            if c.cached:
                llm.answers.forget(r, sample_index)
        raise llm.answers.note(first, sample_index, tag, StructuredOutputError(
            f"{llm.endpoint} (model {model!r}, {mode} mode) gave no valid {schema.__name__} after {len(calls)} call(s) "
            f"including the repair retry: {error}. Reply began: {comp.text[:160]!r}", raw=comp.text, errors=error))
