"""Typed results of LLM calls: :class:`Completion`, :class:`Structured`, :class:`Capabilities`."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Capabilities", "Completion", "Structured", "TokenLogprob", "TopLogprob", "cached_tokens", "completion_from_json"]

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
    """One chat completion: the text and everything needed to account for it.

    ``cached`` is True when the answer came from the record/replay cache (no call was made;
    tokens and latency are those of the original call). ``tag`` is the caller's label (e.g.
    ``"bias-agent"``) used in usage tables. ``cached_tokens`` are the prompt tokens the *server*
    served from its prefix cache (``usage.prompt_tokens_details.cached_tokens``; billed at the
    cached-input price), unrelated to ``cached``. ``batch`` marks an answer that came back through
    the Batch API (:mod:`mabpd_kit.llm.batch`; billed at the batch discount). ``refusal`` is the server's refusal message when the
    model declined to answer (OpenAI's ``message.refusal``); such replies are never cached.
    """

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
    """Our Completion from a chat-completions response body (also a Batch API output line), read as plain dicts.
    Raises KeyError, TypeError, ... on a body that is not a chat completion."""
    choice = data["choices"][0]
    message = choice.get("message") or {}
    lp = (choice.get("logprobs") or {}).get("content") or None
    logprobs = None if lp is None else [
        TokenLogprob(token=t["token"], logprob=t["logprob"],
                     top=[TopLogprob(token=a["token"], logprob=a["logprob"]) for a in (t.get("top_logprobs") or [])])
        for t in lp
    ]
    usage = data.get("usage") or {}
    return Completion(
        text=message.get("content") or "",
        model=data.get("model") or model,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=cached_tokens(usage),
        latency_s=latency,
        logprobs=logprobs,
        tag=tag,
        refusal=str(message["refusal"]) if message.get("refusal") else None,
    )


def cached_tokens(usage: Any) -> int:
    """Prompt tokens a server served from its prefix cache: OpenAI, vLLM and llama.cpp report
    ``prompt_tokens_details.cached_tokens``, DeepSeek ``prompt_cache_hit_tokens``; 0 when absent."""
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
    """A validated structured answer.

    ``value`` is the schema instance; ``mode`` how it was obtained (``"json_schema"``,
    ``"json_object"`` or ``"text"``); ``repaired`` whether the repair retry was needed;
    ``calls`` every Completion made (their usage: ``mabpd_kit.types.Usage.of(calls)``); ``completion`` the last one.
    """

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
