"""Span precision for linguistic reasons (issue 23): one test per class, each on sentences written for
the test from linguistic knowledge (none is a benchmark sentence).

Classes: span boundaries, multi-word cues (neutral head nouns), protected domain terms, quotation
(names, titles, mentions), attribution (naming verbs, partial quotations, ascribed labels), negation,
hedges and boosters (stance adverbials), and scare quotes as secondary evidence.
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
    assert word in [m.text for m in lex.match(text)]


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
