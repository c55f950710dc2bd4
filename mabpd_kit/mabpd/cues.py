"""The one cue scan per item that the rule-based MABPD agents share (:func:`analyse_cues` -> :class:`Cues`),
the counter-arguments built from it and :func:`ground_span`, the one evidence rule for a quoted phrase."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mabpd_kit.config import Config, TextConfig
from mabpd_kit.injection import BLOCKED, Instructions
from mabpd_kit.lexicon.boundaries import adverbial, evidence_problem, loaded_part, negated, trim
from mabpd_kit.mabpd.spans import inside, noun_reading
from mabpd_kit.mabpd.speech import SPEECH_WORDS as _SPEECH_WORDS
from mabpd_kit.mabpd.speech import VERB_FORMS as _ASCRIBING_VERBS
from mabpd_kit.mabpd.speech import ascribed
from mabpd_kit.types import Span

if TYPE_CHECKING:
    from mabpd_kit.lexicon import Lexicon, LexMatch

__all__ = ["CUE_INFO", "EVIDENCE_CUES", "FRAMING_CUES", "NEUTRAL_READING", "Cues", "Quotation", "analyse_cues",
           "counter_biased", "counter_neutral", "dedupe", "FRAME_CATEGORIES", "ground_span", "lex_span", "lexicon_for",
           "noisy_or", "primary", "quotations", "secondary"]

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
#: a double-quoted stretch, or a single-quoted one not opened inside a word ("it's")
_QUOTE_RE = re.compile(r'"([^"\n]{1,800})"|(?<!\w)\'([^\'\n]{2,60})\'(?![\w])')
_WORD_RE = re.compile(r"[A-Za-z0-9][\w'-]*")
_SHARE: float = TextConfig.model_fields["evidence_max_share"].default


def _forms(*stems: str) -> frozenset[str]:
    """A cue's words: it counts only where one of them is a word of the text ("longest-ever" is one word)."""
    return frozenset(w for stem in stems for w in stem.split())


