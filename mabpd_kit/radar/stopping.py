"""Dual-threshold early stopping for RADAR debates (SPEC 3): stop iff ``s >= tau_s`` and ``c >= tau_v``
(``s = p(STOP) - p(CONTINUE)``, ``c = max p(label)``), both within :data:`EPS`; the answer is the argmax."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from mabpd_kit.config import Config
from mabpd_kit.types import FrozenModel

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "EPS", "ONE_HOT", "ROUND_NAMES", "DualThreshold", "RoundState", "StopDecision", "StopReason", "Trajectory",
    "argmax_label", "replay", "replay_frame", "trajectories_frame"
]

EPS = 1e-9  # tolerance of both threshold comparisons
ONE_HOT = "one_hot"  # the source of a bare verdict made one-hot
ROUND_NAMES: tuple[str, ...] = ("opening", "rebuttal", "closing")

StopReason = Literal[
    "both_thresholds_met",  # s >= tau_s and c >= tau_v: early stop
    "margin_below_tau_s",  # the Judge does not want to stop enough
    "confidence_below_tau_v",  # the Judge wants to stop but is unsure of the label
    "both_below",
    "max_rounds",  # the last round of the protocol: always stop
    "end_of_log",  # replay of a logged run that stopped here; later rounds were never played
    "no_early_stopping",  # baseline: thresholds disabled
]


class RoundState(FrozenModel):
    """The Judge's state after one round of a debate."""

    round: int = Field(ge=1, description="1-based round (1 = opening, 2 = rebuttal, 3 = closing)")
    label_probs: dict[str, float] = Field(description="p(label) over the 3 labels, sums to 1")
    p_stop: float | None = Field(None, description="p(STOP); None when no further round is possible")
    p_continue: float | None = None
    source: str = Field("unknown", description="where the probabilities came from: logprobs | samples | structured | "
                        "one_hot (a bare verdict: c = 1, s = +-1) | rule | logged | simulated; the weakest of ``sources``")
    sources: dict[str, str] = Field(default_factory=dict,
                                    description="per Judge question (verdict, continue): the source of its answer")

    @property
    def one_hot(self) -> bool:
        """True when a probability of this round is a bare verdict made one-hot (kept out of calibration)."""
        return self.source == ONE_HOT or ONE_HOT in self.sources.values()

    @property
    def s(self) -> float:
        """Stop margin p(STOP) - p(CONTINUE); NaN when the Judge was not asked (last round)."""
        if self.p_stop is None or self.p_continue is None:
            return float("nan")
        return float(self.p_stop) - float(self.p_continue)

    @property
    def c(self) -> float:
        """Confidence: the largest label probability."""
        return max(self.label_probs.values()) if self.label_probs else 0.0

    def label(self, labels: Sequence[str] | None = None) -> str:
        """The Judge's argmax label (ties: first in ``labels``)."""
        return argmax_label(self.label_probs, labels)


class StopDecision(FrozenModel):
    """One application of the stopping rule: what was seen and why the debate stopped or went on."""

    round: int
    stop: bool
    s: float
    c: float
    label: str
    reason: StopReason
    source: str = "unknown"
    tau_s: float | None = None
    tau_v: float | None = None


class Trajectory(FrozenModel):
    """All Judge states of one claim, in round order, plus the gold label (if known)."""

    id: str
    rounds: tuple[RoundState, ...]
    gold: str | None = None
    max_rounds: int = Field(3, description="rounds the protocol allows; fewer logged rounds = the run stopped")
    meta: dict[str, Any] = Field(default_factory=dict)


def argmax_label(label_probs: Mapping[str, float], labels: Sequence[str] | None = None) -> str:
    """Most probable label; ties go to the earliest of ``labels`` (default ``config.radar.labels``)."""
    order = list(labels or Config().radar.labels)
    order += [k for k in label_probs if k not in order]
    best, best_p = order[0], -math.inf
    for lab in order:
        p = float(label_probs.get(lab, 0.0))
        if p > best_p:  # strict: the earlier label keeps a tie
            best, best_p = lab, p
    return best


