"""Server profiles: the one home of every OpenAI-compatible server's quirks.

Servers that all speak "the OpenAI API" still differ in what they accept and how they compute.
Each :class:`ServerProfile` says it in a few hook methods (as inspect_ai's model providers do), and
the client calls the hooks instead of testing for servers itself:

- :meth:`~ServerProfile.response_format` - the request field for a structured-output mode:
  llama-cpp-python's server takes a schema only as ``{"type": "json_object", "schema": ...}`` and
  answers ``json_schema`` with HTTP 500 ("Input should be 'text' or 'json_object'");
- :meth:`~ServerProfile.schema` - the schema body its grammar compiles (``$defs`` inlined where the
  grammar does not follow references);
- :meth:`~ServerProfile.refuses_mode` - whether an HTTP error refuses the ``response_format`` (of any
  status, when its message names the field: that server's 500 is a refusal, not a dead endpoint);
- :meth:`~ServerProfile.concurrency` - how many requests the server computes at once (llama.cpp's
  ``llama-server`` says so in ``/props`` ``total_slots``; llama-cpp-python's server computes one);
- ``local_compute`` - the model runs on this machine: a time-out is not sent again while the server
  is still computing it, the time-out grows with the prompt (:meth:`~ServerProfile.timeout`) and the
  item deadline is off unless set (:meth:`~ServerProfile.item_deadline`);
- :meth:`~ServerProfile.extra_body` - request fields only that server knows (``cache_prompt``).

:func:`detect` picks the profile once per endpoint from what the server says about itself
(``GET /v1/models``' ``owned_by``, ``GET /props``), or from ``config.llm.server``; anything unknown
gets :class:`Generic`, the behaviour every test server sees.

>>> PROFILES["llama-cpp-python"].response_format({"type": "object"}, "json_schema", name="X", strict=False)
{'type': 'json_object', 'schema': {'type': 'object'}}
>>> Generic().refuses_mode(500, "Input should be 'text' or 'json_object'")
True
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlparse

__all__ = ["PROFILES", "UNIT_STEPS", "Generic", "ServerProfile", "detect", "enumerate_unit_numbers", "inline_refs", "probe_server"]

_MODE_WORDS = ("response_format", "json_schema", "json_object", "'text'", "schema", "grammar", "structured output")
_MODE_STATUSES = (400, 404, 415, 422, 501)


class ServerProfile:
    """The behaviour of one kind of server; subclasses override only what differs."""

    name = "openai-compatible"
    #: the model computes on this machine (one request at a time or a few): see :meth:`timeout`
    local_compute = False

    def response_format(self, schema: dict[str, Any], mode: str, *, name: str, strict: bool) -> dict[str, Any] | None:
        """The ``response_format`` field for ``mode`` (``None`` for plain text)."""
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "schema": self.schema(schema), "strict": strict}}
        if mode == "json_object":
            return {"type": "json_object"}
        return None

    def schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema body as this server's grammar compiles it (as is, by default)."""
        return schema

    def refuses_mode(self, status: int | None, message: str) -> bool:
        """Does an HTTP error with ``status`` and ``message`` refuse the request's ``response_format``?

        A 4xx of the usual refusal statuses always does; any other status (a 500 included) does when its
        message names the field or a mode: some servers validate the request only after accepting it."""
        if status in _MODE_STATUSES:
            return True
        said = (message or "").lower()
        return status is not None and any(w in said for w in _MODE_WORDS)

    def concurrency(self, info: dict[str, Any]) -> int | None:
        """Requests the server computes at once, from what :func:`probe_server` read (None: unknown)."""
        return None

    def timeout(self, base_s: float, request: dict[str, Any], per_1k_chars_s: float) -> float:
        """Seconds one call may take. A local server computes the whole prompt before the first token,
        so there it grows with the prompt's length."""
        if not self.local_compute:
            return base_s
        chars = sum(len(str(m.get("content") or "")) for m in request.get("messages") or [])
        chars += len(json.dumps(request.get("response_format") or {}))
        return base_s + per_1k_chars_s * chars / 1000

    def retry_timeouts(self) -> bool:
        """Send a timed-out request again? Not to a local server: it is still computing the first one,
        and a second copy would queue behind it (and time out in turn)."""
        return not self.local_compute

    def item_deadline(self, configured: float | None, auto_s: float) -> float | None:
        """One item's wall-clock budget: the user's setting, else ``auto_s`` (a remote server) or none (a
        local one: its per-call time-outs bound every call, and a slow laptop is not a hung server)."""
        if configured is not None:
            return configured
        return None if self.local_compute else auto_s

    def extra_body(self) -> dict[str, Any]:
        """Request fields only this server reads (none by default)."""
        return {}

    def choice_format(self, options: list[str]) -> dict[str, Any] | None:
        """A ``response_format`` that makes the reply one of ``options`` (a JSON string), for a question read
        through its logprobs; None where the server has no grammar for it (the prompt asks for the word).
        A grammar-constrained reply starts with an option token, and the server's logprobs at that
        position are the model's own distribution, so even a small model that would chatter gives one."""
        return None


class Generic(ServerProfile):
    """Any server that says nothing about itself (and the scripted test server)."""


class OpenAI(ServerProfile):
    name = "openai"


class VLLM(ServerProfile):
    name = "vllm"


class Ollama(ServerProfile):
    """Ollama's OpenAI-compatible endpoint: it computes ``OLLAMA_NUM_PARALLEL`` requests at once, which
    it does not report; local."""

    name = "ollama"
    local_compute = True


