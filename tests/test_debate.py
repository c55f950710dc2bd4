"""SAD weighting, vote and rounds (SPEC 1.6)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mabpd_kit.config import Config
from mabpd_kit.mabpd import Argument, debate, vote, weigh
from mabpd_kit.runs import drive
from mabpd_kit.types import Span

CFG = Config()
OK = Span(text="x", start=0, end=1, valid=True)
BAD = Span(text="not there", valid=False)


def arg(agent, verdict, conf, valid=0, invalid=0, rnd=1):
    return Argument(agent=agent, round=rnd, verdict=verdict, confidence=conf, spans=[OK] * valid + [BAD] * invalid)


def test_factors_by_hand():
    args = [arg("bias", "biased", 0.8, valid=1, invalid=1), arg("evidence", "neutral", 0.6),
            arg("framing", "biased", 0.5, valid=2)]
    w = {x.agent: x for x in weigh(args, CFG)}
    assert (w["bias"].q, w["bias"].f) == (0.5, 0.5)
    assert (w["evidence"].q, w["evidence"].f) == (0.0, 0.5)  # neutral keeps half its weight
    assert (w["framing"].q, w["framing"].f) == (1.0, 1.0)
    # bias: others = evidence (neutral), framing (biased) -> share 0.5 -> g = 1
    assert w["bias"].g == pytest.approx(1.0)
    assert w["evidence"].g == pytest.approx(0.9)  # nobody agrees
    assert w["bias"].k == pytest.approx(0.8 * 0.5 * 1.0)
    v = vote(list(w.values()), CFG)
    B = 0.5 * 0.4 + 0.25 * (0.5 * 1.0 * 1.0)
    N = 0.25 * (0.6 * 0.5 * 0.9)
    assert (v.B, v.N) == (pytest.approx(B), pytest.approx(N))
    assert v.label == "biased" and v.share == pytest.approx(B / (B + N))


def test_ungrounded_biased_claim_weighs_zero_and_no_votes_is_neutral():
    w = weigh([arg("bias", "biased", 1.0, invalid=3)], CFG)
    assert w[0].f == 0 and w[0].k == 0
    v = vote(w, CFG)
    assert v.B == 0 and v.N == 0 and v.share is None and v.label == "neutral"


def test_no_evidence_weighting_sets_f_to_one():
    w = weigh([arg("bias", "biased", 0.7, invalid=2)], CFG.ablation("no-evidence-weighting"))
    assert w[0].f == 1.0 and w[0].k == pytest.approx(0.7)


def test_more_than_max_spans_are_not_counted():
    a = arg("bias", "biased", 0.7, valid=5, invalid=3)
    w = weigh([a], CFG)[0]
    assert w.n_cited == 5 and w.q == 1.0


agent_args = st.builds(
    arg,
    agent=st.sampled_from(["bias", "evidence", "framing"]),
    verdict=st.sampled_from(["biased", "neutral"]),
    conf=st.floats(0, 1, allow_nan=False),
    valid=st.integers(0, 3),
    invalid=st.integers(0, 3),
)


WEIGHTED = CFG.replace(**{"sad.agreement_over": "weighted"})


@settings(max_examples=300, deadline=None)
@given(others=st.lists(agent_args, min_size=0, max_size=3), agent=st.sampled_from(["bias", "evidence", "framing"]),
       conf=st.floats(0, 1, allow_nan=False), n_invalid=st.integers(0, 5))
def test_an_ungrounded_biased_argument_never_changes_the_vote(others, agent, conf, n_invalid):
    """Holds under the "weighted" reading of g only (the one that guarantees it): under "all", the
    default, an ungrounded biased agent's presence changes the others' agreement factor
    (tests/test_sad_options.py shows a case)."""
    without = vote(weigh(others, WEIGHTED), WEIGHTED)
    with_it = vote(weigh([*others, arg(agent, "biased", conf, invalid=n_invalid)], WEIGHTED), WEIGHTED)
    assert with_it.label == without.label
    assert with_it.B == pytest.approx(without.B) and with_it.N == pytest.approx(without.N)


def test_the_score_weights_are_the_vote_weights():
    """One weights mapping: moving scoring.w_bias (the notebook slider) moves SAD's vote too."""
    args = [arg("bias", "biased", 0.3, valid=1), arg("evidence", "neutral", 0.9), arg("framing", "neutral", 0.9)]
    assert vote(weigh(args, CFG), CFG).label == "neutral"
    heavy = CFG.replace(**{"scoring.w_bias": 0.9, "scoring.w_evidence": 0.05, "scoring.w_framing": 0.05})
    v = vote(weigh(args, heavy), heavy)
    assert v.label == "biased"
    assert [x.w for x in weigh(args, heavy)] == [0.9, 0.05, 0.05]


