"""The MABPD agents (SPEC 1.2, 1.6): BiasAgent, EvidenceAgent, FramingAgent.

Each is rule-based (``llm=None`` or offline: deterministic, from the shared :class:`~.cues.Cues` scan)
or LLM-backed (a prompt from ``prompts/mabpd/``, a reply validated against the agent's contract).
In a debate a rule-based neutral agent concedes to a valid span in the author's voice within its
``lens``; a biased agent whose every span is reported speech concedes when challenged, and keeps its
verdict with ``sad.doubt`` when all others disagree without refuting it.
"""


from __future__ import annotations

import functools
import hashlib
import importlib
import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from mabpd_kit import prompts, roster
from mabpd_kit.config import Config
from mabpd_kit.injection import Instructions, fence, find_instructions
from mabpd_kit.lexicon.boundaries import evidence_problem
from mabpd_kit.mabpd.cues import (
    CUE_INFO,
    EVIDENCE_CUES,
    FRAMING_CUES,
    Cues,
    analyse_cues,
    counter_biased,
    counter_neutral,
    dedupe,
    ground_span,
    lex_span,
    lexicon_for,
    noisy_or,
    primary,
)
from mabpd_kit.mabpd.schemas import (
    AgentReport,
    Argument,
    ArgumentOutput,
    BiasOutput,
    EvidenceOutput,
    FramingOutput,
    Role,
    reply_format,
)
from mabpd_kit.types import Mode, Span, Usage, Verdict

if TYPE_CHECKING:
    from mabpd_kit.lexicon import Lexicon
    from mabpd_kit.llm import LLM, Structured

__all__ = ["Agent", "BiasAgent", "EvidenceAgent", "FramingAgent", "agent_class", "fence", "item_seed",
           "llm_usage", "make_agents", "messages", "shown"]


def shown(text: str, guard: Instructions | None) -> str:
    """The article as the prompts show it: fenced, its instruction-like stretches withheld."""
    return fence(guard.withheld() if guard else text)


def messages(name: str, contract: type[BaseModel], *, prompts_dir: str | None = None, **values: Any) -> list[dict[str, str]]:
    """Chat messages of ``prompts/mabpd/<name>.md`` (or ``prompts_dir``), ``$reply`` rendered from ``contract``."""
    return prompts.messages("mabpd", name, prompts_dir=prompts_dir, reply=reply_format(contract), **values)


def llm_usage(res: Structured, model: str | None) -> dict[str, Any]:
    """``mode``, ``model`` and ``usage`` of a step made by one structured call (repair retry included)."""
    return {"mode": "llm", "model": res.completion.model or model, "usage": Usage.of(res.calls, repaired=res.repaired)}


def item_seed(text: str) -> int:
    """A stable per-item seed (anonymised transcripts shuffle with it)."""
    return int.from_bytes(hashlib.sha1(text.encode("utf-8", "replace")).digest()[:4], "big")


