"""Classification metrics, bootstrap intervals and agreement, written out so students can read them.

Labels may be 0/1, booleans or ``"biased"`` / ``"neutral"`` (the positive class is biased, 1); three-way labels
work with :func:`accuracy`, :func:`macro_f1`, :func:`confusion` and :func:`per_class_f1`."""

from __future__ import annotations

from mabpd_kit.metrics.agreement import fleiss_kappa, point_biserial
from mabpd_kit.metrics.bootstrap import BootstrapResult, bootstrap_ci, metric_ci, paired_bootstrap
from mabpd_kit.metrics.classification import (
    accuracy,
    classification_report,
    confusion,
    f1,
    macro_f1,
    per_class_f1,
    precision,
    recall,
)

__all__ = [
    "BootstrapResult", "accuracy", "bootstrap_ci", "classification_report", "confusion", "f1", "fleiss_kappa",
    "macro_f1", "metric_ci", "paired_bootstrap", "per_class_f1", "point_biserial", "precision", "recall"
]
