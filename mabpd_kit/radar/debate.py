"""RADAR: role-anchored debate for half-truth detection (SPEC 3).

A claim is checked in three steps:

1. **Evidence.** Every claim gets the top-m sentences (default 20) of one *shared* BM25 index built
   over the evidence of all claims (:class:`~mabpd_kit.radar.evidence.EvidencePool`): realistic,
   noisy retrieval. The ``gold`` mode gives each claim its own article sentences instead (the upper bound).
2. **Debate.** A *Politician* builds the most persuasive supportive reading of the evidence, a
   *Scientist* probes what it leaves out; opening -> rebuttal -> closing, each agent seeing its
   own earlier turns and the opponent's. Evidence is shown as numbered lines ``[E1] ...`` and
   cited as ``[E3]``.
3. **Judge + stopping.** After every round the Judge gives p(TRUE / HALF-TRUE / FALSE) and, if a
   further round is possible, p(STOP) / p(CONTINUE) (:mod:`mabpd_kit.radar.judge` says where the
   probabilities come from). :class:`~mabpd_kit.radar.stopping.DualThreshold` stops when
   ``s = p(STOP) - p(CONTINUE) >= tau_s`` and ``max p(label) >= tau_v``.

One coroutine, :meth:`RadarDebate.arun`, debates a claim. With an LLM it runs on an event loop;
offline the rule-based stand-in (:mod:`mabpd_kit.radar.rules`) plays the three agents inside the
*same* coroutine, which then never waits on I/O and is driven to its end without a loop
(:func:`mabpd_kit.runs.drive`). :meth:`RadarDebate.run_many` sends a batch through the one runner
(:func:`mabpd_kit.runs.run`): JSONL checkpoint, resume after ``kill -9``, failed claims recorded
with their reason, usage per claim and per run.

Baselines (:data:`SYSTEMS`): ``radar`` (the method), ``no-early-stopping``, ``procon`` (fixed
Pro/Con roles), ``single`` (the Judge alone, one pass) and ``gold-evidence``.

>>> from mabpd_kit.radar import RadarDebate, example_claims
>>> ex = example_claims().iloc[0]
>>> res = RadarDebate(llm=None).run(ex.claim, ex.evidence, id=ex.id, gold=ex.label)
>>> res.source, res.rounds_run >= 1, res.label in ("TRUE", "HALF-TRUE", "FALSE")
('rule', True, True)
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mabpd_kit import prompts, runs
from mabpd_kit.config import Config
from mabpd_kit.llm import LLMError, online
from mabpd_kit.radar.evidence import Evidence, EvidencePool, Turn, cited_numbers, format_evidence
from mabpd_kit.radar.judge import LLMJudge, Source, choose_source, source_chain, weakest_source
from mabpd_kit.radar.replies import ReplyNote, fence_safe, reply_note
from mabpd_kit.radar.rules import RuleBasedRadar
from mabpd_kit.radar.stopping import ROUND_NAMES, DualThreshold, RoundState, StopDecision, Trajectory
from mabpd_kit.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mabpd_kit.llm import LLM

__all__ = ["SYSTEMS", "RadarDebate", "RadarResult", "RadarResults", "run_systems"]

SYSTEMS: tuple[str, ...] = ("radar", "no-early-stopping", "procon", "single", "gold-evidence")


# =============================================================================================
# Records
# =============================================================================================
class RadarResult(BaseModel):
    """Everything about one claim's debate: turns, Judge states, stopping decisions and usage."""

    id: str
    claim: str
    gold: str | None = None
    system: str = "radar"
    label: str | None = None
    rounds_run: int = 0
    source: str = Field("rule", description="the rounds' probability sources, joined by '+' (e.g. logprobs+one_hot); "
                        "'unknown' before the first round")
    offline: bool = True
    evidence_mode: str = Field("gold", description="retrieved (shared BM25 pool) or gold (the claim's own sentences)")
    evidence: list[Evidence] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    states: list[RoundState] = Field(default_factory=list)
    decisions: list[StopDecision] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    judge_notes: list[ReplyNote] = Field(default_factory=list, description="empty or refusing Judge replies")
    usage: Usage = Field(default_factory=Usage, description="LLM calls and tokens of this debate (zero offline)")
    failed: bool = False
    error: str | None = None

    @property
    def correct(self) -> bool | None:
        return None if self.gold is None or self.label is None else self.label == self.gold

    @property
    def stop(self) -> StopDecision | None:
        """The decision that ended the debate."""
        return self.decisions[-1] if self.decisions else None

    def trajectory(self, max_rounds: int = 3) -> Trajectory:
        """The Judge's states as a :class:`~mabpd_kit.radar.stopping.Trajectory` (for offline replay)."""
        return Trajectory(id=self.id, rounds=tuple(self.states), gold=self.gold, max_rounds=max_rounds,
                          meta={"system": self.system})

    def transcript(self) -> str:
        """The debate as readable text (with each round's probability source)."""
        out = []
        for t in self.turns:
            note = f" [{t.note}]" if t.note else ""
            out.append(f"Round {t.round} · {t.stage} · {t.agent.title()}{note}:\n{t.text}\n")
        for st, d in zip(self.states, self.decisions):
            probs = ", ".join(f"{k} {v:.2f}" for k, v in st.label_probs.items())
            s = "n/a" if math.isnan(d.s) else f"{d.s:+.2f}"
            out.append(f"Judge after round {d.round} ({st.source}): {probs}; s = {s}, c = {d.c:.2f} -> "
                       f"{'STOP' if d.stop else 'CONTINUE'} ({d.reason})")
        for n in self.judge_notes:
            out.append(f"Judge reply ({n.question}, round {n.round}) was {n.note}: {n.text[:80]!r}")
        return "\n".join(out)

    def counts(self) -> dict[str, int]:
        """one_hot_rounds, empty_turns, refusal_turns (debaters), judge_empty, judge_refusals (Judge replies)."""
        return dict(one_hot_rounds=sum(st.one_hot for st in self.states),
                    empty_turns=sum(t.note == "empty" for t in self.turns),
                    refusal_turns=sum(t.note == "refusal" for t in self.turns),
                    judge_empty=sum(n.note == "empty" for n in self.judge_notes),
                    judge_refusals=sum(n.note == "refusal" for n in self.judge_notes))

    def row(self) -> dict[str, Any]:
        """One flat frame row: id, system, gold, label, pred (the same label: the column
        :func:`mabpd_kit.evaluate.compare` reads), correct, rounds, stop reason, s, c, source,
        the :meth:`counts` (one-hot rounds, empty and refusing replies), usage."""
        d = self.stop
        return dict(id=self.id, system=self.system, gold=self.gold, label=self.label, pred=self.label,
                    correct=self.correct, rounds=self.rounds_run, stop_reason=d.reason if d else None,
                    s=d.s if d else None, c=d.c if d else None, source=self.source, evidence_mode=self.evidence_mode,
                    **self.counts(), **self.usage.row(), failed=self.failed, error=self.error)


