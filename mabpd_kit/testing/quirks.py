"""Real servers' quirks, emulated by :class:`~mabpd_kit.testing.FakeLLMServer` (``emulate=NAME``).

Every server here "speaks the OpenAI API", and each differs from OpenAI in ways a client meets
only against the real thing. What :class:`Quirks` reproduces (seen with curl against the servers):

``"llama-cpp-python"`` (``python -m llama_cpp.server``, 0.3.x):
    ``GET /v1/models`` answers ``owned_by: "me"`` (and ``permissions: []``), ``GET /props`` is a 404;
    ``response_format: {"type": "json_schema", ...}`` is an HTTP **500** whose message is its request
    validation error (``Input should be 'text' or 'json_object'``); ``{"type": "json_object",
    "schema": S}`` is accepted (``S`` is kept in :attr:`Quirks.schemas`: its grammar bounds no number
    and skips what ``S`` leaves optional, so tests check what was sent); it computes **one** request
    at a time (the others queue, as on the real server).
``"llama-server"`` (llama.cpp's own server):
    ``owned_by: "llamacpp"``; ``GET /props`` answers ``total_slots`` (``slots=N``, 1 by default) and it
    computes that many requests at once; ``json_schema`` and ``json_object`` (with or without a
    ``schema``) go through its grammar; ``strict`` is ignored.
``"vllm"`` / ``"ollama"``:
    ``owned_by`` ``"vllm"`` / ``"library"``, no ``/props``; every ``response_format`` accepted, ``strict``
    ignored; vLLM batches (no limit), Ollama computes ``slots`` at once (4 by default, its
    ``OLLAMA_NUM_PARALLEL``).

Requests are counted as before (``srv.max_in_flight`` counts queued requests too: what the client
had open at once); :attr:`Quirks.max_computing` is the most the server computed at once.

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
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["EMULATIONS", "LLAMA_CPP_PYTHON_REFUSAL", "Quirks", "schema_problems"]

#: the server -> (``owned_by`` in ``/v1/models``, default slots computed at once; None: no limit)
EMULATIONS: dict[str, tuple[str, int | None]] = {
    "llama-cpp-python": ("me", 1),
    "llama-server": ("llamacpp", 1),
    "vllm": ("vllm", None),
    "ollama": ("library", 4),
}

#: the message of llama-cpp-python's HTTP 500 to a ``response_format`` type it does not know
LLAMA_CPP_PYTHON_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': '{kind}', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}"
)


class Quirks:
    """One emulated server's behaviour (``FakeLLMServer(emulate=name, slots=N)`` makes one).

    Attributes:
        name: the emulated server (a key of :data:`EMULATIONS`).
        slots: requests computed at once (None: no limit).
        schemas: every schema received in a ``response_format`` (``json_schema.schema`` or the
            ``json_object`` form's ``schema``), in arrival order.
        gets: the paths of every GET (``/v1/models``, ``/props``) the server answered or refused.
        computing / max_computing: requests being computed now, and the most at one moment.
    """

    def __init__(self, name: str, *, slots: int | None = None) -> None:
        if name not in EMULATIONS:
            raise ValueError(f"emulate={name!r}: choose one of {', '.join(EMULATIONS)}")
        self.name = name
        self.owned_by, default_slots = EMULATIONS[name]
        self.slots = slots if slots is not None else default_slots
        if self.slots is not None and self.slots < 1:
            raise ValueError("slots must be at least 1")
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

    # -- GET routes -------------------------------------------------------------------------
    def get(self, path: str, models: list[str]) -> tuple[int, dict[str, Any]]:
        """``(status, body)`` for a GET of ``path`` (``/v1/models``, ``/props``; anything else 404)."""
        path = path.split("?", 1)[0].rstrip("/")
        with self._lock:
            self.gets.append(path)
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [self._model(m) for m in models]}
        if path.endswith("/props") and self.name == "llama-server":
            return 200, {"total_slots": self.slots, "model_path": f"/models/{models[0]}.gguf",
                         "default_generation_settings": {"n_ctx": 8192}, "chat_template": ""}
        if self.name == "llama-cpp-python":  # FastAPI's 404
            return 404, {"detail": "Not Found"}
        return 404, {"error": {"message": f"File Not Found: {path}", "type": "not_found_error", "code": 404}}

    def _model(self, model: str) -> dict[str, Any]:
        if self.name == "llama-cpp-python":
            return {"id": model, "object": "model", "owned_by": "me", "permissions": []}
        if self.name == "llama-server":
            return {"id": model, "object": "model", "created": int(time.time()), "owned_by": "llamacpp",
                    "meta": {"n_ctx_train": 8192}}
        return {"id": model, "object": "model", "created": 0, "owned_by": self.owned_by}

    # -- chat completions ---------------------------------------------------------------------
    def refusal(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """``(status, error body)`` when this server refuses the request's ``response_format``, else
        None (the request is answered); keeps any schema it carries in :attr:`schemas`."""
        fmt = request.get("response_format") or {}
        kind = fmt.get("type")
        if not kind:
            return None
        if kind == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema")
        else:
            schema = fmt.get("schema")
        if self.name == "llama-cpp-python" and kind not in ("text", "json_object"):
            message = LLAMA_CPP_PYTHON_REFUSAL.replace("{kind}", str(kind))
            return 500, {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}
        if isinstance(schema, dict):
            with self._lock:
                self.schemas.append(schema)
        return None

    @contextmanager
    def compute(self, stop: threading.Event) -> Iterator[bool]:
        """Hold one of the server's slots while a request is computed (the others queue); yields
        False when the server stopped while the request waited (then it is not answered)."""
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
    """What in ``schema`` a grammar-constrained decoder would let the model skip or could not follow:
    an object property not listed as required, a ``$ref`` or ``$defs`` left in. ``[]`` when none.

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
        for key in ("$ref", "$defs", "definitions"):
            if key in node:
                out.append(f"{key} at {where}")
        props = node.get("properties")
        if isinstance(props, dict):
            required = set(node.get("required") or ())
            out.extend(f"optional property {p!r} at {where}" for p in props if p not in required)
            for p, sub in props.items():
                walk(sub, f"{where}.{p}" if where != "(root)" else p)
        for key, sub in node.items():
            if key not in ("properties",):
                walk(sub, where)

    walk(schema, "(root)")
    return out
