"""Sending one chat-completions request as the server's kind says: retries (:func:`retry_wait`), time-outs that grow
with the prompt on a local server, waiting while a server the kit started keeps computing, and reply bodies read
at most ``config.llm.max_reply_bytes`` long."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .progress import cpu_seconds, server_pid, wait_while_progressing

if TYPE_CHECKING:
    from mabpd_kit.config import LLMConfig

    from .errors import EndpointError
    from .servers import ServerKind

__all__ = ["build_request", "http_client", "retry_wait", "send"]


def retry_wait(exc: BaseException, prof: ServerKind, attempt: int) -> float | None:
    """Seconds to wait before sending a failed request again, or None: the failure is final."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return _backoff(attempt) if prof.retry_timeouts() else None
    if isinstance(exc, (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)):
        if prof.refuses_mode(getattr(exc, "status_code", None), str(getattr(exc, "message", "") or "")):
            return None
        return _retry_after(exc) or _backoff(attempt)
    return None


async def send(client: Any, request: dict[str, Any], prof: ServerKind, cfg: LLMConfig,
               error: Callable[..., EndpointError]) -> Any:
    """The parsed body of the answer to ``request``; ``error`` builds the key-free error of a local time-out."""
    import openai

    body = prof.request_body(request, cfg)
    timeout = prof.timeout(cfg.timeout_s, request, cfg.timeout_per_1k_chars_s)
    pid = server_pid(str(client.base_url)) if prof.local_compute else None
    for attempt in range(cfg.max_retries + 1):
        try:
            if pid is None:
                return await client.post("/chat/completions", body=body, cast_to=object,
                                         options={"timeout": timeout, "max_retries": 0})
            return await _watched(client, body, pid, timeout, cfg, lambda s: error(_timeout_exc(client), request,
                                                                                    timeout_s=round(s), retries=0))
        except openai.OpenAIError as exc:
            wait = retry_wait(exc, prof, attempt)
            if wait is None and isinstance(exc, openai.APITimeoutError):
                raise error(exc, request, timeout_s=timeout, retries=0) from None
            if wait is None or attempt == cfg.max_retries:
                raise
            await asyncio.sleep(wait)
    raise AssertionError("unreachable")


async def _watched(client: Any, body: dict[str, Any], pid: int, window_s: float, cfg: LLMConfig,
                   timed_out: Callable[[float], BaseException]) -> Any:
    bound = cfg.local_max_wait_s or 30 * 24 * 3600.0  # the HTTP time-out: the watch decides when to give up
    call = client.post("/chat/completions", body=body, cast_to=object, options={"timeout": bound, "max_retries": 0})
    return await wait_while_progressing(call, window_s=window_s, progress=lambda: cpu_seconds(pid),
                                        min_cpu_s=cfg.local_progress_cpu_s, max_wait_s=cfg.local_max_wait_s,
                                        timed_out=timed_out)


def _timeout_exc(client: Any) -> BaseException:
    import httpx
    import openai

    return openai.APITimeoutError(request=httpx.Request("POST", f"{client.base_url}chat/completions"))


def http_client(max_reply_bytes: int) -> Any:
    """The SDK's default async HTTP client, reading each reply body at most ``max_reply_bytes`` long."""
    import openai

    class Bounded(openai.DefaultAsyncHttpxClient):  # type: ignore[misc,valid-type]
        async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            response = await super().send(request, stream=True, **kwargs)
            if stream:
                return response
            try:
                await _read_bounded(response, max_reply_bytes)
            except BaseException:
                await response.aclose()
                raise
            return response

    return Bounded()


async def _read_bounded(response: Any, limit: int) -> None:
    """Read ``response``'s body into it, as ``aread()`` does, stopping past ``limit`` bytes."""
    from .errors import ReplyTooLarge

    where = f"{response.request.method} {response.request.url}"
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ReplyTooLarge(where, limit, int(declared))
    parts, n = [], 0
    async for part in response.aiter_bytes():
        n += len(part)
        if n > limit:
            raise ReplyTooLarge(where, limit, None)
        parts.append(part)
    response._content = b"".join(parts)  # what Response.aread() sets: the body, read once
    await response.aclose()


def build_request(messages: list[dict[str, Any]], *, model: str, temperature: float, max_tokens: int | None,
                  seed: int | None, sample_index: int, logprobs: bool, top_logprobs: int | None,
                  response_format: dict[str, Any] | None = None) -> dict[str, Any]:
    """The chat-completions body (also what the cache key is computed from)."""
    req: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
    if max_tokens is not None:
        req["max_tokens"] = max_tokens
    if seed is not None:
        req["seed"] = seed + sample_index  # a fixed seed must not make all samples identical
    if logprobs:
        req["logprobs"] = True
        if top_logprobs:
            req["top_logprobs"] = top_logprobs
    if response_format is not None:
        req["response_format"] = response_format
    return req


def _backoff(attempt: int) -> float:
    return min(8.0, 0.5 * 2 ** attempt)


def _retry_after(exc: BaseException) -> float | None:
    """The seconds a 429 or 503 asks to wait (``Retry-After``), at most 60."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(60.0, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None
