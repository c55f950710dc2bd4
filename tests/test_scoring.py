"""EvidenceStore validation and the weighted score (SPEC 1.3-1.4)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mabpd_kit.config import Config
from mabpd_kit.mabpd import AgentReport, EvidenceStore, ground_span, score
from mabpd_kit.mabpd.store import score_reports
from mabpd_kit.types import Span

TEXT = "The senator slammed the so-called reform on Monday."
unit = st.floats(0, 1, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(b=unit, e=unit, f=unit)
def test_score_is_the_weighted_sum(b, e, f):
    s = score({"bias": b, "evidence": e, "framing": f}, Config())
    assert s.score == pytest.approx(0.50 * b + 0.25 * e + 0.25 * f, abs=1e-9)
    assert s.weights == {"bias": 0.50, "evidence": 0.25, "framing": 0.25}
    assert s.above_boundary == (s.score >= 0.50)


@settings(max_examples=100, deadline=None)
@given(b=unit, f=unit, wb=st.floats(0.1, 1), wf=st.floats(0.1, 1))
def test_removed_agent_renormalises_weights(b, f, wb, wf):
    cfg = Config().replace(**{"scoring.w_bias": wb, "scoring.w_framing": wf})
    s = score({"bias": b, "framing": f}, cfg)
    assert s.score == pytest.approx((wb * b + wf * f) / (wb + wf), abs=1e-9)
    assert sum(s.weights.values()) == pytest.approx(1.0)


def test_store_keeps_invalid_spans_but_never_counts_them():
    spans = [
        Span(text="slammed", agent="bias", category="attack_verbs"),  # no offsets: searched
        Span(text="a total fabrication", agent="bias"),  # not in the text
        Span(text="So called reform", agent="framing"),  # typography only (hyphen, case): fuzzy, the text's words
        Span(text="so-calld reform", agent="framing"),  # a changed word: not the text's
    ]
    store = EvidenceStore.build(TEXT, spans, ratio=0.90)
    assert len(store.spans) == 4
    valid = store.valid()
    assert [s.text for s in valid] == ["slammed", "so-called reform"]
    assert TEXT[valid[0].start : valid[0].end] == "slammed"
    assert valid[1].reason == "fuzzy" and TEXT[valid[1].start:valid[1].end] == valid[1].text
    bad = store.invalid()
    assert len(bad) == 2 and all(b.start is None and not b.valid and b.reason for b in bad)
    assert store.valid("framing")[0].agent == "framing"
    df = store.to_frame()
    assert df.valid.tolist() == [True, False, True, False]


def test_ground_span_rejects_wrong_offsets_and_relocates():
    s = Span(text="reform", start=0, end=6, agent="bias")  # offsets point at "The se"
    g = ground_span(s, TEXT, 0.9)
    assert g.valid and TEXT[g.start : g.end] == "reform"


def test_duplicate_spans_from_one_agent_are_merged():
    s = Span(text="slammed", start=12, end=19, agent="bias")
    store = EvidenceStore.build(TEXT, [s, s, s.model_copy(update={"agent": "evidence"})])
    assert len(store.spans) == 2


def test_an_ungrounded_biased_agent_contributes_zero_but_its_stated_score_stays_in_the_trace():
    made_up = AgentReport(agent="bias", verdict="biased", confidence=0.9, score=0.95,
                          spans=[Span(text="invented", agent="bias", valid=False)])
    silent = AgentReport(agent="framing", verdict="biased", confidence=0.9, score=0.8)  # cites nothing
    neutral = AgentReport(agent="evidence", verdict="neutral", confidence=0.6, score=0.3)
    s = score_reports({"bias": made_up, "evidence": neutral, "framing": silent}, Config())
    assert s.components == {"bias": 0.0, "evidence": 0.3, "framing": 0.0}
    assert s.stated == {"bias": 0.95, "evidence": 0.3, "framing": 0.8}
    assert s.score == pytest.approx(0.25 * 0.3) and s.ungrounded == ["bias", "framing"]
    grounded = made_up.model_copy(update={"spans": [Span(text="slammed", start=12, end=19, agent="bias")]})
    s = score_reports({"bias": grounded, "evidence": neutral}, Config())
    assert s.components["bias"] == 0.95 and s.ungrounded == []