class Agent(ABC):
    """Common machinery. Subclasses set ``role`` (their roster line), ``schema`` (their reply contract),
    ``lens`` (the taxonomy types that convince them in a debate), ``_rule_report`` and ``_from_llm``."""

    role: ClassVar[Role]
    schema: ClassVar[type[BaseModel]]
    lens: ClassVar[frozenset[str]]

    @property
    def spec(self) -> roster.AgentSpec:
        """This agent's roster line."""
        return roster.get(self.role)

    @property
    def prompt(self) -> str:
        """The report template's name (``prompts/mabpd/<prompt>.md``, or in the line's ``prompts_dir``)."""
        return self.spec.prompt

    @property
    def title(self) -> str:
        """How the debate prompts name this agent ("bias analyst")."""
        return self.spec.title

    def __init__(self, config: Config | None = None, llm: LLM | None = None, lexicon: Lexicon | None = None) -> None:
        self.config = config or Config()
        from mabpd_kit.llm import online  # the LLM layer loads only when an agent is made

        self.llm = online(llm)
        self.lexicon = lexicon or lexicon_for(self.config)
        self._taxonomy: dict[str, str] = dict(self.lexicon.data.get("taxonomy", {}))

    @property
    def mode(self) -> Mode:
        return "rule" if self.llm is None else "llm"

    @functools.cached_property
    def knowledge(self) -> str:
        """The lexicon as prompt knowledge (``lex.prompt_knowledge()``)."""
        return self.lexicon.prompt_knowledge()

    @property
    def model(self) -> str | None:
        """The model this agent asks for (``config.agents.models[role]``, else the endpoint default)."""
        if self.llm is None:
            return None
        return self.config.agents.models.get(self.role) or self.llm.model

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mode={self.mode!r}, model={self.model!r})"

    async def report(self, text: str, cues: Cues | None = None) -> AgentReport:
        """Analyse a cleaned text: rule-based from ``cues`` (computed if missing), or one structured LLM call."""
        if self.llm is None:
            return self._rule_report(cues or analyse_cues(text, self.lexicon, self.config))
        guard = self.guard(text, cues)
        spec = self.spec
        res = await self.llm.astructured(
            messages(spec.prompt, self.schema, prompts_dir=spec.prompts_dir, knowledge=self.knowledge,
                     article=shown(text, guard)),
            self.schema, model=self.model,
            temperature=self.config.agents.temperature, max_tokens=self.config.agents.max_tokens,
            tag=f"mabpd.{self.role}")
        return self._from_llm(res.value, text, llm_usage(res, self.model), guard)

    def guard(self, text: str, cues: Cues | None = None) -> Instructions | None:
        """The text's stretches addressed to the model; None when ``agents.injection_guard`` is off."""
        if not self.config.agents.injection_guard:
            return None
        if cues is not None and cues.text == text:
            return cues.injection or Instructions(text)
        return find_instructions(text)

    def _span(self, quote: str, category: str, text: str, *, score: float, note: str = "",
              guard: Instructions | None = None) -> Span:
        """An LLM-quoted phrase -> grounded Span (taxonomy resolved from the lexicon where possible)."""
        cat = category.strip() or "other"
        c = self.lexicon.categories.get(cat.lower().replace(" ", "_"))
        taxonomy = c.taxonomy if c else (cat.lower() if cat.lower() in self._taxonomy else None)
        meta = self._taxonomy.get(taxonomy) if taxonomy else None
        span = Span(text=quote, category=cat, taxonomy=taxonomy, meta_category=meta, agent=self.role,
                    score=min(max(score, 0.0), 1.0), note=note)
        return ground_span(span, text, self.config.text.fuzzy_ratio, guard, max_share=self.config.text.evidence_max_share)

    def _quoted_report(self, out: Any, quoted: Sequence[Any], score: float, text: str, usage: dict[str, Any],
                       guard: Instructions | None) -> AgentReport:
        """A report from an LLM reply whose quoted spans all support its verdict, each scored ``score``."""
        spans = [self._span(s.quote, s.category, text, score=score, note=s.explanation, guard=guard) for s in quoted]
        return AgentReport(agent=self.role, verdict=out.verdict, confidence=out.confidence, score=score,
                           spans=spans, rationale=out.rationale, counter_argument=out.counter_argument, **usage)

    def _cue_span(self, cues: Cues, cue: str, a: int, b: int, note: str = "") -> Span:
        taxonomy, info = CUE_INFO[cue]
        oa, ob = cues.orig(a, b)
        why = evidence_problem(cues.text, a, b, max_share=cues.max_share)  # the one rule (cues.ground_span)
        return Span(text=cues.text[a:b], start=a, end=b, orig_start=oa, orig_end=ob, category=cue, taxonomy=taxonomy,
                    meta_category=self._taxonomy.get(taxonomy), agent=self.role, score=self.config.agents.cue_bands.get(cue, 0.6),
                    valid=why is None, reason=why or f"cue: {cue}", note=info + note)

    def _grounding_spans(self, cues: Cues) -> list[Span]:
        spans = []
        for kind, a, b in cues.grounding:
            oa, ob = cues.orig(a, b)
            spans.append(Span(text=cues.text[a:b], start=a, end=b, orig_start=oa, orig_end=ob, category="grounding",
                              agent=self.role, score=0.0, valid=True, reason=f"grounding: {kind}", note=kind))
        return dedupe(spans)

    @abstractmethod
    def _rule_report(self, cues: Cues) -> AgentReport:
        """The deterministic analysis from the shared cue scan."""

    @abstractmethod
    def _from_llm(self, out: Any, text: str, usage: dict[str, Any], guard: Instructions | None = None) -> AgentReport:
        """Turn the validated LLM reply into a report with grounded spans (none grounded by ``guard``'s stretches)."""

    def _report(self, spans: list[Span], counter: list[Span], rationale_bits: list[str], what: str, cues: Cues,
                score: float | None = None, none_found: str | None = None) -> AgentReport:
        """A rule-based report: biased iff ``score`` (else the noisy-OR of the bands) reaches the boundary."""
        score = noisy_or([s.score for s in spans]) if score is None else score
        spans = primary(spans, cues)  # the writer's loaded words; adverbials, quotes, reported speech only when alone
        biased = score >= self.config.scoring.boundary
        verdict: Verdict = "biased" if biased else "neutral"
        if spans:
            rationale = f"{what}: " + "; ".join(rationale_bits)
        else:
            rationale = none_found or f"no {what} found"
        return AgentReport(agent=self.role, verdict=verdict, confidence=score if biased else 1.0 - score,
                           score=score, spans=spans, counter_spans=counter, rationale=rationale,
                           counter_argument=counter_biased(self._cited(spans), cues) if biased
                           else counter_neutral(cues, self.config))

    def _cited(self, spans: Sequence[Span]) -> list[Span]:
        """The spans an argument cites: the strongest ``sad.max_spans``."""
        return sorted(spans, key=lambda s: -s.score)[: self.config.sad.max_spans]

    def first_argument(self, report: AgentReport) -> Argument:
        """Round 1 of SAD is the independent report restated as an argument (no extra call)."""
        cited = self._cited(report.spans if report.verdict == "biased" else report.counter_spans)
        return Argument(agent=self.role, round=1, verdict=report.verdict, confidence=report.confidence,
                        spans=cited, rationale=report.rationale, counter_argument=report.counter_argument,
                        mode=report.mode, model=report.model)

    async def revise(self, round: int, own: Argument, others: Sequence[Argument], cues: Cues, *,
                     seed: int = 0) -> Argument:
        """One debate move after reading the others' previous arguments (``seed`` shuffles anonymised ones)."""
        if self.llm is not None:
            return await self._llm_revise(round, own, others, cues, seed=seed)
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
                spans = dedupe([s.model_copy(update={"agent": self.role}) for s in accepted])[: sad.max_spans]
                conf = sad.concession * max(o.confidence for o in backers)
                who = ", ".join(o.agent for o in backers)
                return own.model_copy(update={
                    "round": round, "verdict": "biased", "confidence": conf, "spans": spans, "changed": True,
                    "rationale": f"conceded to {who}: {spans[0].text!r} is {spans[0].taxonomy} in the author's own voice",
                    "counter_argument": counter_biased(spans, cues)})
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
                "counter_argument": counter_neutral(cues, self.config)})
        if others and len(opponents) == len(others):
            return own.model_copy(update={"round": round, "changed": False, "confidence": own.confidence * sad.doubt,
                                          "rationale": "kept, with less confidence: all others disagree but none refutes my spans"})
        return own.model_copy(update={"round": round, "changed": False})

    def accepts(self, span: Span, cues: Cues) -> bool:
        """Is a (valid, author's-voice) span cited by another agent within this agent's expertise?"""
        return span.taxonomy in self.lens

    async def _llm_revise(self, round: int, own: Argument, others: Sequence[Argument], cues: Cues, *,
                          seed: int) -> Argument:
        transcript = self._transcript(own, others, seed=seed + round)
        guard = self.guard(cues.text, cues)
        res = await self.llm.astructured(
            messages("debate", ArgumentOutput, article=shown(cues.text, guard), transcript=fence(transcript),
                     role=self.title, round=round, max_spans=self.config.sad.max_spans),
            ArgumentOutput, model=self.model, temperature=self.config.agents.temperature,
            max_tokens=self.config.agents.max_tokens, tag=f"mabpd.debate.{self.role}")
        out: ArgumentOutput = res.value
        spans = [self._span(q, "evidence", cues.text, score=out.confidence, guard=guard)
                 for q in out.evidence[: self.config.sad.max_spans]]
        return Argument(agent=self.role, round=round, verdict=out.verdict, confidence=out.confidence, spans=spans,
                        counter_argument=out.counter_argument, rationale=out.rationale,
                        changed=out.verdict != own.verdict, **llm_usage(res, self.model))

    def _transcript(self, own: Argument, others: Sequence[Argument], *, seed: int) -> str:
        """Previous arguments as text: by role, or (``sad.anonymise``) unlabelled and shuffled, own included."""

        def fmt(a: Argument) -> str:
            ev = "; ".join(f'"{s.text}"' + ("" if s.valid else " (NOT FOUND in the article)") for s in a.spans) or "none"
            return (f"verdict: {a.verdict}, confidence: {a.confidence:.2f}\n  evidence: {ev}\n"
                    f"  reasoning: {a.rationale}\n  anticipated counter-argument: {a.counter_argument}")

        if self.config.sad.anonymise:
            items = [own, *others]
            random.Random(seed).shuffle(items)
            return "\n".join(f"- An analyst argued: {fmt(a)}" for a in items)
        lines = [f"- You (the {self.title}) argued: {fmt(own)}"]
        lines += [f"- The {roster.get(a.agent).title} argued: {fmt(a)}" for a in others]
        return "\n".join(lines)


