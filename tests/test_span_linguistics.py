"""Span precision for linguistic reasons (issue 23): one test per class, each on sentences written for
the test from linguistic knowledge (none is a benchmark sentence).

Classes: span boundaries, multi-word cues (neutral head nouns), protected domain terms, quotation
(names, titles, mentions), attribution (naming verbs, partial quotations, ascribed labels), negation,
hedges and boosters (stance adverbials), and scare quotes as secondary evidence. Second round: number
inflection of fixed noun phrases, whole words (hyphenated compounds, denying parts), the loaded
constituent of a compound (political sides, classifiers of ideology nouns), focusing/frequency/degree
words and quantifiers, epistemic frames and absolutes, whole stance phrases, mentioned expressions,
secondary evidence against the sentence's primary evidence, cue-span boundaries, nouns of attack. The
decision's evidence: primary over secondary, a source's quoted words and the words inside scare quotes; a
scare quote beside the writer's own secondary words, words of a proper name; maximizers as degree adverbials.
"""

from __future__ import annotations

import pytest

from mabpd_kit.config import Config
from mabpd_kit.lexicon import Lexicon
from mabpd_kit.lexicon.boundaries import adverbial, negated, trim
from mabpd_kit.mabpd.agents import BiasAgent, FramingAgent
from mabpd_kit.mabpd.cues import analyse_cues, lexicon_for, primary
from mabpd_kit.mabpd.speech import ascribed
from mabpd_kit.runs import drive


@pytest.fixture(scope="module")
def lex() -> Lexicon:
    return Lexicon.default()


def _report(agent_cls, text: str):
    cfg = Config()
    cues = analyse_cues(text, lexicon_for(cfg), cfg)
    return drive(agent_cls(cfg).report(text, cues)), cues


def test_boundaries_trim_function_words_and_drop_grammatical_homographs(lex):
    # a trailing preposition of a noun phrase goes; an auxiliary around an adverb goes
    assert [m.text for m in lex.match("The senator launched an attack on the new budget.")] == ["attack"]
    assert [m.text for m in lex.match("The party has never been stronger.")] == ["never"]
    # a phrasal verb keeps its particle: the particle is part of the verb's meaning
    t = "They wiped out the savings."
    a, b = trim(t, t.index("wiped"), t.index(" the"))
    assert t[a:b] == "wiped out"
    # the modal "would be" is two function words, not the adjective "would-be"
    assert lex.match("The law would be signed next week.") == []
    assert [m.text for m in lex.match("The would-be reformer spoke.")] == ["would-be"]
    assert trim("It would be fine.", 3, 11) is None


def test_multi_word_cue_drops_the_neutral_head_noun(lex):
    hits = lex.match("The mainstream media ignored the vote of the Democrat Party.")
    assert [(m.text, m.term) for m in hits] == [("mainstream", "mainstream media"), ("Democrat", "democrat party")]
    # the term is still named, so the teaching note and band are the phrase's
    assert hits[0].band == next(t.band for t in lex.terms if t.term == "mainstream media")


@pytest.mark.parametrize("text", [
    "Officials reported a terrorist attack at the station.",       # literal violence, named by its kind
    "The financial crisis of 2008 cost millions of jobs.",        # the conventional name of an event
    "Illegal immigration fell for the third year.",               # 'illegal' of an act: a legal description
    "Pro-life groups held a rally outside the court.",            # a self-label as the movement's name
])
def test_protected_domain_terms_do_not_count(lex, text):
    assert lex.match(text) == []


@pytest.mark.parametrize("text, word", [
    ("Illegal immigrants were detained at the border.", "Illegal"),  # 'illegal' applied to people: a label
    ("The pro-life bill passed the chamber.", "pro-life"),           # the movement's word for a policy
    ("The border crisis dominated the news.", "crisis"),             # a framing choice, deliberately not protected
])
def test_loaded_uses_next_to_protected_ones_still_count(lex, text, word):
    assert any(word in m.text.split() for m in lex.match(text))  # the label is (part of) a hit


