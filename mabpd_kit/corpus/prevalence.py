"""Prevalence of biased sentences per group, corrected for the detector's error rates.

Classify-and-count (the share of sentences the kit calls biased) is pulled towards the middle
whenever the detector's true- and false-positive rates are not 1 and 0. This module
estimates the share of sentences a BABE-style annotator would call biased instead, with an interval
that carries the uncertainty of the error rates as well as that of the group's sample:

- each sentence falls into a bin: the sentences the kit calls neutral in bin 0, the ones it calls biased
  in bins 1.. by their score (cut at ``CorpusConfig.prevalence_bins``); a validation sample gives,
  for biased and for neutral sentences, how many fall into each bin (:class:`ErrorRates`: BABE train
  by default, shipped as the fit artefact ``sentence_error_rates``; or your own labelled sample,
  :func:`error_rates`);
- Bayesian mixture quantification: each draw takes the two bin distributions from their Dirichlet
  posteriors (validation counts + 1/2), then the group's posterior of the share on a grid (its bin
  counts are a multinomial of the mixture ``pi * biased + (1 - pi) * neutral``, flat prior on
  ``pi``). The estimate is the median of the posterior averaged over draws, the interval its
  equal-tailed quantiles, so a small validation sample widens it;
- sentences come in articles: when an ``article`` key is given, the group's counts are divided by
  the design effect of the clustering (the article bootstrap's variance of the flagged share over
  the binomial one, at least 1), so an outlet that writes alike in every sentence does not count as
  more evidence than it is.

The method was chosen by leave-one-outlet-out coverage on BABE train (:mod:`mabpd_kit.evaluate.validity`);
a model of the whole decision trace in place of flag and score was tried and not adopted
(``bench/bench_prevalence.py``).

>>> import numpy as np
>>> r = ErrorRates(edges=(0.7,), biased=(30, 20, 50), neutral=(70, 20, 10))
>>> round(r.tpr, 2), round(r.fpr, 2)
(0.7, 0.3)
>>> est = estimate(np.array([50, 20, 30]), r, draws=400, seed=0)
>>> 0.35 < est["estimate"] < 0.65, est["lo"] < est["estimate"] < est["hi"]
(True, True)
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field, model_validator

from mabpd_kit.corpus.settings import CorpusConfig, resolve

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ErrorRates", "article_bins", "bin_counts", "classify_and_count", "design_effect", "error_rates", "estimate",
           "group_prevalence", "group_seed", "prevalence", "shipped_rates", "shipped_validity"]

#: grid points of the share's posterior (0, 1/400, ..., 1)
_GRID = 401
#: the Dirichlet prior's weight per bin (Jeffreys)
_PRIOR = 0.5


class ErrorRates(BaseModel):
    """Where biased and neutral sentences of a validation sample fall among the score bins.

    Bin 0 holds the sentences the kit calls neutral; ``edges`` cut the score of the ones it calls biased
    into ``len(edges) + 1`` more bins (bin ``1 + searchsorted(edges, score, 'right')``); ``biased`` and
    ``neutral`` count the validation sentences of each class (by the annotators) per bin."""

    edges: tuple[float, ...]
    biased: tuple[int, ...]
    neutral: tuple[int, ...]
    spread: tuple[tuple[float, ...] | None, tuple[float, ...] | None] | None = Field(
        None, description="how much the bin distributions of biased and of neutral sentences vary from one "
                          "outlet to another: posterior weights of the Dirichlet concentrations _KAPPA fitted "
                          "across the validation sample's outlets; None = a single population (no spread)")
    source: str = Field("", description="where the counts come from (data file, split)")

    @model_validator(mode="after")
    def _check(self) -> ErrorRates:
        k = len(self.edges) + 2
        if len(self.biased) != k or len(self.neutral) != k:
            raise ValueError(f"{len(self.edges)} edges make {k} bins: biased and neutral need {k} counts each")
        if not sum(self.biased) or not sum(self.neutral):
            raise ValueError("the validation sample needs biased and neutral sentences")
        if self.spread and any(w is not None and len(w) != len(_KAPPA) for w in self.spread):
            raise ValueError(f"spread weights need one value per concentration of the grid ({len(_KAPPA)})")
        return self

    @property
    def tpr(self) -> float:
        """Share of the biased validation sentences the kit calls biased."""
        return 1 - self.biased[0] / sum(self.biased)

    @property
    def fpr(self) -> float:
        """Share of the neutral validation sentences the kit calls biased."""
        return 1 - self.neutral[0] / sum(self.neutral)

    def to_values(self) -> dict[str, Any]:
        return {"edges": list(self.edges), "biased": list(self.biased), "neutral": list(self.neutral),
                "spread": [None if w is None else [round(float(v), 8) for v in w] for w in self.spread]
                if self.spread else None, "kappa_grid": [round(float(k), 4) for k in _KAPPA], "source": self.source}


def group_seed(seed: int, group: Any) -> list[int]:
    """The seed of one group's bootstrap: the run's seed and a stable hash of the group's name."""
    return [int(seed), zlib.crc32(str(group).encode("utf-8"))]