class BiasAgent(Agent):
    """Detects biased word choice; rule-based from the lexicon. Report score = bias score."""

    role = "bias"
    schema = BiasOutput
    lens = frozenset({"loaded language", "emotional language", "political labeling", "exaggeration", "framing"})

    def _rule_report(self, cues: Cues) -> AgentReport:
        spans = [lex_span(m, self.role, cues) for m in cues.lex if m.band > self.config.lexicon.confidence_floor]
        bits = [f"{s.text!r} ({s.category}, {s.score:.2f})" for s in spans]
        score = None  # "noisy_or": the bands combined
        if self.config.lexicon.signal == "max":  # SPEC 2: the highest-scoring match above the floor
            sig = self.lexicon.signal(cues.text) if cues.injection is None else _signal(cues, self.config)
            score = sig.band if sig is not None else 0.0
            if sig is not None:
                bits.append(f"signal {sig.text!r} ({sig.band:.2f})")
        return self._report(spans, [], bits, "lexicon matches", cues, score=score)

    def _from_llm(self, out: BiasOutput, text: str, usage: dict[str, Any], guard: Instructions | None = None) -> AgentReport:
        return self._quoted_report(out, out.spans, out.bias_score, text, usage, guard)


class EvidenceAgent(Agent):
    """Checks grounding: is the loaded content the author's own claim, or a source's words?"""

    role = "evidence"
    schema = EvidenceOutput
    lens = frozenset({"loaded language", "emotional language", "political labeling", "exaggeration", "framing"})

    def _rule_report(self, cues: Cues) -> AgentReport:
        floor = self.config.lexicon.confidence_floor
        voice = " (in the author's own voice)"
        spans = [lex_span(m, self.role, cues, note=voice) for m in cues.lex
                 if m.band > floor and not cues.in_reported(m.start, m.end)]
        spans += [self._cue_span(cues, c, a, b, note=voice) for c, a, b in cues.cues
                  if c in EVIDENCE_CUES and not cues.in_reported(a, b)]
        spans = dedupe(spans)
        counter = self._grounding_spans(cues)
        bits = [f"{s.text!r} unattributed" for s in spans]
        grounded = "no unattributed evaluative phrase; grounded by " + ", ".join(sorted({s.note for s in counter})) \
            if not spans and counter else None
        return self._report(spans, counter, bits, "evaluative phrases in the author's voice", cues, none_found=grounded)

    def accepts(self, span: Span, cues: Cues) -> bool:
        """Word-level bias in the author's voice; omission or selection only where nothing grounds the text."""
        if span.taxonomy in self.lens:
            return True
        return span.taxonomy in ("omission", "selection") and not cues.grounding

    def _from_llm(self, out: EvidenceOutput, text: str, usage: dict[str, Any], guard: Instructions | None = None) -> AgentReport:
        spans, counter = [], []
        for e in out.evidence:
            s = self._span(e.quote, "evidence" if e.supports_bias else "grounding", text,
                           score=out.evidence_score if e.supports_bias else 0.0, note=e.explanation, guard=guard)
            (spans if e.supports_bias else counter).append(s)
        return AgentReport(agent=self.role, verdict=out.verdict, confidence=out.confidence, score=out.evidence_score,
                           spans=spans, counter_spans=counter, rationale=out.rationale,
                           counter_argument=out.counter_argument, **usage)


