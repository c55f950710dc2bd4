"""Fitting the article score honestly: nested cross-validation (:func:`nested_cv`: a fold's model is
fitted on its training rows only), the length-only rule on the same folds, bootstrap intervals of the
coefficients, a learning curve, and :func:`adapt_score` for your own labels."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from mabpd_kit.config import ArticleScoreConfig, CorpusConfig
from mabpd_kit.corpus.score import FEATURES, feature_frame, fit_logistic, predict
from mabpd_kit.corpus.threshold import _folds, best_threshold, gold_labels

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ScoreFit", "adapt_score", "bootstrap_coefficients", "evaluate", "fit_score", "labels_needed",
           "learning_curve", "length_fit", "nested_cv", "select_l2"]

Predictor = Callable[[np.ndarray], np.ndarray]
Fitter = Callable[[np.ndarray, np.ndarray], Predictor]


def select_l2(X: np.ndarray, y: np.ndarray, params: ArticleScoreConfig, seed: int = 0) -> float:
    """The L2 penalty of ``params.l2_grid`` with the lowest inner-CV log-loss (ties: the stronger)."""
    from mabpd_kit.metrics.ranking import log_loss

    k = min(params.inner_folds, int(min(y.sum(), len(y) - y.sum())))
    if k < 2:
        return float(max(params.l2_grid))
    fold = _folds(y, k, seed)
    losses = []
    for lam in params.l2_grid:
        p = np.empty(len(y))
        for f in range(k):
            tr, te = fold != f, fold == f
            p[te] = predict(X[te], fit_logistic(X[tr], y[tr], lam, features=params.features, top_k=params.top_k))
        losses.append(log_loss(y, p))
    best = min(losses)
    return float(max(lam for lam, v in zip(params.l2_grid, losses) if v <= best + 1e-12))


def fit_score(X: np.ndarray, y: np.ndarray, params: ArticleScoreConfig | None = None, seed: int = 0) -> ArticleScoreConfig:
    """The score fitted on ``(X, y)`` only: the penalty by inner CV, then the coefficients on every row."""
    base = params or ArticleScoreConfig()
    lam = select_l2(X, y, base, seed)
    return fit_logistic(X, y, lam, features=base.features, top_k=base.top_k)


def score_fitter(params: ArticleScoreConfig | None = None, seed: int = 0) -> Fitter:
    """A :data:`Fitter` for :func:`nested_cv`: :func:`fit_score` on the rows it is handed."""
    return lambda X, y: (lambda Xt, m=fit_score(X, y, params, seed): predict(Xt, m))  # noqa: B008 (fitted once)


def length_fit(column: int) -> Fitter:
    """A :data:`Fitter` for the length-only rule ``x[column] >= t`` (``t`` by accuracy); predicts 0/1."""
    def fit(X: np.ndarray, y: np.ndarray) -> Predictor:
        t = best_threshold(X[:, column], y, "accuracy")
        return lambda Xt: (Xt[:, column] >= t).astype(float)
    return fit


def nested_cv(X: np.ndarray, y: np.ndarray, fit: Fitter, *, folds: int = 5, seed: int = 0,
              train_size: int | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """Out-of-fold predictions: ``fit`` gets each stratified fold's training rows only (a stratified
    draw of ``train_size`` of them when given) and its predictor scores the held-out rows."""
    fold = _folds(y, folds, seed)
    out = np.empty(len(y))
    for f in range(folds):
        tr, te = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        if train_size is not None and train_size < len(tr):
            tr = _draw(tr, y, train_size, rng or np.random.default_rng(seed))
        out[te] = fit(X[tr], y[tr])(X[te])
    return out


def _draw(idx: np.ndarray, y: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """A stratified draw of ``n`` of the rows ``idx`` (at least 2 of each class)."""
    pos, neg = idx[y[idx] == 1], idx[y[idx] == 0]
    n_pos = int(np.clip(round(n * len(pos) / len(idx)), 2, min(len(pos), n - 2)))
    return np.concatenate([rng.choice(pos, n_pos, replace=False), rng.choice(neg, min(n - n_pos, len(neg)), replace=False)])


def _figures(y: np.ndarray, prob: np.ndarray, score: np.ndarray | None = None) -> dict[str, float]:
    from mabpd_kit import metrics as m
    from mabpd_kit.metrics.ranking import log_loss, reliability, roc_auc

    pred = (prob >= 0.5).astype(int)
    out = {"accuracy": m.accuracy(y, pred), "macro_f1": m.macro_f1(y, pred),
           "auc": roc_auc(y, prob if score is None else score)}
    if score is None:
        out.update(log_loss=log_loss(y, prob), ece=reliability(y, prob)["ece"])
    return out


def evaluate(X: np.ndarray, y: np.ndarray, n_words: np.ndarray, params: ArticleScoreConfig | None = None, *,
             folds: int = 5, seed: int = 0, resamples: int = 10_000, confidence: float = 0.95,
             extra: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """The score and the length-only rule by nested CV on the same folds, and ``diff``, the paired
    bootstrap of their accuracy difference; ``extra``: other one-column rules scored the same way."""
    from mabpd_kit import metrics as m

    p_score = nested_cv(X, y, score_fitter(params, seed), folds=folds, seed=seed)
    L = np.asarray(n_words, dtype=float)[:, None]
    p_len = nested_cv(L, y, length_fit(0), folds=folds, seed=seed)
    b = m.paired_bootstrap(y, (p_score >= 0.5).astype(int), p_len.astype(int), metric=m.accuracy,
                           n_resamples=resamples, seed=seed, confidence=confidence)
    out = {"score": _figures(y, p_score), "length": _figures(y, p_len, score=L[:, 0]),
           "diff": {"accuracy_diff": b.diff, "lo": b.lo, "hi": b.hi, "p_value": b.p_value,
                    "resamples": resamples}, "n": len(y), "folds": folds, "seed": seed, "oof": p_score}
    for name, col in (extra or {}).items():
        c = np.asarray(col, dtype=float)[:, None]
        out[name] = _figures(y, nested_cv(c, y, length_fit(0), folds=folds, seed=seed), score=c[:, 0])
    return out


def bootstrap_coefficients(X: np.ndarray, y: np.ndarray, params: ArticleScoreConfig, *, resamples: int = 1_000,
                           seed: int = 0, confidence: float = 0.95) -> ArticleScoreConfig:
    """``params`` with ``coef_lo``/``coef_hi``: bootstrap percentile intervals at the same penalty."""
    rng = np.random.default_rng(seed)
    boots = np.empty((resamples, len(params.coef)))
    for r in range(resamples):
        ix = rng.integers(0, len(y), len(y))
        boots[r] = fit_logistic(X[ix], y[ix], params.l2, features=params.features, top_k=params.top_k).coef
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boots, [a, 1 - a], axis=0)
    return params.model_copy(update={"coef_lo": tuple(lo.tolist()), "coef_hi": tuple(hi.tolist())})


def learning_curve(X: np.ndarray, y: np.ndarray, params: ArticleScoreConfig | None = None, *,
                   sizes: Sequence[int] | None = None, repeats: int | None = None, folds: int = 5, seed: int = 0,
                   confidence: float = 0.95) -> pd.DataFrame:
    """Out-of-fold accuracy of :func:`fit_score` trained on ``n`` labelled articles per fold, for each
    ``n`` of ``sizes`` and for all of them (``all``), ``repeats`` times: ``n``, ``mean``, ``lo``/``hi``."""
    import pandas as pd

    base = params or ArticleScoreConfig()
    sizes = base.curve_sizes if sizes is None else sizes
    repeats = base.curve_repeats if repeats is None else repeats
    n_train = len(y) - int(np.ceil(len(y) / folds))
    rows = []
    for n in [*(s for s in sorted(sizes) if s < n_train), None]:
        accs = []
        for r in range(repeats):
            rng = np.random.default_rng(seed + 1000 * r + 7)
            p = nested_cv(X, y, score_fitter(base, seed + r), folds=folds, seed=seed + r, train_size=n, rng=rng)
            accs.append(float(((p >= 0.5) == y).mean()))
        a = (1 - confidence) / 2
        lo, hi = np.quantile(accs, [a, 1 - a])
        rows.append({"n": n if n is not None else n_train, "all": n is None, "mean": float(np.mean(accs)),
                     "lo": float(lo), "hi": float(hi), "repeats": repeats})
    return pd.DataFrame(rows)


def labels_needed(curve: pd.DataFrame) -> int:
    """The smallest ``n`` of a learning curve whose mean accuracy reaches the plateau's interval."""
    plateau = curve[curve["all"]].iloc[-1]
    ok = curve[curve["mean"] >= plateau["lo"]]
    return int(ok["n"].min()) if len(ok) else int(plateau["n"])


