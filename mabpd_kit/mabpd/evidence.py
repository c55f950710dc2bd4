"""The evidence behind a decision, read from its trace (:func:`decision_evidence`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mabpd_kit.mabpd.cues import quotations, secondary
from mabpd_kit.mabpd.spans import in_name, inside, scare_quote, structural
from mabpd_kit.types import Span

__all__ = ["decision_evidence"]


def decision_evidence(d: Any, marks: Sequence[tuple[int, int]] | None = None) -> list[Span]:
    """The spans a biased decision rests on: those of the last round's biased arguments (else of the biased
    reports), the writer's own primary words first, then secondary ones, scare quotes, anything valid.
    ``marks``: the text's quotations (else read off ``clean_text``). The pipeline and ``mabpd evaluate``
    both read it, so they get the same spans."""
    if d.debate is not None and d.debate.rounds:
        spans = [s for w in d.debate.rounds[-1].arguments if w.verdict == "biased" for s in w.argument.spans]
    else:
        spans = [s for r in d.reports.values() if r.verdict == "biased" for s in r.spans]
    valid = [s for s in spans if s.valid]
    if len(valid) < 2:  # every choice below keeps a lone valid span, and invalid ones stay
        return spans
    quoted = [(g.start, g.end) for r in d.reports.values() for g in getattr(r, "counter_spans", ())
              if g.category == "grounding" and g.note == "attributed quotation" and g.start is not None]
    text = getattr(d, "clean_text", None) or ""
    marks = quotations(text) if marks is None else marks
    own: list[Span] = []
    main: list[Span] = []
    for s in valid:  # one pass: the writer's own words (own), and those not secondary or structural (main)
        if scare_quote(s) or inside(s.start, s.end, quoted) or inside(s.start, s.end, marks, strict=True) or in_name(text, s):
            continue
        own.append(s)
        if not secondary(s) and not structural(s):
            main.append(s)
    chosen = main or own or [s for s in valid if scare_quote(s)] or valid
    if len(valid) == len(spans):  # no invalid span to keep in its place: the choice, in reading order
        return chosen
    kept = {id(s) for s in chosen}
    return [s for s in spans if not s.valid or id(s) in kept]

