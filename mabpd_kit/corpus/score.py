"""The hyperpartisan-style article score: a logistic regression on article features its record holds
(:data:`FEATURES`; parameters an :class:`~mabpd_kit.config.ArticleScoreConfig`), giving the probability
that an article is hyperpartisan in SemEval-2019 HyperPartisan's sense; :func:`explain` says why, and
:func:`prior_adjusted` moves it to another base rate (Saerens, Latinne & Decaestecker 2002)."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit.config import ArticleScoreConfig

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CATEGORIES", "FEATURES", "NAME", "adjust_prior", "coefficients", "estimate_base_rate", "explain",
           "feature_frame", "feature_vector", "features", "fit_logistic", "logit", "prior_adjusted", "probability",
           "shipped"]

#: what the score is, in the words every output uses
NAME = "hyperpartisan-style article score (fitted on SemEval-2019 HyperPartisan)"

#: the SPEC 1.2 meta-categories of evidence spans, in the order of the mix_* features
CATEGORIES = ("biased language", "framing bias", "unsupported claims", "selective presentation")
FEATURES = ("share_biased", "log_biased", "spans_per_100w", "top_score", *(f"mix_{c.replace(' ', '_')}" for c in CATEGORIES),
            "log_words")


@functools.lru_cache(maxsize=1)
def shipped() -> ArticleScoreConfig:
    """The shipped score parameters (``Config().corpus.score``; frozen, so built once)."""
    from mabpd_kit.config import CorpusConfig

    return CorpusConfig().score


def feature_vector(*, n_sentences: int, n_biased: int, scores: Iterable[float | None], categories: dict[str, int],
                   n_spans: int, n_words: int, top_k: int) -> np.ndarray:
    """The :data:`FEATURES` of one article from its counts (``top_score``: mean of the ``top_k`` scores)."""
    top = sorted((float(s or 0.0) for s in scores), reverse=True)[:top_k]
    mix = [categories.get(c, 0) / n_spans if n_spans else 0.0 for c in CATEGORIES]
    return np.array([n_biased / n_sentences if n_sentences else 0.0, math.log1p(n_biased), 100.0 * n_spans / max(n_words, 1),
                     sum(top) / len(top) if top else 0.0, *mix, math.log1p(n_words)])


def _analysed(a: Any) -> list[Any]:
    return [s for s in a.sentences if s.label in ("biased", "neutral")]


def features(a: Any, top_k: int = 3) -> np.ndarray | None:
    """The :data:`FEATURES` of an article record (None when it failed, is direct or has no sentence)."""
    if a.failed or getattr(a, "mode", "article") != "article" or not a.n_sentences:
        return None
    return feature_vector(n_sentences=a.n_sentences, n_biased=a.n_biased, scores=[s.score for s in _analysed(a)],
                          categories=a.categories, n_spans=a.n_spans, n_words=a.n_words, top_k=top_k)


def feature_frame(articles: Iterable[Any], top_k: int = 3, meta: Sequence[str] = ()) -> pd.DataFrame:
    """One row per article with features: ``id``, ``n_words``, ``n_biased``, the ``meta`` columns, :data:`FEATURES`."""
    import pandas as pd

    rows = []
    for a in articles:
        x = features(a, top_k)
        if x is not None:
            rows.append({"id": a.id, "n_words": a.n_words, "n_biased": a.n_biased,
                         **{c: a.meta.get(c) for c in meta}, **dict(zip(FEATURES, x.tolist()))})
    return pd.DataFrame(rows, columns=["id", "n_words", "n_biased", *meta, *FEATURES])


def _z(x: np.ndarray, p: ArticleScoreConfig) -> np.ndarray:
    return (x - np.asarray(p.center)) / np.asarray(p.scale)


def logit(x: np.ndarray, params: ArticleScoreConfig | None = None) -> np.ndarray | float:
    """The log-odds of feature rows ``x`` (one row, or a matrix of rows)."""
    p = params or shipped()
    return p.intercept + _z(np.asarray(x, dtype=float), p) @ np.asarray(p.coef)


def _sigmoid(t: Any) -> Any:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(t, dtype=float)))  # overflow-free logistic


def probability(a: Any, params: ArticleScoreConfig | None = None) -> float | None:
    """An article record's probability, calibrated to the training base rate (None without features)."""
    p = params or shipped()
    x = features(a, p.top_k)
    return None if x is None else float(_sigmoid(logit(x, p)))


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float, *, iters: int = 50, tol: float = 1e-10,
                 features: Sequence[str] = FEATURES, top_k: int = 3) -> ArticleScoreConfig:
    """The L2-penalised logistic regression of ``y`` (0/1) on ``X`` standardised on itself, by Newton's
    method (intercept unpenalised); ``coef_lo``/``coef_hi`` equal ``coef``."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    center = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-12] = 1.0  # a constant feature: its coefficient stays at 0 under the penalty
    Z = np.hstack([np.ones((len(X), 1)), (X - center) / scale])
    w = np.zeros(Z.shape[1])
    pen = np.full(Z.shape[1], float(l2))
    pen[0] = 1e-9  # the intercept is (all but) free; a tiny ridge keeps one-class folds solvable
    for _ in range(iters):
        p = _sigmoid(Z @ w)
        grad = Z.T @ (p - y) + pen * w
        hess = (Z * (p * (1 - p))[:, None]).T @ Z + np.diag(pen)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < tol:
            break
    coef = tuple(float(v) for v in w[1:])
    return ArticleScoreConfig(features=tuple(features), top_k=top_k, intercept=float(w[0]), coef=coef, coef_lo=coef,
                              coef_hi=coef, center=tuple(center.tolist()), scale=tuple(scale.tolist()), l2=float(l2),
                              n_train=len(y))


def predict(X: np.ndarray, params: ArticleScoreConfig) -> np.ndarray:
    """Probabilities of feature rows ``X``."""
    return _sigmoid(logit(np.asarray(X, dtype=float), params))


def coefficients(params: ArticleScoreConfig | None = None) -> pd.DataFrame:
    """The score's coefficients (log-odds per standard deviation) with their intervals and odds ratios."""
    import pandas as pd

    p = params or shipped()
    rows = [{"feature": "(intercept)", "coef": p.intercept, "lo": None, "hi": None, "center": None, "scale": None}]
    rows += [{"feature": f, "coef": c, "lo": lo, "hi": hi, "center": m, "scale": s}
             for f, c, lo, hi, m, s in zip(p.features, p.coef, p.coef_lo, p.coef_hi, p.center, p.scale)]
    df = pd.DataFrame(rows)
    df["odds_ratio"] = np.exp(df["coef"].astype(float))
    return df


