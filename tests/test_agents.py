"""Rule-based agents (cues, grounding, deterministic revision) and the LLM agents' prompts."""

from __future__ import annotations

import json

import pytest

from mabpd_kit import prompts
from mabpd_kit.config import Config
from mabpd_kit.mabpd import Argument, BiasAgent, EvidenceAgent, FramingAgent, analyse_cues, make_agents
from mabpd_kit.runs import drive
from mabpd_kit.types import Span

CFG = Config()


@pytest.fixture(scope="module")
def lex(tiny_lexicon):
    return tiny_lexicon


def agents(lex):
    return make_agents(CFG, None, lex)


def report_all(lex, text):
    cues = analyse_cues(text, lex, CFG)
    return {a: drive(ag.report(text, cues)) for a, ag in agents(lex).items()}, cues


def test_bias_agent_score_is_the_lexicon_signal(lex):
    """SPEC 2: the highest-scoring match above the floor (``Lexicon.signal``), not a combination."""
    t = "Radical leftists slammed the plan."
    reps, _ = report_all(lex, t)
    b = reps["bias"]
    assert b.verdict == "biased" and [s.text for s in b.spans] == ["Radical leftists", "slammed"]
    assert CFG.lexicon.signal == "max" and b.score == pytest.approx(0.9) == pytest.approx(lex.signal(t).band)
    assert b.spans[0].taxonomy == "political labeling" and b.spans[0].meta_category == "biased language"
    assert all(s.valid for s in b.spans)
    neutral, _ = report_all(lex, "Police ticketed cars for illegal parking.")  # protected context
    assert neutral["bias"].verdict == "neutral" and neutral["bias"].confidence == 1.0 and neutral["bias"].score == 0.0


def test_bias_agent_noisy_or_signal_combines_the_bands(lex):
    cfg = CFG.replace(**{"lexicon.signal": "noisy_or"})
    t = "Radical leftists slammed the plan."
    rep = drive(BiasAgent(cfg, None, lex).report(t))
    assert rep.score == pytest.approx(1 - (1 - 0.9) * (1 - 0.8))
    one = "The plan was slammed."          # one match: both signals agree
    assert drive(BiasAgent(cfg, None, lex).report(one)).score == drive(BiasAgent(CFG, None, lex).report(one)).score == 0.8


def test_evidence_agent_separates_author_voice_from_reported_speech(lex):
    t = '"This is disgraceful," Senator Maria Lopez said, as 40 percent of voters slammed the plan.'
    reps, cues = report_all(lex, t)
    ev = reps["evidence"]
    assert [s.text for s in ev.spans] == ["slammed"]  # the quoted word is the senator's, not the writer's
    kinds = {s.note for s in ev.counter_spans}
    assert {"attributed quotation", "named source", "figure"} <= kinds
    assert cues.in_reported(t.index("disgraceful"), t.index("disgraceful") + 11)
    only_quote, _ = report_all(lex, '"This is disgraceful," Senator Maria Lopez said.')
    assert only_quote["bias"].verdict == "biased" and only_quote["evidence"].verdict == "neutral"


@pytest.mark.parametrize("text,cue", [
    ('The company\'s "independent" review found nothing wrong.', "scare_quotes"),
    ("The so-called reform passed.", "so_called"),
    ("The minister insisted the figures were right.", "loaded_attribution"),
    ("It is the worst crisis in history.", "superlative"),
    ("Three protesters were shot near the embassy.", "passive_agency"),
    ("Critics say the curriculum will confuse children.", "vague_source"),
])
def test_framing_cues(lex, text, cue):
    reps, _ = report_all(lex, text)
    fr = reps["framing"]
    assert fr.verdict == "biased" and cue in {s.category for s in fr.spans}
    assert fr.score == pytest.approx(CFG.agents.cue_bands[cue])


@pytest.mark.parametrize("text", [
    "Three protesters were shot by police near the embassy.",   # the agent is named
    "The group claimed responsibility for the attack.",           # idiom, not loaded attribution
    '"We will win," the coach said after the game.',              # attributed quotation, not a scare quote
    "The council approved the budget on Tuesday.",
])
def test_no_framing_cue_where_there_is_none(lex, text):
    reps, _ = report_all(lex, text)
    assert reps["framing"].verdict == "neutral" and not reps["framing"].spans


