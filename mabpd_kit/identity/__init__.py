"""Identity bias in multi-agent debate (SPEC 4): is an agent swayed by who gave an answer (a peer, or
itself) rather than by what the answer says?"""

from __future__ import annotations

from mabpd_kit.identity.debate import DebateResults, build_messages, call_seed, debate_question, run_debate
from mabpd_kit.identity.logs import (
    CONDITIONS,
    LOG_COLUMNS,
    Condition,
    DebateRecord,
    LogRow,
    log_frame,
    read_logs,
    write_logs,
)
from mabpd_kit.identity.measures import (
    PAPER_CORRECTION_CUT,
    PAPER_SUBVERSION_CUT,
    PAPER_TABLE,
    IBCResult,
    IdentityReport,
    disagreement_pairs,
    ibc,
    identity_report,
    identity_summary,
    majority_accuracy,
    paper_table,
    trust_cut,
    trust_rates,
)
from mabpd_kit.identity.questions import (
    Parsed,
    Question,
    is_correct,
    load_questions,
    normalise_number,
    parse_answer,
    parse_choice,
    parse_number,
    questions_from_frame,
)
from mabpd_kit.identity.simulator import BeliefSpec, recovered_gap, recovery_sweep, simulate, simulate_questions

__all__ = [
    "CONDITIONS", "LOG_COLUMNS", "PAPER_CORRECTION_CUT", "PAPER_SUBVERSION_CUT", "PAPER_TABLE", "BeliefSpec",
    "Condition", "DebateRecord", "DebateResults", "IBCResult", "IdentityReport", "LogRow", "Parsed", "Question",
    "build_messages", "call_seed", "debate_question", "disagreement_pairs", "ibc", "identity_report",
    "identity_summary", "is_correct", "load_questions", "log_frame", "majority_accuracy", "normalise_number",
    "paper_table", "parse_answer", "parse_choice", "parse_number", "questions_from_frame", "read_logs",
    "recovered_gap", "recovery_sweep", "run_debate", "simulate", "simulate_questions", "trust_cut", "trust_rates",
    "write_logs"
]