class RadarResults(runs.Results[RadarResult]):
    """The debates of a batch (:meth:`RadarDebate.run_many`), in input order.

    ``to_frame()`` has one row per claim (:meth:`RadarResult.row`), :meth:`rounds_frame` one per
    Judge state (with its probability source); :meth:`metrics` adds accuracy, macro F1 and
    HALF-TRUE F1 over the scored claims, the mean number of rounds, and counts of one-hot rounds
    and of empty or refusing replies.
    """

    def __init__(self, records: Sequence[RadarResult], *, labels: Sequence[str] = ("TRUE", "HALF-TRUE", "FALSE"),
                 **kwargs: Any) -> None:
        super().__init__(records, **kwargs)
        self.labels = tuple(labels)

    def metrics(self) -> dict[str, float]:
        """n, failed, accuracy, macro F1, HALF-TRUE F1 (via :mod:`mabpd_kit.metrics`; over claims with a
        gold label and an answer), mean rounds, one-hot rounds, empty and refusing debater turns and
        Judge replies (:meth:`RadarResult.counts`), calls and tokens."""
        from mabpd_kit import metrics

        base = super().metrics()
        out: dict[str, float] = dict(n=base["n"], failed=base["failed"])
        ok = [r for r in self.records if not r.failed and r.gold is not None and r.label is not None]
        if ok:
            y, p, labels = [r.gold for r in ok], [r.label for r in ok], list(self.labels)
            out.update(accuracy=metrics.accuracy(y, p), macro_f1=metrics.macro_f1(y, p, labels=labels),
                       half_true_f1=metrics.per_class_f1(y, p, labels=labels).get("HALF-TRUE", float("nan")))
        rounds = [r.rounds_run for r in self.records]
        out["mean_rounds"] = float(sum(rounds) / len(rounds)) if rounds else float("nan")
        counts = [r.counts() for r in self.records]
        for key in ("one_hot_rounds", "empty_turns", "refusal_turns", "judge_empty", "judge_refusals"):
            out[key] = sum(c[key] for c in counts)
        out.update({k: base[k] for k in ("calls", "prompt_tokens", "completion_tokens")})
        return out


    def rounds_frame(self) -> pd.DataFrame:
        """One row per (claim, round): id, round, source (the weakest answer's), the source of each
        question, s, c, label, stop, reason, one_hot."""
        import pandas as pd

        rows = []
        for r in self.records:
            for st, d in zip(r.states, r.decisions):
                rows.append(dict(id=r.id, gold=r.gold, round=st.round, source=st.source,
                                 verdict_source=st.sources.get("verdict"), continue_source=st.sources.get("continue"),
                                 s=d.s, c=d.c, label=d.label, stop=d.stop, reason=d.reason, one_hot=st.one_hot))
        return pd.DataFrame(rows, columns=["id", "gold", "round", "source", "verdict_source", "continue_source",
                                           "s", "c", "label", "stop", "reason", "one_hot"])