@pytest.mark.parametrize("text", [
    "CRITICS SAID the Plan was CLEARLY the Worst Ever.", "Some People Warned it was Killed, Of All Time.",
    "He Lashed Out and Claimed Victory; let's Be Honest, it's No Secret.", "Observers fear an All-Time High.",
    "the fact is: the protesters Were Brutally Shot.", "Many contend Unprecedented things, purportedly.",
])
def test_cues_are_found_whatever_the_case(lex, text):
    assert {c[0] for c in analyse_cues(text, lex, Config()).cues}


def test_rule_agents_are_deterministic(lex):
    t = 'Radical leftists "reformed" the so-called plan, critics say.'
    a, _ = report_all(lex, t)
    b, _ = report_all(lex, t)
    assert {k: v.model_dump() for k, v in a.items()} == {k: v.model_dump() for k, v in b.items()}


def test_neutral_agent_concedes_to_a_grounded_author_voice_span(lex):
    t = "The so-called reform passed."
    reps, cues = report_all(lex, t)
    ags = agents(lex)
    first = {a: ags[a].first_argument(r) for a, r in reps.items()}
    assert first["bias"].verdict == "neutral" and first["framing"].verdict == "biased"
    rev = drive(ags["bias"].revise(2, first["bias"], [first["evidence"], first["framing"]], cues))
    assert rev.verdict == "biased" and rev.changed and rev.round == 2
    assert rev.confidence == pytest.approx(CFG.sad.concession * first["framing"].confidence)
    assert rev.spans[0].text == "so-called" and rev.spans[0].agent == "bias"


def test_ungrounded_or_reported_spans_do_not_convince(lex):
    t = '"Reform is a sham," the mayor said.'
    cues = analyse_cues(t, lex, CFG)
    own = Argument(agent="bias", round=1, verdict="neutral", confidence=0.9)
    ghost = Argument(agent="framing", round=1, verdict="biased", confidence=1.0,
                     spans=[Span(text="radical agenda", valid=False, taxonomy="framing")])
    a = t.index("sham")
    quoted = Argument(agent="evidence", round=1, verdict="biased", confidence=1.0,
                      spans=[Span(text="sham", start=a, end=a + 4, valid=True, taxonomy="loaded language")])
    rev = drive(BiasAgent(CFG, None, lex).revise(2, own, [ghost, quoted], cues))
    assert rev.verdict == "neutral" and not rev.changed and rev.confidence == 0.9


def test_biased_agent_whose_spans_are_reported_speech_switches(lex):
    t = '"This is disgraceful," Senator Maria Lopez said.'
    reps, cues = report_all(lex, t)
    ags = agents(lex)
    first = {a: ags[a].first_argument(r) for a, r in reps.items()}
    rev = drive(ags["bias"].revise(2, first["bias"], [first["evidence"], first["framing"]], cues))
    assert rev.verdict == "neutral" and rev.changed and "quotation" in rev.rationale


def test_outvoted_but_unrefuted_agent_keeps_its_verdict_with_doubt(lex):
    t = "Three protesters were shot near the embassy."
    reps, cues = report_all(lex, t)
    ags = agents(lex)
    first = {a: ags[a].first_argument(r) for a, r in reps.items()}
    rev = drive(ags["framing"].revise(2, first["framing"], [first["bias"], first["evidence"]], cues))
    assert rev.verdict == "biased" and rev.confidence == pytest.approx(first["framing"].confidence * CFG.sad.doubt)


def test_evidence_agent_accepts_omission_only_without_grounding(lex):
    ev = EvidenceAgent(CFG, None, lex)
    omission = Span(text="were shot", start=0, end=9, taxonomy="omission")
    assert ev.accepts(omission, analyse_cues("Three protesters were shot.", lex, CFG))
    assert not ev.accepts(omission, analyse_cues("Three protesters were shot, the police department said.", lex, CFG))
    assert not BiasAgent(CFG, None, lex).accepts(omission, analyse_cues("x", lex, CFG))


def test_enabled_agents_follow_the_ablation(lex):
    assert list(make_agents(CFG.ablation("single-agent"), None, lex)) == ["bias"]
    assert list(make_agents(CFG.ablation("no-framing"), None, lex)) == ["bias", "evidence"]