@pytest.mark.parametrize("text", [
    'The film "Children of Men" opened in London.',                # a title
    'Editors avoid the term "mass shooting" in headlines.',        # an expression mentioned as such
])
def test_quotation_names_and_mentions_are_not_scare_quotes(text):
    rep, cues = _report(FramingAgent, text)
    q, = cues.quotes
    assert q.name and not q.scare and not q.reported
    assert not any(c == "scare_quotes" for c, _, _ in cues.cues) and rep.verdict == "neutral"


def test_a_scare_quote_is_still_found():
    rep, cues = _report(FramingAgent, "The company's \"independent\" review found nothing wrong.")
    assert cues.quotes[0].scare and [s.text for s in rep.spans] == ['"independent"'] and rep.verdict == "biased"


@pytest.mark.parametrize("text", [
    'Warren described Sanders as her "friend" at the dinner.',     # a verb of naming before the quotation
    'The governor said on Monday, at a long press conference in the state capital, that the plan was "reckless".',
])
def test_attribution_makes_a_short_quotation_a_partial_quotation(text):
    cues = analyse_cues(text, lexicon_for(Config()), Config())
    q, = cues.quotes
    assert q.attributed and q.reported and not q.scare
    assert cues.in_reported(q.start + 1, q.end - 1)


def test_attribution_ascribed_labels_are_the_describers_words():
    text = "Opponents smeared the mayor as a radical."
    assert [text[a:b] for a, b in ascribed(text)] == ["as a radical"]
    rep, cues = _report(BiasAgent, text)
    # the writer's own choice is the verb; the ascribed label is the opponents'
    assert [s.text for s in rep.spans] == ["smeared"]
    assert ascribed("She served as mayor for a decade.") == []


def test_negation_denied_labels_are_not_the_writers_use():
    text = "The mayor slammed the plan, but she is not a radical."
    assert negated(text, text.index("radical")) and not negated(text, text.index("slammed"))
    assert not negated("It was not only radical but cruel.", 12)
    rep, _ = _report(BiasAgent, text)
    assert [s.text for s in rep.spans] == ["slammed"]


def test_hedges_and_boosters_are_cited_only_when_nothing_else_is_there():
    assert adverbial("reportedly") and adverbial("Of course") and adverbial("in fact") and not adverbial("slammed")
    rep, _ = _report(BiasAgent, "Clearly, the senator slammed the plan.")
    assert [s.text for s in rep.spans] == ["slammed"]
    alone, _ = _report(BiasAgent, "Clearly the plan will pass.")
    assert [s.text for s in alone.spans] == ["Clearly"] and alone.verdict == "biased"
    # the score is the lexicon signal either way: only what is cited changes
    assert rep.score == pytest.approx(max(m.band for m in Lexicon.default().match("Clearly, the senator slammed the plan.")))


def test_scare_quotes_are_secondary_to_a_loaded_word():
    rep, cues = _report(FramingAgent, 'The regime held its "election" after a week.')
    assert any(c == "scare_quotes" for c, _, _ in cues.cues)
    assert [s.text for s in rep.spans] == ["regime"]
    assert primary([]) == []


# -- second round (issue 23): morphology, whole words, compounds, more secondary classes ---------------------

def test_morphology_a_fixed_noun_phrase_takes_its_plural(lex):
    # a set phrase that is a noun phrase inflects for number on its head, like any noun phrase
    assert [m.text for m in lex.match("The senator blamed illegal aliens for the deficit.")] == ["illegal aliens"]
    assert [m.text for m in lex.match("The panel heard from two conspiracy theorists.")] == ["conspiracy theorists"]


@pytest.mark.parametrize("text, spans", [
    ("By midnight he was rage-tweeting again.", ["rage-tweeting"]),         # a part of a compound grows to it
    ("The scandal-ridden council met on Friday.", ["scandal-ridden"]),
    ("A non-partisan group counted the ballots.", []),                      # the compound denies the stem
    ("Thousands joined the anti-fascist march.", []),
    ("The firm kept a scandal-free record.", []),
])
def test_whole_words_a_hyphenated_compound_is_one_word(lex, text, spans):
    assert [m.text for m in lex.match(text)] == spans


