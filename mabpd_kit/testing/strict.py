"""A checker for OpenAI's strict structured-output subset of JSON Schema (``strict: true``), as OpenAI documents
it ("Supported schemas"): an object root; every object with ``additionalProperties: false`` and all its
properties required; the types and keywords of :data:`ALLOWED`; at most 5,000 properties, 1,000 enum values and
5 levels of nesting. The test server answers a strict schema outside it with OpenAI's 400."""

from __future__ import annotations

from typing import Any

__all__ = ["ALLOWED", "strict_problems"]

TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
ALLOWED = {
    "type", "description", "title", "enum", "anyOf", "$ref", "$defs", "definitions", "properties", "required",
    "additionalProperties", "items", "minItems", "maxItems", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
}


def _depth(node: Any, defs: dict[str, Any], seen: frozenset[str]) -> int:
    if not isinstance(node, dict):
        return 0
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        return 0 if name in seen else _depth(defs.get(name), defs, seen | {name})
    own = 1 if node.get("type") == "object" or "properties" in node else 0
    subs = [*node.get("properties", {}).values(), *node.get("anyOf", [])]
    if isinstance(node.get("items"), dict):
        subs.append(node["items"])
    return own + max((_depth(s, defs, seen) for s in subs), default=0)


def strict_problems(schema: dict[str, Any], *, max_depth: int = 5, max_properties: int = 5000,
                    max_enum_values: int = 1000) -> list[str]:
    """Every way ``schema`` falls outside the strict subset ([] when it is inside)."""
    problems: list[str] = []
    counts = {"properties": 0, "enum": 0}
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("$: the root must be an object, not anyOf")
    defs = {**schema.get("$defs", {}), **schema.get("definitions", {})}

    def walk(node: Any, path: str) -> None:
        if not isinstance(node, dict):
            problems.append(f"{path}: not a schema object")
            return
        for k in node:
            if k not in ALLOWED:
                problems.append(f"{path}: keyword {k!r} is not supported in strict mode")
        t = node.get("type")
        for one in t if isinstance(t, list) else [t] if t is not None else []:
            if one not in TYPES:
                problems.append(f"{path}: type {one!r} is not supported")
        if "enum" in node:
            counts["enum"] += len(node["enum"])
        if t == "object" or "properties" in node:
            props = node.get("properties", {})
            counts["properties"] += len(props)
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties must be false")
            missing = [p for p in props if p not in node.get("required", [])]
            if missing:
                problems.append(f"{path}: required must list every property (missing: {missing})")
            for name, sub in props.items():
                walk(sub, f"{path}.{name}")
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]")
        for i, sub in enumerate(node.get("anyOf", [])):
            walk(sub, f"{path}|{i}")
        for name, sub in {**node.get("$defs", {}), **node.get("definitions", {})}.items():
            walk(sub, f"$defs.{name}")
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] not in defs:
            problems.append(f"{path}: $ref {ref!r} points to no definition")

    walk(schema, "$")
    if counts["properties"] > max_properties:
        problems.append(f"$: {counts['properties']} properties (at most {max_properties})")
    if counts["enum"] > max_enum_values:
        problems.append(f"$: {counts['enum']} enum values (at most {max_enum_values})")
    depth = _depth(schema, defs, frozenset())
    if depth > max_depth:
        problems.append(f"$: {depth} levels of nesting exceeds the limit of {max_depth}")
    return problems
