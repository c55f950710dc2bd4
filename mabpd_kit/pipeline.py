"""The MABPD pipeline (SPEC 1): text -> three agents -> EvidenceStore -> score -> router ->
(fast path | Structured Argument Debate) -> verifier -> :class:`Decision` with the full trace.

>>> from mabpd_kit.pipeline import Pipeline
>>> p = Pipeline()                                   # no LLM: deterministic rule-based agents
>>> d = p.analyze("Democrats rammed through a so-called reform.")
>>> d.label, d.route
('biased', 'strong_fast_path')

Everything a notebook draws comes from the :class:`Decision`: ``d.reports`` (every agent's
report), ``d.store`` (all spans, invalid ones kept and marked), ``d.scoring``, ``d.routing``,
``d.debate`` (rounds, arguments with their q/f/g/k factors, votes B/N), ``d.verifier`` and the
usage (calls, tokens, latency).

Running many items: :meth:`Pipeline.analyze_many` streams each finished decision to a JSONL
checkpoint; run it again with the same checkpoint and it resumes, skipping finished items (and
with the LLM cache, repeated calls cost nothing). A failing item - bad input, an endpoint error,
a reply that stays malformed after the repair retry - is recorded with ``failed=True`` and its
reason; the batch goes on.

With an LLM, the agents of one round run concurrently and many items run at once; every call
waits for a slot of the endpoint's concurrency limit (``config.llm.concurrency``). The rule-based
path is plain synchronous code (no event loop per item) because it is CPU-bound and fast.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import html
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal, Sequence

from pydantic import BaseModel, Field

from mabpd_kit.agents import (AgentReport, Cues, VerifierAgent, analyse_cues, gather_reports, item_seed, lexicon_for,
                              make_agents, respan)
from mabpd_kit.config import Config
from mabpd_kit.consensus import Route, Routing, route
from mabpd_kit.debate import DebateResult, arun_debate, run_debate
from mabpd_kit.scoring import EvidenceStore, ScoreBreakdown, score
from mabpd_kit.types import Span, Verdict
from mabpd_kit.verify import VerifierReport

if TYPE_CHECKING:
    import pandas as pd

    from mabpd_kit.lexicon import Lexicon
    from mabpd_kit.llm import LLM
    from mabpd_kit.text import CleanText

__all__ = ["Pipeline", "Decision", "BatchResult", "cli_add_arguments", "cli_run"]

_FAIL_FLAGS = {"empty": "empty input (nothing left after cleaning)", "not_text": "input is not text"}


class Decision(BaseModel):
    """One item's result and its full trace (JSON-serialisable; checkpoints store it as is)."""

    id: str
    text: str = Field(description="the input as given (after coercion to str)")
    clean_text: str = ""
    text_sha1: str = ""
    gold: int | None = None
    label: Verdict | None = None
    pred: int | None = None
    score: float | None = None
    route: Route = "failed"
    reports: dict[str, AgentReport] = Field(default_factory=dict)
    store: EvidenceStore | None = None
    scoring: ScoreBreakdown | None = None
    routing: Routing | None = None
    debate: DebateResult | None = None
    pre_verifier_label: Verdict | None = None
    verifier: VerifierReport | None = None
    mode: Literal["rule", "llm"] = "rule"
    models: dict[str, str | None] = Field(default_factory=dict)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = Field(0.0, description="wall-clock time of this item")
    call_latency_s: float = Field(0.0, description="sum of the latencies of its LLM calls")
    repaired_calls: int = 0
    failed: bool = False
    error: str | None = None
    flags: list[str] = Field(default_factory=list)

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
        if self.calls:
            lines.append(f"  {self.calls} LLM calls, {self.prompt_tokens}+{self.completion_tokens} tokens, {self.latency_s:.2f} s")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explanation()

    def row(self) -> dict[str, Any]:
        """The flat summary row used by :meth:`BatchResult.to_frame`."""
        return {"id": self.id, "text": self.text, "gold": self.gold, "label": self.label, "pred": self.pred,
                "score": self.score, "route": self.route, "failed": self.failed, "error": self.error,
                "calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "latency_s": self.latency_s,
                "verifier_overturned": bool(self.verifier and self.verifier.overturned),
                "debate_rounds": len(self.debate.rounds) if self.debate else 0,
                "flags": ",".join(self.flags)}

    def to_frame(self) -> "pd.DataFrame":
        """One row per agent report: verdict, confidence, score, spans (valid/all), usage."""
        import pandas as pd

        rows = [{"id": self.id, "agent": a, "verdict": r.verdict, "confidence": r.confidence, "score": r.score,
                 "n_spans": len(r.spans), "n_valid": sum(s.valid for s in r.spans), "mode": r.mode,
                 "model": r.model, "calls": r.calls, "prompt_tokens": r.prompt_tokens,
                 "completion_tokens": r.completion_tokens, "rationale": r.rationale,
                 "label": self.label, "route": self.route, "final_score": self.score}
                for a, r in self.reports.items()]
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (what the checkpoint stores)."""
        return self.model_dump(mode="json")

    def debate_log(self) -> "pd.DataFrame":
        """One row per (agent, SAD round): question (= id), agent, round, answer, correct.

        ``correct`` compares the answer with ``gold`` (None without gold) - the shape the identity-bias
        measures (conformity, obstinacy) expect.
        """
        import pandas as pd

        rows = []
        if self.debate:
            gold = None if self.gold is None else ("biased" if self.gold == 1 else "neutral")
            for rnd in self.debate.rounds:
                for w in rnd.arguments:
                    rows.append({"question": self.id, "agent": w.agent, "round": rnd.index, "answer": w.verdict,
                                 "correct": None if gold is None else w.verdict == gold})
        return pd.DataFrame(rows, columns=["question", "agent", "round", "answer", "correct"])

    def html(self) -> str:
        """Self-contained HTML: the cleaned text with highlighted spans (``viz.span_html``), then the explanation."""
        from mabpd_kit.viz import span_html

        title = "FAILED" if self.failed else f"{self.label} · {self.route} · score {self.score:.2f}"
        return (f"<div class='mabpd-decision'>{span_html(self.clean_text or self.text, self.spans(), title=title)}"
                f"<pre>{html.escape(self.explanation())}</pre></div>")

    def show(self) -> None:
        """Display the span viewer and the compact explanation (in a notebook; prints elsewhere)."""
        try:
            from IPython.display import HTML, display
        except ImportError:  # plain Python without IPython: the explanation is the whole story
            print(self.explanation())
            return
        display(HTML(self.html()))

    def _repr_html_(self) -> str:
        return self.html()


class BatchResult(BaseModel):
    """Decisions of a batch, in input order."""

    decisions: list[Decision]
    checkpoint: str | None = None
    resumed: int = Field(0, description="items taken from the checkpoint instead of recomputed")
    wall_s: float = 0.0

    def __len__(self) -> int:
        return len(self.decisions)

    def __iter__(self):  # type: ignore[override]
        return iter(self.decisions)

    def __getitem__(self, i: int) -> Decision:
        return self.decisions[i]

    def to_frame(self) -> "pd.DataFrame":
        """id, text, gold, label, pred, score, route, failed, error, calls, tokens, latency, ..."""
        import pandas as pd

        return pd.DataFrame([d.row() for d in self.decisions])

    @property
    def failed(self) -> list[Decision]:
        return [d for d in self.decisions if d.failed]

    def metrics(self) -> dict[str, float]:
        """Accuracy, precision, recall, binary F1 (positive = biased) and macro F1 over the items that
        have a gold label and did not fail, plus the counts (``n``, ``failed``, ``no_gold``)."""
        from mabpd_kit import metrics as M

        scored = [d for d in self.decisions if not d.failed and d.gold is not None]
        y, p = [d.gold for d in scored], [d.pred for d in scored]
        out: dict[str, float] = {"n": len(scored), "failed": len(self.failed),
                                 "no_gold": sum(1 for d in self.decisions if d.gold is None and not d.failed)}
        if scored:
            out.update(accuracy=M.accuracy(y, p), precision=M.precision(y, p), recall=M.recall(y, p),
                       f1=M.f1(y, p), macro_f1=M.macro_f1(y, p))
        return out


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


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
        self.config = config or Config()
        self.llm = llm if llm is not None and not llm.offline else None
        self.lexicon = lexicon or lexicon_for(self.config)
        self.agents = make_agents(self.config, self.llm, self.lexicon)
        self.verifier = VerifierAgent(self.config, self.llm, self.lexicon)

    @property
    def mode(self) -> Literal["rule", "llm"]:
        return "rule" if self.llm is None else "llm"

    def __repr__(self) -> str:
        where = "rule-based (offline)" if self.llm is None else f"LLM {self.llm.model} at {self.llm.endpoint}"
        return f"Pipeline({where}, agents={list(self.agents)})"

    # -- one item ----------------------------------------------------------------------------------
    def analyze(self, text: Any, id: str | None = None, gold: Any = None) -> Decision:
        """Analyse one sentence or article. Never raises on bad input: returns a failed Decision."""
        id = str(id) if id is not None else _sha1(str(text))[:12]
        if self.llm is None:
            return self._analyze_rule(text, id, gold)
        from mabpd_kit.llm import run_sync

        return run_sync(self.aanalyze(text, id=id, gold=gold))

    async def aanalyze(self, text: Any, id: str | None = None, gold: Any = None, *,
                       reports: dict[str, AgentReport] | None = None) -> Decision:
        """Async :meth:`analyze` (agents of a round run concurrently). ``reports``: see :meth:`redecide`."""
        id = str(id) if id is not None else _sha1(str(text))[:12]
        if self.llm is None:
            return self._analyze_rule(text, id, gold, reports)
        from mabpd_kit.llm.usage import collect

        t0 = time.perf_counter()
        d, ct = self._start(text, id, gold)
        if d.failed:
            return d
        with collect() as made:  # on failure, the trace still shows the calls the item cost
            try:
                return self._finish(await self._adecide(d, ct, reports), t0)
            except Exception as exc:  # one item never stops a batch; the reason is kept
                return self._fail(d, exc, t0, made)

    async def _adecide(self, d: Decision, ct: "CleanText", reports: dict[str, AgentReport] | None) -> Decision:
        cues = analyse_cues(ct.text, self.lexicon, self.config, ct.to_orig)
        known = {a: r for a, r in (reports or {}).items() if a in self.agents}
        todo = {a: ag for a, ag in self.agents.items() if a not in known}
        fresh = await gather_reports(todo, ct.text, cues) if todo else {}
        self._route(d, ct, {a: known.get(a) or fresh[a] for a in self.agents})
        if d.route == "debate":
            first = [self.agents[a].first_argument(r) for a, r in d.reports.items()]
            seed = item_seed(ct.text)

            async def revise(agent: str, rnd: int, own: Any, others: list) -> Any:
                return await self.agents[agent].arevise(rnd, own, others, cues, seed=seed)

            d.debate = await arun_debate(first, revise, self.config)
            d.label = d.debate.label
        await self._averify(d, cues)
        return d

    def _analyze_rule(self, text: Any, id: str, gold: Any, reports: dict[str, AgentReport] | None = None) -> Decision:
        t0 = time.perf_counter()
        d, ct = self._start(text, id, gold)
        if d.failed:
            return d
        try:
            cues = analyse_cues(ct.text, self.lexicon, self.config, ct.to_orig)
            known = reports or {}
            self._route(d, ct, {a: known.get(a) or ag.report(ct.text, cues) for a, ag in self.agents.items()})
            if d.route == "debate":
                first = [self.agents[a].first_argument(r) for a, r in d.reports.items()]
                d.debate = run_debate(first, lambda agent, rnd, own, others: self.agents[agent].revise(rnd, own, others, cues),
                                      self.config)
                d.label = d.debate.label
            if self.config.verifier.enabled and d.label == "biased":
                d.verifier = self.verifier.verify("biased", self._biased_spans(d), cues)
        except Exception as exc:  # a bug must not cost the batch; it shows up as a failed item
            return self._fail(d, exc, t0)
        return self._finish(d, t0)

    def redecide(self, decision: Decision) -> Decision:
        """Decide again under *this* pipeline's configuration, reusing ``decision``'s agent reports.

        Only the decision steps see the new configuration: score weights, router cut-offs, SAD
        (rounds, evidence weighting, agreement gain, role weights...), verifier switches and which
        agents take part. The round-1 reports are not recomputed (no LLM calls for them; their
        usage stays in the trace), so changes to agent settings (cue bands, models, prompts) need
        :meth:`analyze`. An agent enabled here but absent from ``decision`` is run now.
        """
        reports = dict(decision.reports)
        if self.llm is None:
            return self._analyze_rule(decision.text, decision.id, decision.gold, reports)
        from mabpd_kit.llm import run_sync

        return run_sync(self.aanalyze(decision.text, id=decision.id, gold=decision.gold, reports=reports))

    def redecide_many(self, decisions: "BatchResult | Sequence[Decision]", progress: bool = False) -> "BatchResult":
        """:meth:`redecide` for a batch (e.g. a weight slider over a stored run). Failed items stay failed."""
        from tqdm.auto import tqdm

        t0 = time.perf_counter()
        items = list(decisions)
        out = [d if d.failed else self.redecide(d) for d in tqdm(items, disable=not progress, desc="re-deciding")]
        return BatchResult(decisions=out, wall_s=time.perf_counter() - t0)

    # -- steps shared by both paths -----------------------------------------------------------------
    def _start(self, text: Any, id: str, gold: Any) -> tuple[Decision, "CleanText | None"]:
        from mabpd_kit.text import CleanText, clean, truncate_words

        raw = text if isinstance(text, str) else ("" if text is None else str(text))
        d = Decision(id=id, text=raw, gold=_gold(gold), mode=self.mode, text_sha1=_sha1(raw),
                     models={a: ag.model for a, ag in self.agents.items()})
        if isinstance(text, (bytes, bytearray)) and b"\x00" in text:
            return self._fail(d, ValueError("binary input (NUL bytes)"), None), None
        if isinstance(text, str) and text.count("\x00") > 0:
            return self._fail(d, ValueError("binary input (NUL characters)"), None), None
        ct = clean(text, max_chars=self.config.text.max_chars)
        d.flags = list(ct.flags)
        bad = [f for f in ct.flags if f in _FAIL_FLAGS]
        if bad:
            return self._fail(d, ValueError(_FAIL_FLAGS[bad[0]]), None), None
        if self.config.text.truncate_words:
            tr = truncate_words(ct.text, self.config.text.truncate_words)
            if tr.truncated:  # a prefix of the cleaned text: its offset map is a prefix of the map
                d.flags.append("truncated")
                n = len(tr.text)
                ct = CleanText(text=tr.text, raw=ct.raw, flags=ct.flags, src_start=ct.src_start[:n], src_end=ct.src_end[:n])
        d.text = ct.raw  # decoded input: raw offsets of spans point into it
        d.clean_text = ct.text
        return d, ct

    def _route(self, d: Decision, ct: "CleanText", reports: dict[str, AgentReport]) -> None:
        d.reports = reports
        spans = [s for r in reports.values() for s in (*r.spans, *r.counter_spans)]
        d.store = EvidenceStore.build(ct.text, spans, ratio=self.config.text.fuzzy_ratio)
        d.store.spans = [self._orig(s, ct) for s in d.store.spans]
        d.scoring = score({a: r.score for a, r in reports.items()}, self.config)
        d.score = d.scoring.score
        d.routing = route(reports, d.score, self.config)
        d.route = d.routing.route
        d.label = d.routing.label

    @staticmethod
    def _orig(s: Span, ct: "CleanText") -> Span:
        """Fill raw-input offsets of a grounded span that lacks them (LLM quotes)."""
        if s.orig_start is not None or not s.valid or s.start is None or s.end is None or s.end > len(ct.text):
            return s
        a, b = ct.to_orig(s.start, s.end)
        return respan(s, orig_start=a, orig_end=b)

    def _biased_spans(self, d: Decision) -> list[Span]:
        """The evidence behind a biased decision: final-round spans of biased arguments, else report spans."""
        if d.debate:
            return [s for w in d.debate.rounds[-1].arguments if w.verdict == "biased" for s in w.argument.spans]
        return [s for r in d.reports.values() if r.verdict == "biased" for s in r.spans]

    async def _averify(self, d: Decision, cues: Cues) -> None:
        if self.config.verifier.enabled and d.label == "biased":
            d.verifier = await self.verifier.averify("biased", self._biased_spans(d), cues)

    def _finish(self, d: Decision, t0: float) -> Decision:
        d.pre_verifier_label = d.label
        if d.verifier is not None:
            d.label = d.verifier.label
        d.pred = 1 if d.label == "biased" else 0
        steps: list[Any] = list(d.reports.values())
        if d.debate:
            steps += [w.argument for r in d.debate.rounds[1:] for w in r.arguments]
        if d.verifier:
            steps.append(d.verifier)
        d.calls = sum(s.calls for s in steps)
        d.prompt_tokens = sum(s.prompt_tokens for s in steps)
        d.completion_tokens = sum(s.completion_tokens for s in steps)
        d.call_latency_s = sum(s.latency_s for s in steps)
        d.repaired_calls = sum(1 for s in steps if s.repaired)
        d.latency_s = time.perf_counter() - t0
        return d

    def _fail(self, d: Decision, exc: BaseException, t0: float | None, made: Sequence[Any] = ()) -> Decision:
        d.failed, d.route, d.label, d.pred = True, "failed", None, None
        d.error = f"{type(exc).__name__}: {exc}"
        if made:  # the calls made before the failure still cost tokens
            d.calls = len(made)
            d.prompt_tokens = sum(c.prompt_tokens for c in made)
            d.completion_tokens = sum(c.completion_tokens for c in made)
            d.call_latency_s = sum(c.latency_s for c in made)
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
        """Analyse many items; results stream to ``checkpoint`` (JSONL) and a rerun resumes from it.

        ``ids`` default to the position ("0", "1", ...). A checkpointed item is reused only if its
        text is unchanged (sha1); failed items are retried on resume unless ``retry_failed=False``.
        """
        texts = list(texts)
        ids = [str(i) for i in (ids if ids is not None else range(len(texts)))]
        if len(ids) != len(texts) or (gold is not None and len(gold) != len(texts)):
            raise ValueError("texts, ids and gold must have the same length")
        if len(set(ids)) != len(ids):
            raise ValueError("ids must be unique (the checkpoint is keyed by id)")
        golds = list(gold) if gold is not None else [None] * len(texts)
        t0 = time.perf_counter()
        done = _read_checkpoint(checkpoint) if checkpoint else {}
        results: dict[str, Decision] = {}
        todo = []
        for i, (t, id_, g) in enumerate(zip(texts, ids, golds)):
            old = done.get(id_)
            raw = t if isinstance(t, str) else ("" if t is None else str(t))
            if old is not None and old.text_sha1 == _sha1(raw) and not (old.failed and retry_failed):
                results[id_] = old
            else:
                todo.append((t, id_, g))
        resumed = len(results)
        out = None
        if checkpoint:
            ck = Path(checkpoint)
            ck.parent.mkdir(parents=True, exist_ok=True)
            torn = ck.exists() and ck.stat().st_size > 0 and not ck.read_bytes().endswith(b"\n")
            out = open(ck, "a", encoding="utf-8")
            if torn:  # a killed run left half a line: end it so the next record starts on its own line
                out.write("\n")
        from tqdm.auto import tqdm

        bar = tqdm(total=len(texts), initial=resumed, disable=not progress, desc=f"MABPD ({self.mode})", unit="item")

        def record(d: Decision) -> None:
            results[d.id] = d
            if out is not None:
                out.write(json.dumps(d.to_dict(), ensure_ascii=False) + "\n")
                out.flush()
            bar.update(1)

        try:
            if self.llm is None:
                for t, id_, g in todo:
                    record(self._analyze_rule(t, id_, g))
            else:
                from mabpd_kit.llm import run_sync

                run_sync(self._amany(todo, record))
        finally:
            bar.close()
            if out is not None:
                out.close()
        res = BatchResult(decisions=[results[i] for i in ids], checkpoint=str(checkpoint) if checkpoint else None,
                          resumed=resumed, wall_s=time.perf_counter() - t0)
        if progress:
            df_fail = len(res.failed)
            print(f"MABPD {self.mode}: {len(res)} items ({resumed} from checkpoint), {df_fail} failed, "
                  f"{res.wall_s:.1f} s")
        return res

    async def _amany(self, todo: list[tuple[Any, str, Any]], record: Any) -> None:
        """Enough items in flight to keep every slot of the endpoint's limit busy."""
        queue: asyncio.Queue = asyncio.Queue()
        for item in todo:
            queue.put_nowait(item)
        workers = max(1, min(len(todo), 4 * self.llm.config.concurrency))

        async def worker() -> None:
            while not queue.empty():
                t, id_, g = queue.get_nowait()
                record(await self.aanalyze(t, id=id_, gold=g))

        await asyncio.gather(*(worker() for _ in range(workers)))


