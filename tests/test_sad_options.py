"""SAD options (SPEC 1.6): who counts in the agreement factor, and dual-threshold stopping."""

from __future__ import annotations

import pytest

from mabpd_kit.config import Config
from mabpd_kit.mabpd import Argument, debate, vote, weigh
from mabpd_kit.runs import drive
from mabpd_kit.types import Span

CFG = Config()
WEIGHTED = CFG.replace(**{"sad.agreement_over": "weighted"})
OK = Span(text="x", start=0, end=1, valid=True)
BAD = Span(text="not there", valid=False)


def arg(agent, verdict, conf, valid=0, invalid=0, rnd=1):
    return Argument(agent=agent, round=rnd, verdict=verdict, confidence=conf, spans=[OK] * valid + [BAD] * invalid)


# ---- agreement factor: "all" other agents (SPEC 1.6, default) or only the weighted ones -----------


def test_default_reading_counts_every_other_agent():
    assert CFG.sad.agreement_over == "all"
    # evidence's ungrounded biased claim (f = 0) still counts as a peer under "all"
    args = [arg("bias", "biased", 0.8, valid=1), arg("evidence", "biased", 0.9, invalid=2),
            arg("framing", "neutral", 0.6)]
    a = {w.agent: w for w in weigh(args, CFG)}
    assert a["evidence"].f == 0
    assert a["bias"].agree_share == 0.5 and a["bias"].g == pytest.approx(1.0)       # 1 of 2 others agrees
    assert a["framing"].agree_share == 0.0 and a["framing"].g == pytest.approx(0.9)
    w = {x.agent: x for x in weigh(args, WEIGHTED)}
    assert w["bias"].agree_share == 0.0 and w["bias"].g == pytest.approx(0.9)        # only framing is a voice
    assert w["framing"].agree_share == 0.0 and w["framing"].g == pytest.approx(0.9)


def test_readings_coincide_without_evidence_weighting():
    args = [arg("bias", "biased", 0.8, valid=1), arg("evidence", "biased", 0.9, invalid=2),
            arg("framing", "neutral", 0.6)]
    off_all = CFG.ablation("no-evidence-weighting")
    off_w = off_all.replace(**{"sad.agreement_over": "weighted"})
    assert [x.g for x in weigh(args, off_all)] == [x.g for x in weigh(args, off_w)]


def test_the_two_readings_give_different_votes_on_some_grid_points():
    """A grounded biased Bias agent, an ungrounded biased Evidence agent, a neutral Framing agent:
    under "all" the ungrounded claim backs the Bias agent's g (1.0 instead of 0.9), so on part
    of a 20 x 20 grid of confidences the label differs."""
    grid = [i / 20 for i in range(1, 21)]
    differ = []
    for cb in grid:
        for cf in grid:
            args = [arg("bias", "biased", cb, valid=1), arg("evidence", "biased", 0.9, invalid=1),
                    arg("framing", "neutral", cf)]
            la, lw = vote(weigh(args, CFG), CFG).label, vote(weigh(args, WEIGHTED), WEIGHTED).label
            if la != lw:
                differ.append((cb, cf, la, lw))
    assert differ, "the readings never differ"
    assert all(la == "biased" and lw == "neutral" for *_, la, lw in differ)  # "all" only adds support here
    # one point by hand: B = 0.5 * 0.1 * g_bias; N = 0.25 * 0.45 * 0.5 * 0.9 = 0.050625
    args = [arg("bias", "biased", 0.1, valid=1), arg("evidence", "biased", 0.9, invalid=1),
            arg("framing", "neutral", 0.45)]
    assert vote(weigh(args, CFG), CFG).B == pytest.approx(0.05)          # g = 1.0 -> 0.05 / 0.100625 < 0.5
    assert vote(weigh(args, WEIGHTED), WEIGHTED).B == pytest.approx(0.045)


def test_the_reading_is_in_the_trace():
    async def keep(agent, rnd, own, others):
        return own

    first = [arg("bias", "biased", 0.8, valid=1), arg("framing", "neutral", 0.6)]
    res = drive(debate(first, keep, WEIGHTED))
    assert res.agreement_over == "weighted"
    assert set(res.to_frame()["agreement_over"]) == {"weighted"}
    assert drive(debate(first, keep, CFG)).agreement_over == "all"


# ---- dual-threshold stopping ---------------------------------------------------------------------

DUAL = CFG.replace(**{"sad.dual_threshold": True, "sad.rounds": 3})


def counting(calls):
    async def keep(agent, rnd, own, others):
        calls.append((agent, rnd))
        return own.model_copy(update={"round": rnd})

    return keep


