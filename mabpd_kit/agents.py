"""The MABPD agents (SPEC 1.2, 1.6, 1.7): BiasAgent, EvidenceAgent, FramingAgent, VerifierAgent.

Every agent has **one interface and two implementations**, chosen by the ``llm`` you pass:

* ``llm=None`` or an offline LLM -> **rule-based** (deterministic, instant, the offline default);
* an online :class:`~mabpd_kit.llm.LLM` -> **LLM-backed**: a readable prompt template from
  ``mabpd_kit/prompts/mabpd/`` with the lexicon injected as knowledge, the article fenced off as
  data (never instructions), and a typed structured reply (pydantic schema, one repair retry).

Both return the same typed records: :class:`AgentReport` (round 1 analysis) and :class:`Argument`
(a SAD debate move). The verifier returns a :class:`~mabpd_kit.verify.VerifierReport`.

How the rule-based agents read a sentence
-----------------------------------------
All three share one :class:`Cues` analysis of the cleaned text (computed once per item):

* **BiasAgent** - the lexicon: every match (loaded words, labels, emotional words, ...) is a bias
  span; the bias score is the noisy-OR of the matched bands, so one 0.70 word gives 0.70 and two
  give 0.91; the verdict is "biased" iff the lexicon signal (a band above the confidence floor) exists.
* **EvidenceAgent** - grounding: does the *author* say it? Lexicon matches and assertion markers
  ("clearly", "of course") outside reported speech support bias; attributed quotations,
  "according to ...", numbers and named sources are grounding that argues against it.
* **FramingAgent** - presentation: scare quotes (short unattributed quotations), "so-called",
  loaded attribution verbs ("claimed", "insisted", "admitted"), superlatives ("worst ... ever"),
  agentless passives of harm ("protesters were shot" - by whom?), vague one-sided sourcing
  ("critics say"), plus the lexicon's framing and political-label categories.

In later debate rounds a rule-based agent revises **from linguistic reasoning, not from labels**:

* a *neutral* agent examines the spans the biased side cites through its own lens (the taxonomy
  types it is expert in) and concedes - switches to biased, citing those spans, with its
  confidence scaled by ``sad.concession`` - if a cited span is valid, in the author's own voice
  (not inside an attributed quotation) and within its expertise;
* a *biased* agent whose every span turns out to be reported speech (somebody else's words)
  switches to neutral when challenged; if all others disagree but none refutes its spans it keeps
  its verdict with confidence scaled by ``sad.doubt``.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import string
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Literal, Sequence

from pydantic import BaseModel, Field

from mabpd_kit.config import Config
from mabpd_kit.scoring import ground_span
from mabpd_kit.types import Mode, Span, StepUsage, Verdict
from mabpd_kit.verify import VerifierReport, apply_verifier, rule_verify

if TYPE_CHECKING:
    from mabpd_kit.lexicon import LexMatch, Lexicon
    from mabpd_kit.llm import LLM, Structured

__all__ = [
    "AgentReport", "Argument", "Cues", "Quotation", "analyse_cues",
    "BiasOutput", "EvidenceOutput", "FramingOutput", "ArgumentOutput", "VerifierOutput", "QuotedSpan", "EvidenceItem",
    "Agent", "BiasAgent", "EvidenceAgent", "FramingAgent", "VerifierAgent", "make_agents", "load_prompt",
    "gather_reports", "item_seed", "respan", "lex_span", "lexicon_for", "CUE_INFO",
]

Role = Literal["bias", "evidence", "framing"]

# =============================================================================================
# Typed records (SPEC 1.2 reports, 1.6 arguments)
# =============================================================================================


class AgentReport(StepUsage):
    """One agent's independent analysis (round 1).

    ``spans`` support a biased reading (bias spans, supporting evidence phrases, framing spans);
    ``counter_spans`` are phrases that fail to support it (grounding: attributed quotations,
    sources, figures). ``score`` is the agent's bias / evidence / framing score in [0, 1].
    """

    agent: Role
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    score: float = Field(ge=0, le=1)
    spans: list[Span] = Field(default_factory=list)
    counter_spans: list[Span] = Field(default_factory=list)
    rationale: str = ""

    def grounded(self) -> bool:
        """Does the agent cite at least one valid span for its (biased) reading?"""
        return any(s.valid for s in self.spans)


class Argument(StepUsage):
    """A SAD argument (SPEC 1.6): verdict, at most ``sad.max_spans`` evidence spans, confidence,
    an anticipated counter-argument. ``changed`` marks a verdict switch against the previous round."""

    agent: Role
    round: int
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    spans: list[Span] = Field(default_factory=list)
    counter_argument: str = ""
    rationale: str = ""
    changed: bool = False


# ---- what an LLM must return (validated; a malformed reply gets one repair retry) ----------


class QuotedSpan(BaseModel):
    """A phrase an LLM agent quotes from the article, with its category."""

    quote: str = Field(description="exact words copied from the article")
    category: str = Field(description="taxonomy type or lexicon category")
    explanation: str = ""


class EvidenceItem(BaseModel):
    """An evidence phrase: does it support a biased reading, or ground the text?"""

    quote: str = Field(description="exact words copied from the article")
    supports_bias: bool = Field(description="true if the phrase is evidence of bias, false if it grounds the text")
    explanation: str = ""


class BiasOutput(BaseModel):
    """What the LLM BiasAgent must return (validated; out-of-range numbers trigger the repair retry)."""

    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    bias_score: float = Field(ge=0, le=1)
    spans: list[QuotedSpan] = Field(default_factory=list)
    rationale: str = ""


class EvidenceOutput(BaseModel):
    """What the LLM EvidenceAgent must return."""

    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    evidence_score: float = Field(ge=0, le=1)
    evidence: list[EvidenceItem] = Field(default_factory=list)
    rationale: str = ""


class FramingOutput(BaseModel):
    """What the LLM FramingAgent must return."""

    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    framing_score: float = Field(ge=0, le=1)
    patterns: list[QuotedSpan] = Field(default_factory=list)
    rationale: str = ""


class ArgumentOutput(BaseModel):
    """One SAD move by an LLM agent (SPEC 1.6)."""

    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    evidence: list[str] = Field(default_factory=list, description="at most 5 exact quotes from the article")
    counter_argument: str = ""
    rationale: str = ""


class VerifierOutput(BaseModel):
    """The LLM verifier's reading of a biased decision."""

    verdict: Verdict
    reason: str
    strongest_quote: str = ""