def test_whole_words_a_phrase_loses_an_edge_word_that_is_only_part_of_a_compound():
    t = "She backed a radical left-wing platform."
    a, b = trim(t, t.index("radical"), t.index("-wing"))   # "radical left" inside "radical left-wing"
    assert t[a:b] == "radical"


@pytest.mark.parametrize("text, shown", [
    ("The radical left Democrats voted no.", ["radical"]),          # a political side is the neutral head
    ("The mayor met illegal aliens at the shelter.", ["illegal aliens"]),  # graded higher than its part: whole
    ("Their war on women continued.", ["war on women"]),            # a function word inside: a slogan, whole
    ("A white supremacist rally was cancelled.", ["supremacist"]),  # a classifier before an ideology noun
    ("Hindu nationalists marched in the city.", ["nationalists"]),
])
def test_compounds_show_their_loaded_constituent(text, shown):
    cfg = Config()
    cues = analyse_cues(text, lexicon_for(cfg), cfg)
    assert [m.text for m in cues.lex] == shown
    # the entry and its band stay the phrase's: only the span shown narrows
    assert [m.band for m in cues.lex] == [m.band for m in lexicon_for(cfg).match(text)]


@pytest.mark.parametrize("word", ["merely", "once again", "always", "all of them", "massive", "utter"])
def test_focusing_frequency_and_degree_words_and_quantifiers_are_adverbial(word):
    assert adverbial(word)
    assert not adverbial("slammed") and not adverbial("radical")


def test_epistemic_frames_and_absolutes_are_secondary():
    rep, _ = _report(BiasAgent, "Critics say the regime slammed the plan.")
    assert [s.text for s in rep.spans] == ["regime", "slammed"]       # not "Critics say"
    rep, _ = _report(BiasAgent, "Everyone knows the mayor slammed the plan.")
    assert [s.text for s in rep.spans] == ["slammed"]                 # not "Everyone knows"


def test_a_vague_source_cue_is_an_evidential_frame_like_the_lexicons():
    # the cue finds the frames the lexicon's vague attributions are ("critics say"): secondary as they are
    rep, cues = _report(FramingAgent, "Skeptics worried that the so-called reform would fail.")
    assert any(c == "vague_source" for c, _, _ in cues.cues)
    assert [s.text for s in rep.spans] == ["so-called"]               # not "Skeptics worried"
    alone, _ = _report(FramingAgent, "Opponents warned the plan would fail.")
    assert [s.text for s in alone.spans] == ["Opponents warned"] and alone.verdict == "biased"


def test_stance_phrase_is_whole(lex):
    assert [m.text for m in lex.match("The truth is that the plan failed.")] == ["The truth is"]


def test_a_mentioned_expression_is_not_the_writers_use():
    rep, cues = _report(BiasAgent, 'He slammed the phrase "radical agenda" in his speech.')
    assert cues.quotes[0].name
    assert [s.text for s in rep.spans] == ["slammed"]


def test_each_agents_evidence_is_its_own_a_scare_quote_stays_beside_another_agents_loaded_word():
    """Secondary spans give way only within one report: the framing agent keeps its scare quote even
    where the bias agent cites the loaded words "Radical activists" (agents stay independent; its score is its own)."""
    text = 'Radical activists held their "peaceful" march on Sunday.'
    cfg = Config()
    cues = analyse_cues(text, lexicon_for(cfg), cfg)
    assert [s.text for s in drive(BiasAgent(cfg).report(text, cues)).spans] == ["Radical activists"]
    framing = drive(FramingAgent(cfg).report(text, cues))
    assert [s.text for s in framing.spans] == ['"peaceful"'] and framing.verdict == "biased"
    rep, _ = _report(FramingAgent, 'The company held its "review" after a week.')
    assert [s.text for s in rep.spans] == ['"review"'] and rep.verdict == "biased"


