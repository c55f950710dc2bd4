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
    strong = s >= 0.75 and len(grounded) == len(reps)  # each agent biased *with a valid span*
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


GROUNDED = AgentReport(agent="bias", verdict="biased", confidence=0.9, score=0.9, spans=[Span(text="x", start=0, end=1)])
UNGROUNDED = GROUNDED.model_copy(update={"spans": [Span(text="zzz", valid=False)]})
NEUTRAL = AgentReport(agent="evidence", verdict="neutral", confidence=0.9, score=0.9)


def test_no_debate_ablation_uses_the_boundary_only():
    cfg = CFG.ablation("no-debate")
    assert cfg.router.mode == "boundary"
    assert route({"bias": GROUNDED}, 0.5, cfg).label == "biased"
    assert route({"bias": GROUNDED}, 0.4999, cfg).label == "neutral"
    assert route({"bias": GROUNDED}, 0.9, cfg).route == "no_debate"


def test_the_boundary_needs_a_grounded_biased_verdict():
    cfg = CFG.ablation("no-debate")
    r = route({"bias": UNGROUNDED, "evidence": NEUTRAL}, 0.9, cfg)
    assert (r.route, r.label) == ("no_debate", "neutral") and "burden of proof" in r.reason


def test_strong_fast_path_needs_every_agent_grounded():
    reps = {"bias": GROUNDED, "evidence": UNGROUNDED.model_copy(update={"agent": "evidence"}),
            "framing": UNGROUNDED.model_copy(update={"agent": "framing"})}
    r = route(reps, 0.95, CFG)
    assert r.route == "debate" and r.n_biased == 3 and r.n_biased_grounded == 1
    all_grounded = {a: GROUNDED.model_copy(update={"agent": a}) for a in reps}
    assert route(all_grounded, 0.95, CFG).route == "strong_fast_path"


def test_verdict_mode_is_the_one_agents_grounded_verdict():
    cfg = CFG.ablation("single-agent")
    assert cfg.router.mode == "verdict"
    r = route({"bias": GROUNDED}, 0.0, cfg)  # the score plays no part
    assert (r.route, r.label) == ("single_agent", "biased")
    r = route({"bias": UNGROUNDED}, 1.0, cfg)
    assert (r.route, r.label) == ("single_agent", "neutral") and "burden of proof" in r.reason
    neutral = NEUTRAL.model_copy(update={"agent": "bias"})
    assert route({"bias": neutral}, 1.0, cfg).label == "neutral"


def test_debate_off_under_consensus_keeps_the_fast_paths_and_falls_back_to_the_boundary():
    cfg = CFG.replace(**{"sad.enabled": False})
    reps = {a: GROUNDED.model_copy(update={"agent": a}) for a in ("bias", "evidence", "framing")}
    assert route(reps, 0.95, cfg).route == "strong_fast_path"
    assert route({"bias": NEUTRAL.model_copy(update={"agent": "bias"})}, 0.1, cfg).route == "neutral_veto"
    r = route({"bias": GROUNDED, "evidence": NEUTRAL}, 0.55, cfg)
    assert (r.route, r.label) == ("no_debate", "biased") and "debate is off" in r.reason


def test_cut_offs_come_from_the_config():
    cfg = CFG.replace(**{"router.neutral_veto_below": 0.05})
    neutral = AgentReport(agent="bias", verdict="neutral", confidence=0.9, score=0.0)
    assert route({"bias": neutral}, 0.1, CFG).route == "neutral_veto"
    assert route({"bias": neutral}, 0.1, cfg).route == "debate"
