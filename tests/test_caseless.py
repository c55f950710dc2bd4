"""Caseless: a case-insensitive regex run case-sensitively over an ASCII text's lower case finds the same spans."""

from __future__ import annotations

import re

import pytest

from mabpd_kit.caseless import Caseless
from mabpd_kit.lexicon import boundaries
from mabpd_kit.mabpd import cues, speech

TEXTS = [
    "CRITICS SAID the Plan was CLEARLY the Worst Ever, 45 Percent agree.",
    "Warren Described him as her 'friend' and Accused them Of lying.",
    "the so-called 'Reform', known As \"Medicare for All\"; Termed 'radical'.",
    "Straße: Ärzte SAGTEN es. İstanbul's So-Called plan, 3 MILLION people.",  # not ASCII: the folded pattern
    "He is NOT a Racist; there is No crisis, it Isn't So radical, if Not ruinous.", "", "K", "\u212a is a Kelvin sign; \u017f a long s.",
]
PATTERNS = [pat for pat, _ in cues._CUE_PATTERNS.values()] + [
    cues._NUMBER_RE, cues._NAMING_RE, cues._MENTION_RE, speech._DESCRIBE_RE, speech._ACCUSE_RE, boundaries._NEGATED_RE]


@pytest.mark.parametrize("text", TEXTS)
def test_same_spans_and_searches_as_ignorecase(text):
    for rx in PATTERNS:
        assert [m.span() for m in rx.finditer(text)] == [m.span() for m in rx.folded.finditer(text)]
        assert [m.span() for m in rx.finditer(text, text.lower())] == [m.span() for m in rx.folded.finditer(text)]
        for cut in (text[:30], text[-30:]):
            a, b = rx.search(cut), rx.folded.search(cut)
            assert (a and a.span()) == (b and b.span())


def test_the_pattern_must_be_written_in_lower_case():
    with pytest.raises(ValueError, match="lower case"):
        Caseless(r"\bSo-called\b")
    with pytest.raises(ValueError):
        Caseless(r"[A-Z]\w+")  # a range of capitals would not match the lower case
    rx = Caseless(r"\S+\b\W\d")  # escapes are not letters
    assert rx.plain.flags & re.IGNORECASE == 0 and rx.folded.flags & re.IGNORECASE


def test_groups_over_an_ascii_text_hold_its_lower_case():
    m = next(speech._DESCRIBE_RE.finditer("They Described Him As A Radical."))
    assert m.group(1) == "as a radical" and "They Described Him As A Radical."[m.start(1):m.end(1)] == "As A Radical"