class ScoreFit(BaseModel):
    """What :func:`adapt_score` returns: the parameters, the nested-CV figures beside the length-only
    rule's, the learning curve and the labels it needs."""

    params: ArticleScoreConfig
    cv: dict[str, float] = Field(description="nested-CV figures of the score: accuracy, macro_f1, auc, log_loss, ece")
    length: dict[str, float] = Field(description="the length-only rule on the same folds: accuracy, macro_f1, auc")
    diff: dict[str, float] = Field(description="paired bootstrap of the accuracy difference score - length")
    curve: list[dict[str, Any]] = Field(default_factory=list)
    labels_needed: int | None = None
    n: int
    folds: int
    seed: int

    def coefficients(self) -> pd.DataFrame:
        from mabpd_kit.corpus.score import coefficients

        return coefficients(self.params)

    def curve_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.curve)

    def settings(self, base: CorpusConfig | None = None) -> CorpusConfig:
        """Corpus settings deciding by these parameters (``base``'s others kept)."""
        return (base or CorpusConfig()).model_copy(update={"score": self.params, "article_decision": "score"})

    def __str__(self) -> str:
        c, ln, d = self.cv, self.length, self.diff
        need = f"; labels needed: {self.labels_needed}" if self.labels_needed is not None else ""
        return (f"hyperpartisan-style article score, nested {self.folds}-fold CV on {self.n} articles: accuracy {c['accuracy']:.3f}, "
                f"macro F1 {c['macro_f1']:.3f}, AUC {c['auc']:.3f}; length only: accuracy {ln['accuracy']:.3f}, "
                f"macro F1 {ln['macro_f1']:.3f}, AUC {ln['auc']:.3f}; difference {d['accuracy_diff']:+.3f} "
                f"[{d['lo']:+.3f}, {d['hi']:+.3f}]{need}")


