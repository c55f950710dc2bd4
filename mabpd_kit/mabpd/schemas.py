"""The typed records of the MABPD agents (:class:`AgentReport`, :class:`Argument`) and the LLM agents'
reply contracts (``*Output``), from which :func:`reply_format` renders each prompt's ``$reply``."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel, Field

from mabpd_kit import roster
from mabpd_kit.types import Mode, Span, Usage, Verdict

__all__ = ["AgentReport", "Argument", "ArgumentOutput", "BiasOutput", "EvidenceItem", "EvidenceOutput",
           "FramingOutput", "QuotedSpan", "Role", "StepRecord", "reply_format"]

Role = Annotated[str, AfterValidator(roster.check)]
"""An agent's name: one on the roster (:mod:`mabpd_kit.roster`; bias, evidence, framing by default)."""


class StepRecord(BaseModel):
    """What every step's record carries: how it was made and what it cost."""

    mode: Mode = "rule"
    model: str | None = None
    usage: Usage = Usage()  # frozen: one shared zero record for every rule-based step


class AgentReport(StepRecord):
    """One agent's independent analysis (round 1): ``spans`` support a biased reading, ``counter_spans``
    ground the text; ``score`` is the agent's own score in [0, 1]."""

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
        return any(s.valid for s in self.spans)


class Argument(StepRecord):
    """A SAD argument (SPEC 1.6); ``changed`` marks a verdict switch against the previous round."""

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

    reply_hints: ClassVar[dict[str, str]] = {"spans.category": "its taxonomy type"}
    reply_width: ClassVar[int] = 95

    rationale: str = ""
    spans: list[QuotedSpan] = Field(default_factory=list)
    counter_argument: str = Field("", description="the strongest objection to your verdict")
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    bias_score: float = Field(ge=0, le=1)


class EvidenceOutput(BaseModel):
    """What the LLM EvidenceAgent must return."""

    reply_width: ClassVar[int] = 92

    rationale: str = ""
    evidence: list[EvidenceItem] = Field(default_factory=list)
    counter_argument: str = Field("", description="the strongest objection to your verdict")
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    evidence_score: float = Field(ge=0, le=1)


class FramingOutput(BaseModel):
    """What the LLM FramingAgent must return."""

    reply_hints: ClassVar[dict[str, str]] = {"patterns.category": "the pattern"}
    reply_width: ClassVar[int] = 92

    rationale: str = ""
    patterns: list[QuotedSpan] = Field(default_factory=list)
    counter_argument: str = Field("", description="the strongest objection to your verdict")
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    framing_score: float = Field(ge=0, le=1)


class ArgumentOutput(BaseModel):
    """One SAD move by an LLM agent (SPEC 1.6)."""

    reply_hints: ClassVar[dict[str, str]] = {"evidence": "exact quotes"}
    reply_width: ClassVar[int] = 90

    rationale: str = ""
    evidence: list[str] = Field(default_factory=list, description="at most 5 exact quotes from the article")
    counter_argument: str = Field("", description="the strongest objection to your verdict")
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)


def reply_format(contract: type[BaseModel]) -> str:
    """The prompt's reply-format sentence from a reply contract, broken once within ``reply_width``."""
    hints: dict[str, str] = getattr(contract, "reply_hints", {})
    unknown = set(hints) - {k for k in _paths(contract)}
    if unknown:
        raise TypeError(f"{contract.__name__}.reply_hints names no key: {sorted(unknown)}")
    text = "Reply with JSON, keys in this order: " + ", ".join(
        _key(name, info.annotation, hints) for name, info in contract.model_fields.items()) + "."
    width = getattr(contract, "reply_width", len(text))
    cut = text.rfind(" ", 0, width + 1) if len(text) > width else -1
    return text if cut < 0 else text[:cut] + "\n" + text[cut + 1:]


def _paths(contract: type[BaseModel]) -> list[str]:
    out = []
    for name, info in contract.model_fields.items():
        out.append(name)
        item = _item(info.annotation)
        if item is not None:
            out += [f"{name}.{sub}" for sub in item.model_fields]
    return out


def _item(annotation: Any) -> type[BaseModel] | None:
    """The item model of a ``list[Model]`` annotation, else None."""
    if get_origin(annotation) is list:
        (arg,) = get_args(annotation)
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _key(name: str, annotation: Any, hints: dict[str, str], parent: str = "") -> str:
    path = f"{parent}.{name}" if parent else name
    if get_origin(annotation) is Literal:
        return f"{name} (" + " or ".join(f'"{v}"' for v in get_args(annotation)) + ")"
    item = _item(annotation)
    if item is not None:
        return f"{name} (each " + ", ".join(_key(k, f.annotation, hints, name) for k, f in item.model_fields.items()) + ")"
    hint = hints.get(path) or ("true or false" if parent and annotation is bool else None)
    if hint is None:
        return name
    return f"{name}: {hint}" if parent else f"{name} ({hint})"
