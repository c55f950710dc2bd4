"""Agreement among raters (Fleiss' kappa) and the point-biserial correlation."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["fleiss_kappa", "point_biserial"]


def fleiss_kappa(table: Any) -> float:
    """Fleiss' kappa of ``table[i, j]`` (raters putting item i in category j; every row sums to the same m >= 2):
    (mean P_i - sum_j p_j^2) / (1 - sum_j p_j^2), with P_i the share of agreeing rater pairs on item i and p_j
    the overall share of category j. With two raters: Scott's pi."""
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] == 0:
        raise ValueError("table must be 2-D: items x categories counts")
    m = t.sum(axis=1)
    if not np.allclose(m, m[0]) or m[0] < 2:
        raise ValueError("every item needs the same number (>= 2) of ratings")
    m = m[0]
    p_i = ((t**2).sum(axis=1) - m) / (m * (m - 1))
    p_j = t.sum(axis=0) / t.sum()
    p_e = float((p_j**2).sum())
    if np.isclose(p_e, 1.0):
        raise ValueError("all ratings fall in one category: kappa is undefined")
    return float((p_i.mean() - p_e) / (1 - p_e))


def point_biserial(x_binary: Any, y: Any) -> float:
    """Point-biserial r of a 0/1 variable and a continuous ``y``: (M1 - M0) / s * sqrt(n1 n0 / n^2) (Pearson's r)."""
    x = np.asarray(x_binary, dtype=float)
    v = np.asarray(y, dtype=float)
    if x.shape != v.shape or x.ndim != 1:
        raise ValueError("x_binary and y must be 1-D and equally long")
    if not np.isin(x, (0.0, 1.0)).all():
        raise ValueError("x_binary must contain only 0 and 1")
    n1, n = x.sum(), len(x)
    n0 = n - n1
    s = v.std()
    if n1 == 0 or n0 == 0 or s == 0:
        raise ValueError("point-biserial r needs both groups present and y not constant")
    return float((v[x == 1].mean() - v[x == 0].mean()) / s * np.sqrt(n1 * n0) / n)
