"""Aggregation (bootstrap CIs against a hand computation, effect sizes, small groups, category mix,
trend) and threshold adaptation (k-fold CV that never scores a threshold on the articles it was
chosen on, a seeded bootstrap interval, the length baseline)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.corpus import (
    CorpusConfig,
    adapt,
    aggregate,
    bootstrap_mean,
    category_mix,
    cliffs_delta,
    cohens_h,
    compare,
    trend,
)
from mabpd_kit.corpus.groups import group_seed
from mabpd_kit.corpus.threshold import best_threshold

ST = CorpusConfig(bootstrap_resamples=4000, min_group=4, seed=7)


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "id": [str(k) for k in range(14)],
        "outlet": ["a"] * 8 + ["b"] * 4 + ["c"] * 2,
        "pred": [1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1],
        "share_biased": [.6, .5, .7, .4, .5, .6, .1, .2, .0, .3, .1, .1, .9, .8],
        "spans_per_100w": [3, 2, 4, 2, 3, 3, 0, 1, 0, 1, 0, 0, 5, 6],
        "published_at": ["2017-01-03", "2017-01-20", "2017-02-01", "2017-02-11"] * 3 + ["bad", None],
        "categories": [{"biased language": 2, "framing bias": 1}] * 8 + [{"framing bias": 1}] * 4 + [{}] * 2,
        "failed": [False] * 14,
    }).pipe(lambda d: pd.concat([d, pd.DataFrame([{"id": "f", "outlet": "a", "pred": None, "failed": True}])],
                                ignore_index=True))


def test_group_interval_is_the_hand_computed_percentile_bootstrap():
    agg = aggregate(_frame(), "outlet", settings=ST)
    row = agg.set_index("outlet").loc["a"]
    x = np.array([1, 1, 1, 1, 1, 1, 0, 0], dtype=float)  # outlet a's decisions (the failed article left out)
    rng = np.random.default_rng(group_seed(7, "a") + [0])  # the first measure, pred
    means = [x[rng.integers(0, 8, size=8)].mean() for _ in range(4000)]  # one resample at a time, by hand
    lo, hi = np.quantile(means, [0.025, 0.975])
    assert row["n"] == 8 and row["biased_rate"] == 0.75
    assert row["biased_rate_lo"] == pytest.approx(lo) and row["biased_rate_hi"] == pytest.approx(hi)
    # and the interval is where the normal approximation puts it (p +- 1.96 sqrt(p(1-p)/n)), roughly
    se = math.sqrt(0.75 * 0.25 / 8)
    assert abs(lo - (0.75 - 1.96 * se)) < 0.1 and hi == 1.0


def test_bootstrap_mean_of_a_constant_and_of_two_values():
    assert bootstrap_mean([1, 1, 1], resamples=500, confidence=0.95, seed=0) == (1.0, 1.0, 1.0)
    est, lo, hi = bootstrap_mean([0, 1], resamples=4000, confidence=0.95, seed=0)
    assert (est, lo, hi) == (0.5, 0.0, 1.0)  # resample means 0, .5, 1 with p = 1/4, 1/2, 1/4
    assert all(math.isnan(v) for v in bootstrap_mean([], resamples=10, confidence=0.9, seed=0))


def test_intervals_do_not_depend_on_the_other_groups():
    full = aggregate(_frame(), "outlet", settings=ST).set_index("outlet")
    only_b = aggregate(_frame().query("outlet == 'b'"), "outlet", settings=ST).set_index("outlet")
    assert full.loc["b", "share_biased_lo"] == only_b.loc["b", "share_biased_lo"]


def test_small_groups_are_warned():
    agg = aggregate(_frame(), "outlet", settings=ST).set_index("outlet")
    assert agg.loc["c", "small"] and agg.loc["c", "warning"].startswith("only 2 articles (< 4)")
    assert not agg.loc["a", "small"] and agg.loc["a", "warning"] == ""
    cmp = compare(_frame(), "outlet", settings=ST).set_index(["group_a", "group_b"])
    assert cmp.loc[("a", "c"), "small"] and not cmp.loc[("a", "b"), "small"]


def test_effect_sizes_by_hand():
    assert cohens_h(0.75, 0.25) == pytest.approx(2 * math.asin(math.sqrt(.75)) - 2 * math.asin(math.sqrt(.25)))
    assert cohens_h(0.5, 0.5) == 0
    a, b = [.6, .5, .7, .4], [.0, .3, .1, .5]
    pairs = [(x > y) - (x < y) for x in a for y in b]
    assert cliffs_delta(a, b) == pytest.approx(sum(pairs) / 16)
    assert cliffs_delta([1, 2], [3, 4]) == -1.0
    row = compare(_frame(), "outlet", settings=ST).set_index(["group_a", "group_b"]).loc[("a", "b")]
    assert row["rate_a"] == 0.75 and row["rate_b"] == 0.25 and row["h_size"] == "large"
    assert row["cliffs_delta_share_biased"] == pytest.approx(
        cliffs_delta([.6, .5, .7, .4, .5, .6, .1, .2], [.0, .3, .1, .1]))


def test_category_mix_and_trend():
    mix = category_mix(_frame(), "outlet")
    a = mix[mix.outlet == "a"].set_index("category")
    assert a.loc["biased language", "n"] == 16 and a.loc["framing bias", "share"] == pytest.approx(8 / 24)
    assert set(mix.outlet) == {"a", "b"}  # c has no evidence spans
    tr = trend(_frame(), "published_at", settings=ST)
    assert tr["month"].tolist() == ["2017-01", "2017-02"] and tr["n"].tolist() == [6, 6]  # unparseable dates left out
    assert tr["biased_rate"].tolist() == pytest.approx([5 / 6, 2 / 6])  # rows 0,1,4,5,8,9 and 2,3,6,7,10,11


def test_best_threshold_sits_between_the_classes():
    x = np.array([1, 2, 3, 10, 11, 12.0])
    y = np.array([0, 0, 0, 1, 1, 1])
    assert best_threshold(x, y) == 6.5
    assert best_threshold(x, y, "macro_f1") == 6.5
    assert best_threshold(np.array([5.0, 5.0]), np.array([0, 0])) == 5.5  # nothing flagged


def test_adapt_cross_validates_honestly():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    x = np.where(y == 1, rng.normal(14, 4, 400), rng.normal(6, 4, 400)).round()
    df = pd.DataFrame({"n_biased": x, "label": y, "n_words": rng.normal(500, 50, 400)})
    a = adapt(df, settings=CorpusConfig(seed=3, adapt_resamples=300))
    assert a.stat == "n_biased" and a.n == 400 and a.k == 5 and len(a.folds) == 5
    assert 8 < a.threshold < 12 and a.ci[0] <= a.threshold <= a.ci[1]
    # the CV predictions use thresholds chosen without the held-out fold: recompute them by hand
    from mabpd_kit.corpus.threshold import _folds

    fold = _folds(y, 5, 3)
    pred = np.empty_like(y)
    for f in range(5):
        t = best_threshold(x[fold != f], y[fold != f])
        assert t == a.folds[f]["threshold"]
        pred[fold == f] = x[fold == f] >= t
    assert a.cv_accuracy == pytest.approx((pred == y).mean())
    assert 0.8 < a.cv_accuracy < 0.95 and a.baselines["length_cv_accuracy"] < 0.6  # length says nothing here
    assert adapt(df, settings=CorpusConfig(seed=3, adapt_resamples=300)) == a  # seeded
    with pytest.raises(ValueError, match="needs both labels"):
        adapt(df.assign(label=0))


def test_compare_rules_reports_each_rule_and_the_nested_choice():
    from mabpd_kit.corpus import compare_rules

    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300)
    df = pd.DataFrame({"label": y, "n_biased": np.where(y == 1, rng.normal(15, 3, 300), rng.normal(5, 3, 300)).round(),
                       "share_biased": rng.random(300), "failed": False})
    out = compare_rules(df, ("n_biased", "share_biased"), settings=CorpusConfig(adapt_resamples=100)).set_index("rule")
    assert out.loc["n_biased", "cv_accuracy"] > 0.9 and out.loc["share_biased", "cv_accuracy"] < 0.65
    nested = out.index[-1]
    assert nested.startswith("nested: ") and nested.count("n_biased>=") == 5  # the informative rule in every fold
    assert out.loc[nested, "cv_accuracy"] == pytest.approx(out.loc["n_biased", "cv_accuracy"], abs=0.02)


def test_aggregate_of_a_run_adds_the_corrected_share_and_the_densities(tmp_path):
    """Issue 38: given the run itself, aggregate reads each article's sentences: the corrected share
    (and classify-and-count, labelled as such) and the densities per word sit beside the article measures."""
    from mabpd_kit.corpus import analyze, read
    from mabpd_kit.corpus.groups import with_bins

    biased = "Critics slammed the disastrous so-called reform. Lawmakers rammed the bill through at night."
    neutral = "The council met on Monday to discuss the budget. The vote is scheduled for next week."
    rows = [{"text": biased if k % 2 else neutral, "outlet": "loud" if k % 2 else "calm"} for k in range(12)]
    st = CorpusConfig(min_group=2, bootstrap_resamples=200, prevalence_draws=300)
    res = analyze(read(pd.DataFrame(rows)), tmp_path / "run.jsonl", workers=1, settings=st)
    out = aggregate(res, "outlet", settings=st).set_index("outlet")
    assert out.loc["calm", "cc"] == 0 and out.loc["loud", "cc"] > 0.5
    assert out.loc["loud", "prevalence_lo"] > out.loc["calm", "prevalence_hi"]
    assert out.loc["loud", "biased_per_1000w"] > 0 == out.loc["calm", "biased_per_1000w"]
    assert out.loc["loud", "n_sentences"] == 12  # 6 articles x 2 sentences
    again = aggregate(with_bins(res), "outlet", settings=st).set_index("outlet")
    assert np.allclose(again["prevalence"], out["prevalence"])
    plain = aggregate(res.to_frame(), "outlet", settings=st)  # no sentences: no corrected share, densities kept
    assert "prevalence" not in plain and "biased_per_1000w" in plain
