"""Span boundaries: a lexicon hit narrowed to its loaded words, and what a span must be to count as evidence.

:func:`trim`: leading determiners, pronouns and auxiliaries go; trailing ones, conjunctions and prepositions go
("attack on" -> "attack") but not phrasal-verb particles ("lash out"); a trailing neutral head goes after a
modifier ("mainstream media" -> "mainstream"); function words alone are no hit; a hit is made of whole words
(a compound part grows to the compound; a compound whose other part denies the stem, "non-partisan", is no
hit). The word lists are closed classes of English grammar, not taken from any annotated corpus.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["ADVERBIALS", "ADVERBIAL_PHRASES", "AMPLIFIERS", "AUXILIARIES", "CLASSIFIERS", "DENYING_PARTS",
           "DETERMINERS", "FUNCTION_WORDS", "NEUTRAL_HEADS", "NOT_CONTENT", "PARTICLES", "POLITICAL_SIDES",
           "PREPOSITIONS", "PRONOUNS", "QUANTIFIERS", "adverbial", "content_tokens", "evidence_problem", "loaded_part",
           "mixed_script", "negated", "trim"]

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

#: stance, degree, focusing and frequency adverbials: they qualify a clause instead of naming anything, so
#: they are secondary evidence (Biber et al. 1999, ch. 10; Quirk et al. 1985, ch. 8)
ADVERBIALS = frozenset("""
reportedly allegedly apparently purportedly supposedly ostensibly seemingly evidently presumably arguably
obviously clearly undeniably unquestionably undoubtedly indisputably indeed actually admittedly frankly honestly
certainly definitely surely completely totally entirely wholly absolutely extremely incredibly deeply profoundly
hugely vastly immensely enormously tremendously exceedingly terribly awfully thoroughly very
utterly fully perfectly altogether quite
merely simply just only even again still already always never forever constantly endlessly perpetually
invariably repeatedly continually
""".split())
#: amplifying adjectives ("a massive fortune", "utter chaos"; Quirk et al. 1985, 7.33-7.38): degree words
AMPLIFIERS = frozenset("massive huge enormous immense vast tremendous complete total utter sheer absolute outright downright".split())
#: universal and negative quantifiers ("all", "every", "none"): how much, not what; secondary like degree words
QUANTIFIERS = frozenset("all every each entire whole none nothing nobody everyone everybody everything".split())
#: the multi-word stance adverbials (boosters), longest first
ADVERBIAL_PHRASES = tuple(sorted("""of course|in fact|in reality|the truth is|the reality is|the fact is|to be sure|
simply put|for sure|without question|no question|without a doubt|no doubt|needless to say|it goes without saying|
once again|yet again|time and again|again and again|over and over|as usual|as always|time after time|not once|never once
""".replace("\n", "").split("|"), key=len, reverse=True))

#: function words that may stand around an adverbial or a quantifier ("all of them", "has always been")
_SCAFFOLD = DETERMINERS | PRONOUNS | AUXILIARIES | PREPOSITIONS | CONJUNCTIONS
_PHRASES = frozenset(ADVERBIAL_PHRASES)
_LEAD = DETERMINERS | PRONOUNS | AUXILIARIES
_TRAIL = DETERMINERS | PRONOUNS | AUXILIARIES | CONJUNCTIONS | PREPOSITIONS
_TOKEN = re.compile(r"\w+(?:['\u2019-]\w+)*")


def _key(token: str) -> str:
    return token.lower().replace("\u2019", "'")


def content_tokens(text: str) -> list[str]:
    """The lower-cased tokens of ``text`` that are not function words."""
    return [k for k in (_key(t) for t in _TOKEN.findall(text)) if k not in FUNCTION_WORDS]


@lru_cache(maxsize=4096)  # a pure function of a span's text, asked of the same spans by each agent and the decision
def adverbial(text: str) -> bool:
    """Is ``text`` only an adverbial or a quantifier ("clearly", "in fact", "all"), function words aside?"""
    low = " " + " ".join(_key(t) for t in _TOKEN.findall(text)) + " "
    for p in ADVERBIAL_PHRASES:
        low = low.replace(f" {p} ", " ")
    words = [w for w in low.split() if w not in _SCAFFOLD]
    return not words or all(w in ADVERBIALS or w in QUANTIFIERS or w in AMPLIFIERS for w in words)


#: a negator right before a word, across an article or a degree word ("is not a racist", "no crisis", "isn't
#: so radical"); "not only" / "not just" (additive focus) and "if not" ("bad, if not ruinous") affirm instead
_NEGATED_RE = re.compile(r"(?<!\bif )(?:\b(?:not|no|never|nor|without)|n't)(?:\s+(?:a|an|the|so|very|really|even|that|too|being|be))*\s*$", re.IGNORECASE)


def negated(text: str, start: int) -> bool:
    """Is the word at ``text[start]`` in the scope of a negator that denies it ("is not a racist")?"""
    return bool(_NEGATED_RE.search(text[max(0, start - 40):start].replace("\u2019", "'")))


def trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``text[start:end]`` narrowed to its loaded words (module doc), None when it has none."""
    cut = _narrowed(text[start:end])
    if cut is None:
        return None
    if not cut:
        return start, end  # a stance phrase is whole: "the truth is", "the fact is" (its words are its form)
    a, b, phrase = cut
    return _whole_words(text, start + a, start + b, phrase)