def bin_counts(flags: Any, scores: Any, edges: Sequence[float]) -> np.ndarray:
    """Sentences per bin: bin 0 the ones flagged 0 (neutral), then the flagged ones by score."""
    f, s = np.asarray(flags, dtype=float), np.asarray(scores, dtype=float)
    ok = ~(np.isnan(f) | np.isnan(s))
    f, s = f[ok], s[ok]
    k = np.where(f > 0, 1 + np.searchsorted(np.asarray(edges, dtype=float), s, side="right"), 0)
    return np.bincount(k, minlength=len(edges) + 2)


def error_rates(flags: Any, scores: Any, labels: Any, edges: Sequence[float] | None = None, *, groups: Any = None,
                source: str = "", settings: CorpusConfig | None = None) -> ErrorRates:
    """:class:`ErrorRates` from a labelled sample: the kit's sentence ``flags`` (1 = it says biased) and
    ``scores``, and the 0/1 gold ``labels`` (1 = biased; missing ones are left out). ``edges`` default to
    ``settings.prevalence_bins``. ``groups`` (e.g. the outlet of each sentence): fit how much the error
    rates vary between groups (:attr:`ErrorRates.spread`), so a new outlet's interval carries it."""
    st = resolve(settings)
    e = tuple(edges if edges is not None else st.prevalence_bins)
    f, s, y = (np.asarray(v, dtype=float) for v in (flags, scores, labels))
    ok = ~(np.isnan(f) | np.isnan(s) | np.isnan(y))
    if not np.isin(y[ok], (0, 1)).all():
        raise ValueError("labels must be 0 (neutral) or 1 (biased)")
    counts = {c: bin_counts(f[ok & (y == c)], s[ok & (y == c)], e) for c in (0, 1)}
    spread = None
    if groups is not None:
        g = np.asarray(groups, dtype=object)
        spread = tuple(_kappa_weights([bin_counts(f[m], s[m], e) for m in
                                       (ok & (y == c) & (g == v) for v in set(g[ok & (y == c)].tolist()))],
                                      counts[c], st.prevalence_min_class) for c in (1, 0))
    return ErrorRates(edges=e, biased=tuple(int(v) for v in counts[1]), neutral=tuple(int(v) for v in counts[0]),
                      spread=None if spread is None else tuple(None if w is None else tuple(w.tolist()) for w in spread),
                      source=source)


#: the concentrations a class's spread between outlets may take (a log grid; flat prior in log kappa)
_KAPPA = np.logspace(0.5, 4, 141)


def _kappa_weights(per_group: list[np.ndarray], pooled: np.ndarray, min_n: int) -> np.ndarray | None:
    """The posterior weights of :data:`_KAPPA` for one class: the Dirichlet-multinomial likelihood of the
    groups' bin counts around the pooled shares (groups with fewer than ``min_n`` sentences are left
    out; None with fewer than two groups: the spread cannot be told)."""
    from scipy.special import gammaln

    x = np.array([c for c in per_group if c.sum() >= min_n], dtype=float)
    if len(x) < 2:
        return None
    m = (pooled + _PRIOR) / (pooled + _PRIOR).sum()
    kappa = _KAPPA[:, None]
    n = x.sum(axis=1)[None, :]
    ll = (gammaln(kappa) - gammaln(n + kappa)).sum(axis=1) + \
        (gammaln(x[None, :, :] + kappa[:, :, None] * m) - gammaln(kappa[:, :, None] * m)).sum(axis=(1, 2))
    w = np.exp(ll - ll.max())
    return w / w.sum()


def shipped_rates() -> ErrorRates:
    """The error rates shipped with the kit (fit artefact ``sentence_error_rates``: BABE train)."""
    import json
    from importlib import resources

    path = resources.files("mabpd_kit") / "resources" / "fits" / "sentence_error_rates.json"
    values = json.loads(path.read_text(encoding="utf-8"))["values"]
    return ErrorRates.model_validate(values)


def shipped_validity() -> dict[str, Any] | None:
    """The leave-one-outlet-out check stored with the shipped error rates (covered, groups, spearman,
    mae, median_width; :func:`mabpd_kit.evaluate.validity.prevalence_validity`), or None."""
    import json
    from importlib import resources

    try:
        path = resources.files("mabpd_kit") / "resources" / "fits" / "sentence_error_rates.json"
        return json.loads(path.read_text(encoding="utf-8"))["values"].get("validity")
    except (OSError, ValueError, KeyError):
        return None