def test_cue_spans_have_the_same_boundaries_as_lexicon_hits():
    cfg = Config()
    cues = analyse_cues("Protesters were tear-gassed on Monday.", lexicon_for(cfg), cfg)
    assert [(c, cues.text[a:b]) for c, a, b in cues.cues] == [("passive_agency", "tear-gassed")]


def test_a_verb_of_attack_used_as_a_noun_names_an_event():
    rep, _ = _report(BiasAgent, "The attack killed two guards as the senator slammed the plan.")
    assert [s.text for s in rep.spans] == ["slammed"]
    rep, _ = _report(BiasAgent, "The senator attacked the plan on Monday.")
    assert [s.text for s in rep.spans] == ["attacked"]


# -- the decision's evidence (issue 23): primary over secondary across the agents ------------------------------

def test_a_decision_citing_a_loaded_word_does_not_also_cite_a_scare_quote_or_a_stance_adverb():
    """The framing agent's own evidence is the scare quote and the stance adverb "obviously" (its report and
    score are untouched); the decision pools the biased agents' spans and shows the primary ones: the loaded
    verb of speech "slammed". The verifier examines the same evidence."""
    from mabpd_kit.evaluate.spans import decision_spans
    from mabpd_kit.mabpd import Pipeline

    text = 'The senator slammed the "reform", which is obviously a disaster.'
    d = Pipeline().analyze(text)
    framing = d.reports["framing"]
    assert d.label == "biased" and framing.verdict == "biased"
    assert [s.text for s in framing.spans] == ['"reform"', "obviously"]
    cfg = Config()
    alone = drive(FramingAgent(cfg).report(text, analyse_cues(text, lexicon_for(cfg), cfg)))
    assert framing.score == alone.score and [s.text for s in alone.spans] == ['"reform"', "obviously"]
    assert set(decision_spans(d)) == {"slammed"}
    assert d.verifier.span.text == "slammed" and d.verifier.label == "biased"


def test_a_decision_resting_on_secondary_evidence_only_keeps_it():
    from mabpd_kit.evaluate.spans import decision_spans
    from mabpd_kit.mabpd import Pipeline

    d = Pipeline().analyze('The company held its "review" after a week.')
    assert d.label == "biased" and set(decision_spans(d)) == {'"review"'}


def test_a_decision_cites_the_writers_words_not_a_sources_quoted_ones():
    """The bias agent's only loaded words are inside a quotation attributed to the senator, so its report keeps
    them with the writer's "Clearly" (all it has); the evidence agent records the quotation as a source's words.
    The decision's evidence is the writer's own word; the verifier upholds on it."""
    from mabpd_kit.evaluate.spans import decision_spans
    from mabpd_kit.mabpd import Pipeline

    d = Pipeline().analyze('Clearly, the senator said the bill was "a disgraceful sham."')
    assert [s.text for s in d.reports["bias"].spans] == ["Clearly", "disgraceful", "sham"]
    assert '"a disgraceful sham."' in [g.text for g in d.reports["evidence"].counter_spans]
    assert d.label == "biased" and set(decision_spans(d)) == {"Clearly"}
    assert d.verifier.check == "upheld" and d.verifier.span.text == "Clearly"


def test_a_decision_cites_the_writers_words_not_the_words_inside_scare_quotes():
    """A loaded word inside quotation marks is not the writer's use of it: the writer distances itself from
    it (a scare quote, whose writer's part is the marks) or mentions it. Beside the writer's own loaded word
    it gives way; alone, the decision cites the scare quote, marks and all (the framing agent's evidence)."""
    from mabpd_kit.evaluate.spans import decision_spans
    from mabpd_kit.mabpd import Pipeline

    d = Pipeline().analyze('The mayor slammed the "radical" plan on Tuesday.')
    assert [s.text for s in d.reports["bias"].spans] == ["slammed", "radical"]  # the agents' reports stay
    assert d.label == "biased" and set(decision_spans(d)) == {"slammed"}
    d = Pipeline().analyze("The mayor slammed the 'cancel culture' crowd at the meeting.")
    assert d.label == "biased" and set(decision_spans(d)) == {"slammed"}
    d = Pipeline().analyze('The council voted for the "radical" plan on Tuesday.')
    assert d.label == "biased" and set(decision_spans(d)) == {'"radical"'}
    assert d.verifier.check == "upheld"



