"""Independence check statistics (against scipy) and the lexicon charts."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from scipy import stats

from mabpd_kit.lexicon import Category, Lexicon, Term, critical_r

BANDS = [0.6, 0.7, 0.8, 0.9]


@pytest.fixture(scope="module")
def small_lex() -> Lexicon:
    cat = Category(id="c", name="c", taxonomy="loaded language", meta_category="biased language")
    words = [f"zork{i}" for i in range(24)]
    terms = [Term(term=w, category="c", band=BANDS[i % 4], note="n") for i, w in enumerate(words)]
    return Lexicon.from_entries([cat], terms)


def _corpus(seed: int, n: int = 300) -> tuple[list[str], list[int]]:
    rng = random.Random(seed)
    texts, labels = [], []
    for _ in range(n):
        # 20 of the 24 terms can occur; zork20..zork23 never do
        picked = rng.sample(range(20), rng.randint(0, 3))
        texts.append("The " + " and ".join(f"zork{i}" for i in picked) + " story.")
        labels.append(rng.randint(0, 1))
    return texts, labels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_independence_matches_scipy_pearsonr(small_lex, seed):
    texts, labels = _corpus(seed)
    res = small_lex.independence(texts, labels)
    # bias rate per term, recomputed by hand
    rates, bands = [], []
    for t in small_lex.terms:
        idx = [i for i, s in enumerate(texts) if re.search(rf"\b{t.term}\b", s)]
        row = res.frame.set_index("term").loc[t.term]
        assert row["n_records"] == len(idx)
        if idx:
            rate = sum(labels[i] for i in idx) / len(idx)
            assert row["bias_rate"] == pytest.approx(rate)
            rates.append(rate)
            bands.append(t.band)
    ref = stats.pearsonr(bands, rates)
    assert res.n == len(rates) == 20
    assert res.n_absent == 4 and res.share_absent == pytest.approx(4 / 24)
    assert res.r == pytest.approx(ref.statistic, abs=1e-12)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert res.r_critical == pytest.approx(critical_r(20))
    assert res.independent is bool(ref.pvalue > 0.05)
    assert res.bias_rate == pytest.approx(np.mean(labels))


def test_a_lexicon_fitted_to_the_labels_is_flagged(small_lex):
    texts, _ = _corpus(5)
    band = {t.term: t.band for t in small_lex.terms}
    # labels generated from the bands: what a lexicon built from the corpus would look like
    labels = [int(max((band[w] for w in re.findall(r"zork\d+", s)), default=0.0) >= 0.8) for s in texts]
    res = small_lex.independence(texts, labels)
    assert res.independent is False and res.r > res.r_critical
    assert res.verdict.startswith("not independent")


@pytest.mark.parametrize("n", [5, 20, 48, 113, 618])
def test_critical_r_is_where_the_two_sided_p_value_equals_alpha(n):
    r = critical_r(n)
    t = r * np.sqrt((n - 2) / (1 - r * r))
    assert 2 * stats.t.sf(t, n - 2) == pytest.approx(0.05, rel=1e-9)


def test_critical_r_reference_values():
    assert critical_r(48) == pytest.approx(0.2845, abs=5e-5)   # df = 46, two-sided 5% table value
    assert critical_r(12) == pytest.approx(0.5760, abs=5e-5)   # df = 10
    assert np.isnan(critical_r(2))


def test_labels_as_strings_and_bad_input(small_lex):
    texts, labels = _corpus(3, n=60)
    a = small_lex.independence(texts, labels)
    b = small_lex.independence(texts, ["biased" if y else "neutral" for y in labels])
    assert a.r == b.r and a.n == b.n
    with pytest.raises(ValueError, match="labels"):
        small_lex.independence(texts, labels[:-1])
    with pytest.raises(ValueError, match="not biased/neutral"):
        small_lex.independence(texts[:1], ["maybe"])


def test_undetermined_when_too_few_terms_occur(small_lex):
    res = small_lex.independence(["zork1 only", "nothing here"], [1, 0])
    assert res.n == 1 and res.independent is None and res.verdict.startswith("undetermined")


# BABE train (3,121 sentences) against the shipped lexicon, measured when the lexicon was 1,702 terms:
# 625 terms present, r = +0.176, critical value 0.078 -> "not independent". The honest result, kept:
# a lexicon written from linguistic knowledge tracks bias, and at n = 625 a weak trend is significant
# (notebook 01 explains). The tolerances let the seed files grow a little without hiding a change of verdict.
BABE_N, BABE_R, BABE_R_CRIT, BABE_SHARE_ABSENT = 625, 0.176, 0.078, 0.633


@pytest.mark.shared_data
def test_independence_on_babe_train(data_dir):
    from mabpd_kit.data import load_babe

    try:
        df = load_babe("train", data_dir=data_dir, llm_labels=False, download=False)
    except FileNotFoundError as exc:
        pytest.skip(f"BABE train not found under {data_dir}: {exc}")
    lex = Lexicon.default()
    res = lex.independence(df["text"].tolist(), df["label"].tolist())
    assert res.n_records == len(df) == 3121
    assert res.n + res.n_absent == res.n_terms == len(lex.terms)
    present = res.frame[res.frame["n_records"] > 0]
    assert res.r == pytest.approx(stats.pearsonr(present["band"], present["bias_rate"]).statistic, abs=1e-12)
    # the verdict the data gives, and the figures behind it
    assert res.n == pytest.approx(BABE_N, abs=25)
    assert res.r == pytest.approx(BABE_R, abs=0.03)
    assert res.r_critical == pytest.approx(critical_r(res.n)) == pytest.approx(BABE_R_CRIT, abs=0.003)
    assert res.share_absent == pytest.approx(BABE_SHARE_ABSENT, abs=0.03)
    assert res.p_value < 0.001
    assert res.independent is False and res.r > res.r_critical
    assert res.verdict.startswith("not independent") and "provenance" in res.verdict
    # the paper's r = 0.271 sits below its stated critical value 0.285 (that of n = 48) but far above ours
    assert critical_r(48) > 0.271 > res.r_critical


def test_charts_are_built_from_the_frames(small_lex):
    import mabpd_kit.viz.lexicon as vl

    lex = Lexicon.default()
    cov = vl.coverage_chart(lex).to_dict()
    values = next(iter(cov["datasets"].values()))
    assert len(values) == len(lex.categories)
    assert sum(v["n_terms"] for v in values) == len(lex.terms)
    assert cov["encoding"]["color"]["field"] == "taxonomy"
    bands = vl.band_chart(lex).to_dict()
    assert sum(v["n_terms"] for v in next(iter(bands["datasets"].values()))) == len(lex.terms)
    texts, labels = _corpus(0)
    res = small_lex.independence(texts, labels)
    ind = vl.independence_chart(res).to_dict()
    assert f"r = {res.r:+.3f}" in ind["title"]
    pts = [d for d in ind["datasets"].values() if len(d) == res.n]
    assert pts, "one point per term present"
    hits = vl.match_chart(lex, ["They slammed the thugs.", "A so-called plan."]).to_dict()
    assert {v["category"] for v in next(iter(hits["datasets"].values()))} == {"attack_verbs", "pejorative_labels",
                                                                                "scare_quotes"}