#: cue -> (pattern, its words): one readable regex per cue.
_CUE_PATTERNS: dict[str, tuple[re.Pattern[str], frozenset[str]]] = {
    "so_called": (re.compile(r"\bso[- ]called\b", re.IGNORECASE), _forms("so-called called")),
    "loaded_attribution": (re.compile(
        r"\b(?:claim(?:s|ed|ing)?|admit(?:s|ted|ting)?|insist(?:s|ed|ing)?|conced(?:e|es|ed|ing)|"
        r"boast(?:s|ed|ing)?|brag(?:s|ged|ging)?|tout(?:s|ed|ing)?|trumpet(?:s|ed|ing)|"
        r"rant(?:s|ed|ing)?|whin(?:e|es|ed|ing)|rail(?:s|ed|ing)? against|lash(?:es|ed|ing)? out|"
        r"scoff(?:s|ed|ing)?|sneer(?:s|ed|ing)?|purport(?:s|ed|ing|edly)?)\b"
        r"(?!\s+(?:responsibility|the lives|lives|victory|the title|the seat|a seat|the prize|credit))", re.IGNORECASE),
        _forms("claim claims claimed claiming admit admits admitted admitting insist insists insisted insisting",
               "concede concedes conceded conceding boast boasts boasted boasting brag brags bragged bragging",
               "tout touts touted touting trumpets trumpeted trumpeting rant rants ranted ranting whine whines",
               "whined whining rail rails railed railing lash lashes lashed lashing scoff scoffs scoffed scoffing",
               "sneer sneers sneered sneering purport purports purported purporting purportedly")),
    "superlative": (re.compile(
        r"\b(?:(?:worst|best|greatest|biggest|most\s+\w+|\w+est)\b[^.;]{0,40}?\b(?:ever|in history|of all time)\b|"
        r"unprecedented|of all time|all-time low|all-time high)", re.IGNORECASE),
        _forms("ever history time all-time unprecedented")),
    "passive_agency": (re.compile(
        r"\b(?:was|were|been|being|is|are|got|get|gets)\s+(?:\w+ly\s+)?(?:killed|shot|injured|wounded|attacked|"
        r"beaten|harmed|hurt|murdered|slain|assaulted|detained|deported|displaced|evicted|targeted|"
        r"tear-gassed|pepper-sprayed|gunned down|run over)\b(?![^.;]{0,40}\bby\b)", re.IGNORECASE),
        _forms("killed shot injured wounded attacked beaten harmed hurt murdered slain assaulted detained",
               "deported displaced evicted targeted tear-gassed pepper-sprayed gunned run")),
    "vague_source": (re.compile(
        r"\b(?:critics|opponents|detractors|skeptics|sceptics|some people|many people|many|some|"
        r"people|observers|insiders)\s+(?:say|said|argue|argued|believe|believed|contend|contended|fear|feared|"
        r"warn|warned|worry|worried|charge|charged|complain|complained)\b", re.IGNORECASE),
        _forms("critics opponents detractors skeptics sceptics people many some observers insiders")),
    "assertion_marker": (re.compile(
        r"\b(?:clearly|obviously|of course|undeniably|undoubtedly|unquestionably|needless to say|"
        r"the fact is|the truth is|make no mistake|let's be honest|it is no secret|it's no secret|"
        r"without a doubt|plainly|blatantly|shamelessly|brazenly)\b", re.IGNORECASE),
        _forms("clearly obviously course undeniably undoubtedly unquestionably needless fact truth mistake",
               "honest secret doubt plainly blatantly shamelessly brazenly")),
}
_ANY_CUE_TRIGGER = frozenset().union(*(forms for _, forms in _CUE_PATTERNS.values()))
#: cue -> (taxonomy type, teaching note). Bands come from ``config.agents.cue_bands``.
CUE_INFO: dict[str, tuple[str, str]] = {
    "so_called": ("framing", '"so-called" signals the writer rejects the name it precedes'),
    "scare_quotes": ("framing", "short quoted words nobody is said to have spoken: the writer distances itself"),
    "loaded_attribution": ("framing", "attribution verb that casts doubt or motive instead of neutral 'said'"),
    "superlative": ("exaggeration", "superlative / record claim inflating the event"),
    "passive_agency": ("omission", "agentless passive of harm hides who did it"),
    "vague_source": ("selection", "unnamed, one-sided sourcing ('critics say') with no reply"),
    "assertion_marker": ("exaggeration", "presents opinion as self-evident fact"),
}
#: cue or taxonomy type -> the most plausible neutral reading of such a span (counter-arguments).
NEUTRAL_READING: dict[str, str] = {
    "so_called": "a name the writer reports as contested rather than rejects",
    "scare_quotes": "a title, a coined term or a source's own word, quoted rather than mocked",
    "loaded_attribution": "a plain report that the claim is disputed (where 'said' would overstate agreement)",
    "superlative": "a measured record that a figure or source could back",
    "passive_agency": "an agent not yet known when the text was written",
    "vague_source": "a summary of a real opposition that is named elsewhere in the article",
    "assertion_marker": "the writer summarising an undisputed fact",
    "political labeling": "the group's own name for itself, or a factual description of its position",
    "loaded language": "a literal, factual description of what happened",
    "emotional language": "a literal report of how the people involved reacted",
    "exaggeration": "a measured claim, if a figure or source backs it",
    "framing": "a conventional way of naming the issue",
    "selection": "a focus the rest of the article may balance",
    "omission": "a detail the rest of the article may supply",
}
FRAMING_CUES = ("so_called", "scare_quotes", "loaded_attribution", "superlative", "passive_agency", "vague_source")
EVIDENCE_CUES = ("assertion_marker",)
#: a figure, with its unit
_DIGIT_RE = re.compile(r"\d")
_NUMBER_RE = re.compile(r"\b\d[\d,.]*\s*(?:%|percent|per cent|million|billion|trillion|thousand)?", re.IGNORECASE)
_ACCORDING_RE = re.compile(r"\baccording to\s+(?:the\s+)?[A-Z][\w.&'-]*(?:\s+[A-Z][\w.&'-]*)*", re.UNICODE)
#: ", the police department said" / ", officials told reporters": a reporting clause attributing the sentence.
_ATTRIBUTION_CLAUSE_RE = re.compile(
    r"[,;]\s+((?:[\w'.-]+\s+){0,6}?(?:said|says|reported|reports|stated|announced|added|told|confirmed))\b")
