"""Aggregation of the article frame by any metadata column (outlet, topic, month): percentile bootstrap
intervals over each group's articles (seeded per group, so a group's interval does not depend on the
others), effect sizes between groups, the category mix, the trend. Failed articles are left out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit.corpus.prevalence import _CELLS, boot_blocks, group_seed
from mabpd_kit.corpus.settings import CorpusConfig, resolve

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["aggregate", "bootstrap_mean", "category_mix", "cliffs_delta", "cohens_h", "compare", "group_seed",
           "month", "trend", "with_bins"]

#: the article measures aggregated by default: the rule's decision and the evidence behind it
MEASURES = ("pred", "share_biased", "spans_per_100w")


def bootstrap_mean(values: Sequence[float], *, resamples: int, confidence: float,
                   seed: int | Sequence[int]) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: percentile bootstrap of the mean (a large group in bounded memory)."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    rng = np.random.default_rng(seed)
    n = len(x)
    if n * resamples <= _EXACT:
        means = x[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    else:
        means = _large_means(x, resamples, rng)
    alpha = 1 - confidence
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(x.mean()), float(lo), float(hi)


#: a bootstrap drawn as one (resamples, n) matrix of indices up to this many cells; above it, from the
#: value counts (the same distribution, far fewer draws) or in blocks of at most _CELLS cells
_EXACT = 250_000
#: distinct values up to which a large group is resampled from its value counts
_DISTINCT = 4_096


def _large_means(x: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The means of ``resamples`` bootstrap resamples of a large ``x``: a multinomial draw over its
    distinct values when they are few, else blocks of at most ``_CELLS`` indices."""
    n = len(x)
    vals, counts = np.unique(x, return_counts=True)
    out = np.empty(resamples)
    if len(vals) <= _DISTINCT and 8 * len(vals) <= n:  # a multinomial draw costs ~8 index draws per value
        step = max(1, _CELLS // len(vals))
        p = counts / n
        for a in range(0, resamples, step):
            b = min(resamples, a + step)
            out[a:b] = rng.multinomial(n, p, size=b - a) @ vals / n
        return out
    for a, b, ix in boot_blocks(n, resamples, rng):
        out[a:b] = x[ix].mean(axis=1)
    return out


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h between two proportions: ``2 asin(sqrt p1) - 2 asin(sqrt p2)`` (0.2 small, 0.5 medium, 0.8 large)."""
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


def cliffs_delta(a: Sequence[float], b: Sequence[float]) -> float:
    """Cliff's delta: P(a > b) - P(a < b) over all pairs (-1..1; |d| 0.147 small, 0.33 medium, 0.474 large)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(x) or not len(y):
        return math.nan
    ys = np.sort(y)
    greater = np.searchsorted(ys, x, side="left").sum()
    less = (len(ys) - np.searchsorted(ys, x, side="right")).sum()
    return float((greater - less) / (len(x) * len(y)))


def _magnitude(value: float, cuts: tuple[float, float, float]) -> str:
    v = abs(value)
    if math.isnan(v):
        return ""
    return "negligible" if v < cuts[0] else "small" if v < cuts[1] else "medium" if v < cuts[2] else "large"


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    return df[~df["failed"].astype(bool)] if "failed" in df else df


def month(values: Any) -> Any:
    """Dates (strings or timestamps) as ``YYYY-MM`` strings, each read on its own (unparseable -> None)."""
    import pandas as pd

    d = pd.to_datetime(pd.Series(values), errors="coerce", utc=True, format="mixed")
    return d.dt.strftime("%Y-%m").where(d.notna(), None)


def aggregate(df: pd.DataFrame | Any, by: str, *, measures: Sequence[str] = MEASURES,
              settings: CorpusConfig | None = None, rates: Any = None, exposure: bool = True) -> pd.DataFrame:
    """One row per group (by name): ``n``, each measure's mean with its bootstrap interval (``pred`` as
    ``biased_rate``), ``small`` and a ``warning`` under ``settings.min_group``; with ``exposure`` and
    ``n_words``, the densities (:func:`mabpd_kit.corpus.density.densities`); with sentence bins (the
    :class:`CorpusResults` itself, or a ``bins`` column), the corrected share (``rates``)."""
    import pandas as pd

    st = resolve(settings)
    if not hasattr(df, "columns") and hasattr(df, "to_frame"):
        df = with_bins(df, rates=rates, settings=st)
    if by not in df:
        raise ValueError(f"no column {by!r} to group by (columns: {list(df.columns)})")
    data = _ok(df)
    rows = []
    for g, part in data.groupby(by, sort=True, dropna=True):
        row: dict[str, Any] = {by: g, "n": len(part)}
        for j, m in enumerate(measures):
            if m not in part:
                continue
            name = "biased_rate" if m == "pred" else m
            vals = part[m].dropna().astype(float).to_numpy()
            est, lo, hi = bootstrap_mean(vals, resamples=st.bootstrap_resamples, confidence=st.confidence,
                                         seed=group_seed(st.seed, g) + [j])
            row.update({name: est, f"{name}_lo": lo, f"{name}_hi": hi})
        row["small"] = len(part) < st.min_group
        row["warning"] = (f"only {len(part)} articles (< {st.min_group}): a wide interval, compare with care"
                          if row["small"] else "")
        rows.append(row)
    out = pd.DataFrame(rows)
    return _with_measures(out, data, by, st, rates, exposure) if len(out) else out


def _with_measures(out: pd.DataFrame, data: pd.DataFrame, by: str, st: CorpusConfig, rates: Any,
                   exposure: bool) -> pd.DataFrame:
    if exposure and "n_words" in data:
        from mabpd_kit.corpus.density import densities

        dens = densities(data, by, settings=st)
        if len(dens):
            out = out.merge(dens.drop(columns=["n", "small"]), on=by, how="left")
    if "bins" in data:
        from mabpd_kit.corpus.prevalence import prevalence

        prev = prevalence(data, by, rates=rates, settings=st)
        if len(prev):
            out = out.merge(prev, on=by, how="left")
    return out


def with_bins(results: Any, *, rates: Any = None, settings: CorpusConfig | None = None) -> pd.DataFrame:
    """The article frame of a :class:`CorpusResults` with each article's sentences per bin (``bins``)."""
    from mabpd_kit.corpus.prevalence import article_bins, shipped_rates

    edges = (rates or shipped_rates()).edges
    frame = results.to_frame()
    bins = {a.id: article_bins(a.sentences, edges) for a in results}
    return frame.assign(bins=frame["id"].map(bins))


def compare(df: pd.DataFrame, by: str, *, measure: str = "share_biased", groups: Sequence[Any] | None = None,
            settings: CorpusConfig | None = None) -> pd.DataFrame:
    """Every pair of groups: the difference in the share of biased articles with Cohen's h, and Cliff's
    delta on ``measure``, each with its conventional magnitude."""
    import pandas as pd

    st = resolve(settings)
    data = _ok(df)
    names = list(groups) if groups is not None else sorted(data[by].dropna().unique(), key=str)
    parts = {g: data[data[by] == g] for g in names}
    rows = []
    for a, b in combinations(names, 2):
        pa, pb = parts[a], parts[b]
        ra = float(pa["pred"].mean()) if len(pa) else math.nan
        rb = float(pb["pred"].mean()) if len(pb) else math.nan
        h = cohens_h(ra, rb) if not (math.isnan(ra) or math.isnan(rb)) else math.nan
        d = cliffs_delta(pa[measure].dropna(), pb[measure].dropna()) if measure in data else math.nan
        rows.append({"group_a": a, "group_b": b, "n_a": len(pa), "n_b": len(pb), "rate_a": ra, "rate_b": rb,
                     "rate_diff": ra - rb, "cohens_h": h, "h_size": _magnitude(h, (0.2, 0.5, 0.8)),
                     f"cliffs_delta_{measure}": d, "delta_size": _magnitude(d, (0.147, 0.33, 0.474)),
                     "small": min(len(pa), len(pb)) < st.min_group})
    return pd.DataFrame(rows)


def category_mix(df: pd.DataFrame, by: str, *, results: Any = None) -> pd.DataFrame:
    """Evidence spans per category in each group (long form: group, category, n, share); ``results``:
    where the categories are when ``df`` has none."""
    import pandas as pd

    data = _ok(df)
    if "categories" in data:
        cats = dict(zip(data["id"], data["categories"]))
    elif results is not None:
        cats = {a.id: a.categories for a in results}
    else:
        raise ValueError("category_mix needs the articles' categories: pass results=<CorpusResults>")
    counts: dict[tuple[Any, str], int] = {}
    for rid, g in zip(data["id"], data[by]):
        if g is None or (isinstance(g, float) and math.isnan(g)):
            continue
        for c, n in (cats.get(rid) or {}).items():
            counts[(g, c)] = counts.get((g, c), 0) + int(n)
    out = pd.DataFrame([{by: g, "category": c, "n": n} for (g, c), n in counts.items()],
                       columns=[by, "category", "n"])
    if len(out):
        out["share"] = out["n"] / out.groupby(by)["n"].transform("sum")
        out = out.sort_values([by, "n"], ascending=[True, False], key=None).reset_index(drop=True)
    else:
        out["share"] = []
    return out


def trend(df: pd.DataFrame, date: str = "published_at", *, by: str | None = None,
          settings: CorpusConfig | None = None) -> pd.DataFrame:
    """The share of biased articles per month of ``date``, overall or per group (``by``)."""
    data = _ok(df).copy()
    if date not in data:
        raise ValueError(f"no date column {date!r} (columns: {list(data.columns)})")
    data["month"] = month(data[date]).to_numpy()
    data = data[data["month"].notna()]
    if by is None:
        return aggregate(data, "month", measures=("pred",), settings=settings, exposure=False)
    import pandas as pd

    frames = [aggregate(part, "month", measures=("pred",), settings=settings, exposure=False).assign(**{by: g})
              for g, part in data.groupby(by, sort=True)]
    return pd.concat(frames, ignore_index=True) if frames else aggregate(data, "month", measures=("pred",),
                                                                           settings=settings, exposure=False)
