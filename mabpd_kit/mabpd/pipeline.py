"""The MABPD pipeline (SPEC 1): one forward pass to a :class:`Decision` with its full trace."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import itertools
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, Field, PrivateAttr

from mabpd_kit import runs
from mabpd_kit.config import Config
from mabpd_kit.language import document_language
from mabpd_kit.mabpd import sad
from mabpd_kit.mabpd.agents import item_seed, make_agents
from mabpd_kit.mabpd.cues import Cues, analyse_cues, lexicon_for
from mabpd_kit.mabpd.evidence import decision_evidence
from mabpd_kit.mabpd.router import Route, Routing, route
from mabpd_kit.mabpd.sad import SADResult
from mabpd_kit.mabpd.schemas import AgentReport, Argument
from mabpd_kit.mabpd.store import EvidenceStore, ScoreBreakdown, score_reports
from mabpd_kit.mabpd.verifier import VerifierAgent, VerifierReport
from mabpd_kit.text import CleanText, clean, truncate_words
from mabpd_kit.types import Mode, Span, Usage, Verdict

if TYPE_CHECKING:
    import pandas as pd

    from mabpd_kit.lexicon import Lexicon
    from mabpd_kit.llm import LLM

__all__ = ["BatchResult", "Decision", "Pipeline", "RunOptions", "decision_evidence"]

_FAIL_FLAGS = {"empty": "empty input (nothing left after cleaning)", "not_text": "input is not text"}


class Decision(BaseModel):
    """One item's result and its full trace (JSON-serialisable; checkpoints store it as is)."""

    id: str
    text: str = Field(description="the input as given (after coercion to str)")
    clean_text: str = ""
    gold: int | None = None
    label: Verdict | None = None
    pred: int | None = None
    score: float | None = None
    route: Route = "failed"
    reports: dict[str, AgentReport] = Field(default_factory=dict)
    store: EvidenceStore | None = None
    scoring: ScoreBreakdown | None = None
    routing: Routing | None = None
    debate: SADResult | None = None
    pre_verifier_label: Verdict | None = None
    verifier: VerifierReport | None = None
    mode: Mode = "rule"
    models: dict[str, str | None] = Field(default_factory=dict)
    usage: Usage = Field(Usage(), description="LLM usage of every step (failed items: the calls made)")
    latency_s: float = Field(0.0, description="wall-clock time of this item")
    failed: bool = False
    error: str | None = None
    flags: list[str] = Field(default_factory=list)
    language: str | None = Field(None, description="detected ISO 639-1 code ('und' = undetermined; None = not detected)")
    injection: list[Span] = Field(default_factory=list, description="instruction-like text addressed to the model "
                                  "(flag 'injection'): withheld from the prompts, grounds no verdict")
    #: the typed kind of a failure in this process (the exception's ``kind``, e.g. ``llm.errors.Failure``); not
    #: stored: a checkpoint keeps the reason text
    _failure_kind: Any = PrivateAttr(default=None)

    @property
    def failure_kind(self) -> Any:
        """The failure's typed kind when it was decided in this process (``None`` otherwise)."""
        return self._failure_kind

    def spans(self, valid_only: bool = False) -> list[Span]:
        """Every span in the EvidenceStore (offsets in ``clean_text``; ``orig_*`` in ``text``)."""
        if self.store is None:
            return []
        return self.store.valid() if valid_only else list(self.store.spans)

    def explanation(self) -> str:
        """A compact, human-readable account of how the label came about."""
        if self.failed:
            return f"[{self.id}] FAILED: {self.error}"
        lines = [f"[{self.id}] {self.label.upper()} (score {self.score:.2f}, route {self.route})"]
        for a, r in self.reports.items():
            top = ", ".join(repr(s.text) for s in r.spans[:3] if s.valid) or "-"
            lines.append(f"  {a:<8} {r.verdict:<7} conf {r.confidence:.2f} score {r.score:.2f}  spans: {top}")
        if self.injection:
            lines.append("  injection: " + "; ".join(f"{s.text[:60]!r} ({s.category})" for s in self.injection)
                         + " - addressed to the model: withheld from the prompts, grounds no verdict")
        if self.scoring and self.scoring.ungrounded:
            lines.append(f"  burden of proof: {', '.join(self.scoring.ungrounded)} said biased without a valid span "
                         "(score component 0)")
        if self.routing:
            lines.append(f"  router: {self.routing.reason}")
        if self.debate:
            for rnd in self.debate.rounds:
                args = "; ".join(f"{w.agent} {w.verdict} k={w.k:.2f}{' (changed)' if w.argument.changed else ''}"
                                 for w in rnd.arguments)
                lines.append(f"  SAD round {rnd.index}: {args} -> B={rnd.vote.B:.3f} N={rnd.vote.N:.3f} {rnd.vote.label}")
        if self.verifier and self.verifier.check != "not_run":
            verb = "overturned" if self.verifier.overturned else "upheld"
            lines.append(f"  verifier {verb}: {self.verifier.reason}")
        u = self.usage
        if u.calls:
            lines.append(f"  {u.calls} LLM calls, {u.prompt_tokens}+{u.completion_tokens} tokens, {self.latency_s:.2f} s")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explanation()

    def row(self) -> dict[str, Any]:
        """The flat summary row used by :meth:`BatchResult.to_frame`."""
        return {"id": self.id, "text": self.text, "gold": self.gold, "label": self.label, "pred": self.pred,
                "score": self.score, "route": self.route, "failed": self.failed, "error": self.error,
                "calls": self.usage.calls, "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens, "latency_s": self.latency_s,
                "verifier_overturned": bool(self.verifier and self.verifier.overturned),
                "debate_rounds": len(self.debate.rounds) if self.debate else 0,
                "flags": ",".join(self.flags)}

    def to_frame(self) -> pd.DataFrame:
        """One row per agent report: verdict, confidence, score, spans (valid/all), usage."""
        import pandas as pd

        rows = [{"id": self.id, "agent": a, "verdict": r.verdict, "confidence": r.confidence, "score": r.score,
                 "n_spans": len(r.spans), "n_valid": sum(s.valid for s in r.spans), "mode": r.mode,
                 "model": r.model, "calls": r.usage.calls, "prompt_tokens": r.usage.prompt_tokens,
                 "completion_tokens": r.usage.completion_tokens, "rationale": r.rationale,
                 "label": self.label, "route": self.route, "final_score": self.score}
                for a, r in self.reports.items()]
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (what the checkpoint stores)."""
        return self.model_dump(mode="json")


class BatchResult(runs.Results[Decision]):
    """Decisions of a batch in input order (``.decisions``), the run's bookkeeping and :meth:`metrics`."""

    @property
    def decisions(self) -> list[Decision]:
        return self.records

    def metrics(self) -> dict[str, float]:
        """Accuracy, precision, recall, F1, macro F1 (positive = biased) over gold items that did not fail."""
        from mabpd_kit import metrics as m

        scored = [d for d in self.records if not d.failed and d.gold is not None]
        y, p = [d.gold for d in scored], [d.pred for d in scored]
        out: dict[str, float] = {**super().metrics(), "n": len(scored), "failed": len(self.failed),
                                 "no_gold": sum(1 for d in self.records if d.gold is None and not d.failed)}
        if scored:
            out.update(accuracy=m.accuracy(y, p), precision=m.precision(y, p), recall=m.recall(y, p),
                       f1=m.f1(y, p), macro_f1=m.macro_f1(y, p))
        return out


