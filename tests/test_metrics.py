"""mabpd_kit.metrics agrees with scikit-learn / scipy on random inputs, and the bootstrap behaves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from mabpd_kit import metrics as M


def ratings_table(ratings, categories) -> np.ndarray:
    """Items x categories counts of an items x raters array of labels (the table fleiss_kappa reads)."""
    r = np.asarray(ratings, dtype=object)
    return np.stack([(r == c).sum(axis=1) for c in categories], axis=1)

TOL = 1e-9


def _binary_pair(seed: int, n: int = 200, agree: float = 0.7):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < agree, y, 1 - y)
    return y, p


@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60),
)
@settings(max_examples=30, deadline=None)
def test_binary_metrics_match_sklearn(pairs):
    y = [a for a, _ in pairs]
    p = [b for _, b in pairs]
    assert abs(M.accuracy(y, p) - skm.accuracy_score(y, p)) < TOL
    assert abs(M.precision(y, p) - skm.precision_score(y, p, zero_division=0)) < TOL
    assert abs(M.recall(y, p) - skm.recall_score(y, p, zero_division=0)) < TOL
    assert abs(M.f1(y, p) - skm.f1_score(y, p, zero_division=0)) < TOL
    assert abs(M.macro_f1(y, p) - skm.f1_score(y, p, average="macro", zero_division=0)) < TOL


@pytest.mark.parametrize("seed", range(5))
def test_three_way_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    labels = ["TRUE", "HALF-TRUE", "FALSE"]
    y = rng.choice(labels, 300, p=[0.2, 0.3, 0.5])
    p = np.where(rng.random(300) < 0.5, y, rng.choice(labels, 300))
    assert abs(M.macro_f1(y, p) - skm.f1_score(y, p, average="macro")) < TOL
    per = M.per_class_f1(y, p, labels=labels)
    ref = skm.f1_score(y, p, labels=labels, average=None)
    for lab, r in zip(labels, ref):
        assert abs(per[lab] - r) < TOL
    cm = M.confusion(y, p, labels=labels)
    np.testing.assert_array_equal(cm.to_numpy(), skm.confusion_matrix(y, p, labels=labels))
    assert list(cm.index) == labels and cm.index.name == "gold" and cm.columns.name == "pred"
    assert abs(M.accuracy(y, p) - skm.accuracy_score(y, p)) < TOL


def test_macro_f1_with_explicit_labels_counts_absent_class_as_zero():
    y, p = ["a", "a", "b"], ["a", "b", "b"]
    ref = skm.f1_score(y, p, labels=["a", "b", "c"], average="macro", zero_division=0)
    assert abs(M.macro_f1(y, p, labels=["a", "b", "c"]) - ref) < TOL
    assert M.macro_f1(y, p) > M.macro_f1(y, p, labels=["a", "b", "c"])


def test_string_and_integer_binary_labels_are_the_same_classes():
    y = ["biased", "neutral", "biased", "neutral"]
    p = [1, 0, 0, 1]
    assert M.f1(y, p) == M.f1([1, 0, 1, 0], p)
    assert M.macro_f1(y, p) == M.macro_f1([1, 0, 1, 0], p)
    assert M.accuracy(y, p) == 0.5


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="missing"):
        M.f1([1, 0], [1, None])
    with pytest.raises(ValueError, match="equally|has 2 labels"):
        M.accuracy([1, 0], [1])
    with pytest.raises(ValueError, match="not a binary label"):
        M.precision(["TRUE", "FALSE"], ["TRUE", "HALF-TRUE"])


def test_paired_bootstrap_fast_path_equals_generic_loop():
    """The vectorised confusion-matrix path and a plain per-resample loop see the same resamples."""
    y, a = _binary_pair(1, 150, 0.75)
    _, b = _binary_pair(2, 150, 0.6)
    for metric in (M.macro_f1, M.f1, M.precision, M.recall, M.accuracy):
        fast = M.paired_bootstrap(y, a, b, metric=metric, n_resamples=300, seed=3)
        slow = M.paired_bootstrap(y, a, b, metric=lambda t, q, m=metric: m(t, q), n_resamples=300, seed=3)
        assert abs(fast.lo - slow.lo) < TOL and abs(fast.hi - slow.hi) < TOL
        assert fast.p_value == slow.p_value
        assert abs(fast.diff - (metric(y, a) - metric(y, b))) < TOL


def test_paired_bootstrap_detects_a_real_difference_and_not_a_null_one():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1000)
    good = np.where(rng.random(1000) < 0.85, y, 1 - y)
    bad = np.where(rng.random(1000) < 0.65, y, 1 - y)
    res = M.paired_bootstrap(y, good, bad, n_resamples=2000, seed=0)
    assert res.diff > 0 and res.lo > 0 and res.p_value < 0.01
    same = M.paired_bootstrap(y, good, good, n_resamples=500, seed=0)
    assert same.diff == 0 and same.p_value == 1.0 and same.lo == same.hi == 0
    # two systems of equal quality (independent errors): no significant difference
    other = np.where(rng.random(1000) < 0.85, y, 1 - y)
    null = M.paired_bootstrap(y, good, other, n_resamples=2000, seed=0)
    assert null.lo < 0 < null.hi and null.p_value > 0.05


def test_paired_bootstrap_is_seeded_and_defaults_to_config():
    y, a = _binary_pair(5)
    _, b = _binary_pair(6)
    r1 = M.paired_bootstrap(y, a, b, n_resamples=400, seed=7)
    r2 = M.paired_bootstrap(y, a, b, n_resamples=400, seed=7)
    r3 = M.paired_bootstrap(y, a, b, n_resamples=400, seed=8)
    assert (r1.lo, r1.hi, r1.p_value) == (r2.lo, r2.hi, r2.p_value)
    assert (r1.lo, r1.hi) != (r3.lo, r3.hi)
    default = M.paired_bootstrap(y, a, b)
    assert default.n_resamples == 10_000 and default.seed == 0


def test_paired_bootstrap_ci_close_to_scipy():
    from scipy import stats

    y, a = _binary_pair(11, 400, 0.8)
    _, b = _binary_pair(12, 400, 0.7)
    ours = M.paired_bootstrap(y, a, b, metric=M.accuracy, n_resamples=4000, seed=0)
    ref = stats.bootstrap(
        (y, a, b),
        lambda yy, aa, bb: np.mean(aa == yy) - np.mean(bb == yy),
        paired=True,
        vectorized=False,
        n_resamples=4000,
        method="percentile",
        random_state=0,
    ).confidence_interval
    assert abs(ours.lo - ref.low) < 0.01 and abs(ours.hi - ref.high) < 0.01


def test_bootstrap_ci_matches_scipy_for_the_mean():
    from scipy import stats

    x = np.random.default_rng(4).normal(1.0, 2.0, 300)
    est, lo, hi = M.bootstrap_ci(x, np.mean, n_resamples=4000, seed=0)
    ref = stats.bootstrap((x,), np.mean, n_resamples=4000, method="percentile", random_state=0).confidence_interval
    assert abs(est - x.mean()) < TOL
    assert abs(lo - ref.low) < 0.05 and abs(hi - ref.high) < 0.05


def test_bootstrap_ci_groups_resample_whole_groups():
    """Ten questions, each answered identically by 20 rows: the group bootstrap must see 10
    independent units (wide CI), the row bootstrap wrongly sees 200 (narrow CI)."""
    import pandas as pd

    q_means = np.random.default_rng(2).random(10)
    df = pd.DataFrame({"question": np.repeat(np.arange(10), 20), "correct": np.repeat(q_means, 20)})

    def stat(f):
        return float(f["correct"].mean())

    est, lo, hi = M.bootstrap_ci(df, stat, groups="question", n_resamples=400, seed=0)
    _, rlo, rhi = M.bootstrap_ci(df, stat, n_resamples=400, seed=0)
    assert abs(est - q_means.mean()) < TOL
    assert (hi - lo) > 3 * (rhi - rlo)
    # every group resample draws whole groups: values stay a multiple of 20 rows each
    seen = []
    M.bootstrap_ci(df, lambda f: seen.append(f["question"].value_counts().unique().tolist()) or 0.0,
                   groups="question", n_resamples=20, seed=0)
    assert all(set(c) <= {20, 40, 60, 80, 100, 120, 140, 160, 180, 200} for c in seen[1:])


def test_fleiss_kappa_textbook_example():
    """Fleiss (1971) / Wikipedia example: 10 items, 14 raters, 5 categories, kappa = 0.210."""
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    assert abs(M.fleiss_kappa(table) - 0.20993070442195522) < TOL


@pytest.mark.parametrize("seed", range(4))
def test_fleiss_kappa_two_raters_equals_scotts_pi(seed):
    rng = np.random.default_rng(seed)
    r1 = rng.choice(list("abc"), 200)
    r2 = np.where(rng.random(200) < 0.6, r1, rng.choice(list("abc"), 200))
    po = np.mean(r1 == r2)
    pooled = np.concatenate([r1, r2])
    pe = sum(np.mean(pooled == c) ** 2 for c in "abc")
    scott = (po - pe) / (1 - pe)
    assert abs(M.fleiss_kappa(ratings_table(np.stack([r1, r2], axis=1), "abc")) - scott) < TOL


def test_fleiss_kappa_rejects_unequal_rater_counts():
    with pytest.raises(ValueError, match="same number"):
        M.fleiss_kappa([[2, 1], [1, 1]])


@pytest.mark.parametrize("seed", range(5))
def test_point_biserial_matches_scipy(seed):
    from scipy import stats

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, 150)
    y = rng.normal(size=150) + 0.5 * x
    assert abs(M.point_biserial(x, y) - stats.pointbiserialr(x, y).statistic) < TOL
    with pytest.raises(ValueError):
        M.point_biserial(np.zeros(5), np.arange(5.0))


def test_classification_report_consistent():
    y, p = _binary_pair(9)
    rep = M.classification_report(y, p)
    assert rep["n"] == len(y)
    for name in ("accuracy", "precision", "recall", "f1", "macro_f1"):
        assert abs(rep[name] - getattr(M, name)(y, p)) < TOL


def test_metric_ci_fast_path_equals_loop_and_brackets_the_estimate():
    y, p = _binary_pair(21, 300, 0.7)
    for metric in (M.macro_f1, M.f1, M.recall):
        est, lo, hi = M.metric_ci(y, p, metric=metric, n_resamples=300, seed=2)
        _est2, lo2, hi2 = M.metric_ci(y, p, metric=lambda t, q, m=metric: m(t, q), n_resamples=300, seed=2)
        assert abs(est - metric(y, p)) < TOL and abs(lo - lo2) < TOL and abs(hi - hi2) < TOL
        assert lo < est < hi


@pytest.mark.parametrize("seed", range(3))
def test_explicit_labels_with_values_outside_them_match_sklearn(seed):
    """A prediction outside the label set (e.g. an unparseable answer) is a miss, never a class."""
    rng = np.random.default_rng(seed)
    labels = ["TRUE", "HALF-TRUE", "FALSE"]
    y = rng.choice(labels, 200)
    p = np.where(rng.random(200) < 0.6, y, rng.choice(labels + ["UNKNOWN"], 200))
    assert abs(M.macro_f1(y, p, labels=labels) - skm.f1_score(y, p, labels=labels, average="macro")) < TOL
    per = M.per_class_f1(y, p, labels=labels)
    for lab, r in zip(labels, skm.f1_score(y, p, labels=labels, average=None)):
        assert abs(per[lab] - r) < TOL
    np.testing.assert_array_equal(M.confusion(y, p, labels=labels).to_numpy(), skm.confusion_matrix(y, p, labels=labels))
