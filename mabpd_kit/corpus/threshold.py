"""Adapting the count rule's threshold on labelled articles (:func:`adapt`: k-fold cross-validated
figures, a bootstrap interval, the majority and length-only baselines), the sentence error rates
(:func:`adapt_rates`) and gold labels read as 0/1 (:func:`gold_labels`). The sentence pipeline stays
zero-shot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from mabpd_kit.corpus.settings import CorpusConfig, resolve

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Adaptation", "adapt", "adapt_rates", "best_threshold", "compare_rules", "gold_labels"]


class Adaptation(BaseModel):
    """The result of :func:`adapt` (``to_frame()`` gives the per-fold table)."""

    stat: str
    objective: str
    threshold: float = Field(description="chosen on every article given")
    ci: tuple[float, float] = Field(description="percentile bootstrap interval of the chosen threshold")
    cv_accuracy: float
    cv_macro_f1: float
    cv_precision: float
    cv_recall: float
    folds: list[dict[str, float]] = Field(default_factory=list)
    n: int
    k: int
    seed: int
    baselines: dict[str, float] = Field(default_factory=dict)

    def __str__(self) -> str:
        return (f"article rule: {self.stat} >= {self.threshold:g} (95% bootstrap CI {self.ci[0]:g}-{self.ci[1]:g}); "
                f"{self.k}-fold CV on {self.n} articles: accuracy {self.cv_accuracy:.3f}, macro F1 "
                f"{self.cv_macro_f1:.3f} (P {self.cv_precision:.2f} / R {self.cv_recall:.2f})")

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.folds)


def _score(objective: str, y: np.ndarray, p: np.ndarray) -> float:
    from mabpd_kit import metrics as m

    return m.accuracy(y, p) if objective == "accuracy" else m.macro_f1(y, p)


def best_threshold(x: np.ndarray, y: np.ndarray, objective: str = "accuracy") -> float:
    """The threshold ``t`` (rule ``x >= t``) that maximises the objective on ``(x, y)``: the middle of the
    first run of tied candidates, as the midpoint between the articles it separates."""
    vals = np.unique(x)
    cands = np.concatenate([vals, [vals[-1] + 1.0]]) if len(vals) else np.array([0.0])
    pos = y.astype(bool)
    if objective == "accuracy":  # counts from sorted values: positives at or above, negatives below each cut
        xp, xn = np.sort(x[pos]), np.sort(x[~pos])
        hits = (len(xp) - np.searchsorted(xp, cands, "left")) + np.searchsorted(xn, cands, "left")
        scores = hits / max(len(x), 1)
    else:
        scores = np.array([_score(objective, y, (x >= c).astype(int)) for c in cands])
    best = np.flatnonzero(np.isclose(scores, scores.max()))
    gaps = np.flatnonzero(np.diff(best) > 1)
    run = best[: gaps[0] + 1] if len(gaps) else best  # the first run of tied candidates
    i = int(run[len(run) // 2])
    if i == 0:
        return float(cands[0])
    return float((cands[i - 1] + cands[i]) / 2)  # between the last article below and the first at or above


def _folds(y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Stratified fold ids: each class shuffled (seeded) and dealt round-robin."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y), dtype=int)
    for cls in np.unique(y):
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        fold[idx] = np.arange(len(idx)) % k
    return fold


_ONE, _ZERO = ("1", "true"), ("0", "false")


def _label(value: Any, column: str) -> int | None:
    """0 or 1 for a gold label written as 1, 1.0, "1", "1.0", True or "true" (likewise 0); None when missing."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        if value != value:  # NaN
            return None
        if value in (0, 1):
            return int(value)
    elif isinstance(value, str):
        t = value.strip().lower()
        if not t:
            return None
        if t in _ONE or t in _ZERO:
            return int(t in _ONE)
        try:
            v = float(t)
        except ValueError:
            v = -1.0
        if v in (0.0, 1.0):  # "1.0", "0.00"
            return int(v)
    elif value is None:
        return None
    raise ValueError(f"gold column {column!r} holds {value!r}, not a 0/1 label (1 = biased: 1, 1.0, '1', '1.0' or "
                     f"True; 0 likewise)")