# =============================================================================================
# Cue analysis shared by the rule-based agents
# =============================================================================================

_SPEECH_WORDS = frozenset("""
said says say saying told tells tell stated states wrote writes writing tweeted tweets added adds adding
explained explains asked asks asking argued argues arguing claimed claims claiming insisted insists insisting
noted notes noting announced announces declared declares warned warns warning replied replies responded
responds posted testified recalled remarked admitted admits acknowledged suggested urged urges called calls
calling described describes describing continued quipped conceded boasted complained complains lamented
alleged alleges vowed vows promised shouted yelled chanted read reads stating telling according
""".split())
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_QUOTE_RE = re.compile(r'"([^"\n]{1,800})"|(?<![\w])\'([^\'\n]{2,60})\'(?![\w])')
_WORD_RE = re.compile(r"[A-Za-z0-9][\w'-]*")
_DIGIT_RE = re.compile(r"\d")


def _forms(*stems: str) -> frozenset[str]:
    """Trigger words: a cue's regex only runs when one of them occurs in the text (speed)."""
    return frozenset(w for stem in stems for w in stem.split())


#: cue -> (pattern, trigger words). One regex per cue keeps each readable; triggers skip most scans.
_CUE_PATTERNS: dict[str, tuple[re.Pattern[str], frozenset[str]]] = {
    "so_called": (re.compile(r"\bso[- ]called\b", re.IGNORECASE), _forms("so-called called")),
    "loaded_attribution": (re.compile(
        r"\b(?:claim(?:s|ed|ing)?|admit(?:s|ted|ting)?|insist(?:s|ed|ing)?|conced(?:e|es|ed|ing)|"
        r"boast(?:s|ed|ing)?|brag(?:s|ged|ging)?|tout(?:s|ed|ing)?|trumpet(?:s|ed|ing)|"
        r"rant(?:s|ed|ing)?|whin(?:e|es|ed|ing)|rail(?:s|ed|ing)? against|lash(?:es|ed|ing)? out|"
        r"scoff(?:s|ed|ing)?|sneer(?:s|ed|ing)?|purport(?:s|ed|ing|edly)?)\b"
        r"(?!\s+(?:responsibility|the lives|lives|victory|the title|the seat|a seat|the prize|credit))",
        re.IGNORECASE),
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
_FRAMING_CUES = ("so_called", "scare_quotes", "loaded_attribution", "superlative", "passive_agency", "vague_source")
_EVIDENCE_CUES = ("assertion_marker",)
_NUMBER_RE = re.compile(r"\b\d[\d,.]*\s*(?:%|percent|per cent|million|billion|trillion|thousand)?", re.IGNORECASE)
_ACCORDING_RE = re.compile(r"\baccording to\s+(?:the\s+)?[A-Z][\w.&'-]*(?:\s+[A-Z][\w.&'-]*)*", re.UNICODE)
#: ", the police department said" / ", officials told reporters": a reporting clause attributing the sentence.
_ATTRIBUTION_CLAUSE_RE = re.compile(
    r"[,;]\s+((?:[\w'.-]+\s+){0,6}?(?:said|says|reported|reports|stated|announced|added|told|confirmed))\b")
_VAGUE = "Critics|Opponents|Detractors|Skeptics|Sceptics|Some|Many|People|Observers|Insiders|Others|Experts|They|He|She|It|We"
_NAMED_SOURCE_RE = re.compile(
    rf"\b(?!(?:{_VAGUE})\b)(?:[A-Z][a-z]+\.?\s+){{0,2}}[A-Z][a-z]+(?:'s)?\s+(?:" + "|".join(sorted(_SPEECH_WORDS)) + r")\b")


@dataclass(frozen=True, slots=True)
class Quotation:
    """A quoted stretch: ``start``/``end`` include the quote marks."""

    start: int
    end: int
    n_words: int
    attributed: bool

    @property
    def scare(self) -> bool:
        """Short and unattributed: a scare quote rather than reported speech."""
        return not self.attributed and self.n_words <= 4


@dataclass
class Cues:
    """Everything the rule-based agents read off one cleaned text (computed once, shared)."""

    text: str
    lex: list["LexMatch"]
    quotes: list[Quotation]
    cues: list[tuple[str, int, int]]  # (cue, start, end)
    grounding: list[tuple[str, int, int]]  # (kind, start, end)
    reported: list[tuple[int, int]] = field(default_factory=list)
    to_orig: Callable[[int, int], tuple[int, int]] | None = None

    def orig(self, start: int, end: int) -> tuple[int | None, int | None]:
        """Offsets in the raw input (None when no cleaning map was given)."""
        return self.to_orig(start, end) if self.to_orig is not None else (None, None)

    def in_reported(self, start: int | None, end: int | None) -> bool:
        """Is [start, end) inside reported speech (an attributed or long quotation)?"""
        return start is not None and end is not None and any(a <= start and end <= b for a, b in self.reported)


def _attributed(before: str, after: str) -> bool:
    """A speech verb (or a colon introducing the quote) next to a quotation attributes it to a source."""
    if before.rstrip().endswith(":") or after.lstrip().startswith(":"):
        return True
    return bool(_SPEECH_WORDS.intersection(_TOKEN_RE.findall(before.lower()))
                or _SPEECH_WORDS.intersection(_TOKEN_RE.findall(after.lower())))


def analyse_cues(text: str, lex: "Lexicon", config: Config,
                 to_orig: Callable[[int, int], tuple[int, int]] | None = None) -> Cues:
    """Scan a cleaned text once: lexicon matches, quotations, framing/evidence cues, grounding.

    ``to_orig`` (``CleanText.to_orig``) lets every span carry its offsets in the raw input too."""
    window = config.agents.attribution_window
    words = set(_TOKEN_RE.findall(text.lower()))
    quotes: list[Quotation] = []
    if '"' in text or "'" in text:
        for m in _QUOTE_RE.finditer(text):
            a, b = m.span()
            inner = m.group(1) if m.group(1) is not None else m.group(2)
            n_words = len(_WORD_RE.findall(inner))
            if n_words:
                quotes.append(Quotation(a, b, n_words, _attributed(text[max(0, a - window):a], text[b:b + window])))
    reported = [(q.start, q.end) for q in quotes if not q.scare]
    cues: list[tuple[str, int, int]] = [("scare_quotes", q.start, q.end) for q in quotes if q.scare]
    for name, (pat, triggers) in _CUE_PATTERNS.items():
        if not triggers.isdisjoint(words):
            cues.extend((name, m.start(), m.end()) for m in pat.finditer(text))
    grounding: list[tuple[str, int, int]] = [("attributed quotation", a, b) for a, b in reported]
    if "according" in words:
        grounding += [("named source", m.start(), m.end()) for m in _ACCORDING_RE.finditer(text)]
    if not _SPEECH_WORDS.isdisjoint(words):
        grounding += [("named source", m.start(), m.end()) for m in _NAMED_SOURCE_RE.finditer(text)]
        grounding += [("attribution clause", m.start(1), m.end(1)) for m in _ATTRIBUTION_CLAUSE_RE.finditer(text)]
    if _DIGIT_RE.search(text):
        grounding += [("figure", m.start(), m.end()) for m in _NUMBER_RE.finditer(text) if m.end() - m.start() > 1]
    return Cues(text=text, lex=lex.match(text), quotes=quotes, cues=cues, grounding=grounding, reported=reported,
                to_orig=to_orig)


def respan(span: Span, **update: Any) -> Span:
    """A copy of a span with some fields changed."""
    return span.model_copy(update=update)


def lex_span(m: "LexMatch", agent: str, cues: Cues, note: str = "") -> Span:
    """A lexicon match as a Span (same fields as ``Lexicon.to_span``, raw offsets from ``cues``)."""
    oa, ob = cues.orig(m.start, m.end)
    return Span(
        text=m.text, start=m.start, end=m.end, orig_start=oa, orig_end=ob, category=m.category,
        taxonomy=m.taxonomy, meta_category=m.meta_category, agent=agent, score=m.band, valid=True,
        reason=f"lexicon: {m.term!r} ({m.category}, band {m.band:.2f})", note=(m.note + note) if note else m.note)


def _noisy_or(bands: Sequence[float]) -> float:
    """1 - prod(1 - b): one cue gives its band, each further cue adds a share of what is left."""
    p = 1.0
    for b in bands:
        p *= 1.0 - b
    return 1.0 - p


def _dedupe(spans: Sequence[Span]) -> list[Span]:
    """Drop spans overlapping a stronger one (reading order kept)."""
    chosen: list[Span] = []
    for s in sorted(spans, key=lambda s: (-s.score, s.start or 0)):
        if all(s.end <= c.start or s.start >= c.end for c in chosen):
            chosen.append(s)
    return sorted(chosen, key=lambda s: s.start or 0)


# =============================================================================================
# Prompts
# =============================================================================================

_PROMPT_SPLIT = "<!-- user -->"


@lru_cache(maxsize=None)
def load_prompt(name: str) -> tuple[string.Template, string.Template]:
    """``prompts/mabpd/<name>.md`` -> (system, user) templates (``$article``, ``$knowledge``, ...)."""
    raw = resources.files("mabpd_kit").joinpath("prompts", "mabpd", f"{name}.md").read_text(encoding="utf-8")
    system, _, user = raw.partition(_PROMPT_SPLIT)
    system = re.sub(r"^<!--.*?-->\s*", "", system.strip(), flags=re.DOTALL)
    return string.Template(system.strip()), string.Template(user.strip())


def _fence(text: str) -> str:
    """The article as inert data: closing tags inside it cannot end the fence."""
    return text.replace("</article>", "</ article>").replace("<article>", "< article>")


def _messages(name: str, **values: str) -> list[dict[str, str]]:
    system, user = load_prompt(name)
    return [{"role": "system", "content": system.safe_substitute(values)},
            {"role": "user", "content": user.safe_substitute(values)}]


def _usage(res: "Structured", model: str | None) -> dict[str, Any]:
    calls = list(res.calls)
    return {"mode": "llm", "model": res.completion.model or model, "calls": len(calls),
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
            "latency_s": sum(c.latency_s for c in calls), "repaired": bool(res.repaired)}


# =============================================================================================
# Agents
# =============================================================================================


class Agent(ABC):
    """Common machinery: mode choice, model choice, span grounding, first argument, revision.

    Subclasses set ``role``, ``lens`` (taxonomy types whose spans the agent accepts as convincing
    in a debate), implement ``_rule_report`` and the LLM schema conversion ``_from_llm``.
    """

    role: ClassVar[Role]
    prompt: ClassVar[str]
    schema: ClassVar[type[BaseModel]]
    lens: ClassVar[frozenset[str]]
    title: ClassVar[str]

    def __init__(self, config: Config | None = None, llm: "LLM | None" = None, lexicon: "Lexicon | None" = None) -> None:
        self.config = config or Config()
        self.llm = llm if llm is not None and not llm.offline else None
        self.lexicon = lexicon or lexicon_for(self.config)
        self._taxonomy: dict[str, str] = dict(self.lexicon.data.get("taxonomy", {}))
        self._knowledge: str | None = None

    @property
    def mode(self) -> Mode:
        return "rule" if self.llm is None else "llm"

    @property
    def knowledge(self) -> str:
        """The lexicon as prompt knowledge (``lex.prompt_knowledge()``), built once per agent."""
        if self._knowledge is None:
            self._knowledge = self.lexicon.prompt_knowledge()
        return self._knowledge

    @property
    def model(self) -> str | None:
        """The model this agent asks for (``config.agents.models[role]``, else the endpoint default)."""
        if self.llm is None:
            return None
        return self.config.agents.models.get(self.role) or self.llm.model

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mode={self.mode!r}, model={self.model!r})"

    # -- round 1 ---------------------------------------------------------------------------
    def report(self, text: str, cues: Cues | None = None) -> AgentReport:
        """Analyse a cleaned text (sync). Rule-based needs ``cues`` (computed if missing)."""
        if self.llm is None:
            return self._rule_report(cues or analyse_cues(text, self.lexicon, self.config))
        from mabpd_kit.llm import run_sync

        return run_sync(self.areport(text, cues))

    async def areport(self, text: str, cues: Cues | None = None) -> AgentReport:
        """Analyse a cleaned text (async; the LLM call runs under the endpoint's concurrency limit)."""
        if self.llm is None:
            return self.report(text, cues)
        res = await self.llm.astructured(
            _messages(self.prompt, article=_fence(text), knowledge=self.knowledge), self.schema, model=self.model,
            temperature=self.config.agents.temperature, max_tokens=self.config.agents.max_tokens,
            tag=f"mabpd.{self.role}")
        return self._from_llm(res.value, text, _usage(res, self.model))

    def _span(self, quote: str, category: str, text: str, *, score: float, note: str = "") -> Span:
        """An LLM-quoted phrase -> grounded Span (taxonomy resolved from the lexicon where possible)."""
        cat = category.strip() or "other"
        c = self.lexicon.categories.get(cat.lower().replace(" ", "_"))
        taxonomy = c.taxonomy if c else (cat.lower() if cat.lower() in self._taxonomy else None)
        meta = self._taxonomy.get(taxonomy) if taxonomy else None
        span = Span(text=quote, category=cat, taxonomy=taxonomy, meta_category=meta, agent=self.role,
                    score=min(max(score, 0.0), 1.0), note=note)
        return ground_span(span, text, self.config.text.fuzzy_ratio)

    def _cue_span(self, cues: Cues, cue: str, a: int, b: int, note: str = "") -> Span:
        taxonomy, info = CUE_INFO[cue]
        oa, ob = cues.orig(a, b)
        return Span(text=cues.text[a:b], start=a, end=b, orig_start=oa, orig_end=ob, category=cue, taxonomy=taxonomy,
                    meta_category=self._taxonomy.get(taxonomy), agent=self.role,
                    score=self.config.agents.cue_bands.get(cue, 0.6), valid=True, reason=f"cue: {cue}", note=info + note)

    def _grounding_spans(self, cues: Cues) -> list[Span]:
        spans = []
        for kind, a, b in cues.grounding:
            oa, ob = cues.orig(a, b)
            spans.append(Span(text=cues.text[a:b], start=a, end=b, orig_start=oa, orig_end=ob, category="grounding",
                              agent=self.role, score=0.0, valid=True, reason=f"grounding: {kind}", note=kind))
        return _dedupe(spans)

    @abstractmethod
    def _rule_report(self, cues: Cues) -> AgentReport:
        """The deterministic analysis from the shared cue scan."""

    @abstractmethod
    def _from_llm(self, out: Any, text: str, usage: dict[str, Any]) -> AgentReport:
        """Turn the validated LLM reply into a report with grounded spans."""

    def _report(self, spans: list[Span], counter: list[Span], rationale_bits: list[str], what: str) -> AgentReport:
        score = _noisy_or([s.score for s in spans])
        biased = score >= self.config.scoring.boundary
        verdict: Verdict = "biased" if biased else "neutral"
        if spans:
            rationale = f"{what}: " + "; ".join(rationale_bits)
        else:
            rationale = f"no {what} found"
        return AgentReport(agent=self.role, verdict=verdict, confidence=score if biased else 1.0 - score,
                           score=score, spans=spans, counter_spans=counter, rationale=rationale)

    # -- debate ------------------------------------------------------------------------------
    def first_argument(self, report: AgentReport) -> Argument:
        """Round 1 of SAD is the independent report restated as an argument (no extra call)."""
        n = self.config.sad.max_spans
        cited = report.spans if report.verdict == "biased" else report.counter_spans
        cited = sorted(cited, key=lambda s: -s.score)[:n]
        return Argument(agent=self.role, round=1, verdict=report.verdict, confidence=report.confidence,
                        spans=cited, rationale=report.rationale, counter_argument=self._counter(report.verdict),
                        mode=report.mode, model=report.model)

    @staticmethod
    def _counter(verdict: Verdict) -> str:
        if verdict == "biased":
            return "The cited words could be a source's own words or neutral domain vocabulary."
        return "A reader could find the word choice or framing loaded even without explicit markers."

    def revise(self, round: int, own: Argument, others: Sequence[Argument], cues: Cues) -> Argument:
        """Rule-based revision after reading the others' previous arguments (see module doc)."""
        sad = self.config.sad
        if own.verdict == "neutral":
            accepted: list[Span] = []
            backers: list[Argument] = []
            for o in others:
                if o.verdict != "biased":
                    continue
                ok = [s for s in o.spans if s.valid and not cues.in_reported(s.start, s.end) and self.accepts(s, cues)]
                if ok:
                    accepted.extend(ok)
                    backers.append(o)
            if accepted:
                spans = _dedupe([respan(s, agent=self.role) for s in accepted])[: sad.max_spans]
                conf = sad.concession * max(o.confidence for o in backers)
                who = ", ".join(o.agent for o in backers)
                return own.model_copy(update={
                    "round": round, "verdict": "biased", "confidence": conf, "spans": spans, "changed": True,
                    "rationale": f"conceded to {who}: {spans[0].text!r} is {spans[0].taxonomy} in the author's own voice",
                    "counter_argument": self._counter("biased")})
            return own.model_copy(update={"round": round, "changed": False,
                                          "rationale": "kept: no cited span is both valid and in the author's voice"
                                          if any(o.verdict == "biased" for o in others) else own.rationale})
        # biased
        own_voice = [s for s in own.spans if s.valid and not cues.in_reported(s.start, s.end)]
        opponents = [o for o in others if o.verdict == "neutral"]
        if not own_voice and opponents:
            quotes = [s for s in own.spans if s.valid and cues.in_reported(s.start, s.end)]
            conf = sad.concession * max(o.confidence for o in opponents)
            return own.model_copy(update={
                "round": round, "verdict": "neutral", "confidence": conf, "changed": True,
                "spans": quotes[: sad.max_spans],
                "rationale": ("conceded: every span I cited is inside an attributed quotation (a source's words)"
                              if quotes else "conceded: none of the spans I cited can be found in the text"),
                "counter_argument": self._counter("neutral")})
        if others and len(opponents) == len(others):
            return own.model_copy(update={"round": round, "changed": False, "confidence": own.confidence * sad.doubt,
                                          "rationale": "kept, with less confidence: all others disagree but none refutes my spans"})
        return own.model_copy(update={"round": round, "changed": False})

    def accepts(self, span: Span, cues: Cues) -> bool:
        """Is a (valid, author's-voice) span cited by another agent within this agent's expertise?"""
        return span.taxonomy in self.lens

    async def arevise(self, round: int, own: Argument, others: Sequence[Argument], cues: Cues, *,
                      seed: int = 0) -> Argument:
        """One debate move: rule-based (sync) or an LLM call with the transcript."""
        if self.llm is None:
            return self.revise(round, own, others, cues)
        transcript = self._transcript(own, others, seed=seed + round)
        res = await self.llm.astructured(
            _messages("debate", article=_fence(cues.text), role=self.title, transcript=transcript,
                      max_spans=str(self.config.sad.max_spans), round=str(round)),
            ArgumentOutput, model=self.model, temperature=self.config.agents.temperature,
            max_tokens=self.config.agents.max_tokens, tag=f"mabpd.debate.{self.role}")
        out: ArgumentOutput = res.value
        spans = [self._span(q, "evidence", cues.text, score=out.confidence) for q in out.evidence[: self.config.sad.max_spans]]
        return Argument(agent=self.role, round=round, verdict=out.verdict, confidence=out.confidence, spans=spans,
                        counter_argument=out.counter_argument, rationale=out.rationale,
                        changed=out.verdict != own.verdict, **_usage(res, self.model))

    def _transcript(self, own: Argument, others: Sequence[Argument], *, seed: int) -> str:
        """Previous arguments as text: labelled by role, or (``sad.anonymise``) unlabelled and shuffled,
        own argument included, as in SPEC 4's anonymised prompt."""

        def fmt(a: Argument) -> str:
            ev = "; ".join(f'"{s.text}"' + ("" if s.valid else " (NOT FOUND in the article)") for s in a.spans) or "none"
            return (f"verdict: {a.verdict}, confidence: {a.confidence:.2f}\n  evidence: {ev}\n"
                    f"  reasoning: {a.rationale}\n  anticipated counter-argument: {a.counter_argument}")

        if self.config.sad.anonymise:
            items = [own, *others]
            random.Random(seed).shuffle(items)
            return "\n".join(f"- An analyst argued: {fmt(a)}" for a in items)
        lines = [f"- You (the {self.title}) argued: {fmt(own)}"]
        lines += [f"- The {_TITLES[a.agent]} argued: {fmt(a)}" for a in others]
        return "\n".join(lines)


class BiasAgent(Agent):
    """Detects biased word choice; rule-based from the lexicon. Report score = bias score."""

    role = "bias"
    prompt = "bias"
    schema = BiasOutput
    title = "bias analyst"
    lens = frozenset({"loaded language", "emotional language", "political labeling", "exaggeration", "framing"})

    def _rule_report(self, cues: Cues) -> AgentReport:
        spans = [lex_span(m, "bias", cues) for m in cues.lex if m.band > self.config.lexicon.confidence_floor]
        bits = [f"{s.text!r} ({s.category}, {s.score:.2f})" for s in spans]
        return self._report(spans, [], bits, "lexicon matches")

    def _from_llm(self, out: BiasOutput, text: str, usage: dict[str, Any]) -> AgentReport:
        spans = [self._span(s.quote, s.category, text, score=out.bias_score, note=s.explanation) for s in out.spans]
        return AgentReport(agent="bias", verdict=out.verdict, confidence=out.confidence, score=out.bias_score,
                           spans=spans, rationale=out.rationale, **usage)


class EvidenceAgent(Agent):
    """Checks grounding: is the loaded content the author's own claim, or a source's words?"""

    role = "evidence"
    prompt = "evidence"
    schema = EvidenceOutput
    title = "evidence analyst"
    lens = frozenset({"loaded language", "emotional language", "political labeling", "exaggeration", "framing"})

    def _rule_report(self, cues: Cues) -> AgentReport:
        floor = self.config.lexicon.confidence_floor
        voice = " (in the author's own voice)"
        spans = [lex_span(m, "evidence", cues, note=voice) for m in cues.lex
                 if m.band > floor and not cues.in_reported(m.start, m.end)]
        spans += [self._cue_span(cues, c, a, b, note=voice) for c, a, b in cues.cues
                  if c in _EVIDENCE_CUES and not cues.in_reported(a, b)]
        spans = _dedupe(spans)
        counter = self._grounding_spans(cues)
        bits = [f"{s.text!r} unattributed" for s in spans]
        rep = self._report(spans, counter, bits, "evaluative phrases in the author's voice")
        if not spans and counter:
            kinds = sorted({s.note for s in counter})
            rep = rep.model_copy(update={"rationale": "no unattributed evaluative phrase; grounded by " + ", ".join(kinds)})
        return rep

    def accepts(self, span: Span, cues: Cues) -> bool:
        """Word-level bias in the author's voice convinces the evidence analyst; a structural claim
        (omission, one-sided selection) convinces it only if the text offers no grounding at all -
        no attributed quotation, named source or figure that would supply what is said to be missing."""
        if span.taxonomy in self.lens:
            return True
        return span.taxonomy in ("omission", "selection") and not cues.grounding

    def _from_llm(self, out: EvidenceOutput, text: str, usage: dict[str, Any]) -> AgentReport:
        spans, counter = [], []
        for e in out.evidence:
            s = self._span(e.quote, "evidence" if e.supports_bias else "grounding", text,
                           score=out.evidence_score if e.supports_bias else 0.0, note=e.explanation)
            (spans if e.supports_bias else counter).append(s)
        return AgentReport(agent="evidence", verdict=out.verdict, confidence=out.confidence, score=out.evidence_score,
                           spans=spans, counter_spans=counter, rationale=out.rationale, **usage)


class FramingAgent(Agent):
    """Finds framing devices: scare quotes, so-called, loaded attribution, labels, passives, sourcing."""

    role = "framing"
    prompt = "framing"
    schema = FramingOutput
    title = "framing analyst"
    lens = frozenset({"framing", "political labeling", "loaded language", "selection", "omission"})

    def _rule_report(self, cues: Cues) -> AgentReport:
        floor = self.config.lexicon.confidence_floor
        spans = [self._cue_span(cues, c, a, b) for c, a, b in cues.cues if c in _FRAMING_CUES]
        spans += [lex_span(m, "framing", cues) for m in cues.lex
                  if m.band > floor and m.taxonomy in ("framing", "political labeling")]
        spans = _dedupe(spans)
        bits = [f"{s.text!r} ({s.category})" for s in spans]
        return self._report(spans, [], bits, "framing patterns")

    def _from_llm(self, out: FramingOutput, text: str, usage: dict[str, Any]) -> AgentReport:
        spans = [self._span(s.quote, s.category, text, score=out.framing_score, note=s.explanation) for s in out.patterns]
        return AgentReport(agent="framing", verdict=out.verdict, confidence=out.confidence, score=out.framing_score,
                           spans=spans, rationale=out.rationale, **usage)


_TITLES = {"bias": BiasAgent.title, "evidence": EvidenceAgent.title, "framing": FramingAgent.title}


class VerifierAgent:
    """Post-consensus check (SPEC 1.7). Rule-based: :func:`mabpd_kit.verify.rule_verify`;
    LLM: asks whether the biased decision survives scrutiny. Either way only biased -> neutral."""

    role = "verifier"

    def __init__(self, config: Config | None = None, llm: "LLM | None" = None, lexicon: "Lexicon | None" = None) -> None:
        self.config = config or Config()
        self.llm = llm if llm is not None and not llm.offline else None
        self.lexicon = lexicon or lexicon_for(self.config)

    @property
    def model(self) -> str | None:
        if self.llm is None:
            return None
        return self.config.agents.models.get("verifier") or self.llm.model

    def verify(self, label: Verdict, spans: Sequence[Span], cues: Cues) -> VerifierReport:
        """Check a decision (rule-based, sync). A neutral label is returned unchanged."""
        if label != "biased":
            return _not_run(label)
        rep = rule_verify(spans, cues.reported, lambda a, b: self.lexicon.protected_reason(cues.text, a, b), self.config)
        return apply_verifier(label, rep)

    async def averify(self, label: Verdict, spans: Sequence[Span], cues: Cues) -> VerifierReport:
        if self.llm is None or label != "biased":
            return self.verify(label, spans, cues)
        cited = "\n".join(f'- "{s.text}" ({s.category}, cited by the {s.agent} agent'
                          + ("" if s.valid else ", NOT FOUND in the article") + ")" for s in spans) or "- none"
        res = await self.llm.astructured(
            _messages("verifier", article=_fence(cues.text), spans=cited), VerifierOutput, model=self.model,
            temperature=self.config.agents.temperature, max_tokens=self.config.agents.max_tokens, tag="mabpd.verifier")
        out: VerifierOutput = res.value
        span = None
        if out.strongest_quote:
            span = ground_span(Span(text=out.strongest_quote, agent="verifier"), cues.text, self.config.text.fuzzy_ratio)
        u = _usage(res, self.model)
        rep = VerifierReport(input_label=label, verdict=out.verdict, label=out.verdict, overturned=False,
                             check="llm", reason=out.reason, span=span, **u)
        return apply_verifier(label, rep)


def _not_run(label: Verdict) -> VerifierReport:
    return VerifierReport(input_label=label, verdict=label, label=label, overturned=False, check="not_run",
                          reason="the verifier only re-examines biased decisions")


def lexicon_for(config: Config) -> "Lexicon":
    """The lexicon a configuration asks for; configurations that differ only outside the
    ``lexicon`` section (ablations, weights) share the default one, loaded once per process."""
    from mabpd_kit.lexicon import Lexicon

    return Lexicon.default() if config.lexicon == Config().lexicon else Lexicon.from_config(config)


def make_agents(config: Config, llm: "LLM | None" = None, lexicon: "Lexicon | None" = None) -> dict[str, Agent]:
    """The enabled agents (``config.agents.enabled``), in role order."""
    classes = {"bias": BiasAgent, "evidence": EvidenceAgent, "framing": FramingAgent}
    return {r: classes[r](config, llm, lexicon) for r in ("bias", "evidence", "framing") if r in config.agents.enabled}


def item_seed(text: str) -> int:
    """A stable per-item seed (anonymised transcripts shuffle with it)."""
    return int.from_bytes(hashlib.sha1(text.encode("utf-8", "replace")).digest()[:4], "big")


async def gather_reports(agents: dict[str, Agent], text: str, cues: Cues) -> dict[str, AgentReport]:
    """Round 1: all agents analyse independently and concurrently."""
    reps = await gather_all(*(a.areport(text, cues) for a in agents.values()))
    return dict(zip(agents, reps))


async def gather_all(*aws: Any) -> list[Any]:
    """``asyncio.gather`` that lets every call of a round finish before raising the first error,
    so no call is left running unaccounted (the item's trace counts what it cost)."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results

