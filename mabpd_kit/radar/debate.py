"""RADAR (SPEC 3): evidence, a Politician and a Scientist debating (opening, rebuttal, closing), the
Judge and dual-threshold stopping after each round. Baselines: :data:`SYSTEMS`."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mabpd_kit import prompts, runs
from mabpd_kit.config import Config
from mabpd_kit.injection import fence
from mabpd_kit.llm import LLMError, online
from mabpd_kit.radar.evidence import Evidence, EvidencePool, Turn, cited_numbers, format_evidence
from mabpd_kit.radar.judge import LLMJudge, Source, choose_source, source_chain, weakest_source
from mabpd_kit.radar.records import RadarResult, RadarResults
from mabpd_kit.radar.replies import reply_note
from mabpd_kit.radar.rules import RuleBasedRadar
from mabpd_kit.radar.stopping import ROUND_NAMES, DualThreshold, RoundState
from mabpd_kit.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mabpd_kit.llm import LLM

__all__ = ["SYSTEMS", "RadarDebate", "RadarResult", "RadarResults", "run_systems"]

SYSTEMS: tuple[str, ...] = ("radar", "no-early-stopping", "procon", "single", "gold-evidence")


def _stage_instructions(prompts_dir: str | Path | None) -> dict[str, str]:
    """``stages.md``: one ``## stage`` section per round, what a turn of that stage must do."""
    text = prompts.template("radar", "stages", prompts_dir)
    parts = re.split(r"(?m)^##\s*(\w+)\s*$", text)
    return {parts[i].strip().lower(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _transcript(res: RadarResult) -> str:
    """The turns so far, the same text for every role (one cacheable prefix), fenced as data."""
    if not res.turns:
        return "(no turns yet)"
    lines = []
    for t in res.turns:
        text = "(no answer)" if t.note == "empty" else t.text
        lines.append(f"[Round {t.round} · {t.stage}] {t.agent.title()}: {text}")
    return fence("\n\n".join(lines))


class RadarDebate:
    """RADAR (or a baseline) on claims, with an LLM or, offline, the rule-based stand-in.

    ``rule`` defaults to ``DualThreshold.from_config``; ``pool``: the shared evidence pool (None: each
    claim's own sentences). Constructing makes no request: a dead endpoint fails claims, not the constructor.
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
        """The first source the Judge tries (``rule`` offline). Blocking: may probe the endpoint."""
        if self._llm_judge is not None:
            return self._llm_judge.source  # type: ignore[return-value]
        return choose_source(self.llm, self.config)

    async def judge(self) -> LLMJudge | None:
        """The LLM Judge (None offline), made on first use; with ``auto`` it awaits the capability probe."""
        if self.llm is None or self._llm_judge is not None:
            return self._llm_judge
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        async with self._lock[1]:  # concurrent first claims probe once
            if self._llm_judge is None:
                caps = None
                if self.config.radar.prob_source == "auto":
                    from mabpd_kit.llm import registry
                    from mabpd_kit.llm.probe import probe

                    caps = await probe(self.llm, self.llm.model)
                    unsure = registry.undecided(registry.endpoint_key(self.llm.endpoint, self.llm.model))
                    # a feature the probe could not settle is tried: the Judge's first call decides it
                    caps = caps.model_copy(update={f: True for f in unsure if f in ("logprobs", "top_logprobs")})
                self._llm_judge = LLMJudge(self.llm, source_chain(caps, self.config), self.config,
                                       prompts_dir=self.prompts_dir)
        return self._llm_judge

    def evidence_for(self, claim: str, evidence: Sequence[str] | None) -> list[Evidence]:
        """Retrieved top-m from the shared pool, or the claim's own (gold) sentences."""
        m = self.config.radar.top_m
        if self.evidence_mode == "gold":
            return [Evidence(number=i, text=" ".join(str(s).split())) for i, s in enumerate(list(evidence or [])[:m], 1)
                    if str(s).strip()]
        return self.pool.retrieve(claim, m)

    def run(self, claim: str, evidence: Sequence[str] | None = None, *, id: str | None = None,
            gold: str | None = None) -> RadarResult:
        """Debate one claim (blocking; fine in Jupyter): :meth:`arun` run to its end."""
        return runs.complete(self.arun(claim, evidence, id=id, gold=gold), offline=self.llm is None)

    async def arun(self, claim: str, evidence: Sequence[str] | None = None, *, id: str | None = None,
                   gold: str | None = None) -> RadarResult:
        """Debate one claim. Failures are caught and flagged in the result (``failed``, ``error``)."""
        return (await self._attempt(claim, evidence, id=id, gold=gold))[0]

    def _result(self, id: str, claim: str, gold: str | None, **fields: Any) -> RadarResult:
        return RadarResult(id=id, claim=claim, gold=gold, system=self.system, offline=self.llm is None,
                           source="rule" if self.llm is None else "unknown", evidence_mode=self.evidence_mode, **fields)

    async def _attempt(self, claim: str, evidence: Sequence[str] | None, *, id: str | None,
                       gold: str | None) -> tuple[RadarResult, BaseException | None]:
        """(the result, the error that failed it or None)."""
        cid = str(id) if id is not None else "claim-" + hashlib.sha1(claim.encode()).hexdigest()[:8]
        res = self._result(cid, claim, gold)
        try:
            res.evidence = self.evidence_for(claim, evidence)
            await self._debate(res, await self.judge())
        except (LLMError, ValueError, KeyError) as exc:  # one bad claim must not sink a batch: flag it, keep the trace
            res.failed = True
            res.error = f"{type(exc).__name__}: {exc}"
            return res, exc
        return res, None

    async def _debate(self, res: RadarResult, judge: LLMJudge | None) -> None:
        ev_text = fence(format_evidence(res.evidence))
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
        msgs = prompts.messages("radar", "turn", prompts_dir=self.prompts_dir, claim=fence(res.claim),
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
        fill = dict(claim=fence(res.claim), evidence=ev_text, transcript=_transcript(res),
                    next_stage=next_stage)
        return await judge.judge(res, fill, last, r)

    def fingerprint(self) -> str:
        """What a checkpoint is valid for (settings, system, model, rule, evidence, prompts). No request."""
        pool = self.pool.digest if self.evidence_mode == "retrieved" and self.pool is not None else None
        return runs.fingerprint("radar", self.config.radar, self.system, getattr(self.llm, "model", None),
                                "rule" if self.llm is None else "llm",
                                asdict(self.rule), self.evidence_mode, pool,
                                None if self.prompts_dir is None else str(self.prompts_dir))

    def run_many(self, claims: pd.DataFrame, *, checkpoint: str | Path | None = None, progress: bool = True,
                 concurrency: int | None = None, retry_failed: bool = True) -> RadarResults:
        """Debate every row of ``claims`` (id, claim, evidence, label); with ``checkpoint`` a rerun debates
        only the claims not in it. Failed claims are records with their reason and partial trace."""
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
            return self._result(item.id, item.data["claim"], item.data["gold"], failed=True,
                                error=f"{type(exc).__name__}: {exc}")

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
    """RADAR and the baselines on the same claims -> (one metrics row per system, all results);
    ``checkpoint_dir`` keeps ``radar-<system>.jsonl`` per system."""
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