# -- prior adjustment (Saerens, Latinne & Decaestecker 2002) ---------------------------------------


def adjust_prior(p: Any, base_rate: float, train_rate: float | None = None) -> np.ndarray:
    """Probabilities ``p`` (calibrated to ``train_rate``, default the shipped score's) moved to a corpus
    whose share of positives is ``base_rate``."""
    pi = shipped().base_rate if train_rate is None else float(train_rate)
    for name, v in (("base_rate", base_rate), ("train_rate", pi)):
        if not 0 < v < 1:
            raise ValueError(f"{name} must be between 0 and 1 (exclusive), not {v!r}")
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    a, b = base_rate / pi * p, (1 - base_rate) / (1 - pi) * (1 - p)
    return a / (a + b)


def estimate_base_rate(p: Any, train_rate: float | None = None, params: ArticleScoreConfig | None = None
                       ) -> tuple[float, int]:
    """EM estimate of an unlabelled corpus's share of positives: ``(base_rate, iterations)``."""
    par = params or shipped()
    pi = par.base_rate if train_rate is None else float(train_rate)
    p = np.asarray(p, dtype=float)
    p = p[np.isfinite(p)]
    if not len(p):
        raise ValueError("estimating a base rate needs at least one probability")
    q = pi
    for it in range(1, par.em_max_iter + 1):
        new = float(np.clip(adjust_prior(p, q, pi).mean(), 1e-6, 1 - 1e-6))
        if abs(new - q) < par.em_tol:
            return new, it
        q = new
    return q, par.em_max_iter


