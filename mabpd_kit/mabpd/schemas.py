"""The typed records of the MABPD agents (SPEC 1.2, 1.6) and what an LLM agent must return.

:class:`AgentReport` (a round-1 analysis) and :class:`Argument` (a SAD debate move) are the same
for rule-based and LLM agents; each carries its ``mode``, ``model`` and ``usage``
(:class:`~mabpd_kit.types.Usage`, all zero for rule-based work). The ``*Output`` models are the
structured replies an LLM agent must give (validated; a malformed reply gets one repair retry).
Their fields are declared in the order the prompts ask for them - the reasoning (``rationale``)
first, then the quoted spans or evidence and the anticipated counter-argument, the verdict, the
confidence and the score last - so a model that writes the JSON in schema order (constrained
decoding does) reasons before it decides. Parsing accepts any key order. ``counter_argument`` is optional on parse (a
reply without it still validates, with ``""``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from mabpd_kit import roster
from mabpd_kit.types import Mode, Span, Usage, Verdict

__all__ = ["AgentReport", "Argument", "ArgumentOutput", "BiasOutput", "EvidenceItem", "EvidenceOutput",
           "FramingOutput", "QuotedSpan", "Role", "StepRecord"]

Role = Annotated[str, AfterValidator(roster.check)]
"""An agent's name: one on the roster (:mod:`mabpd_kit.roster`; bias, evidence, framing by default)."""


class StepRecord(BaseModel):
    """What every step's record carries: how it was made and what it cost."""

    mode: Mode = "rule"
    model: str | None = None
    usage: Usage = Usage()  # frozen: one shared zero record for every rule-based step


class AgentReport(StepRecord):
    """One agent's independent analysis (round 1).

    ``spans`` support a biased reading (bias spans, supporting evidence phrases, framing spans);
    ``counter_spans`` are phrases that fail to support it (grounding: attributed quotations,
    sources, figures). ``score`` is the agent's own score in [0, 1] (bias, evidence, framing score...).
    """

    agent: Role
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    score: float = Field(ge=0, le=1)
    spans: list[Span] = Field(default_factory=list)
    counter_spans: list[Span] = Field(default_factory=list)
    rationale: str = ""
    counter_argument: str = Field("", description="the strongest objection to its own verdict (SPEC 1.6), carried into round 1")

    def grounded(self) -> bool:
        """Does the agent cite at least one valid span for its (biased) reading?"""
        for s in self.spans:  # a loop, not any(<generator>): asked of every report several times a sentence
            if s.valid:
                return True
        return False


class Argument(StepRecord):
    """A SAD argument (SPEC 1.6): verdict, at most ``sad.max_spans`` evidence spans, confidence,
    an anticipated counter-argument. ``changed`` marks a verdict switch against the previous round."""

    agent: Role
    round: int
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    spans: list[Span] = Field(default_factory=list)
    counter_argument: str = ""
    rationale: str = ""
    changed: bool = False


# ---- what an LLM must return (validated; a malformed reply gets one repair retry) ----------


class QuotedSpan(BaseModel):
    """A phrase an LLM agent quotes from the article, with its category."""

    quote: str = Field(description="exact words copied from the article")
    category: str = Field(description="taxonomy type or lexicon category")
    explanation: str = ""


class EvidenceItem(BaseModel):
    """An evidence phrase: does it support a biased reading, or ground the text?"""

    quote: str = Field(description="exact words copied from the article")
    supports_bias: bool = Field(description="true if the phrase is evidence of bias, false if it grounds the text")
    explanation: str = ""


class BiasOutput(BaseModel):
    """What the LLM BiasAgent must return (validated; out-of-range numbers trigger the repair retry)."""

    rationale: str = ""
    spans: list[QuotedSpan] = Field(default_factory=list)
    counter_argument: str = Field("", description="the strongest objection to your verdict")
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    bias_score: float = Field(ge=0, le=1)


class EvidenceOutput(BaseModel):
    """What the LLM EvidenceAgent must return."""

    rationale: str = ""
    evidence: list[EvidenceItem] = Field(default_factory=list)
    counter_argument: str = Field("", description="the strongest objection to your verdict")
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    evidence_score: float = Field(ge=0, le=1)


class FramingOutput(BaseModel):
    """What the LLM FramingAgent must return."""

    rationale: str = ""
    patterns: list[QuotedSpan] = Field(default_factory=list)
    counter_argument: str = Field("", description="the strongest objection to your verdict")
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    framing_score: float = Field(ge=0, le=1)


class ArgumentOutput(BaseModel):
    """One SAD move by an LLM agent (SPEC 1.6)."""

    rationale: str = ""
    evidence: list[str] = Field(default_factory=list, description="at most 5 exact quotes from the article")
    counter_argument: str = Field("", description="the strongest objection to your verdict")
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