@pytest.mark.parametrize("text, own", [
    ('The city paid a massive fee for the "consultants" last year.', "massive"),   # a degree word of the writer's
    ('Apparently the "consultants" were paid last year.', "Apparently"),          # an evidential hedge
])
def test_a_scare_quote_gives_way_to_the_writers_own_secondary_words(text, own):
    """A scare quote's words are the ones the writer distances itself from (the writer's part is the marks):
    beside the writer's own words, even a hedge or a degree word, the decision cites those. The framing agent
    still cites its scare quote, and the label and the verifier's check do not change."""
    from mabpd_kit.evaluate.spans import decision_spans
    from mabpd_kit.mabpd import Pipeline

    d = Pipeline().analyze(text)
    assert [s.text for s in d.reports["framing"].spans] == ['"consultants"']
    assert d.label == "biased" and set(decision_spans(d)) == {own} and d.verifier.check == "upheld"

def test_decision_evidence_keeps_invalid_spans_and_pools_over_the_biased_agents_only():
    from types import SimpleNamespace as NS

    from mabpd_kit.mabpd.evidence import decision_evidence
    from mabpd_kit.types import Span

    def rep(verdict, *spans, counter=()):
        return NS(verdict=verdict, spans=list(spans), counter_spans=list(counter))

    loaded = Span(text="mob", start=4, end=7, category="pejorative_labels", agent="bias", score=0.8,
                  reason="lexicon: 'mob'")
    hedge = Span(text="reportedly", start=8, end=18, category="hedging", agent="evidence", score=0.4)
    made_up = Span(text="thugs", agent="bias", valid=False, reason="not found")
    other = Span(text="clearly", start=0, end=7, agent="framing", score=0.5)
    reports = {"bias": rep("biased", loaded, made_up), "evidence": rep("biased", hedge),
               "framing": rep("neutral", other)}
    assert decision_evidence(NS(reports=reports, debate=None)) == [loaded, made_up]
    # a hedge is the evidence when it is all the biased agents have; a neutral agent's spans never are
    alone = {"evidence": rep("biased", hedge), "framing": rep("neutral", loaded)}
    assert decision_evidence(NS(reports=alone, debate=None)) == [hedge]
    # a loaded word inside a quotation the trace records as attributed gives way to the writer's hedge ...
    quote = Span(text='"the mob"', start=0, end=9, category="grounding", agent="evidence", reason="grounding: "
                 "attributed quotation", note="attributed quotation")
    quoted = {"bias": rep("biased", loaded), "evidence": rep("biased", hedge, counter=(quote,))}
    assert decision_evidence(NS(reports=quoted, debate=None)) == [hedge]
    # ... and is the evidence when it is all there is (the verifier then judges the quotation)
    only = {"bias": rep("biased", loaded), "evidence": rep("neutral", counter=(quote,))}
    assert decision_evidence(NS(reports=only, debate=None)) == [loaded]


@pytest.mark.parametrize("text", [
    "The senator slammed the plan after a fierce attack killed two guards.",   # across an adjective
    "The senator slammed the plan a day after the 2019 attack.",               # across a number
    "Two guards died in the Riverside attack, and the senator slammed the plan.",  # across a name
    "The senator slammed the plan after a string of deadly attacks.",          # after a preposition; -ly adjective
])
def test_a_noun_of_attack_is_a_noun_across_its_modifiers(text):
    rep, _ = _report(BiasAgent, text)
    assert [s.text for s in rep.spans] == ["slammed"]


@pytest.mark.parametrize("text, verb", [
    ("The rebels attack the village at night, and the senator slammed the plan.", "attack"),  # plural subject
    ("The senator slammed the plan; the mayor attacks her rivals daily.", "attacks"),         # an object follows
    ("The Mayor's Aide Slams Plan", "Slams"),                            # a name before a form in -s: its subject
])
def test_a_verb_of_attack_stays_a_verb(text, verb):
    rep, _ = _report(BiasAgent, text)
    assert verb in [s.text for s in rep.spans]


