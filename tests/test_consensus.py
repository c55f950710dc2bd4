"""Router cut-offs (SPEC 1.5) hold for every combination of reports and score."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mabpd_kit.config import Config
from mabpd_kit.mabpd import AgentReport, route
from mabpd_kit.types import Span

CFG = Config()


@st.composite
def reports(draw):
    agents = draw(st.sampled_from([("bias", "evidence", "framing"), ("bias",), ("bias", "framing")]))
    out = {}
    for a in agents:
        verdict = draw(st.sampled_from(["biased", "neutral"]))
        n_valid = draw(st.integers(0, 2))
        n_invalid = draw(st.integers(0, 2))
        spans = [Span(text="x", start=0, end=1, agent=a, valid=True)] * n_valid
        spans += [Span(text="y", agent=a, valid=False)] * n_invalid
        out[a] = AgentReport(agent=a, verdict=verdict, confidence=0.7, score=0.5, spans=spans)
    return out


@settings(max_examples=400, deadline=None)
@given(reps=reports(), s=st.floats(0, 1, allow_nan=False))
def test_every_route_respects_its_cut_offs(reps, s):
    r = route(reps, s, CFG)
    biased = [a for a, x in reps.items() if x.verdict == "biased"]
    grounded = [a for a in biased if any(sp.valid for sp in reps[a].spans)]
    veto = s < 0.30 and not grounded
    strong = s >= 0.75 and len(biased) == len(reps)
    moderate = s >= 0.60 and len(grounded) >= 2
    if r.route == "neutral_veto":
        assert veto and r.label == "neutral"
    elif r.route == "strong_fast_path":
        assert strong and not veto and r.label == "biased"
    elif r.route == "moderate_fast_path":
        assert moderate and not veto and not strong and r.label == "biased"
    else:
        assert r.route == "debate" and r.label is None
        assert not (veto or strong or moderate)
    assert r.n_biased == len(biased) and r.n_biased_grounded == len(grounded)


def test_ungrounded_biased_agent_does_not_block_the_veto_but_a_grounded_one_does():
    ungrounded = AgentReport(agent="bias", verdict="biased", confidence=0.9, score=0.2,
                             spans=[Span(text="zzz", valid=False)])
    assert route({"bias": ungrounded}, 0.1, CFG).route == "neutral_veto"
    grounded = ungrounded.model_copy(update={"spans": [Span(text="x", start=0, end=1)]})
    assert route({"bias": grounded}, 0.1, CFG).route == "debate"


def test_no_debate_ablation_uses_the_boundary_only():
    cfg = CFG.ablation("no-debate")
    neutral = AgentReport(agent="bias", verdict="neutral", confidence=0.9, score=0.0)
    assert route({"bias": neutral}, 0.5, cfg).label == "biased"
    assert route({"bias": neutral}, 0.4999, cfg).label == "neutral"
    assert route({"bias": neutral}, 0.9, cfg).route == "no_debate"


def test_cut_offs_come_from_the_config():
    cfg = CFG.replace(**{"router.neutral_veto_below": 0.05})
    neutral = AgentReport(agent="bias", verdict="neutral", confidence=0.9, score=0.0)
    assert route({"bias": neutral}, 0.1, CFG).route == "neutral_veto"
    assert route({"bias": neutral}, 0.1, cfg).route == "debate"
