"""llama-cpp-python's server (``python -m llama_cpp.server``): one request at a time; a schema only as
``{"type": "json_object", "schema": S}`` (``json_schema`` is a 500 naming the field); its grammar follows no
``$ref`` and no numeric bound. ``/v1/models`` says ``owned_by: "me"``."""

from __future__ import annotations

import sys
from typing import Any

from .base import ServerKind, bound_replies, enumerate_unit_numbers, inline_refs

__all__ = ["KIND", "REFUSAL", "LlamaCppPython"]

#: the message of its HTTP 500 to a ``response_format`` type it does not know (``{kind}``: the type)
REFUSAL = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
           "'msg': \"Input should be 'text' or 'json_object'\", 'input': '{kind}', "
           "'ctx': {'expected': \"'text' or 'json_object'\"}}")


class LlamaCppPython(ServerKind):
    def response_format(self, schema: dict[str, Any], mode: str, *, name: str, strict: bool) -> dict[str, Any] | None:
        if mode == "json_schema":
            return {"type": "json_object", "schema": self.schema(schema)}
        return super().response_format(schema, mode, name=name, strict=strict)

    def schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return enumerate_unit_numbers(inline_refs(schema))

    def concurrency(self, info: dict[str, Any]) -> int | None:
        return 1

    def request_body(self, request: dict[str, Any], cfg: Any) -> dict[str, Any]:
        return {**bound_replies(request, cfg.grammar_max_items, cfg.grammar_max_chars), **self.extra_body()}

    def local_command(self, *, model_path: str, alias: str, port: int, n_ctx: int, threads: int,
                      parallel: int) -> tuple[list[str], dict[str, str]]:
        """``python -m llama_cpp.server`` in this interpreter (one slot)."""
        return [sys.executable, "-m", "llama_cpp.server", "--model", model_path, "--model_alias", alias,
                "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--logits_all", "true",
                "--n_threads", str(threads)], {}

    def choice_format(self, options: list[str]) -> dict[str, Any] | None:
        return {"type": "json_object", "schema": {"type": "string", "enum": list(options)}}

    def model_entry(self, model: str) -> dict[str, Any]:
        return {"id": model, "object": "model", "owned_by": "me", "permissions": []}

    def not_found(self, path: str) -> tuple[int, dict[str, Any]]:
        return 404, {"detail": "Not Found"}

    def refusal(self, fmt: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        kind = fmt.get("type")
        if kind in ("text", "json_object"):
            return None
        message = REFUSAL.replace("{kind}", str(kind))
        return 500, {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}


KIND = LlamaCppPython(name="llama-cpp-python", owned_by=("me",), local_compute=True, emulated_slots=1)
