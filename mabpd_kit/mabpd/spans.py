"""Span classes read off a span and its sentence alone (no lexicon, no agent): :func:`inside`,
:func:`noun_reading`, :func:`in_name`, :func:`structural`, :func:`scare_quote`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mabpd_kit.lexicon.boundaries import FUNCTION_WORDS

__all__ = ["NOUN_SLOT", "STRUCTURAL_TAXONOMIES", "in_name", "inside", "noun_reading", "scare_quote", "structural"]

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
    """Is ``text[start:end]`` (one word) the head of a noun phrase ("a fierce attack"), not a verb with an
    object ("the rebels attack the village") nor a gerund ("the smearing of")?"""
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
    """Does ``word`` end a noun phrase going back from its head (punctuation, a function word, an -ly adverb,
    a plural noun or, before an -s form, a capitalised word as its subject)?"""
    return (not word[0].isalnum() or low in FUNCTION_WORDS or (low.endswith("ly") and low not in _LY_ADJECTIVES)
            or (plural_or_verb and word[0].isupper())
            or (next_to_head and low.endswith("s") and not low.endswith("ss")))


def inside(start: int | None, end: int | None, regions: Sequence[tuple[int, int]], *, strict: bool = False) -> bool:
    """Is [start, end) inside one of ``regions`` (``strict``: not touching its ends)? No offsets: no."""
    if start is None or end is None:
        return False
    if strict:
        return any(a < start and end < b for a, b in regions)
    return any(a <= start and end <= b for a, b in regions)


def scare_quote(span: Any) -> bool:
    """Is a span a scare quote (the cue's span, marks and all), whose words the writer distances itself from?"""
    return getattr(span, "category", None) == "scare_quotes" and (getattr(span, "reason", None) or "").startswith("cue")


def structural(span: Any) -> bool:
    """Is a span a device of selective presentation (:data:`STRUCTURAL_TAXONOMIES`), not a loaded word?"""
    return getattr(span, "taxonomy", None) in STRUCTURAL_TAXONOMIES


#: minor words a title or a headline leaves in lower case (besides which its words are capitalised)
_MINOR = frozenset("a an the of and or but nor for in on at to by with from as vs is are".split())
_LEXICON_TERM = re.compile(r"lexicon: (['\"])(.*?)\1 \(")


def in_name(text: str, span: Any) -> bool:
    """Is a lexicon word an inner or last word of a multi-word proper name in running text ("Jim Crow")?
    A lexicon entry spanning the capitalised words is the loaded name itself ("Deep State"), not a name."""
    start, end = getattr(span, "start", None), getattr(span, "end", None)
    if start is None or end is None or not text[start:end][:1].isupper():  # most loaded words: lower case
        return False
    m = _LEXICON_TERM.match(getattr(span, "reason", None) or "")
    if m is None:
        return False
    before = _WORD_RE.findall(text[:start])
    if len(before) < 2 or before[-2][0] in ".!?:;\"\u201c(" or _title_case(text):
        return False
    prev = before[-1].replace("\u2019", "'")
    return prev[0].isupper() and not prev.endswith("'s") and prev.lower() not in m.group(2).split()


def _title_case(text: str) -> bool:
    """Is ``text`` written in title case (most of its major words capitalised: a headline)?"""
    major = [w for w in _WORD_RE.findall(text) if w[0].isalpha() and w.lower() not in _MINOR]
    return len(major) >= 3 and sum(w[0].isupper() for w in major) >= 0.6 * len(major)
