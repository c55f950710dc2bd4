"""EvidenceStore and the deterministic score (SPEC 1.3-1.4).

Every span the agents cited goes into one :class:`EvidenceStore`, checked against the cleaned text by
the one rule (:func:`~.cues.ground_span`) and given its raw-input offsets. An invalid span (a quote
not in the article) is kept, shown struck through, and never counts.

The score is the weighted sum of the agents' scores (``config.scoring.weights``, the roster's:
0.50 bias, 0.25 evidence, 0.25 framing), renormalised over the agents present, against the 0.50
boundary::

>>> from mabpd_kit.config import Config
>>> score({"bias": 0.8, "evidence": 0.4, "framing": 0.0}, Config()).score
0.5

Burden of proof (SPEC 1.4, :func:`score_reports`): an agent that says biased without a valid span
contributes 0. ``ScoreBreakdown.stated`` keeps what the agents said, ``components`` what the score
used, ``ungrounded`` who was zeroed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from mabpd_kit import roster
from mabpd_kit.config import Config, ScoringConfig
from mabpd_kit.mabpd.cues import ground_span
from mabpd_kit.mabpd.schemas import AgentReport
from mabpd_kit.types import Span

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ground_span", "EvidenceStore", "ScoreBreakdown", "grounded_score", "score", "score_reports",
           "weight_fields"]


def weight_fields() -> dict[str, str]:
    """Which ``config.scoring`` field weighs each roster agent: ``w_<name>`` for the SPEC's three, ``w_added``
    for an added agent (``config.replace(**{"scoring.w_added": {"tone": 0.4}})``)."""
    fields = ScoringConfig.model_fields
    return {s.name: f"w_{s.name}" if f"w_{s.name}" in fields else "w_added" for s in roster.specs()}


class EvidenceStore(BaseModel):
    """Every span the agents cited, validated against the cleaned ``text``.

    ``spans`` keeps invalid spans too (``valid=False``); use :meth:`valid` for the ones that count.
    """

    text: str
    spans: list[Span] = Field(default_factory=list)

    @classmethod
    def build(cls, text: str, spans: Iterable[Span], ratio: float = 0.90,
              to_orig: Callable[[int, int], tuple[int | None, int | None]] | None = None) -> EvidenceStore:
        """Validate ``spans`` against ``text`` and keep them all (duplicates from one agent merged);
        ``to_orig`` fills the raw-input offsets of a valid span that lacks them (an LLM's quote)."""
        store = cls(text=text)
        store.extend(spans, ratio=ratio, to_orig=to_orig)
        return store

    def extend(self, spans: Iterable[Span], ratio: float = 0.90,
               to_orig: Callable[[int, int], tuple[int | None, int | None]] | None = None) -> list[Span]:
        """Validate and add spans; returns the grounded copies (in input order)."""
        seen = {(s.agent, s.start, s.end, s.text, s.category) for s in self.spans}
        out = []
        for s in spans:
            g = ground_span(s, self.text, ratio)
            if to_orig is not None and g.orig_start is None and g.valid and g.start is not None and g.end is not None:
                a, b = to_orig(g.start, g.end)
                g = g.model_copy(update={"orig_start": a, "orig_end": b})
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

    def to_frame(self) -> pd.DataFrame:
        """One row per span: agent, text, offsets, category, taxonomy, score, valid, reason, note."""
        import pandas as pd

        cols = ["agent", "text", "start", "end", "orig_start", "orig_end", "category", "taxonomy",
                "meta_category", "score", "valid", "reason", "note"]
        return pd.DataFrame([s.model_dump() for s in self.spans], columns=cols)


class ScoreBreakdown(BaseModel):
    """The score and its pieces: ``components`` (grounded, what the sum used), ``stated`` (what the agents said)."""

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
    """Weighted sum of the agents' scores (SPEC 1.4), the weights renormalised over the agents present;
    ``stated``: the scores the agents reported before grounding (for the trace)."""
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
