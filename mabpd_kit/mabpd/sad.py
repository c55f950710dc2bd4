"""Structured Argument Debate (SAD), SPEC 1.6: weighting (:func:`weigh`), the role-weighted vote (:func:`vote`)
and the rounds (:func:`debate`). An ungrounded biased argument weighs zero; neutral, the default reading, keeps half."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from mabpd_kit import runs
from mabpd_kit.config import Config
from mabpd_kit.mabpd.schemas import Argument
from mabpd_kit.types import Verdict

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Revise", "Round", "SADResult", "StopReason", "Vote", "WeighedArgument", "debate", "stop_stats", "vote", "weigh"]

StopReason = Literal["agreement", "dual_threshold", "max_rounds"]


class WeighedArgument(BaseModel):
    """An argument with the factors SAD computed for it."""

    argument: Argument
    n_cited: int
    n_valid: int
    q: float = Field(description="evidence quality: valid / cited (0 if none cited)")
    f: float = Field(description="evidence factor: q for biased, max(q, floor) for neutral; 1 without weighting")
    agree_share: float = Field(description="share of the counted other agents with the same verdict (0.5 when none counted)")
    g: float = Field(description="agreement factor 1 + gain * (share agreeing - 0.5)")
    k: float = Field(description="adjusted confidence clip(confidence * f * g, 0, 1)")
    w: float = Field(description="role weight")

    @property
    def agent(self) -> str:
        return self.argument.agent

    @property
    def verdict(self) -> Verdict:
        return self.argument.verdict


class Vote(BaseModel):
    """The role-weighted vote over one round of weighed arguments."""

    B: float
    N: float
    share: float | None = Field(description="B / (B + N); None when both are 0")
    boundary: float
    label: Verdict


class Round(BaseModel):
    """One debate round: every agent's weighed argument and the vote it would give."""

    index: int
    arguments: list[WeighedArgument]
    vote: Vote
    agreed: bool
    s: float = Field(description="(agents agreeing with this round's vote - those not) / agents")
    c: float = Field(description="max(B, N) / (B + N); 0 when B + N = 0")


class SADResult(BaseModel):
    """All rounds; the decision is the vote of the last round."""

    rounds: list[Round]
    label: Verdict
    stopped_early: bool
    stop_reason: StopReason = Field(description="why no further round ran: agreement, dual_threshold or max_rounds")
    agreement_over: Literal["all", "weighted"] = Field(description="who counted as 'the other agents' in g")
    dual_threshold: bool = Field(False, description="was the dual-threshold stop on (tau_s, tau_v below)")
    tau_s: float | None = None
    tau_v: float | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def vote(self) -> Vote:
        return self.rounds[-1].vote

    def to_frame(self) -> pd.DataFrame:
        """One row per (round, agent): its weighing, arguments, the round's vote and stop statistics."""
        import pandas as pd

        rows = []
        for r in self.rounds:
            for wa in r.arguments:
                a = wa.argument
                rows.append({
                    "round": r.index, "agent": a.agent, "verdict": a.verdict, "confidence": a.confidence,
                    "n_cited": wa.n_cited, "n_valid": wa.n_valid, "q": wa.q, "f": wa.f,
                    "agree_share": wa.agree_share, "g": wa.g, "k": wa.k,
                    "w": wa.w, "changed": a.changed, "counter_argument": a.counter_argument,
                    "rationale": a.rationale, "B": r.vote.B, "N": r.vote.N, "round_label": r.vote.label,
                    "s": r.s, "c": r.c, "agreement_over": self.agreement_over, "stop_reason": self.stop_reason,
                })
        return pd.DataFrame(rows)


