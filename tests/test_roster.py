"""One agent roster (issue 22, point 5): a fourth agent is a class, a prompt and one roster line.

The test defines a ToneAgent (emotional tone), its prompt in a temporary override folder and its
roster line, runs the pipeline rule-based on a few sentences inside ``roster.extended``, and finds
the agent in the reports, the score (its weight), the trace, the frames and the charts' data, in
the simulator and, with a scripted LLM, in the prompts. Afterwards the roster is the SPEC's three.
"""

from __future__ import annotations

from typing import Any

import pytest
from fourth_agent import ToneAgent
from pydantic import ValidationError

from mabpd_kit import roster
from mabpd_kit.config import Config
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.mabpd.agents import make_agents
from mabpd_kit.mabpd.schemas import AgentReport
from mabpd_kit.mabpd.store import grounded_score, weight_fields

SPEC_THREE = ("bias", "evidence", "framing")

TEXTS = {  # from the shipped samples: two the tone agent calls biased, a debate, a neutral one
    "s07": "Families were left devastated and terrified after the appalling decision to close the only hospital in town.",
    "s08": "It is a heartbreaking, outrageous betrayal of every veteran who ever served this country.",
    "n09": 'Activists called the plan "a betrayal of working families" at a rally outside city hall.',
    "s01": "The mayor rammed the zoning overhaul through the council before residents could even read it.",
    "n01": "The city council approved a 4.2 million dollar budget for road repairs on Tuesday by a vote of 7 to 2.",
}
GOLD = {"s07": 1, "s08": 1, "n09": 0, "s01": 1, "n01": 0}

# ---- the fourth agent: a class, a prompt, one roster line ---------------------------------------


TONE_PROMPT = """<!-- MABPD ToneAgent (a test's): slots $knowledge, $article. -->
<!-- include shared -->

<!-- include knowledge -->
<!-- user -->
<article>
$article
</article>

You are the TONE ANALYST: judge the emotional tone of the article above.
Reply with JSON, keys in this order: rationale, spans (each quote, category, explanation), counter_argument,
verdict ("biased" or "neutral"), confidence, tone_score.
"""

WEIGHT = 0.2