def prior_adjusted(data: Any, base_rate: float | str = "em", params: ArticleScoreConfig | None = None,
                   column: str = "p_biased") -> pd.DataFrame:
    """The articles' frame with ``p_adjusted``: the probability moved to ``base_rate`` (a number, or
    ``"em"``: estimated from these articles); ``frame.attrs`` say which."""
    par = params or shipped()
    df = data.to_frame() if hasattr(data, "to_frame") and not hasattr(data, "columns") else data.copy()
    if column not in df:
        raise ValueError(f"no column {column!r} to adjust (columns: {list(df.columns)})")
    p = df[column].to_numpy(dtype=float)
    ok = np.isfinite(p)
    iters = 0
    if isinstance(base_rate, str):
        if base_rate.lower() != "em":
            raise ValueError(f"base_rate must be a number in (0, 1) or 'em', not {base_rate!r}")
        q, iters = estimate_base_rate(p[ok], par.base_rate, par)
    else:
        q = float(base_rate)
    adj = np.full(len(p), np.nan)
    adj[ok] = adjust_prior(p[ok], q, par.base_rate)
    df["p_adjusted"] = adj
    df.attrs.update(base_rate=q, base_rate_source="EM" if iters else "given", train_rate=par.base_rate,
                    em_iterations=iters, score=NAME)
    return df


# -- why: contributions and the sentences and spans that moved the score ------------------------


def _evidence(a: Any) -> dict[tuple[int, int], Any]:
    """The article's evidence spans by offsets, strongest kept."""
    ev: dict[tuple[int, int], Any] = {}
    for s in a.sentences:
        for sp in s.spans:
            key = (sp.start, sp.end)
            if key not in ev or ev[key].score < sp.score:
                ev[key] = sp
    return ev


def _without(a: Any, p: ArticleScoreConfig, ev: dict[tuple[int, int], Any], scores: list[tuple[int, float | None]], *,
             sentence: Any = None, span: tuple[int, int] | None = None) -> float:
    """The article's log-odds with one biased sentence made neutral or one evidence span gone."""
    gone = {(sp.start, sp.end) for sp in sentence.spans} & ev.keys() if sentence is not None else {span}
    cats: dict[str, int] = {}
    for key, sp in ev.items():
        if key not in gone:
            cats[sp.category] = cats.get(sp.category, 0) + 1
    k = sentence.k if sentence is not None else None
    kept = [0.0 if i == k else v for i, v in scores]
    x = feature_vector(n_sentences=a.n_sentences, n_biased=a.n_biased - (sentence is not None), scores=kept,
                       categories=cats, n_spans=len(ev) - len(gone & ev.keys()), n_words=a.n_words, top_k=p.top_k)
    return float(logit(x, p))


def explain(a: Any, params: ArticleScoreConfig | None = None, *, top: int = 5) -> dict[str, Any] | None:
    """Why an article got its probability: ``p``, ``logit``, each feature's ``contributions`` (they sum
    with ``intercept`` to ``logit``), and the ``top`` ``sentences`` and ``spans`` whose removal lowers the
    log-odds most (``delta``). None when the article has no features."""
    p = params or shipped()
    x = features(a, p.top_k)
    if x is None:
        return None
    z = _z(x, p)
    full = float(logit(x, p))
    contrib = [{"feature": f, "value": float(v), "z": float(zz), "coef": c, "contribution": float(c * zz)}
               for f, v, zz, c in zip(p.features, x, z, p.coef)]
    ev = _evidence(a)
    scores = [(s.k, s.score) for s in _analysed(a)]
    sents = [{"k": s.k, "sentence": a.text[s.start:s.end], "score": s.score,
              "delta": full - _without(a, p, ev, scores, sentence=s)} for s in a.sentences if s.label == "biased"]
    spans = [{"span": sp.text, "category": sp.category, "agent": sp.agent,
              "delta": full - _without(a, p, ev, scores, span=key)} for key, sp in ev.items()]
    by = lambda r: -r["delta"]  # noqa: E731
    return {"p": float(_sigmoid(full)), "logit": full, "intercept": p.intercept, "contributions": contrib,
            "sentences": sorted(sents, key=by)[:top], "spans": sorted(spans, key=by)[:top]}
