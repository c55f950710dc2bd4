"""Metrics of a score rather than a label: ROC AUC, log-loss and a reliability table."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["log_loss", "reliability", "roc_auc"]


def roc_auc(y_true: Any, score: Any) -> float:
    """The area under the ROC curve: the chance that a random positive (1) scores above a random
    negative (0), ties counting one half (the Mann-Whitney U over n_pos x n_neg). NaN with one class."""
    y = np.asarray(y_true, dtype=int)
    s = np.asarray(score, dtype=float)
    n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
    if not n_pos or not n_neg:
        return float("nan")
    _, inv, counts = np.unique(s, return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[inv]  # 1-based ranks, ties given their average
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def log_loss(y_true: Any, prob: Any, eps: float = 1e-12) -> float:
    """Mean negative log-likelihood of 0/1 labels under probabilities ``prob``."""
    y = np.asarray(y_true, dtype=float)
    p = np.clip(np.asarray(prob, dtype=float), eps, 1 - eps)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def reliability(y_true: Any, prob: Any, bins: int = 10) -> dict[str, Any]:
    """Calibration of probabilities: ``bins`` equal-width bins with count, mean probability and observed rate;
    ``ece`` (count-weighted mean gap) and ``max_gap`` (largest gap of a bin with >= 2% of the items)."""
    y = np.asarray(y_true, dtype=float)
    p = np.asarray(prob, dtype=float)
    which = np.minimum((p * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        m = which == b
        if m.any():
            rows.append({"bin": b, "n": int(m.sum()), "mean_p": float(p[m].mean()), "rate": float(y[m].mean())})
    gaps = [abs(r["rate"] - r["mean_p"]) for r in rows]
    ece = float(sum(r["n"] * g for r, g in zip(rows, gaps)) / max(len(y), 1))
    big = [g for r, g in zip(rows, gaps) if r["n"] >= 0.02 * len(y)]
    return {"bins": rows, "ece": ece, "max_gap": float(max(big)) if big else 0.0}
