"""Post-consensus verification (SPEC 1.7): a biased decision may become neutral, never the reverse.

The rule-based check overturns when no cited span is valid (``invalid``), when the strongest is a
protected term and nothing else remains (``protected``), or when it lies inside an attributed quotation
and no other span is in the author's voice (``quotation``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, Field

from mabpd_kit.config import Config
from mabpd_kit.injection import Instructions
from mabpd_kit.mabpd.agents import fence, llm_usage, messages, shown
from mabpd_kit.mabpd.cues import Cues, ground_span, lexicon_for
from mabpd_kit.mabpd.schemas import StepRecord
from mabpd_kit.mabpd.spans import inside
from mabpd_kit.types import Span, Verdict

if TYPE_CHECKING:
    from mabpd_kit.lexicon import Lexicon
    from mabpd_kit.llm import LLM

__all__ = ["Check", "VerifierAgent", "VerifierOutput", "VerifierReport", "apply_verifier", "rule_verify", "strongest"]

Check = Literal["upheld", "invalid", "protected", "quotation", "llm", "not_run"]


class VerifierReport(StepRecord):
    """What the verifier saw and decided."""

    input_label: Verdict
    verdict: Verdict = Field(description="the verifier's own reading")
    label: Verdict = Field(description="final label after the one-way rule")
    overturned: bool
    check: Check
    reason: str
    span: Span | None = None


def rule_verify(spans: Sequence[Span], reported: Sequence[tuple[int, int]], protected: Callable[[int, int], str | None],
                config: Config) -> VerifierReport:
    """Check the spans cited for biased; ``reported``: attributed quotations, ``protected(start, end)``:
    the lexicon's protected-term reason for a stretch, or None."""
    v = config.verifier
    valid = strongest(spans)
    if not valid:  # the burden of proof is not a switch (check_invalid has no way to uphold this)
        return _report("invalid", "neutral", _NO_VALID, None)
    top = valid[0]
    rest = valid[1:]
    if v.check_protected and top.start is not None and (why := protected(top.start, top.end)):
        others = [s for s in rest if not (s.start is not None and protected(s.start, s.end))]
        if not others:
            return _report("protected", "neutral", f"strongest span {top.text!r} is protected: {why}", top)
        top, rest = others[0], others[1:]
    if v.check_quotation and inside(top.start, top.end, reported):
        own_voice = [s for s in rest if not inside(s.start, s.end, reported)]
        if not own_voice:
            return _report("quotation", "neutral",
                           f"strongest span {top.text!r} is inside a quotation attributed to a source, "
                           "and no other span is in the author's voice", top)
        top = own_voice[0]
    return _report("upheld", "biased", f"strongest span {top.text!r} is in the author's voice", top)


_NO_VALID = "no cited span was found in the text: a biased decision needs a valid span (burden of proof)"


def strongest(spans: Sequence[Span]) -> list[Span]:
    """The valid spans, strongest first (score, then position)."""
    return sorted((s for s in spans if s.valid), key=lambda s: (-s.score, s.start or 0))


def _report(check: Check, verdict: Verdict, reason: str, span: Span | None) -> VerifierReport:
    return VerifierReport(input_label="biased", verdict=verdict, label=verdict, overturned=verdict == "neutral",
                          check=check, reason=reason, span=span)


def apply_verifier(label: Verdict, report: VerifierReport) -> VerifierReport:
    """Enforce the one-way rule on a verifier report: only biased -> neutral is possible."""
    final: Verdict = "neutral" if label == "biased" and report.verdict == "neutral" else label
    return report.model_copy(update={"input_label": label, "label": final, "overturned": final != label})


def not_run(label: Verdict) -> VerifierReport:
    """The report for a label the verifier does not re-examine (neutral)."""
    return VerifierReport(input_label=label, verdict=label, label=label, overturned=False, check="not_run",
                          reason="the verifier only re-examines biased decisions")


class VerifierOutput(BaseModel):
    # the docstring is the schema's description, sent to the endpoint: changing it changes every request
    """The LLM verifier's reading of a biased decision: reasoning, then the span, then the verdict
    (the order the prompt asks for; a reply in any key order validates)."""

    reply_hints: ClassVar[dict[str, str]] = {"reason": "one sentence", "strongest_quote": "copied exactly"}
    reply_width: ClassVar[int] = 93

    reason: str = Field(description="one sentence: why the evidence does or does not hold")
    strongest_quote: str = Field("", description="the strongest cited span, copied exactly from the article")
    verdict: Verdict


class VerifierAgent:
    """Post-consensus check (SPEC 1.7), rule-based (:func:`rule_verify`) or LLM; only biased -> neutral."""

    role = "verifier"

    def __init__(self, config: Config | None = None, llm: LLM | None = None, lexicon: Lexicon | None = None) -> None:
        from mabpd_kit.llm import online  # the LLM layer loads only when a verifier is made

        self.config = config or Config()
        self.llm = online(llm)
        self.lexicon = lexicon or lexicon_for(self.config)

    @property
    def model(self) -> str | None:
        if self.llm is None:
            return None
        return self.config.agents.models.get("verifier") or self.llm.model

    async def verify(self, label: Verdict, spans: Sequence[Span], cues: Cues) -> VerifierReport:
        """Check a decision; a neutral label is returned unchanged."""
        if label != "biased":
            return not_run(label)
        guard = (cues.injection or Instructions(cues.text)) if self.config.agents.injection_guard else None
        ratio, share = self.config.text.fuzzy_ratio, self.config.text.evidence_max_share
        # the one rule again (text addressed to the model upholds nothing, whoever cites it)
        spans = [ground_span(s, cues.text, ratio, guard, max_share=share) if s.valid else s for s in spans]
        if self.llm is None:
            protected = lambda a, b: self.lexicon.protected_reason(cues.text, a, b)  # noqa: E731
            return apply_verifier(label, rule_verify(spans, cues.reported, protected, self.config))
        valid = strongest(spans)
        if not valid:  # nothing grounded to uphold: no call, whatever the model would say
            return apply_verifier(label, _report("invalid", "neutral", _NO_VALID, None))
        cited = "\n".join(f'- "{s.text}" ({s.category}, cited by the {s.agent} agent'
                          + ("" if s.valid else ", NOT FOUND in the article") + ")" for s in spans) or "- none"
        res = await self.llm.astructured(
            messages("verifier", VerifierOutput, article=shown(cues.text, guard), spans=fence(cited)),
            VerifierOutput, model=self.model,
            temperature=self.config.agents.temperature, max_tokens=self.config.agents.max_tokens, tag="mabpd.verifier")
        out: VerifierOutput = res.value
        span, reason = None, out.reason
        if out.strongest_quote:
            span = ground_span(Span(text=out.strongest_quote, agent="verifier"), cues.text, ratio, guard, max_share=share)
        if out.verdict == "biased" and (span is None or not span.valid):
            said = f"its quote {out.strongest_quote!r} is not in the text" if out.strongest_quote else "it quoted nothing"
            span = valid[0]
            reason = f"{out.reason} [{said}; shown instead: the strongest valid span {span.text!r}]"
        rep = VerifierReport(input_label=label, verdict=out.verdict, label=out.verdict, overturned=False,
                             check="llm", reason=reason, span=span, **llm_usage(res, self.model))
        return apply_verifier(label, rep)