@lru_cache(maxsize=4096)  # a pure function of the span's text; the same hits recur from sentence to sentence
def _narrowed(span: str) -> tuple[int, int, bool] | tuple[()] | None:
    """:func:`trim` on ``span`` alone: None, ``()`` (a stance phrase, kept whole) or ``(start, end, several)``."""
    toks = [(m.start(), m.end(), _key(m.group())) for m in _TOKEN.finditer(span)]
    if not toks or all(k in FUNCTION_WORDS for _, _, k in toks):
        return None
    if " ".join(k for _, _, k in toks) in _PHRASES:
        return ()
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
    return toks[i][0], toks[j - 1][1], j - i > 1


#: the parts of a hyphenated compound that negate or oppose its other part: "non-partisan", "anti-fascist",
#: "un-American" (prefixes), "scandal-free" (a privative second part)
DENYING_PARTS = frozenset("non un anti free".split())
_PART = re.compile(r"\w+")


def _whole_words(text: str, a: int, b: int, phrase: bool) -> tuple[int, int] | None:
    """``text[a:b]`` made of whole words (a compound part grows to the compound or, at a phrase's edge, goes)."""
    wa, wb = a, b
    while wa > 1 and text[wa - 1] == "-" and text[wa - 2].isalnum():
        wa -= 1
        while wa > 0 and (text[wa - 1].isalnum() or text[wa - 1] == "_"):
            wa -= 1
    while wb < len(text) - 1 and text[wb] == "-" and text[wb + 1].isalnum():
        wb = _PART.match(text, wb + 1).end()
    if (wa, wb) == (a, b):
        return a, b
    if DENYING_PARTS.intersection(w.lower() for w in _PART.findall(text[wa:a] + " " + text[b:wb])):
        return None
    if not phrase:
        return wa, wb
    # a phrase's edge word that is only part of a compound ("radical left" in "radical left-wing") goes
    inner = [(m.start() + a, m.end() + a) for m in re.finditer(r"\S+", text[a:b])]
    if wb != b:
        inner = inner[:-1]
    if wa != a:
        inner = inner[1:]
    if not inner or all(_key(t) in FUNCTION_WORDS for s, e in inner for t in _TOKEN.findall(text[s:e])):
        return None
    return inner[0][0], inner[-1][1]


#: political sides ("radical left"): like :data:`NEUTRAL_HEADS`, what a modifier labels
POLITICAL_SIDES = frozenset("left right".split())
#: words a loaded constituent never leaves behind alone (a compound with one is fixed: "Never Trumpers", "far left")
_KEEP_WHOLE = frozenset("not no never non far hard ultra extreme".split()) | ADVERBIALS
_NOT_A_CONSTITUENT = FUNCTION_WORDS | _KEEP_WHOLE


#: classifiers of an "-ist" ideology noun ("white supremacist"): a neutral group; the noun carries the evaluation
CLASSIFIERS = frozenset("white black brown christian catholic evangelical hindu jewish muslim islamic buddhist sikh".split())


