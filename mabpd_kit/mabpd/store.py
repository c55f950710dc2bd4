"""EvidenceStore and the deterministic score (SPEC 1.3-1.4).

After the three agents have reported, everything they pointed at goes into one
:class:`EvidenceStore`: bias spans, evidence phrases and framing spans, each with its source
agent, category and offsets. Every span is validated against the cleaned text (exact after
normalisation, else fuzzy ratio >= ``config.text.fuzzy_ratio``; :func:`~.cues.ground_span`). An invalid span - a "quote" that
is not in the article, the typical LLM hallucination - is *kept* (so you can see it, struck
through) but never counts as evidence.

The score is a plain weighted sum of the three agents' scores::

    score = 0.50 * bias + 0.25 * evidence + 0.25 * framing          (paper weights, config.scoring.weights)

compared with the fixed 0.50 boundary. When an ablation removes agents the weights of the
remaining ones are renormalised to sum to one, so the scale (and the boundary) keep their meaning.

>>> from mabpd_kit.config import Config
>>> breakdown = score({"bias": 0.8, "evidence": 0.4, "framing": 0.0}, Config())
>>> breakdown.score
0.5
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping

from pydantic import BaseModel, Field

from mabpd_kit.config import Config
from mabpd_kit.mabpd.cues import ground_span
from mabpd_kit.types import Span

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ground_span", "EvidenceStore", "ScoreBreakdown", "score", "AGENT_WEIGHT_FIELDS"]

AGENT_WEIGHT_FIELDS = {"bias": "w_bias", "evidence": "w_evidence", "framing": "w_framing"}
"""Which ``config.scoring`` field weighs which agent's score (to set one: ``config.replace(**{"scoring.w_bias": 0.6})``)."""


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
    """The score and the pieces it is made of (so a notebook can redraw it)."""

    components: dict[str, float]
    weights: dict[str, float]
    score: float
    boundary: float

    @property
    def above_boundary(self) -> bool:
        return self.score >= self.boundary


def score(components: Mapping[str, float], config: Config) -> ScoreBreakdown:
    """Weighted sum of the agents' scores (SPEC 1.4), weights renormalised over present agents.

    ``components`` maps agent name ("bias", "evidence", "framing") to its score in [0, 1].
    """
    role_weights = config.scoring.weights  # the one mapping (SAD's vote reads it too)
    raw = {a: role_weights[a] for a in components}
    total = sum(raw.values())
    weights = {a: (w / total if total > 0 else 0.0) for a, w in raw.items()}
    value = sum(weights[a] * float(components[a]) for a in components)
    return ScoreBreakdown(
        components={a: float(v) for a, v in components.items()},
        weights=weights,
        score=round(min(max(value, 0.0), 1.0), 12),
        boundary=config.scoring.boundary,
    )