def _raw(text: Any) -> str:
    return text if isinstance(text, str) else ("" if text is None else str(text))


def _gold(g: Any) -> int | None:
    if g is None or (isinstance(g, float) and g != g):
        return None
    if isinstance(g, str):
        return {"biased": 1, "neutral": 0, "1": 1, "0": 0}.get(g.strip().lower())
    return int(g)


@dataclass(frozen=True)
class RunOptions:
    """How a pipeline runs its items: ``detect_language`` (None: ``config.text.detect_language``)."""

    detect_language: bool | None = None


@dataclass(frozen=True)
class _Prepared:
    """The input prepared: the Decision's fields so far, the cleaned text, and why it cannot be decided."""

    fields: dict[str, Any]
    clean: CleanText | None = None
    error: BaseException | None = None


class _Trace(NamedTuple):
    """What :func:`decision_evidence` reads of a decision that is being made."""

    reports: dict[str, AgentReport]
    debate: SADResult | None
    clean_text: str


def _final(trace: dict[str, Any]) -> dict[str, Any]:
    """The label after the verifier and the item's usage (round 1 of a debate restates the reports: no calls)."""
    verifier: VerifierReport | None = trace.get("verifier")
    label = verifier.label if verifier is not None else trace["label"]
    steps: list[Any] = list(trace["reports"].values())
    if trace.get("debate"):
        steps += [w.argument for r in trace["debate"].rounds[1:] for w in r.arguments]
    if verifier is not None:
        steps.append(verifier)
    used = [s.usage for s in steps if s.usage.calls]
    return {"pre_verifier_label": trace["label"], "label": label, "pred": 1 if label == "biased" else 0,
            "usage": Usage.total(used) if used else Usage()}


