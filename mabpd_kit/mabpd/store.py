"""EvidenceStore and the deterministic score (SPEC 1.3-1.4).

After the three agents have reported, everything they pointed at goes into one
:class:`EvidenceStore`: bias spans, evidence phrases and framing spans, each with its source
agent, category and offsets. Every span is validated against the cleaned text by the one rule
(:func:`~.cues.ground_span`: its words found as whole words, up to typography only, the text's own
words and offsets kept; a content word, not a name, not the whole sentence). An invalid span - a
"quote" that is not in the article, the typical LLM hallucination, or a "." that is - is *kept* (so
you can see it, struck through) but never counts as evidence.

The score is a plain weighted sum of the agents' scores (the roster's agents, :mod:`mabpd_kit.roster`)::

    score = 0.50 * bias + 0.25 * evidence + 0.25 * framing          (paper weights, config.scoring.weights)

compared with the fixed 0.50 boundary. When an ablation removes agents the weights of the
remaining ones are renormalised to sum to one, so the scale (and the boundary) keep their meaning.

>>> from mabpd_kit.config import Config
>>> breakdown = score({"bias": 0.8, "evidence": 0.4, "framing": 0.0}, Config())
>>> breakdown.score
0.5

**Burden of proof** (SPEC 1.4): the pipeline scores the agents' *grounded* scores
(:func:`score_reports`). An agent that says *biased* but cites no span that can be found in the
text contributes 0 - its claim is not evidence. A neutral agent keeps its stated score. The
breakdown keeps both, so a notebook can show what the burden of proof removed::

    breakdown.stated      {"bias": 0.95, ...}   what the agents said
    breakdown.components  {"bias": 0.0,  ...}   what the score used
    breakdown.ungrounded  ["bias", ...]          agents whose biased claim was zeroed
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from pydantic import BaseModel, Field

from mabpd_kit import roster
from mabpd_kit.config import Config, ScoringConfig
from mabpd_kit.mabpd.cues import ground_span
from mabpd_kit.mabpd.schemas import AgentReport
from mabpd_kit.types import Span

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ground_span", "EvidenceStore", "ScoreBreakdown", "grounded_score", "score", "score_reports",
           "AGENT_WEIGHT_FIELDS", "weight_fields"]


def __getattr__(name: str) -> Any:
    if name == "AGENT_WEIGHT_FIELDS":
        return weight_fields()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def weight_fields() -> dict[str, str]:
    """Which ``config.scoring`` field weighs which agent's score, for every agent on the roster: ``w_<name>``
    for the SPEC's three (``config.replace(**{"scoring.w_bias": 0.6})``), ``w_added`` for an agent added to
    the roster (``config.replace(**{"scoring.w_added": {"tone": 0.4}})``). Also ``AGENT_WEIGHT_FIELDS``."""
    fields = ScoringConfig.model_fields
    return {s.name: f"w_{s.name}" if f"w_{s.name}" in fields else "w_added" for s in roster.specs()}


class EvidenceStore(BaseModel):
    """Every span the agents cited, validated against the cleaned ``text``.

    ``spans`` keeps invalid spans too (``valid=False``); use :meth:`valid` for the ones that count.
    """

    text: str
    spans: list[Span] = Field(default_factory=list)

    @classmethod
    def build(cls, text: str, spans: Iterable[Span], ratio: float = 0.90) -> "EvidenceStore":
        """Validate ``spans`` against ``text`` and keep them all (duplicates from one agent merged)."""
        store = cls(text=text)
        store.extend(spans, ratio=ratio)
        return store

    def extend(self, spans: Iterable[Span], ratio: float = 0.90) -> list[Span]:
        """Validate and add spans; returns the grounded copies (in input order)."""
        seen = {(s.agent, s.start, s.end, s.text, s.category) for s in self.spans}
        out = []
        for s in spans:
            g = ground_span(s, self.text, ratio)
            out.append(g)
            key = (g.agent, g.start, g.end, g.text, g.category)
            if key not in seen:
                seen.add(key)
                self.spans.append(g)
        return out

    def valid(self, agent: str | None = None) -> list[Span]:
        """Spans that count as evidence (optionally from one agent)."""
        return [s for s in self.spans if s.valid and (agent is None or s.agent == agent)]

    def invalid(self, agent: str | None = None) -> list[Span]:
        """Spans that could not be found in the text: shown, never counted."""
        return [s for s in self.spans if not s.valid and (agent is None or s.agent == agent)]

    def to_frame(self) -> "pd.DataFrame":
        """One row per span: agent, text, offsets, category, taxonomy, score, valid, reason, note."""
        import pandas as pd

        cols = ["agent", "text", "start", "end", "orig_start", "orig_end", "category", "taxonomy",
                "meta_category", "score", "valid", "reason", "note"]
        return pd.DataFrame([s.model_dump() for s in self.spans], columns=cols)


class ScoreBreakdown(BaseModel):
    """The score and the pieces it is made of (so a notebook can redraw it).

    ``components`` are the scores the weighted sum used (grounded, SPEC 1.4); ``stated`` are the
    scores the agents reported (empty when the components were given directly to :func:`score`).
    """

    components: dict[str, float]
    weights: dict[str, float]
    score: float
    boundary: float
    stated: dict[str, float] = Field(default_factory=dict, description="the agents' own scores, before the burden of proof")

    @property
    def above_boundary(self) -> bool:
        return self.score >= self.boundary

    @property
    def ungrounded(self) -> list[str]:
        """Agents whose stated score was replaced by 0 (biased without a valid span)."""
        return [a for a, v in self.stated.items() if v > 0 and self.components.get(a, 0.0) == 0.0]


def grounded_score(report: AgentReport) -> float:
    """An agent's score under the burden of proof: 0 for a biased verdict without a valid span."""
    if report.verdict == "biased" and not report.grounded():
        return 0.0
    return float(report.score)


def score(components: Mapping[str, float], config: Config, stated: Mapping[str, float] | None = None) -> ScoreBreakdown:
    """Weighted sum of the agents' scores (SPEC 1.4), weights renormalised over present agents.

    ``components`` maps agent name (on the roster: "bias", "evidence", "framing", ...) to its score in [0, 1];
    ``stated`` (optional, for the trace) the scores the agents reported before grounding.
    """
    scoring = config.scoring
    role_weights = scoring.weights  # the one mapping (SAD's vote reads it too)
    comps = {a: float(v) for a, v in components.items()}
    total = sum([role_weights[a] for a in comps])
    weights = {a: role_weights[a] / total for a in comps} if total > 0 else dict.fromkeys(comps, 0.0)
    value = sum([w * comps[a] for a, w in weights.items()])  # in agent order, as before
    return ScoreBreakdown(components=comps, weights=weights, score=round(min(max(value, 0.0), 1.0), 12),
                          boundary=scoring.boundary, stated={a: float(v) for a, v in stated.items()} if stated else {})


def score_reports(reports: Mapping[str, AgentReport], config: Config) -> ScoreBreakdown:
    """The pipeline's score: grounded components (:func:`grounded_score`), stated ones kept in the trace."""
    return score({a: grounded_score(r) for a, r in reports.items()}, config,
                 stated={a: float(r.score) for a, r in reports.items()})
