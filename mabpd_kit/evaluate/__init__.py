"""Evaluation: score systems on the same items and compare them honestly.

Three modules, one namespace (``from mabpd_kit.evaluate import ...``):

- :mod:`.scores` is generic over any method. :func:`compare` takes each system's results (any
  :class:`mabpd_kit.runs.Results`, or a frame, with ``id``, ``gold``, ``pred`` and ``failed``
  columns from ``to_frame()``) and scores them: accuracy, precision, recall, binary F1 (positive
  class 1 = biased), macro F1 with a bootstrap confidence interval, and a paired bootstrap of every
  system against the *first* one on the same items (difference, CI and two-sided p; 10,000
  resamples by default, ``Config().metrics``). Three-way labels (RADAR's TRUE / HALF-TRUE / FALSE)
  get accuracy and macro F1. Where the items carry other systems' predictions (the BABE training
  file has ten LLMs' zero-shot ``*_label`` columns), those are scored on the same items as
  reference anchors.
- :mod:`.benchmark` is the MABPD wiring behind ``mabpd evaluate --dataset babe --split train
  --configs full,no-debate,single-agent``: for each configuration name (``Config.ablation(name)``)
  :func:`evaluate` runs :meth:`mabpd_kit.mabpd.Pipeline.analyze_many` on every item, streaming
  decisions to a JSONL checkpoint per configuration (rerun and finished items are reused:
  resumable, and with an LLM the response cache makes repeats free), then hands the results to
  :func:`compare`.
- :mod:`.report`: :class:`Evaluation` holds the tables, the closing note and writes the files.
- :mod:`.spans` and :mod:`.analyses` read the MABPD decision traces: span scores against annotated
  biased words (BABE's ``biased_words``; token overlap, :mod:`mabpd_kit.metrics.spans`) per agent and
  for the decision's spans (:attr:`Evaluation.spans`), and the paper's own analyses - agent
  independence (appendix O), echo-chamber convergence and verifier sycophancy (appendix P), Fleiss'
  kappa with the human majority (:attr:`Evaluation.analyses`). Definitions: docs/evaluation.md.

Outputs (``--out``, default ``reports/evaluate/<dataset>-<split>``): ``results.csv`` (one row
per item and system), ``metrics.csv``, ``comparisons.csv``, ``spans.csv`` (where the items have
``biased_words``), ``analyses.csv``, ``report.md`` (tables and closing note), ``chart.svg`` /
``chart.png`` and ``checkpoints/*.jsonl``.

Scoring rule for failed items: a decision that failed (bad input, endpoint error) is counted
as *neutral* (``failed_as=0``) and reported in the ``n_failed`` column, so a flaky run cannot look
better by dropping its hard items.

Zero-shot discipline: nothing here fits a weight or threshold. :func:`threshold_sweep` exists
for the notebook's *threshold adaptation* exercise, which calibrates on one half of the BABE
training split and reports on the other half; never on a test split.
"""

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
    "ANCHOR_KIND",
    "BENCHMARKS",
    "Evaluation",
    "PaperAnalyses",
    "agent_independence",
    "agent_spans",
    "annotator_uncertainty",
    "canonical",
    "compare",
    "decision_spans",
    "evaluate",
    "failure_modes",
    "flip_counts",
    "human_agreement",
    "llm_labels",
    "load_benchmark",
    "paper_analyses",
    "predictions",
    "score_system",
    "span_scores",
    "span_table",
    "trace_flags",
    "threshold_sweep",
    "trace_figures",
    "word_tokens",
]
