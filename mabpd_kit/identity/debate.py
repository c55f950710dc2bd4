"""The identity debate: prompts (:func:`build_messages`), one question's debate (:func:`debate_question`)
and the batch (:func:`run_debate`). Offline the belief simulator plays the agents, and every row says so."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mabpd_kit import prompts, runs
from mabpd_kit.config import Config
from mabpd_kit.identity.logs import CONDITIONS, Condition, DebateRecord, LogRow, log_frame
from mabpd_kit.identity.measures import ibc
from mabpd_kit.identity.questions import Question, is_correct, parse_answer, reply_fault, usable
from mabpd_kit.identity.simulator import SIMULATOR_MODEL, BeliefSpec, simulate_questions
from mabpd_kit.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    from mabpd_kit.llm import LLM, Completion

__all__ = ["DebateResults", "build_messages", "call_seed", "debate_question", "run_debate"]

PROMPTS = ("system", "round0", "vanilla", "anonymised")
"""The identity prompt files (``mabpd_kit/prompts/identity/<name>.md``)."""


def _quote(text: str | None, max_chars: int) -> str:
    """A previous reply as shown to agents: whole if short, else its end, marked as cut."""
    t = (text or "").strip()
    if not t:
        return "(no answer)"
    if len(t) > max_chars:
        t = "[...] " + t[-max_chars:]
    return t


def _order(seed: int, question_id: str, agent: int, rnd: int, n: int) -> list[int]:
    """The seeded random order in which an anonymised prompt lists ``n`` answers."""
    ss = np.random.SeedSequence([seed, zlib.crc32(question_id.encode()), agent, rnd])
    return [int(k) for k in np.random.default_rng(ss).permutation(n)]


def build_messages(question: Question, agent: int, rnd: int, condition: Condition,
                   previous: Sequence[str | None] | None = None, config: Config | None = None, *,
                   prompts_dir: str | Path | None = None) -> list[dict[str, str]]:
    """Chat messages for ``agent`` in round ``rnd``; ``previous[k]`` is agent k's reply in round ``rnd - 1``."""
    cfg = config or Config()
    n = cfg.identity.n_agents
    slots: dict[str, Any] = {
        "n_agents": n, "question_block": question.block(), "answer_format": question.answer_format(), "round": rnd,
    }
    system = prompts.render("identity", "system", prompts_dir=prompts_dir, **slots)
    if rnd == 0:
        user = prompts.render("identity", "round0", prompts_dir=prompts_dir, **slots)
    else:
        if previous is None or len(previous) != n:
            raise ValueError(f"round {rnd} needs the {n} replies of round {rnd - 1}")
        cut = cfg.identity.max_response_chars
        if condition == "vanilla":
            peers = "\n\n".join(f"Agent {k + 1}:\n{_quote(previous[k], cut)}" for k in range(n) if k != agent)
            user = prompts.render("identity", "vanilla", prompts_dir=prompts_dir, own=_quote(previous[agent], cut),
                                  peers=peers, **slots)
        elif condition == "anonymised":
            order = _order(cfg.identity.seed, question.id, agent, rnd, n)
            answers = "\n\n".join(f"Answer {pos + 1}:\n{_quote(previous[k], cut)}" for pos, k in enumerate(order))
            user = prompts.render("identity", "anonymised", prompts_dir=prompts_dir, answers=answers, **slots)
        else:
            raise ValueError(f"unknown condition {condition!r}; choose vanilla or anonymised")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def call_seed(base: int, agent: int, rnd: int) -> int:
    """The sampling seed of a call, its digits spelling (base, round, agent): base 0, round 2, agent 3 -> 203."""
    if not 0 <= agent < 100 or not 0 <= rnd < 100:
        raise ValueError("call_seed supports up to 100 agents and 100 rounds")
    return base * 10_000 + rnd * 100 + agent