def training_data(data: Any, gold: str = "label", labels: Any = None, top_k: int = 3
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
    """``(X, y, n_words, frame)`` from labelled articles (results, a results file, records, or a
    :func:`~mabpd_kit.corpus.score.feature_frame`); labels: the ``gold`` column or ``labels`` by id."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        df = data
    else:
        if isinstance(data, str) or hasattr(data, "__fspath__"):
            from mabpd_kit.corpus.store import load

            data = load(data)
        df = feature_frame(data, top_k, meta=(gold,) if labels is None else ())
    missing = [c for c in (*FEATURES, "n_words") if c not in df]
    if missing:
        raise ValueError(f"no feature columns {missing} to fit the score on: pass CorpusResults, or "
                         "mk.corpus.score.feature_frame(results) with the labels")
    if labels is not None:
        lab = pd.Series(labels) if not isinstance(labels, pd.Series) else labels
        df = df.assign(**{gold: df["id"].map(lab)})
    if gold not in df:
        raise ValueError(f"no gold column {gold!r} (columns: {list(df.columns)})")
    y = gold_labels(df[gold], gold)
    keep = y.notna() & df[list(FEATURES)].notna().all(axis=1)
    df = df[keep].reset_index(drop=True)
    return (df[list(FEATURES)].to_numpy(float), y[keep].to_numpy(int), df["n_words"].to_numpy(float), df)


def adapt_score(data: Any, *, gold: str = "label", labels: Any = None, settings: CorpusConfig | None = None,
                config: Any = None, curve: bool = True, resamples: int | None = None) -> ScoreFit:
    """Refit the article score on your own labelled articles: nested-CV figures against the length-only
    rule, the parameters with bootstrap intervals and (``curve``) the learning curve. Use it with
    ``fit.settings()`` or ``results.with_score(fit.params)``."""
    from mabpd_kit.corpus.settings import resolve

    st = resolve(settings, config)
    base = st.score
    X, y, n_words, _ = training_data(data, gold, labels, base.top_k)
    k = st.adapt_folds
    if len(np.unique(y)) < 2 or min(y.sum(), len(y) - y.sum()) < k:
        raise ValueError(f"fitting the score needs at least {k} articles of each label; got {int(y.sum())} biased "
                         f"and {int(len(y) - y.sum())} not")
    ev = evaluate(X, y, n_words, base, folds=k, seed=st.seed, confidence=st.confidence)
    params = fit_score(X, y, base, st.seed)
    params = bootstrap_coefficients(X, y, params, resamples=resamples or base.resamples, seed=st.seed,
                                    confidence=st.confidence)
    params = params.model_copy(update={k_: getattr(base, k_) for k_ in
                                       ("l2_grid", "inner_folds", "resamples", "curve_sizes", "curve_repeats")})
    lc = learning_curve(X, y, base, folds=k, seed=st.seed, confidence=st.confidence) if curve else None
    return ScoreFit(params=params, cv=ev["score"], length=ev["length"], diff=ev["diff"],
                    curve=lc.to_dict("records") if lc is not None else [],
                    labels_needed=labels_needed(lc) if lc is not None else None, n=len(y), folds=k, seed=st.seed)
