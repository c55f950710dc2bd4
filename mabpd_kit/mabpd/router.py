"""Router (SPEC 1.5, 1.9): fast paths when the agents' signals are clear, debate otherwise.

``config.router.mode``: ``consensus`` (neutral veto, strong and moderate fast paths, else SAD),
``boundary`` (ablation "no-debate") or ``verdict`` (ablation "single-agent"). Only a biased verdict
with a valid span counts as biased; :attr:`Routing.reason` says which rule applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel

from mabpd_kit.config import Config
from mabpd_kit.mabpd.schemas import AgentReport
from mabpd_kit.types import Verdict

__all__ = ["Route", "Routing", "route"]

Route = Literal["neutral_veto", "strong_fast_path", "moderate_fast_path", "debate", "no_debate", "single_agent",
                "failed"]


class Routing(BaseModel):
    """Which path the router took and why (the label is None when the debate must decide)."""

    route: Route
    label: Verdict | None
    reason: str
    n_biased: int
    n_biased_grounded: int


def route(reports: Mapping[str, AgentReport], score: float, config: Config) -> Routing:
    """Apply the router to the agents' reports and the combined (grounded) score."""
    r = config.router
    biased = [a for a, rep in reports.items() if rep.verdict == "biased"]
    grounded = [a for a in biased if reports[a].grounded()]
    nb, ng = len(biased), len(grounded)
    counts = {"n_biased": nb, "n_biased_grounded": ng}
    if r.mode == "verdict":
        return _verdict(reports, counts)
    if r.mode == "boundary":
        return _boundary(score, ng, config, "", counts)
    if score < r.neutral_veto_below and ng == 0:
        return Routing(route="neutral_veto", label="neutral", **counts,
                       reason=f"score {score:.2f} < {r.neutral_veto_below:.2f} and no agent says biased with a valid span")
    if score >= r.strong_at_least and reports and ng == len(reports):
        return Routing(route="strong_fast_path", label="biased", **counts,
                       reason=f"score {score:.2f} >= {r.strong_at_least:.2f} and all {ng} agents say biased with valid spans")
    if score >= r.moderate_at_least and ng >= r.moderate_min_agents:
        return Routing(route="moderate_fast_path", label="biased", **counts,
                       reason=f"score {score:.2f} >= {r.moderate_at_least:.2f} and {ng} agents say biased with valid spans")
    if not config.sad.enabled:
        return _boundary(score, ng, config, "no fast path and the debate is off: ", counts)
    return Routing(route="debate", label=None, **counts,
                   reason=f"score {score:.2f}, {nb} biased verdict(s) ({ng} with a valid span): signals unclear, debate")


def _boundary(score: float, ng: int, config: Config, why: str, counts: dict[str, int]) -> Routing:
    b = config.scoring.boundary
    if score < b:
        return Routing(route="no_debate", label="neutral", **counts, reason=f"{why}score {score:.2f} < boundary {b:.2f}")
    if ng == 0:
        return Routing(route="no_debate", label="neutral", **counts,
                       reason=f"{why}score {score:.2f} >= boundary {b:.2f}, but no agent says biased with a valid span "
                              "(burden of proof)")
    return Routing(route="no_debate", label="biased", **counts, reason=f"{why}score {score:.2f} >= boundary {b:.2f}")


def _verdict(reports: Mapping[str, AgentReport], counts: dict[str, int]) -> Routing:
    if len(reports) != 1:
        raise ValueError(f"router.mode 'verdict' needs exactly one agent, got {sorted(reports)}")
    (agent, rep), = reports.items()
    if rep.verdict == "neutral":
        reason, label = f"the {agent} agent says neutral", "neutral"
    elif rep.grounded():
        reason, label = f"the {agent} agent says biased with a valid span", "biased"
    else:
        reason, label = f"the {agent} agent says biased but cites no valid span (burden of proof): neutral", "neutral"
    return Routing(route="single_agent", label=label, reason=reason, **counts)  # type: ignore[arg-type]
