"""MABPD, the multi-agent bias-detection method (SPEC 1): cues -> agents -> store -> router -> sad ->
verifier -> pipeline. Which agents take part is the roster, ``mk.mabpd.roster``.

>>> import mabpd_kit as mk
>>> mk.mabpd.Pipeline().analyze("Democrats rammed through a so-called reform.").route
'strong_fast_path'
"""

from __future__ import annotations

from mabpd_kit import roster
from mabpd_kit.mabpd.agents import Agent, BiasAgent, EvidenceAgent, FramingAgent, agent_class, make_agents
from mabpd_kit.mabpd.cues import CUE_INFO, Cues, Quotation, analyse_cues, ground_span
from mabpd_kit.mabpd.pipeline import BatchResult, Decision, Pipeline
from mabpd_kit.mabpd.router import Route, Routing, route
from mabpd_kit.mabpd.sad import Round, SADResult, StopReason, Vote, WeighedArgument, debate, stop_stats, vote, weigh
from mabpd_kit.mabpd.schemas import AgentReport, Argument
from mabpd_kit.mabpd.simulator import SimSpec, Simulation, simulate
from mabpd_kit.mabpd.store import EvidenceStore, ScoreBreakdown, grounded_score, score, score_reports
from mabpd_kit.mabpd.verifier import VerifierAgent, VerifierReport, apply_verifier, rule_verify

__all__ = [
    "CUE_INFO", "Agent", "AgentReport", "Argument", "BatchResult", "BiasAgent", "Cues", "Decision", "EvidenceAgent",
    "EvidenceStore", "FramingAgent", "Pipeline", "Quotation", "Round", "Route", "Routing", "SADResult",
    "ScoreBreakdown", "SimSpec", "Simulation", "StopReason", "VerifierAgent", "VerifierReport", "Vote", "WeighedArgument", "analyse_cues",
    "agent_class", "apply_verifier", "debate", "ground_span", "grounded_score", "make_agents", "roster", "route",
    "rule_verify", "score", "score_reports", "simulate", "stop_stats", "vote", "weigh",
]