def weigh(arguments: Sequence[Argument], config: Config) -> list[WeighedArgument]:
    """q, f, g, k and the role weight of every argument of one round (SPEC 1.6); ``sad.agreement_over``
    picks the agents counted in g (``"all"`` or ``"weighted"``: only those with f > 0)."""
    sad = config.sad
    base = []
    for a in arguments:
        cited = a.spans[: sad.max_spans]
        n_cited = len(cited)
        n_valid = sum(1 for s in cited if s.valid)
        q = n_valid / n_cited if n_cited else 0.0
        if not sad.evidence_weighting:
            f = 1.0
        elif a.verdict == "biased":
            f = q
        else:
            f = max(q, sad.neutral_floor)
        base.append((a, n_cited, n_valid, q, f))
    weights = config.scoring.weights  # built from the roster on every read: once per round
    out = []
    for i, (a, n_cited, n_valid, q, f) in enumerate(base):
        voices = [b for j, b in enumerate(base) if j != i and (sad.agreement_over == "all" or b[4] > 0)]
        share = sum(1 for b in voices if b[0].verdict == a.verdict) / len(voices) if voices else 0.5
        g = 1.0 + sad.agreement_gain * (share - 0.5)
        k = min(max(a.confidence * f * g, 0.0), 1.0)
        out.append(WeighedArgument(argument=a, n_cited=n_cited, n_valid=n_valid, q=q, f=f, agree_share=share, g=g, k=k,
                                   w=weights.get(a.agent, 0.0)))
    return out


def vote(weighed: Sequence[WeighedArgument], config: Config) -> Vote:
    """Role-weighted vote: biased iff B / (B + N) >= boundary; B + N = 0 -> neutral."""
    B = sum(w.w * w.k for w in weighed if w.verdict == "biased")
    N = sum(w.w * w.k for w in weighed if w.verdict == "neutral")
    share = B / (B + N) if B + N > 0 else None
    label: Verdict = "biased" if share is not None and share >= config.sad.vote_boundary else "neutral"
    return Vote(B=B, N=N, share=share, boundary=config.sad.vote_boundary, label=label)


def stop_stats(weighed: Sequence[WeighedArgument], v: Vote) -> tuple[float, float]:
    """SPEC 1.6's ``s`` (agreement with the vote) and ``c`` = max(B, N) / (B + N) of one round."""
    n = len(weighed)
    agree = sum(1 for w in weighed if w.verdict == v.label)
    s = (agree - (n - agree)) / n if n else 0.0
    c = max(v.B, v.N) / (v.B + v.N) if v.B + v.N > 0 else 0.0
    return s, c


def _round(index: int, args: Sequence[Argument], config: Config) -> Round:
    weighed = weigh(args, config)
    v = vote(weighed, config)
    s, c = stop_stats(weighed, v)
    return Round(index=index, arguments=weighed, vote=v, agreed=len({a.verdict for a in args}) <= 1, s=s, c=c)


def _stop(r: Round, config: Config) -> StopReason | None:
    """Why the debate stops after round ``r`` before its cap, or None to go on."""
    sad = config.sad
    if sad.stop_on_agreement and r.agreed:
        return "agreement"
    if sad.dual_threshold and r.s >= sad.tau_s and r.c >= sad.tau_v:
        return "dual_threshold"
    return None


Revise = Callable[[str, int, Argument, list[Argument]], Awaitable[Argument]]
"""``async def revise(agent, round, own_previous, others_previous) -> Argument``."""


async def debate(first: Sequence[Argument], revise: Revise, config: Config) -> SADResult:
    """Run SAD from the round-1 arguments until agreement, the dual threshold or ``sad.rounds``."""
    sad = config.sad
    rounds = [_round(1, first, config)]
    current = list(first)
    reason = _stop(rounds[-1], config)
    while len(rounds) < sad.rounds and reason is None:
        idx = len(rounds) + 1
        prev = current
        current = await runs.gather(*(revise(a.agent, idx, a, [o for o in prev if o is not a]) for a in prev))
        rounds.append(_round(idx, current, config))
        reason = _stop(rounds[-1], config)
    early = len(rounds) < sad.rounds
    return SADResult(rounds=rounds, label=rounds[-1].vote.label, stopped_early=early,
                     stop_reason=reason if early and reason else "max_rounds", agreement_over=sad.agreement_over,
                     dual_threshold=sad.dual_threshold, tau_s=sad.tau_s if sad.dual_threshold else None,
                     tau_v=sad.tau_v if sad.dual_threshold else None)
