"""RADAR's Judge: option probabilities from logprobs, samples, stated values or a marked one-hot verdict,
and the LLM Judge; every round records each answer's source and the weakest."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from mabpd_kit import prompts, runs
from mabpd_kit.config import Config
from mabpd_kit.llm import EndpointError, StructuredOutputError, online
from mabpd_kit.radar.replies import ReplyNote, reply_note
from mabpd_kit.radar.stopping import ONE_HOT
from mabpd_kit.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    from mabpd_kit.llm import LLM, Capabilities
    from mabpd_kit.radar.records import RadarResult

__all__ = [
    "SOURCE_ORDER", "STOP_OPTIONS", "JudgeProbabilities", "LLMJudge", "Source", "choose_source",
    "option_probs_from_logprobs", "option_probs_from_samples", "option_probs_from_stated", "parse_option",
    "source_chain", "weakest_source"
]

Source = Literal["logprobs", "samples", "structured", "one_hot", "rule"]
STOP_OPTIONS: tuple[str, str] = ("STOP", "CONTINUE")
SOURCE_ORDER: tuple[str, ...] = ("rule", "logprobs", "samples", "structured", ONE_HOT)  # strongest first


def weakest_source(sources: Sequence[str]) -> str:
    """The weakest of ``sources`` in :data:`SOURCE_ORDER` (unknown names count as weakest)."""
    rank = {s: i for i, s in enumerate(SOURCE_ORDER)}
    return max(sources, key=lambda s: rank.get(s, len(SOURCE_ORDER))) if sources else "unknown"


def _norm_token(tok: str) -> str:
    return tok.strip().strip("*_`\"'").upper()


def _begins(token: str, option: str) -> bool:
    t = _norm_token(token)
    return bool(t) and option.upper().startswith(t)


def option_probs_from_logprobs(tokens: Sequence[Any], options: Sequence[str]) -> dict[str, float] | None:
    """p(option) at the first position whose token begins an option, renormalised; None when none does."""
    for pos in tokens:
        if not any(_begins(pos.token, o) for o in options):
            continue
        alts = list(getattr(pos, "top", None) or [])
        if not any(a.token == pos.token for a in alts):
            alts.append(pos)
        mass = {o: 0.0 for o in options}
        seen: set[str] = set()
        for a in alts:
            if a.token in seen:
                continue
            seen.add(a.token)
            hits = [o for o in options if _begins(a.token, o)]
            for o in hits:
                mass[o] += math.exp(float(a.logprob)) / len(hits)
        total = sum(mass.values())
        if total > 0:
            return {o: v / total for o, v in mass.items()}
    return None


def parse_option(text: str, options: Sequence[str]) -> str | None:
    """The first option named in ``text`` (longest first, so HALF-TRUE is not read as TRUE)."""
    pat = "|".join(re.escape(o).replace(r"\-", r"[\s\-_]?") for o in sorted(options, key=len, reverse=True))
    m = re.search(rf"\b({pat})\b", text or "", re.IGNORECASE)
    if not m:
        return None
    found = re.sub(r"[\s_]", "-", m.group(1).upper())
    for o in options:
        if found == o.upper() or found.replace("-", "") == o.upper().replace("-", ""):
            return o
    return None


def option_probs_from_samples(texts: Sequence[str], options: Sequence[str]) -> dict[str, float] | None:
    """Frequency of each option over sampled replies (unparseable ones left out)."""
    picks = [parse_option(t, options) for t in texts]
    picks = [p for p in picks if p is not None]
    if not picks:
        return None
    return {o: picks.count(o) / len(picks) for o in options}


def option_probs_from_stated(values: Mapping[str, Any], options: Sequence[str]) -> dict[str, float] | None:
    """Stated probabilities renormalised over ``options``; None if unusable."""
    try:
        vals = {o: float(values.get(o, 0.0)) for o in options}
    except (TypeError, ValueError):
        return None
    if any(not math.isfinite(v) or v < 0 for v in vals.values()):
        return None
    total = sum(vals.values())
    return {o: v / total for o, v in vals.items()} if total > 0 else None


def source_chain(caps: Capabilities | None, config: Config | None = None) -> tuple[str, ...]:
    """The sources a Judge tries, in order, before the one-hot fallback."""
    rc = (config or Config()).radar
    if rc.prob_source != "auto":
        return (rc.prob_source,)
    chain = ["logprobs"] if caps is not None and caps.logprobs and caps.top_logprobs else []
    if rc.k_samples > 1:
        chain.append("samples")
    return (*chain, "structured")


def choose_source(llm: LLM | None, config: Config | None = None) -> Source:
    """The first source a Judge on ``llm`` tries; ``rule`` offline. With ``auto`` it probes the endpoint."""
    cfg = config or Config()
    llm = online(llm)
    if llm is None:
        return "rule"
    caps = None if cfg.radar.prob_source != "auto" else llm.capabilities()
    return source_chain(caps, cfg)[0]  # type: ignore[return-value]


class JudgeProbabilities(BaseModel):
    """The Judge's stated probabilities (``structured``), the reasoning first."""

    reason: str = Field("", description="one or two sentences of reasoning, written before the probabilities")
    p_true: float = Field(ge=0, le=1)
    p_half_true: float = Field(ge=0, le=1)
    p_false: float = Field(ge=0, le=1)
    p_stop: float = Field(ge=0, le=1)
    p_continue: float = Field(ge=0, le=1)


