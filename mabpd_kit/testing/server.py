"""A real OpenAI-compatible HTTP server on 127.0.0.1 (not a mock: the SDK's ``httpx2`` is not patchable, and a
real socket shows statuses, ``Retry-After``, time-outs and concurrency as a laptop sees them)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import batches
from .prefix import PrefixCache
from .prefix import prompt_tokens as prompt_tokens_of
from .quirks import Quirks
from .strict import strict_problems

__all__ = ["FakeLLMServer", "Reply", "Script"]


@dataclass
class Reply:
    """What the fake server sends back for one request: ``status`` other than 200 sends an OpenAI-style error
    body (``error``, ``retry_after``); ``raw`` is sent verbatim; ``hang`` never answers; usage fields left None
    count whitespace words (``cached_tokens``: the prefix-cache emulation decides)."""

    content: str | None = None
    status: int = 200
    retry_after: float | None = None
    delay: float = 0.0
    raw: bytes | None = None
    hang: bool = False
    logprobs: list[dict[str, Any]] | None = None
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str = "scripted error"
    refusal: str | None = None
    cached_tokens: int | None = None


Script = Callable[[dict[str, Any]], "str | dict[str, Any] | Reply"]


def _as_reply(value: Any) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(content=value)
    if isinstance(value, (dict, list)):
        return Reply(content=json.dumps(value))
    raise TypeError(f"a FakeLLMServer script must return str, dict or Reply, not {type(value).__name__}")


def _words(text: str) -> int:
    return len(text.split())


def synth_logprobs(content: str, top_k: int) -> list[dict[str, Any]]:
    """OpenAI-format logprobs: one entry per whitespace token at -0.05, ``top_k`` alternatives below it."""
    out = []
    for tok in content.split() or [content]:
        top = [{"token": tok, "logprob": -0.05, "bytes": None}]
        top += [{"token": f"{tok}~{i}", "logprob": -3.0 - i, "bytes": None} for i in range(1, top_k)]
        out.append({"token": tok, "logprob": -0.05, "bytes": None, "top_logprobs": top[: max(top_k, 0)]})
    return out


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the listen backlog: a batch of 200 connections must not be refused
    daemon_threads = True
    block_on_close = False
    owner: FakeLLMServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the SDK reuses connections, like a real server
    timeout = 30  # idle keep-alive connections close themselves: the server stays bounded
    server: _Server
    _counted = False  # the request being answered counts in the server's in_flight (see _done)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self._done()  # before the body's bytes: a client that has them all may send its next request at once
        self.wfile.write(body)

    def _done(self) -> None:
        if self._counted:
            self._counted = False
            self.server.owner._leave()

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        body = {"error": {"message": message, "type": "fake_server_error", "code": status}}
        self._send(status, json.dumps(body).encode(), headers)

    def do_GET(self) -> None:
        if batches.get(self, self.server.owner):
            return
        if self.server.owner.quirks is not None:  # an emulated server's /v1/models and /props
            status, body = self.server.owner.quirks.get(self.path, self.server.owner.models)
            self._send(status, json.dumps(body).encode())
        elif self.path.rstrip("/").endswith("/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.server.owner.models]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length)
        if owner._stop.is_set():  # stopped: kept-alive connections get no answer, like a dead server
            self.close_connection = True
            return
        if batches.post(self, owner, raw_body):
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        try:
            request = json.loads(raw_body)
        except ValueError:
            self._error(400, "request body is not JSON")
            return
        owner._enter(request, dict(self.headers.items()))
        self._counted = True
        try:
            self._answer(owner, request)
        finally:
            self._done()

    def _answer(self, owner: FakeLLMServer, request: dict[str, Any]) -> None:
        if owner.quirks is not None:  # an emulated server refuses and computes as it does (quirks.py)
            said = owner.quirks.refusal(request)
            if said is not None:
                self._send(said[0], json.dumps(said[1]).encode())
                return
            with owner.quirks.compute(owner._stop) as computing:
                if computing:
                    self._reply(owner, request)
                else:
                    self.close_connection = True
            return
        refused = refusal_of(owner, request)
        if refused:
            self._error(400, refused)
            return
        self._reply(owner, request)

    def _reply(self, owner: FakeLLMServer, request: dict[str, Any]) -> None:
        reply = _as_reply(owner.script(request))
        wait = owner.latency + reply.delay
        if reply.hang:
            owner._stop.wait(owner.hang_limit_s)
            self.close_connection = True
            return
        if wait > 0 and owner._stop.wait(wait):
            self.close_connection = True
            return
        if reply.status != 200:
            headers = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
            self._error(reply.status, reply.error, headers)
            return
        if reply.raw is not None:
            self._send(200, reply.raw)
            return
        self._send(200, json.dumps(completion_body(owner, request, reply)).encode())


def refusal_of(owner: FakeLLMServer, request: dict[str, Any]) -> str | None:
    """Why the server refuses this request's ``response_format`` (a 400), or None."""
    fmt = (request.get("response_format") or {}).get("type")
    if fmt == "json_schema" and not owner.supports_json_schema:
        return "response_format json_schema is not supported by this server"
    strict = bool(((request.get("response_format") or {}).get("json_schema") or {}).get("strict"))
    if fmt == "json_schema" and strict:
        if not owner.supports_strict:
            return "response_format json_schema with strict: true is not supported by this server"
        problems = strict_problems((request["response_format"]["json_schema"]).get("schema") or {})
        if problems:  # what OpenAI answers to a schema outside its strict subset
            return "Invalid schema for response_format: " + "; ".join(problems[:5])
    if fmt == "json_object" and not owner.supports_json_object:
        return "response_format json_object is not supported by this server"
    return None


