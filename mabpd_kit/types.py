"""Small typed records shared across modules (kept here so no module imports a sibling just for a type)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Agent = Literal["bias", "evidence", "framing", "verifier", "lexicon", "judge", "politician", "scientist"]
Verdict = Literal["biased", "neutral"]
Mode = Literal["rule", "llm"]


class StepUsage(BaseModel):
    """LLM usage of one decision step (all zero for rule-based steps).

    Agent reports, debate arguments and the verifier's report all carry it, so a Decision's
    calls and tokens are the sum over its steps."""

    mode: Mode = "rule"
    model: str | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    repaired: bool = False


class Span(BaseModel):
    """A highlighted stretch of text.

    ``start``/``end`` are character offsets into the text the span was validated against
    (the cleaned text); ``orig_start``/``orig_end`` map back into the raw input when known.
    ``valid`` is False for a quoted span that could not be found in the text: it is kept,
    shown struck through, and never counts as evidence.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    start: int | None = None
    end: int | None = None
    orig_start: int | None = None
    orig_end: int | None = None
    category: str = "other"
    taxonomy: str | None = None
    meta_category: str | None = None
    agent: str = "bias"
    score: float = Field(0.0, ge=0.0, le=1.0)
    valid: bool = True
    reason: str = ""
    note: str = ""
