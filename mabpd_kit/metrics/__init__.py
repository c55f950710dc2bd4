"""Classification metrics and bootstrap significance, written out so students can read them.

Every function takes plain sequences (lists, numpy arrays, pandas Series) and returns floats or
small typed records. Labels may be 0/1, booleans or the strings ``"biased"`` / ``"neutral"``;
the positive class of the binary metrics is *biased* (1). Three-way labels (``"TRUE"``,
``"HALF-TRUE"``, ``"FALSE"``) work with :func:`accuracy`, :func:`macro_f1`, :func:`confusion`
and :func:`per_class_f1`. Each metric agrees with scikit-learn / scipy to 1e-9 (tests check it).

>>> y    = [1, 1, 0, 0, 1]
>>> pred = [1, 0, 0, 1, 1]
>>> round(f1(y, pred), 3), round(macro_f1(y, pred), 3)
(0.667, 0.583)

Significance: two systems scored on the *same* items are compared with a paired bootstrap
(:func:`paired_bootstrap`): resample items with replacement, recompute both scores on the same
resample, and look at the distribution of the difference. :func:`bootstrap_ci` gives a
confidence interval for any statistic, resampling whole groups (e.g. all rows of one question)
when ``groups`` is given.

Three modules, one namespace (``from mabpd_kit.metrics import ...`` finds every name):
:mod:`.classification` (the metrics), :mod:`.bootstrap` (intervals and paired comparisons),
:mod:`.agreement` (Fleiss' kappa, point-biserial r). Only numpy is imported; scipy and pandas load
inside the functions that need them.
"""

from __future__ import annotations

from mabpd_kit.metrics.agreement import fleiss_kappa, point_biserial, ratings_table
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
    "BootstrapResult",
    "accuracy",
    "bootstrap_ci",
    "classification_report",
    "confusion",
    "f1",
    "fleiss_kappa",
    "macro_f1",
    "metric_ci",
    "paired_bootstrap",
    "per_class_f1",
    "point_biserial",
    "precision",
    "ratings_table",
    "recall",
]
