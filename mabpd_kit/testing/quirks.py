"""Real servers' quirks, emulated by :class:`~mabpd_kit.testing.FakeLLMServer` (``emulate=NAME``) from the server
kind's emulation hooks (:mod:`mabpd_kit.llm.servers`): GET answers, refused ``response_format``, slots."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mabpd_kit.llm import servers

__all__ = ["Quirks", "schema_problems"]


class Quirks:
    """One emulated server: ``slots`` (computed at once; None: no limit), ``schemas`` and ``gets`` (what the client
    sent), ``computing``/``max_computing``, ``n_ctx`` (the whole context, shared by the slots: a longer prompt
    gets the kind's ``over_context`` answer)."""

    def __init__(self, name: str, *, slots: int | None = None) -> None:
        kind = servers.find(name)
        if kind is None or not kind.owned_by:
            names = [k.name for k in servers.KINDS.values() if k.owned_by]
            raise ValueError(f"emulate={name!r}: choose one of {', '.join(names)}")
        self.kind, self.name = kind, kind.name
        self.slots = slots if slots is not None else kind.emulated_slots
        if self.slots is not None and self.slots < 1:
            raise ValueError("slots must be at least 1")
        self.n_ctx = 8192
        self.schemas: list[dict[str, Any]] = []
        self.gets: list[str] = []
        self.computing = 0
        self.max_computing = 0
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(self.slots) if self.slots is not None else None

    def __repr__(self) -> str:
        return f"Quirks({self.name!r}, slots={self.slots})"

    def reset(self) -> None:
        with self._lock:
            self.schemas.clear()
            self.gets.clear()
            self.max_computing = self.computing

    def get(self, path: str, models: list[str]) -> tuple[int, dict[str, Any]]:
        """``(status, body)`` for a GET of ``path``."""
        path = path.split("?", 1)[0].rstrip("/")
        with self._lock:
            self.gets.append(path)
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [self.kind.model_entry(m) for m in models]}
        if path == self.kind.local_health and path != "/v1/models":  # llama-server's /health
            return 200, {"status": "ok"}
        props = self.kind.props(models, self.slots, self.n_ctx) if path.endswith("/props") else None
        return (200, props) if props is not None else self.kind.not_found(path)

    def refusal(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """``(status, error body)`` when the server refuses the request, else None; keeps its schema."""
        words = sum(len(str(m.get("content") or "").split()) for m in request.get("messages") or [])
        too_long = self.kind.over_context(words, self.n_ctx // (self.slots or 1))
        if too_long is not None:
            return too_long
        fmt = request.get("response_format") or {}
        if not fmt.get("type"):
            return None
        said = self.kind.refusal(fmt)
        if said is not None:
            return said
        schema = (fmt.get("json_schema") or {}).get("schema") if fmt["type"] == "json_schema" else fmt.get("schema")
        if isinstance(schema, dict):
            with self._lock:
                self.schemas.append(schema)
        return None

    @contextmanager
    def compute(self, stop: threading.Event) -> Iterator[bool]:
        """Hold a slot while a request is computed; yields False when the server stopped while it waited."""
        if self._slots is not None:
            while not self._slots.acquire(timeout=0.02):
                if stop.is_set():
                    yield False
                    return
        with self._lock:
            self.computing += 1
            self.max_computing = max(self.max_computing, self.computing)
        try:
            yield True
        finally:
            with self._lock:
                self.computing -= 1
            if self._slots is not None:
                self._slots.release()


def schema_problems(schema: dict[str, Any]) -> list[str]:
    """What a grammar-constrained decoder would let the model skip or could not follow: optional properties, a
    ``$ref`` or ``$defs`` left in (``[]`` when none)."""

    out: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, list):
            for i, n in enumerate(node):
                walk(n, f"{where}[{i}]")
            return
        if not isinstance(node, dict):
            return
        out.extend(f"{key} at {where}" for key in ("$ref", "$defs", "definitions") if key in node)
        props = node.get("properties")
        if isinstance(props, dict):
            required = set(node.get("required") or ())
            out.extend(f"optional property {p!r} at {where}" for p in props if p not in required)
            for p, sub in props.items():
                walk(sub, f"{where}.{p}" if where != "(root)" else p)
        for key, sub in node.items():
            if key != "properties":
                walk(sub, where)

    walk(schema, "(root)")
    return out