def test_a_decision_citing_a_loaded_word_does_not_also_cite_a_device_of_selective_presentation():
    """"Left unsaid" marks what the sentence leaves out (selective emphasis, taxonomy ``selection``): a claim
    about the sentence, not the writer's loaded word. Beside "slammed" it gives way in the decision's evidence
    (the agents still cite it); alone, it is the evidence and the verifier upholds on it."""
    from mabpd_kit.evaluate.spans import decision_spans
    from mabpd_kit.mabpd import Pipeline
    from mabpd_kit.mabpd.spans import structural

    d = Pipeline().analyze("Left unsaid is that the mayor slammed the plan on Tuesday.")
    assert [s.text for s in d.reports["bias"].spans] == ["Left unsaid", "slammed"]
    assert structural(d.reports["bias"].spans[0]) and not structural(d.reports["bias"].spans[1])
    assert d.label == "biased" and set(decision_spans(d)) == {"slammed"}
    d = Pipeline().analyze("Left unsaid is that the mayor changed the plan on Tuesday.")
    assert d.label == "biased" and set(decision_spans(d)) == {"Left unsaid"}
    assert d.verifier.check == "upheld"


def test_a_quote_in_another_case_takes_the_articles_letters():
    # SmolLM2-135M-Instruct on llama-cpp-python quoted "the" for an article that begins "The"
    from mabpd_kit.mabpd.cues import ground_span
    from mabpd_kit.mabpd.schemas import Span

    text = "The mayor rammed the plan through."
    g = ground_span(Span(text="the mayor rammed", category="biased"), text, 0.9)
    assert g.valid and text[g.start:g.end] == g.text == "The mayor rammed"


@pytest.mark.parametrize("text, name, word", [
    ("Voters in the Jim Crow South were turned away, and the mayor slammed the plan.", "Crow", "slammed"),
    ("The senator, a Democratic Socialist, slammed the plan on Tuesday.", "Socialist", "slammed"),
])
def test_a_word_of_a_proper_name_gives_way_to_the_writers_own_words(text, name, word):
    """A name refers; its words do not describe (issue 23): a lexicon word after another capitalised word in
    running text is part of a name, and the decision cites the writer's own word beside it (the agents still
    cite both)."""
    from mabpd_kit.evaluate.spans import decision_spans
    from mabpd_kit.mabpd import Pipeline

    d = Pipeline().analyze(text)
    assert [s.text for s in d.reports["bias"].spans] == [name, word]
    assert d.label == "biased" and set(decision_spans(d)) == {word}


@pytest.mark.parametrize("text, word", [
    ("Mayor Slams Radical Plan For Downtown", "Radical"),                 # a headline: capitals tell nothing
    ("The mayor slammed the Marxist Antonio Gramsci on Tuesday.", "Marxist"),  # a modifier before a name
    ("The pundit slammed the Never Trumpers on Tuesday.", "Never Trumpers"),   # the entry is the loaded name
])
def test_capitalised_words_that_are_not_part_of_a_name_stay(text, word):
    from mabpd_kit.evaluate.spans import decision_spans
    from mabpd_kit.mabpd import Pipeline

    d = Pipeline().analyze(text)
    assert d.label == "biased" and word in decision_spans(d)


@pytest.mark.parametrize("word", ["utterly", "fully", "perfectly", "altogether", "quite"])
def test_every_maximizer_is_a_degree_adverbial(word):
    """Maximizers (amplifiers, Quirk et al. 1985, ch. 8) scale the word next to them, like "completely" and "totally"."""
    assert adverbial(word)


def test_a_maximizer_gives_way_to_the_word_it_scales():
    rep, _ = _report(BiasAgent, "The plan was utterly idiotic, the mayor wrote.")
    assert [s.text for s in rep.spans] == ["idiotic"]
    rep, _ = _report(BiasAgent, "The mayor found the plan utterly confusing.")  # alone, it is the evidence
    assert [s.text for s in rep.spans] == ["utterly"] and rep.verdict == "biased"
