"""Evaluation: score systems on the same items and compare them honestly (:func:`compare`, ``mabpd evaluate``'s
:func:`evaluate`, :class:`Evaluation`, span scores and the paper's analyses read from the decision traces).

A failed item counts as neutral and is reported in ``n_failed``, so a flaky run cannot look better by dropping its
hard items. Nothing here fits a weight or threshold."""

from __future__ import annotations

from mabpd_kit.evaluate import llm_labels  # the ten real LLMs' zero-shot BABE labels: mk.evaluate.llm_labels
from mabpd_kit.evaluate.analyses import (
    PaperAnalyses,
    agent_independence,
    annotator_uncertainty,
    failure_modes,
    human_agreement,
    paper_analyses,
    trace_flags,
)
from mabpd_kit.evaluate.benchmark import BENCHMARKS, canonical, evaluate, load_benchmark, trace_figures
from mabpd_kit.evaluate.report import ANCHOR_KIND, Evaluation
from mabpd_kit.evaluate.scores import compare, flip_counts, predictions, score_system, threshold_sweep
from mabpd_kit.evaluate.spans import agent_spans, decision_spans, span_table
from mabpd_kit.metrics.spans import span_scores, word_tokens

__all__ = [
    "ANCHOR_KIND", "BENCHMARKS", "Evaluation", "PaperAnalyses", "agent_independence", "agent_spans",
    "annotator_uncertainty", "canonical", "compare", "decision_spans", "evaluate", "failure_modes", "flip_counts",
    "human_agreement", "llm_labels", "load_benchmark", "paper_analyses", "predictions", "score_system", "span_scores",
    "span_table", "trace_flags", "threshold_sweep", "trace_figures", "word_tokens"
]