def _ideology_head(text: str, words: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The "-ist" head of a classifier + ideology-noun compound ("white supremacist" -> "supremacist")."""
    if len(words) == 2 and _key(text[slice(*words[0])]) in CLASSIFIERS:
        head = _key(text[slice(*words[1])])
        if head.endswith(("ist", "ists")) or "-" in head and head.rsplit("-", 1)[1].endswith(("ist", "ists")):
            return words[1]
    return None


def loaded_part(lexicon: Any, text: str, m: Any) -> Any:
    """A compound of content words narrowed to its one loaded constituent (an entry graded alone at least as high
    as the compound, or beside a political side: "radical left" -> "radical"), else ``m``; entry and band stay."""
    words = [(w.start() + m.start, w.end() + m.start) for w in _TOKEN.finditer(text[m.start:m.end])]
    if len(words) < 2 or any(_key(text[a:b]) in _NOT_A_CONSTITUENT for a, b in words):
        return m
    if (head := _ideology_head(text, words)) is not None:
        return type(m)(*head, text[slice(*head)], m.term, m.category, m.taxonomy, m.meta_category, m.band, m.note)
    floor = lexicon.config.lexicon.confidence_floor
    found = set()
    for i in range(len(words)):  # every entry inside the compound (a prefix of it, or starting at word i)
        lo, hi = words[i][0], (words[-1][1] if i else words[-2][1])
        found |= {(h.start + lo, h.end + lo, h.band) for h in lexicon.occurrences(text[lo:hi]) if h.band > floor}
    found.discard((m.start, m.end, m.band))
    if len({(a, b) for a, b, _ in found}) != 1:
        return m
    a, b, band = found.pop()
    rest = [_key(t) for t in _TOKEN.findall(text[m.start:a] + " " + text[b:m.end])]
    if lexicon.occurrences(" ".join(rest)) or not (band >= m.band or all(r in POLITICAL_SIDES for r in rest)):
        return m
    return type(m)(a, b, text[a:b], m.term, m.category, m.taxonomy, m.meta_category, m.band, m.note)


#: words that are no evidence alone: function words, wh-words, subordinators, prepositions, figures
NOT_CONTENT = FUNCTION_WORDS | frozenset("""which who whom whose what when where why how if because while although though
whether than that there here during before after under between among within without across behind beyond near since
until unless like onto inside outside throughout despite except along amid beside besides below above whose whom
one two three four five six seven eight nine ten hundred thousand million billion trillion percent per cent""".split())
_LETTER = re.compile(r"[^\W\d_]")
#: scripts of letters that look alike (Latin, Greek, Cyrillic): a word mixing them is forged, not written
_SCRIPT_RANGES = (("greek", 0x0370, 0x03FF), ("cyrillic", 0x0400, 0x052F))


def _script(ch: str) -> str:
    o = ord(ch)
    return next((name for name, lo, hi in _SCRIPT_RANGES if lo <= o <= hi), "latin" if ch.isalpha() else "")


def mixed_script(word: str) -> bool:
    """Does a word mix Latin letters with Greek or Cyrillic ones ("lаbel" with a Cyrillic "а")?"""
    return not word.isascii() and len({s for s in map(_script, word) if s}) > 1


def evidence_problem(text: str, start: int | None, end: int | None, *, max_share: float,
                     lexical: bool = False) -> str | None:
    """Why ``text[start:end]`` cannot be evidence of bias, None when it can (the one rule for every span): whole
    words, a content word, no mixed scripts, not only a name (unless ``lexical``), not most of its sentence."""
    if start is None or end is None or not 0 <= start < end <= len(text):
        return "not located in the text"
    said = text[start:end]
    if (start > 0 and text[start - 1].isalnum() and said[0].isalnum()) or (
            end < len(text) and text[end].isalnum() and said[-1].isalnum()):
        return f"{said!r} is part of a word: evidence is whole words"
    toks = _TOKEN.findall(said)
    content = [t for t in toks if len(t) > 1 and _LETTER.search(t) and _key(t) not in NOT_CONTENT]
    if not content:
        return f"{said!r} has no content word (punctuation, a letter, function words or figures only)"
    if not said.isascii() and any(mixed_script(t) for t in toks):
        return f"{said!r} mixes the letters of two scripts: not the writer's words"
    quoted = said[0] in "\"'\u2018\u201c" and said[-1] in "\"'\u2019\u201d"  # a scare quote: the marks are the device
    if not lexical and not quoted and all(t[0].isupper() for t in content) and _inside_prose(text, start, len(content)):
        return f"{said!r} is a name: it refers, it does not evaluate"
    if len(toks) >= 3 and (sent := _sentence_words(text, start, end)) and len(toks) >= max_share * sent:
        return f"{said!r} is (nearly) its whole sentence: that is the claim, not the evidence for it"
    return None


def _inside_prose(text: str, start: int, n_content: int) -> bool:
    """Are capitalised words at ``start`` a name (inside a sentence, or two at its start; not in title case)?"""
    before = text[:start].rstrip(" \"'([\u201c\u2018")
    at_start = not before or before[-1] in ".!?:\n"
    if at_start and n_content < 2:
        return False
    words = [t for t in _TOKEN.findall(text) if _LETTER.search(t[0]) and _key(t) not in FUNCTION_WORDS]
    return len(words) < 3 or sum(w[0].isupper() for w in words) < 0.8 * len(words)


def _sentence_words(text: str, start: int, end: int) -> int:
    from mabpd_kit.text import split_sentences  # the one sentence splitter (text sits below the lexicon)

    for a, b in split_sentences(text):
        if a <= start < b:
            return len(_TOKEN.findall(text[a:max(b, end)]))
    return len(_TOKEN.findall(text))
