"""RADAR's Judge: option probabilities from logprobs, samples or stated values, and the LLM Judge.

After every round the Judge gives p(TRUE / HALF-TRUE / FALSE) and, if a further round is possible,
p(STOP) / p(CONTINUE). Where these probabilities come from is the ``source`` (recorded in every
trace; :func:`choose_source` picks it):

* ``logprobs`` - the endpoint returns token log-probabilities: at the first answer token, add up
  the probabilities of the top-logprob tokens that begin each option (" HALF" begins HALF-TRUE)
  and renormalise over the options (:func:`option_probs_from_logprobs`);
* ``samples`` - otherwise ask k times at a positive temperature and count (:func:`option_probs_from_samples`);
* ``structured`` - or ask for the probabilities in a JSON reply (:func:`option_probs_from_stated`);
* ``rule`` - offline: the rule-based stand-in (:mod:`mabpd_kit.radar.rules`).

>>> from mabpd_kit.radar import parse_option
>>> parse_option("Verdict: half true, because ...", ["TRUE", "HALF-TRUE", "FALSE"])
'HALF-TRUE'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from mabpd_kit import prompts, runs
from mabpd_kit.config import Config
from mabpd_kit.llm import online
from mabpd_kit.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    from mabpd_kit.llm import LLM
    from mabpd_kit.radar.debate import RadarResult

__all__ = [
    "STOP_OPTIONS",
    "JudgeProbabilities",
    "LLMJudge",
    "Source",
    "choose_source",
    "option_probs_from_logprobs",
    "option_probs_from_samples",
    "option_probs_from_stated",
    "parse_option",
]

Source = Literal["logprobs", "samples", "structured", "rule"]
STOP_OPTIONS: tuple[str, str] = ("STOP", "CONTINUE")


def _norm_token(tok: str) -> str:
    return tok.strip().strip("*_`\"'").upper()


def _begins(token: str, option: str) -> bool:
    t = _norm_token(token)
    return bool(t) and option.upper().startswith(t)


def option_probs_from_logprobs(tokens: Sequence[Any], options: Sequence[str]) -> dict[str, float] | None:
    """p(option) from token logprobs at the first position whose generated token begins an option.

    ``tokens``: :class:`mabpd_kit.llm.TokenLogprob` items (``token``, ``logprob``, ``top``). At that
    position the probabilities ``exp(logprob)`` of the top-logprob tokens that begin each option are
    summed (" TRUE", "TRUE" and "T" all count for TRUE) and renormalised over the options. A token
    that begins several options splits its mass evenly. Returns None when no position qualifies.

    >>> from types import SimpleNamespace as T
    >>> pos = T(token=" HALF", logprob=-0.4, top=[T(token=" HALF", logprob=-0.4), T(token=" TRUE", logprob=-1.2),
    ...                                        T(token="The", logprob=-3.0)])
    >>> {k: round(v, 3) for k, v in option_probs_from_logprobs([pos], ["TRUE", "HALF-TRUE", "FALSE"]).items()}
    {'TRUE': 0.31, 'HALF-TRUE': 0.69, 'FALSE': 0.0}
    """
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


_OPTION_RE_CACHE: dict[tuple[str, ...], re.Pattern[str]] = {}


def parse_option(text: str, options: Sequence[str]) -> str | None:
    """The first option named in ``text`` (longest options first, so HALF-TRUE is not read as TRUE).

    >>> parse_option("Verdict: half true, because ...", ["TRUE", "HALF-TRUE", "FALSE"])
    'HALF-TRUE'
    """
    key = tuple(options)
    if key not in _OPTION_RE_CACHE:
        alts = sorted(options, key=len, reverse=True)
        pat = "|".join(re.escape(o).replace(r"\-", r"[\s\-_]?") for o in alts)
        _OPTION_RE_CACHE[key] = re.compile(rf"\b({pat})\b", re.IGNORECASE)
    m = _OPTION_RE_CACHE[key].search(text or "")
    if not m:
        return None
    found = re.sub(r"[\s_]", "-", m.group(1).upper())
    for o in options:
        if found == o.upper() or found.replace("-", "") == o.upper().replace("-", ""):
            return o
    return None


def option_probs_from_samples(texts: Sequence[str], options: Sequence[str]) -> dict[str, float] | None:
    """Frequency of each option over k sampled replies (unparseable replies are left out).

    >>> option_probs_from_samples(["STOP", "CONTINUE.", "stop - enough", "??"], ["STOP", "CONTINUE"])
    {'STOP': 0.6666666666666666, 'CONTINUE': 0.3333333333333333}
    """
    picks = [parse_option(t, options) for t in texts]
    picks = [p for p in picks if p is not None]
    if not picks:
        return None
    return {o: picks.count(o) / len(picks) for o in options}


def option_probs_from_stated(values: Mapping[str, Any], options: Sequence[str]) -> dict[str, float] | None:
    """Probabilities the model stated, renormalised over ``options``; None if unusable.

    >>> option_probs_from_stated({"STOP": 0.3, "CONTINUE": 0.9}, ["STOP", "CONTINUE"])
    {'STOP': 0.25, 'CONTINUE': 0.75}
    """
    try:
        vals = {o: float(values.get(o, 0.0)) for o in options}
    except (TypeError, ValueError):
        return None
    if any(not math.isfinite(v) or v < 0 for v in vals.values()):
        return None
    total = sum(vals.values())
    return {o: v / total for o, v in vals.items()} if total > 0 else None


def choose_source(llm: LLM | None, config: Config | None = None) -> Source:
    """Which probability source a Judge on ``llm`` uses (SPEC 3 order: logprobs, samples, stated).

    ``config.radar.prob_source`` forces one; ``auto`` asks the endpoint's probed capabilities (a few
    tiny requests the first time per endpoint and model; cached in memory and on disk after that).
    """
    cfg = config or Config()
    llm = online(llm)
    if llm is None:
        return "rule"
    forced = cfg.radar.prob_source
    if forced != "auto":
        return forced  # type: ignore[return-value]
    caps = llm.capabilities()
    if caps.logprobs and caps.top_logprobs:
        return "logprobs"
    return "samples" if cfg.radar.k_samples > 1 else "structured"


class JudgeProbabilities(BaseModel):
    """The Judge's stated probabilities (``structured`` source)."""

    p_true: float = Field(ge=0, le=1)
    p_half_true: float = Field(ge=0, le=1)
    p_false: float = Field(ge=0, le=1)
    p_stop: float = Field(ge=0, le=1)
    p_continue: float = Field(ge=0, le=1)
    reason: str = ""