async def _answer(llm: LLM, q: Question, agent: int, rnd: int, condition: Condition, previous: list[str | None] | None,
                  cfg: Config, prompts_dir: str | Path | None) -> tuple[LogRow, Completion | None]:
    """One agent's answer in one round; an endpoint fault is retried, never cached."""
    from mabpd_kit.llm import LLMError

    base: dict[str, Any] = {
        "condition": condition, "question": q.id, "agent": agent, "round": rnd, "gold": q.answer, "model": llm.model,
    }
    messages = build_messages(q, agent, rnd, condition, previous, cfg, prompts_dir=prompts_dir)

    def fault(c: Completion) -> str | None:
        return reply_fault(c, q, max_tokens=cfg.identity.max_tokens)

    tries = llm.config.max_retries + 1
    for attempt in range(tries):
        try:
            comp = await llm.achat(
                messages,
                temperature=cfg.identity.temperature,
                max_tokens=cfg.identity.max_tokens,
                seed=call_seed(cfg.identity.seed, 0, rnd),  # the LLM layer adds sample_index: call_seed(seed, agent, rnd)
                sample_index=agent,
                tag=f"identity/{condition}/r{rnd}/a{agent}",
                accept=lambda c: usable(c, q, max_tokens=cfg.identity.max_tokens),  # only a parsed answer is cached
            )
            reason = fault(comp)
        except LLMError as exc:  # logged with its error; the question is failed and debated again on resume
            if getattr(exc, "batch_fatal", False):  # a refused key (401/403): the runner stops the batch and says so once
                raise
            if not getattr(exc, "garbled", False):  # the SDK already retried what it could (429, 5xx, time-outs)
                return LogRow(**base, answer=None, correct=False, parsed=False, parse_method="call-failed",
                              error=str(exc)), None
            comp, reason = None, str(exc)  # an unreadable body: a fault like the others
        if reason is None:
            break
        if (comp is not None and comp.cached) or attempt + 1 == tries:  # replay mode: the recorded reply is the fault
            note = f"{attempt + 1} {'try' if attempt == 0 else 'tries'}, config.llm.max_retries={tries - 1}"
            error = (f"{reason} ({note})" if comp is None  # an unreadable body: its message names the endpoint
                     else f"{reason} from {llm.endpoint} ({'the recorded reply' if comp.cached else note})")
            return LogRow(**base, answer=None, correct=False, parsed=False, parse_method="call-failed",
                          raw=comp.text if comp is not None else "", error=error), None
        await asyncio.sleep(min(2.0, 0.1 * 2 ** attempt))
    p = parse_answer(comp.text, q)
    row = LogRow(
        **base, answer=p.answer, correct=is_correct(p.answer, q), parsed=p.ok, parse_method=p.method,
        raw=comp.text or "", prompt_tokens=comp.prompt_tokens or 0, completion_tokens=comp.completion_tokens or 0,
        latency_s=comp.latency_s or 0.0, cached=bool(comp.cached),
    )
    return row, comp


async def debate_question(llm: LLM, question: Question, condition: Condition, config: Config | None = None, *,
                          prompts_dir: str | Path | None = None) -> DebateRecord:
    """Debate one question under one condition; the record fails when any call failed."""
    cfg = config or Config()
    rows: list[LogRow] = []
    completions: list[Completion] = []
    previous: list[str | None] | None = None
    for rnd in range(cfg.identity.rounds + 1):
        turn = await runs.gather(*(_answer(llm, question, a, rnd, condition, previous, cfg, prompts_dir)
                                   for a in range(cfg.identity.n_agents)))
        rows.extend(r for r, _ in turn)
        completions.extend(c for _, c in turn if c is not None)
        previous = [r.raw if r.error is None else None for r, _ in turn]
    errors = [f"agent {r.agent} round {r.round}: {r.error}" for r in rows if r.error is not None]
    return DebateRecord(id=f"{condition}/{question.id}", condition=condition, question=question.id,
                        failed=bool(errors), error="; ".join(errors) or None, usage=Usage.of(completions), rows=rows)


class DebateResults(runs.Results[DebateRecord]):
    """The records of :func:`run_debate`: ``to_frame()`` is the debate log."""

    def to_frame(self) -> pd.DataFrame:
        return log_frame(row for rec in self.records for row in rec.rows)

    def metrics(self) -> dict[str, float]:
        """Counts, usage, unparsed answers and failed calls and, with both conditions, Delta per condition and the IBC."""
        out: dict[str, float] = dict(super().metrics())
        logs = self.to_frame()
        failed = logs["error"].notna()  # a failed call is not an answer, parsed or unparsed
        out |= {"answers": len(logs), "unparsed": int((~logs["parsed"].astype(bool) & ~failed).sum()),
                "failed_calls": int(failed.sum())}
        if len(logs) and set(CONDITIONS) <= set(logs["condition"]):
            res = ibc(logs, ci=False)
            out |= {"delta_vanilla": res.delta_vanilla, "delta_anonymised": res.delta_anonymised, "ibc": res.estimate}
        return out


