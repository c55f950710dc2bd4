"""Sending one chat-completions request, as the server's profile (:mod:`.profiles`) says.

A remote server gets the ``openai`` SDK's own retries (429 with ``Retry-After``, 5xx, dropped
connections, time-outs). A server that computes on this machine (``profile.local_compute``) gets no
second copy of a timed-out request, because it is still computing the first one and a copy would
queue behind it and time out in turn; its time-out grows with the prompt; dropped connections, 429
and 5xx are still sent again (a 5xx that refuses the ``response_format`` is not: the client falls back).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mabpd_kit.config import LLMConfig

    from .errors import EndpointError
    from .profiles import ServerProfile

__all__ = ["build_request", "send"]


async def send(client: Any, request: dict[str, Any], prof: ServerProfile, cfg: LLMConfig,
               error: Callable[..., EndpointError]) -> Any:
    """The parsed body of the answer to ``request`` (``client``: an ``openai.AsyncOpenAI``).

    ``error(exc, request, timeout_s=, retries=)`` builds the key-free error for a local time-out; other
    SDK errors propagate for the caller to turn into one."""
    import openai

    body = {**request, **prof.extra_body()}
    timeout = prof.timeout(cfg.timeout_s, request, cfg.timeout_per_1k_chars_s)
    if prof.retry_timeouts():
        return await client.post("/chat/completions", body=body, cast_to=object,
                                 options={"timeout": timeout, "max_retries": cfg.max_retries})
    for attempt in range(cfg.max_retries + 1):
        try:
            return await client.post("/chat/completions", body=body, cast_to=object,
                                     options={"timeout": timeout, "max_retries": 0})
        except openai.APITimeoutError as exc:
            raise error(exc, request, timeout_s=timeout, retries=0) from None
        except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
            status = getattr(exc, "status_code", None)
            if attempt == cfg.max_retries or prof.refuses_mode(status, str(getattr(exc, "message", "") or "")):
                raise
            await asyncio.sleep(min(8.0, 0.5 * 2 ** attempt))
    raise AssertionError("unreachable")


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