def gold_labels(values: pd.Series, column: str = "label") -> pd.Series:
    """``values`` as nullable 0/1 labels; a value that is not one raises :class:`ValueError` naming it."""
    import pandas as pd

    return pd.Series([_label(v, column) for v in values], index=values.index, dtype="Int64")


def adapt(data: Any, *, gold: str = "label", stat: str | None = None, settings: CorpusConfig | None = None,
          config: Any = None) -> Adaptation:
    """Adapt the count rule's threshold on labelled articles (results or their ``to_frame()``, a 0/1
    ``gold`` column). Use it with ``CorpusConfig(article_decision="count", article_stat=a.stat,
    article_threshold=a.threshold)`` or ``results.with_threshold(a.threshold)``; the article score is
    refitted by :func:`mabpd_kit.corpus.scorefit.adapt_score`."""
    from mabpd_kit import metrics as m

    st = resolve(settings, config)
    stat = stat or st.article_stat
    df = data.to_frame() if hasattr(data, "to_frame") and not hasattr(data, "columns") else data
    for col in (gold, stat):
        if col not in df:
            raise ValueError(f"no column {col!r} to adapt on (columns: {list(df.columns)})")
    labels = gold_labels(df[gold], gold)
    keep = df[stat].notna() & labels.notna()
    if "failed" in df:
        keep &= ~df["failed"].astype(bool)
    x = df.loc[keep, stat].to_numpy(dtype=float)
    y = labels[keep].to_numpy(dtype=int)
    if len(np.unique(y)) < 2 or len(y) < 2 * st.adapt_folds:
        raise ValueError(f"adapting needs both labels and at least {2 * st.adapt_folds} labelled articles; got "
                         f"{len(y)} with labels {sorted(set(y.tolist()))}")
    k, obj = st.adapt_folds, st.adapt_objective
    fold = _folds(y, k, st.seed)
    pred, ts = _cv(x, y, fold, k, obj)
    rows = []
    for f, t in enumerate(ts):
        te = fold == f
        rows.append({"fold": f, "threshold": t, "n_test": int(te.sum()),
                     "accuracy": m.accuracy(y[te], pred[te]), "macro_f1": m.macro_f1(y[te], pred[te])})
    chosen = best_threshold(x, y, obj)
    rng = np.random.default_rng(st.seed)
    boots = np.array([best_threshold(x[ix], y[ix], obj)
                      for ix in (rng.integers(0, len(y), len(y)) for _ in range(st.adapt_resamples))])
    alpha = 1 - st.confidence
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return Adaptation(stat=stat, objective=obj, threshold=chosen, ci=(float(lo), float(hi)),
                      cv_accuracy=m.accuracy(y, pred), cv_macro_f1=m.macro_f1(y, pred),
                      cv_precision=m.precision(y, pred), cv_recall=m.recall(y, pred), folds=rows, n=len(y), k=k,
                      seed=st.seed, baselines=_baselines(df.loc[keep], y, fold, k, obj))


def _baselines(df: pd.DataFrame, y: np.ndarray, fold: np.ndarray, k: int, obj: str) -> dict[str, float]:
    """Majority class, and the same cross-validated rule on ``n_words`` when present."""
    from mabpd_kit import metrics as m

    out = {"majority_accuracy": float(max(y.mean(), 1 - y.mean()))}
    if "n_words" in df:
        pred, _ = _cv(df["n_words"].to_numpy(dtype=float), y, fold, k, obj)
        out.update(length_cv_accuracy=m.accuracy(y, pred), length_cv_macro_f1=m.macro_f1(y, pred))
    return out


