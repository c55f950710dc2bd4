"""EvidenceStore and the deterministic score (SPEC 1.3-1.4): an agent that says biased without a valid
span contributes 0 (:func:`score_reports`).

>>> from mabpd_kit.config import Config
>>> score({"bias": 0.8, "evidence": 0.4, "framing": 0.0}, Config()).score
0.5
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
    """The ``config.scoring`` field weighing each roster agent: ``w_<name>``, or ``w_added`` for an added one."""
    fields = ScoringConfig.model_fields
    return {s.name: f"w_{s.name}" if f"w_{s.name}" in fields else "w_added" for s in roster.specs()}


class EvidenceStore(BaseModel):
    """Every span the agents cited, validated against ``text``; invalid ones kept (:meth:`valid` counts)."""

    text: str
    spans: list[Span] = Field(default_factory=list)

    @classmethod
    def build(cls, text: str, spans: Iterable[Span], ratio: float = 0.90,
              to_orig: Callable[[int, int], tuple[int | None, int | None]] | None = None) -> EvidenceStore:
        """Validate ``spans`` against ``text`` (one agent's duplicates merged); ``to_orig`` fills raw offsets."""
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
    """Weighted sum of the agents' scores (SPEC 1.4), renormalised over the agents present."""
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