def test_s_and_c_are_recorded_per_round_by_hand():
    first = [arg("bias", "biased", 0.9, valid=1), arg("evidence", "biased", 0.8, valid=1),
             arg("framing", "neutral", 0.5)]
    res = drive(debate(first, counting([]), CFG.replace(**{"sad.rounds": 2})))
    for r in res.rounds:
        agree = sum(w.verdict == r.vote.label for w in r.arguments)
        assert r.s == pytest.approx((agree - (3 - agree)) / 3)
        assert r.c == pytest.approx(max(r.vote.B, r.vote.N) / (r.vote.B + r.vote.N))
    r1 = res.rounds[0]
    assert r1.vote.label == "biased" and r1.s == pytest.approx(1 / 3)
    df = res.to_frame()
    assert list(df.loc[df["round"] == 1, "s"]) == [r1.s] * 3 and list(df.loc[df["round"] == 1, "c"]) == [r1.c] * 3


def test_dual_threshold_stops_a_confident_majority_after_round_one():
    # B = 0.5*0.9*1 + 0.25*0.8*1 = 0.65; N = 0.25*0.5*0.5*0.9 = 0.05625; c = 0.92 >= 0.75; s = 1/3 >= 0.3
    first = [arg("bias", "biased", 0.9, valid=1), arg("evidence", "biased", 0.8, valid=1),
             arg("framing", "neutral", 0.5)]
    calls = []
    res = drive(debate(first, counting(calls), DUAL))
    assert len(res.rounds) == 1 and calls == []
    assert res.stopped_early and res.stop_reason == "dual_threshold"
    assert res.dual_threshold and (res.tau_s, res.tau_v) == (0.3, 0.75)
    off = drive(debate(first, counting(calls), DUAL.replace(**{"sad.dual_threshold": False})))
    assert len(off.rounds) == 3 and off.stop_reason == "max_rounds" and not off.stopped_early


def test_dual_threshold_goes_on_when_the_vote_is_close_or_the_majority_thin():
    close = [arg("bias", "biased", 0.5, valid=1), arg("evidence", "neutral", 0.9, valid=1),
             arg("framing", "neutral", 0.9, valid=1)]
    res = drive(debate(close, counting([]), DUAL))
    assert res.rounds[0].c < 0.75 and len(res.rounds) == 3 and res.stop_reason == "max_rounds"
    strict = DUAL.replace(**{"sad.tau_s": 0.5})          # 2 of 3 agree: s = 1/3 < 0.5
    first = [arg("bias", "biased", 0.9, valid=1), arg("evidence", "biased", 0.8, valid=1),
             arg("framing", "neutral", 0.5)]
    assert len(drive(debate(first, counting([]), strict)).rounds) == 3


def test_an_empty_vote_never_stops_on_the_dual_threshold():
    first = [arg("bias", "biased", 0.9, invalid=1), arg("framing", "biased", 0.9, invalid=1),
             arg("evidence", "neutral", 0.0)]
    res = drive(debate(first, counting([]), DUAL.replace(**{"sad.tau_s": -1.0, "sad.tau_v": 0.0})))
    assert res.rounds[0].vote.B + res.rounds[0].vote.N == 0 and res.rounds[0].c == 0.0
    assert res.stop_reason == "dual_threshold"   # tau_v = 0: c = 0 passes; the thresholds decide, not a special case
    res = drive(debate(first, counting([]), DUAL.replace(**{"sad.tau_s": -1.0, "sad.tau_v": 0.01})))
    assert len(res.rounds) == 3


def test_agreement_is_reported_before_the_dual_threshold():
    first = [arg("bias", "biased", 0.9, valid=1), arg("evidence", "biased", 0.8, valid=1)]
    res = drive(debate(first, counting([]), DUAL))
    assert len(res.rounds) == 1 and res.stop_reason == "agreement"


def test_agree_share_from_one_tally_is_the_per_agent_count():
    """weigh counts the voices once; each agent's share must be what counting its others gives."""
    import itertools

    agents = ("bias", "evidence", "framing")
    kinds = [("biased", 1, 0), ("biased", 0, 2), ("neutral", 0, 0), ("neutral", 1, 1), ("biased", 1, 1)]
    for cfg in (CFG, WEIGHTED, CFG.replace(**{"sad.evidence_weighting": False})):
        for n in (1, 2, 3):
            for combo in itertools.product(kinds, repeat=n):
                args = [arg(agents[i], v, 0.7, valid=ok, invalid=bad) for i, (v, ok, bad) in enumerate(combo)]
                got = weigh(args, cfg)
                for w in got:
                    voices = [o for o in got if o is not w and (cfg.sad.agreement_over == "all" or o.f > 0)]
                    want = sum(1 for o in voices if o.verdict == w.verdict) / len(voices) if voices else 0.5
                    assert w.agree_share == want and type(w.agree_share) is float
