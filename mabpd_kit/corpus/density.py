"""Densities per group with length as the exposure (a group's events over its words, so longer articles
do not rank a group higher), and rate ratios between groups; intervals by a percentile bootstrap over
each group's articles, which carries overdispersion and the clustering of sentences in articles."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit.corpus.settings import CorpusConfig, resolve

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DENSITIES", "densities", "rate_ratios"]

#: name -> (event column, words per unit): the densities reported per group
DENSITIES = {"biased_per_1000w": ("n_biased", 1000.0), "spans_per_100w_rate": ("n_spans", 100.0)}


def _usable(df: pd.DataFrame, by: str) -> pd.DataFrame:
    if by not in df:
        raise ValueError(f"no column {by!r} to group by (columns: {list(df.columns)})")
    if "n_words" not in df:
        raise ValueError("densities need each article's length: a column 'n_words' (results.to_frame() has it)")
    data = df[~df["failed"].astype(bool)] if "failed" in df else df
    words = data["n_words"].astype(float)
    return data[data[by].notna() & (words > 0)]


def _boot_sums(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``values`` (articles x columns) over bootstrap resamples of the articles, in blocks."""
    from mabpd_kit.corpus.prevalence import boot_blocks

    out = np.empty((resamples, values.shape[1]))
    for a, b, ix in boot_blocks(len(values), resamples, rng):
        out[a:b] = np.stack([values[ix, j].sum(axis=1) for j in range(values.shape[1])], axis=1)
    return out


def _group_boot(part: pd.DataFrame, columns: Sequence[str], st: CorpusConfig, g: Any) -> np.ndarray:
    from mabpd_kit.corpus.prevalence import group_seed

    vals = part[["n_words", *columns]].astype(float).to_numpy()
    return _boot_sums(vals, st.bootstrap_resamples, np.random.default_rng(group_seed(st.seed, g) + [7]))


def densities(df: pd.DataFrame, by: str, *, settings: CorpusConfig | None = None) -> pd.DataFrame:
    """One row per group (by name): ``n``, ``words``, each density of :data:`DENSITIES` with its
    bootstrap interval, and ``small``."""
    import pandas as pd

    st = resolve(settings)
    data = _usable(df, by)
    cols = [c for c, _ in DENSITIES.values() if c in data]
    alpha = 1 - st.confidence
    rows = []
    for g, part in data.groupby(by, sort=True):
        boot = _group_boot(part, cols, st, g)
        words = float(part["n_words"].astype(float).sum())
        row: dict[str, Any] = {by: g, "n": len(part), "words": int(words)}
        for name, (col, unit) in DENSITIES.items():
            if col not in cols:
                continue
            j = 1 + cols.index(col)
            rates = boot[:, j] / boot[:, 0] * unit
            lo, hi = np.quantile(rates, [alpha / 2, 1 - alpha / 2])
            row.update({name: float(part[col].astype(float).sum()) / words * unit, f"{name}_lo": float(lo),
                        f"{name}_hi": float(hi)})
        row["small"] = len(part) < st.min_group
        rows.append(row)
    return pd.DataFrame(rows)


def rate_ratios(df: pd.DataFrame, by: str, *, measure: str = "biased_per_1000w", groups: Sequence[Any] | None = None,
                settings: CorpusConfig | None = None) -> pd.DataFrame:
    """Every pair of groups: the ratio of their rates of ``measure`` (``group_a`` over ``group_b``) with its
    bootstrap interval; ``clear``: the interval excludes 1."""
    import pandas as pd

    if measure not in DENSITIES:
        raise ValueError(f"measure must be one of {list(DENSITIES)}, not {measure!r}")
    st = resolve(settings)
    col = DENSITIES[measure][0]
    data = _usable(df, by)
    names = list(groups) if groups is not None else sorted(data[by].unique(), key=str)
    boots, rates, sizes = {}, {}, {}
    for g in names:
        part = data[data[by] == g]
        sizes[g] = len(part)
        if not len(part):
            continue
        b = _group_boot(part, [col], st, g)
        boots[g] = b[:, 1] / b[:, 0]
        rates[g] = float(part[col].astype(float).sum()) / float(part["n_words"].astype(float).sum())
    alpha = 1 - st.confidence
    rows = []
    for a, b in combinations(names, 2):
        ratio, lo, hi = _ratio(rates.get(a), rates.get(b), boots.get(a), boots.get(b), alpha)
        rows.append({"group_a": a, "group_b": b, "measure": measure, "n_a": sizes[a], "n_b": sizes[b],
                     "ratio": ratio, "ratio_lo": lo, "ratio_hi": hi, "clear": bool(lo > 1 or hi < 1),
                     "small": min(sizes[a], sizes[b]) < st.min_group})
    return pd.DataFrame(rows, columns=["group_a", "group_b", "measure", "n_a", "n_b", "ratio", "ratio_lo", "ratio_hi",
                                       "clear", "small"])


def _ratio(ra: float | None, rb: float | None, ba: Any, bb: Any, alpha: float) -> tuple[float, float, float]:
    """The ratio of two rates and its percentile interval (nan when it cannot be told)."""
    if ra is None or rb is None or rb == 0:
        return math.nan, math.nan, math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        r = ba / bb
    r = r[np.isfinite(r)]
    if not len(r):
        return ra / rb, math.nan, math.nan
    lo, hi = np.quantile(r, [alpha / 2, 1 - alpha / 2])
    return ra / rb, float(lo), float(hi)