class FramingAgent(Agent):
    """Finds framing devices: scare quotes, so-called, loaded attribution, labels, passives, sourcing."""

    role = "framing"
    schema = FramingOutput
    lens = frozenset({"framing", "political labeling", "loaded language", "selection", "omission"})

    def _rule_report(self, cues: Cues) -> AgentReport:
        floor = self.config.lexicon.confidence_floor
        spans = [self._cue_span(cues, c, a, b) for c, a, b in cues.cues if c in FRAMING_CUES]
        spans += [lex_span(m, self.role, cues) for m in cues.lex
                  if m.band > floor and m.taxonomy in ("framing", "political labeling")]
        spans = dedupe(spans)
        bits = [f"{s.text!r} ({s.category})" for s in spans]
        return self._report(spans, [], bits, "framing patterns", cues)

    def _from_llm(self, out: FramingOutput, text: str, usage: dict[str, Any], guard: Instructions | None = None) -> AgentReport:
        return self._quoted_report(out, out.patterns, out.framing_score, text, usage, guard)


def _signal(cues: Cues, config: Config) -> Any:
    """``Lexicon.signal`` over the matches the cues kept (none inside text addressed to the model)."""
    best = None
    for m in cues.lex:
        if m.band > config.lexicon.confidence_floor and (best is None or (m.band, m.end - m.start) > (best.band, best.end - best.start)):
            best = m
    return best


def agent_class(spec: roster.AgentSpec) -> type[Agent]:
    """The class of a roster line (``"module:Class"`` imported here, above the roster)."""
    cls = spec.cls
    if isinstance(cls, str):
        module, _, attr = cls.partition(":")
        cls = getattr(importlib.import_module(module), attr)
    if not (isinstance(cls, type) and issubclass(cls, Agent)) or cls.role != spec.name:
        raise TypeError(f"roster line {spec.name!r}: {cls!r} is not an Agent class with role {spec.name!r}")
    return cls


def make_agents(config: Config, llm: LLM | None = None, lexicon: Lexicon | None = None) -> dict[str, Agent]:
    """The enabled agents (``config.agents.enabled``), in roster order."""
    return {s.name: agent_class(s)(config, llm, lexicon) for s in roster.specs() if s.name in config.agents.enabled}