class LLMJudge:
    """The Judge on an LLM: the label question and, before a further round, STOP/CONTINUE; each question
    tries the sources of ``chain`` in turn, else makes the bare verdict one-hot."""

    def __init__(self, llm: LLM, chain: Sequence[str], config: Config, *,
                 prompts_dir: str | Path | None = None) -> None:
        self.llm, self.chain, self.config, self.prompts_dir = llm, tuple(chain), config, prompts_dir
        self.labels = tuple(config.radar.labels)
        self.sampling_refused: str | None = None  # why, once the endpoint refused a sampled request

    @property
    def source(self) -> str:
        """The first source tried."""
        return self.chain[0]

    def _messages(self, name: str, fill: Mapping[str, str]) -> list[dict[str, str]]:
        """The prompt ``name`` (judge_verdict, judge_continue, judge_probabilities) filled with ``fill``."""
        return prompts.messages("radar", name, prompts_dir=self.prompts_dir, **fill)

    async def judge(self, res: RadarResult, fill: Mapping[str, str], last: bool,
                    round: int) -> tuple[dict[str, float], float | None, dict[str, str]]:
        """(label probabilities, p(STOP) or None after the last round, each answer's source)."""
        memo: dict[str, Any] = {}  # one structured reply answers both questions of the round
        probs, src = await self._question(res, fill, "verdict", self.labels, round, memo)
        sources = {"verdict": src}
        if last:
            return probs, None, sources
        sc, src = await self._question(res, fill, "continue", STOP_OPTIONS, round, memo)
        sources["continue"] = src
        return probs, sc["STOP"], sources

    def _note(self, res: RadarResult, round: int, question: str, text: str | None) -> None:
        note = reply_note(text)
        if note is not None and parse_option(text or "", (*self.labels, *STOP_OPTIONS)) is None:
            res.judge_notes.append(ReplyNote(round=round, question=question, note=note, text=(text or "")[:200]))

    async def _question(self, res: RadarResult, fill: Mapping[str, str], question: str, options: Sequence[str],
                        round: int, memo: dict[str, Any]) -> tuple[dict[str, float], str]:
        tag = f"radar-judge-{question}"
        msgs = self._messages("judge_verdict" if question == "verdict" else "judge_continue", fill)
        greedy: list[str] = []  # greedy replies (a bare verdict for the one-hot fallback)
        why: list[str] = []
        for src in self.chain:  # logprobs, samples, structured (config.radar.prob_source allows no other)
            if src == "logprobs":
                probs = await self._logprobs(res, msgs, options, tag, round, question, greedy)
                reason = "no usable logprobs in the reply"
            elif src == "samples":
                probs, reason = await self._samples(res, msgs, options, tag, round, question)
            else:
                probs, reason = await self._structured(res, fill, question, round, memo)
            if probs is not None:
                return probs, src
            why.append(reason)
        if not greedy:  # a bare verdict: one plain greedy call
            comp = await self.llm.achat(msgs, temperature=0.0, max_tokens=40, tag=tag)
            res.usage += Usage.of([comp])
            self._note(res, round, question, comp.text)
            greedy.append(comp.text)
        pick = parse_option(greedy[0], options)
        if pick is None:
            raise ValueError(f"{tag} round {round}: no usable answer ({'; '.join(why)}; "
                             f"no option among {list(options)} in the reply {greedy[0][:80]!r})")
        res.notes.append(f"{tag} round {round}: {'; '.join(why)}: one-hot on the bare verdict {pick}")
        return {o: float(o == pick) for o in options}, ONE_HOT

    async def _logprobs(self, res: RadarResult, msgs: list[dict[str, str]], options: Sequence[str], tag: str,
                        round: int, question: str, greedy: list[str]) -> dict[str, float] | None:
        fmt = self.llm.server.choice_format(list(options))  # a grammar, where the server has one: the reply is an option
        comp = await self.llm.achat(msgs, temperature=0.0, max_tokens=40, logprobs=True,
                                    top_logprobs=self.config.radar.top_logprobs, tag=tag, response_format=fmt)
        res.usage += Usage.of([comp])
        self._note(res, round, question, comp.text)
        greedy.append(comp.text)
        if comp.usable:  # a clear answer settles what the capability probe may have left open
            from mabpd_kit.llm import registry

            ek = registry.endpoint_key(self.llm.endpoint, self.llm.model)
            registry.settle(ek, "logprobs", bool(comp.logprobs))
            registry.settle(ek, "top_logprobs", any(t.top for t in comp.logprobs or []))
        return option_probs_from_logprobs(comp.logprobs or [], options)

    async def _samples(self, res: RadarResult, msgs: list[dict[str, str]], options: Sequence[str], tag: str,
                       round: int, question: str) -> tuple[dict[str, float] | None, str]:
        from mabpd_kit.llm.registry import MODE_REFUSED

        rc = self.config.radar
        if self.sampling_refused is not None:
            return None, f"samples: {self.sampling_refused}"
        try:
            comps = await runs.gather(*(  # k samples at once; sample_index keeps them apart in the cache
                self.llm.achat(msgs, temperature=rc.sample_temperature, max_tokens=40, sample_index=i, tag=tag)
                for i in range(rc.k_samples)))
        except EndpointError as exc:
            if exc.status not in MODE_REFUSED or len(self.chain) == 1:
                raise  # a failing endpoint, or sampling forced: the claim fails with this reason
            self.sampling_refused = f"the endpoint refused temperature {rc.sample_temperature:g} (HTTP {exc.status})"
            res.notes.append(f"{tag} round {round}: {self.sampling_refused}; sampling is off for this run")
            return None, f"samples: {self.sampling_refused}"
        res.usage += Usage.of(comps)
        for c in comps:
            self._note(res, round, question, c.text)
        probs = option_probs_from_samples([c.text for c in comps], options)
        return probs, f"none of {rc.k_samples} samples named one of {list(options)}"

    async def _structured(self, res: RadarResult, fill: Mapping[str, str], question: str, round: int,
                          memo: dict[str, Any]) -> tuple[dict[str, float] | None, str]:
        if "structured" not in memo:
            try:
                out = await self.llm.astructured(self._messages("judge_probabilities", fill), JudgeProbabilities,
                                                 temperature=0.0, tag="radar-judge-structured")
            except StructuredOutputError as exc:
                self._note(res, round, "probabilities", exc.raw)
                memo["structured"] = None, "structured: no valid stated probabilities in the reply"
            else:
                res.usage += Usage.of(out.calls, repaired=out.repaired)
                v = out.value
                probs = option_probs_from_stated({"TRUE": v.p_true, "HALF-TRUE": v.p_half_true, "FALSE": v.p_false},
                                                 self.labels)
                sc = option_probs_from_stated({"STOP": v.p_stop, "CONTINUE": v.p_continue}, STOP_OPTIONS)
                memo["structured"] = (probs, sc), f"structured: unusable stated probabilities {v.model_dump()}"
        value, reason = memo["structured"]
        if value is None:
            return None, reason
        probs = value[0] if question == "verdict" else value[1]
        return probs, reason