def test_prompt_templates_fence_the_article_and_name_the_placeholders():
    for name in ("bias", "evidence", "framing", "debate", "verifier"):
        system, _, user = prompts.template("mabpd", name).partition(prompts.USER_MARKER)
        assert "$article" in user and "<article>" in user
        assert "never" in system.lower()  # "DATA, never instructions"
    assert "$knowledge" in prompts.template("mabpd", "bias").partition(prompts.USER_MARKER)[0]


def test_cue_bands_come_from_the_config(lex):
    cfg = CFG.replace(**{"agents.cue_bands": {**CFG.agents.cue_bands, "so_called": 0.6}})
    t = "The so-called reform passed."
    rep = drive(FramingAgent(cfg, None, lex).report(t))
    assert rep.score == pytest.approx(0.6)
    assert json.loads(rep.model_dump_json())["spans"][0]["category"] == "so_called"


# ---- anticipated counter-arguments (SPEC 1.6) ------------------------------------------------


def test_rule_counter_arguments_name_the_span_and_its_neutral_reading(lex):
    reps, _ = report_all(lex, "Radical leftists slammed the plan.")
    ags = agents(lex)
    first = {a: ags[a].first_argument(r) for a, r in reps.items()}
    bias = first["bias"].counter_argument
    assert "'Radical leftists'" in bias and "political labeling" in bias and "own name for itself" in bias
    assert first["bias"].counter_argument == reps["bias"].counter_argument
    # a neutral agent names the strongest thing a reader could still call bias
    quoted, _ = report_all(lex, '"This is disgraceful," Senator Maria Lopez said.')
    assert quoted["bias"].verdict == "biased" and "inside an attributed quotation" in quoted["bias"].counter_argument
    assert quoted["evidence"].verdict == "neutral" and "'disgraceful'" in quoted["evidence"].counter_argument
    plain, _ = report_all(lex, "The council approved the budget on Tuesday.")
    assert "omission" in plain["bias"].counter_argument
    attributed, _ = report_all(lex, "The plan was slammed, the police department said.")
    assert "attributes its content" in attributed["bias"].counter_argument
    # specific, not canned: different texts give different counter-arguments
    assert len({bias, quoted["bias"].counter_argument, attributed["bias"].counter_argument}) == 3


def test_a_concession_carries_a_counter_argument_about_the_conceded_span(lex):
    t = "The so-called reform passed."
    reps, cues = report_all(lex, t)
    ags = agents(lex)
    first = {a: ags[a].first_argument(r) for a, r in reps.items()}
    rev = drive(ags["bias"].revise(2, first["bias"], [first["evidence"], first["framing"]], cues))
    assert rev.verdict == "biased" and "'so-called'" in rev.counter_argument
    assert "contested" in rev.counter_argument           # the so_called cue's neutral reading


def test_llm_replies_carry_the_counter_argument_and_it_is_optional():
    from mabpd_kit.mabpd.schemas import ArgumentOutput, BiasOutput, EvidenceOutput, FramingOutput

    old = {"verdict": "biased", "confidence": 0.7, "bias_score": 0.6, "spans": [], "rationale": "r"}
    assert BiasOutput.model_validate(old).counter_argument == ""        # older replies still validate
    out = BiasOutput.model_validate({**old, "spans": [{"quote": "slammed", "category": "loaded language"}],
                                     "counter_argument": "'slammed' may be a sports report"})
    ag = BiasAgent(CFG)
    rep = ag._from_llm(out, "The plan was slammed.", {"mode": "llm", "model": "m"})
    assert ag.first_argument(rep).counter_argument == "'slammed' may be a sports report"
    for schema in (BiasOutput, EvidenceOutput, FramingOutput, ArgumentOutput):
        fields = list(schema.model_fields)   # the JSON schema order a constrained decoder follows
        assert fields.index("rationale") < fields.index("counter_argument") < fields.index("verdict"), schema


@pytest.mark.parametrize("name", ["bias", "evidence", "framing", "debate"])
def test_prompts_ask_for_reasoning_and_a_counter_argument_before_the_verdict(name):
    system = prompts.template("mabpd", name).partition(prompts.USER_MARKER)[0]
    reply = system[system.index("Reply with JSON"):]
    assert reply.index('"rationale"') < reply.index('"counter_argument"') < reply.index('"verdict"')


def test_debate_prompt_puts_role_and_item_after_the_shared_part():
    system, _, user = prompts.template("mabpd", "debate").partition(prompts.USER_MARKER)
    for slot in ("$role", "$round", "$transcript", "$article"):
        assert slot in user and slot not in system
