"""Classification metrics: accuracy, precision, recall, F1, macro F1, confusion matrices. Each is also written
on confusion matrices (``_cm_*``, one k x k matrix or a batch), so the bootstrap scores all resamples at once."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

__all__ = ["accuracy", "classification_report", "confusion", "f1", "macro_f1", "per_class_f1", "precision", "recall"]

# Spellings accepted for the two binary classes (compared case-insensitively for strings).
_POSITIVE = {"1", "biased", "true", "yes", "bias", "hyperpartisan"}
_NEGATIVE = {"0", "neutral", "false", "no", "not biased", "non-biased", "unbiased"}


def _as_array(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(list(x) if not hasattr(x, "__array__") else x, dtype=object).ravel()
    for v in arr:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            raise ValueError(f"{name} contains a missing value (None/NaN); drop or fill failed items before scoring "
                             "(e.g. count a failed prediction as neutral and report how many there were)")
    return arr


def _to_binary_value(v: Any) -> int | None:
    """1 for a positive spelling, 0 for a negative one, None when ``v`` is not a binary label."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer, float, np.floating)):
        return int(v) if v in (0, 1) else None
    if isinstance(v, str):
        s = v.strip().lower()
        return 1 if s in _POSITIVE else 0 if s in _NEGATIVE else None
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
    """Two equally long label arrays; a mix of binary spellings (``1`` and ``"biased"``) is normalised to 0/1."""
    y, p = _as_array(y_true, "y_true"), _as_array(y_pred, "y_pred")
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
    """Integer codes of ``y`` and ``p`` against ``labels`` (default: the sorted union); a value outside explicit
    ``labels`` gets the extra code ``len(labels)``, a miss for its gold class, as in scikit-learn."""
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


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den == 0 (scikit-learn's zero_division=0)."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)


def _cm_accuracy(cm: np.ndarray) -> np.ndarray:
    return _safe_div(np.trace(cm, axis1=-2, axis2=-1), cm.sum(axis=(-2, -1)))


def _cm_class_f1(cm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-class F1 = 2TP / (2TP + FP + FN) and a mask of classes present in gold or predictions."""
    tp = np.diagonal(cm, axis1=-2, axis2=-1)
    gold, pred = cm.sum(axis=-1), cm.sum(axis=-2)  # row sums TP + FN, column sums TP + FP
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
    """Unweighted mean of the per-class F1 (classes seen, or every listed class, absent ones F1 = 0): unlike binary
    F1 it rewards the neutral class too, so calling everything biased scores poorly."""
    y, p = _pair(y_true, y_pred)
    cm, labs = _labelled_cm(y, p, labels)
    f, present = _cm_class_f1(cm)
    f, present = f[: len(labs)], present[: len(labs)]
    return float(f.mean() if labels is not None else f[present].mean())


def confusion(y_true: Any, y_pred: Any, labels: Sequence[Hashable] | None = None):
    """Confusion matrix as a DataFrame (rows gold, columns predicted); with ``labels``, other items are left out."""
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
    return {"n": int(cm.sum()), "accuracy": float(_cm_accuracy(cm)), "precision": float(_cm_precision(cm)),
            "recall": float(_cm_recall(cm)), "f1": float(_cm_f1(cm)), "macro_f1": float(_cm_macro_f1(cm))}


# The metrics above can be computed from confusion matrices, which lets the bootstrap score
# thousands of resamples at once (one bincount) instead of calling the metric in a Python loop.
_FROM_CONFUSION: dict[Callable, tuple[Callable, bool]] = {
    accuracy: (_cm_accuracy, False), precision: (_cm_precision, True), recall: (_cm_recall, True),
    f1: (_cm_f1, True), macro_f1: (_cm_macro_f1, False)}

