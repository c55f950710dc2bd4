"""llama.cpp's own ``llama-server``: its grammar follows ``$defs`` but no numeric bound; ``GET /props`` gives
``total_slots`` (how it is recognised, and its concurrency); a prompt cache per slot (``cache_prompt``); every
request is sent with ``max_tokens`` capped (``config.llm.max_tokens_cap``: without it a reply fills the slot's
context) and ``config.llm.repeat_penalty`` (its default 1.0 lets greedy SmolLM2 repeat a sentence until
``max_tokens``); a prompt over a slot's context is a 400 about the item, not a refusal of the mode. The kit starts
it from the binary ``make llama-server`` builds, with ``--parallel`` slots of ``n_ctx`` each."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from .base import ServerKind, bound_replies, enumerate_unit_numbers

__all__ = ["KIND", "LlamaServer", "binary"]

#: its 400 to a prompt longer than a slot's context (``error.type``)
OVER_CONTEXT = "exceed_context_size_error"


def _cache_root() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("mabpd-kit", appauthor=False))


def binary() -> Path | None:
    """The ``llama-server`` binary: ``MABPD_LLAMA_SERVER``, else the one ``make llama-server`` cached (for the installed
    bindings' version, else any), else one on ``PATH``; None when there is none."""
    env = os.environ.get("MABPD_LLAMA_SERVER", "").strip()
    if env:
        return Path(env).expanduser() if Path(env).expanduser().is_file() else None
    try:
        from importlib.metadata import version

        folders = [_cache_root() / f"llama-server-{version('llama-cpp-python')}"]
    except Exception:  # noqa: BLE001 - the bindings are not installed: any cached build
        folders = sorted(_cache_root().glob("llama-server-*"), reverse=True)
    found = next((f / "llama-server" for f in folders if (f / "llama-server").is_file()), None)
    on_path = shutil.which("llama-server")
    return found or (Path(on_path) if on_path else None)


class LlamaServer(ServerKind):
    def schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return enumerate_unit_numbers(schema)

    def refuses_mode(self, status: int | None, message: str) -> bool:
        if OVER_CONTEXT in (message or "") or "exceeds the available context size" in (message or ""):
            return False  # the prompt is too long for a slot: every mode would get the same answer
        return super().refuses_mode(status, message)  # it refuses with a 4xx or a message naming the field

    def concurrency(self, info: dict[str, Any]) -> int | None:
        slots = (info.get("props") or {}).get("total_slots")
        return int(slots) if isinstance(slots, int) and slots > 0 else None

    def extra_body(self) -> dict[str, Any]:
        return {"cache_prompt": True}

    def request_body(self, request: dict[str, Any], cfg: Any) -> dict[str, Any]:
        given, cap = request.get("max_tokens"), cfg.max_tokens_cap
        capped = min(given, cap) if isinstance(given, int) and given > 0 else cap
        body = bound_replies(request, cfg.grammar_max_items, cfg.grammar_max_chars)
        return {**body, **self.extra_body(), "max_tokens": capped, "repeat_penalty": cfg.repeat_penalty}

    def local_command(self, *, model_path: str, alias: str, port: int, n_ctx: int, threads: int,
                      parallel: int) -> tuple[list[str], dict[str, str]]:
        exe = binary()
        if exe is None:
            raise ValueError("llama-server is not built on this machine: make llama-server (in the repository), "
                             "or set MABPD_LLAMA_SERVER to a llama-server binary")
        libs = os.pathsep.join(x for x in (str(exe.parent), os.environ.get("LD_LIBRARY_PATH", "")) if x)
        return [str(exe), "--model", model_path, "--alias", alias, "--host", "127.0.0.1", "--port", str(port),
                "--parallel", str(parallel), "-c", str(n_ctx * parallel), "--threads", str(threads),
                "--no-webui"], {"LD_LIBRARY_PATH": libs}

    def local_ready(self, path: str, status: int, body: Any) -> bool:
        return status == 200 and isinstance(body, dict) and body.get("status") == "ok"

    @property
    def local_health(self) -> str:
        return "/health"

    def choice_format(self, options: list[str]) -> dict[str, Any] | None:
        return {"type": "json_schema", "json_schema": {"name": "choice", "schema": {"type": "string", "enum": list(options)}}}

    def recognises(self, host: str, info: dict[str, Any]) -> bool:
        props = info.get("props")
        return (isinstance(props, dict) and "total_slots" in props) or super().recognises(host, info)

    def model_entry(self, model: str) -> dict[str, Any]:
        return {"id": model, "object": "model", "created": int(time.time()), "owned_by": "llamacpp",
                "meta": {"n_ctx_train": 8192}}

    def props(self, models: list[str], slots: int | None, n_ctx: int = 8192) -> dict[str, Any] | None:
        per_slot = n_ctx // (slots or 1)  # -c is shared by the slots: each has c / parallel
        return {"total_slots": slots, "model_path": f"/models/{models[0]}.gguf", "build_info": "b1-0c1e570",
                "default_generation_settings": {"n_ctx": per_slot}, "chat_template": "", "endpoint_props": False}

    def over_context(self, prompt_tokens: int, slot_ctx: int) -> tuple[int, dict[str, Any]] | None:
        if prompt_tokens <= slot_ctx:
            return None
        message = (f"request ({prompt_tokens} tokens) exceeds the available context size ({slot_ctx} tokens), "
                   "try increasing it")
        return 400, {"error": {"code": 400, "message": message, "type": OVER_CONTEXT,
                               "n_prompt_tokens": prompt_tokens, "n_ctx": slot_ctx}}


KIND = LlamaServer(name="llama-server", aliases=("llamacpp",), base_url="http://localhost:8080/v1",
                   key_vars=("LLAMACPP_API_KEY",), default_model="default", owned_by=("llamacpp",),
                   local_compute=True, emulated_slots=1)