@dataclass(frozen=True)
class DualThreshold:
    """Stop iff ``s >= tau_s`` and ``c >= tau_v``; :meth:`never` is the no-early-stopping baseline."""

    tau_s: float
    tau_v: float
    labels: tuple[str, ...] = ("TRUE", "HALF-TRUE", "FALSE")
    enabled: bool = True

    @classmethod
    def from_config(cls, config: Config | None = None) -> DualThreshold:
        cfg = config or Config()
        return cls(cfg.radar.tau_s, cfg.radar.tau_v, tuple(cfg.radar.labels))

    @classmethod
    def never(cls, config: Config | None = None) -> DualThreshold:
        """Baseline without early stopping: every debate runs the full protocol."""
        cfg = config or Config()
        return cls(cfg.radar.tau_s, cfg.radar.tau_v, tuple(cfg.radar.labels), enabled=False)

    def decide(self, p_stop: float | None, p_continue: float | None, label_probs: Mapping[str, float], round: int, *,
               source: str = "unknown", last: bool = False, end_of_log: bool = False) -> StopDecision:
        """Apply the rule after ``round``. ``last`` (the protocol's final round) always stops."""
        s = float("nan") if p_stop is None or p_continue is None else float(p_stop) - float(p_continue)
        c = max(label_probs.values()) if label_probs else 0.0
        label = argmax_label(label_probs, self.labels)
        common = dict(round=round, s=s, c=c, label=label, source=source, tau_s=self.tau_s, tau_v=self.tau_v)
        if last:
            return StopDecision(stop=True, reason="max_rounds", **common)
        if end_of_log:
            return StopDecision(stop=True, reason="end_of_log", **common)
        if not self.enabled:
            return StopDecision(stop=False, reason="no_early_stopping", **common)
        s_ok = (not math.isnan(s)) and s >= self.tau_s - EPS
        c_ok = c >= self.tau_v - EPS
        if s_ok and c_ok:
            reason: StopReason = "both_thresholds_met"
        elif not s_ok and not c_ok:
            reason = "both_below"
        elif not s_ok:
            reason = "margin_below_tau_s"
        else:
            reason = "confidence_below_tau_v"
        return StopDecision(stop=s_ok and c_ok, reason=reason, **common)

    def decide_state(self, state: RoundState, *, last: bool = False, end_of_log: bool = False) -> StopDecision:
        """:meth:`decide` on a :class:`RoundState`."""
        return self.decide(
            state.p_stop, state.p_continue, state.label_probs, state.round,
            source=state.source, last=last, end_of_log=end_of_log,
        )


def replay(traj: Trajectory, rule: DualThreshold) -> StopDecision:
    """Where ``rule`` stops on a trajectory; a log ending earlier stops with reason ``end_of_log``."""
    n = len(traj.rounds)
    if n == 0:
        raise ValueError(f"trajectory {traj.id!r} has no rounds")
    for i, state in enumerate(traj.rounds):
        last_protocol = state.round >= traj.max_rounds
        last_logged = i == n - 1
        dec = rule.decide_state(state, last=last_protocol)
        if dec.stop:
            return dec
        if last_logged:
            return rule.decide_state(state, end_of_log=True)
    raise AssertionError("unreachable")  # pragma: no cover


def replay_frame(trajs: Sequence[Trajectory], rule: DualThreshold) -> pd.DataFrame:
    """Per claim: stop round, label, gold, correct, reason, s, c, source, censored (``end_of_log``), one_hot."""
    import pandas as pd

    rows = []
    for t in trajs:
        d = replay(t, rule)
        rows.append(
            dict(id=t.id, gold=t.gold, label=d.label, correct=(d.label == t.gold) if t.gold else None,
                 rounds=d.round, stop_reason=d.reason, s=d.s, c=d.c, source=d.source,
                 censored=d.reason == "end_of_log", one_hot=any(st.one_hot for st in t.rounds))
        )
    return pd.DataFrame(rows, columns=["id", "gold", "label", "correct", "rounds", "stop_reason", "s", "c",
                                       "source", "censored", "one_hot"])


def trajectories_frame(trajs: Sequence[Trajectory]) -> pd.DataFrame:
    """Long format, one row per (claim, round): id, gold, round, s, c, label, p_stop, source, one_hot, p_<LABEL>..."""
    import pandas as pd

    rows = []
    for t in trajs:
        for st in t.rounds:
            row = dict(id=t.id, gold=t.gold, round=st.round, s=st.s, c=st.c, label=st.label(),
                       p_stop=st.p_stop, source=st.source, one_hot=st.one_hot)
            row.update({f"p_{k}": v for k, v in st.label_probs.items()})
            rows.append(row)
    return pd.DataFrame(rows)