@pytest.fixture
def tone(tmp_path):
    """The fourth agent on the roster for one test (its prompt in a temporary override folder)."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "tone.md").write_text(TONE_PROMPT, encoding="utf-8")
    line = roster.AgentSpec("tone", ToneAgent, prompt="tone", weight=WEIGHT, title="tone analyst",
                            prompts_dir=str(tmp_path / "prompts"))
    with roster.extended(line):
        yield line
    assert roster.names() == SPEC_THREE


@pytest.fixture
def tone_run(tone):
    p = Pipeline()
    res = p.analyze_many(list(TEXTS.values()), ids=list(TEXTS), gold=[GOLD[i] for i in TEXTS], progress=False)
    return p, res, {d.id: d for d in res.decisions}


# ---- the roster itself ------------------------------------------------------------------------------


def test_the_builtin_roster_is_the_spec_three():
    assert roster.names() == SPEC_THREE
    assert [s.weight for s in roster.specs()] == [0.50, 0.25, 0.25]
    assert [s.title for s in roster.specs()] == ["bias analyst", "evidence analyst", "framing analyst"]
    assert Config().scoring.weights == {"bias": 0.50, "evidence": 0.25, "framing": 0.25}
    assert list(make_agents(Config())) == list(SPEC_THREE)
    assert weight_fields() == {"bias": "w_bias", "evidence": "w_evidence", "framing": "w_framing"}
    assert "w_added" not in Config().model_dump()["scoring"]  # dumps and fingerprints as before


def test_a_roster_line_is_checked():
    with pytest.raises(ValueError, match="role"):
        roster.AgentSpec("style", ToneAgent, prompt="style", weight=0.2, title="style analyst")
    with pytest.raises(ValueError, match="weight"):
        roster.AgentSpec("tone", ToneAgent, prompt="tone", weight=2.0, title="tone analyst")
    with pytest.raises(ValueError, match="on the roster already"):
        roster.register(roster.get("bias"))
    with pytest.raises(KeyError, match="bias, evidence, framing"):
        roster.get("tone")


# ---- the fourth agent everywhere --------------------------------------------------------------------


def test_a_fourth_agent_joins_config_and_pipeline(tone, tmp_path):
    assert roster.names() == (*SPEC_THREE, "tone")
    cfg = Config()
    assert cfg.agents.enabled == (*SPEC_THREE, "tone")
    assert cfg.scoring.weights == {"bias": 0.50, "evidence": 0.25, "framing": 0.25, "tone": WEIGHT}
    assert cfg.scoring.w_added == {"tone": WEIGHT} and weight_fields()["tone"] == "w_added"
    assert cfg.replace(**{"scoring.w_added": {"tone": 0.4}}).scoring.weights["tone"] == 0.4
    assert cfg.ablation("no-tone").agents.enabled == SPEC_THREE
    assert Config.load(cfg.save(tmp_path / "four.json")) == cfg  # the added weight is saved with it
    assert list(Pipeline(cfg).agents) == [*SPEC_THREE, "tone"]
    assert AgentReport(agent="tone", verdict="neutral", confidence=1.0, score=0.0).agent == "tone"
    with pytest.raises(ValidationError, match="unknown agent"):
        AgentReport(agent="style", verdict="neutral", confidence=1.0, score=0.0)


def test_the_fourth_agent_reports_and_is_scored(tone_run):
    _, res, by_id = tone_run
    assert not res.failed
    for d in by_id.values():
        assert list(d.reports) == [*SPEC_THREE, "tone"]
        assert d.reports["tone"].agent == "tone"
        total = 0.50 + 0.25 + 0.25 + WEIGHT  # renormalised over the four agents
        assert d.scoring.weights == pytest.approx({"bias": 0.50 / total, "evidence": 0.25 / total,
                                                   "framing": 0.25 / total, "tone": WEIGHT / total})
        assert d.score == pytest.approx(sum(d.scoring.weights[a] * grounded_score(r) for a, r in d.reports.items()))
    tone_says = {i: d.reports["tone"].verdict for i, d in by_id.items()}
    assert tone_says["s07"] == tone_says["s08"] == "biased" and tone_says["n01"] == "neutral"
    assert {s.text for s in by_id["s07"].store.valid("tone")} >= {"devastated", "appalling"}
    assert by_id["s07"].scoring.components["tone"] > 0


def test_the_fourth_agent_debates_in_the_trace(tone_run):
    _, _, by_id = tone_run
    d = by_id["n09"]
    assert d.route == "debate"
    assert all([w.agent for w in r.arguments] == [*SPEC_THREE, "tone"] for r in d.debate.rounds)
    tone_arg = next(w for w in d.debate.rounds[-1].arguments if w.agent == "tone")
    assert tone_arg.w == WEIGHT  # SAD's vote reads the same weights mapping
    assert "tone" in d.explanation()
    assert d.to_dict()["reports"]["tone"]["agent"] == "tone"


def test_the_fourth_agent_in_frames_and_charts(tone_run):
    import mabpd_kit.viz as viz
    from mabpd_kit.viz import pipeline as vp

    _, res, by_id = tone_run
    d = by_id["s07"]
    assert "tone" in set(d.to_frame()["agent"])
    frame = vp.decisions_frame(res)
    assert {"verdict_tone", "score_tone"} <= set(frame.columns)
    assert set(frame.set_index("id")["verdict_tone"][["s07", "s08"]]) == {"biased"}
    assert "tone" in set(vp.sad_frame(res)["agent"])

    def rows(chart: Any) -> list[dict]:
        return [r for ds in chart.to_dict()["datasets"].values() for r in ds]

    breakdown = vp.score_breakdown_chart(d)
    tone_rows = [r for r in rows(breakdown) if r.get("agent") == "tone"]
    assert tone_rows and tone_rows[0]["weight"] == pytest.approx(d.scoring.weights["tone"])
    scale = breakdown.to_dict()["layer"][0]["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"]))["tone"] == viz.color_for("tone", "agent")
    assert any(r.get("agent") == "tone" for r in rows(vp.agent_scores_chart(d)))
    assert any(r.get("agent") == "tone" for r in rows(vp.agent_verdicts_chart(res)))
    assert any(r.get("agent") == "tone" for r in rows(vp.sad_factors_chart(by_id["n09"])))
    assert "tone" in viz.AGENT_COLORS and viz.color_for("tone", "agent") == viz.AGENT_COLORS["tone"]


def test_the_fourth_agent_in_the_simulator(tone):
    from mabpd_kit.mabpd.simulator import AGENTS, SimSpec, simulate

    assert AGENTS == (*SPEC_THREE, "tone")
    sim = simulate(SimSpec(competence=(0.85, 0.7, 0.65, 0.6)), n_items=60, seed=0, configs=("full",))
    assert all(list(d.reports) == [*SPEC_THREE, "tone"] for d in sim["full"])
    assert set(sim.reports_frame()["agent"]) == {*SPEC_THREE, "tone"}
    assert set(sim.recover()["competence"]) == {*SPEC_THREE, "tone"}
    with pytest.raises(ValueError, match="4"):
        SimSpec(competence=(0.8, 0.7, 0.6)).per_agent()


def test_the_fourth_agents_prompt_comes_from_its_folder(tone, fake_server):
    from mabpd_kit.llm import connect
    from mabpd_kit.testing import system_prompt

    sent: list[str] = []

    def script(req):
        sys_ = system_prompt(req).lower()
        sent.append(sys_)
        if "structured argument debate" in sys_:
            return {"verdict": "biased", "confidence": 0.8, "evidence": ["devastated"], "rationale": "-",
                    "counter_argument": "-"}
        if "tone analyst" in sys_:
            return {"rationale": "fear words", "spans": [{"quote": "devastated", "category": "emotional language"}],
                    "counter_argument": "-", "verdict": "biased", "confidence": 0.9, "tone_score": 0.9}
        if "bias analyst" in sys_:
            return {"verdict": "neutral", "confidence": 0.6, "bias_score": 0.3, "rationale": "-", "spans": []}
        if "evidence analyst" in sys_:
            return {"verdict": "neutral", "confidence": 0.6, "evidence_score": 0.3, "rationale": "-", "evidence": []}
        if "framing analyst" in sys_:
            return {"verdict": "neutral", "confidence": 0.6, "framing_score": 0.2, "patterns": [], "rationale": "-"}
        if "verifier" in sys_:
            return {"verdict": "biased", "reason": "the writer's words", "strongest_quote": "devastated"}
        return "{}"

    srv = fake_server(script)
    d = Pipeline(Config(), connect(base_url=srv.base_url, model="fake", quiet=True)).analyze(TEXTS["s07"], id="s07")
    assert not d.failed, d.error
    assert d.reports["tone"].mode == "llm" and d.reports["tone"].verdict == "biased"
    assert any("judge the emotional tone" in s for s in sent)  # the override folder's template
    assert d.route == "debate"
    assert any("the tone analyst argued" in s.lower() for s in _user_texts(srv))


def _user_texts(srv: Any) -> list[str]:
    return [str(m.get("content") or "") for req in srv.requests for m in req.get("messages", [])
            if m.get("role") == "user"]


def test_after_the_fourth_agent_the_roster_is_three_again():
    assert roster.names() == SPEC_THREE
    assert Config().agents.enabled == SPEC_THREE
    assert Config().scoring.weights == {"bias": 0.50, "evidence": 0.25, "framing": 0.25}
    assert list(Pipeline().analyze(TEXTS["s07"]).reports) == list(SPEC_THREE)
    with pytest.raises(ValidationError, match="unknown agent"):
        AgentReport(agent="tone", verdict="neutral", confidence=1.0, score=0.0)
