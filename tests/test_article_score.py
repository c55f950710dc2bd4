"""The hyperpartisan-style article score (issue 23): the fit recovers a planted signal, its probability is
calibrated, nested CV never shows the outer test fold to the fit, adapt's label count, the shipped
coefficients, the corpus decision by the score, and the report's escaped "why"."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.config import ArticleScoreConfig, CorpusConfig
from mabpd_kit.corpus import score as sc
from mabpd_kit.corpus import scorefit as sf
from mabpd_kit.corpus.articles import ArticleResult, SentenceResult, SpanResult
from mabpd_kit.metrics.ranking import reliability, roc_auc

TRUE_COEF = np.array([1.2, 0.0, -0.8, 0.0, 0.5, 0.0, 0.0, -0.4, 0.9])
TRUE_INTERCEPT = -0.3


def _planted(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features on their own scales (so standardising matters) and labels drawn from a known logistic model
    on the standardised features: ``(X, y, true probability)``."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, len(sc.FEATURES)))
    X = Z * np.array([0.2, 0.9, 1.5, 0.3, 0.3, 0.3, 0.2, 0.2, 0.9]) + np.array([0.3, 1.7, 2.0, 0.6, 0.4, 0.4, 0.1, 0.1, 6.0])
    p = 1 / (1 + np.exp(-(TRUE_INTERCEPT + Z @ TRUE_COEF)))
    return X, (rng.random(n) < p).astype(int), p


def test_the_fit_recovers_a_planted_signal():
    X, y, _ = _planted(6000, 1)
    m = sc.fit_logistic(X, y, l2=0.1)
    # the planted coefficients are per standard deviation: the fit standardises on X, so it finds them again
    assert np.allclose(m.coef, TRUE_COEF, atol=0.12), m.coef
    assert abs(m.intercept - TRUE_INTERCEPT) < 0.1
    assert all(abs(c) < 0.12 for c, t in zip(m.coef, TRUE_COEF) if t == 0)  # the null features stay near 0
    strong = sc.fit_logistic(X, y, l2=1e5)  # a heavy penalty shrinks every coefficient to about 0
    assert max(abs(c) for c in strong.coef) < 0.05


def test_the_probability_is_calibrated_on_fresh_data():
    X, y, _ = _planted(5000, 2)
    m = sc.fit_logistic(X, y, l2=1.0)
    Xt, yt, pt = _planted(5000, 3)
    prob = sc.predict(Xt, m)
    r = reliability(yt, prob, bins=10)
    assert r["ece"] < 0.03, r
    for b in r["bins"]:  # each bin's observed rate within 3.5 binomial standard errors of its mean probability
        se = np.sqrt(max(b["mean_p"] * (1 - b["mean_p"]), 1e-3) / b["n"])
        assert abs(b["rate"] - b["mean_p"]) < 3.5 * se + 0.01, b
    assert np.abs(prob - pt).mean() < 0.03  # close to the true probabilities, not only to the rates
    assert abs(roc_auc(yt, prob) - roc_auc(yt, pt)) < 0.01


def test_nested_cv_never_shows_the_outer_test_fold_to_the_fit(monkeypatch):
    """By construction: column 0 carries each row's id; every fit (the outer fitter, each inner fold's
    logistic regression, the refit at the chosen penalty) records the ids it is handed, each predictor
    the ids it scores."""
    X, y, _ = _planted(300, 4)
    X = np.column_stack([np.arange(len(y), dtype=float), X[:, 1:]])
    calls: list[dict[str, set[float]]] = []
    inner_fit = sf.fit_logistic

    def spy_logistic(Xa, ya, l2, **kw):
        calls[-1]["inner"].update(Xa[:, 0].tolist())
        return inner_fit(Xa, ya, l2, **kw)

    monkeypatch.setattr(sf, "fit_logistic", spy_logistic)
    real = sf.score_fitter()

    def fitter(Xa, ya):
        calls.append({"train": set(Xa[:, 0].tolist()), "inner": set(), "test": set()})
        rec = calls[-1]
        predict = real(Xa, ya)

        def scored(Xt):
            rec["test"].update(Xt[:, 0].tolist())
            return predict(Xt)
        return scored

    out = sf.nested_cv(X, y, fitter, folds=5, seed=0)
    assert len(calls) == 5 and len(out) == len(y)
    for c in calls:
        assert c["test"] and not c["test"] & c["train"]  # the held-out fold is not in the training rows
        assert c["inner"] and c["inner"] <= c["train"]  # and no inner fit ever saw a held-out row
    assert set().union(*(c["test"] for c in calls)) == set(range(len(y)))  # each row scored once, out of fold
    assert sum(len(c["test"]) for c in calls) == len(y)


def test_labels_needed_is_the_smallest_n_within_one_interval_of_the_plateau():
    curve = pd.DataFrame({"n": [25, 50, 100, 200, 400, 516], "all": [False] * 5 + [True],
                          "mean": [0.60, 0.70, 0.735, 0.752, 0.758, 0.760], "lo": [0.5, 0.65, 0.70, 0.73, 0.74, 0.745],
                          "hi": [0.7, 0.75, 0.77, 0.78, 0.78, 0.775]})
    assert sf.labels_needed(curve) == 200  # 0.752 >= 0.745 (the plateau's lower end); 0.735 is not
    flat = curve.assign(mean=0.76)
    assert sf.labels_needed(flat) == 25


def _frame(n: int, seed: int) -> pd.DataFrame:
    X, y, _ = _planted(n, seed)
    df = pd.DataFrame(X, columns=list(sc.FEATURES))
    rng = np.random.default_rng(seed)
    return df.assign(id=[f"a{i}" for i in range(n)], n_words=rng.integers(100, 2000, n), label=y)


def test_adapt_score_on_a_labelled_frame_reports_cv_length_and_labels_needed():
    df = _frame(400, 5)
    st = CorpusConfig(score=ArticleScoreConfig(curve_sizes=(25, 100), curve_repeats=2, resamples=40,
                                               l2_grid=(0.1, 1.0, 10.0)))
    fit = sf.adapt_score(df, gold="label", settings=st)
    assert fit.n == 400 and fit.folds == 5 and fit.params.l2 in (0.1, 1.0, 10.0)
    assert fit.cv["accuracy"] > fit.length["accuracy"] + 0.1  # length is noise here, the features are the signal
    assert fit.diff["lo"] > 0 and abs(fit.diff["accuracy_diff"] - (fit.cv["accuracy"] - fit.length["accuracy"])) < 1e-9
    curve = fit.curve_frame()
    assert curve["n"].tolist() == [25, 100, 320] and curve["all"].tolist() == [False, False, True]
    assert fit.labels_needed == sf.labels_needed(curve) and fit.labels_needed in (25, 100, 320)
    assert (curve["lo"] <= curve["mean"]).all() and (curve["mean"] <= curve["hi"]).all()
    coef = fit.coefficients()
    assert len(coef) == 1 + len(sc.FEATURES) and (coef["lo"][1:] <= coef["coef"][1:] + 1e-9).all()
    assert fit.settings().score == fit.params and fit.settings().rule == ("p_biased", 0.5)
    with pytest.raises(ValueError, match="at least 5 articles of each label"):
        sf.adapt_score(df.head(8), gold="label", settings=st)


def test_the_shipped_coefficients_live_in_config_with_their_intervals():
    p = CorpusConfig().score
    df = sc.coefficients()
    assert df["feature"].tolist() == ["(intercept)", *sc.FEATURES] and list(p.features) == list(sc.FEATURES)
    body = df.iloc[1:]
    assert (body["lo"] <= body["coef"]).all() and (body["coef"] <= body["hi"]).all()
    assert p.n_train == 642 and p.l2 in p.l2_grid
    assert CorpusConfig().rule == ("p_biased", 0.5)
    assert CorpusConfig(article_decision="count").rule == ("n_biased", 8.5)  # resources/fits/count_threshold.json


def _article(text_bits: list[str], labels: list[str], scores: list[float], spans: dict[int, list[tuple[str, str]]],
             **kw) -> ArticleResult:
    text, sents, offs = "", [], []
    for k, t in enumerate(text_bits):
        a = len(text)
        text += t + " "
        offs.append((a, a + len(t)))
    ev: dict = {}
    for k, ((a, b), lab, s) in enumerate(zip(offs, labels, scores)):
        sp = []
        for word, cat in spans.get(k, []):
            i = text.index(word, a)
            sp.append(SpanResult(text=word, start=i, end=i + len(word), category=cat, agent=kw.get("agent", "bias"),
                                 score=s))
            ev[(i, i + len(word))] = sp[-1]
        sents.append(SentenceResult(k=k, start=a, end=b, label=lab, score=s, spans=sp, trace=kw.get("trace", "")))
    cats: dict[str, int] = {}
    for v in ev.values():
        cats[v.category] = cats.get(v.category, 0) + 1
    n_b = labels.count("biased")
    n_words = len(text.split())
    return ArticleResult(id=kw.get("id", "a"), text=text, n_words=n_words, n_sentences=len(labels), n_biased=n_b,
                         share_biased=n_b / len(labels), n_spans=len(ev), spans_per_100w=100 * len(ev) / n_words,
                         categories=cats, sentences=sents)


def test_explain_sums_to_the_log_odds_and_ranks_the_sentence_that_moved_it():
    a = _article(["The council met on Monday.", "Critics slammed the disastrous reckless plan.", "It rained.",
                  "Officials said the vote was close."], ["neutral", "biased", "neutral", "biased"],
                 [0.0, 0.9, 0.0, 0.3], {1: [("slammed", "biased language"), ("disastrous", "framing bias")],
                                        3: [("close", "biased language")]})
    w = sc.explain(a)
    assert abs(w["intercept"] + sum(c["contribution"] for c in w["contributions"]) - w["logit"]) < 1e-9
    assert abs(w["p"] - sc.probability(a)) < 1e-12 and abs(w["p"] - a.stat("p_biased")) < 1e-12
    assert [s["k"] for s in w["sentences"]] == [1, 3]  # the strong sentence moved the score most
    assert w["sentences"][0]["delta"] > w["sentences"][1]["delta"] > 0
    assert len(w["spans"]) == 3 and all(isinstance(s["delta"], float) for s in w["spans"])
    # the features the record holds and the ones rebuilt from its sentences for the "without" agree
    ev = sc._evidence(a)
    assert sc._without(a, sc.shipped(), ev, [(s.k, s.score) for s in a.sentences], span=(-1, -1)) == \
        pytest.approx(w["logit"])
    row = a.row(0.5, "p_biased")
    assert row["p_biased"] == sc.probability(a) and row["pred"] == int(sc.probability(a) >= 0.5)
    assert a.row(10.5, "n_biased")["pred"] == 0  # the count rule, on the same record


PAYLOAD = "<img src=x onerror=alert(1)>"
SCRIPT = "</template><script>alert(2)</script>"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[str] = []
        self.text = ""

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [k for k, _ in attrs]

    def handle_data(self, data):
        self.text += data


def _payload_article(id_: str = "x") -> ArticleResult:
    return _article([f"Critics slammed {PAYLOAD} the plan.", f"They {SCRIPT} said so."], ["biased", "biased"],
                    [0.8, 0.6], {0: [("slammed", f"cat {SCRIPT}")], 1: [(SCRIPT, "framing bias")]},
                    agent=PAYLOAD, trace=SCRIPT, id=id_)


def test_the_reports_why_escapes_html(tmp_path):
    from mabpd_kit.corpus.reporting import report_html, why_html
    from mabpd_kit.corpus.store import Writer

    a = _payload_article()
    out = why_html(a)
    t = _Tags()
    t.feed(out)
    assert not {"img", "script", "template"} & set(t.tags) and not any(k.startswith("on") for k in t.attrs)
    assert PAYLOAD in t.text and SCRIPT in t.text  # kept, as text
    assert "Why: p_biased" in t.text and "contribution" in t.text
    path = tmp_path / "r.jsonl"
    with Writer(path) as w:
        w.write(a)
        w.write(_payload_article(f"y{PAYLOAD}"))
    doc = report_html(path)
    assert doc.count("<div class='why'>") == 2 and "<img" not in doc and doc.count("<script>") == 1
    assert "p_biased &ge; 0.5" in doc  # the rule as run
