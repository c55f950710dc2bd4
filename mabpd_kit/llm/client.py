"""The one way mabpd-kit talks to language models: :class:`LLM` (made by
:func:`~mabpd_kit.llm.connection.connect`).

>>> from mabpd_kit.llm import connect, online
>>> llm = connect("ollama", model="llama3.1")                       # a preset
>>> llm = connect(base_url="http://127.0.0.1:8000/v1", model="m")  # any OpenAI-compatible server
>>> online(connect(quiet=True)) is None                            # offline: use the rule-based path
True

What happens on a call (``llm.chat`` / ``await llm.achat``):

1. The request is built and its cache key computed (see :mod:`mabpd_kit.llm.cache`).
2. ``auto``/``replay`` cache modes answer from the cache when they can.
3. Otherwise the call waits for a slot of the endpoint's concurrency limit (shared by every
   agent in the process), then goes through the ``openai`` SDK, whose own retries handle
   429 (honouring ``Retry-After``), 5xx, dropped connections and time-outs.
4. A final failure becomes :class:`EndpointError` with a clear message and no key.
5. The answer is stored (``auto``/``record``) when it is usable (see :meth:`LLM.achat`'s
   ``accept``; structured answers only once they validate), added to ``llm.usage``, returned as a
   :class:`Completion`. In ``auto`` mode an uncached call first claims its key
   (:meth:`~mabpd_kit.llm.cache.ResponseCache.claim`): two processes sharing a cache send it once.
6. After a 401 or 403 this LLM object sends no further call (the key or the access was
   refused: each later call fails at once with the same reason; ``connect()`` again after fixing it).

All network I/O runs on one background event loop (:mod:`mabpd_kit.llm.runtime`), so sync
calls are safe from any thread and async calls work inside Jupyter.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from . import registry
from . import structured as so
from .cache import ResponseCache, replay_miss, request_key, resolve_mode
from .presets import NO_KEY
from .profiles import ServerProfile, detect, probe_server
from .progress import known_server
from .transport import build_request, http_client, send
from .errors import EndpointError, OfflineError, Secret, StructuredOutputError, endpoint_error
from .results import Capabilities, Completion, Structured, completion_from_json
from .runtime import in_io_thread, submit
from .usage import CallLog

if TYPE_CHECKING:
    from mabpd_kit.config import Config, LLMConfig

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_ITEM_DEADLINE_S", "LLM", "as_llm_config", "online"]

#: requests in flight to a server that does not say how many it computes at once
DEFAULT_CONCURRENCY = 8
#: one item's wall-clock budget on a remote server when ``config.llm.item_deadline_s`` is None
DEFAULT_ITEM_DEADLINE_S = 300.0

S = TypeVar("S", bound=BaseModel)


def as_llm_config(config: Config | LLMConfig | None) -> LLMConfig:
    """The LLM section of a configuration (the defaults for None)."""
    from mabpd_kit.config import Config, LLMConfig

    if config is None:
        return LLMConfig()
    if isinstance(config, Config):
        return config.llm
    return config


def _as_messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [dict(m) for m in messages]


class LLM:
    """A connection to one endpoint and default model (or the offline stand-in).

    Attributes: ``offline`` (bool), ``endpoint`` (base URL, never a key), ``model``,
    ``preset`` (name or None), ``cache_mode``, ``usage`` (:class:`~mabpd_kit.llm.usage.CallLog`, the run's ledger of calls).
    Create it with :func:`connect`.
    """

    def __init__(
        self,
        *,
        endpoint: str,
        model: str,
        api_key: str | None = None,
        config: LLMConfig | None = None,
        cache_mode: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        preset: str | None = None,
        key_env: str = "MABPD_API_KEY",
        offline: bool = False,
        offline_reason: str = "",
    ) -> None:
        self.config = as_llm_config(config)
        self.offline = offline
        self.offline_reason = offline_reason
        self.endpoint = endpoint.rstrip("/")
        self.model = model
        self.preset = preset
        self.key_env = key_env  # where the key came from (named in 401/403 messages), never the key
        self.cache_mode = resolve_mode(self.config.cache_mode, cache_mode)
        self.usage = CallLog(prices_per_mtok=dict(self.config.prices_per_mtok), batch_discount=self.config.batch_discount)
        self._key = Secret(api_key or "")
        self._cache: ResponseCache | None = None
        if not offline and self.cache_mode != "off":
            from pathlib import Path

            self._cache = ResponseCache(Path(cache_dir) if cache_dir is not None else None)
        self._client: Any = None  # openai.AsyncOpenAI, created lazily on the I/O loop
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.pack: str | None = None  # the course pack this LLM replays (see mabpd_kit.llm.pack)
        self.collector: Any = None  # a batch.BatchCollector while a batch pass runs (see mabpd_kit.llm.batch)
        self._auth_refused: dict[str, EndpointError] = {}  # "" (401: every model) or a model (403) -> error

    def __repr__(self) -> str:
        if self.offline:
            return f"LLM(offline=True, reason={self.offline_reason!r})"
        return f"LLM(endpoint={self.endpoint!r}, model={self.model!r}, cache_mode={self.cache_mode!r})"

    @property
    def has_key(self) -> bool:
        """Whether an API key is set (the key itself is never shown)."""
        return bool(self._key.get())

    @property
    def key_free(self) -> bool:
        """A local server's placeholder key (no real key sent)."""
        return self._key.get() == NO_KEY

    @property
    def cache(self) -> ResponseCache | None:
        """The record/replay store (``None`` offline or with ``cache_mode="off"``)."""
        return self._cache

    # -- plumbing (runs on the I/O loop) -------------------------------------------
    def _ensure_online(self) -> None:
        if self.offline:
            raise OfflineError(
                f"no LLM endpoint ({self.offline_reason}); components fall back to their rule-based agents. "
                "Configure one with MABPD_BASE_URL / MABPD_MODEL or connect(preset, model=...)."
            )

    def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:  # new loop (e.g. after a fork): new client
            import openai  # imported on the first real call: it takes ~1-2 s

            self._client_loop = loop

            self._client = openai.AsyncOpenAI(api_key=self._key.get(), base_url=self.endpoint,
                                              timeout=self.config.timeout_s, max_retries=self.config.max_retries,
                                              http_client=http_client(self.config.max_reply_bytes))
        return self._client

    # -- the server behind the endpoint (llm/profiles.py: every server quirk lives there) --------
    async def _server(self) -> ServerProfile:
        """This endpoint's server profile, asked from the server once per process (two tiny GETs)."""
        prof = registry.profile(self.endpoint)
        if prof is None:
            replay = self.pack is not None or self.cache_mode == "replay"
            forced = known_server(self.endpoint, self.config.server)  # the kit's own server is not asked
            info = {} if replay or forced != "auto" else await asyncio.to_thread(probe_server, self.endpoint)
            prof = detect(self.endpoint, info, forced)
            registry.remember_profile(self.endpoint, prof, prof.concurrency(info))
        return prof

    @property
    def server(self) -> ServerProfile:
        """The server's profile (asked once; blocking the first time)."""
        return self._blocking(self._server()) if registry.profile(self.endpoint) is None else registry.profile(self.endpoint)

    @property
    def concurrency(self) -> int:
        """Requests in flight to this endpoint: ``config.llm.concurrency`` when set, else the number the
        server computes at once (``llama-server``'s ``total_slots``, 1 for llama-cpp-python's server),
        else :data:`DEFAULT_CONCURRENCY`. A batch keeps about this many items busy."""
        if self.config.concurrency is not None:
            return self.config.concurrency
        if self.offline:
            return 1
        if registry.profile(self.endpoint) is None and not in_io_thread():
            self._blocking(self._server())
        return registry.server_limit(self.endpoint) or DEFAULT_CONCURRENCY

    def item_deadline(self, configured: float | None) -> float | None:
        """One item's wall-clock budget for a batch on this endpoint (``config.llm.item_deadline_s``;
        None: :data:`DEFAULT_ITEM_DEADLINE_S` on a remote server, none on a local one)."""
        if configured is not None or self.offline:
            return configured
        return self.server.item_deadline(configured, DEFAULT_ITEM_DEADLINE_S)

    def _semaphore(self) -> asyncio.Semaphore:
        """The in-flight limit for this endpoint, shared by every LLM object (every agent) that
        uses the same endpoint in this process (call after :meth:`_server`)."""
        limit = self.config.concurrency or registry.server_limit(self.endpoint) or DEFAULT_CONCURRENCY
        return registry.semaphore(self.endpoint, limit)

    def _describe(self, request: dict[str, Any]) -> str:
        last = str((request.get("messages") or [{}])[-1].get("content") or "")
        last = " ".join(last.split())
        return f"model {request.get('model')!r}, last message {last[:60]!r}{'...' if len(last) > 60 else ''}"

    def _endpoint_error(self, exc: BaseException, request: dict[str, Any], timeout_s: float | None = None,
                        retries: int | None = None) -> EndpointError:
        """A key-free EndpointError for a final SDK failure."""
        return endpoint_error(exc, where=f"{self.endpoint} ({self._describe(request)})", key=self._key.get(),
                              key_env=self.key_env, model=str(request.get("model")),
                              timeout_s=self.config.timeout_s if timeout_s is None else timeout_s,
                              retries=self.config.max_retries if retries is None else retries,
                              concurrency=self.config.concurrency)

    def _check_auth(self, request: dict[str, Any]) -> None:
        """Fail at once, without a call, once the endpoint refused the key (401) or this model (403)."""
        err = self._auth_refused.get("") or self._auth_refused.get(str(request.get("model")))
        if err is not None:
            raise EndpointError(str(err), status=err.status, detail=err.detail)

    def _store(self, request: dict[str, Any], sample_index: int, comp: Completion) -> None:
        """Record a usable answer (``auto``/``record``); never an empty reply or a refusal."""
        if self._cache is not None and self.cache_mode in ("auto", "record") and not comp.cached and comp.usable:
            self._cache.put(request_key(self.endpoint, request, sample_index), comp.model_dump(exclude={"cached", "tag"}),
                            model=comp.model, preview=str(request["messages"][-1].get("content") or "")[:200])

    def _unstore(self, request: dict[str, Any], sample_index: int) -> None:
        """Remove a recorded answer that proved unusable (so a rerun asks the endpoint again)."""
        if self._cache is not None and self.cache_mode in ("auto", "record"):
            self._cache.delete(request_key(self.endpoint, request, sample_index))

    def _note(self, request: dict[str, Any], sample_index: int, tag: str, exc: BaseException) -> BaseException:
        """Note a call that failed in a recording cache (a course pack replays it as that failure); returns ``exc``."""
        if self._cache is not None and self.cache_mode in ("auto", "record"):
            self._cache.note_failure(request_key(self.endpoint, request, sample_index), tag, exc, self._key.get())
        return exc

    def _hit(self, key: str, tag: str, accept: Callable[[Completion], bool] | None) -> Completion | None:
        """The recorded answer of ``key``; one ``accept`` rejects (recorded by an older version) is removed."""
        hit = self._cache.get(key) if self._cache is not None else None
        comp = None if hit is None else Completion.model_validate({**hit, "cached": True, "tag": tag})
        if comp is not None and accept is not None and self.cache_mode != "replay" and not accept(comp):
            self._cache.delete(key)  # type: ignore[union-attr]
            return None
        if comp is not None:
            self.usage.add(comp)
        return comp

    def _claim(self, request: dict[str, Any], sample_index: int, prof: ServerProfile) -> Any:
        """``auto`` mode: the claim of the request's key, held while it is sent and stored (see ResponseCache.claim)."""
        if self._cache is None or self.cache_mode != "auto":
            return contextlib.nullcontext(False)
        wait_s = prof.timeout(self.config.timeout_s, request, self.config.timeout_per_1k_chars_s)
        return self._cache.claim(request_key(self.endpoint, request, sample_index), wait_s)

    async def _call(self, request: dict[str, Any], sample_index: int, tag: str, *, cache: bool = True, store: bool = True,
                    accept: Callable[[Completion], bool] | None = None, claim: bool = True) -> Completion:
        key = None
        if self._cache is not None and (cache or self.cache_mode == "replay"):
            key = request_key(self.endpoint, request, sample_index)
            if self.cache_mode in ("auto", "replay"):
                if (hit := self._hit(key, tag, accept)) is not None:
                    return hit
                if self.collector is not None and self.cache_mode == "auto":
                    self.collector.defer(key, request, tag)  # batch mode: record it, stop this item
                if self.cache_mode == "replay":
                    raise replay_miss(tag, self._describe(request), sample_index, key,
                                      f"course pack {self.pack}" if self.pack else self.endpoint)
        self._check_auth(request)
        client = self._get_client()
        prof = await self._server()
        import openai  # already loaded by _get_client; needed for its exception classes

        claimed = key is not None and claim and self.cache_mode == "auto"  # then look again once it is held
        async with self._claim(request, sample_index, prof) if claimed else contextlib.nullcontext():
            if claimed and (hit := self._hit(key, tag, accept)) is not None:  # type: ignore[arg-type]
                return hit  # answered by the claim's holder while this call waited
            async with self._semaphore():
                self._check_auth(request)  # refused while this call waited for its slot
                t0 = time.perf_counter()
                try:
                    # The SDK's generic POST: its retries, Retry-After and time-outs, without the
                    # per-call cost of typed request transforms and response models.
                    data = await send(client, request, prof, self.config, self._endpoint_error)
                except (openai.OpenAIError, ValueError) as exc:  # ValueError: a body that is not JSON
                    err = self._endpoint_error(exc, request)
                    err.garbled = isinstance(exc, ValueError)  # type: ignore[attr-defined]
                    if err.batch_fatal:
                        self._auth_refused["" if err.status == 401 else str(request.get("model"))] = err
                    raise err from None
                latency = time.perf_counter() - t0
            comp = self._completion(data, request, latency, tag)
            if key is not None and store and (accept is None or accept(comp)):
                self._store(request, sample_index, comp)
        self.usage.add(comp)
        return comp

    def _completion(self, data: Any, request: dict[str, Any], latency: float, tag: str) -> Completion:
        try:
            return completion_from_json(data, request["model"], latency, tag)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            err = EndpointError(f"unreadable answer from {self.endpoint} ({self._describe(request)}): not a chat "
                                f"completion ({type(exc).__name__}: {str(exc)[:100]})")
            err.garbled = True  # type: ignore[attr-defined]
            raise err from None

    def _request(self, messages: Any, *, model: str | None, **fields: Any) -> dict[str, Any]:
        return build_request(_as_messages(messages), model=model or self.model, **fields)

    async def _on_io_loop(self, coro: Any) -> Any:
        """Await ``coro`` on the shared I/O loop from whatever loop we are on."""
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

    # -- chat -----------------------------------------------------------------------
    async def achat(
        self,
        messages: Any,
        *,
        model: str | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        sample_index: int = 0,
        logprobs: bool = False,
        top_logprobs: int | None = None,
        response_format: dict[str, Any] | None = None,
        tag: str = "",
        accept: Callable[[Completion], bool] | None = None,
        cache: bool = True,
    ) -> Completion:
        """One chat completion. ``messages``: OpenAI-style list of ``{"role", "content"}`` (a
        bare string is one user message). ``sample_index`` numbers repeated samples of the
        same prompt (temperature > 0): each index is its own cache entry. ``response_format`` is
        passed to the server as is (e.g. ``{"type": "json_object"}``); for a validated pydantic
        object use :meth:`structured`.

        The answer is recorded only when usable (text, no refusal) and, given ``accept``, only when
        ``accept(completion)`` is True: pass your parser's check (``lambda c: parse(c.text) is not
        None``) so an unusable reply is asked again on resume instead of replayed. ``cache=False``
        neither reads nor writes the cache (except in replay mode, which never calls). A recorded answer
        ``accept`` rejects (stored by an older version) is removed and asked again, never replayed. An
        unreadable body raises :class:`EndpointError` with ``garbled = True`` (a caller may send it again)."""
        self._ensure_online()
        req = self._request(
            messages, model=model, temperature=temperature, max_tokens=max_tokens, seed=seed,
            sample_index=sample_index, logprobs=logprobs, top_logprobs=top_logprobs, response_format=response_format,
        )
        return await self._on_io_loop(self._call(req, sample_index, tag, cache=cache, accept=accept))

    def chat(self, messages: Any, **kwargs: Any) -> Completion:
        """Blocking :meth:`achat` (the same arguments); safe from any thread and inside Jupyter."""
        return self._blocking(self.achat(messages, **kwargs))

    # -- structured output ----------------------------------------------------------------
    def _modes(self, model: str) -> list[str]:
        ek = registry.endpoint_key(self.endpoint, model)
        caps = registry.capabilities(ek)
        refused = registry.refused_modes(ek)
        unsure = registry.undecided(ek)  # not settled by the probe: tried, and the call decides
        modes = []
        for m in so.MODES:
            if m in refused or (caps is not None and m != "text" and not getattr(caps, m) and m not in unsure):
                continue
            modes.append(m)
        return modes

    def _strict(self, model: str) -> bool:
        """Send strict json_schema: configured, and the probe found the endpoint accepts it."""
        caps = registry.capabilities(registry.endpoint_key(self.endpoint, model))
        return bool(self.config.strict_schemas and caps is not None and caps.strict_json_schema)

    async def _structured(
        self,
        messages: Any,
        schema: type[S],
        *,
        model: str | None,
        temperature: float,
        max_tokens: int | None,
        sample_index: int,
        tag: str,
    ) -> Structured[S]:
        model = model or self.model
        base = _as_messages(messages)
        calls: list[Completion] = []
        refused: list[str] = []  # modes refused with a 4xx during this call
        prof = await self._server()
        for mode in self._modes(model):
            msgs = base if mode == "json_schema" else so.with_instruction(base, schema)
            fmt = so.response_format(schema, mode, strict=mode == "json_schema" and self._strict(model), profile=prof)
            repaired = False
            chain: list[tuple[dict[str, Any], Completion]] = []  # this mode's requests and answers
            ask = functools.partial(self._request, model=model, temperature=temperature, max_tokens=max_tokens,
                                    seed=None, sample_index=sample_index, logprobs=False, top_logprobs=None,
                                    response_format=fmt)
            req = first = ask(msgs)
            try:
                async with self._claim(req, sample_index, prof):  # stored under the first request once valid
                    for attempt in range(1 + self.config.repair_retries):
                        comp = await self._call(req, sample_index, tag, store=False, claim=False)  # stored once valid
                        chain.append((req, comp))
                        if refused:
                            # A later mode got an answer, so the 4xx really was about the
                            # response_format (not, say, a too-long prompt): skip those modes from now on.
                            registry.refuse_modes(registry.endpoint_key(self.endpoint, model), refused)
                            refused.clear()
                        calls.append(comp)
                        value, error = so.validate(comp.text, schema)
                        if value is not None:
                            # The valid answer is what the *first* request leads to: a rerun replays it at
                            # once. A first try that failed validation is never stored.
                            self._store(chain[0][0], sample_index, comp)
                            if mode != "text":  # the probe may have left it open: this answer settles it
                                registry.settle(registry.endpoint_key(self.endpoint, model), mode, True)
                            return Structured[schema](  # type: ignore[valid-type]
                                value=value, completion=comp, mode=mode, repaired=repaired, calls=calls
                            )
                        if attempt < self.config.repair_retries:
                            repair = so.repair_message(error, schema)
                            msgs = [*msgs, {"role": "assistant", "content": comp.text},
                                    {"role": "user", "content": repair}]
                            req, repaired = ask(msgs), True
                    for r, c in chain:  # never replay a failure (entries recorded by older versions too)
                        if c.cached:
                            self._unstore(r, sample_index)
                    raise self._note(first, sample_index, tag, StructuredOutputError(
                        f"{self.endpoint} (model {model!r}, {mode} mode) gave no valid {schema.__name__} after "
                        f"{len(calls)} call(s) including the repair retry: {error}. Reply began: {comp.text[:160]!r}",
                        raw=comp.text, errors=error))
            except EndpointError as exc:
                if fmt is not None and prof.refuses_mode(exc.status, f"{exc.detail} {exc}"):
                    refused.append(mode)
                    continue  # the server refused this response_format: try the next mode
                raise self._note(first, sample_index, tag, exc) from None
        # Only reachable if every mode, plain text included, was skipped: _modes never skips text.
        raise StructuredOutputError(f"{self.endpoint} (model {model!r}): no structured-output mode left to try")

    async def astructured(
        self,
        messages: Any,
        schema: type[S],
        *,
        model: str | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        sample_index: int = 0,
        tag: str = "",
    ) -> Structured[S]:
        """A validated ``schema`` instance from the model: json_schema, then json_object, then
        JSON extracted from text; one repair retry showing the validation error; modes the
        endpoint refused (or the probe found missing) are skipped next time."""
        self._ensure_online()
        return await self._on_io_loop(
            self._structured(
                messages, schema, model=model, temperature=temperature, max_tokens=max_tokens,
                sample_index=sample_index, tag=tag,
            )
        )

    def structured(self, messages: Any, schema: type[S], **kwargs: Any) -> Structured[S]:
        """Blocking :meth:`astructured` (the same arguments)."""
        return self._blocking(self.astructured(messages, schema, **kwargs))

    # -- capabilities ---------------------------------------------------------------------
    def capabilities(self, *, model: str | None = None, refresh: bool = False) -> Capabilities:
        """What this endpoint+model really supports (json_schema, json_object, logprobs,
        top_logprobs), probed with a few tiny requests once and cached in memory and on disk."""
        if self.offline:
            return Capabilities()
        from .probe import probe

        return self._blocking(probe(self, model or self.model, refresh=refresh))


def online(llm: "LLM | None") -> "LLM | None":
    """The LLM if it can be called, else ``None`` (no LLM given, or an offline one).

    Components take ``llm: LLM | None`` and choose their rule-based path when this is ``None``."""
    return None if llm is None or getattr(llm, "offline", True) else llm
