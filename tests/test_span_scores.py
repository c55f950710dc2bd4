"""Span scores against annotated biased words: the token-overlap metric by hand, the spans read from the
trace (per agent, for the decision) and the table `mabpd evaluate` prints."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest

from mabpd_kit import evaluate as E
from mabpd_kit.metrics.spans import overlap_counts, span_scores, word_tokens
from mabpd_kit.types import Span


def test_word_tokens_lower_case_words_with_inner_hyphens_and_apostrophes():
    assert word_tokens("A so-called Reform, isn\u2019t it?") == {"a", "so-called", "reform", "isn't", "it"}
    assert word_tokens(["Anti-American", "anti-american!", ""]) == {"anti-american"}
    assert word_tokens("--- ... !!") == set()


def test_overlap_counts_are_set_based_per_sentence():
    # "radical" twice in the spans and once in the gold counts once; "a" counts against precision
    assert overlap_counts(["a radical plan", "radical"], ["Radical", "scheme"]) == (1, 3, 2)
    assert overlap_counts([], ["slammed"]) == (0, 0, 1)
    assert overlap_counts(["slammed"], []) == (0, 1, 0)


def test_span_scores_hand_example_micro_averaged():
    pred = [["so-called reform"], [], ["radical", "mob stormed"], ["the bill"]]
    gold = [["so-called"], ["slammed"], ["radical", "mob"], []]
    # sentence: tp, |P|, |G| = (1, 2, 1), (0, 0, 1), (2, 3, 2), (0, 2, 0)
    s = span_scores(pred, gold)
    assert (s.tp, s.n_pred, s.n_gold, s.n_sentences) == (3, 7, 4, 4)
    assert s.precision == pytest.approx(3 / 7) and s.recall == pytest.approx(3 / 4)
    assert s.f1 == pytest.approx(2 * 3 / (7 + 4))
    # the scope: only the first three sentences (e.g. the biased-gold ones)
    b = span_scores(pred, gold, [True, True, True, False])
    assert (b.tp, b.n_pred, b.n_gold, b.n_sentences) == (3, 5, 4, 3)
    assert b.precision == pytest.approx(0.6) and b.f1 == pytest.approx(6 / 9)
    # nothing predicted: every score 0, never a division by zero
    z = span_scores([[], []], [["x"], []])
    assert (z.precision, z.recall, z.f1) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        span_scores([[]], [[], []])


def test_span_scores_bootstrap_interval_brackets_f1():
    rng = np.random.default_rng(1)
    words = ["slammed", "radical", "mob", "reform", "bill", "senate"]
    gold = [list(rng.choice(words, 2)) for _ in range(80)]
    pred = [list(rng.choice(words, 2)) for _ in range(80)]
    s = span_scores(pred, gold, ci=True, n_resamples=300, seed=0)
    assert s.f1_lo <= s.f1 <= s.f1_hi and s.f1_lo < s.f1_hi
    assert np.isnan(span_scores(pred, gold).f1_lo)


def _span(text: str, agent: str, valid: bool = True) -> Span:
    return Span(text=text, agent=agent, valid=valid)


def _report(verdict: str, *spans: Span, counter: tuple[Span, ...] = ()) -> NS:
    return NS(verdict=verdict, spans=list(spans), counter_spans=list(counter))


def _arg(agent: str, verdict: str, *spans: Span) -> NS:
    return NS(verdict=verdict, argument=NS(agent=agent, verdict=verdict, spans=list(spans)))


def test_spans_read_from_the_trace():
    reports = {"bias": _report("biased", _span("radical", "bias"), _span("invented quote", "bias", valid=False)),
               "evidence": _report("neutral", counter=(_span("officials said", "evidence"),)),
               "framing": _report("biased", _span("so-called reform", "framing"))}
    fast = NS(id="a", failed=False, label="biased", reports=reports, debate=None)
    # an agent's spans: its valid bias spans, never the invalid ones nor the grounding counter-spans
    assert E.agent_spans(fast, "bias") == ["radical"]
    assert E.agent_spans(fast, "evidence") == []
    assert E.agent_spans(fast, "tone") == []
    # a biased decision without debate: the biased reports' valid spans
    assert E.decision_spans(fast) == ["radical", "so-called reform"]
    # debated: the biased arguments of the last round only
    last = NS(arguments=[_arg("bias", "biased", _span("mob", "bias")), _arg("evidence", "neutral", _span("x", "evidence")),
                         _arg("framing", "biased", _span("gone", "framing", valid=False))])
    debated = NS(id="b", failed=False, label="biased", reports=reports, debate=NS(rounds=[NS(arguments=[]), last]))
    assert E.decision_spans(debated) == ["mob"]
    # neutral (e.g. overturned by the verifier) or failed: no spans
    assert E.decision_spans(NS(id="c", failed=False, label="neutral", reports=reports, debate=None)) == []
    assert E.decision_spans(NS(id="d", failed=True, label=None, reports={}, debate=None)) == []


def test_span_table_by_hand_and_in_id_order():
    reports = {"bias": _report("biased", _span("so-called reform", "bias")),
               "framing": _report("neutral", _span("reform", "framing"))}
    d1 = NS(id="s1", failed=False, label="biased", reports=reports, debate=None)
    d2 = NS(id="s2", failed=False, label="neutral", reports={"bias": _report("neutral"), "framing": _report("neutral")},
            debate=None)
    gold = [["so-called"], []]
    tab = E.span_table({"full": [d2, d1]}, gold, [1, 0], ids=["s1", "s2"], ci=False)  # aligned by id
    row = tab.set_index(["spans", "scope"])
    assert list(tab["spans"].unique()) == ["bias agent", "framing agent", "decision"]  # roster order
    assert row.loc[("bias agent", "biased-gold"), ["tp", "n_pred", "n_gold"]].tolist() == [1, 2, 1]
    assert row.loc[("bias agent", "biased-gold"), "precision"] == pytest.approx(0.5)
    assert row.loc[("framing agent", "all"), ["tp", "n_pred", "n_gold", "recall"]].tolist() == [0, 1, 1, 0.0]
    # the decision's spans: the biased bias report's only (the framing report is neutral)
    assert row.loc[("decision", "all"), ["tp", "n_pred", "f1"]].tolist() == [1, 2, pytest.approx(2 / 3)]
    assert tab["f1_lo"].isna().all()


def test_real_decisions_ground_their_spans():
    import mabpd_kit as mk

    p = mk.Pipeline()
    d = p.analyze("Democrats rammed through a so-called reform.")
    spans = E.decision_spans(d)
    assert d.label == "biased" and spans and all(s in d.clean_text for s in spans)
    assert E.decision_spans(p.analyze("The bill passed the Senate 52 to 48 on Tuesday.")) == []


def test_evaluate_reports_span_scores_where_the_items_have_biased_words():
    frame = pd.DataFrame({
        "id": ["s0", "s1", "s2", "s3"],
        "text": ["Democrats rammed through a so-called reform that radical activists demanded.",
                 "The extremist mob stormed the meeting, spewing hateful lies.",
                 "The bill passed the Senate 52 to 48 on Tuesday.",
                 "Officials said the bridge would reopen after inspections are complete."],
        "label": [1, 1, 0, 0],
        "biased_words": [["rammed", "so-called", "radical"], ["extremist", "mob", "hateful"], [], []],
    })
    ev = E.evaluate("toy", "dev", ["full", "single-agent"], frame=frame, n_resamples=50, progress=False)
    assert set(ev.spans["system"]) == {"full", "single-agent"}
    assert set(ev.spans["scope"]) == {"biased-gold", "all"}
    assert (ev.spans["spans"] == "decision").sum() == 4  # two systems x two scopes
    assert "spans vs annotated biased words" in ev.closing_note()
    # without biased words (HyperPartisan), no span table
    ev2 = E.evaluate("toy", "dev", ["full"], frame=frame.drop(columns="biased_words"), n_resamples=50, progress=False)
    assert ev2.spans is None and "spans vs annotated" not in ev2.closing_note()


def test_packed_counts_give_the_same_f1():
    from mabpd_kit.metrics.spans import _micro_f1, _pack, _packed_f1

    rng = np.random.default_rng(2)
    for _ in range(20):
        c = rng.integers(0, 9, (rng.integers(1, 200), 3))
        assert _packed_f1(_pack(c)) == pytest.approx(_micro_f1(c), abs=1e-15)
    assert _pack(np.array([[1 << 21, 0, 0]])) is None  # would overflow: the 2-D path is used
