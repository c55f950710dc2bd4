"""Densities with length as the exposure (issue 38, item 2): a group that only writes longer articles
is not more biased per word, a true rate ratio is recovered inside its interval, and aggregate
returns the densities and the corrected share beside the article measures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.config import CorpusConfig
from mabpd_kit.corpus.density import densities, rate_ratios
from mabpd_kit.corpus.groups import aggregate

ST = CorpusConfig(bootstrap_resamples=400, min_group=10, prevalence_draws=300)


def _articles(rates: dict[str, float], words: dict[str, int], n: int = 120, seed: int = 0) -> pd.DataFrame:
    """Articles whose biased sentences arrive at ``rate`` per 1,000 words, overdispersed (gamma-Poisson)."""
    rng = np.random.default_rng(seed)
    rows = []
    for g, rate in rates.items():
        w = rng.poisson(words[g], size=n).clip(50)
        lam = rng.gamma(4.0, rate * w / 1000 / 4.0)
        nb = rng.poisson(lam)
        rows += [{"id": f"{g}{i}", "outlet": g, "n_words": int(w[i]), "n_biased": int(nb[i]),
                  "n_spans": int(2 * nb[i]), "failed": False} for i in range(n)]
    return pd.DataFrame(rows)


def test_longer_articles_alone_are_not_a_higher_rate():
    df = _articles({"short": 5.0, "long": 5.0}, {"short": 400, "long": 1600}, seed=1)
    per_article = df.groupby("outlet")["n_biased"].mean()
    assert per_article["long"] > 3 * per_article["short"]  # what a per-article count would report
    r = rate_ratios(df, "outlet", settings=ST).iloc[0]
    assert (r["group_a"], r["group_b"]) == ("long", "short")
    assert r["ratio_lo"] < 1 < r["ratio_hi"] and not r["clear"]


def test_a_true_rate_ratio_is_recovered_inside_its_interval():
    df = _articles({"a": 7.0, "c": 5.0}, {"a": 500, "c": 900}, n=150, seed=2)
    r = rate_ratios(df, "outlet", settings=ST).iloc[0]
    assert r["ratio_lo"] < 1.4 < r["ratio_hi"] and r["clear"]
    d = densities(df, "outlet", settings=ST).set_index("outlet")
    assert d.loc["a", "biased_per_1000w_lo"] < 7.0 < d.loc["a", "biased_per_1000w_hi"]
    assert d.loc["a", "spans_per_100w_rate"] == pytest.approx(d.loc["a", "biased_per_1000w"] / 5)
    assert d.loc["a", "words"] == df.loc[df["outlet"] == "a", "n_words"].sum()


def test_failed_and_empty_articles_are_left_out_and_bad_input_is_one_line():
    df = _articles({"a": 5.0}, {"a": 500}, n=20)
    df.loc[0, "failed"] = True
    df.loc[1, "n_words"] = 0
    assert densities(df, "outlet", settings=ST).loc[0, "n"] == 18
    with pytest.raises(ValueError, match="n_words"):
        densities(df.drop(columns="n_words"), "outlet")
    with pytest.raises(ValueError, match="measure must be one of"):
        rate_ratios(df, "outlet", measure="p_biased")


def test_aggregate_returns_the_densities_and_the_corrected_share_beside_the_article_measures():
    df = _articles({"a": 6.0, "b": 3.0}, {"a": 600, "b": 600}, n=30, seed=3)
    df["pred"] = (df["n_biased"] > 3).astype(int)
    df["bins"] = [(25 - nb, nb, 0, 0, 0, 0) for nb in df["n_biased"].clip(upper=25)]
    out = aggregate(df, "outlet", settings=ST).set_index("outlet")
    for col in ("biased_rate", "biased_per_1000w", "biased_per_1000w_lo", "spans_per_100w_rate_hi", "cc",
                "prevalence", "prevalence_lo", "prevalence_hi", "wide", "deff"):
        assert col in out, col
    assert out.loc["a", "biased_per_1000w"] > out.loc["b", "biased_per_1000w"]
    assert out.loc["a", "cc"] > out.loc["b", "cc"] and out.loc["a", "prevalence"] > out.loc["b", "prevalence"]
    plain = aggregate(df.drop(columns=["bins", "n_words"]), "outlet", settings=ST)
    assert "prevalence" not in plain and "biased_per_1000w" not in plain
