"""Real servers' quirks, emulated by :class:`~mabpd_kit.testing.FakeLLMServer` (``emulate=NAME``).

What each server answers to ``GET /v1/models`` and ``/props``, which ``response_format`` it refuses and how many
requests it computes at once are its kind's emulation hooks (:mod:`mabpd_kit.llm.servers`); :class:`Quirks`
applies them and keeps what the client sent. Any kind whose ``/v1/models`` names an owner can be emulated.

>>> q = Quirks("llama-cpp-python")
>>> q.refusal({"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}})[0]
500
>>> q.refusal({"response_format": {"type": "json_object", "schema": {"type": "object"}}}) is None
True
>>> q.schemas
[{'type': 'object'}]
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mabpd_kit.llm import servers

__all__ = ["Quirks", "schema_problems"]


class Quirks:
    """One emulated server (``FakeLLMServer(emulate=name, slots=N)`` makes one).

    Attributes: ``kind`` (its :class:`~mabpd_kit.llm.servers.ServerKind`), ``slots`` (requests computed at
    once; None: no limit), ``schemas`` (every schema received in a ``response_format``), ``gets`` (the paths of
    every GET), ``computing`` / ``max_computing`` (requests being computed now, and the most at one moment).
    ``srv.max_in_flight`` counts queued requests too (what the client had open at once). ``n_ctx``: the server's
    whole context in tokens (shared by the slots; a prompt of more whitespace words than a slot's share gets the
    kind's :meth:`~mabpd_kit.llm.servers.ServerKind.over_context` answer); set it on ``srv.quirks``."""

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
        """Forget the schemas, GETs and the computing peak (``srv.reset_counts()`` calls it)."""
        with self._lock:
            self.schemas.clear()
            self.gets.clear()
            self.max_computing = self.computing

    def get(self, path: str, models: list[str]) -> tuple[int, dict[str, Any]]:
        """``(status, body)`` for a GET of ``path`` (``/v1/models``, ``/props``; anything else its 404)."""
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
        """``(status, error body)`` when the server refuses the request (a prompt over a slot's context, its
        ``response_format``), else None (it is answered); keeps any schema it carries in :attr:`schemas`."""
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
        """Hold one of the server's slots while a request is computed (the others queue); yields False when the
        server stopped while the request waited (then it is not answered)."""
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
    """What in ``schema`` a grammar-constrained decoder would let the model skip or could not follow: an object
    property not listed as required, a ``$ref`` or ``$defs`` left in. ``[]`` when none.

    >>> schema_problems({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]})
    ["optional property 'b' at (root)"]
    """
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
