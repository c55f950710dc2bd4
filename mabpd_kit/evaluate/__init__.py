"""Evaluation: score systems on the same items and compare them honestly.

- :mod:`.scores`: :func:`compare` scores any method's results (``runs.Results`` or a frame with ``id``, ``gold``,
  ``pred``, ``failed``) with a bootstrap CI of macro F1 and a paired bootstrap of every system against the first;
  reference LLM label columns of the items are scored as anchors.
- :mod:`.benchmark`: ``mabpd evaluate``'s MABPD wiring (each ``Config.ablation(name)`` through the pipeline,
  one resumable checkpoint per configuration); :mod:`.report`: :class:`Evaluation` (tables, note, files).
- :mod:`.spans`, :mod:`.analyses`: span scores and the paper's analyses, read from the decision traces.

A failed item counts as neutral (``failed_as=0``) and is reported in ``n_failed``, so a flaky run cannot look
better by dropping its hard items. Nothing here fits a weight or threshold; :func:`threshold_sweep` serves the
lesson's threshold adaptation on one half of a training split, never on test."""

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
