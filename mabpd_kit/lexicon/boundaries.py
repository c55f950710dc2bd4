"""Span boundaries: a lexicon hit is narrowed to its loaded words.

A term is written as the phrase in which a word is loaded ("attack on", "has never been",
"mainstream media"), but what a reader should see highlighted is the loaded part, not the function
words or the neutral head noun around it. :func:`trim` narrows a hit, token by token (a token is a
run of letters or digits with inner hyphens or apostrophes, so ``would-be`` and ``so-called`` are one
token each):

- **leading** determiners, pronouns and auxiliaries go ("the establishment" -> "establishment",
  "has never been" -> "never been"); leading prepositions stay, as they open idioms ("of course",
  "in fact", "under fire");
- **trailing** determiners, pronouns, auxiliaries, conjunctions and prepositions go ("attack on" ->
  "attack", "never been" -> "never", "none of them" -> "none"), but not the particles of phrasal
  verbs ("lash out", "wipe out", "tear into" keep theirs: the particle is part of the verb's meaning);
- a trailing **neutral head noun** goes when a modifier is left to carry the meaning: "mainstream
  media" -> "mainstream", "Democrat Party" -> "Democrat" (media, people, party, country ... are the
  neutral nouns being labelled, not the label);
- a hit made of function words only is no loaded word at all and is dropped (None): the modal
  "would be" is not the adjective "would-be", which is one token.

The word lists are written from English grammar, closed classes, not from any annotated corpus.

>>> text = "They launched an attack on the plan."
>>> a, b = trim(text, 17, 26)
>>> text[a:b]
'attack'
>>> trim("It would be allowed.", 3, 11) is None
True
>>> trim("the would-be dictator", 4, 12)
(4, 12)
"""

from __future__ import annotations

import re

__all__ = ["ADVERBIALS", "ADVERBIAL_PHRASES", "AUXILIARIES", "DETERMINERS", "FUNCTION_WORDS", "NEUTRAL_HEADS", "PARTICLES", "PREPOSITIONS",
           "PRONOUNS", "adverbial", "content_tokens", "negated", "trim"]

#: articles, demonstratives and possessive determiners
DETERMINERS = frozenset("a an the this that these those my your his her its our their".split())
#: personal and object pronouns (not wh-words: "what they call" keeps its "what")
PRONOUNS = frozenset("i me you he him she it we us they them itself themselves himself herself".split())
#: the auxiliary and modal verbs, every form (also copular "be")
AUXILIARIES = frozenset("""be is are was were been being am 's 're has have had having do does did
would will shall should could can may might must 'd 'll""".split())
#: conjunctions that can close a phrase ("nothing but", "and")
CONJUNCTIONS = frozenset("and or but nor yet".split())
#: prepositions that close a noun or verb phrase without being part of its meaning ("attack on")
PREPOSITIONS = frozenset("of on at about to for with against from by than as via toward towards upon onto".split())
#: particles of phrasal verbs: kept at the end of a span ("lash out", "rip into", "shut down")
PARTICLES = frozenset("out up down off over into in through away back around".split())
#: every function word the boundaries know (a hit made only of these is dropped)
FUNCTION_WORDS = DETERMINERS | PRONOUNS | AUXILIARIES | CONJUNCTIONS | PREPOSITIONS | PARTICLES | frozenset(
    "not no so very just too also then there here".split())
#: neutral nouns naming the group or institution a modifier labels ("mainstream media", "Democrat Party")
NEUTRAL_HEADS = frozenset("""media press outlet outlets news people person persons americans citizens voters public
party parties country nation nations government""".split())

#: stance and degree adverbials: epistemic hedges ("reportedly", "apparently"), boosters ("of course",
#: "clearly", "in fact", "certainly") and general degree adverbs ("completely", "deeply"). They qualify a
#: whole clause or a word next to them instead of naming anything, so they are secondary evidence of bias
#: (:func:`adverbial`); written from the grammar of English stance adverbials (Biber et al. 1999, ch. 10).
ADVERBIALS = frozenset("""
reportedly allegedly apparently purportedly supposedly ostensibly seemingly evidently presumably arguably
obviously clearly undeniably unquestionably undoubtedly indisputably indeed actually admittedly frankly honestly
certainly definitely surely completely totally entirely wholly absolutely extremely incredibly deeply profoundly
hugely vastly immensely enormously tremendously exceedingly terribly awfully thoroughly very
""".split())
#: the multi-word stance adverbials (boosters), longest first
ADVERBIAL_PHRASES = tuple(sorted("""of course|in fact|in reality|the truth is|the reality is|the fact is|to be sure|
simply put|for sure|without question|no question|without a doubt|no doubt|needless to say|it goes without saying
""".replace("\n", "").split("|"), key=len, reverse=True))

_LEAD = DETERMINERS | PRONOUNS | AUXILIARIES
_TRAIL = DETERMINERS | PRONOUNS | AUXILIARIES | CONJUNCTIONS | PREPOSITIONS
_TOKEN = re.compile(r"\w+(?:['\u2019-]\w+)*")


def _key(token: str) -> str:
    return token.lower().replace("\u2019", "'")


def content_tokens(text: str) -> list[str]:
    """The lower-cased tokens of ``text`` that are not function words."""
    return [k for k in (_key(t) for t in _TOKEN.findall(text)) if k not in FUNCTION_WORDS]


def adverbial(text: str) -> bool:
    """Is ``text`` only a stance or degree adverbial (:data:`ADVERBIALS`), e.g. "clearly", "in fact",
    "reportedly", "completely"? Such a span qualifies the clause; the loaded word, if any, is elsewhere."""
    low = " " + " ".join(_key(t) for t in _TOKEN.findall(text)) + " "
    for p in ADVERBIAL_PHRASES:
        low = low.replace(f" {p} ", " ")
    words = low.split()
    return not words or all(w in ADVERBIALS for w in words)


#: a negator right before a word, across an article or a degree word ("is not a racist", "no crisis", "isn't
#: so radical"); "not only" / "not just" (additive focus) and "if not" ("bad, if not ruinous") affirm instead
_NEGATED_RE = re.compile(r"(?<!\bif )(?:\b(?:not|no|never|nor|without)|n't)(?:\s+(?:a|an|the|so|very|really|even|that|too|being|be))*\s*$",
                         re.IGNORECASE)


def negated(text: str, start: int) -> bool:
    """Is the word at ``text[start]`` in the scope of a negator that denies it ("is not a racist",
    "there is no crisis")? The writer then rejects the label rather than applying it.

    >>> negated("He is not a racist.", 12), negated("not only racist", 9), negated("bad, if not ruinous", 12)
    (True, False, False)
    """
    return bool(_NEGATED_RE.search(text[max(0, start - 40):start].replace("\u2019", "'")))


def trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``text[start:end]`` narrowed to its loaded words (module doc), or None when it has none."""
    toks = [(m.start() + start, m.end() + start, _key(m.group())) for m in _TOKEN.finditer(text[start:end])]
    if not toks or all(k in FUNCTION_WORDS for _, _, k in toks):
        return None
    i, j = 0, len(toks)
    while i < j and toks[i][2] in _LEAD:
        i += 1
    while j > i and toks[j - 1][2] in _TRAIL:
        j -= 1
    if j - i >= 2 and toks[j - 1][2] in NEUTRAL_HEADS and any(k not in FUNCTION_WORDS for _, _, k in toks[i:j - 1]):
        j -= 1
        while j > i and toks[j - 1][2] in _TRAIL:
            j -= 1
    if i >= j:
        return None
    return toks[i][0], toks[j - 1][1]
