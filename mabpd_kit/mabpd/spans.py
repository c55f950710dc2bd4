"""Span classes read off a span and its sentence alone (no lexicon, no agent): shared by the agents'
narrowing of their reports (:mod:`.cues`) and the decision's evidence (:func:`.pipeline.decision_evidence`).

- :func:`noun_reading`: is a word the head of a noun phrase ("the savage attack", "a string of jihadist
  attacks", "Tapper's attack") rather than a verb ("the senator attacked the plan", "they attack the
  plan")? A verb of attack used as a noun names an event, in news most often literal violence; the
  metaphor of criticism is the verb (:meth:`.cues.Cues.nominal`).
- :func:`structural`: is a span a device of selective presentation (the taxonomies ``selection`` and
  ``omission``: one-sided sourcing, selective emphasis, agentless passives, vague attribution)? Such a
  span marks what a sentence foregrounds, leaves out or whom it sources ("left unsaid", "notably", "mistakes
  were made", a tag placing a source in a camp): evidence of a choice of what to tell, a claim about the
  sentence, rather than the writer's loaded word for what it tells; the evidence agent already treats these
  claims apart from word-level bias (:meth:`.agents.EvidenceAgent.accepts`).

The word classes are closed classes of English grammar (determiners, prepositions, pronouns, auxiliaries),
not lists from any annotated corpus.

>>> t = "Officials condemned the savage attack on the village."
>>> noun_reading(t, t.index("attack"), t.index("attack") + 6)
True
>>> t = "The rebels attack the village at night."
>>> noun_reading(t, t.index("attack"), t.index("attack") + 6)
False
"""

from __future__ import annotations

import re
from typing import Any

from mabpd_kit.lexicon.boundaries import FUNCTION_WORDS

__all__ = ["NOUN_SLOT", "STRUCTURAL_TAXONOMIES", "noun_reading", "structural"]

#: the words after which a word is a noun: determiners, possessive pronouns, quantifiers
NOUN_SLOT = frozenset("a an the this that these those my your his her its our their such any no some many several".split())
#: prepositions that open a noun phrase as their object ("under attack", "a string of attacks")
_OPENERS = NOUN_SLOT | frozenset("of in on at under for with from by into amid after before against behind during "
                                 "over following despite".split())
#: what follows a transitive verb, not a noun: the start of its object ("attack the plan", "attacks him")
_OBJECT_START = frozenset("a an the this these those my your his her its our their him them us me".split())
#: adjectives in -ly (Quirk et al. 1985, 7.2): inside a noun phrase like any adjective ("a deadly attack"), where
#: another word in -ly is an adverb, most often of the verb next to it ("regularly attack")
_LY_ADJECTIVES = frozenset("""deadly costly cowardly early elderly friendly unfriendly likely unlikely lonely lovely ugly
silly weekly daily monthly yearly nightly timely untimely orderly disorderly unruly lively kindly""".split())
_WORD_RE = re.compile(r"[A-Za-z0-9][\w'\u2019-]*|[^\w\s]")
#: taxonomies of selective presentation: claims about what a sentence includes or omits
STRUCTURAL_TAXONOMIES = frozenset({"selection", "omission"})


def noun_reading(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` (one word) used as a noun: the head of a noun phrase opened by a determiner,
    a possessive, a quantifier or a preposition, across its modifiers ("the attack", "a fierce attack",
    "the 2007 attack", "engaged in ruthless attacks"), and not followed by an object ("the rebels attack
    the village": a verb)? A gerund ("the smearing of") is not such a noun. Going back, the phrase ends at
    a word that cannot stand inside a noun phrase before its head (:func:`_outside_phrase`)."""
    if text[start:end].lower().endswith("ing"):
        return False
    after = _WORD_RE.findall(text[end:end + 20])[:1]
    if after and after[0].lower() in _OBJECT_START:
        return False
    plural_or_verb = text[start:end].lower().endswith("s")  # "attacks": a plural noun, or a verb after its subject
    for i, w in enumerate(reversed(_WORD_RE.findall(text[:start]))):
        low = w.lower().replace("\u2019", "'")
        if low in _OPENERS or low.endswith("'s"):
            return True
        if _outside_phrase(w, low, next_to_head=i == 0, plural_or_verb=plural_or_verb):
            return False
    return False


def _outside_phrase(word: str, low: str, *, next_to_head: bool, plural_or_verb: bool) -> bool:
    """Does ``word`` end a noun phrase, going back from its head: punctuation, a function word that is not an
    opener, an adverb in -ly (not an adjective: "a deadly attack"), a plural noun right before the head (its
    subject: "the Democrats attack"), or, before a form in -s, a capitalised word, which may be a name as its
    subject ("FNC's Carlson Slams ..."; a base form after a name is a noun: "the El Paso attack")?"""
    return (not word[0].isalnum() or low in FUNCTION_WORDS or (low.endswith("ly") and low not in _LY_ADJECTIVES)
            or (plural_or_verb and word[0].isupper())
            or (next_to_head and low.endswith("s") and not low.endswith("ss")))


def structural(span: Any) -> bool:
    """Is a span a device of selective presentation (:data:`STRUCTURAL_TAXONOMIES`), not a loaded word?"""
    return getattr(span, "taxonomy", None) in STRUCTURAL_TAXONOMIES
