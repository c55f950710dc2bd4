"""Prior adjustment of the hyperpartisan-style article score (issue 38, item 3): Saerens, Latinne &
Decaestecker (2002). Synthetic: with class-conditionals known, the adjustment is the exact posterior
under the new prior and EM finds the prior. On HyperPartisan train (shared data): nested CV, the
held-out articles resampled to 50% hyperpartisan."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.corpus import score as sc
from mabpd_kit.corpus import scorefit as sf
from mabpd_kit.metrics.ranking import reliability


def _world(n: int, rate: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x | y=1 ~ N(1, 1), x | y=0 ~ N(-1, 1): the posterior under prior pi is sigmoid(2x + logit(pi))."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < rate).astype(int)
    return rng.normal(2.0 * y - 1.0, 1.0), y


def _posterior(x: np.ndarray, pi: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(2.0 * x + math.log(pi / (1 - pi)))))


def test_adjusting_gives_the_posterior_under_the_new_prior():
    x, _ = _world(2_000, 0.6, 1)
    p_train = _posterior(x, 0.3)  # calibrated to a training world with 30% positives
    assert np.allclose(sc.adjust_prior(p_train, 0.6, 0.3), _posterior(x, 0.6), atol=1e-12)
    assert np.allclose(sc.adjust_prior(p_train, 0.3, 0.3), p_train)  # the same prior changes nothing


def test_em_finds_the_corpus_base_rate_and_fixes_the_calibration():
    pi = 0.3
    for rate in (0.1, 0.5, 0.7):
        x, y = _world(5_000, rate, 2)
        p = _posterior(x, pi)
        q, iters = sc.estimate_base_rate(p, pi)
        assert abs(q - y.mean()) < 0.02 and 1 < iters < 1_000
        before, after = reliability(y, p)["ece"], reliability(y, sc.adjust_prior(p, q, pi))["ece"]
        assert after < 0.02 and (rate == pytest.approx(0.3, abs=0.1) or before > after + 0.03), (rate, before, after)


def test_prior_adjusted_frame_given_or_estimated():
    x, _ = _world(400, 0.6, 3)
    p = _posterior(x, 0.37)
    df = pd.DataFrame({"id": [f"a{i}" for i in range(len(p) + 1)], "p_biased": [*p, np.nan]})
    em = sc.prior_adjusted(df, "em")
    assert em.attrs["base_rate_source"] == "EM" and abs(em.attrs["base_rate"] - 0.6) < 0.08
    assert np.isnan(em["p_adjusted"].iloc[-1]) and em["p_adjusted"].iloc[:-1].notna().all()
    assert "hyperpartisan" in em.attrs["score"] and "p_adjusted" not in df  # the input is not changed
    given = sc.prior_adjusted(df, 0.5)
    assert given.attrs == {**given.attrs, "base_rate": 0.5, "base_rate_source": "given", "em_iterations": 0}
    # moving the prior up raises every probability, never reorders them
    a, b = given["p_adjusted"].iloc[:-1].to_numpy(), df["p_biased"].iloc[:-1].to_numpy()
    assert (a >= b).all() and (np.argsort(a) == np.argsort(b)).all()


def test_bad_base_rates_are_one_line_errors():
    df = pd.DataFrame({"p_biased": [0.2, 0.8]})
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="base_rate must be between 0 and 1"):
            sc.prior_adjusted(df, bad)
    with pytest.raises(ValueError, match="a number in \\(0, 1\\) or 'em'"):
        sc.prior_adjusted(df, "half")
    with pytest.raises(ValueError, match="no column 'p_biased'"):
        sc.prior_adjusted(pd.DataFrame({"x": [1]}))


def test_the_score_is_named_for_what_it_is():
    assert "hyperpartisan-style" in sc.NAME and "HyperPartisan" in sc.NAME
    assert "hyperpartisan" in (sc.__doc__ or "").splitlines()[0]


@pytest.mark.shared_data
def _resample_to(y: np.ndarray, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Rows of ``y`` drawn without replacement so that ``rate`` of them are positive."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    if rate * len(neg) > (1 - rate) * len(pos):  # too few positives: keep them all, draw negatives
        neg = rng.choice(neg, int(round(len(pos) * (1 - rate) / rate)), replace=False)
    else:
        pos = rng.choice(pos, int(round(len(neg) * rate / (1 - rate))), replace=False)
    return np.sort(np.concatenate([pos, neg]))


def _prior_shift_check(X: np.ndarray, y: np.ndarray, params, *, rate: float, folds: int = 5, seed: int = 0) -> dict:
    """Out-of-fold probabilities by nested CV, the held-out articles resampled to ``rate`` positives: the EM
    estimate of that rate, and the ECE of the raw and EM-adjusted probabilities; ``ece_floor``: the mean ECE
    of labels drawn from the adjusted probabilities themselves (what a perfectly calibrated one scores)."""
    from mabpd_kit.corpus.threshold import _folds

    oof = sf.nested_cv(X, y, sf.score_fitter(params, seed), folds=folds, seed=seed)
    keep = _resample_to(y, rate, np.random.default_rng(seed))
    p, t, pi = oof[keep], y[keep], float(y.mean())
    truth = float(t.mean())
    q, _ = sc.estimate_base_rate(p, pi, params)
    fold = _folds(y, folds, seed)[keep]
    errs = [abs(sc.estimate_base_rate(p[fold == f], pi, params)[0] - t[fold == f].mean()) for f in range(folds)]
    adj, rng = sc.adjust_prior(p, q, pi), np.random.default_rng(seed + 1)
    floor = float(np.mean([reliability((rng.random(len(adj)) < adj).astype(int), adj)["ece"] for _ in range(200)]))
    return {"truth": truth, "train_rate": pi, "estimate": q, "abs_error": abs(q - truth),
            "fold_abs_error": float(np.mean(errs)), "ece_raw": reliability(t, p)["ece"],
            "ece_em": reliability(t, adj)["ece"], "ece_floor": floor}


@pytest.mark.slow
def test_prior_shift_on_hyperpartisan_train(data_dir):
    """Nested 5-fold CV on HyperPartisan train, held-out articles resampled to 50% hyperpartisan (train 37%)."""
    from mabpd_kit import fits
    from mabpd_kit.config import CorpusConfig

    if not all((data_dir / f).is_file() for f in fits.HP_FILES):
        pytest.skip(f"HyperPartisan train not under {data_dir}")
    X, y, _, _ = sf.training_data(fits.hp_features(data_dir), "label")
    r = _prior_shift_check(X, y, CorpusConfig().score, rate=0.5, seed=0)
    assert r["truth"] == 0.5 and r["train_rate"] < 0.4
    assert r["abs_error"] <= 0.05  # EM's base rate within 0.05 of the truth (measured 0.015)
    assert r["ece_raw"] > 0.08  # uncorrected, the probability is off when the base rate moves (0.094)
    # adjusted, its ECE is at the floor a perfectly calibrated probability reaches on these 476 articles
    assert r["ece_em"] <= r["ece_floor"] + 0.015 and r["ece_em"] < r["ece_raw"] - 0.03