def completion_body(owner: FakeLLMServer, request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The chat-completion body for ``request`` answered with ``reply``."""
    content = reply.content or ""
    n = int(request.get("n") or 1)
    logprobs = None
    if request.get("logprobs") and owner.supports_logprobs:
        top_k = int(request.get("top_logprobs") or 0) if owner.supports_top_logprobs else 0
        logprobs = {"content": reply.logprobs if reply.logprobs is not None else synth_logprobs(content, top_k)}
    cached = None
    if owner.prefix_block:
        tokens = prompt_tokens_of(request, schema_first=owner.prefix_schema_first)
        cached = owner._prefix().add(tokens)[1]
        prompt_words = len(tokens)
    else:
        prompt_words = sum(_words(str(m.get("content") or "")) for m in request.get("messages", []))
    prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_words
    if reply.cached_tokens is not None:
        cached = reply.cached_tokens
    completion_tokens = reply.completion_tokens if reply.completion_tokens is not None else _words(content)
    message = {"role": "assistant", "content": content}
    if reply.refusal is not None:
        message = {"role": "assistant", "content": None, "refusal": reply.refusal}
    choice = {"message": message, "finish_reason": reply.finish_reason, "logprobs": logprobs}
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens * n,
                             "total_tokens": prompt_tokens + completion_tokens * n}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": min(cached, prompt_tokens)}
    return {"id": f"chatcmpl-fake-{owner.calls}", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model") or owner.models[0], "choices": [{**choice, "index": i} for i in range(n)],
            "usage": usage}


@dataclass
class FakeLLMServer:
    """An OpenAI-compatible chat-completions server on ``127.0.0.1`` (ephemeral port); a context manager.

    ``script(request)`` returns a str, a dict (sent as JSON) or a :class:`Reply` (default ``"ok"``). A
    ``supports_*`` flag set to False refuses that ``response_format`` with a 400, or silently drops logprobs;
    a strict schema outside OpenAI's subset gets OpenAI's 400 (:mod:`.strict`). ``emulate=KIND`` (and ``slots``)
    behaves as that server kind (:mod:`.quirks`); ``prefix_block``/``prefix_min_tokens``/``prefix_schema_first``
    emulate a prefix cache (:mod:`.prefix`, 0: off); ``batch_polls``: polls a batch stays ``in_progress``."""

    script: Script | None = None
    latency: float = 0.0
    models: list[str] = field(default_factory=lambda: ["fake"])
    supports_json_schema: bool = True
    supports_json_object: bool = True
    supports_strict: bool = True
    supports_logprobs: bool = True
    supports_top_logprobs: bool = True
    hang_limit_s: float = 30.0
    prefix_block: int = 0
    prefix_min_tokens: int = 0
    prefix_schema_first: bool = False

    batch_polls: int = 1
    emulate: str | None = None
    slots: int | None = None

    requests: list[dict[str, Any]] = field(default_factory=list, init=False)
    batch_requests: list[dict[str, Any]] = field(default_factory=list, init=False)
    files: dict[str, tuple[dict[str, Any], bytes]] = field(default_factory=dict, init=False)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    headers: list[dict[str, str]] = field(default_factory=list, init=False)
    calls: int = field(default=0, init=False)
    in_flight: int = field(default=0, init=False)
    max_in_flight: int = field(default=0, init=False)
    quirks: Quirks | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.script is None:
            self.script = lambda request: "ok"
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self._token = f"fake-{uuid.uuid4().hex[:8]}"
        self._prefix_cache: PrefixCache | None = None
        if self.emulate is not None:
            self.quirks = Quirks(self.emulate, slots=self.slots)

    def prefix_cache(self, *, block: int = 128, min_tokens: int = 1024, schema_first: bool = False) -> FakeLLMServer:
        """Turn on (or reset) the prefix-cache emulation."""
        self.prefix_block, self.prefix_min_tokens, self.prefix_schema_first = block, min_tokens, schema_first
        with self._lock:
            self._prefix_cache = None
        return self

    def _prefix(self) -> PrefixCache:
        with self._lock:
            if self._prefix_cache is None:
                self._prefix_cache = PrefixCache(block=self.prefix_block, min_tokens=self.prefix_min_tokens)
            return self._prefix_cache

    def _enter(self, request: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _batch_line(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One Batch API line answered by the script, without delays."""
        with self._lock:
            self.batch_requests.append(body)
        refused = refusal_of(self, body)
        reply = None if refused else _as_reply(self.script(body))  # type: ignore[misc]
        if reply is None or reply.status != 200 or reply.raw is not None or reply.hang:
            message = refused or (reply.error if reply is not None else "refused")
            status = 400 if refused else (reply.status if reply is not None and reply.status != 200 else 500)
            return status, {"error": {"message": message, "type": "fake_server_error"}}
        return 200, completion_body(self, body, reply)

    def _enter_batch(self, headers: dict[str, str]) -> None:
        with self._lock:
            self.headers.append(headers)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def reset_counts(self) -> None:
        """Forget the request log and counters (e.g. between two phases of a test)."""
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.calls = 0
            self.max_in_flight = self.in_flight
        if self.quirks is not None:
            self.quirks.reset()

    @property
    def port(self) -> int:
        """The port (kept after :meth:`stop`: tests check a dead server)."""
        if self._port is None:
            raise RuntimeError("FakeLLMServer was never started; use `with FakeLLMServer(...) as srv:`")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/fake-XXXXXXXX/v1``: each instance its own endpoint for caches, whatever the port."""
        return f"http://127.0.0.1:{self.port}/{self._token}/v1"

    def start(self) -> FakeLLMServer:
        if self._httpd is not None:
            return self
        self._stop.clear()
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._port = int(httpd.server_address[1])
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="FakeLLMServer", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: hanging and delayed handlers are released, the port is closed."""
        if self._httpd is None:
            return
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