def run_debate(questions: Sequence[Question], llm: LLM | None = None, *, conditions: Sequence[Condition] = CONDITIONS,
               config: Config | None = None, checkpoint: str | Path | None = None, concurrency: int | None = None,
               prompts_dir: str | Path | None = None, progress: bool = True) -> DebateResults:
    """Debate every question under each condition; ``results.to_frame()`` is the log. With ``checkpoint`` a
    rerun reuses finished questions; ``llm=None`` or offline: the belief simulator answers (labelled)."""
    from mabpd_kit.llm import online

    cfg = config or Config()
    bad = set(conditions) - set(CONDITIONS)
    if bad:
        raise ValueError(f"unknown condition(s) {sorted(bad)}; choose vanilla and/or anonymised")
    items = [runs.Item(f"{c}/{q.id}", (c, q), runs.digest(q.model_dump(mode="json")))
             for c in conditions for q in questions]
    live = online(llm)
    templates = {name: prompts.template("identity", name, prompts_dir) for name in PROMPTS}

    def fail(item: runs.Item, exc: BaseException) -> DebateRecord:
        c, q = item.data
        return DebateRecord(id=item.id, condition=c, question=q.id, failed=True, error=f"{type(exc).__name__}: {exc}")

    if live is None:
        if items:
            runs.results.status("identity: offline, so the belief simulator plays the agents (rows have source='simulator')")
        return _simulated(questions, items, fail, conditions, cfg, checkpoint)

    async def step(item: runs.Item) -> DebateRecord:
        c, q = item.data
        return await debate_question(live, q, c, cfg, prompts_dir=prompts_dir)

    res = runs.run(items, step, record=DebateRecord, fail=fail, checkpoint=checkpoint,
                   fingerprint=runs.fingerprint(cfg.identity, live.model, templates),
                   concurrency=concurrency or live.concurrency, deadline_s=live.item_deadline(cfg.llm.item_deadline_s),
                   progress="identity debate (questions)" if progress else False, results=DebateResults)
    if progress and len(res):
        m = res.metrics()
        runs.results.status(f"identity: {m['answers']} answers ({res.resumed} of {len(res)} questions from the checkpoint), "
                            f"{m['unparsed']} unparsed, {m['failed_calls']} failed calls; model {live.model}")
    return res


def _simulated(questions: Sequence[Question], items: list[runs.Item], fail: Any, conditions: Sequence[Condition],
               cfg: Config, checkpoint: str | Path | None) -> DebateResults:
    """The offline path: one simulation of the whole batch, handed out per item through the runner."""
    if not items:  # an empty batch (run() would still check ids, there are none)
        return DebateResults([], checkpoint=str(checkpoint) if checkpoint else None)
    logs = simulate_questions(questions, BeliefSpec.from_config(cfg), seed=cfg.identity.seed, conditions=conditions)
    cols = list(LogRow.model_fields)
    by_item: dict[str, list[LogRow]] = {}
    for values in zip(*(logs[c].tolist() for c in cols)):  # column lists: much faster than to_dict here
        rec = dict(zip(cols, values))
        by_item.setdefault(f"{rec['condition']}/{rec['question']}", []).append(LogRow.model_validate(rec))

    async def step(item: runs.Item) -> DebateRecord:
        c, q = item.data
        return DebateRecord(id=item.id, condition=c, question=q.id, rows=by_item.get(item.id, []))

    batch = runs.digest([q.model_dump(mode="json") for q in questions])
    return runs.run(items, step, record=DebateRecord, fail=fail, checkpoint=checkpoint,
                    fingerprint=runs.fingerprint(cfg.identity, SIMULATOR_MODEL, batch, list(conditions)),
                    results=DebateResults)
