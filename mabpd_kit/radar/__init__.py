"""RADAR: role-anchored debate for half-truth detection, with dual-threshold early stopping (SPEC 3).

>>> import mabpd_kit as mk
>>> [r.label for r in mk.radar.RadarDebate(llm=None).run_many(mk.radar.example_claims(), progress=False)]
['TRUE', 'HALF-TRUE', 'FALSE']
"""

from __future__ import annotations

from mabpd_kit.radar.calibrate import (
    CalibrationResult,
    calibrate,
    evaluate_rule,
    pareto_front,
    simulate_trajectories,
    split_dev_test,
)
from mabpd_kit.radar.debate import SYSTEMS, RadarDebate, RadarResult, RadarResults, run_systems
from mabpd_kit.radar.evidence import Evidence, EvidencePool, Turn, cited_numbers, example_claims, format_evidence
from mabpd_kit.radar.judge import (
    SOURCE_ORDER,
    STOP_OPTIONS,
    JudgeProbabilities,
    LLMJudge,
    Source,
    choose_source,
    option_probs_from_logprobs,
    option_probs_from_samples,
    option_probs_from_stated,
    parse_option,
    source_chain,
    weakest_source,
)
from mabpd_kit.radar.logs import LoggedRun, load_radar_decisions, load_radar_run
from mabpd_kit.radar.replies import ReplyNote, reply_note
from mabpd_kit.radar.rules import OFFLINE_TAG, RuleBasedRadar
from mabpd_kit.radar.stopping import (
    EPS,
    ONE_HOT,
    ROUND_NAMES,
    DualThreshold,
    RoundState,
    StopDecision,
    StopReason,
    Trajectory,
    argmax_label,
    replay,
    replay_frame,
    trajectories_frame,
)

__all__ = [
    "EPS", "OFFLINE_TAG", "ONE_HOT", "ROUND_NAMES", "SOURCE_ORDER", "STOP_OPTIONS", "SYSTEMS", "CalibrationResult",
    "DualThreshold", "Evidence", "EvidencePool", "JudgeProbabilities", "LLMJudge", "LoggedRun", "RadarDebate",
    "RadarResult", "RadarResults", "ReplyNote", "RoundState", "RuleBasedRadar", "Source", "StopDecision", "StopReason",
    "Trajectory", "Turn", "argmax_label", "calibrate", "choose_source", "cited_numbers", "evaluate_rule",
    "example_claims", "format_evidence", "load_radar_decisions", "load_radar_run", "option_probs_from_logprobs",
    "option_probs_from_samples", "option_probs_from_stated", "pareto_front", "parse_option", "replay", "replay_frame",
    "reply_note", "run_systems", "simulate_trajectories", "source_chain", "split_dev_test", "trajectories_frame",
    "weakest_source"
]
