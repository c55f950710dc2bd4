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

Only numpy is imported here; scipy and pandas load inside the functions that need them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

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

# Spellings accepted for the two binary classes (compared case-insensitively for strings).
_POSITIVE = {"1", "biased", "true", "yes", "bias", "hyperpartisan"}
_NEGATIVE = {"0", "neutral", "false", "no", "not biased", "non-biased", "unbiased"}


# --------------------------------------------------------------------------------------------
# label handling
# --------------------------------------------------------------------------------------------
def _as_array(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(list(x) if not hasattr(x, "__array__") else x, dtype=object).ravel()
    for v in arr:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            raise ValueError(
                f"{name} contains a missing value (None/NaN); drop or fill failed items before scoring "
                "(e.g. count a failed prediction as neutral and report how many there were)"
            )
    return arr


def _to_binary_value(v: Any) -> int | None:
    """1 for a positive spelling, 0 for a negative one, None when ``v`` is not a binary label."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer, float, np.floating)):
        return int(v) if v in (0, 1) else None
    if isinstance(v, str):
        s = v.strip().lower()
        if s in _POSITIVE:
            return 1
        if s in _NEGATIVE:
            return 0
    return None


def _to_binary(arr: np.ndarray, name: str) -> np.ndarray:
    out = np.empty(len(arr), dtype=np.int64)
    for i, v in enumerate(arr):
        b = _to_binary_value(v)
        if b is None:
            raise ValueError(f"{name}[{i}] = {v!r} is not a binary label (use 0/1, True/False or 'biased'/'neutral')")
        out[i] = b
    return out


def _pair(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two equally long label arrays on a common vocabulary.

    Labels are used as given (three-way strings stay strings), except that a mix of binary
    spellings (``1`` in one, ``"biased"`` in the other) is normalised to 0/1.
    """
    y = _as_array(y_true, "y_true")
    p = _as_array(y_pred, "y_pred")
    if len(y) != len(p):
        raise ValueError(f"y_true has {len(y)} labels but y_pred has {len(p)}")
    if len(y) == 0:
        raise ValueError("no labels to score")
    values = set(y.tolist()) | set(p.tolist())
    binary = [_to_binary_value(v) for v in values]
    if len(values) > 2 and all(b is not None for b in binary) and len(set(binary)) <= 2:
        return _to_binary(y, "y_true"), _to_binary(p, "y_pred")
    return y, p


def _encode(y: np.ndarray, p: np.ndarray, labels: Sequence[Hashable] | None) -> tuple[np.ndarray, np.ndarray, list]:
    """Integer codes of ``y`` and ``p`` against ``labels`` (default: sorted union, as scikit-learn).

    With explicit ``labels``, a value outside them (e.g. a prediction ``"UNKNOWN"``) gets the
    extra code ``len(labels)``: it still counts as a miss for the gold class, as in scikit-learn,
    but no class of its own is scored.
    """
    if labels is None:
        labels = sorted(set(y.tolist()) | set(p.tolist()), key=lambda v: (str(type(v)), v))
    labels = list(labels)
    if len(set(labels)) != len(labels):
        raise ValueError(f"labels contain duplicates: {labels}")
    index = {lab: i for i, lab in enumerate(labels)}
    other = len(labels)
    yc = np.fromiter((index.get(v, other) for v in y), dtype=np.int64, count=len(y))
    pc = np.fromiter((index.get(v, other) for v in p), dtype=np.int64, count=len(p))
    return yc, pc, labels


def _labelled_cm(y: np.ndarray, p: np.ndarray, labels: Sequence[Hashable] | None) -> tuple[np.ndarray, list]:
    """Confusion counts over ``labels`` plus one last row/column for values outside them."""
    yc, pc, labs = _encode(y, p, labels)
    return _confusion_counts(yc, pc, len(labs) + 1), labs


def _confusion_counts(yc: np.ndarray, pc: np.ndarray, k: int) -> np.ndarray:
    """k x k counts: rows = gold, columns = predicted."""
    return np.bincount(yc * k + pc, minlength=k * k).reshape(k, k)


# --------------------------------------------------------------------------------------------
# metrics from confusion matrices (work on one k x k matrix or a batch of shape (B, k, k))
# --------------------------------------------------------------------------------------------
def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den == 0 (scikit-learn's zero_division=0)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)


def _cm_accuracy(cm: np.ndarray) -> np.ndarray:
    return _safe_div(np.trace(cm, axis1=-2, axis2=-1), cm.sum(axis=(-2, -1)))


def _cm_class_f1(cm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-class F1 = 2TP / (2TP + FP + FN) and a mask of classes present in gold or predictions."""
    tp = np.diagonal(cm, axis1=-2, axis2=-1)
    gold = cm.sum(axis=-1)  # row sums: TP + FN
    pred = cm.sum(axis=-2)  # column sums: TP + FP
    return _safe_div(2 * tp, gold + pred), (gold + pred) > 0


def _cm_macro_f1(cm: np.ndarray) -> np.ndarray:
    f, present = _cm_class_f1(cm)
    return _safe_div((f * present).sum(axis=-1), present.sum(axis=-1))


def _cm_precision(cm: np.ndarray) -> np.ndarray:  # binary, positive class at index 1
    return _safe_div(cm[..., 1, 1], cm[..., :, 1].sum(axis=-1))


def _cm_recall(cm: np.ndarray) -> np.ndarray:
    return _safe_div(cm[..., 1, 1], cm[..., 1, :].sum(axis=-1))


def _cm_f1(cm: np.ndarray) -> np.ndarray:
    return _cm_class_f1(cm)[0][..., 1]


# --------------------------------------------------------------------------------------------
# public metrics
# --------------------------------------------------------------------------------------------
def accuracy(y_true: Any, y_pred: Any) -> float:
    """Share of items whose prediction equals the gold label."""
    y, p = _pair(y_true, y_pred)
    return float(np.mean(y == p))


def _binary_cm(y_true: Any, y_pred: Any) -> np.ndarray:
    y, p = _pair(y_true, y_pred)
    return _confusion_counts(_to_binary(y, "y_true"), _to_binary(p, "y_pred"), 2)


def precision(y_true: Any, y_pred: Any) -> float:
    """Of the items predicted biased, the share that are biased: TP / (TP + FP); 0 when nothing is predicted biased."""
    return float(_cm_precision(_binary_cm(y_true, y_pred)))


def recall(y_true: Any, y_pred: Any) -> float:
    """Of the biased items, the share predicted biased: TP / (TP + FN); 0 when no item is biased."""
    return float(_cm_recall(_binary_cm(y_true, y_pred)))


def f1(y_true: Any, y_pred: Any) -> float:
    """Binary F1 of the biased class: the harmonic mean of precision and recall, 2TP / (2TP + FP + FN)."""
    return float(_cm_f1(_binary_cm(y_true, y_pred)))


def macro_f1(y_true: Any, y_pred: Any, labels: Sequence[Hashable] | None = None) -> float:
    """Unweighted mean of the per-class F1 scores.

    With ``labels=None`` the classes are those seen in gold or predictions (as scikit-learn);
    with explicit ``labels`` every listed class counts, an absent one with F1 = 0, and a value
    outside them (say a prediction ``"UNKNOWN"``) is a miss for its gold class.
    Unlike binary F1, macro F1 rewards getting the *neutral* class right too, so a system
    that calls everything biased scores well on F1 but poorly here.
    """
    y, p = _pair(y_true, y_pred)
    cm, labs = _labelled_cm(y, p, labels)
    f, present = _cm_class_f1(cm)
    f, present = f[: len(labs)], present[: len(labs)]
    if labels is not None:
        return float(f.mean())
    return float(f[present].mean())


def confusion(y_true: Any, y_pred: Any, labels: Sequence[Hashable] | None = None):
    """Confusion matrix as a DataFrame: rows = gold label, columns = predicted label, cells = counts.

    With explicit ``labels``, items whose gold or predicted label is not listed are left out (as scikit-learn).
    """
    import pandas as pd

    y, p = _pair(y_true, y_pred)
    cm, labs = _labelled_cm(y, p, labels)
    k = len(labs)
    return pd.DataFrame(cm[:k, :k], index=pd.Index(labs, name="gold"), columns=pd.Index(labs, name="pred"))


def per_class_f1(y_true: Any, y_pred: Any, labels: Sequence[Hashable] | None = None) -> dict[Hashable, float]:
    """F1 of each class against the rest, e.g. ``{"FALSE": 0.8, "HALF-TRUE": 0.4, "TRUE": 0.3}``."""
    y, p = _pair(y_true, y_pred)
    cm, labs = _labelled_cm(y, p, labels)
    f, _ = _cm_class_f1(cm)
    return {lab: float(v) for lab, v in zip(labs, f)}


def classification_report(y_true: Any, y_pred: Any) -> dict[str, float]:
    """The binary metrics at once: accuracy, precision, recall, f1 (biased class), macro_f1 and n."""
    cm = _binary_cm(y_true, y_pred)
    return {
        "n": int(cm.sum()),
        "accuracy": float(_cm_accuracy(cm)),
        "precision": float(_cm_precision(cm)),
        "recall": float(_cm_recall(cm)),
        "f1": float(_cm_f1(cm)),
        "macro_f1": float(_cm_macro_f1(cm)),
    }


# The metrics above can be computed from confusion matrices, which lets the bootstrap score
# thousands of resamples at once (one bincount) instead of calling the metric in a Python loop.
_FROM_CONFUSION: dict[Callable, tuple[Callable, bool]] = {
    accuracy: (_cm_accuracy, False),
    precision: (_cm_precision, True),
    recall: (_cm_recall, True),
    f1: (_cm_f1, True),
    macro_f1: (_cm_macro_f1, False),
}


# --------------------------------------------------------------------------------------------
# bootstrap
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BootstrapResult:
    """Paired bootstrap of ``metric(A) - metric(B)`` on the same items.

    ``diff`` is the observed difference; ``lo``/``hi`` the percentile confidence interval of
    the difference; ``p_value`` the two-sided bootstrap p-value for "no difference".
    """

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
        return (
            f"{self.metric}: A {self.score_a:.3f} vs B {self.score_b:.3f}, diff {self.diff:+.3f} "
            f"[{self.lo:+.3f}, {self.hi:+.3f}] ({self.confidence:.0%} CI), p = {self.p_value:.4f}"
        )


def _defaults(n_resamples: int | None, seed: int | None) -> tuple[int, int]:
    if n_resamples is None or seed is None:
        from mabpd_kit.config import Config

        m = Config().metrics
        n_resamples = m.bootstrap_resamples if n_resamples is None else n_resamples
        seed = m.seed if seed is None else seed
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    return int(n_resamples), int(seed)


def _two_sided_p(boot: np.ndarray) -> float:
    """Two-sided bootstrap p-value for H0 "difference = 0".

    The share of resampled differences on the far side of zero, doubled, with the usual +1
    correction so a finite bootstrap never claims p = 0: p = 2 * min(#(d* <= 0) + 1, #(d* >= 0) + 1) / (B + 1),
    capped at 1. Identical systems (every d* = 0) get p = 1.
    """
    b = len(boot)
    below = (np.count_nonzero(boot <= 0) + 1) / (b + 1)
    above = (np.count_nonzero(boot >= 0) + 1) / (b + 1)
    return float(min(1.0, 2 * min(below, above)))


def _resample_indices(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    return rng.integers(0, n, size=(size, n))


def paired_bootstrap(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    metric: Callable[[Any, Any], float] = macro_f1,
    n_resamples: int | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
    chunk: int = 500,
) -> BootstrapResult:
    """Is system A really better than system B on these items, or is it luck of the sample?

    Draw ``n_resamples`` resamples of the item indices (with replacement, seeded); on each,
    score A and B on the *same* items and keep ``metric(A) - metric(B)``. Pairing matters:
    items that are hard for both systems move both scores together, so the difference is far
    less noisy than two separate confidence intervals suggest.

    ``n_resamples`` and ``seed`` default to ``Config().metrics`` (10,000 and 0). The five
    built-in metrics are computed from confusion matrices for all resamples at once (fast);
    any other ``metric(y_true, y_pred) -> float`` works through a plain loop.
    """
    n_resamples, seed = _defaults(n_resamples, seed)
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    # Normalise the three label arrays together so A and B share one vocabulary with the gold labels.
    y_a = _as_array(y_true, "y_true")
    if len(_as_array(pred_a, "pred_a")) != len(y_a) or len(_as_array(pred_b, "pred_b")) != len(y_a):
        raise ValueError("y_true, pred_a and pred_b must be equally long (the same items)")
    yy, ab = _pair(np.concatenate([y_a, y_a]), np.concatenate([_as_array(pred_a, "pred_a"), _as_array(pred_b, "pred_b")]))
    y, a, b = yy[: len(y_a)], ab[: len(y_a)], ab[len(y_a) :]
    n = len(y)
    rng = np.random.default_rng(seed)
    score_a, score_b = float(metric(y, a)), float(metric(y, b))

    fast = _FROM_CONFUSION.get(metric)
    diffs = np.empty(n_resamples)
    if fast is not None:
        cm_fn, binary = fast
        if binary:
            yc, ac, bc, k = _to_binary(y, "y_true"), _to_binary(a, "pred_a"), _to_binary(b, "pred_b"), 2
        else:
            yc, ab_codes, labs = _encode(np.concatenate([y, y]), np.concatenate([a, b]), None)
            yc, ac, bc, k = yc[:n], ab_codes[:n], ab_codes[n:], len(labs)
        code_a, code_b = yc * k + ac, yc * k + bc
        for start in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - start)
            idx = _resample_indices(rng, n, size)
            offset = (np.arange(size) * k * k)[:, None]
            cm_a = np.bincount((code_a[idx] + offset).ravel(), minlength=size * k * k).reshape(size, k, k)
            cm_b = np.bincount((code_b[idx] + offset).ravel(), minlength=size * k * k).reshape(size, k, k)
            diffs[start : start + size] = cm_fn(cm_a) - cm_fn(cm_b)
    else:
        for start in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - start)
            for j, ix in enumerate(_resample_indices(rng, n, size)):
                diffs[start + j] = metric(y[ix], a[ix]) - metric(y[ix], b[ix])

    alpha = 1 - confidence
    lo, hi = np.quantile(diffs, [alpha / 2, 1 - alpha / 2])
    return BootstrapResult(
        metric=getattr(metric, "__name__", "metric"),
        score_a=score_a,
        score_b=score_b,
        diff=score_a - score_b,
        lo=float(lo),
        hi=float(hi),
        p_value=_two_sided_p(diffs),
        n_items=n,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def metric_ci(
    y_true: Any,
    y_pred: Any,
    metric: Callable[[Any, Any], float] = macro_f1,
    n_resamples: int | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
    chunk: int = 500,
) -> tuple[float, float, float]:
    """Percentile bootstrap CI of one system's score: ``(estimate, lo, hi)``.

    Same resampling as :func:`paired_bootstrap` (items with replacement, seeded); the five
    built-in metrics run vectorised on confusion matrices, any other metric in a loop.
    """
    n_resamples, seed = _defaults(n_resamples, seed)
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    y, p = _pair(y_true, y_pred)
    n = len(y)
    rng = np.random.default_rng(seed)
    boot = np.empty(n_resamples)
    fast = _FROM_CONFUSION.get(metric)
    if fast is not None:
        cm_fn, binary = fast
        if binary:
            yc, pc, k = _to_binary(y, "y_true"), _to_binary(p, "y_pred"), 2
        else:
            yc, pc, labs = _encode(y, p, None)
            k = len(labs)
        code = yc * k + pc
        for start in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - start)
            idx = _resample_indices(rng, n, size)
            offset = (np.arange(size) * k * k)[:, None]
            cm = np.bincount((code[idx] + offset).ravel(), minlength=size * k * k).reshape(size, k, k)
            boot[start : start + size] = cm_fn(cm)
    else:
        for start in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - start)
            for j, ix in enumerate(_resample_indices(rng, n, size)):
                boot[start + j] = metric(y[ix], p[ix])
    alpha = 1 - confidence
    lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return float(metric(y, p)), float(lo), float(hi)


def bootstrap_ci(
    values_or_frame: Any,
    statistic: Callable[[Any], float] = np.mean,
    groups: Any = None,
    n_resamples: int | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Percentile bootstrap confidence interval: returns ``(estimate, lo, hi)``.

    ``values_or_frame`` is a 1-D array (``statistic`` gets the resampled array) or a DataFrame
    (``statistic`` gets the resampled frame). Without ``groups`` rows are resampled one by one.
    With ``groups`` (an array of group ids, or a column name of the frame) whole groups are
    resampled: e.g. every row of one question goes in or out together, because rows of the
    same question are not independent (cluster bootstrap).

    >>> est, lo, hi = bootstrap_ci([0, 1, 1, 0, 1, 1], n_resamples=2000, seed=1)
    >>> round(est, 3), lo <= est <= hi
    (0.667, True)
    """
    n_resamples, seed = _defaults(n_resamples, seed)
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
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
    alpha = 1 - confidence
    lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return estimate, float(lo), float(hi)


# --------------------------------------------------------------------------------------------
# agreement and correlation
# --------------------------------------------------------------------------------------------
def ratings_table(ratings: Any, categories: Sequence[Hashable] | None = None) -> np.ndarray:
    """Turn an items x raters array of labels into the items x categories count table of :func:`fleiss_kappa`."""
    r = np.asarray(ratings, dtype=object)
    if r.ndim != 2:
        raise ValueError("ratings must be 2-D: one row per item, one column per rater")
    cats = list(categories) if categories is not None else sorted(set(r.ravel().tolist()), key=str)
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((r.shape[0], len(cats)), dtype=np.int64)
    for i, row in enumerate(r):
        for v in row:
            if v not in index:
                raise ValueError(f"rating {v!r} is not among categories {cats}")
            table[i, index[v]] += 1
    return table


def fleiss_kappa(table: Any) -> float:
    """Fleiss' kappa: agreement among a fixed number of raters beyond what chance would give.

    ``table[i, j]`` = how many raters put item ``i`` in category ``j``; every row must sum to
    the same number of raters ``m`` >= 2 (build it from raw labels with :func:`ratings_table`).

    P_i = (sum_j n_ij^2 - m) / (m (m - 1))   agreement on item i (share of agreeing rater pairs)
    p_j = sum_i n_ij / (N m)                 overall share of category j
    kappa = (mean P_i - sum_j p_j^2) / (1 - sum_j p_j^2)
    1 = perfect agreement, 0 = chance level, < 0 = worse than chance. With two raters it equals Scott's pi.
    """
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
    """Point-biserial correlation r between a 0/1 variable and a continuous one.

    It is Pearson's r with one variable dichotomous: r = (M1 - M0) / s * sqrt(n1 n0 / n^2),
    with M1, M0 the means of ``y`` in the two groups and s the population SD of ``y``.
    """
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