def spec_vote(args):
    """SPEC 1.6 written out again from the arguments alone (its numbers, not the code's factors):
    q, f, g over all the other agents, k, then B, N and the label."""
    W = {"bias": 0.50, "evidence": 0.25, "framing": 0.25}
    fs = []
    for a in args:
        cited = a.spans[:5]
        q = sum(s.valid for s in cited) / len(cited) if cited else 0.0
        fs.append(q if a.verdict == "biased" else max(q, 0.5))
    B = N = 0.0
    for i, a in enumerate(args):
        others = [b for j, b in enumerate(args) if j != i]
        share = sum(b.verdict == a.verdict for b in others) / len(others) if others else 0.5
        k = min(max(a.confidence * fs[i] * (1 + 0.2 * (share - 0.5)), 0.0), 1.0)
        if a.verdict == "biased":
            B += W[a.agent] * k
        else:
            N += W[a.agent] * k
    return B, N, "biased" if B + N > 0 and B / (B + N) >= 0.5 else "neutral"


@settings(max_examples=200, deadline=None)
@given(args=st.lists(agent_args, min_size=1, max_size=3))
def test_vote_is_the_role_weighted_rule(args):
    w = weigh(args, CFG)
    v = vote(w, CFG)
    assert all(0 <= x.k <= 1 for x in w)
    B, N, label = spec_vote(args)
    assert (v.B, v.N) == (pytest.approx(B, abs=1e-12), pytest.approx(N, abs=1e-12))
    assert v.label == label


def test_rounds_stop_early_on_agreement_and_pass_the_others():
    seen = []

    async def revise(agent, rnd, own, others):
        seen.append((agent, rnd, sorted(o.agent for o in others)))
        return own.model_copy(update={"round": rnd, "verdict": "biased", "changed": own.verdict != "biased"})

    first = [arg("bias", "biased", 0.9, valid=1), arg("evidence", "neutral", 0.6), arg("framing", "neutral", 0.6)]
    res = drive(debate(first, revise, CFG.replace(**{"sad.rounds": 4})))
    assert [r.index for r in res.rounds] == [1, 2]  # all agree after round 2
    assert res.stopped_early and res.rounds[-1].agreed
    assert ("bias", 2, ["evidence", "framing"]) in seen
    df = res.to_frame()
    assert set(df.columns) >= {"round", "agent", "q", "f", "g", "k", "w", "B", "N", "changed"}
    assert df[df["round"] == 2].changed.sum() == 2

    before = len(seen)
    agreed = drive(debate([arg("bias", "neutral", 0.9)], revise, CFG))
    assert len(agreed.rounds) == 1 and seen[before:] == []  # agreement after round 1: nobody revises
    assert agreed.stopped_early and agreed.stop_reason == "agreement"


def test_rounds_run_to_the_configured_count_without_agreement():
    async def stubborn(agent, rnd, own, others):
        return own.model_copy(update={"round": rnd})

    first = [arg("bias", "biased", 0.9, valid=1), arg("evidence", "neutral", 0.6)]
    res = drive(debate(first, stubborn, CFG.replace(**{"sad.rounds": 3})))
    assert len(res.rounds) == 3 and not res.stopped_early and res.stop_reason == "max_rounds"