_VAGUE = "Critics|Opponents|Detractors|Skeptics|Sceptics|Some|Many|People|Observers|Insiders|Others|Experts|They|He|She|It|We"
#: "Senator Smith said", "Dr. Jane Doe told": one to three capitalised words, not a vague subject, then a speech verb
_NAMED_SOURCE_RE = re.compile(r"\b(?!(?:" + _VAGUE + r")\b)(?:[A-Z][a-z]+\.?\s+){0,2}[A-Z][a-z]+(?:'s)?\s+(?:"
                              + "|".join(sorted(_SPEECH_WORDS)) + r")\b")


@dataclass(frozen=True, slots=True)
class Quotation:
    """A quoted stretch, marks included; ``name``: a name, title or mentioned expression."""

    start: int
    end: int
    n_words: int
    attributed: bool
    name: bool = False

    @property
    def scare(self) -> bool:
        """Short, unattributed and not a name: a scare quote rather than reported speech."""
        return not self.attributed and not self.name and self.n_words <= 4

    @property
    def reported(self) -> bool:
        """Reported speech: an attributed quotation, or a long one that is not a name or title."""
        return self.attributed or (self.n_words > 4 and not self.name)


@dataclass
class Cues:
    """Everything the rule-based agents read off one cleaned text (computed once, shared)."""

    text: str
    lex: list[LexMatch]
    quotes: list[Quotation]
    cues: list[tuple[str, int, int]]  # (cue, start, end)
    grounding: list[tuple[str, int, int]]  # (kind, start, end)
    reported: list[tuple[int, int]] = field(default_factory=list)
    #: labels ascribed by a verb of describing or accusing (:func:`.speech.ascribed`): "described X as ..."
    ascribed: list[tuple[int, int]] = field(default_factory=list)
    to_orig: Callable[[int, int], tuple[int, int]] | None = None
    injection: Instructions | None = None  # text addressed to the model (config.agents.injection_guard), else None
    max_share: float = _SHARE  # config.text.evidence_max_share: a span this share of its sentence is no evidence
    #: this text's :func:`counter_neutral` for one configuration (every neutral agent of the item asks it)
    _neutral: tuple[Config, str] | None = field(default=None, repr=False, compare=False)
    #: :meth:`is_primary` of the spans asked about (the agents cite many of the same ones)
    _primary: dict[tuple[Any, ...], bool] = field(default_factory=dict, repr=False, compare=False)

    def orig(self, start: int, end: int) -> tuple[int | None, int | None]:
        """Offsets in the raw input (None when no cleaning map was given)."""
        return self.to_orig(start, end) if self.to_orig is not None else (None, None)

    def in_reported(self, start: int | None, end: int | None) -> bool:
        """Is [start, end) inside reported speech (an attributed or long quotation)?"""
        return bool(self.reported) and inside(start, end, self.reported)

    def is_primary(self, span: Span) -> bool:
        """Not :func:`secondary` and not :meth:`denied_or_reported` (remembered per span)."""
        key = (span.category, span.reason, span.text, span.start, span.end)
        out = self._primary.get(key)
        if out is None:
            out = self._primary[key] = not secondary(span) and not self.denied_or_reported(span)
        return out

    def denied_or_reported(self, span: Span) -> bool:
        """Somebody else's words, mentioned, negated ("is not a racist") or a verb of attack used as a noun?"""
        return self.in_speech(span.start, span.end) or self.mentioned(span.start, span.end) or (
            span.start is not None and (negated(self.text, span.start) or self.nominal(span)))

    def nominal(self, span: Span) -> bool:
        """Is a verb of attack used as a noun ("the attack")? The noun names an event, not a criticism."""
        return span.category == "attack_verbs" and bool(span.start) and noun_reading(self.text, span.start, span.end)

    def mentioned(self, start: int | None, end: int | None) -> bool:
        """Is [start, end) inside a quoted name or mentioned expression ("the term 'radical Islam'")?"""
        return bool(self.quotes) and inside(start, end, [(q.start, q.end) for q in self.quotes if q.name])

    def in_speech(self, start: int | None, end: int | None) -> bool:
        """Is [start, end) somebody else's words: reported speech, or a label ascribed ("described X as ...")?"""
        return self.in_reported(start, end) or (bool(self.ascribed) and inside(start, end, self.ascribed))


def _attributed(before: str, after: str) -> bool:
    """A speech verb or colon beside a quotation, or a verb of naming before it, attributes it."""
    if before.rstrip().endswith(":") or after.lstrip().startswith(":") or _NAMING_RE.search(before):
        return True
    return not _SPEECH_WORDS.isdisjoint(_TOKEN_RE.findall(before.lower())) or not _SPEECH_WORDS.isdisjoint(_TOKEN_RE.findall(after.lower()))


