"""Consensus router (SPEC 1.5): decide cheaply when the agents' signals are clear, debate otherwise.

The paper names the routes; the cut-offs are the toolkit's defaults (``config.router``)::

    neutral veto        score < 0.30 and no agent says biased with a valid span  -> neutral, no debate
    strong fast path    score >= 0.75 and every agent says biased                 -> biased (verified)
    moderate fast path  score >= 0.60 and >= 2 agents say biased, each with a valid span -> biased (verified)
    otherwise           full Structured Argument Debate

With the debate switched off (ablation "no-debate") the router is bypassed: score >= 0.50 boundary.
"""

from __future__ import annotations

from typing import Literal, Mapping

from pydantic import BaseModel

from mabpd_kit.config import Config
from mabpd_kit.mabpd.schemas import AgentReport
from mabpd_kit.types import Verdict

__all__ = ["Route", "Routing", "route"]

Route = Literal["neutral_veto", "strong_fast_path", "moderate_fast_path", "debate", "no_debate", "failed"]


class Routing(BaseModel):
    """Which path the router took and why (the label is None when the debate must decide)."""

    route: Route
    label: Verdict | None
    reason: str
    n_biased: int
    n_biased_grounded: int


def route(reports: Mapping[str, AgentReport], score: float, config: Config) -> Routing:
    """Apply the router to the agents' reports and the combined score."""
    r = config.router
    biased = [a for a, rep in reports.items() if rep.verdict == "biased"]
    grounded = [a for a in biased if any(s.valid for s in reports[a].spans)]
    nb, ng = len(biased), len(grounded)
    if not config.sad.enabled:
        label: Verdict = "biased" if score >= config.scoring.boundary else "neutral"
        return Routing(route="no_debate", label=label, n_biased=nb, n_biased_grounded=ng,
                       reason=f"debate off: score {score:.2f} vs boundary {config.scoring.boundary:.2f}")
    if score < r.neutral_veto_below and ng == 0:
        return Routing(route="neutral_veto", label="neutral", n_biased=nb, n_biased_grounded=ng,
                       reason=f"score {score:.2f} < {r.neutral_veto_below:.2f} and no agent says biased with a valid span")
    if score >= r.strong_at_least and reports and nb == len(reports):
        return Routing(route="strong_fast_path", label="biased", n_biased=nb, n_biased_grounded=ng,
                       reason=f"score {score:.2f} >= {r.strong_at_least:.2f} and all {nb} agents say biased")
    if score >= r.moderate_at_least and ng >= r.moderate_min_agents:
        return Routing(route="moderate_fast_path", label="biased", n_biased=nb, n_biased_grounded=ng,
                       reason=f"score {score:.2f} >= {r.moderate_at_least:.2f} and {ng} agents say biased with valid spans")
    return Routing(route="debate", label=None, n_biased=nb, n_biased_grounded=ng,
                   reason=f"score {score:.2f}, {nb} biased verdict(s) ({ng} grounded): signals unclear, debate")