class LLMJudge:
    """The Judge on an LLM: the label question and, before a further round, the STOP/CONTINUE question.

    Answers by ``source``: one greedy call read through its logprobs, k samples counted, or one
    structured call with stated probabilities. Every call's usage goes to the debate's record
    (``res.usage``) as it comes in, so a Judge that fails still counts what it cost.
    """

    def __init__(self, llm: LLM, source: Source, config: Config, *, prompts_dir: str | Path | None = None) -> None:
        self.llm, self.source, self.config, self.prompts_dir = llm, source, config, prompts_dir
        self.labels = tuple(config.radar.labels)

    def _messages(self, name: str, fill: Mapping[str, str]) -> list[dict[str, str]]:
        return [{"role": "system", "content": prompts.render("radar", "judge", prompts_dir=self.prompts_dir)},
                {"role": "user", "content": prompts.render("radar", name, prompts_dir=self.prompts_dir, **fill)}]

    async def judge(self, res: RadarResult, fill: Mapping[str, str],
                    last: bool) -> tuple[dict[str, float], float | None]:
        """(label probabilities, p(STOP) or None after the last round) for the debate so far.

        ``fill``: the prompt slots (claim, evidence, transcript, next_stage)."""
        if self.source == "structured":
            return await self._judge_structured(res, fill, last)
        probs = await self._ask(res, self._messages("judge_verdict", fill), self.labels, "radar-judge-verdict")
        if last:
            return probs, None
        sc = await self._ask(res, self._messages("judge_continue", fill), STOP_OPTIONS, "radar-judge-continue")
        return probs, sc["STOP"]

    async def _ask(self, res: RadarResult, msgs: list[dict[str, str]], options: Sequence[str],
                   tag: str) -> dict[str, float]:
        """One option question answered by the logprobs or samples source."""
        rc = self.config.radar
        if self.source == "logprobs":
            comp = await self.llm.achat(msgs, temperature=0.0, max_tokens=40, logprobs=True,
                                        top_logprobs=rc.top_logprobs, tag=tag)
            res.usage += Usage.of([comp])
            probs = option_probs_from_logprobs(comp.logprobs or [], options)
            if probs is not None:
                return probs
            pick = parse_option(comp.text, options)
            if pick is None:
                raise ValueError(f"{tag}: no option among {list(options)} in the reply {comp.text[:80]!r}")
            res.notes.append(f"{tag} round {len(res.states) + 1}: no usable logprobs, one-hot on the reply")
            return {o: float(o == pick) for o in options}
        comps = await runs.gather(*(  # k samples at once; sample_index keeps them apart in the cache
            self.llm.achat(msgs, temperature=rc.sample_temperature, max_tokens=40, sample_index=i, tag=tag)
            for i in range(rc.k_samples)))
        res.usage += Usage.of(comps)
        probs = option_probs_from_samples([c.text for c in comps], options)
        if probs is None:
            raise ValueError(f"{tag}: none of {rc.k_samples} samples named one of {list(options)}")
        return probs

    async def _judge_structured(self, res: RadarResult, fill: Mapping[str, str],
                                last: bool) -> tuple[dict[str, float], float | None]:
        out = await self.llm.astructured(self._messages("judge_probabilities", fill), JudgeProbabilities,
                                         temperature=0.0, tag="radar-judge-structured")
        res.usage += Usage.of(out.calls, repaired=out.repaired)
        v = out.value
        probs = option_probs_from_stated({"TRUE": v.p_true, "HALF-TRUE": v.p_half_true, "FALSE": v.p_false},
                                         self.labels)
        sc = option_probs_from_stated({"STOP": v.p_stop, "CONTINUE": v.p_continue}, STOP_OPTIONS)
        if probs is None or sc is None:
            raise ValueError(f"the Judge stated unusable probabilities: {v.model_dump()}")
        return probs, None if last else sc["STOP"]