def _cv(x: np.ndarray, y: np.ndarray, fold: np.ndarray, k: int, obj: str) -> tuple[np.ndarray, list[float]]:
    """Cross-validated predictions of the rule ``x >= t`` and each fold's ``t``."""
    pred, ts = np.empty_like(y), []
    for f in range(k):
        ts.append(best_threshold(x[fold != f], y[fold != f], obj))
        pred[fold == f] = (x[fold == f] >= ts[-1]).astype(int)
    return pred, ts


def compare_rules(data: Any, stats: tuple[str, ...] = ("n_biased", "n_spans", "share_biased", "spans_per_100w"), *,
                  gold: str = "label", settings: CorpusConfig | None = None) -> pd.DataFrame:
    """Each statistic's cross-validated rule, plus a ``nested`` row: the statistic *and* its threshold
    chosen on the training folds only (picking the best row is itself a choice made on the labels)."""
    import pandas as pd

    from mabpd_kit import metrics as m

    st = resolve(settings)
    df = data.to_frame() if hasattr(data, "to_frame") and not hasattr(data, "columns") else data
    labels = gold_labels(df[gold], gold)
    keep = labels.notna() & df[list(stats)].notna().all(axis=1)
    if "failed" in df:
        keep &= ~df["failed"].astype(bool)
    df = df[keep].assign(**{gold: labels[keep].astype(int)})
    rows = [{"rule": s, **{k: v for k, v in adapt(df, gold=gold, stat=s, settings=st).model_dump().items()
                           if k in ("threshold", "cv_accuracy", "cv_macro_f1", "cv_precision", "cv_recall")}}
            for s in stats]
    y = df[gold].to_numpy(dtype=int)
    xs = {s: df[s].to_numpy(dtype=float) for s in stats}
    fold = _folds(y, st.adapt_folds, st.seed)
    pred = np.empty_like(y)
    picked = []
    for f in range(st.adapt_folds):
        tr, te = fold != f, fold == f
        cands = [(_score(st.adapt_objective, y[tr], (xs[s][tr] >= (t := best_threshold(xs[s][tr], y[tr],
                                                                                      st.adapt_objective))).astype(int)),
                  s, t) for s in stats]
        _, s, t = max(cands, key=lambda c: c[0])
        picked.append(f"{s}>={t:g}")
        pred[te] = (xs[s][te] >= t).astype(int)
    rows.append({"rule": "nested: " + ", ".join(picked), "threshold": float("nan"),
                 "cv_accuracy": m.accuracy(y, pred), "cv_macro_f1": m.macro_f1(y, pred),
                 "cv_precision": m.precision(y, pred), "cv_recall": m.recall(y, pred)})
    return pd.DataFrame(rows)


def adapt_rates(data: Any, *, gold: str = "gold", group: str | None = None, settings: CorpusConfig | None = None,
                config: Any = None) -> Any:
    """The sentence error rates from your own labelled sentences (results or their ``to_frame("sentence")``,
    a 0/1 ``gold`` column); ``group``: fit how much they vary between outlets too. Use them as
    ``aggregate(..., rates=r)`` or ``report(..., rates=r)``."""
    from mabpd_kit.corpus.prevalence import error_rates

    st = resolve(settings, config)
    df = data.to_frame("sentence") if hasattr(data, "to_frame") and not hasattr(data, "columns") else data
    for col in (gold, "label", "score", *([group] if group else [])):
        if col not in df:
            raise ValueError(f"no column {col!r} to adapt the error rates on (columns: {list(df.columns)})")
    labels = gold_labels(df[gold], gold)
    keep = labels.notna() & df["label"].isin(["biased", "neutral"]) & df["score"].notna()
    if labels[keep].nunique() < 2:
        raise ValueError(f"adapting the error rates needs labelled biased and neutral sentences; got "
                         f"{int(keep.sum())} with labels {sorted(set(labels[keep].tolist()))}")
    part = df[keep]
    return error_rates((part["label"] == "biased").astype(float), part["score"].astype(float),
                       labels[keep].astype(float), groups=part[group] if group else None,
                       source=f"your labelled sample ({int(keep.sum())} sentences)", settings=st)