def shipped_by_leaning() -> list[dict[str, Any]]:
    """The detector's error rates by outlet leaning on BABE train, stored with the shipped error rates
    (:func:`mabpd_kit.evaluate.validity.fit_sentence_error_rates`); [] when the artefact has none."""
    import json
    from importlib import resources

    try:
        path = resources.files("mabpd_kit") / "resources" / "fits" / "sentence_error_rates.json"
        return list(json.loads(path.read_text(encoding="utf-8"))["values"].get("by_leaning") or [])
    except (OSError, ValueError, KeyError):
        return []


def estimate(counts: Any, rates: ErrorRates, *, draws: int = 2_000, confidence: float = 0.95,
             seed: int | Sequence[int] = 0, deff: float = 1.0) -> dict[str, float]:
    """The corrected share of biased sentences of one group from its sentences per score bin:
    ``estimate`` (posterior median), ``lo``/``hi`` (equal-tailed ``confidence`` interval), ``n``
    (sentences) and ``n_eff`` (divided by the design effect ``deff``)."""
    n = np.asarray(counts, dtype=float)
    if n.shape != (len(rates.edges) + 2,):
        raise ValueError(f"counts need one value per bin ({len(rates.edges) + 2}), not {n.shape}")
    total = float(n.sum())
    if total <= 0:
        return {"estimate": math.nan, "lo": math.nan, "hi": math.nan, "n": 0, "n_eff": 0.0}
    n = n / max(float(deff), 1.0)
    rng = np.random.default_rng(seed)
    p1, p0 = (_draw(rng, c, k, draws) for c, k in zip((rates.biased, rates.neutral), rates.spread or (None, None)))
    grid = np.linspace(0.0, 1.0, _GRID)
    post = np.zeros(_GRID)
    for a in range(0, draws, 250):  # draws x grid x bins in blocks (bounded memory)
        mix = grid[None, :, None] * p1[a:a + 250, None, :] + (1 - grid[None, :, None]) * p0[a:a + 250, None, :]
        ll = np.log(np.clip(mix, 1e-300, None)) @ n
        w = np.exp(ll - ll.max(axis=1, keepdims=True))
        post += (w / w.sum(axis=1, keepdims=True)).sum(axis=0)
    cdf = np.cumsum(post) / post.sum()
    alpha = 1 - confidence
    lo, med, hi = (float(np.interp(q, cdf, grid)) for q in (alpha / 2, 0.5, 1 - alpha / 2))
    return {"estimate": med, "lo": lo, "hi": hi, "n": int(total), "n_eff": float(n.sum())}


def _draw(rng: np.random.Generator, counts: Sequence[int], weights: Any, draws: int) -> np.ndarray:
    """Bin distributions of one class: the pooled shares from their posterior, then (with the spread's
    ``weights`` over :data:`_KAPPA`) a new outlet's shares around them, the concentration drawn too."""
    mean = rng.dirichlet(np.asarray(counts, dtype=float) + _PRIOR, size=draws)
    if weights is None:
        return mean
    w = np.asarray(weights, dtype=float)
    kappa = rng.choice(_KAPPA, size=(draws, 1), p=w / w.sum())
    g = rng.gamma(np.clip(kappa * mean, 1e-3, None))
    return g / g.sum(axis=1, keepdims=True)


