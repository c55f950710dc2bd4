""":class:`LLM`, the one way mabpd-kit talks to a language model (made by :func:`~mabpd_kit.llm.connect`).

A call is answered from the record/replay cache when the mode allows, else sent within the endpoint's in-flight
limit as the server's kind says; it fails as a key-free :class:`EndpointError` (after a 401 or 403 no further call
is sent); a usable answer is stored and counted in ``llm.usage``. Network I/O runs on one background loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from . import registry
from . import structured as so
from .answers import Answers
from .cache import ResponseCache, replay_miss, resolve_mode
from .errors import EndpointError, Failure, OfflineError, Secret, endpoint_error
from .progress import known_server
from .results import Capabilities, Completion, Structured, completion_from_json
from .runtime import in_io_thread, submit
from .servers import ServerKind, detect, probe_server
from .transport import build_request, http_client, send
from .usage import CallLog

if TYPE_CHECKING:
    from mabpd_kit.config import Config, LLMConfig

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_ITEM_DEADLINE_S", "LLM", "as_llm_config", "online"]

#: requests in flight to a server that does not say how many it computes at once
DEFAULT_CONCURRENCY = 8
#: one item's wall-clock budget on a remote server when ``config.llm.item_deadline_s`` is None
DEFAULT_ITEM_DEADLINE_S = 300.0
NO_KEY = "not-needed"  # the key connect() gives a server that needs none (the SDK wants a string)

S = TypeVar("S", bound=BaseModel)


def as_llm_config(config: Config | LLMConfig | None) -> LLMConfig:
    """The LLM section of a configuration (the defaults for None)."""
    from mabpd_kit.config import Config, LLMConfig

    if config is None:
        return LLMConfig()
    return config.llm if isinstance(config, Config) else config


def _as_messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [dict(m) for m in messages]


class LLM:
    """A connection to one endpoint and default model (or the offline stand-in)."""

    def __init__(self, *, endpoint: str, model: str, api_key: str | None = None, config: LLMConfig | None = None,
                 cache_mode: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
                 preset: str | None = None, key_env: str = "MABPD_API_KEY", offline: bool = False,
                 offline_reason: str = "") -> None:
        self.config = as_llm_config(config)
        self.offline = offline
        self.offline_reason = offline_reason
        self.endpoint = endpoint.rstrip("/")
        self.model = model
        self.preset = preset
        self.key_env = key_env  # where the key came from (named in 401/403 messages), never the key
        self.usage = CallLog(prices_per_mtok=dict(self.config.prices_per_mtok), batch_discount=self.config.batch_discount)
        self._key = Secret(api_key or "")
        mode = resolve_mode(self.config.cache_mode, cache_mode)
        store = ResponseCache(Path(cache_dir) if cache_dir is not None else None) if not offline and mode != "off" else None
        self.answers = Answers(store, mode, self.endpoint, self._key)
        self._client: Any = None  # openai.AsyncOpenAI, created lazily on the I/O loop
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.pack: str | None = None
        self.collector: Any = None  # a batch.BatchCollector while a batch pass runs
        self._auth_refused: dict[str, EndpointError] = {}  # "" (401: every model) or a model (403) -> error

    def __repr__(self) -> str:
        if self.offline:
            return f"LLM(offline=True, reason={self.offline_reason!r})"
        return f"LLM(endpoint={self.endpoint!r}, model={self.model!r}, cache_mode={self.cache_mode!r})"

    @property
    def cache_mode(self) -> str:
        return self.answers.mode

    @property
    def cache(self) -> Any:
        """The record/replay store (``None`` offline or with ``cache_mode="off"``)."""
        return self.answers.store

    @property
    def has_key(self) -> bool:
        """Whether an API key is set."""
        return bool(self._key.get())

    @property
    def key_free(self) -> bool:
        """A local server's placeholder key."""
        return self._key.get() == NO_KEY

    def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:  # new loop (e.g. after a fork): new client
            import openai  # imported on the first real call: it takes a second or two

            self._client_loop = loop
            self._client = openai.AsyncOpenAI(api_key=self._key.get(), base_url=self.endpoint,
                                              timeout=self.config.timeout_s, max_retries=self.config.max_retries,
                                              http_client=http_client(self.config.max_reply_bytes))
        return self._client

    async def _server(self) -> ServerKind:
        prof = registry.profile(self.endpoint)
        if prof is None:
            replay = self.pack is not None or self.cache_mode == "replay"
            forced = known_server(self.endpoint, self.config.server)  # the kit's own server is not asked
            info = {} if replay or forced != "auto" else await asyncio.to_thread(probe_server, self.endpoint)
            prof = detect(self.endpoint, info, forced)
            registry.remember_profile(self.endpoint, prof, prof.concurrency(info))
        return prof

    @property
    def server(self) -> ServerKind:
        """The server's kind (blocking the first time)."""
        return registry.profile(self.endpoint) or self._blocking(self._server())

    @property
    def concurrency(self) -> int:
        """Requests in flight: ``config.llm.concurrency``, else the server's own count, else DEFAULT_CONCURRENCY."""
        if self.config.concurrency is not None:
            return self.config.concurrency
        if self.offline:
            return 1
        if registry.profile(self.endpoint) is None and not in_io_thread():
            self._blocking(self._server())
        return registry.server_limit(self.endpoint) or DEFAULT_CONCURRENCY

    def item_deadline(self, configured: float | None) -> float | None:
        """One item's wall-clock budget on this endpoint (the setting; else the server kind's)."""
        if configured is not None or self.offline:
            return configured
        return self.server.item_deadline(configured, DEFAULT_ITEM_DEADLINE_S)

    def _semaphore(self) -> asyncio.Semaphore:
        """The in-flight limit, shared by every LLM object on this endpoint in this process."""
        limit = self.config.concurrency or registry.server_limit(self.endpoint) or DEFAULT_CONCURRENCY
        return registry.semaphore(self.endpoint, limit)

    def claim(self, request: dict[str, Any], sample_index: int, prof: ServerKind) -> Any:
        """The cache claim of ``request``, waited for at most one call's time-out."""
        wait_s = prof.timeout(self.config.timeout_s, request, self.config.timeout_per_1k_chars_s)
        return self.answers.claim(request, sample_index, wait_s)

    def _describe(self, request: dict[str, Any]) -> str:
        last = " ".join(str((request.get("messages") or [{}])[-1].get("content") or "").split())
        return f"model {request.get('model')!r}, last message {last[:60]!r}{'...' if len(last) > 60 else ''}"

    def _endpoint_error(self, exc: BaseException, request: dict[str, Any], timeout_s: float | None = None,
                        retries: int | None = None) -> EndpointError:
        return endpoint_error(exc, where=f"{self.endpoint} ({self._describe(request)})", key=self._key.get(),
                              key_env=self.key_env, model=str(request.get("model")),
                              timeout_s=self.config.timeout_s if timeout_s is None else timeout_s,
                              retries=self.config.max_retries if retries is None else retries,
                              concurrency=self.config.concurrency)

    def _check_auth(self, request: dict[str, Any]) -> None:
        """Fail at once once the endpoint refused the key (401) or this model (403)."""
        err = self._auth_refused.get("") or self._auth_refused.get(str(request.get("model")))
        if err is not None:
            raise EndpointError(str(err), status=err.status, detail=err.detail, kind=err.kind)

    def _cached(self, request: dict[str, Any], sample_index: int, tag: str,
                accept: Callable[[Completion], bool] | None) -> Completion | None:
        """The recorded answer; a batch pass defers a miss, replay fails on one."""
        key = self.answers.key(request, sample_index)
        if (hit := self.answers.hit(key, tag, accept)) is not None:
            self.usage.add(hit)
            return hit
        if self.collector is not None and self.cache_mode == "auto":
            self.collector.defer(key, request, tag)  # raises Deferred: the item waits for the batch
        if self.cache_mode == "replay":
            raise replay_miss(tag, self._describe(request), sample_index, key,
                              f"course pack {self.pack}" if self.pack else self.endpoint)
        return None

    async def _call(self, request: dict[str, Any], sample_index: int, tag: str, *, cache: bool = True, store: bool = True,
                    accept: Callable[[Completion], bool] | None = None, claim: bool = True) -> Completion:
        cached = self.cache is not None and (cache or self.cache_mode == "replay")
        if cached and self.cache_mode in ("auto", "replay"):
            if (hit := self._cached(request, sample_index, tag, accept)) is not None:
                return hit
        self._check_auth(request)
        prof = await self._server()
        claimed = cached and claim and self.cache_mode == "auto"  # then look again once it is held
        async with self.claim(request, sample_index, prof) if claimed else contextlib.nullcontext():
            if claimed and (hit := self.answers.hit(self.answers.key(request, sample_index), tag, accept)) is not None:
                self.usage.add(hit)
                return hit  # answered by the claim's holder while this call waited
            async with self._semaphore():
                self._check_auth(request)  # refused while this call waited for its slot
                t0 = time.perf_counter()
                data = await self._send(request, prof)
                latency = time.perf_counter() - t0
            comp = self._completion(data, request, latency, tag)
            if cached and store and (accept is None or accept(comp)):
                self.answers.store_answer(request, sample_index, comp)
        self.usage.add(comp)
        return comp

    async def _send(self, request: dict[str, Any], prof: ServerKind) -> Any:
        """The parsed answer body; a failure becomes an EndpointError of the kind the server's kind decides."""
        import openai

        client = self._get_client()
        try:
            return await send(client, request, prof, self.config, self._endpoint_error)
        except (openai.OpenAIError, ValueError) as exc:  # ValueError: a body that is not JSON
            err = self._endpoint_error(exc, request)
            if err.batch_fatal:
                self._auth_refused["" if err.status == 401 else str(request.get("model"))] = err
            elif prof.refuses_mode(err.status, f"{err.detail} {err}"):
                err.kind = Failure.REFUSED_FIELD
            raise err from None

    def _completion(self, data: Any, request: dict[str, Any], latency: float, tag: str) -> Completion:
        try:
            return completion_from_json(data, request["model"], latency, tag)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise EndpointError(f"unreadable answer from {self.endpoint} ({self._describe(request)}): not a chat "
                                f"completion ({type(exc).__name__}: {str(exc)[:100]})", kind=Failure.GARBLED) from None

    def _request(self, messages: Any, *, model: str | None, **fields: Any) -> dict[str, Any]:
        return build_request(_as_messages(messages), model=model or self.model, **fields)

    async def _on_io_loop(self, coro: Any) -> Any:
        if in_io_thread():
            return await coro
        return await asyncio.wrap_future(submit(coro))

    def _blocking(self, coro: Any) -> Any:
        if in_io_thread():
            coro.close()
            raise RuntimeError("sync LLM calls cannot run on the LLM I/O thread; use the async methods")
        fut = submit(coro)
        try:
            return fut.result()
        except BaseException:  # e.g. KeyboardInterrupt ("interrupt kernel"): stop the call too
            fut.cancel()
            raise

    def _ensure_online(self) -> None:
        if self.offline:
            raise OfflineError(
                f"no LLM endpoint ({self.offline_reason}); components fall back to their rule-based agents. "
                "Configure one with MABPD_BASE_URL / MABPD_MODEL or connect(preset, model=...).")

    async def achat(self, messages: Any, *, model: str | None = None, temperature: float = 0.0,
                    max_tokens: int | None = None, seed: int | None = None, sample_index: int = 0,
                    logprobs: bool = False, top_logprobs: int | None = None,
                    response_format: dict[str, Any] | None = None, tag: str = "",
                    accept: Callable[[Completion], bool] | None = None, cache: bool = True) -> Completion:
        """One chat completion, recorded only when usable and ``accept(completion)`` holds (``cache=False``: never)."""
        self._ensure_online()
        req = self._request(messages, model=model, temperature=temperature, max_tokens=max_tokens, seed=seed,
                            sample_index=sample_index, logprobs=logprobs, top_logprobs=top_logprobs,
                            response_format=response_format)
        return await self._on_io_loop(self._call(req, sample_index, tag, cache=cache, accept=accept))

    def chat(self, messages: Any, **kwargs: Any) -> Completion:
        """Blocking :meth:`achat`; safe from any thread and inside Jupyter."""
        return self._blocking(self.achat(messages, **kwargs))

    async def astructured(self, messages: Any, schema: type[S], *, model: str | None = None, temperature: float = 0.0,
                          max_tokens: int | None = None, sample_index: int = 0, tag: str = "") -> Structured[S]:
        """A validated ``schema`` instance: json_schema, json_object, then JSON from text, each with one repair turn."""
        self._ensure_online()
        return await self._on_io_loop(so.ask(self, _as_messages(messages), schema, model=model or self.model,
                                             temperature=temperature, max_tokens=max_tokens,
                                             sample_index=sample_index, tag=tag))

    def structured(self, messages: Any, schema: type[S], **kwargs: Any) -> Structured[S]:
        """Blocking :meth:`astructured`."""
        return self._blocking(self.astructured(messages, schema, **kwargs))

    def capabilities(self, *, model: str | None = None, refresh: bool = False) -> Capabilities:
        """What this endpoint and model really support, probed once and remembered."""
        if self.offline:
            return Capabilities()
        from .probe import probe

        return self._blocking(probe(self, model or self.model, refresh=refresh))


def online(llm: LLM | None) -> LLM | None:
    """The LLM if it can be called, else ``None`` (no LLM, or an offline one)."""
    return None if llm is None or getattr(llm, "offline", True) else llm
