"""llama.cpp's own ``llama-server``. Every hook is written out here, what it does for this server:

- ``json_schema`` (and ``json_object`` with or without a ``schema``) go through its grammar, which follows
  ``$defs`` but enforces no numeric bound: [0, 1] numbers are offered as steps, lists are capped;
- ``GET /props`` answers ``total_slots``: that many requests are computed at once (the client's limit), and
  it is how the server is recognised (``/v1/models`` says ``owned_by: "llamacpp"``);
- a prompt cache per slot, turned on per request (``cache_prompt``);
- local: time-outs grow with the prompt, a timed-out request is not sent again, no item deadline.
"""

from __future__ import annotations

import time
from typing import Any

from .base import ServerKind, enumerate_unit_numbers

__all__ = ["KIND", "LlamaServer"]


class LlamaServer(ServerKind):
    def response_format(self, schema: dict[str, Any], mode: str, *, name: str, strict: bool) -> dict[str, Any] | None:
        return super().response_format(schema, mode, name=name, strict=strict)  # OpenAI's form; strict ignored

    def schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return enumerate_unit_numbers(schema)

    def refuses_mode(self, status: int | None, message: str) -> bool:
        return super().refuses_mode(status, message)  # it refuses with a 4xx or a message naming the field

    def concurrency(self, info: dict[str, Any]) -> int | None:
        slots = (info.get("props") or {}).get("total_slots")
        return int(slots) if isinstance(slots, int) and slots > 0 else None

    def timeout(self, base_s: float, request: dict[str, Any], per_1k_chars_s: float) -> float:
        return super().timeout(base_s, request, per_1k_chars_s)  # local_compute: grows with the prompt

    def retry_timeouts(self) -> bool:
        return False  # still computing the first copy

    def item_deadline(self, configured: float | None, auto_s: float) -> float | None:
        return configured  # its per-call time-outs bound every call

    def extra_body(self) -> dict[str, Any]:
        return {"cache_prompt": True}

    def choice_format(self, options: list[str]) -> dict[str, Any] | None:
        return {"type": "json_schema", "json_schema": {"name": "choice", "schema": {"type": "string", "enum": list(options)}}}

    def recognises(self, host: str, info: dict[str, Any]) -> bool:
        props = info.get("props")
        return (isinstance(props, dict) and "total_slots" in props) or super().recognises(host, info)

    def model_entry(self, model: str) -> dict[str, Any]:
        return {"id": model, "object": "model", "created": int(time.time()), "owned_by": "llamacpp",
                "meta": {"n_ctx_train": 8192}}

    def props(self, models: list[str], slots: int | None) -> dict[str, Any] | None:
        return {"total_slots": slots, "model_path": f"/models/{models[0]}.gguf",
                "default_generation_settings": {"n_ctx": 8192}, "chat_template": ""}

    def refusal(self, fmt: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        return None  # every response_format goes through its grammar


KIND = LlamaServer(name="llama-server", aliases=("llamacpp",), base_url="http://localhost:8080/v1",
                   key_vars=("LLAMACPP_API_KEY",), default_model="default", owned_by=("llamacpp",),
                   local_compute=True, emulated_slots=1)
