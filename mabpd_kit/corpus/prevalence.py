"""The share of biased sentences per group corrected for the detector's error rates: each sentence falls
into a score bin, a validation sample says where biased and neutral sentences fall (:class:`ErrorRates`),
and Bayesian mixture quantification gives the share with an interval that carries the error rates'
uncertainty, their spread between outlets and the clustering of sentences in articles (design effect)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Iterator, Sequence
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
    """Validation sentences of each class per score bin: bin 0 the ones the kit calls neutral, then the
    ones it calls biased cut by ``edges`` (bin ``1 + searchsorted(edges, score, 'right')``)."""

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
    """The seed of one group's bootstrap: the run's seed and a stable hash of its name."""
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
    """:class:`ErrorRates` from the kit's sentence ``flags`` and ``scores`` and 0/1 gold ``labels``;
    ``groups`` (e.g. each sentence's outlet): fit how much the rates vary between them."""
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
    """The posterior weights of :data:`_KAPPA` for one class (Dirichlet-multinomial likelihood of the
    groups' bin counts; None with fewer than two groups of ``min_n`` sentences)."""
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


def _shipped() -> dict[str, Any]:
    """The values of the fit artefact ``sentence_error_rates`` (BABE train)."""
    import json
    from importlib import resources

    path = resources.files("mabpd_kit") / "resources" / "fits" / "sentence_error_rates.json"
    return json.loads(path.read_text(encoding="utf-8"))["values"]


def shipped_rates() -> ErrorRates:
    """The error rates shipped with the kit (BABE train)."""
    return ErrorRates.model_validate(_shipped())


def shipped_validity() -> dict[str, Any] | None:
    """The leave-one-outlet-out check stored with the shipped error rates, or None."""
    try:
        return _shipped().get("validity")
    except (OSError, ValueError, KeyError):
        return None


def shipped_by_leaning() -> list[dict[str, Any]]:
    """The detector's error rates by outlet leaning on BABE train ([] when the artefact has none)."""
    try:
        return list(_shipped().get("by_leaning") or [])
    except (OSError, ValueError, KeyError):
        return []


def estimate(counts: Any, rates: ErrorRates, *, draws: int = 2_000, confidence: float = 0.95,
             seed: int | Sequence[int] = 0, deff: float = 1.0) -> dict[str, float]:
    """The corrected share of one group from its sentences per bin: ``estimate`` (posterior median),
    ``lo``/``hi``, ``n`` and ``n_eff`` (``n`` over the design effect ``deff``)."""
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
    """Bin distributions of one class from their posterior (with ``weights``: a new outlet's around them)."""
    mean = rng.dirichlet(np.asarray(counts, dtype=float) + _PRIOR, size=draws)
    if weights is None:
        return mean
    w = np.asarray(weights, dtype=float)
    kappa = rng.choice(_KAPPA, size=(draws, 1), p=w / w.sum())
    g = rng.gamma(np.clip(kappa * mean, 1e-3, None))
    return g / g.sum(axis=1, keepdims=True)


def design_effect(flagged: Any, totals: Any, *, resamples: int = 500, seed: int | Sequence[int] = 0) -> float:
    """The design effect of the flagged share (each article's ``flagged`` of ``totals`` sentences): the
    article bootstrap's variance over the binomial one, at least 1."""
    f, t = np.asarray(flagged, dtype=float), np.asarray(totals, dtype=float)
    keep = t > 0
    f, t = f[keep], t[keep]
    n, p = t.sum(), (f.sum() / t.sum() if t.sum() else 0.0)
    if len(t) < 2 or p in (0.0, 1.0):
        return 1.0
    blocks = boot_blocks(len(t), resamples, np.random.default_rng(seed))
    shares = np.concatenate([(f[ix].sum(axis=1) / t[ix].sum(axis=1)) for _, _, ix in blocks])
    return max(1.0, float(shares.var() / (p * (1 - p) / n)))


#: at most this many cells of a (resamples, articles) index matrix at once (32 MB)
_CELLS = 4_000_000


def boot_blocks(n: int, resamples: int, rng: np.random.Generator) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(a, b, indices)``: bootstrap resamples ``a:b`` of ``n`` items, at most :data:`_CELLS` indices at once."""
    step = max(1, _CELLS // max(n, 1))
    for a in range(0, resamples, step):
        b = min(resamples, a + step)
        yield a, b, rng.integers(0, n, size=(b - a, n))


def classify_and_count(flagged: int, total: int, *, confidence: float = 0.95, deff: float = 1.0) -> dict[str, float]:
    """The share of sentences the kit flags (not corrected) with a Wilson interval on ``total / deff``."""
    if total <= 0:
        return {"cc": math.nan, "cc_lo": math.nan, "cc_hi": math.nan}
    from statistics import NormalDist

    n, p = total / max(deff, 1.0), flagged / total
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    mid, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return {"cc": p, "cc_lo": max(0.0, mid - half), "cc_hi": min(1.0, mid + half)}


def article_bins(sentences: Iterable[Any], edges: Sequence[float]) -> tuple[int, ...]:
    """One article's analysed sentences (anything with ``label`` and ``score``) per bin."""
    flags, scores = [], []
    for x in sentences:
        if x.label in ("biased", "neutral") and x.score is not None:
            flags.append(float(x.label == "biased"))
            scores.append(float(x.score))
    return tuple(int(v) for v in bin_counts(flags, scores, edges))


def group_prevalence(bins: Any, rates: ErrorRates, *, settings: CorpusConfig | None = None,
                     seed: int | Sequence[int] = 0) -> dict[str, Any]:
    """One group's figures from its articles' bin counts: ``n_sentences``, classify-and-count and the
    corrected ``prevalence`` with their intervals, ``width``, ``wide``, ``deff`` and ``n_eff``."""
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
    """One row per group (by name) with the figures of :func:`group_prevalence`, from a sentence frame
    or an article frame with a ``bins`` column; ``rates`` default to :func:`shipped_rates`."""
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
    """Each article's bin counts from a sentence frame."""
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
