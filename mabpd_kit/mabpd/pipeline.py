"""The MABPD pipeline (SPEC 1): text -> three agents -> EvidenceStore -> score -> router ->
(fast path | Structured Argument Debate) -> verifier -> :class:`Decision` with the full trace.

Burden of proof at every step where a biased label can arise: the score uses grounded agent
scores, the router counts only biased verdicts with a valid span, SAD weighs an ungrounded biased
argument at zero, and the verifier cannot uphold a biased decision without a valid span. The
ablations (SPEC 1.9) are router modes: ``single-agent`` is the BiasAgent's grounded verdict alone,
``no-debate`` the grounded score against the boundary (see :mod:`.router`).

>>> from mabpd_kit.mabpd import Pipeline
>>> p = Pipeline()                                   # no LLM: deterministic rule-based agents
>>> d = p.analyze("Democrats rammed through a so-called reform.")
>>> d.label, d.route
('biased', 'strong_fast_path')

Everything a notebook draws comes from the :class:`Decision`: ``d.reports`` (every agent's
report), ``d.store`` (all spans, invalid ones kept and marked), ``d.scoring``, ``d.routing``,
``d.debate`` (rounds, arguments with their q/f/g/k factors, votes B/N), ``d.verifier`` and
``d.usage`` (calls, tokens; ``d.latency_s`` is the item's wall time). ``mabpd_kit.viz.pipeline``
draws it (``show(d)`` highlights the spans).

One decision is one coroutine, :meth:`Pipeline.aanalyze`: with an LLM the agents of a round run
concurrently; rule-based, the same code never waits on anything and runs without an event loop
(:meth:`Pipeline.analyze` is ``runs.complete(self.aanalyze(...))``).

Running many items: :meth:`Pipeline.analyze_many` goes through the one batch runner
(:func:`mabpd_kit.runs.run`): each finished decision is appended to a JSONL checkpoint keyed by
id, text digest and the configuration's fingerprint; run it again with the same checkpoint and it
resumes, skipping finished items (and with the LLM cache, repeated calls cost nothing). A failing
item - bad input, an endpoint error, a reply that stays malformed after the repair retry, with
the rule-based agents a language they do not know (``config.text.languages``) - is recorded with ``failed=True``, its reason and the calls it cost; the batch goes on. With an LLM
many items run at once and every call waits for a slot of the endpoint's limit
(``config.llm.concurrency``).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from pydantic import BaseModel, Field

from mabpd_kit import runs
from mabpd_kit.config import Config
from mabpd_kit.mabpd import sad
from mabpd_kit.mabpd.agents import item_seed, make_agents
from mabpd_kit.mabpd.cues import analyse_cues, lexicon_for, respan
from mabpd_kit.mabpd.evidence import decision_evidence
from mabpd_kit.mabpd.router import Route, Routing, route
from mabpd_kit.mabpd.sad import SADResult
from mabpd_kit.mabpd.schemas import AgentReport, Argument
from mabpd_kit.mabpd.store import EvidenceStore, ScoreBreakdown, score_reports
from mabpd_kit.mabpd.verifier import VerifierAgent, VerifierReport
from mabpd_kit.language import document_language
from mabpd_kit.text import CleanText, clean, truncate_words
from mabpd_kit.types import Mode, Span, Usage, Verdict

if TYPE_CHECKING:
    import pandas as pd

    from mabpd_kit.lexicon import Lexicon
    from mabpd_kit.llm import LLM

__all__ = ["BatchResult", "Decision", "Pipeline", "decision_evidence"]

_FAIL_FLAGS = {"empty": "empty input (nothing left after cleaning)", "not_text": "input is not text"}


def _record(d: "Decision", **fields: Any) -> None:
    """``d.<field> = value`` for several fields, without pydantic's ``__setattr__`` for each (0.5 us; Decision
    does not validate assignment, a test checks it: assigning is storing the value and marking the field set)."""
    d.__dict__.update(fields)
    d.__pydantic_fields_set__.update(fields)


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

    # -- views ---------------------------------------------------------------------------------
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

    def to_frame(self) -> "pd.DataFrame":
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
    """Decisions of a batch, in input order (``.decisions``), with the run's bookkeeping
    (``checkpoint``, ``resumed``, ``wall_s``, ``usage``, ``failed``) and :meth:`metrics`."""

    @property
    def decisions(self) -> list[Decision]:
        return self.records

    def metrics(self) -> dict[str, float]:
        """Accuracy, precision, recall, binary F1 (positive = biased) and macro F1 over the items that
        have a gold label and did not fail, plus the counts (``n`` scored, ``failed``, ``no_gold``) and usage."""
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


class Pipeline:
    """MABPD end to end. ``llm=None`` (or offline) -> rule-based agents; an online LLM -> LLM agents.

    ``Pipeline(config.ablation("no-debate"))`` runs an ablation with the same trace.
    """

    def __init__(self, config: Config | None = None, llm: "LLM | None" = None, lexicon: "Lexicon | None" = None) -> None:
        from mabpd_kit.llm import online  # the LLM layer loads only when a pipeline is made

        self.config = config or Config()
        self.llm = online(llm)
        self.lexicon = lexicon or lexicon_for(self.config)
        self.agents = make_agents(self.config, self.llm, self.lexicon)
        self.verifier = VerifierAgent(self.config, self.llm, self.lexicon)
        self._models = {a: ag.model for a, ag in self.agents.items()}  # what every Decision records (a copy each)

    @property
    def mode(self) -> Mode:
        return "rule" if self.llm is None else "llm"

    def __repr__(self) -> str:
        where = "rule-based (offline)" if self.llm is None else f"LLM {self.llm.model} at {self.llm.endpoint}"
        return f"Pipeline({where}, agents={list(self.agents)})"

    def fingerprint(self) -> str:
        """What a checkpoint of this pipeline is valid for: the configuration and the models."""
        models = "rule" if self.llm is None else {**{a: ag.model for a, ag in self.agents.items()},
                                                  "verifier": self.verifier.model}
        return runs.fingerprint(self.config, models)

    # -- one item ----------------------------------------------------------------------------------
    def analyze(self, text: Any, id: str | None = None, gold: Any = None) -> Decision:
        """Analyse one sentence or article. Never raises on bad input: returns a failed Decision."""
        return runs.complete(self.aanalyze(text, id=id, gold=gold), offline=self.llm is None)

    async def aanalyze(self, text: Any, id: str | None = None, gold: Any = None, *,
                       reports: dict[str, AgentReport] | None = None, in_batch: bool = False) -> Decision:
        """One decision (the one core of :meth:`analyze`, :meth:`redecide` and :meth:`analyze_many`).
        ``reports``: round-1 reports to reuse instead of asking the agents (see :meth:`redecide`).
        ``in_batch``: a refused key (401/403) propagates, so the batch runner stops the batch and says it
        once; otherwise it too becomes a failed Decision."""
        id = str(id) if id is not None else runs.digest(_raw(text))[:12]
        t0 = time.perf_counter()
        d, ct = self._start(text, id, gold)
        if d.failed:
            return d
        with self._collect() as made:  # on failure, the trace still shows the calls the item cost
            try:
                return self._finish(await self._decide(d, ct, reports), t0)
            except Exception as exc:  # one item never stops a batch; the reason is kept
                if in_batch and getattr(exc, "batch_fatal", False):
                    raise
                return self._fail(d, exc, t0, made)

    async def _decide(self, d: Decision, ct: "CleanText", reports: dict[str, AgentReport] | None) -> Decision:
        """Agents (round 1) -> store, score, router -> SAD if routed there -> verifier."""
        cues = analyse_cues(ct.text, self.lexicon, self.config, ct.to_orig)
        if cues.injection:
            d.flags.append("injection")
            d.injection = [Span(text=i.text, start=i.start, end=i.end, orig_start=ct.to_orig(i.start, i.end)[0],
                                orig_end=ct.to_orig(i.start, i.end)[1], category=i.kind, agent="guard", valid=False,
                                reason="instruction-like text addressed to the model") for i in cues.injection]
        known = {a: r for a, r in (reports or {}).items() if a in self.agents}
        todo = [a for a in self.agents if a not in known]
        fresh = dict(zip(todo, await runs.gather(*(self.agents[a].report(ct.text, cues) for a in todo))))
        self._route(d, ct, {a: known.get(a) or fresh[a] for a in self.agents})
        if d.route == "debate":
            first = [self.agents[a].first_argument(r) for a, r in d.reports.items()]
            seed = item_seed(ct.text)

            async def revise(agent: str, rnd: int, own: Argument, others: list[Argument]) -> Argument:
                return await self.agents[agent].revise(rnd, own, others, cues, seed=seed)

            debate = await sad.debate(first, revise, self.config)
            _record(d, debate=debate, label=debate.label)
        if self.config.verifier.enabled and d.label == "biased":
            _record(d, verifier=await self.verifier.verify("biased", decision_evidence(d), cues))
        return d

    def redecide(self, decision: Decision) -> Decision:
        """Decide again under *this* pipeline's configuration, reusing ``decision``'s agent reports.

        Only the decision steps see the new configuration: score weights, router cut-offs, SAD
        (rounds, evidence weighting, agreement gain, role weights...), verifier switches and which
        agents take part. The round-1 reports are not recomputed (no LLM calls for them; their
        usage stays in the trace), so changes to agent settings (cue bands, models, prompts) need
        :meth:`analyze`. An agent enabled here but absent from ``decision`` is run now.
        """
        coro = self.aanalyze(decision.text, id=decision.id, gold=decision.gold, reports=dict(decision.reports))
        return runs.complete(coro, offline=self.llm is None)

    def redecide_many(self, decisions: "BatchResult | Sequence[Decision]", progress: bool = False) -> "BatchResult":
        """:meth:`redecide` for a batch (e.g. a weight slider over a stored run). Failed items stay failed."""
        from tqdm.auto import tqdm

        t0 = time.perf_counter()
        items = list(decisions)
        out = [d if d.failed else self.redecide(d) for d in tqdm(items, disable=not progress, desc="re-deciding")]
        return BatchResult(out, wall_s=time.perf_counter() - t0)

    # -- the steps around the decision ----------------------------------------------------------------
    def _collect(self) -> "contextlib.AbstractContextManager[list[Any]]":
        """The completions made inside (LLM path); nothing to collect rule-based."""
        if self.llm is None:
            return contextlib.nullcontext([])
        from mabpd_kit.llm.usage import collect

        return collect()

    def _start(self, text: Any, id: str, gold: Any) -> tuple[Decision, "CleanText | None"]:
        d = Decision(id=id, text=_raw(text), gold=_gold(gold), mode=self.mode, models=self._models)
        if isinstance(text, (bytes, bytearray)) and b"\x00" in text:
            return self._fail(d, ValueError("binary input (NUL bytes)"), None), None
        if isinstance(text, str) and text.count("\x00") > 0:
            return self._fail(d, ValueError("binary input (NUL characters)"), None), None
        ct = clean(text, max_chars=self.config.text.max_chars)
        flags = list(ct.flags)
        bad = [f for f in ct.flags if f in _FAIL_FLAGS]
        if bad:
            _record(d, flags=flags)
            return self._fail(d, ValueError(_FAIL_FLAGS[bad[0]]), None), None
        if self.config.text.truncate_words:
            tr = truncate_words(ct.text, self.config.text.truncate_words)
            if tr.truncated:  # a prefix of the cleaned text: its offset map is a prefix of the map
                flags.append("truncated")
                n = len(tr.text)
                ct = CleanText(text=tr.text, raw=ct.raw, flags=ct.flags, src_start=ct.src_start[:n], src_end=ct.src_end[:n])
        _record(d, flags=flags, text=ct.raw, clean_text=ct.text)  # the decoded input: raw offsets point into it
        if (why := self._language(d)) is not None:
            return self._fail(d, ValueError(why), None), None
        return d, ct

    def _language(self, d: Decision) -> str | None:
        """Detect the item's language (``config.text.detect_language``). A known language outside
        ``config.text.languages`` is flagged ``unsupported_language``; the LLM agents still decide
        it, the rule-based ones cannot (their cues are English): returns the failure reason then.
        A text in Latin script shorter than ``config.text.language_min_chars`` is too short to tell
        ("shot worst say senator." looks like Nigerian Pidgin to py3langid): it is taken to be in
        ``config.text.languages[0]``, as a short article is (:func:`mabpd_kit.language.document_language`)."""
        if not self.config.text.detect_language:
            return None
        known = tuple(self.config.text.languages)
        lang = document_language(d.clean_text, min_chars=self.config.text.language_min_chars,
                                 assume=known[0] if known else "en")
        _record(d, language=lang)
        if lang == "und" or lang in self.config.text.languages:
            return None
        d.flags.append("unsupported_language")
        if self.llm is not None:
            return None
        return (f"unsupported language {lang!r}: the rule-based agents know {', '.join(self.config.text.languages)}; "
                f"use an LLM endpoint, or add {lang!r} to text.languages")

    def _route(self, d: Decision, ct: "CleanText", reports: dict[str, AgentReport]) -> None:
        spans = [s for r in reports.values() for s in (*r.spans, *r.counter_spans)]
        store = EvidenceStore.build(ct.text, spans, ratio=self.config.text.fuzzy_ratio)
        filled = None  # rule-based spans carry raw offsets already: then nothing is copied
        for i, s in enumerate(store.spans):
            if (f := self._orig(s, ct)) is not s:
                filled = filled or list(store.spans)
                filled[i] = f
        if filled is not None:
            store.spans = filled
        scoring = score_reports(reports, self.config)  # grounded: SPEC 1.4's burden of proof
        routing = route(reports, scoring.score, self.config)
        _record(d, reports=reports, store=store, scoring=scoring, score=scoring.score, routing=routing,
                route=routing.route, label=routing.label)

    @staticmethod
    def _orig(s: Span, ct: "CleanText") -> Span:
        """Fill raw-input offsets of a grounded span that lacks them (LLM quotes)."""
        if s.orig_start is not None or not s.valid or s.start is None or s.end is None or s.end > len(ct.text):
            return s
        a, b = ct.to_orig(s.start, s.end)
        return respan(s, orig_start=a, orig_end=b)

    def _finish(self, d: Decision, t0: float) -> Decision:
        label = d.verifier.label if d.verifier is not None else d.label
        _record(d, pre_verifier_label=d.label, label=label, pred=1 if label == "biased" else 0)
        steps: list[Any] = list(d.reports.values())
        if d.debate:  # round 1 restates the reports (no calls); later rounds are calls of their own
            steps += [w.argument for r in d.debate.rounds[1:] for w in r.arguments]
        if d.verifier:
            steps.append(d.verifier)
        used = [s.usage for s in steps if s.usage.calls]
        if used:  # rule-based steps cost nothing: the decision keeps its zero usage
            d.usage = Usage.total(used)
        _record(d, latency_s=time.perf_counter() - t0)
        return d

    def _fail(self, d: Decision, exc: BaseException, t0: float | None, made: Sequence[Any] = ()) -> Decision:
        d.failed, d.route, d.label, d.pred = True, "failed", None, None
        d.error = f"{type(exc).__name__}: {exc}"
        d.usage = Usage.of(made)  # the calls made before the failure still cost tokens
        if t0 is not None:
            d.latency_s = time.perf_counter() - t0
        return d

    # -- many items ---------------------------------------------------------------------------------
    def analyze_many(
        self,
        texts: Iterable[Any],
        ids: Sequence[Any] | None = None,
        gold: Sequence[Any] | None = None,
        checkpoint: str | Path | None = None,
        progress: bool = True,
        retry_failed: bool = True,
    ) -> BatchResult:
        """Analyse many items through :func:`mabpd_kit.runs.run`; results stream to ``checkpoint``
        (JSONL) and a rerun resumes from it.

        ``ids`` default to the position ("0", "1", ...). A checkpointed item is reused only if its
        text and the pipeline's :meth:`fingerprint` are unchanged; failed items are retried on
        resume unless ``retry_failed=False``. Rule-based items run one after the other without an
        event loop; with an LLM, ``4 * config.llm.concurrency`` items are in flight and each has
        ``config.llm.item_deadline_s`` seconds (all its calls): past it the item fails with a
        ``deadline`` reason and the batch goes on.
        """
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
            return self._fail(Decision(id=item.id, text=_raw(text), gold=_gold(g), mode=self.mode), exc, None)

        res = runs.run(items, step, record=Decision, fail=fail, checkpoint=checkpoint, fingerprint=self.fingerprint(),
                       concurrency=None if self.llm is None else 4 * self.llm.concurrency,
                       retry_failed=retry_failed, progress=f"MABPD ({self.mode})" if progress else False,
                       results=BatchResult, deadline_s=None if self.llm is None else self.llm.item_deadline(self.config.llm.item_deadline_s))
        if progress:
            runs.results.status(f"MABPD {self.mode}: {res.summary()}")
        return res
