"""RADAR: role-anchored debate for half-truth detection (SPEC 3).

A claim is checked in three steps:

1. **Evidence.** Every claim gets the top-m sentences (default 20) of one *shared* BM25 index built
   over the evidence of all claims (:class:`EvidencePool`): realistic, noisy retrieval. The
   ``gold`` mode gives each claim its own article sentences instead (the upper bound).
2. **Debate.** A *Politician* builds the most persuasive supportive reading of the evidence, a
   *Scientist* probes what it leaves out; opening -> rebuttal -> closing, each agent seeing its
   own earlier turns and the opponent's. Evidence is shown as numbered lines ``[E1] ...`` and
   cited as ``[E3]``.
3. **Judge + stopping.** After every round the Judge gives p(TRUE / HALF-TRUE / FALSE) and, if a
   further round is possible, p(STOP) / p(CONTINUE). :class:`mabpd_kit.stopping.DualThreshold`
   stops when ``s = p(STOP) - p(CONTINUE) >= tau_s`` and ``max p(label) >= tau_v``.

Where the Judge's probabilities come from (recorded as ``source`` in every trace):

* ``logprobs`` - the endpoint returns token log-probabilities: at the first answer token, add up
  the probabilities of the top-logprob tokens that begin each option (" HALF" begins HALF-TRUE)
  and renormalise over the options (:func:`option_probs_from_logprobs`);
* ``samples`` - otherwise ask k times at a positive temperature and count (:func:`option_probs_from_samples`);
* ``structured`` - or ask for the probabilities in a JSON reply (:func:`option_probs_from_stated`);
* ``rule`` - offline: a deterministic rule-based stand-in (evidence overlap, negation and hedge
  cues), so the notebook and ``mabpd radar`` run without any model. It is a teaching prop, not
  RADAR: every turn it writes starts with ``[offline rule-based stand-in]``.

Baselines (:data:`SYSTEMS`): ``radar`` (the method), ``no-early-stopping``, ``procon`` (fixed
Pro/Con roles), ``single`` (the Judge alone, one pass) and ``gold-evidence``.

>>> from mabpd_kit.halftruth import RadarDebate, example_claims
>>> ex = example_claims().iloc[0]
>>> res = RadarDebate(llm=None).run(ex.claim, ex.evidence, id=ex.id, gold=ex.label)
>>> res.source, res.rounds_run >= 1, res.label in ("TRUE", "HALF-TRUE", "FALSE")
('rule', True, True)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import math
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from mabpd_kit.config import Config
from mabpd_kit.stopping import (
    ROUND_NAMES,
    DualThreshold,
    RoundState,
    StopDecision,
    Trajectory,
)

if TYPE_CHECKING:  # pragma: no cover
    from mabpd_kit.llm import LLM, Completion

__all__ = [
    "SYSTEMS",
    "DebateResult",
    "Evidence",
    "EvidencePool",
    "RadarDebate",
    "RuleBasedRadar",
    "Turn",
    "choose_source",
    "cli_add_arguments",
    "cli_run",
    "example_claims",
    "format_evidence",
    "load_prompt",
    "option_probs_from_logprobs",
    "option_probs_from_samples",
    "option_probs_from_stated",
    "parse_option",
    "results_frame",
    "run_systems",
    "summarize",
]

Source = Literal["logprobs", "samples", "structured", "rule"]
STOP_OPTIONS: tuple[str, str] = ("STOP", "CONTINUE")
SYSTEMS: tuple[str, ...] = ("radar", "no-early-stopping", "procon", "single", "gold-evidence")
OFFLINE_TAG = "[offline rule-based stand-in]"


# =============================================================================================
# Evidence
# =============================================================================================
class Evidence(BaseModel):
    """One evidence sentence as shown to the agents (``number`` is the [E#] they cite)."""

    model_config = ConfigDict(frozen=True)
    number: int
    text: str
    score: float = 0.0
    owner: str | None = Field(None, description="id of the claim whose article the sentence came from")


def format_evidence(items: Sequence[Evidence | str]) -> str:
    """Numbered lines ``[E1] text`` (never a Python list repr); ``(no evidence)`` when empty.

    >>> print(format_evidence(["Prices rose 4%.", "Wages rose 6%."]))
    [E1] Prices rose 4%.
    [E2] Wages rose 6%.
    """
    lines = []
    for i, it in enumerate(items, 1):
        text = it.text if isinstance(it, Evidence) else str(it)
        num = it.number if isinstance(it, Evidence) else i
        lines.append(f"[E{num}] {' '.join(text.split())}")
    return "\n".join(lines) if lines else "(no evidence)"


class EvidencePool:
    """A BM25 index over sentences pooled from many claims (the RADAR "noisy retrieval" setting).

    Retrieval for one claim searches *everybody's* sentences, so the top-m mixes relevant
    sentences, near-misses about the same topic and sentences from other claims' articles.
    BM25 comes from ``bm25s`` (fast sparse scoring in numpy; far quicker and better tested than a
    hand-written BM25).

    >>> pool = EvidencePool(["Gas cost $4.11 in July 2008.", "Unemployment fell in 2019."], owners=["a", "b"])
    >>> [e.owner for e in pool.retrieve("gas prices 2008", m=1)]
    ['a']
    """

    def __init__(self, sentences: Sequence[str], owners: Sequence[str | None] | None = None) -> None:
        import bm25s

        seen: dict[str, int] = {}
        texts: list[str] = []
        own: list[str | None] = []
        for i, s in enumerate(sentences):
            t = " ".join(str(s).split())
            if not t or t in seen:
                continue
            seen[t] = len(texts)
            texts.append(t)
            own.append(owners[i] if owners is not None else None)
        if not texts:
            raise ValueError("the evidence pool is empty")
        self.sentences = texts
        self.owners = own
        self._bm25 = bm25s.BM25()
        self._bm25.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    @classmethod
    def from_claims(cls, claims: pd.DataFrame) -> EvidencePool:
        """Pool the ``evidence`` lists of every row of ``claims`` (columns id, evidence)."""
        sents, owners = [], []
        for row in claims.itertuples(index=False):
            for s in list(row.evidence or []):
                sents.append(s)
                owners.append(str(row.id))
        return cls(sents, owners)

    def __len__(self) -> int:
        return len(self.sentences)

    def retrieve(self, query: str, m: int = 20) -> list[Evidence]:
        """The top-``m`` sentences for ``query`` by BM25 score, numbered from 1."""
        import bm25s

        k = min(m, len(self.sentences))
        if k <= 0 or not query.strip():
            return []
        docs, scores = self._bm25.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                                           k=k, show_progress=False)
        out = []
        for rank, (d, sc) in enumerate(zip(docs[0], scores[0]), 1):
            out.append(Evidence(number=rank, text=self.sentences[int(d)], score=float(sc), owner=self.owners[int(d)]))
        return out


# =============================================================================================
# Prompts
# =============================================================================================
@cache
def _packaged_prompt(name: str) -> str:
    return (resources.files("mabpd_kit") / "prompts" / "radar" / f"{name}.md").read_text(encoding="utf-8")


def load_prompt(name: str, prompts_dir: str | Path | None = None) -> str:
    """The text of ``prompts/radar/<name>.md`` (or of ``prompts_dir/<name>.md`` when given)."""
    if prompts_dir is not None:
        return (Path(prompts_dir) / f"{name}.md").read_text(encoding="utf-8")
    return _packaged_prompt(name)


def _stage_instructions(prompts_dir: str | Path | None) -> dict[str, str]:
    text = load_prompt("stages", prompts_dir)
    parts = re.split(r"(?m)^##\s*(\w+)\s*$", text)
    return {parts[i].strip().lower(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _fill(template: str, **values: str) -> str:
    return string.Template(template).substitute(**values)


# =============================================================================================
# Probability extraction
# =============================================================================================
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

    ``config.radar.prob_source`` forces one; ``auto`` asks the endpoint's probed capabilities.
    """
    cfg = config or Config()
    if llm is None or getattr(llm, "offline", True):
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


# =============================================================================================
# Results
# =============================================================================================
class Turn(BaseModel):
    """One debater turn (``cited`` = the [E#] numbers it mentions)."""

    round: int
    stage: str
    agent: str
    text: str
    cited: list[int] = Field(default_factory=list)


class DebateResult(BaseModel):
    """Everything about one claim's debate: turns, Judge states, stopping decisions and usage."""

    id: str
    claim: str
    gold: str | None = None
    system: str = "radar"
    label: str | None = None
    rounds_run: int = 0
    source: str = "rule"
    offline: bool = True
    evidence_mode: str = Field("gold", description="retrieved (shared BM25 pool) or gold (the claim's own sentences)")
    evidence: list[Evidence] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    states: list[RoundState] = Field(default_factory=list)
    decisions: list[StopDecision] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
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
        """The Judge's states as a :class:`~mabpd_kit.stopping.Trajectory` (for offline replay)."""
        return Trajectory(id=self.id, rounds=tuple(self.states), gold=self.gold, max_rounds=max_rounds,
                          meta={"system": self.system})

    def transcript(self) -> str:
        """The debate as readable text."""
        out = []
        for t in self.turns:
            out.append(f"Round {t.round} · {t.stage} · {t.agent.title()}:\n{t.text}\n")
        for st, d in zip(self.states, self.decisions):
            probs = ", ".join(f"{k} {v:.2f}" for k, v in st.label_probs.items())
            s = "n/a" if math.isnan(d.s) else f"{d.s:+.2f}"
            out.append(f"Judge after round {d.round}: {probs}; s = {s}, c = {d.c:.2f} -> "
                       f"{'STOP' if d.stop else 'CONTINUE'} ({d.reason})")
        return "\n".join(out)

    def to_row(self) -> dict[str, Any]:
        d = self.stop
        return dict(id=self.id, system=self.system, gold=self.gold, label=self.label, correct=self.correct,
                    rounds=self.rounds_run, stop_reason=d.reason if d else None, s=d.s if d else None,
                    c=d.c if d else None, source=self.source, evidence_mode=self.evidence_mode, calls=self.calls, prompt_tokens=self.prompt_tokens,
                    completion_tokens=self.completion_tokens, latency_s=self.latency_s, failed=self.failed,
                    error=self.error)


# =============================================================================================
# Offline rule-based stand-in
# =============================================================================================
_WORD = re.compile(r"[a-z0-9][a-z0-9'%$.-]*[a-z0-9%]|[a-z0-9]")
_STOP = frozenset(["a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "but", "is", "are", "was", "were", "be", "been", "has", "have", "had", "it", "its", "this", "that", "these", "those", "with", "as", "by", "at", "from", "than", "then", "so", "said", "says", "say", "he", "she", "they", "we", "you", "i", "his", "her", "their", "our", "not", "no"])
NEGATION_CUES = ("not", "no", "never", "false", "incorrect", "wrong", "didn't", "did not", "isn't", "wasn't",
                 "no evidence", "contrary", "debunked", "misleading", "inaccurate", "actually")
HEDGE_CUES = ("but", "however", "although", "though", "only", "partly", "partially", "some", "excluding",
              "context", "omits", "leaves out", "while", "despite", "except", "adjusted", "compared", "earlier")


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w.strip(".") for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2)


def _cue_regex(cues: Sequence[str]) -> re.Pattern[str]:
    alts = "|".join(re.escape(c) for c in sorted(cues, key=len, reverse=True))
    return re.compile(rf"(?<![a-z'])(?:{alts})(?![a-z'])")


_NEGATION_RE = _cue_regex(NEGATION_CUES)
_HEDGE_RE = _cue_regex(HEDGE_CUES)


@lru_cache(maxsize=65536)
def _sentence_cues(text: str) -> tuple[frozenset[str], int, int]:
    """(content words, negation cue count, hedge cue count) of one sentence; cached."""
    low = text.lower()
    return _content_words(text), len(_NEGATION_RE.findall(low)), len(_HEDGE_RE.findall(low))


@dataclass
class _Cues:
    overlap: float
    negation: int
    hedge: int


class RuleBasedRadar:
    """Deterministic offline stand-in for the three RADAR agents (NOT an LLM; a teaching prop).

    Each evidence sentence gets cues: overlap with the claim's content words, negation cues
    (``not``, ``false``, ``misleading`` ...) and hedge/omission cues (``but``, ``only``, ``excluding`` ...).
    The Politician cites the unused sentences with the most overlap and no negation (unhedged
    ones first); the Scientist
    cites unused sentences with hedge or negation cues. The Judge scores only what has been cited
    so far: support (overlap of clean citations), contradiction (negation cues) and omission
    (hedges) become label logits, sharpened a little each round, so confidence evolves as the
    debate reveals evidence. p(STOP) rises with the confidence and falls when the last round
    brought new omission points.
    """

    def __init__(self, labels: Sequence[str] = ("TRUE", "HALF-TRUE", "FALSE")) -> None:
        self.labels = tuple(labels)

    def cues(self, claim: str, evidence: Sequence[Evidence]) -> dict[int, _Cues]:
        cw = _content_words(claim) or {""}
        out = {}
        for e in evidence:
            words, neg, hedge = _sentence_cues(e.text)
            out[e.number] = _Cues(len(cw & words) / len(cw), neg, hedge)
        return out

    def turn(self, role: str, claim: str, evidence: Sequence[Evidence], used: set[int], stage: str) -> Turn:
        cues = self.cues(claim, evidence)
        by_num = {e.number: e for e in evidence}
        if role in ("politician", "pro"):
            pick = sorted((n for n, c in cues.items() if n not in used and c.negation == 0),
                          key=lambda n: (cues[n].hedge > 0, -cues[n].overlap, n))[:2]
            lead = "The evidence supports the claim"
        elif role == "scientist":  # omission first: hedges, then negations
            pick = sorted((n for n, c in cues.items() if n not in used and (c.hedge or c.negation)),
                          key=lambda n: (-cues[n].hedge, -cues[n].negation, -cues[n].overlap, n))[:2]
            lead = "The claim leaves out context"
        else:  # con: contradiction first
            pick = sorted((n for n, c in cues.items() if n not in used and (c.hedge or c.negation)),
                          key=lambda n: (-cues[n].negation, -cues[n].hedge, -cues[n].overlap, n))[:2]
            lead = "The evidence contradicts the claim"
        if pick:
            quotes = " ".join(f'[E{n}] "{_short(by_num[n].text)}"' for n in pick)
            body = f"{lead}: {quotes}"
        else:
            body = f"{lead}; no new evidence to add."
        return Turn(round=ROUND_NAMES.index(stage) + 1 if stage in ROUND_NAMES else 1, stage=stage, agent=role,
                    text=f"{OFFLINE_TAG} {role.title()} ({stage}): {body}", cited=pick)

    def judge(self, claim: str, evidence: Sequence[Evidence], cited: Sequence[int], round: int,
              new_omissions: int) -> tuple[dict[str, float], float]:
        """(label probabilities, p(STOP)) from the evidence cited so far (all evidence if none cited)."""
        cues = self.cues(claim, evidence)
        nums = [n for n in dict.fromkeys(cited) if n in cues] or list(cues)
        support = sum(cues[n].overlap for n in nums if cues[n].negation == 0)
        contra = sum(min(cues[n].negation, 2) * (0.5 + cues[n].overlap) for n in nums)
        omission = sum(min(cues[n].hedge, 2) * (0.3 + cues[n].overlap) for n in nums)
        logits = {"TRUE": 2.0 * support - contra - 0.6 * omission,
                  "HALF-TRUE": 1.2 * omission + 0.5 * min(support, contra) + 0.3,
                  "FALSE": 1.5 * contra - 0.5 * support}
        sharp = 1.0 + 0.35 * (round - 1)
        z = np.array([logits.get(lab, 0.0) for lab in self.labels]) * sharp
        p = np.exp(z - z.max())
        p /= p.sum()
        c = float(p.max())
        p_stop = float(1 / (1 + math.exp(-(6.0 * (c - 0.65) - 0.8 * new_omissions))))
        return {lab: float(v) for lab, v in zip(self.labels, p)}, p_stop


def _short(text: str, n: int = 18) -> str:
    words = text.split()
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")


_CITE = re.compile(r"\[E(\d+)\]")


# =============================================================================================
# The debate
# =============================================================================================
class RadarDebate:
    """Run RADAR (or a baseline) on claims with a real LLM or, offline, the rule-based stand-in.

    Args:
        config: ``config.radar`` gives top_m, max_rounds, tau_s, tau_v, labels, k_samples, the
            probability source and the evidence mode.
        llm: an :class:`mabpd_kit.llm.LLM`; ``None`` or offline -> :class:`RuleBasedRadar`.
        system: one of :data:`SYSTEMS`.
        rule: the stopping rule; default ``DualThreshold.from_config(config)``
            (``DualThreshold.never()`` for ``no-early-stopping``).
        pool: the shared :class:`EvidencePool` for retrieved evidence (None: use each claim's
            evidence list as given; recorded as ``evidence_mode="gold"``).
        prompts_dir: a folder with edited copies of the prompt templates.
    """

    def __init__(self, config: Config | None = None, llm: LLM | None = None, *, system: str = "radar",
                 rule: DualThreshold | None = None, pool: EvidencePool | None = None,
                 prompts_dir: str | Path | None = None) -> None:
        if system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
        self.config = config or Config()
        self.llm = None if llm is None or getattr(llm, "offline", True) else llm
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
        self.source: Source = choose_source(self.llm, self.config)
        self._rules = RuleBasedRadar(self.labels)

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
            gold: str | None = None) -> DebateResult:
        """Debate one claim (blocking; fine in Jupyter)."""
        from mabpd_kit.llm import run_sync

        return run_sync(self.arun(claim, evidence, id=id, gold=gold))

    async def arun(self, claim: str, evidence: Sequence[str] | None = None, *, id: str | None = None,
                   gold: str | None = None) -> DebateResult:
        """Debate one claim. Failures are caught and flagged in the result (``failed``, ``error``)."""
        from mabpd_kit.llm import LLMError

        cid = str(id) if id is not None else "claim-" + hashlib.sha1(claim.encode()).hexdigest()[:8]
        res = DebateResult(id=cid, claim=claim, gold=gold, system=self.system, source=self.source,
                           offline=self.llm is None, evidence_mode=self.evidence_mode)
        try:
            res.evidence = self.evidence_for(claim, evidence)
            await self._debate(res)
        except (LLMError, ValueError, KeyError) as exc:  # one bad claim must not sink a batch: flag it, keep the trace
            res.failed = True
            res.error = f"{type(exc).__name__}: {exc}"
        return res

    async def _debate(self, res: DebateResult) -> None:
        ev_text = format_evidence(res.evidence)
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
            probs, p_stop = await self._judge(res, ev_text, r, last, new_omissions)
            state = RoundState(round=r, label_probs=probs, p_stop=p_stop,
                               p_continue=None if p_stop is None else 1.0 - p_stop, source=self.source)
            res.states.append(state)
            decision = self.rule.decide_state(state, last=last)
            res.decisions.append(decision)
            res.rounds_run = r
            res.label = decision.label
            if decision.stop:
                break

    def _transcript(self, res: DebateResult, viewer: str | None) -> str:
        if not res.turns:
            return "(no turns yet)"
        lines = []
        for t in res.turns:
            who = f"{t.agent.title()} (you)" if t.agent == viewer else t.agent.title()
            lines.append(f"[Round {t.round} · {t.stage}] {who}: {t.text}")
        return "\n\n".join(lines)

    def _account(self, res: DebateResult, comps: Sequence[Completion]) -> None:
        for c in comps:
            res.calls += 1
            res.prompt_tokens += c.prompt_tokens
            res.completion_tokens += c.completion_tokens
            res.latency_s += c.latency_s

    async def _turn(self, res: DebateResult, role: str, stage: str, r: int, ev_text: str,
                    stages: Mapping[str, str]) -> Turn:
        if self.llm is None:
            used = {n for t in res.turns for n in t.cited}
            t = self._rules.turn(role, res.claim, res.evidence, used, stage)
            return t.model_copy(update={"round": r})
        msgs = [
            {"role": "system", "content": load_prompt(role, self.prompts_dir)},
            {"role": "user", "content": _fill(load_prompt("turn", self.prompts_dir), claim=res.claim, evidence=ev_text,
                                              transcript=self._transcript(res, role), role=role.title(),
                                              stage=stage, stage_instruction=stages.get(stage, ""))},
        ]
        comp = await self.llm.achat(msgs, temperature=self.config.agents.temperature,
                                    max_tokens=self.config.agents.max_tokens, tag=f"radar-{role}")
        self._account(res, [comp])
        valid = {e.number for e in res.evidence}
        cited = sorted({int(n) for n in _CITE.findall(comp.text) if int(n) in valid})
        return Turn(round=r, stage=stage, agent=role, text=comp.text.strip(), cited=cited)

    async def _judge(self, res: DebateResult, ev_text: str, r: int, last: bool,
                     new_omissions: int) -> tuple[dict[str, float], float | None]:
        if self.llm is None:
            cited = [n for t in res.turns for n in t.cited]
            probs, p_stop = self._rules.judge(res.claim, res.evidence, cited, r, new_omissions)
            return probs, None if last else p_stop
        next_stage = ROUND_NAMES[r] if r < len(ROUND_NAMES) else "next round"
        fill = dict(claim=res.claim, evidence=ev_text, transcript=self._transcript(res, None), next_stage=next_stage)
        system = {"role": "system", "content": load_prompt("judge", self.prompts_dir)}
        if self.source == "structured":
            return await self._judge_structured(res, system, fill, last)
        verdict_msgs = [system, {"role": "user", "content": _fill(load_prompt("judge_verdict", self.prompts_dir), **fill)}]
        probs = await self._ask(res, verdict_msgs, self.labels, "radar-judge-verdict")
        if last:
            return probs, None
        cont_msgs = [system, {"role": "user", "content": _fill(load_prompt("judge_continue", self.prompts_dir), **fill)}]
        sc = await self._ask(res, cont_msgs, STOP_OPTIONS, "radar-judge-continue")
        return probs, sc["STOP"]

    async def _ask(self, res: DebateResult, msgs: list[dict[str, str]], options: Sequence[str],
                   tag: str) -> dict[str, float]:
        """One option question answered by the logprobs or samples source."""
        rc = self.config.radar
        if self.source == "logprobs":
            comp = await self.llm.achat(msgs, temperature=0.0, max_tokens=40, logprobs=True,
                                        top_logprobs=rc.top_logprobs, tag=tag)
            self._account(res, [comp])
            probs = option_probs_from_logprobs(comp.logprobs or [], options)
            if probs is not None:
                return probs
            pick = parse_option(comp.text, options)
            if pick is None:
                raise ValueError(f"{tag}: no option among {list(options)} in the reply {comp.text[:80]!r}")
            res.notes.append(f"{tag} round {len(res.states) + 1}: no usable logprobs, one-hot on the reply")
            return {o: float(o == pick) for o in options}
        comps = await asyncio.gather(*(  # k samples in parallel; sample_index keeps them apart in the cache
            self.llm.achat(msgs, temperature=rc.sample_temperature, max_tokens=40, sample_index=i, tag=tag)
            for i in range(rc.k_samples)))
        self._account(res, comps)
        probs = option_probs_from_samples([c.text for c in comps], options)
        if probs is None:
            raise ValueError(f"{tag}: none of {rc.k_samples} samples named one of {list(options)}")
        return probs

    async def _judge_structured(self, res: DebateResult, system: dict[str, str], fill: dict[str, str],
                                last: bool) -> tuple[dict[str, float], float | None]:
        msgs = [system, {"role": "user", "content": _fill(load_prompt("judge_probabilities", self.prompts_dir), **fill)}]
        out = await self.llm.astructured(msgs, JudgeProbabilities, temperature=0.0, tag="radar-judge-structured")
        self._account(res, out.calls)
        v = out.value
        probs = option_probs_from_stated({"TRUE": v.p_true, "HALF-TRUE": v.p_half_true, "FALSE": v.p_false},
                                         self.labels)
        sc = option_probs_from_stated({"STOP": v.p_stop, "CONTINUE": v.p_continue}, STOP_OPTIONS)
        if probs is None or sc is None:
            raise ValueError(f"the Judge stated unusable probabilities: {v.model_dump()}")
        return probs, None if last else sc["STOP"]

    # -- many claims -----------------------------------------------------------------------
    def run_many(self, claims: pd.DataFrame, *, progress: bool = True) -> list[DebateResult]:
        """Debate every row of ``claims`` (columns id, claim, evidence, label); failures are flagged."""
        from mabpd_kit.llm import gather_limited, run_sync

        rows = list(claims.itertuples(index=False))

        async def go() -> list[DebateResult]:
            coros = [self.arun(r.claim, getattr(r, "evidence", None), id=str(r.id), gold=getattr(r, "label", None))
                     for r in rows]
            return await gather_limited(coros, progress=f"RADAR {self.system}" if progress and len(rows) > 3 else False)

        results = run_sync(go())
        n_fail = sum(r.failed for r in results)
        if progress:
            print(f"{self.system}: {len(results)} claims, {n_fail} failed, source = {self.source}"
                  + (" (offline rule-based stand-in)" if self.llm is None else ""))
        return results


def results_frame(results: Sequence[DebateResult]) -> pd.DataFrame:
    """One row per debate: id, system, gold, label, correct, rounds, stop reason, s, c, source, usage."""
    return pd.DataFrame([r.to_row() for r in results])


def summarize(results: Sequence[DebateResult], labels: Sequence[str] = ("TRUE", "HALF-TRUE", "FALSE")) -> dict[str, Any]:
    """Accuracy, macro F1, HALF-TRUE F1 (via :mod:`mabpd_kit.metrics`), mean rounds and calls."""
    from mabpd_kit import metrics as M

    ok = [r for r in results if not r.failed and r.gold is not None and r.label is not None]
    out: dict[str, Any] = dict(n=len(results), failed=sum(r.failed for r in results))
    if ok:
        y, p = [r.gold for r in ok], [r.label for r in ok]
        out.update(accuracy=M.accuracy(y, p), macro_f1=M.macro_f1(y, p, labels=list(labels)),
                   half_true_f1=M.per_class_f1(y, p, labels=list(labels)).get("HALF-TRUE", float("nan")))
    out.update(mean_rounds=float(np.mean([r.rounds_run for r in results])) if results else float("nan"),
               calls=sum(r.calls for r in results))
    return out


def run_systems(claims: pd.DataFrame, *, config: Config | None = None, llm: LLM | None = None,
                systems: Sequence[str] = SYSTEMS, pool: EvidencePool | None = None,
                progress: bool = True) -> tuple[pd.DataFrame, dict[str, list[DebateResult]]]:
    """RADAR and the baselines on the same claims -> (one summary row per system, all results).

    Retrieved evidence comes from ``pool`` (default: a pool over all of ``claims``' evidence); the
    ``gold-evidence`` system uses each claim's own sentences.
    """
    cfg = config or Config()
    pool = pool if pool is not None else EvidencePool.from_claims(claims)
    rows, all_results = [], {}
    for name in systems:
        res = RadarDebate(cfg, llm, system=name, pool=pool).run_many(claims, progress=progress)
        all_results[name] = res
        rows.append(dict(system=name, **summarize(res, cfg.radar.labels)))
    return pd.DataFrame(rows), all_results


# =============================================================================================
# Claims
# =============================================================================================
def example_claims() -> pd.DataFrame:
    """Three *invented* claims with evidence (not benchmark data) for offline demos and docs."""
    return pd.DataFrame([
        dict(id="ex-true", label="TRUE", claim="The city opened three new public libraries in 2023.",
             evidence=["The city council confirmed that three new public libraries opened in 2023.",
                       "Library attendance rose after the new branches opened.",
                       "The three libraries were funded by a 2021 bond measure."]),
        dict(id="ex-half", label="HALF-TRUE", claim="Unemployment fell by half under the governor.",
             evidence=["Unemployment fell from 8% to 4% during the governor's term.",
                       "However, most of the decline happened nationwide and only partly reflects state policy.",
                       "Economists said the labour force also shrank, which excludes people who stopped looking."]),
        dict(id="ex-false", label="FALSE", claim="The senator voted against the veterans health bill.",
             evidence=["Records show the senator voted for the veterans health bill.",
                       "The claim is false: the senator did not vote against it and co-sponsored an amendment.",
                       "The bill passed with bipartisan support."]),
    ])


# =============================================================================================
# CLI: mabpd radar ...
# =============================================================================================
def cli_add_arguments(parser: argparse.ArgumentParser) -> None:
    """``mabpd radar calibrate | debate | simulate``."""
    sub = parser.add_subparsers(dest="radar_command", metavar="ACTION")
    cal = sub.add_parser("calibrate", help="replay logged trajectories over the tau grid (dev/test halves)")
    cal.add_argument("--run", default=None, help="RADAR answer-map JSON (default: the logged Llama-3-8B run)")
    cal.add_argument("--simulate", type=int, default=0, metavar="N", help="use N simulated claims instead")
    cal.add_argument("--objective", choices=["accuracy", "macro_f1"], default=None)
    cal.add_argument("--cost-per-round", type=float, default=None)
    cal.add_argument("--seed", type=int, default=0, help="seed of the dev/test split")
    cal.add_argument("--data-dir", default=None)
    deb = sub.add_parser("debate", help="debate one claim (offline rule-based stand-in without an endpoint)")
    deb.add_argument("claim", help="the claim text")
    deb.add_argument("--evidence", action="append", default=[], help="an evidence sentence (repeatable)")
    deb.add_argument("--evidence-file", default=None, help="a text file, one evidence sentence per line")
    deb.add_argument("--system", choices=SYSTEMS, default="radar")
    deb.add_argument("--tau-s", type=float, default=None)
    deb.add_argument("--tau-v", type=float, default=None)


def cli_run(args: argparse.Namespace) -> int:
    action = getattr(args, "radar_command", None)
    cfg = Config()
    if action == "calibrate":
        return _cli_calibrate(args, cfg)
    if action == "debate":
        from mabpd_kit.llm import connect

        if args.tau_s is not None or args.tau_v is not None:
            cfg = cfg.replace(**{"radar.tau_s": cfg.radar.tau_s if args.tau_s is None else args.tau_s,
                                 "radar.tau_v": cfg.radar.tau_v if args.tau_v is None else args.tau_v})
        evidence = list(args.evidence)
        if args.evidence_file:
            evidence += [ln.strip() for ln in Path(args.evidence_file).read_text().splitlines() if ln.strip()]
        res = RadarDebate(cfg, connect(), system=args.system).run(args.claim, evidence, id="cli")
        print(res.transcript())
        print(f"\nlabel: {res.label}  rounds: {res.rounds_run}  source: {res.source}"
              + (f"  FAILED: {res.error}" if res.failed else ""))
        return 1 if res.failed else 0
    print("usage: mabpd radar {calibrate,debate} ... (see mabpd radar -h)")
    return 2


def _cli_calibrate(args: argparse.Namespace, cfg: Config) -> int:
    from mabpd_kit.stopping import (
        calibrate,
        evaluate_rule,
        load_radar_run,
        simulate_trajectories,
        split_dev_test,
    )

    if args.simulate:
        trajs, what = simulate_trajectories(args.simulate, seed=args.seed), f"{args.simulate} simulated claims"
    else:
        run = load_radar_run(args.run, data_dir=args.data_dir, config=cfg)
        trajs = [t for t in run.trajectories if t.gold]
        what = f"{len(trajs)} claims / {run.n_decisions} STOP-CONTINUE decisions from {run.path.name}"
    dev, test = split_dev_test(trajs, seed=args.seed)
    cal = calibrate(dev, cfg, objective=args.objective, cost_per_round=args.cost_per_round)
    logged = DualThreshold.from_config(cfg)
    print(f"data: {what}; dev {len(dev)}, test {len(test)}")
    for name, rule in (("configured", logged), ("calibrated on dev", cal.rule(cfg.radar.labels))):
        for split, ts in (("all", trajs), ("test", test)):
            m = evaluate_rule(ts, rule)
            print(f"{name:>18} tau_s={rule.tau_s:+.2f} tau_v={rule.tau_v:.2f} [{split:>4}] "
                  f"accuracy {m['accuracy']:.4f}  macro-F1 {m['macro_f1']:.4f}  mean rounds {m['mean_rounds']:.4f}  "
                  f"censored {m['censored']:.2f}")
    print(f"Pareto front on dev: {len(cal.pareto)} points")
    return 0
