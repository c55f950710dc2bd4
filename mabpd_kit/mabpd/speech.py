"""Ascribed labels: the ``as`` complement of a verb of describing ("painted the rally *as extremists*")
and the ``of`` complement of a verb of accusing ("accused the mayor *of stoking chaos*").

>>> t = "Critics smeared the singer as racist, over a post."
>>> [t[a:b] for a, b in ascribed(t)]
['as racist']
"""

from __future__ import annotations

import re

__all__ = ["SPEECH_WORDS", "VERB_FORMS", "ascribed"]

#: verbs of saying (and "according"): beside a quotation they attribute it to a source (:mod:`.cues`)
SPEECH_WORDS = frozenset("""
said says say saying told tells tell stated states wrote writes writing tweeted tweets added adds adding
explained explains asked asks asking argued argues arguing claimed claims claiming insisted insists insisting
noted notes noting announced announces declared declares warned warns warning replied replies responded
responds posted testified recalled remarked admitted admits acknowledged suggested urged urges called calls
calling described describes describing continued quipped conceded boasted complained complains lamented
alleged alleges vowed vows promised shouted yelled chanted read reads stating telling according
""".split())

_DESCRIBE_VERBS = """describe describes described describing portray portrays portrayed portraying depict depicts
depicted characterize characterizes characterized characterise characterises characterised paint paints painted
painting cast casts casting brand brands branded label labels labeled labelled smear smears smeared decry decries
decried denounce denounces denounced condemn condemns condemned berate berates berated dismiss dismisses dismissed
mock mocks mocked ridicule ridiculed deride derides derided""".split()
_ACCUSE_VERBS = "accuse accuses accused accusing".split()
#: every verb form the patterns start from (a text with none of them has no ascribed label)
VERB_FORMS = frozenset(_DESCRIBE_VERBS + _ACCUSE_VERBS)

_PHRASE_END = r"(?=[.,;:!?\u2014]|\s[-\u2013]\s|$)"
_DESCRIBE_RE = re.compile(r"\b(?:" + "|".join(_DESCRIBE_VERBS) + r")\b(?:\s+[\w'-]+){0,6}?\s+(as\b[^.,;:!?\u2014]*?)"
                          + _PHRASE_END, re.IGNORECASE)
_ACCUSE_RE = re.compile(r"\b(?:" + "|".join(_ACCUSE_VERBS) + r")\b(?:\s+[\w'-]+){0,6}?\s+(of\b[^.,;:!?\u2014]*?)"
                        + _PHRASE_END, re.IGNORECASE)


def ascribed(text: str) -> list[tuple[int, int]]:
    """The stretches of ``text`` that are labels ascribed by a verb of describing or accusing (module doc)."""
    out = [(m.start(1), m.end(1)) for rx in (_DESCRIBE_RE, _ACCUSE_RE) for m in rx.finditer(text)]
    return sorted(set(out))
