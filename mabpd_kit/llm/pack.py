"""Course packs: an instructor's recorded LLM answers in one key-free JSON file, replayed offline by students
(``mabpd pack record -o FILE -- CMD``; ``MABPD_PACK=FILE``). A request not recorded raises
:class:`~mabpd_kit.llm.ReplayMissError`; a call that failed while recording replays as that failure."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from .errors import EndpointError, LLMError, SetupError, StructuredOutputError

__all__ = ["FORMAT", "KEY_VARS",  # noqa: F822 (module __getattr__: read from the server kinds)
           "PackCache", "load_pack", "pack_llm", "read_cache_dir", "write_pack"]

FORMAT = "mabpd-pack"
VERSION = 1
#: the error classes a recorded failure replays as (any other recorded class replays as LLMError)
_REPLAYED = {"StructuredOutputError": StructuredOutputError, "EndpointError": EndpointError}


class PackCache:
    """The record/replay cache interface over a loaded pack, read-only and in memory."""

    def __init__(self, data: dict[str, Any], path: str | Path = "") -> None:
        self.data = data
        self.path = Path(path)
        self.directory = self.path.parent
        self._responses: dict[str, dict[str, Any]] = {k: e["value"] for k, e in data.get("entries", {}).items()}
        self._failures: dict[str, dict[str, Any]] = dict(data.get("failures", {}))
        self._capabilities: dict[str, dict[str, Any]] = dict(data.get("capabilities", {}))

    def get(self, key: str) -> dict[str, Any] | None:
        """The recorded answer of ``key``; raises the recorded failure of a call that failed while recording."""
        hit = self._responses.get(key)
        if hit is None and key in self._failures:
            f = self._failures[key]
            raise _REPLAYED.get(str(f.get("error")), LLMError)(f"failed while recording: {f.get('message', '')}")
        return hit

    def get_capabilities(self, key: str, *, max_age_s: float | None = None) -> dict[str, Any] | None:
        return self._capabilities.get(key)  # recorded once: never too old

    def stats(self) -> dict[str, Any]:
        return {"path": str(self.path), "entries": len(self._responses), "bytes": self.path.stat().st_size
                if self.path.is_file() else 0}

    def _read_only(self, *args: Any, **kwargs: Any) -> None:
        return None

    put = delete = put_capabilities = delete_capabilities = close = _read_only


def read_cache_dir(directory: str | Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(entries, capabilities, failures)`` of a cache folder: failures are the calls that failed while recording
    and were never answered later."""
    from .cache import DB_NAME

    db = Path(directory) / DB_NAME
    if not db.exists():
        return {}, {}, {}
    conn = sqlite3.connect(db)
    try:
        entries = {k: {"value": json.loads(v), "model": m or "", "preview": p or ""}
                   for k, v, m, p in conn.execute("SELECT key, value, model, preview FROM responses ORDER BY created")}
        caps = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM capabilities")}
        failed: dict[str, Any] = {}
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'failures'").fetchone():
            failed = {k: {"tag": t or "", "error": e, "message": m}
                      for k, t, e, m in conn.execute("SELECT key, tag, error, message FROM failures ORDER BY created")
                      if k not in entries}
    finally:
        conn.close()
    return entries, caps, failed


def _usage(entries: dict[str, Any], prices: dict[str, Any]) -> dict[str, Any]:
    from .usage import estimate_cost

    calls = prompt = completion = cached = 0
    cost = 0.0
    for e in entries.values():
        v = e["value"]
        calls += 1
        prompt += int(v.get("prompt_tokens") or 0)
        completion += int(v.get("completion_tokens") or 0)
        cached += int(v.get("cached_tokens") or 0)
        cost += estimate_cost(str(v.get("model") or ""), int(v.get("prompt_tokens") or 0),
                              int(v.get("completion_tokens") or 0), prices, cached_tokens=int(v.get("cached_tokens") or 0))
    return {"calls": calls, "prompt_tokens": prompt, "completion_tokens": completion, "cached_tokens": cached,
            "estimated_cost_usd": round(cost, 6)}


def write_pack(path: str | Path, *, cache_dir: str | Path, endpoint: str, model: str, config: Any = None,
               command: list[str] | None = None, secrets: tuple[str, ...] = (), server: str | None = None) -> dict[str, Any]:
    """Write the pack of everything recorded in ``cache_dir``; returns its summary. ``server``: the server kind
    (default: the one found for ``endpoint``). A :class:`SetupError` (nothing written) when a key appears in it."""
    from mabpd_kit.config import Config

    from . import registry
    from .servers import detect, key_vars, probe_server

    if server is None:
        known = registry.profile(endpoint.rstrip("/"))
        server = known.name if known is not None else detect(endpoint, probe_server(endpoint)).name

    from .errors import redact

    entries, caps, failures = read_cache_dir(cache_dir)
    cfg = config if config is not None else Config()
    prices = dict(cfg.llm.prices_per_mtok)
    data = {
        "format": FORMAT, "version": VERSION, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "endpoint": endpoint.rstrip("/"), "model": model, "server": server,
        "models": sorted({e["model"] for e in entries.values() if e["model"]}),
        "command": [redact(c) for c in (command or [])],
        "config": json.loads(cfg.model_dump_json()),
        "usage": _usage(entries, prices), "failed_calls": len(failures),
        "capabilities": caps, "entries": entries, "failures": failures,
    }
    text = json.dumps(data, ensure_ascii=False, indent=None, separators=(",", ":"))
    keys = [s for s in (*secrets, *(os.environ.get(v, "") for v in key_vars())) if s and len(s) >= 4]
    if any(k in text for k in keys):
        raise SetupError("refusing to write the pack: an API key appears in the recorded data")
    from mabpd_kit.files import write_text  # all or nothing: a full disk leaves no half-written pack

    write_text(path, text)
    return {k: v for k, v in data.items() if k not in ("entries", "capabilities", "config", "failures")}


def load_pack(path: str | Path) -> dict[str, Any]:
    """A pack file, checked for its format."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise SetupError(f"MABPD_PACK: no pack file at {p}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SetupError(f"{p} is not a course pack (not JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SetupError(f"{p} is not a course pack (format {FORMAT!r} expected)")
    return data


def pack_llm(path: str | Path, *, config: Any = None, model: str | None = None) -> Any:
    """An LLM that answers only from the pack (replay mode, no key, no network)."""
    from . import registry
    from .client import LLM, as_llm_config
    from .results import Capabilities

    data = load_pack(path)
    llm = LLM(endpoint=data["endpoint"], model=model or data["model"], config=as_llm_config(config),
              cache_mode="replay", cache_dir=None, preset=None)
    llm.answers.store = PackCache(data, Path(path).expanduser())
    llm.pack = str(path)
    for ek, caps in data.get("capabilities", {}).items():
        registry.remember_capabilities(ek, Capabilities.model_validate(caps))
    from .servers import GENERIC, find

    registry.remember_profile(llm.endpoint, find(str(data.get("server"))) or GENERIC, None)
    return llm


def __getattr__(name: str) -> Any:
    if name == "KEY_VARS":  # every variable that may hold a key, read from the server kinds when asked
        from .servers import key_vars

        return key_vars()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
