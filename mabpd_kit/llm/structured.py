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

__all__ = ["MODES", "close_truncated", "extract_json", "repair_message", "response_format", "schema_instruction", "validate"]

MODES: tuple[str, ...] = ("json_schema", "json_object", "text")

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)(?:```|$)", re.DOTALL)


def _schema(schema: type[BaseModel]) -> dict[str, Any]:
    return schema.model_json_schema()


def response_format(schema: type[BaseModel], mode: str) -> dict[str, Any] | None:
    """The ``response_format`` request field for a mode (``None`` for ``text``)."""
    if mode == "json_schema":
        name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": _schema(schema), "strict": False}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def schema_instruction(schema: type[BaseModel]) -> str:
    """The system-prompt addition that states the schema (json_object and text modes)."""
    return (
        "Reply with a single JSON object, no prose and no code fences, that validates against this JSON schema:\n"
        + json.dumps(_schema(schema), separators=(",", ":"))
    )


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
    off (closed by :func:`close_truncated`). Raises ``ValueError`` when there is none."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
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
            return json.loads(close_truncated(cand[start:].strip().removesuffix("```")))
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