_SENTENCE_END_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+(?=[A-Z\"'\u201c\u2018])")


def _speaker_in_sentence(text: str, a: int, b: int) -> bool:
    """Does a speech verb outside the quotation make it that speaker's word ("Trump is 'angry' that ...")?"""
    start = 0
    for m in _SENTENCE_END_RE.finditer(text, 0, a):
        start = m.end()
    m = _SENTENCE_END_RE.search(text, b)
    end = m.start() + 1 if m else len(text)
    return not _SPEECH_WORDS.isdisjoint(_TOKEN_RE.findall((text[start:a] + " " + text[b:end]).lower()))


#: a verb of naming, at most three words before the quotation (then an optional "as"): the quotation is
#: the name somebody gave (a mixed quotation of that source). Forms that are also common nouns ("brand",
#: "term", "label") count only inflected as verbs ("branded", "termed", "labelled")
_NAMING_RE = re.compile(
    r"\b(?:call|calls|called|calling|dub|dubs|dubbed|dubbing|label+ed|label+ing|branded|branding|termed|nicknamed|"
    r"describe|describes|described|describing|refer to|refers to|referred to|referring to)"
    r"(?:\s+[\w'-]+){0,3}?(?:\s+as)?\s*[(\[]?$", re.IGNORECASE)
#: words right before a quotation that mention an expression as such ("the term", "phrases such as",
#: "known as", "so-called"): the quotation is the expression talked about, not the writer's distancing
_MENTION_RE = re.compile(
    r"(?:\b(?:word|words|term|terms|phrase|phrases|expression|expressions|label|labels|slogan|slogans|motto|"
    r"hashtag|hashtags|title|titled|entitled|named|banner of|such as|known as|so-called|so called)|"
    r"\b(?:words|terms|phrases|expressions|slogans|labels)\s+(?:like|such as))\s*[,(\[]?$", re.IGNORECASE)
#: minor words a title leaves in lower case ("Children of Men")
_TITLE_MINOR = frozenset("a an the of and or but nor for in on at to by with from as vs".split())


def _named(inner: str, before: str) -> bool:
    """A mentioned expression ("the term", "known as") or, past the sentence start, a title-cased name?"""
    if _MENTION_RE.search(before):
        return True
    if not before.strip() or before.rstrip().endswith((".", "!", "?")):
        return False  # the first word of a sentence is capitalised anyway
    words = _WORD_RE.findall(inner)
    major = [w for w in words if w.lower() not in _TITLE_MINOR]
    return bool(major) and all(w[0].isupper() for w in major) and not all(w.isupper() for w in major if len(w) > 1)


def analyse_cues(text: str, lex: Lexicon, config: Config,
                 to_orig: Callable[[int, int], tuple[int, int]] | None = None) -> Cues:
    """Scan a cleaned text once: lexicon matches, quotations, cues, grounding. ``to_orig`` maps offsets to
    the raw input; with ``config.agents.injection_guard`` nothing inside ``injection`` is read."""
    words = set(_TOKEN_RE.findall(text.lower()))
    guard = Instructions.from_tokens(text, words) if config.agents.injection_guard else None
    window = config.agents.attribution_window
    quotes: list[Quotation] = []
    for m in _QUOTE_RE.finditer(text) if '"' in text or "'" in text else ():
        a, b = m.span()
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        n_words = len(_WORD_RE.findall(inner))
        if n_words:
            before = text[max(0, a - window):a]
            named = _named(inner, before)
            attributed = _attributed(before, text[b:b + window]) or (
                not named and n_words <= 4 and _speaker_in_sentence(text, a, b))
            quotes.append(Quotation(a, b, n_words, attributed, named))
    reported = [(q.start, q.end) for q in quotes if q.reported]
    cues: list[tuple[str, int, int]] = [("scare_quotes", q.start, q.end) for q in quotes if q.scare]
    for name, (pat, forms) in _CUE_PATTERNS.items() if not _ANY_CUE_TRIGGER.isdisjoint(words) else ():
        if not forms.isdisjoint(words):
            cues.extend((name, *cut) for m in pat.finditer(text) if (cut := trim(text, m.start(), m.end())))
    grounding: list[tuple[str, int, int]] = [("attributed quotation", a, b) for a, b in reported]
    if "according" in words:
        grounding += [("named source", m.start(), m.end()) for m in _ACCORDING_RE.finditer(text)]
    if not _SPEECH_WORDS.isdisjoint(words):  # a source is named only where somebody speaks
        grounding += [("named source", m.start(), m.end()) for m in _NAMED_SOURCE_RE.finditer(text)]
        grounding += [("attribution clause", m.start(1), m.end(1)) for m in _ATTRIBUTION_CLAUSE_RE.finditer(text)]
    if _DIGIT_RE.search(text):
        grounding += [("figure", m.start(), m.end()) for m in _NUMBER_RE.finditer(text) if m.end() - m.start() > 1]
    matches = [loaded_part(lex, text, m) for m in lex.match(text)]  # a compound's loaded constituent
    if guard is not None:
        matches = [m for m in matches if guard.overlapping(m.start, m.end) is None]
        cues = [c for c in cues if guard.overlapping(c[1], c[2]) is None]
    return Cues(text=text, lex=matches, quotes=quotes, cues=cues, grounding=grounding, reported=reported,
                ascribed=ascribed(text) if not _ASCRIBING_VERBS.isdisjoint(words) else [], to_orig=to_orig, injection=guard, max_share=config.text.evidence_max_share)


def quotations(text: str) -> list[tuple[int, int]]:
    """Every quoted stretch of ``text``, its marks included (what :func:`analyse_cues` reads quotations from)."""
    return [m.span() for m in _QUOTE_RE.finditer(text)]


def lex_span(m: LexMatch, agent: str, cues: Cues, note: str = "") -> Span:
    """A lexicon match as a Span (same fields as ``Lexicon.to_span``, raw offsets from ``cues``)."""
    oa, ob = cues.orig(m.start, m.end)
    why = evidence_problem(cues.text, m.start, m.end, max_share=cues.max_share, lexical=True)  # the one rule
    return Span(
        text=m.text, start=m.start, end=m.end, orig_start=oa, orig_end=ob, category=m.category,
        taxonomy=m.taxonomy, meta_category=m.meta_category, agent=agent, score=m.band, valid=why is None,
        reason=why or f"lexicon: {m.term!r} ({m.category}, band {m.band:.2f})", note=(m.note + note) if note else m.note)


def _attribution(cues: Cues) -> str | None:
    """The first phrase attributing the sentence to a source (named source or reporting clause)."""
    for kind, a, b in cues.grounding:
        if kind in ("named source", "attribution clause"):
            return cues.text[a:b]
    return None


def counter_biased(spans: Sequence[Span], cues: Cues) -> str:
    """The objection a biased argument anticipates: its strongest valid span's most plausible neutral reading."""
    valid = [s for s in spans if s.valid]
    if not valid:
        return "None of my spans is in the text, so my biased reading carries no weight; neutral stands by default."
    top = max(valid, key=lambda s: s.score)
    if cues.in_reported(top.start, top.end):
        return f"{top.text!r} is inside an attributed quotation: the source's words, reported, not the writer's."
    source = _attribution(cues)
    if source:
        return f"The sentence attributes its content ({source!r}), so {top.text!r} may be reported, not asserted."
    reading = NEUTRAL_READING.get(top.category) or NEUTRAL_READING.get(top.taxonomy or "") or "a neutral use in this context"
    return f"{top.text!r} ({top.taxonomy or top.category}) could be {reading}."


def counter_neutral(cues: Cues, config: Config) -> str:
    """The objection a neutral argument anticipates: the strongest match or cue, else sourcing, else omission."""
    if cues._neutral is not None and cues._neutral[0] is config:
        return cues._neutral[1]
    out = _counter_neutral(cues, config)
    cues._neutral = (config, out)
    return out


def _counter_neutral(cues: Cues, config: Config) -> str:
    floor = config.lexicon.confidence_floor
    # the highest band, then the earliest start; on a full tie the first (lexicon matches before cues)
    best: tuple[float, int] | None = None
    a = b = 0
    why: LexMatch | str = ""
    for m in cues.lex:
        if m.band > floor and (best is None or (m.band, -m.start) > best):
            best, a, b, why = (m.band, -m.start), m.start, m.end, m
    bands = config.agents.cue_bands
    for c, ca, cb in cues.cues:
        band = bands.get(c, 0.6)
        if best is None or (band, -ca) > best:
            best, a, b, why = (band, -ca), ca, cb, CUE_INFO[c][1]
    if best is not None:
        if not isinstance(why, str):
            why = f"{why.category}, band {why.band:.2f}"
        if cues.in_reported(a, b):
            return (f"{cues.text[a:b]!r} ({why}) is quoted, but the writer chose to quote it with no reply; "
                    "a reader could call that selection.")
        return f"{cues.text[a:b]!r} ({why}) could be read as the writer's own choice."
    source = _attribution(cues)
    if source:
        return f"Nothing loaded in the wording, but relying on one source ({source!r}) could be one-sided selection."
    return "No loaded word, framing cue or source: the only objection left is omission, which one sentence cannot show."


def noisy_or(bands: Sequence[float]) -> float:
    """1 - prod(1 - b): one cue gives its band, each further cue adds a share of what is left."""
    p = 1.0
    for b in bands:
        p *= 1.0 - b
    return 1.0 - p


#: lexicon categories of epistemic and evidential frames ("critics say", "remains to be seen", "without a
#: doubt", "everyone knows"): they say how sure, from whom or of how many a claim is, so they are secondary
FRAME_CATEGORIES = frozenset({"vague_attribution", "speculative_framing", "certainty_overclaims", "absolutes"})


def secondary(span: Span) -> bool:
    """Is a span secondary: an adverbial, a quantifier, an epistemic frame or a scare quote?"""
    return span.category in ("scare_quotes", "assertion_marker", "vague_source") and (span.reason or "").startswith("cue") \
        or span.category in FRAME_CATEGORIES or adverbial(span.text)


def primary(spans: Sequence[Span], cues: Cues | None = None) -> list[Span]:
    """The primary spans (with ``cues``, also the writer's own words), or all of them when none is primary."""
    main = [s for s in spans if not secondary(s)] if cues is None else [s for s in spans if cues.is_primary(s)]
    return main if main else list(spans)


def dedupe(spans: Sequence[Span]) -> list[Span]:
    """Drop spans overlapping a stronger one (reading order kept)."""
    chosen: list[Span] = []
    for s in sorted(spans, key=lambda s: (-s.score, s.start or 0)):
        if all(s.end <= c.start or s.start >= c.end for c in chosen):
            chosen.append(s)
    return sorted(chosen, key=lambda s: s.start or 0)


def ground_span(span: Span, text: str, ratio: float, guard: Instructions | None = None, *,
                max_share: float | None = None) -> Span:
    """``span`` checked against ``text`` by the one evidence rule; a failing span is kept, invalid with its
    reason. Without ``max_share`` (the store) a span an agent grounded is trusted."""
    if not span.valid and BLOCKED in span.reason:
        return span
    g = _ground(span, text)
    if g is span and max_share is None and span.valid and span.reason:  # checked where it was made (agent config)
        return g
    why = g.valid and g.category != "grounding" and (evidence_problem(
        text, g.start, g.end, max_share=max_share or _SHARE, lexical=span.reason.startswith("lexicon:"))
        or (guard is not None and guard.blocks(g.text, g.start, g.end)))
    return g.model_copy(update={"valid": False, "reason": why}) if why else g


def _ground(span: Span, text: str) -> Span:
    if span.start is not None and span.end is not None and 0 <= span.start < span.end <= len(text):
        if text[span.start : span.end] == span.text:
            return span if span.valid and span.reason else span.model_copy(update={"valid": True, "reason": span.reason or "exact"})
    from mabpd_kit.text import validate_span

    check = validate_span(span.text, text)
    if check.valid:  # the text's own words (case, quote marks, hyphens as the article has them)
        return span.model_copy(update={"text": text[check.start:check.end], "start": check.start, "end": check.end,
                                       "valid": True, "reason": check.method})
    return span.model_copy(update={"start": None, "end": None, "valid": False, "reason": check.reason or "not found in the text"})


def lexicon_for(config: Config) -> Lexicon:
    """The lexicon of a configuration (the default one, loaded once, unless ``config.lexicon`` differs)."""
    from mabpd_kit.lexicon import Lexicon

    return Lexicon.default() if config.lexicon == Config().lexicon else Lexicon.from_config(config)
