"""Typed results of LLM calls: :class:`Completion`, :class:`Structured`, :class:`Capabilities`."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Capabilities", "Completion", "Structured", "TokenLogprob", "TopLogprob", "cached_tokens",
           "completion_from_json"]

T = TypeVar("T", bound=BaseModel)


class TopLogprob(BaseModel):
    """One alternative token at a position and its natural-log probability."""

    model_config = ConfigDict(frozen=True)
    token: str
    logprob: float


class TokenLogprob(BaseModel):
    """A generated token, its log-probability and the ``top`` alternatives (may be empty)."""

    model_config = ConfigDict(frozen=True)
    token: str
    logprob: float
    top: list[TopLogprob] = Field(default_factory=list)


class Completion(BaseModel):
    """One chat completion and its accounting. ``cached``: from the record/replay cache (no call made);
    ``cached_tokens``: prompt tokens the server served from its prefix cache; ``batch``: through the Batch API;
    ``refusal``: the model declined (never cached); ``tag``: the caller's label in usage tables."""

    model_config = ConfigDict(frozen=True)
    text: str
    model: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    batch: bool = False
    logprobs: list[TokenLogprob] | None = None
    tag: str = ""
    refusal: str | None = None

    @property
    def usable(self) -> bool:
        """Worth caching: some text, no refusal, not cut by a content filter."""
        return bool(self.text.strip()) and not self.refusal and self.finish_reason != "content_filter"


def completion_from_json(data: Any, model: str, latency: float, tag: str) -> Completion:
    """A Completion from a chat-completions body (or Batch API line); KeyError, TypeError, ... when it is none."""
    choice = data["choices"][0]
    message = choice.get("message") or {}
    lp = (choice.get("logprobs") or {}).get("content") or None
    logprobs = None if lp is None else [
        TokenLogprob(token=t["token"], logprob=t["logprob"],
                     top=[TopLogprob(token=a["token"], logprob=a["logprob"]) for a in (t.get("top_logprobs") or [])])
        for t in lp
    ]
    usage = data.get("usage") or {}
    return Completion(text=message.get("content") or "", model=data.get("model") or model,
                      finish_reason=choice.get("finish_reason"), prompt_tokens=int(usage.get("prompt_tokens") or 0),
                      completion_tokens=int(usage.get("completion_tokens") or 0), cached_tokens=cached_tokens(usage),
                      latency_s=latency, logprobs=logprobs, tag=tag,
                      refusal=str(message["refusal"]) if message.get("refusal") else None)


def cached_tokens(usage: Any) -> int:
    """Prompt tokens the server served from its prefix cache (``prompt_tokens_details.cached_tokens``, DeepSeek's
    ``prompt_cache_hit_tokens``); 0 when absent."""
    if not isinstance(usage, dict):
        return 0
    details = usage.get("prompt_tokens_details") or {}
    n = details.get("cached_tokens") if isinstance(details, dict) else None
    if n is None:
        n = usage.get("prompt_cache_hit_tokens")
    try:
        return max(int(n or 0), 0)
    except (TypeError, ValueError):
        return 0


class Structured(BaseModel, Generic[T]):
    """A validated answer: ``value``, ``mode``, ``repaired``, ``calls`` (every Completion made), ``completion``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    value: T
    completion: Completion
    mode: str
    repaired: bool = False
    calls: list[Completion] = Field(default_factory=list)


class Capabilities(BaseModel):
    """What an endpoint+model really supports, found by sending small probe requests."""

    model_config = ConfigDict(frozen=True)
    json_schema: bool = False
    json_object: bool = False
    logprobs: bool = False
    top_logprobs: bool = False
    strict_json_schema: bool = Field(False, description="json_schema with strict: true (all fields required, no extra keys)")
