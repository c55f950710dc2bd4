"""Turning model text into a validated pydantic object.

Three ways to ask for JSON, best first:

1. ``json_schema``: the server constrains generation to the schema (OpenAI, vLLM, llama.cpp,
   Ollama recent versions).
2. ``json_object``: the server guarantees *some* JSON object; the schema goes in the prompt.
3. ``text``: plain generation; we extract the JSON from the reply (```json fences, prose
   around it, even a reply cut off by ``max_tokens``).

Whatever the mode, the result is validated with pydantic. If validation fails, the model gets
one repair turn that shows it the validation error (models fix their own output well when
told exactly what is wrong).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from .profiles import Generic, ServerProfile

__all__ = ["MODES", "UNSUPPORTED_STRICT", "close_truncated", "strict_schema", "with_instruction", "extract_json", "repair_message", "required_schema", "response_format", "schema_instruction", "validate"]

MODES: tuple[str, ...] = ("json_schema", "json_object", "text")

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)(?:```|$)", re.DOTALL)


def _schema(schema: type[BaseModel]) -> dict[str, Any]:
    return required_schema(schema)


def required_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model with *every* property required, at every level, and its other
    keywords (bounds, descriptions, defaults) kept: what the kit sends when not strict. A field with a
    default (the reasoning, the spans, the counter-argument) is optional to pydantic, but a constrained
    decoder may then skip it, and reasoning-first would hold only when the model chose it."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: ({name: walk(sub) for name, sub in v.items()} if k in ("properties", "$defs") else walk(v))
               for k, v in node.items()}
        if "properties" in out:
            out["required"] = list(out["properties"])
        return out

    return walk(schema.model_json_schema())


#: keywords OpenAI's strict mode rejects (and constrained decoders often ignore): dropped from strict schemas
UNSUPPORTED_STRICT = frozenset({
    "default", "title", "examples", "minLength", "maxLength", "patternProperties", "unevaluatedProperties",
    "propertyNames", "minProperties", "maxProperties", "unevaluatedItems", "contains", "minContains",
    "maxContains", "uniqueItems", "const", "discriminator",
})


def strict_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """A strict-compatible JSON schema of a pydantic model (OpenAI's ``strict: true`` subset, which
    vLLM, SGLang and llama.cpp grammars accept too): every object lists all its properties as
    required and sets ``additionalProperties: false``; defaults and unsupported keywords are dropped
    (a field whose default is ``None`` is already nullable: ``anyOf [..., null]``). A reply valid
    under it validates against the model (every field present, in declaration order: reasoning
    first where the model declares it first)."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k in ("properties", "$defs"):  # maps of names (a property may be called "title")
                out[k] = {name: walk(sub) for name, sub in v.items()}
            elif k not in UNSUPPORTED_STRICT:
                out[k] = walk(v)
        if out.get("type") == "object" or "properties" in out:
            out["required"] = list(out.get("properties", {}))
            out["additionalProperties"] = False
        return out

    return walk(schema.model_json_schema())


def response_format(schema: type[BaseModel], mode: str, *, strict: bool = False,
                    profile: ServerProfile | None = None) -> dict[str, Any] | None:
    """The ``response_format`` request field for a mode (``None`` for ``text``) in the form the server's
    ``profile`` takes (:mod:`.profiles`; OpenAI's by default); ``strict`` sends the strict-compatible
    schema (:func:`strict_schema`) with ``"strict": true``, else :func:`required_schema`."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64]
    body = strict_schema(schema) if strict else _schema(schema)
    return (profile or Generic()).response_format(body, mode, name=name, strict=strict)


def schema_instruction(schema: type[BaseModel]) -> str:
    """The system-prompt addition that states the schema (json_object and text modes)."""
    return (
        "Reply with a single JSON object, no prose and no code fences, that validates against this JSON schema:\n"
        + json.dumps(_schema(schema), separators=(",", ":"))
    )


def with_instruction(messages: list[dict[str, Any]], schema: type[BaseModel]) -> list[dict[str, Any]]:
    """The messages with the schema stated at the *end* of the last user message (json_object and text
    modes). At the end, not in a leading system message: the shared start of the prompt stays the same
    for every schema, so a prefix cache still reuses it."""
    out = [dict(m) for m in messages]
    for m in reversed(out):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            m["content"] = f"{m['content']}\n\n{schema_instruction(schema)}"
            return out
    return [*out, {"role": "user", "content": schema_instruction(schema)}]


def close_truncated(text: str) -> str:
    """Best-effort completion of JSON cut off mid-way (e.g. by ``max_tokens``).

    Scans once, tracking strings and open brackets; drops a dangling key or trailing comma;
    then closes the open string and brackets. The result may still fail validation (a
    required field may be missing), which is then reported or repaired as usual.
    """
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
    """The first JSON value in ``text``: inside a ```json fence, surrounded by prose, or cut
    off (closed by :func:`close_truncated`). Raises ``ValueError`` when there is none.

    Control characters inside strings are accepted (``strict=False``): a real model
    (SmolLM2-135M-Instruct on llama-cpp-python's server, in ``json_schema`` mode) wraps long
    strings with a raw newline, which strict JSON forbids, and the value is plainly meant."""
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
    """The user turn of the repair retry: the exact validation problem, and the schema again
    (a server that silently ignored ``response_format`` never showed it to the model)."""
    return f"Your previous reply could not be used: {error}.\n" + schema_instruction(schema)
