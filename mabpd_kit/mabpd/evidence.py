"""The evidence behind a decision, read from its trace: what the verifier examines and ``mabpd evaluate``
scores (:func:`decision_evidence`). The pipeline and the evaluation call the same function, so they get
the same spans."""

from __future__ import annotations

from typing import Any, Sequence

from mabpd_kit.mabpd.cues import quotations, secondary
from mabpd_kit.mabpd.spans import in_name, scare_quote, structural
from mabpd_kit.types import Span

__all__ = ["decision_evidence"]


def decision_evidence(d: Any) -> list[Span]:
    """The evidence behind a biased decision (what the verifier examines and ``mabpd evaluate`` scores):
    the spans of the biased arguments of the last debate round when the item was debated, else of the
    biased round-1 reports, pooled over those agents and narrowed as an agent narrows its own report
    (:func:`mabpd_kit.mabpd.cues.primary`): a decision that cites the writer's loaded word does not also
    cite a stance adverbial ("clearly"), a quantifier, an epistemic frame or a scare quote
    (:func:`~mabpd_kit.mabpd.cues.secondary`), nor a device of selective presentation (one-sided sourcing,
    selective emphasis: :func:`~mabpd_kit.mabpd.spans.structural`, a claim about the sentence rather than a
    loaded word of it; the agents still cite it), nor a span inside a quotation the trace records as a
    source's words (an agent's grounding span "attributed quotation"), nor a word inside any quotation
    marks of the text (:func:`~mabpd_kit.mabpd.cues.quotations`): a scare quote's word is the one the
    writer distances itself from (the writer's part is the marks, the scare quote's own span), a quoted
    name's is mentioned, as is a word of a proper name (:func:`~mabpd_kit.mabpd.spans.in_name`: "Jim
    Crow"); none is the writer's use of it. A scare quote's own span gives way too, even to a hedge or a
    degree word of the writer's ("massive", "apparently"). When the writer's own words are all secondary,
    they are the evidence; else the scare quotes; when quoted words are all there is, they are (the
    verifier then judges the quotation). Invalid spans are kept (nothing grounds on them; the verifier
    says so). Read from the trace only (with its cleaned text), so the pipeline and the evaluation get
    the same spans; each agent's report, score and arguments stay as they are. ``d``: a :class:`Decision`
    (or anything with its ``reports`` and ``debate``, and optionally ``clean_text``)."""
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
    marks = quotations(text)
    own: list[Span] = []
    main: list[Span] = []
    for s in valid:  # one pass: the writer's own words (own), and those not secondary or structural (main)
        if scare_quote(s) or (quoted and _inside(s, quoted)) or (marks and _within(s, marks)) or in_name(text, s):
            continue
        own.append(s)
        if not secondary(s) and not structural(s):
            main.append(s)
    chosen = main or own or [s for s in valid if scare_quote(s)] or valid
    if len(valid) == len(spans):  # no invalid span to keep in its place: the choice, in reading order
        return chosen
    kept = {id(s) for s in chosen}
    return [s for s in spans if not s.valid or id(s) in kept]


def _inside(span: Span, regions: Sequence[tuple[int, int]]) -> bool:
    return span.start is not None and span.end is not None and any(
        a <= span.start and span.end <= b for a, b in regions)


def _within(span: Span, quotes: Sequence[tuple[int, int]]) -> bool:
    """Is a span inside quotation marks (not the quotation with its marks, a scare quote's own span)?"""
    return span.start is not None and span.end is not None and any(
        a < span.start and span.end < b for a, b in quotes)