class LlamaServer(ServerProfile):
    """llama.cpp's own ``llama-server``: ``json_schema`` through its grammar, ``total_slots`` in ``/props``,
    and a prompt cache per slot (``cache_prompt``)."""

    name = "llama-server"
    local_compute = True

    def schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return enumerate_unit_numbers(schema)

    def concurrency(self, info: dict[str, Any]) -> int | None:
        slots = (info.get("props") or {}).get("total_slots")
        return int(slots) if isinstance(slots, int) and slots > 0 else None

    def extra_body(self) -> dict[str, Any]:
        return {"cache_prompt": True}

    def choice_format(self, options: list[str]) -> dict[str, Any] | None:
        return {"type": "json_schema", "json_schema": {"name": "choice", "schema": {"type": "string", "enum": list(options)}}}


class LlamaCppPython(ServerProfile):
    """llama-cpp-python's server (``python -m llama_cpp.server``, ``mabpd serve``): one request at a
    time; a schema only as ``{"type": "json_object", "schema": ...}``, compiled to a grammar that
    enforces neither numeric bounds nor optional fields (so the kit requires every field)."""

    name = "llama-cpp-python"
    local_compute = True

    def response_format(self, schema: dict[str, Any], mode: str, *, name: str, strict: bool) -> dict[str, Any] | None:
        if mode == "json_schema":
            return {"type": "json_object", "schema": self.schema(schema)}
        return super().response_format(schema, mode, name=name, strict=strict)

    def schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return enumerate_unit_numbers(inline_refs(schema))

    def concurrency(self, info: dict[str, Any]) -> int | None:
        return 1

    def choice_format(self, options: list[str]) -> dict[str, Any] | None:
        return {"type": "json_object", "schema": {"type": "string", "enum": list(options)}}


PROFILES: dict[str, ServerProfile] = {p.name: p for p in (Generic(), OpenAI(), VLLM(), Ollama(), LlamaServer(), LlamaCppPython())}
_OWNED_BY = {"me": "llama-cpp-python", "llamacpp": "llama-server", "vllm": "vllm", "library": "ollama",
             "ollama": "ollama", "openai": "openai", "system": "openai", "openai-internal": "openai"}


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` (``#/$defs/NAME``) replaced by its definition, and no ``$defs``."""
    defs = schema.get("$defs") or {}

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.rsplit("/", 1)[-1]
            if name in seen or name not in defs:  # a recursive or unknown reference: leave it
                return node
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**walk(defs[name], (*seen, name)), **walk(rest, seen)}
        return {k: walk(v, seen) for k, v in node.items() if k != "$defs"}

    return walk(schema, ())


#: items a grammar server may write in one list (spans, evidence, patterns): SmolLM2 went on listing until
#: max_tokens cut the reply before its verdict (seen on the Evidence agent)
GRAMMAR_MAX_ITEMS = 3
#: the values a grammar offers for a number bounded to [0, 1] (it cannot enforce minimum/maximum): 0, 0.05, ..., 1
UNIT_STEPS = tuple(round(i / 20, 2) for i in range(21))


def enumerate_unit_numbers(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every number bounded to [0, 1] offered as the values of :data:`UNIT_STEPS`. A grammar
    that ignores ``minimum``/``maximum`` let a small model write ``"confidence": 5``; an ``enum`` of literals
    it compiles (and cheaply, unlike ``maxLength``). The reply still validates against the real model."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items()}
        if out.get("type") == "number" and out.get("minimum") == 0 and out.get("maximum") == 1:
            out = {k: v for k, v in out.items() if k not in ("minimum", "maximum", "type")}
            out["enum"] = list(UNIT_STEPS)
        if out.get("type") == "array" and "maxItems" not in out:
            out["maxItems"] = GRAMMAR_MAX_ITEMS  # a small model lists quotes until max_tokens cuts the verdict off
        return out

    return walk(schema)


def _get_json(url: str, timeout_s: float) -> Any:
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # noqa: S310 - the user's own endpoint
        return json.loads(resp.read(1_000_000))


def probe_server(endpoint: str, timeout_s: float = 10.0) -> dict[str, Any]:
    """What the server says about itself: ``{"models": ..., "props": ...}`` (each absent when the
    server does not answer it). Blocking; two tiny GETs, no key sent. Never raises."""
    info: dict[str, Any] = {}
    parsed = urlparse(endpoint)
    if parsed.hostname in (None, "api.openai.com"):
        return info
    for key, url in (("models", endpoint.rstrip("/") + "/models"),
                     ("props", f"{parsed.scheme}://{parsed.netloc}/props")):
        for _ in range(2):
            try:
                info[key] = _get_json(url, timeout_s)
                break
            except urllib.error.HTTPError:
                break  # it answered: no such route
            except Exception:  # noqa: BLE001 - a server that does not answer says nothing about itself
                continue
    return info


def detect(endpoint: str, info: dict[str, Any], forced: str = "auto") -> ServerProfile:
    """The profile for ``endpoint``: ``forced`` (``config.llm.server``) unless ``"auto"``, else read off
    ``info`` (:func:`probe_server`), else :class:`Generic`."""
    if forced and forced != "auto":
        if forced not in PROFILES:
            raise ValueError(f"config.llm.server={forced!r}: choose auto or one of {', '.join(PROFILES)}")
        return PROFILES[forced]
    if (urlparse(endpoint).hostname or "") == "api.openai.com":
        return PROFILES["openai"]
    props = info.get("props")
    if isinstance(props, dict) and "total_slots" in props:
        return PROFILES["llama-server"]
    models = info.get("models")
    data = models.get("data") if isinstance(models, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        name = _OWNED_BY.get(str(data[0].get("owned_by", "")).lower())
        if name:
            return PROFILES[name]
    return PROFILES["openai-compatible"]