# =============================================================================================
# The debate
# =============================================================================================
def _stage_instructions(prompts_dir: str | Path | None) -> dict[str, str]:
    """``stages.md``: one ``## stage`` section per round, what a turn of that stage must do."""
    text = prompts.template("radar", "stages", prompts_dir)
    parts = re.split(r"(?m)^##\s*(\w+)\s*$", text)
    return {parts[i].strip().lower(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


_DEBATE_MARKER = re.compile(r"<\s*(/?)\s*(debate)\s*>", re.IGNORECASE)


def _transcript(res: RadarResult) -> str:
    """The turns so far, as every agent reads them: the same text for the Politician, the Scientist
    and the Judge (a role finds its own turns by its name, told at the end of its prompt), so the
    item stays one prefix an endpoint's cache reuses. Fenced as data: a turn cannot close a marker
    (``<claim>``, ``<evidence>``, ``<debate>``)."""
    if not res.turns:
        return "(no turns yet)"
    lines = []
    for t in res.turns:
        text = "(no answer)" if t.note == "empty" else t.text
        lines.append(f"[Round {t.round} · {t.stage}] {t.agent.title()}: {text}")
    return _DEBATE_MARKER.sub(lambda m: f"[{m.group(1)}debate]", fence_safe("\n\n".join(lines)))


class RadarDebate:
    """Run RADAR (or a baseline) on claims with a real LLM or, offline, the rule-based stand-in.

    Args:
        config: ``config.radar`` gives top_m, max_rounds, tau_s, tau_v, labels, k_samples, the
            probability source, the evidence mode and the debaters' temperature and max_tokens.
        llm: an :class:`mabpd_kit.llm.LLM`; ``None`` or offline -> :class:`~mabpd_kit.radar.rules.RuleBasedRadar`.
        system: one of :data:`SYSTEMS`.
        rule: the stopping rule; default ``DualThreshold.from_config(config)``
            (``DualThreshold.never()`` for ``no-early-stopping``).
        pool: the shared :class:`~mabpd_kit.radar.evidence.EvidencePool` for retrieved evidence (None:
            use each claim's evidence list as given; recorded as ``evidence_mode="gold"``).
        prompts_dir: a folder with edited copies of the prompt templates (see ``prompts/radar/README.md``).

    Constructing a debate makes no request. The Judge's sources (:func:`~mabpd_kit.radar.judge.source_chain`)
    are chosen inside the first claim's coroutine: with ``radar.prob_source = "auto"`` and an
    endpoint, that probes the endpoint's capabilities once (a few tiny requests, cached on disk),
    so a dead endpoint or a refused key fails claims (with the reason), never the constructor or
    :meth:`run_many`. Each round records the source its probabilities really came from.
    """

    def __init__(self, config: Config | None = None, llm: LLM | None = None, *, system: str = "radar",
                 rule: DualThreshold | None = None, pool: EvidencePool | None = None,
                 prompts_dir: str | Path | None = None) -> None:
        if system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
        self.config = config or Config()
        self.llm = online(llm)
        self.system = system
        rc = self.config.radar
        self.labels = tuple(rc.labels)
        if rule is None:
            rule = DualThreshold.never(self.config) if system == "no-early-stopping" else DualThreshold.from_config(self.config)
        self.rule = rule
        self.pool = pool
        self.prompts_dir = prompts_dir
        if not 1 <= rc.max_rounds <= len(ROUND_NAMES):
            raise ValueError(f"radar.max_rounds must be 1..{len(ROUND_NAMES)} (opening, rebuttal, closing)")
        self.max_rounds = 1 if system == "single" else rc.max_rounds
        gold_mode = system == "gold-evidence" or rc.evidence == "gold" or pool is None
        self.evidence_mode: str = "gold" if gold_mode else "retrieved"
        self.roles: tuple[str, str] = ("pro", "con") if system == "procon" else ("politician", "scientist")
        self._llm_judge: LLMJudge | None = None
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._rules = RuleBasedRadar(self.labels)

    @property
    def source(self) -> Source:
        """The first source the Judge tries (``rule`` offline); what a round really used is in its
        state. Blocking: may probe the endpoint (not called by the debate itself)."""
        if self._llm_judge is not None:
            return self._llm_judge.source  # type: ignore[return-value]
        return choose_source(self.llm, self.config)

    async def judge(self) -> LLMJudge | None:
        """The LLM Judge (None offline), made on first use: with ``auto`` this awaits the capability
        probe, inside the caller's coroutine (a probe that fails raises there, for that claim)."""
        if self.llm is None or self._llm_judge is not None:
            return self._llm_judge
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        async with self._lock[1]:  # concurrent first claims probe once
            if self._llm_judge is None:
                caps = None
                if self.config.radar.prob_source == "auto":
                    from mabpd_kit.llm.probe import probe

                    from mabpd_kit.llm import registry

                    caps = await probe(self.llm, self.llm.model)
                    unsure = registry.undecided(registry.endpoint_key(self.llm.endpoint, self.llm.model))
                    # a feature the probe could not settle is tried: the Judge's first call decides it
                    caps = caps.model_copy(update={f: True for f in unsure if f in ("logprobs", "top_logprobs")})
                self._llm_judge = LLMJudge(self.llm, source_chain(caps, self.config), self.config,
                                       prompts_dir=self.prompts_dir)
        return self._llm_judge

    # -- evidence ---------------------------------------------------------------------------
    def evidence_for(self, claim: str, evidence: Sequence[str] | None) -> list[Evidence]:
        """Retrieved top-m from the shared pool, or the claim's own (gold) sentences."""
        m = self.config.radar.top_m
        if self.evidence_mode == "gold":
            return [Evidence(number=i, text=" ".join(str(s).split())) for i, s in enumerate(list(evidence or [])[:m], 1)
                    if str(s).strip()]
        return self.pool.retrieve(claim, m)

    # -- one claim ---------------------------------------------------------------------------
    def run(self, claim: str, evidence: Sequence[str] | None = None, *, id: str | None = None,
            gold: str | None = None) -> RadarResult:
        """Debate one claim (blocking; fine in Jupyter): :meth:`arun` run to its end."""
        return runs.complete(self.arun(claim, evidence, id=id, gold=gold), offline=self.llm is None)

    async def arun(self, claim: str, evidence: Sequence[str] | None = None, *, id: str | None = None,
                   gold: str | None = None) -> RadarResult:
        """Debate one claim. Failures are caught and flagged in the result (``failed``, ``error``)."""
        return (await self._attempt(claim, evidence, id=id, gold=gold))[0]

    async def _attempt(self, claim: str, evidence: Sequence[str] | None, *, id: str | None,
                       gold: str | None) -> tuple[RadarResult, BaseException | None]:
        """(the result, the error that failed it or None)."""
        cid = str(id) if id is not None else "claim-" + hashlib.sha1(claim.encode()).hexdigest()[:8]
        res = RadarResult(id=cid, claim=claim, gold=gold, system=self.system,
                          source="rule" if self.llm is None else "unknown",
                          offline=self.llm is None, evidence_mode=self.evidence_mode)
        try:
            res.evidence = self.evidence_for(claim, evidence)
            await self._debate(res, await self.judge())
        except (LLMError, ValueError, KeyError) as exc:  # one bad claim must not sink a batch: flag it, keep the trace
            res.failed = True
            res.error = f"{type(exc).__name__}: {exc}"
            return res, exc
        return res, None

    async def _debate(self, res: RadarResult, judge: LLMJudge | None) -> None:
        ev_text = fence_safe(format_evidence(res.evidence))
        stages = _stage_instructions(self.prompts_dir)
        new_omissions = 0
        for r in range(1, self.max_rounds + 1):
            stage = ROUND_NAMES[r - 1]
            if self.system != "single":
                for role in self.roles:
                    turn = await self._turn(res, role, stage, r, ev_text, stages)
                    res.turns.append(turn)
                    if role in ("scientist", "con"):
                        new_omissions = len(turn.cited)
            last = r == self.max_rounds
            probs, p_stop, sources = await self._judge(res, judge, ev_text, r, last, new_omissions)
            state = RoundState(round=r, label_probs=probs, p_stop=p_stop,
                               p_continue=None if p_stop is None else 1.0 - p_stop,
                               source=weakest_source(list(sources.values())), sources=sources)
            res.states.append(state)
            res.source = "+".join(dict.fromkeys(st.source for st in res.states))
            decision = self.rule.decide_state(state, last=last)
            res.decisions.append(decision)
            res.rounds_run = r
            res.label = decision.label
            if decision.stop:
                break

    async def _turn(self, res: RadarResult, role: str, stage: str, r: int, ev_text: str,
                    stages: Mapping[str, str]) -> Turn:
        if self.llm is None:
            used = {n for t in res.turns for n in t.cited}
            t = self._rules.turn(role, res.claim, res.evidence, used, stage)
            return t.model_copy(update={"round": r})
        # shared part (system), then the item, then the role's paragraph and this round's task (turn.md)
        msgs = prompts.messages("radar", "turn", prompts_dir=self.prompts_dir, claim=fence_safe(res.claim),
                                evidence=ev_text, transcript=_transcript(res),
                                role_instructions=prompts.render("radar", role, prompts_dir=self.prompts_dir),
                                role=role.title(), stage=stage, stage_instruction=stages.get(stage, ""))
        rc = self.config.radar
        comp = await self.llm.achat(msgs, temperature=rc.temperature, max_tokens=rc.max_tokens, tag=f"radar-{role}")
        res.usage += Usage.of([comp])
        text = (comp.text or "").strip()
        cited = cited_numbers(text, {e.number for e in res.evidence})
        note = reply_note(text)
        if note == "refusal" and cited:  # an argument that cites evidence is not a refusal
            note = None
        return Turn(round=r, stage=stage, agent=role, text=text, cited=cited, note=note)

    async def _judge(self, res: RadarResult, judge: LLMJudge | None, ev_text: str, r: int, last: bool,
                     new_omissions: int) -> tuple[dict[str, float], float | None, dict[str, str]]:
        if judge is None:
            cited = [n for t in res.turns for n in t.cited]
            probs, p_stop = self._rules.judge(res.claim, res.evidence, cited, r, new_omissions)
            return probs, None if last else p_stop, {"verdict": "rule"} if last else {"verdict": "rule", "continue": "rule"}
        next_stage = ROUND_NAMES[r] if r < len(ROUND_NAMES) else "next round"
        fill = dict(claim=fence_safe(res.claim), evidence=ev_text, transcript=_transcript(res),
                    next_stage=next_stage)
        return await judge.judge(res, fill, last, r)

    # -- many claims -----------------------------------------------------------------------
    def fingerprint(self) -> str:
        """What a checkpoint of this debate is valid for: ``config.radar`` (the configured probability
        source among it), the system, the model (or offline), the stopping rule, the evidence mode (and
        pool) and the prompts folder. It makes no request: the source each round really used is in
        its record."""
        pool = self.pool.digest if self.evidence_mode == "retrieved" and self.pool is not None else None
        return runs.fingerprint("radar", self.config.radar, self.system, getattr(self.llm, "model", None),
                                "rule" if self.llm is None else "llm",
                                asdict(self.rule), self.evidence_mode, pool,
                                None if self.prompts_dir is None else str(self.prompts_dir))

    def run_many(self, claims: pd.DataFrame, *, checkpoint: str | Path | None = None, progress: bool = True,
                 concurrency: int | None = None, retry_failed: bool = True) -> RadarResults:
        """Debate every row of ``claims`` (columns id, claim, evidence, label) through :func:`mabpd_kit.runs.run`.

        Args:
            checkpoint: a JSONL file. Each finished claim is appended at once; a rerun (after
                ``kill -9``, say) takes every claim whose id, claim text, evidence and gold label
                and whose debate settings (:meth:`fingerprint`) are unchanged from the file and
                debates only the rest (with the LLM cache, calls already answered are not paid again).
            progress: a progress bar and a one-line summary.
            concurrency: claims debated at once with an LLM (default ``config.llm.concurrency``);
                offline the claims run in turn, without an event loop. With an LLM each claim has
                ``config.llm.item_deadline_s`` seconds (all its calls, the first claim's capability
                probe included); past it the claim fails with a ``deadline:`` reason.
            retry_failed: debate failed claims again on resume.

        Failed claims are kept as records with their reason (``failed``, ``error``) and their
        partial trace; a dead endpoint or a refused key fails every claim, it does not raise.
        """
        items = []
        for row in claims.itertuples(index=False):
            ev, gold = getattr(row, "evidence", None), getattr(row, "label", None)
            data = dict(claim=str(row.claim), evidence=None if ev is None else [str(s) for s in ev],
                        gold=None if gold is None or gold != gold else str(gold))  # NaN (no label) -> None
            items.append(runs.Item(str(row.id), data, runs.digest(data)))
        fp = self.fingerprint()  # no request: the probe runs inside the first claim's coroutine

        async def step(item: runs.Item) -> RadarResult:
            res, exc = await self._attempt(item.data["claim"], item.data["evidence"], id=item.id, gold=item.data["gold"])
            if exc is not None and getattr(exc, "batch_fatal", False):
                raise exc  # a refused key (401/403): the runner stops the batch and says so once
            return res

        def fail(item: runs.Item, exc: BaseException) -> RadarResult:
            return RadarResult(id=item.id, claim=item.data["claim"], gold=item.data["gold"], system=self.system,
                               source="rule" if self.llm is None else "unknown", offline=self.llm is None,
                               evidence_mode=self.evidence_mode,
                               failed=True, error=f"{type(exc).__name__}: {exc}")

        results = runs.run(
            items, step, record=RadarResult, fail=fail, checkpoint=checkpoint, fingerprint=fp,
            concurrency=None if self.llm is None else (concurrency or self.llm.concurrency),
            retry_failed=retry_failed, progress=f"RADAR {self.system}" if progress and len(items) > 3 else False,
            deadline_s=None if self.llm is None else self.llm.item_deadline(self.config.llm.item_deadline_s),
            results=partial(RadarResults, labels=self.labels),
        )
        if progress:
            m = results.metrics()
            used = sorted({st.source for r in results for st in r.states})
            noted = {k: m[k] for k in ("one_hot_rounds", "empty_turns", "refusal_turns", "judge_empty",
                                       "judge_refusals") if m[k]}
            print(f"{self.system}: {len(results)} claims, {m['failed']} failed, "  # unreadable records count as failed
                  f"sources = {', '.join(used) or 'none'}"
                  + (" (offline rule-based stand-in)" if self.llm is None else "")
                  + (f", {results.resumed} from the checkpoint" if results.resumed else "")
                  + "".join(f", {k.replace('_', ' ')} {v}" for k, v in noted.items()))
        return results


def run_systems(claims: pd.DataFrame, *, config: Config | None = None, llm: LLM | None = None,
                systems: Sequence[str] = SYSTEMS, pool: EvidencePool | None = None, progress: bool = True,
                checkpoint_dir: str | Path | None = None) -> tuple[pd.DataFrame, dict[str, RadarResults]]:
    """RADAR and the baselines on the same claims -> (one :meth:`RadarResults.metrics` row per system, all results).

    Retrieved evidence comes from ``pool`` (default: a pool over all of ``claims``' evidence); the
    ``gold-evidence`` system uses each claim's own sentences. With ``checkpoint_dir`` every system
    keeps its checkpoint there (``radar-<system>.jsonl``), so a rerun resumes.
    """
    import pandas as pd

    cfg = config or Config()
    pool = pool if pool is not None else EvidencePool.from_claims(claims)
    rows, all_results = [], {}
    for name in systems:
        ckpt = None if checkpoint_dir is None else Path(checkpoint_dir) / f"radar-{name}.jsonl"
        res = RadarDebate(cfg, llm, system=name, pool=pool).run_many(claims, checkpoint=ckpt, progress=progress)
        all_results[name] = res
        rows.append(dict(system=name, **res.metrics()))
    return pd.DataFrame(rows), all_results