def design_effect(flagged: Any, totals: Any, *, resamples: int = 500, seed: int | Sequence[int] = 0) -> float:
    """The design effect of the flagged share when sentences come in articles: the article bootstrap's
    variance of the share over the binomial variance, at least 1 (1 when it cannot be told).
    ``flagged`` and ``totals``: each article's flagged and analysed sentences."""
    f, t = np.asarray(flagged, dtype=float), np.asarray(totals, dtype=float)
    keep = t > 0
    f, t = f[keep], t[keep]
    n, p = t.sum(), (f.sum() / t.sum() if t.sum() else 0.0)
    if len(t) < 2 or p in (0.0, 1.0):
        return 1.0
    rng = np.random.default_rng(seed)
    step = max(1, _CELLS // len(t))
    shares = np.concatenate([(f[ix].sum(axis=1) / t[ix].sum(axis=1)) for ix in
                             (rng.integers(0, len(t), size=(min(step, resamples - a), len(t)))
                              for a in range(0, resamples, step))])
    return max(1.0, float(shares.var() / (p * (1 - p) / n)))


#: at most this many cells of a (resamples, articles) index matrix at once
_CELLS = 4_000_000


def classify_and_count(flagged: int, total: int, *, confidence: float = 0.95, deff: float = 1.0) -> dict[str, float]:
    """The share of sentences the kit flags (classify-and-count, *not* corrected) with a Wilson interval
    on the effective sample size (``total / deff``)."""
    if total <= 0:
        return {"cc": math.nan, "cc_lo": math.nan, "cc_hi": math.nan}
    from statistics import NormalDist

    n, p = total / max(deff, 1.0), flagged / total
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    mid, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return {"cc": p, "cc_lo": max(0.0, mid - half), "cc_hi": min(1.0, mid + half)}


def article_bins(sentences: Iterable[Any], edges: Sequence[float]) -> tuple[int, ...]:
    """One article's analysed sentences per bin (anything with ``label`` and ``score``: its
    :class:`~mabpd_kit.corpus.articles.SentenceResult` list; failed and skipped ones are left out)."""
    flags, scores = [], []
    for x in sentences:
        if x.label in ("biased", "neutral") and x.score is not None:
            flags.append(float(x.label == "biased"))
            scores.append(float(x.score))
    return tuple(int(v) for v in bin_counts(flags, scores, edges))


def group_prevalence(bins: Any, rates: ErrorRates, *, settings: CorpusConfig | None = None,
                     seed: int | Sequence[int] = 0) -> dict[str, Any]:
    """One group's figures from its articles' bin counts (articles x bins): ``n_sentences``,
    classify-and-count with its interval, the corrected ``prevalence`` with its interval, ``width``,
    ``wide`` (wider than ``settings.prevalence_max_width``: too wide to compare), ``deff`` and ``n_eff``."""
    st = resolve(settings)
    b = np.asarray(bins, dtype=float).reshape(-1, len(rates.edges) + 2)
    totals, flagged = b.sum(axis=1), b[:, 1:].sum(axis=1)
    deff = design_effect(flagged, totals, seed=seed)
    est = estimate(b.sum(axis=0), rates, draws=st.prevalence_draws, confidence=st.confidence, seed=seed, deff=deff)
    width = est["hi"] - est["lo"]
    return {"n_sentences": int(totals.sum()),
            **classify_and_count(int(flagged.sum()), int(totals.sum()), confidence=st.confidence, deff=deff),
            "prevalence": est["estimate"], "prevalence_lo": est["lo"], "prevalence_hi": est["hi"], "width": width,
            "wide": bool(not width <= st.prevalence_max_width), "deff": deff, "n_eff": est["n_eff"]}


def prevalence(data: pd.DataFrame, by: str, *, rates: ErrorRates | None = None, article: str = "id",
               settings: CorpusConfig | None = None) -> pd.DataFrame:
    """One row per group (ordered by name) with the figures of :func:`group_prevalence`.

    ``data``: a sentence frame (``results.to_frame("sentence")``: ``label`` and ``score`` per sentence,
    ``article`` ties them to their article) or an article frame with a ``bins`` column (each article's
    sentences per bin, :func:`article_bins`). ``rates``: the validation sample's :class:`ErrorRates`
    (default: the shipped BABE train ones, :func:`shipped_rates`)."""
    import pandas as pd

    st = resolve(settings)
    rates = rates or shipped_rates()
    if by not in data:
        raise ValueError(f"no column {by!r} to group by (columns: {list(data.columns)})")
    frame = data if "bins" in data else _bins_from_sentences(data, by, article, rates.edges)
    if "failed" in frame:
        frame = frame[~frame["failed"].astype(bool)]
    rows = []
    for g, part in frame[frame[by].notna()].groupby(by, sort=True):
        bins = np.array([list(v) for v in part["bins"] if v is not None], dtype=float)
        if len(bins) and bins.shape[1] != len(rates.edges) + 2:
            raise ValueError(f"the bins column has {bins.shape[1]} bins; the error rates have {len(rates.edges) + 2}")
        rows.append({by: g, **group_prevalence(bins, rates, settings=st, seed=group_seed(st.seed, g))})
    return pd.DataFrame(rows)


def _bins_from_sentences(sentences: pd.DataFrame, by: str, article: str, edges: Sequence[float]) -> pd.DataFrame:
    """Each article's bin counts from a sentence frame (one row per article: ``article``, ``by``, ``bins``)."""
    import pandas as pd

    missing = [c for c in ("label", "score") if c not in sentences]
    if missing:
        raise ValueError(f"a sentence frame needs columns {missing} (or give an article frame with 'bins')")
    s = sentences[sentences["label"].isin(["biased", "neutral"]) & sentences["score"].notna()]
    key = article if article in s else by
    rows = [{by: grp, "bins": tuple(int(v) for v in bin_counts((p["label"] == "biased").to_numpy(dtype=float),
                                                               p["score"].to_numpy(dtype=float), edges))}
            for (_, grp), p in s.groupby([key, by], sort=False)]
    return pd.DataFrame(rows, columns=[by, "bins"])
