"""One kind of OpenAI-compatible server: :class:`ServerKind`, a frozen object holding its preset, its profile hooks
(the ``response_format`` it takes, refusals, concurrency, time-outs, request fields), how it is recognised and
how :class:`~mabpd_kit.testing.FakeLLMServer` emulates it. A subclass overrides only the hooks that differ."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["GRAMMAR_MAX_ITEMS", "MODE_STATUSES", "UNIT_STEPS", "ServerKind", "bound_replies", "enumerate_unit_numbers",
           "inline_refs", "owned_by", "transform"]

_MODE_WORDS = ("response_format", "json_schema", "json_object", "'text'", "schema", "grammar", "structured output")
#: HTTP statuses with which servers refuse a request field (a ``response_format``, logprobs)
MODE_STATUSES = (400, 404, 415, 422, 501)


def owned_by(info: dict[str, Any]) -> str:
    """The ``owned_by`` of the first model ``GET /v1/models`` listed (lower case; "" when absent)."""
    models = info.get("models")
    data = models.get("data") if isinstance(models, dict) else None
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    return str(first.get("owned_by", "")).lower()


@dataclass(frozen=True)
class ServerKind:
    """A kind of server: ``name`` (``config.llm.server``'s value), ``aliases``, ``base_url`` (None: no preset),
    ``key_vars`` (the first tried first), ``default_model``, ``needs_key``, ``owned_by`` (``/v1/models`` owners that
    say it is this kind), ``hosts`` (never asked), ``local_compute`` (runs on this machine), ``emulated_slots``."""

    name: str
    aliases: tuple[str, ...] = ()
    base_url: str | None = None
    key_vars: tuple[str, ...] = ()
    default_model: str | None = None
    needs_key: bool = False
    owned_by: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    local_compute: bool = False
    emulated_slots: int | None = None

    @property
    def key_env(self) -> str | None:
        """The kind's own key variable (None: only ``MABPD_API_KEY``)."""
        return self.key_vars[0] if self.key_vars else None

    def response_format(self, schema: dict[str, Any], mode: str, *, name: str, strict: bool) -> dict[str, Any] | None:
        """The ``response_format`` field for ``mode`` (``None`` for plain text)."""
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "schema": self.schema(schema), "strict": strict}}
        if mode == "json_object":
            return {"type": "json_object"}
        return None

    def schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema body as this server's grammar compiles it."""
        return schema

    def refuses_mode(self, status: int | None, message: str) -> bool:
        """Does an HTTP error refuse the request's ``response_format``? A usual refusal status does; another status
        does when its message names the field or a mode."""
        if status in MODE_STATUSES:
            return True
        return status is not None and any(w in (message or "").lower() for w in _MODE_WORDS)

    def concurrency(self, info: dict[str, Any]) -> int | None:
        """Requests the server computes at once, from what it said about itself (None: unknown)."""
        return None

    def timeout(self, base_s: float, request: dict[str, Any], per_1k_chars_s: float) -> float:
        """Seconds one call may take; on a local server it grows with the prompt."""
        if not self.local_compute:
            return base_s
        chars = sum(len(str(m.get("content") or "")) for m in request.get("messages") or [])
        chars += len(json.dumps(request.get("response_format") or {}))
        return base_s + per_1k_chars_s * chars / 1000

    def retry_timeouts(self) -> bool:
        """Send a timed-out request again? Not to a local server: it is still computing the first copy."""
        return not self.local_compute

    def item_deadline(self, configured: float | None, auto_s: float) -> float | None:
        """One item's wall-clock budget: the setting, else ``auto_s`` remotely, none locally."""
        if configured is not None:
            return configured
        return None if self.local_compute else auto_s

    def extra_body(self) -> dict[str, Any]:
        """Request fields only this server reads."""
        return {}

    def request_body(self, request: dict[str, Any], cfg: Any) -> dict[str, Any]:
        """The body sent for ``request`` (the cache keys ``request`` itself); ``cfg``: the ``config.llm`` settings."""
        return {**request, **self.extra_body()}

    def local_command(self, *, model_path: str, alias: str, port: int, n_ctx: int, threads: int,
                      parallel: int) -> tuple[list[str], dict[str, str]]:
        """``(argv, extra environment)`` that start this server on ``127.0.0.1:port``; a one-line ``ValueError`` for a
        kind the kit cannot start."""
        raise ValueError(f"the kit cannot start a {self.name} server on this machine")

    def local_ready(self, path: str, status: int, body: Any) -> bool:
        """Does the answer to ``GET path`` say a started server is ready?"""
        return status == 200 and isinstance(body, dict) and isinstance(body.get("data"), list)

    @property
    def local_health(self) -> str:
        """The path a started server's readiness is asked on."""
        return "/v1/models"

    def choice_format(self, options: list[str]) -> dict[str, Any] | None:
        """A ``response_format`` that makes the reply one of ``options``; None where the server has no grammar for it."""
        return None

    def recognises(self, host: str, info: dict[str, Any]) -> bool:
        """Is a server at ``host`` that said ``info`` of this kind?"""
        return host in self.hosts or (bool(self.owned_by) and owned_by(info) in self.owned_by)

    def model_entry(self, model: str) -> dict[str, Any]:
        """One entry of its ``GET /v1/models`` list."""
        return {"id": model, "object": "model", "created": 0, "owned_by": self.owned_by[0]}

    def props(self, models: list[str], slots: int | None, n_ctx: int = 8192) -> dict[str, Any] | None:
        """Its ``GET /props`` answer (None: a 404); ``n_ctx``: the whole context of all slots."""
        return None

    def not_found(self, path: str) -> tuple[int, dict[str, Any]]:
        """Its answer to a GET it has no route for."""
        return 404, {"error": {"message": f"File Not Found: {path}", "type": "not_found_error", "code": 404}}

    def refusal(self, fmt: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """``(status, body)`` when it refuses a request's ``response_format``, else None."""
        return None

    def over_context(self, prompt_tokens: int, slot_ctx: int) -> tuple[int, dict[str, Any]] | None:
        """``(status, body)`` it answers to a prompt longer than a slot's context; None: not checked."""
        return None


#: items a grammar server may write in one list, in the request the cache keys (the body sent: bound_replies)
GRAMMAR_MAX_ITEMS = 3
#: the values a grammar offers for a number bounded to [0, 1] (it cannot enforce minimum/maximum)
UNIT_STEPS = tuple(round(i / 20, 2) for i in range(21))


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` replaced by its definition, and no ``$defs``."""
    defs = schema.get("$defs") or {}

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.rsplit("/", 1)[-1]
            if name in seen or name not in defs:  # a recursive or unknown reference: left as it is
                return node
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**walk(defs[name], (*seen, name)), **walk(rest, seen)}
        return {k: walk(v, seen) for k, v in node.items() if k != "$defs"}

    return walk(schema, ())


def transform(node: Any, fix: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """A JSON schema rebuilt bottom-up with ``fix`` applied to every schema object."""
    if isinstance(node, list):
        return [transform(n, fix) for n in node]
    if not isinstance(node, dict):
        return node
    return fix({k: {name: transform(sub, fix) for name, sub in v.items()} if k in ("properties", "$defs")
                else transform(v, fix) for k, v in node.items()})


def enumerate_unit_numbers(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` for a grammar that ignores bounds: [0, 1] numbers become an ``enum`` of :data:`UNIT_STEPS`, a list
    gets at most :data:`GRAMMAR_MAX_ITEMS` items."""

    def fix(out: dict[str, Any]) -> dict[str, Any]:
        if out.get("type") == "number" and out.get("minimum") == 0 and out.get("maximum") == 1:
            out = {k: v for k, v in out.items() if k not in ("minimum", "maximum", "type")}
            out["enum"] = list(UNIT_STEPS)
        if out.get("type") == "array" and "maxItems" not in out:
            out["maxItems"] = GRAMMAR_MAX_ITEMS
        return out

    return transform(schema, fix)


def bound_replies(request: dict[str, Any], max_items: int, max_chars: int) -> dict[str, Any]:
    """``request`` with its schema bounded for a grammar server: lists at most ``max_items``, free text at most
    ``max_chars`` (a small model repeats itself until ``max_tokens``); the reply is validated unbounded."""

    def fix(out: dict[str, Any]) -> dict[str, Any]:
        if out.get("type") == "array":
            out = {**out, "maxItems": min(out.get("maxItems", max_items), max_items)}
        if out.get("type") == "string" and not {"enum", "const", "pattern"} & out.keys():
            out = {**out, "maxLength": min(out.get("maxLength", max_chars), max_chars)}
        return out

    fmt = request.get("response_format")
    if not isinstance(fmt, dict):
        return request
    if isinstance(fmt.get("schema"), dict):
        fmt = {**fmt, "schema": transform(fmt["schema"], fix)}
    elif isinstance((fmt.get("json_schema") or {}).get("schema"), dict):
        fmt = {**fmt, "json_schema": {**fmt["json_schema"], "schema": transform(fmt["json_schema"]["schema"], fix)}}
    return {**request, "response_format": fmt}