def _failed(trace: dict[str, Any], exc: BaseException, usage: Usage = Usage(), latency_s: float = 0.0) -> Decision:
    """A failed Decision: the stages that finished, the reason, the calls made before the failure."""
    d = Decision(**{**trace, "failed": True, "route": "failed", "label": None, "pred": None,
                    "error": f"{type(exc).__name__}: {exc}", "usage": usage, "latency_s": latency_s})
    d._failure_kind = getattr(exc, "kind", None)
    return d


class Pipeline:
    """MABPD end to end: ``llm=None`` (or offline) -> rule-based agents, an online LLM -> LLM agents."""

    def __init__(self, config: Config | None = None, llm: LLM | None = None, lexicon: Lexicon | None = None,
                 options: RunOptions = RunOptions()) -> None:
        from mabpd_kit.llm import online  # the LLM layer loads only when a pipeline is made

        self.config = config or Config()
        self.options = options
        self.llm = online(llm)
        self.lexicon = lexicon or lexicon_for(self.config)
        self.agents = make_agents(self.config, self.llm, self.lexicon)
        self.verifier = VerifierAgent(self.config, self.llm, self.lexicon)
        self._models = {a: ag.model for a, ag in self.agents.items()}  # what every Decision records (a copy each)

    @property
    def mode(self) -> Mode:
        return "rule" if self.llm is None else "llm"

    @property
    def detect_language(self) -> bool:
        """Is each item's language detected (:class:`RunOptions`, else ``config.text.detect_language``)?"""
        on = self.options.detect_language
        return self.config.text.detect_language if on is None else on

    def with_options(self, **changes: Any) -> Pipeline:
        """The same pipeline with other :class:`RunOptions`, e.g. ``detect_language=False``."""
        other = copy.copy(self)
        other.options = dataclasses.replace(self.options, **changes)
        return other

    def __repr__(self) -> str:
        where = "rule-based (offline)" if self.llm is None else f"LLM {self.llm.model} at {self.llm.endpoint}"
        return f"Pipeline({where}, agents={list(self.agents)})"

    def fingerprint(self) -> str:
        """What a checkpoint of this pipeline is valid for: the configuration and the models."""
        models = "rule" if self.llm is None else {**{a: ag.model for a, ag in self.agents.items()},
                                                  "verifier": self.verifier.model}
        return runs.fingerprint(self.config, models)

    def analyze(self, text: Any, id: str | None = None, gold: Any = None) -> Decision:
        """Analyse one sentence or article. Never raises on bad input: returns a failed Decision."""
        return runs.complete(self.aanalyze(text, id=id, gold=gold), offline=self.llm is None)

    async def aanalyze(self, text: Any, id: str | None = None, gold: Any = None, *,
                       reports: dict[str, AgentReport] | None = None, in_batch: bool = False) -> Decision:
        """One decision, the core of :meth:`analyze`, :meth:`redecide` and :meth:`analyze_many`. ``reports``:
        round-1 reports to reuse; ``in_batch``: a refused key (401/403) propagates to stop the batch."""
        id = str(id) if id is not None else runs.digest(_raw(text))[:12]
        t0 = time.perf_counter()
        base = {"id": id, "text": _raw(text), "gold": _gold(gold), "mode": self.mode, "models": self._models}
        prep = self._prepare(text)
        trace = {**base, **prep.fields}
        if prep.error is not None:
            return _failed(trace, prep.error)
        with self._collect() as made:  # on failure, the trace still shows the calls the item cost
            try:
                await self._decide(prep.clean, reports, trace)
            except Exception as exc:  # one item never stops a batch; the reason is kept
                if in_batch and getattr(exc, "batch_fatal", False):
                    raise
                return _failed(trace, exc, Usage.of(made), time.perf_counter() - t0)
        return Decision(**{**trace, **_final(trace)}, latency_s=time.perf_counter() - t0)

    async def _decide(self, ct: CleanText, reports: dict[str, AgentReport] | None, trace: dict[str, Any]) -> None:
        """Cues -> agents (round 1) -> store, score, route -> SAD if routed there -> verifier."""
        cues = analyse_cues(ct.text, self.lexicon, self.config, ct.to_orig)
        if cues.injection:
            trace["flags"] = [*trace["flags"], "injection"]
            trace["injection"] = [Span(text=i.text, start=i.start, end=i.end, orig_start=cues.orig(i.start, i.end)[0],
                                       orig_end=cues.orig(i.start, i.end)[1], category=i.kind, agent="guard",
                                       valid=False, reason="instruction-like text addressed to the model")
                                  for i in cues.injection]
        known = {a: r for a, r in (reports or {}).items() if a in self.agents}
        todo = [a for a in self.agents if a not in known]
        fresh = dict(zip(todo, await runs.gather(*(self.agents[a].report(ct.text, cues) for a in todo))))
        trace.update(self._score(cues, {a: known.get(a) or fresh[a] for a in self.agents}))
        if trace["route"] == "debate":
            trace["debate"] = await self._debate(trace["reports"], cues)
            trace["label"] = trace["debate"].label
        if self.config.verifier.enabled and trace["label"] == "biased":
            quotes = [(q.start, q.end) for q in cues.quotes]
            spans = decision_evidence(_Trace(trace["reports"], trace.get("debate"), ct.text), marks=quotes)
            trace["verifier"] = await self.verifier.verify("biased", spans, cues)

    def _score(self, cues: Cues, reports: dict[str, AgentReport]) -> dict[str, Any]:
        """The store (every span, raw offsets filled), the grounded score and the route."""
        spans = [s for r in reports.values() for s in (*r.spans, *r.counter_spans)]
        store = EvidenceStore.build(cues.text, spans, ratio=self.config.text.fuzzy_ratio, to_orig=cues.orig)
        scoring = score_reports(reports, self.config)  # grounded: SPEC 1.4's burden of proof
        routing = route(reports, scoring.score, self.config)
        return {"reports": reports, "store": store, "scoring": scoring, "score": scoring.score, "routing": routing,
                "route": routing.route, "label": routing.label}

    async def _debate(self, reports: dict[str, AgentReport], cues: Cues) -> SADResult:
        first = [self.agents[a].first_argument(r) for a, r in reports.items()]
        seed = item_seed(cues.text)

        async def revise(agent: str, rnd: int, own: Argument, others: list[Argument]) -> Argument:
            return await self.agents[agent].revise(rnd, own, others, cues, seed=seed)

        return await sad.debate(first, revise, self.config)

    def redecide(self, decision: Decision) -> Decision:
        """Decide again under this configuration, reusing ``decision``'s round-1 reports (no calls for them);
        agent settings (cue bands, models, prompts) need :meth:`analyze`."""
        coro = self.aanalyze(decision.text, id=decision.id, gold=decision.gold, reports=dict(decision.reports))
        return runs.complete(coro, offline=self.llm is None)

    def redecide_many(self, decisions: BatchResult | Sequence[Decision], progress: bool = False) -> BatchResult:
        """:meth:`redecide` for a batch (e.g. a weight slider over a stored run). Failed items stay failed."""
        from tqdm.auto import tqdm

        t0 = time.perf_counter()
        items = list(decisions)
        out = [d if d.failed else self.redecide(d) for d in tqdm(items, disable=not progress, desc="re-deciding")]
        return BatchResult(out, wall_s=time.perf_counter() - t0)

    def _collect(self) -> contextlib.AbstractContextManager[list[Any]]:
        """The completions made inside (LLM path); nothing to collect rule-based."""
        if self.llm is None:
            return contextlib.nullcontext([])
        from mabpd_kit.llm.usage import collect

        return collect()

    def _prepare(self, text: Any) -> _Prepared:
        """Decode, clean, truncate and (``detect_language``) detect the language of one input."""
        if isinstance(text, (bytes, bytearray)) and b"\x00" in text:
            return _Prepared({}, error=ValueError("binary input (NUL bytes)"))
        if isinstance(text, str) and "\x00" in text:
            return _Prepared({}, error=ValueError("binary input (NUL characters)"))
        ct = clean(text, max_chars=self.config.text.max_chars)
        flags = list(ct.flags)
        bad = [f for f in ct.flags if f in _FAIL_FLAGS]
        if bad:
            return _Prepared({"flags": flags}, error=ValueError(_FAIL_FLAGS[bad[0]]))
        if self.config.text.truncate_words:
            tr = truncate_words(ct.text, self.config.text.truncate_words)
            if tr.truncated:  # a prefix of the cleaned text: its offset map is a prefix of the map
                flags.append("truncated")
                n = len(tr.text)
                ct = CleanText(text=tr.text, raw=ct.raw, flags=ct.flags, src_start=ct.src_start[:n], src_end=ct.src_end[:n])
        fields: dict[str, Any] = {"flags": flags, "text": ct.raw, "clean_text": ct.text}  # raw offsets point into text
        why = None
        if self.detect_language:
            fields["language"], why = self._language(ct.text)
            if fields["language"] not in ("und", *self.config.text.languages):
                flags.append("unsupported_language")
        return _Prepared(fields, ct, None if why is None else ValueError(why))

    def _language(self, text: str) -> tuple[str, str | None]:
        """The item's language and why the rule-based agents cannot decide it (or None)."""
        known = tuple(self.config.text.languages)
        lang = document_language(text, min_chars=self.config.text.language_min_chars, assume=known[0] if known else "en")
        if lang == "und" or lang in known or self.llm is not None:
            return lang, None
        return lang, (f"unsupported language {lang!r}: the rule-based agents know {', '.join(known)}; "
                      f"use an LLM endpoint, or add {lang!r} to text.languages")

    def analyze_many(self, texts: Iterable[Any], ids: Sequence[Any] | None = None, gold: Sequence[Any] | None = None,
                     checkpoint: str | Path | None = None, progress: bool = True,
                     retry_failed: bool = True) -> BatchResult:
        """Analyse many items, streaming to ``checkpoint`` (JSONL); a rerun resumes, retrying failed items
        unless ``retry_failed=False``."""
        sized = all(x is None or isinstance(x, Sequence) for x in (texts, ids, gold)) and isinstance(texts, Sequence)
        if sized and ((ids is not None and len(ids) != len(texts)) or (gold is not None and len(gold) != len(texts))):
            raise ValueError("texts, ids and gold must have the same length")
        id_iter = (str(i) for i in ids) if ids is not None else (str(k) for k in itertools.count())
        gold_iter = iter(gold) if gold is not None else itertools.repeat(None)
        # a stream: the items are made as the runner reads them (texts may be a generator over a large file)
        items = (runs.Item(i, (t, g), runs.digest(_raw(t))) for t, i, g in zip(texts, id_iter, gold_iter))
        if sized:
            items = list(items)  # type: ignore[assignment]

        async def step(item: runs.Item) -> Decision:
            text, g = item.data
            return await self.aanalyze(text, id=item.id, gold=g, in_batch=True)

        def fail(item: runs.Item, exc: BaseException) -> Decision:
            text, g = item.data
            return _failed({"id": item.id, "text": _raw(text), "gold": _gold(g), "mode": self.mode}, exc)

        res = runs.run(items, step, record=Decision, fail=fail, checkpoint=checkpoint, fingerprint=self.fingerprint(),
                       concurrency=None if self.llm is None else 4 * self.llm.concurrency,
                       retry_failed=retry_failed, progress=f"MABPD ({self.mode})" if progress else False,
                       results=BatchResult, deadline_s=None if self.llm is None else self.llm.item_deadline(self.config.llm.item_deadline_s))
        if progress:
            runs.results.status(f"MABPD {self.mode}: {res.summary()}")
        return res
