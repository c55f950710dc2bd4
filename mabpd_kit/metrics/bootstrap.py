"""Bootstrap confidence intervals and the paired bootstrap of two systems on the same items."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mabpd_kit.metrics.classification import _FROM_CONFUSION, _as_array, _encode, _pair, _to_binary, macro_f1

__all__ = ["BootstrapResult", "bootstrap_ci", "metric_ci", "paired_bootstrap"]


@dataclass(frozen=True)
class BootstrapResult:
    """Paired bootstrap of ``metric(A) - metric(B)``: the observed ``diff``, its percentile interval and the
    two-sided ``p_value`` for no difference."""

    metric: str
    score_a: float
    score_b: float
    diff: float
    lo: float
    hi: float
    p_value: float
    n_items: int
    n_resamples: int
    confidence: float
    seed: int

    def __str__(self) -> str:
        return (f"{self.metric}: A {self.score_a:.3f} vs B {self.score_b:.3f}, diff {self.diff:+.3f} "
                f"[{self.lo:+.3f}, {self.hi:+.3f}] ({self.confidence:.0%} CI), p = {self.p_value:.4f}")


def _defaults(n_resamples: int | None, seed: int | None, confidence: float) -> tuple[int, int]:
    if n_resamples is None or seed is None:
        from mabpd_kit.config import Config
        m = Config().metrics
        n_resamples = m.bootstrap_resamples if n_resamples is None else n_resamples
        seed = m.seed if seed is None else seed
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    return int(n_resamples), int(seed)


def _interval(boot: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1 - confidence
    lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def _two_sided_p(boot: np.ndarray) -> float:
    """Two-sided bootstrap p for "difference = 0": 2 * min(#(d* <= 0) + 1, #(d* >= 0) + 1) / (B + 1), at most 1."""
    b = len(boot)
    below = (np.count_nonzero(boot <= 0) + 1) / (b + 1)
    above = (np.count_nonzero(boot >= 0) + 1) / (b + 1)
    return float(min(1.0, 2 * min(below, above)))


def _resampled_scores(metric: Callable[[Any, Any], float], y: np.ndarray, preds: list[np.ndarray], names: list[str],
                      n_resamples: int, seed: int, chunk: int) -> np.ndarray:
    """``metric`` of each of ``preds`` on the same seeded resamples of the items: shape (len(preds), n_resamples).
    The built-in metrics count confusion matrices of a whole chunk of resamples with one bincount."""
    n, m = len(y), len(preds)
    rng = np.random.default_rng(seed)
    out = np.empty((m, n_resamples))
    fast = _FROM_CONFUSION.get(metric)
    if fast is not None:
        cm_fn, binary = fast
        if binary:
            k, yc = 2, _to_binary(y, "y_true")
            codes = [yc * k + _to_binary(p, name) for p, name in zip(preds, names)]
        else:
            yc, pc, labs = _encode(np.concatenate([y] * m), np.concatenate(preds), None)
            k = len(labs)
            codes = [yc[:n] * k + pc[i * n : (i + 1) * n] for i in range(m)]
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        idx = rng.integers(0, n, size=(size, n))
        for i, p in enumerate(preds):
            if fast is None:
                out[i, start : start + size] = [metric(y[ix], p[ix]) for ix in idx]
            else:
                flat = (codes[i][idx] + (np.arange(size) * k * k)[:, None]).ravel()
                out[i, start : start + size] = cm_fn(np.bincount(flat, minlength=size * k * k).reshape(size, k, k))
    return out


def paired_bootstrap(y_true: Any, pred_a: Any, pred_b: Any, metric: Callable[[Any, Any], float] = macro_f1,
                     n_resamples: int | None = None, seed: int | None = None, confidence: float = 0.95,
                     chunk: int = 500) -> BootstrapResult:
    """Is system A really better than B on these items? Score both on the same seeded resamples of the items and
    keep ``metric(A) - metric(B)``: pairing cancels what is hard for both. Defaults: ``Config().metrics``; the
    built-in metrics run on confusion matrices for all resamples at once, any other metric in a loop."""
    n_resamples, seed = _defaults(n_resamples, seed, confidence)
    # Normalise the three label arrays together so A and B share one vocabulary with the gold labels.
    y_a, raw_a, raw_b = _as_array(y_true, "y_true"), _as_array(pred_a, "pred_a"), _as_array(pred_b, "pred_b")
    if len(raw_a) != len(y_a) or len(raw_b) != len(y_a):
        raise ValueError("y_true, pred_a and pred_b must be equally long (the same items)")
    yy, ab = _pair(np.concatenate([y_a, y_a]), np.concatenate([raw_a, raw_b]))
    y, a, b = yy[: len(y_a)], ab[: len(y_a)], ab[len(y_a) :]
    score_a, score_b = float(metric(y, a)), float(metric(y, b))
    boot = _resampled_scores(metric, y, [a, b], ["pred_a", "pred_b"], n_resamples, seed, chunk)
    diffs = boot[0] - boot[1]
    lo, hi = _interval(diffs, confidence)
    return BootstrapResult(getattr(metric, "__name__", "metric"), score_a, score_b, score_a - score_b, lo, hi,
                           _two_sided_p(diffs), len(y), n_resamples, confidence, seed)


def metric_ci(y_true: Any, y_pred: Any, metric: Callable[[Any, Any], float] = macro_f1, n_resamples: int | None = None,
              seed: int | None = None, confidence: float = 0.95, chunk: int = 500) -> tuple[float, float, float]:
    """Percentile bootstrap CI of one system's score, ``(estimate, lo, hi)``, resampled as :func:`paired_bootstrap`."""
    n_resamples, seed = _defaults(n_resamples, seed, confidence)
    y, p = _pair(y_true, y_pred)
    boot = _resampled_scores(metric, y, [p], ["y_pred"], n_resamples, seed, chunk)[0]
    return (float(metric(y, p)), *_interval(boot, confidence))


def bootstrap_ci(values_or_frame: Any, statistic: Callable[[Any], float] = np.mean, groups: Any = None,
                 n_resamples: int | None = None, seed: int | None = None,
                 confidence: float = 0.95) -> tuple[float, float, float]:
    """Percentile bootstrap interval ``(estimate, lo, hi)`` of ``statistic`` over a 1-D array or a DataFrame; with
    ``groups`` (ids, or a column name) whole groups are resampled together (cluster bootstrap)."""
    n_resamples, seed = _defaults(n_resamples, seed, confidence)
    is_frame = hasattr(values_or_frame, "iloc") and hasattr(values_or_frame, "columns")
    data = values_or_frame if is_frame else np.asarray(values_or_frame)
    n = len(data)
    if n == 0:
        raise ValueError("no values to bootstrap")

    def take(ix: np.ndarray) -> Any:
        return data.iloc[ix] if is_frame else data[ix]

    estimate = float(statistic(data))
    rng = np.random.default_rng(seed)
    boot = np.empty(n_resamples)
    if groups is None:
        for r in range(n_resamples):
            boot[r] = statistic(take(rng.integers(0, n, size=n)))
    else:
        g = np.asarray(data[groups] if (is_frame and isinstance(groups, str)) else groups)
        if len(g) != n:
            raise ValueError(f"groups has {len(g)} entries for {n} rows")
        # Sort rows by group once; each group is then a contiguous block [start, start + length).
        _, codes = np.unique(g, return_inverse=True)
        order = np.argsort(codes, kind="stable")
        lengths = np.bincount(codes)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        n_groups = len(lengths)
        for r in range(n_resamples):
            chosen = rng.integers(0, n_groups, size=n_groups)
            ln = lengths[chosen]
            # positions = start of the chosen group + 0..length-1, for every chosen group, without a Python loop
            pos = np.repeat(starts[chosen] - np.concatenate([[0], np.cumsum(ln)[:-1]]), ln) + np.arange(ln.sum())
            boot[r] = statistic(take(order[pos]))
    return (estimate, *_interval(boot, confidence))

