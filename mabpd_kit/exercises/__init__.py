"""Exercise data and hidden reference checks for the course's exercises.

Each exercise's data comes from the student's seed (:func:`student_seed`), chosen so that the plausible wrong
answers give another result than the right one, and never from the benchmark copies. The ``check_*`` functions
compute the expected answer with their own plain code, raise ``AssertionError`` naming the mistake, and return a
one-line success message."""

from __future__ import annotations

from mabpd_kit.exercises._common import student_seed
from mabpd_kit.exercises.evaluation import (
                                            check_cohens_h,
                                            check_large,
                                            check_paired,
                                            check_rates,
                                            check_split,
                                            threshold_data,
)
from mabpd_kit.exercises.foundations import (
                                            check_burden_flip,
                                            check_grounded,
                                            check_lexicon,
                                            check_quotes,
                                            check_reported_speech,
)
from mabpd_kit.exercises.identity import REASONS, check_asymmetry, check_pairs, cut_gap, pairs_log
from mabpd_kit.exercises.scoring import check_ablation_recall, check_single_agent
from mabpd_kit.exercises.stopping import (
                                            RADAR_PAIR,
                                            check_calibrated_pair,
                                            check_stopping_report,
                                            stopping_data,
                                            stopping_grid,
)
from mabpd_kit.exercises.verifier import STEPS, check_blame, check_recall_reason, check_verifier_trade, verifier_data

__all__ = ["RADAR_PAIR", "REASONS", "STEPS", "check_ablation_recall", "check_asymmetry", "check_blame", "check_burden_flip", "check_calibrated_pair", "check_cohens_h", "check_grounded", "check_large", "check_lexicon", "check_paired", "check_pairs", "check_quotes", "check_rates", "check_recall_reason", "check_reported_speech", "check_single_agent", "check_split", "check_stopping_report", "check_verifier_trade", "cut_gap", "pairs_log", "stopping_data", "stopping_grid", "student_seed", "threshold_data", "verifier_data"]
