"""The corrected share of biased sentences (issue 38, item 1): on simulated groups with known error
rates the interval holds the true share where classify-and-count does not, the spread of the error
rates between outlets widens it, clustering in articles widens it, and bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.config import CorpusConfig
from mabpd_kit.corpus.prevalence import (
    ErrorRates,
    article_bins,
    bin_counts,
    design_effect,
    error_rates,
    estimate,
    prevalence,
    shipped_rates,
)

ST = CorpusConfig(prevalence_draws=400)
#: bin distributions of a simulated detector: bin 0 = called neutral, then called biased by score
P_BIASED = np.array([0.30, 0.15, 0.25, 0.30])
P_NEUTRAL = np.array([0.70, 0.15, 0.10, 0.05])


def _rates(n: int = 1500, seed: int = 1) -> ErrorRates:
    rng = np.random.default_rng(seed)
    return ErrorRates(edges=(0.6, 0.8), biased=tuple(int(v) for v in rng.multinomial(n, P_BIASED)),
                      neutral=tuple(int(v) for v in rng.multinomial(n, P_NEUTRAL)))


def _group(pi: float, n: int, rng: np.random.Generator) -> np.ndarray:
    k = rng.binomial(n, pi)
    return rng.multinomial(k, P_BIASED) + rng.multinomial(n - k, P_NEUTRAL)


def test_the_interval_holds_the_true_share_where_classify_and_count_is_pulled_to_the_middle():
    rates, rng = _rates(), np.random.default_rng(2)
    held, cc_off = 0, 0
    for pi in (0.05, 0.2, 0.5, 0.8, 0.95):
        counts = _group(pi, 800, rng)
        est = estimate(counts, rates, draws=400, seed=3)
        held += est["lo"] <= pi <= est["hi"]
        cc = counts[1:].sum() / counts.sum()  # the detector's flags: tpr 0.7, fpr 0.3
        cc_off += abs(cc - pi) > 0.1
        assert est["hi"] - est["lo"] < 0.3
    assert held == 5
    assert cc_off >= 3  # 0.05 -> ~0.32, 0.95 -> ~0.68: classify-and-count squeezes the extremes


def test_a_smaller_validation_sample_or_spread_between_outlets_widens_the_interval():
    counts = _group(0.4, 2000, np.random.default_rng(4))
    wide_val = estimate(counts, _rates(n=100), draws=400, seed=0)
    big_val = estimate(counts, _rates(n=5000), draws=400, seed=0)
    assert (wide_val["hi"] - wide_val["lo"]) > 1.5 * (big_val["hi"] - big_val["lo"])
    rng = np.random.default_rng(5)
    outlets = []  # each outlet's detector differs: flags shifted up or down
    for shift in (-0.15, -0.05, 0.05, 0.15):
        pb, pn = P_BIASED.copy(), P_NEUTRAL.copy()
        pb[0] -= shift * pb[0]
        pn[0] -= shift * pn[0]
        pb[1:] *= (1 - pb[0]) / pb[1:].sum()
        pn[1:] *= (1 - pn[0]) / pn[1:].sum()
        outlets += [(f"o{shift}", 1, k) for k, c in enumerate(rng.multinomial(400, pb)) for _ in range(c)]
        outlets += [(f"o{shift}", 0, k) for k, c in enumerate(rng.multinomial(400, pn)) for _ in range(c)]
    df = pd.DataFrame(outlets, columns=["outlet", "label", "bin"])
    flags, scores = (df["bin"] > 0).astype(float), df["bin"].map({0: 0.0, 1: 0.5, 2: 0.7, 3: 0.9})
    pooled = error_rates(flags, scores, df["label"], (0.6, 0.8))
    spread = error_rates(flags, scores, df["label"], (0.6, 0.8), groups=df["outlet"])
    assert pooled.biased == spread.biased and spread.spread is not None
    a, b = (estimate(counts, r, draws=400, seed=0) for r in (pooled, spread))
    assert (b["hi"] - b["lo"]) > (a["hi"] - a["lo"])


def test_sentences_that_come_in_alike_articles_count_as_less_evidence():
    rng = np.random.default_rng(6)
    independent = rng.binomial(1, 0.4, size=(100, 10))
    clustered = np.repeat(rng.binomial(1, 0.4, size=(100, 1)), 10, axis=1)  # every sentence like its article
    assert design_effect(independent.sum(axis=1), np.full(100, 10)) < 1.6
    assert design_effect(clustered.sum(axis=1), np.full(100, 10)) > 5


def test_prevalence_reads_a_sentence_frame_and_an_article_frame_alike():
    rng = np.random.default_rng(7)
    rows = []
    for g, pi in (("a", 0.2), ("b", 0.7)):
        for art in range(40):
            for _k in range(15):
                y = rng.random() < pi
                b = rng.choice(4, p=P_BIASED if y else P_NEUTRAL)
                rows.append({"id": f"{g}{art}", "outlet": g, "label": "biased" if b else "neutral",
                             "score": [0.0, 0.5, 0.7, 0.9][b]})
    rows.append({"id": "a0", "outlet": "a", "label": "failed", "score": None})
    sent = pd.DataFrame(rows)
    out = prevalence(sent, "outlet", rates=_rates(), settings=ST)
    assert out["outlet"].tolist() == ["a", "b"] and out["n_sentences"].tolist() == [600, 600]
    assert (out["prevalence_lo"] <= [0.2, 0.7]).all() and (out["prevalence_hi"] >= [0.2, 0.7]).all()
    assert out.loc[0, "cc"] > 0.3  # uncorrected: pulled up from 0.2
    arts = sent[sent["label"] != "failed"].groupby(["id", "outlet"]).apply(
        lambda p: tuple(int(v) for v in bin_counts((p["label"] == "biased").to_numpy(float),
                                                   p["score"].to_numpy(float), (0.6, 0.8))),
        include_groups=False).rename("bins").reset_index()
    again = prevalence(arts, "outlet", rates=_rates(), settings=ST)
    assert np.allclose(again["prevalence"], out["prevalence"])


def test_article_bins_leave_out_failed_and_skipped_sentences():
    class S:
        def __init__(self, label, score):
            self.label, self.score = label, score

    got = article_bins([S("neutral", 0.0), S("biased", 0.65), S("biased", 0.95), S("failed", None),
                        S("skipped", None)], (0.6, 0.8))
    assert got == (1, 0, 1, 1)


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="labels must be 0"):
        error_rates([1, 0], [0.7, 0.0], [2, 0], (0.6,))
    with pytest.raises(ValueError, match="one value per bin"):
        estimate([1, 2], _rates())
    with pytest.raises(ValueError, match="no column 'topic'"):
        prevalence(pd.DataFrame({"outlet": ["a"], "label": ["biased"], "score": [0.7]}), "topic", rates=_rates())
    with pytest.raises(ValueError, match="3 counts"):
        ErrorRates(edges=(0.5,), biased=(1, 2), neutral=(1, 2, 3))


def test_the_shipped_error_rates_are_babe_train_with_their_provenance():
    path = Path(__file__).resolve().parents[1] / "mabpd_kit" / "resources" / "fits" / "sentence_error_rates.json"
    art = json.loads(path.read_text(encoding="utf-8"))
    assert {"name", "method", "data", "commit", "date", "config_digest", "values"} <= set(art)
    assert art["name"] == "sentence_error_rates" and art["data"][0]["file"].startswith("BABE/")
    r = shipped_rates()
    assert sum(r.biased) == 1740 and sum(r.neutral) == 1381  # BABE train: every sentence, by the annotators
    assert r.edges == CorpusConfig().prevalence_bins
    assert 0.6 < r.tpr < 0.75 and 0.25 < r.fpr < 0.35
    assert art["values"]["validity"]["groups"] == 9


def test_your_own_labelled_sentences_replace_the_shipped_error_rates():
    from mabpd_kit.corpus.threshold import adapt_rates

    rng = np.random.default_rng(8)
    rows = []
    for k in range(400):
        y = int(rng.random() < 0.5)
        flagged = rng.random() < (0.9 if y else 0.05)  # a far better detector than on BABE
        rows.append({"id": f"a{k // 10}", "outlet": f"o{k % 4}", "gold": y if k % 7 else None,
                     "label": "biased" if flagged else "neutral", "score": 0.85 if flagged else 0.0})
    rows.append({"id": "x", "outlet": "o1", "gold": 1, "label": "failed", "score": None})
    sent = pd.DataFrame(rows)
    mine = adapt_rates(sent, gold="gold", group="outlet")
    assert sum(mine.biased) + sum(mine.neutral) == sum(1 for k in range(400) if k % 7)
    assert mine.tpr > 0.8 and mine.fpr < 0.1 and mine.spread is not None
    assert "your labelled sample" in mine.source
    shipped = prevalence(sent, "outlet", settings=ST)
    own = prevalence(sent, "outlet", rates=mine, settings=ST)
    assert (own["width"] < shipped["width"]).all()  # a better detector, known on this corpus: narrower
    with pytest.raises(ValueError, match="needs labelled biased and neutral"):
        adapt_rates(sent.assign(gold=1))
    with pytest.raises(ValueError, match="no column 'truth'"):
        adapt_rates(sent, gold="truth")