def _read_checkpoint(path: str | Path) -> dict[str, Decision]:
    """Decisions already in a JSONL checkpoint (last one per id wins; a torn last line is ignored)."""
    p = Path(path)
    found: dict[str, Decision] = {}
    if not p.exists():
        return found
    for line in p.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            d = Decision.model_validate_json(line)
        except ValueError:  # a run killed mid-write leaves a partial line: recompute that item
            continue
        found[d.id] = d
    return found


# =============================================================================================
# CLI: mabpd analyze FILE|- --format table|json|html
# =============================================================================================


def cli_add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="text file (one item per line with --lines, else the whole file) or - for stdin")
    parser.add_argument("--lines", action="store_true", help="treat every non-empty line as one item")
    parser.add_argument("--format", choices=("table", "json", "html"), default="table")
    parser.add_argument("--output", "-o", help="write to this file instead of stdout")
    parser.add_argument("--ablation", default="full", help=f"one of {', '.join(Config.ABLATIONS)}")
    parser.add_argument("--config", help="a saved configuration (TOML or JSON)")
    parser.add_argument("--checkpoint", help="JSONL checkpoint to resume from")
    parser.add_argument("--llm", action="store_true", help="use the configured endpoint (MABPD_BASE_URL) instead of rule-based agents")


def cli_run(args: argparse.Namespace) -> int:
    if args.file == "-":
        raw = sys.stdin.read()
    else:
        path = Path(args.file)
        if not path.exists():
            raise FileNotFoundError(f"no such file: {path}")
        raw = path.read_text(encoding="utf-8", errors="replace")
    items = [ln for ln in raw.splitlines() if ln.strip()] if args.lines else [raw]
    cfg = Config.load(args.config) if args.config else Config()
    cfg = cfg.ablation(args.ablation)
    llm = None
    if args.llm:
        from mabpd_kit.llm import connect

        llm = connect(config=cfg)
    else:
        print("mabpd analyze: rule-based agents (offline); pass --llm to use a configured endpoint", file=sys.stderr)
    pipe = Pipeline(cfg, llm)
    res = pipe.analyze_many(items, checkpoint=args.checkpoint, progress=False)
    if args.format == "json":
        body = "\n".join(json.dumps(d.to_dict(), ensure_ascii=False) for d in res.decisions) + "\n"
    elif args.format == "html":
        body = ("<!doctype html><meta charset='utf-8'><title>mabpd analyze</title>"
                + "".join(d.html() for d in res.decisions))
    else:
        df = res.to_frame()[["id", "label", "score", "route", "failed", "error", "text"]].copy()
        df["text"] = df["text"].str.slice(0, 70)
        body = df.to_string(index=False) + "\n"
    if args.output:
        Path(args.output).write_text(body, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(body)
    return 1 if res.failed and len(res.failed) == len(res) else 0
