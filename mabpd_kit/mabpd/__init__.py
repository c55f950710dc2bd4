"""MABPD, the multi-agent bias-detection method (SPEC 1), one module per step of its flow:

``cues`` (one scan of a sentence) -> ``agents`` (bias, evidence, framing; rule-based or LLM)
-> ``store`` (EvidenceStore, the weighted score) -> ``router`` (fast paths or debate) -> ``sad``
(Structured Argument Debate) -> ``verifier`` (biased may become neutral) -> ``pipeline``
(:class:`Decision` with the full trace; :class:`BatchResult` via the one batch runner).

Which agents take part is the agent roster, ``mk.mabpd.roster`` (:mod:`mabpd_kit.roster`): one line
per agent (name, class, prompt, weight, title, colour); a fourth agent is a class, a prompt and a line.

>>> import mabpd_kit as mk
>>> d = mk.mabpd.Pipeline().analyze("Democrats rammed through a so-called reform.")
>>> d.label, d.route
('biased', 'strong_fast_path')
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
