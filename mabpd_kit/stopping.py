"""Dual-threshold early stopping for RADAR debates (SPEC 3), trajectory replay and threshold calibration.

The rule (Debating the Unspoken, ACL 2026): after each debate round the Judge gives

* ``p(STOP)`` and ``p(CONTINUE)`` -> the stop margin ``s = p(STOP) - p(CONTINUE)`` in [-1, 1];
* a distribution over the labels TRUE / HALF-TRUE / FALSE -> the confidence ``c = max_y p(y)``.

The debate stops after round ``r`` iff ``s >= tau_s`` **and** ``c >= tau_v``; the answer is the Judge's
argmax at that round. Two thresholds, because a Judge can *want* to stop while still unsure of the
label, which is exactly what happens on half-truths.

Everything here works on *trajectories* (one per claim: the Judge's state after every round it
played), so the same rule runs in a live debate (:mod:`mabpd_kit.halftruth`) and in an offline replay
of a logged run. Replaying over the whole ``tau_s x tau_v`` grid is one vectorised numpy pass, which is
what :func:`calibrate` does.

>>> from mabpd_kit.stopping import DualThreshold, simulate_trajectories, calibrate
>>> rule = DualThreshold(tau_s=-0.6, tau_v=0.75)
>>> rule.decide(p_stop=0.2, p_continue=0.8, label_probs={"TRUE": 0.8, "HALF-TRUE": 0.15, "FALSE": 0.05}, round=1).stop
True
>>> trajs = simulate_trajectories(60, seed=1)
>>> cal = calibrate(trajs)
>>> sorted(cal.best)
['mean_rounds', 'objective', 'quality', 'tau_s', 'tau_v']

Float edge cases: ``0.2 - 0.8`` is ``-0.6000000000000001`` in binary floating point, so a Judge whose
``s`` is "exactly" ``-0.6`` would fail ``s >= -0.6``. Both comparisons therefore allow a tolerance of
:data:`EPS` (``1e-9``): ``s >= tau_s - EPS`` and ``c >= tau_v - EPS``. The grid step is 0.05, so
the tolerance can never move a decision across a grid cell; it only makes "exactly at the threshold"
stop, as the rule says. The live rule and the vectorised replay use the same tolerance.

Label ties (two labels with the same top probability) are broken by the order of
``config.radar.labels`` (TRUE, HALF-TRUE, FALSE), the same as ``numpy.argmax``.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from mabpd_kit.config import Config

__all__ = [
    "EPS",
    "ROUND_NAMES",
    "CalibrationResult",
    "DualThreshold",
    "LoggedRun",
    "RoundState",
    "StopDecision",
    "Trajectory",
    "argmax_label",
    "calibrate",
    "evaluate_rule",
    "load_radar_decisions",
    "load_radar_run",
    "pareto_front",
    "replay",
    "replay_frame",
    "simulate_trajectories",
    "split_dev_test",
    "trajectories_frame",
]

EPS = 1e-9
"""Tolerance of both threshold comparisons (see the module docstring)."""

ROUND_NAMES: tuple[str, ...] = ("opening", "rebuttal", "closing")
"""Stage names of rounds 1, 2, 3 (RADAR's debate protocol)."""

StopReason = Literal[
    "both_thresholds_met",  # s >= tau_s and c >= tau_v: early stop
    "margin_below_tau_s",  # the Judge does not want to stop enough
    "confidence_below_tau_v",  # the Judge wants to stop but is unsure of the label
    "both_below",
    "max_rounds",  # the last round of the protocol: always stop
    "end_of_log",  # replay of a logged run that stopped here; later rounds were never played
    "no_early_stopping",  # baseline: thresholds disabled
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RoundState(_Frozen):
    """The Judge's state after one round of a debate."""

    round: int = Field(ge=1, description="1-based round (1 = opening, 2 = rebuttal, 3 = closing)")
    label_probs: dict[str, float] = Field(description="p(label) over the 3 labels, sums to 1")
    p_stop: float | None = Field(None, description="p(STOP); None when no further round is possible")
    p_continue: float | None = None
    source: str = Field("unknown", description="logprobs | samples | structured | rule | logged | simulated")

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


class StopDecision(_Frozen):
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


class Trajectory(_Frozen):
    """All Judge states of one claim, in round order, plus the gold label (if known)."""

    id: str
    rounds: tuple[RoundState, ...]
    gold: str | None = None
    max_rounds: int = Field(3, description="rounds the protocol allows; fewer logged rounds = the run stopped")
    meta: dict[str, Any] = Field(default_factory=dict)


def argmax_label(label_probs: Mapping[str, float], labels: Sequence[str] | None = None) -> str:
    """Most probable label; ties go to the earliest label in ``labels`` (default ``config.radar.labels``).

    >>> argmax_label({"TRUE": 0.4, "HALF-TRUE": 0.4, "FALSE": 0.2})
    'TRUE'
    """
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
    """Stop iff ``s = p(STOP) - p(CONTINUE) >= tau_s`` and ``c = max p(label) >= tau_v``.

    ``tau_s = -1`` and ``tau_v = 0`` stop after the first round; ``DualThreshold.never()`` is the
    "no early stopping" baseline (only the protocol's last round stops).
    """

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

    def decide(
        self,
        p_stop: float | None,
        p_continue: float | None,
        label_probs: Mapping[str, float],
        round: int,
        *,
        source: str = "unknown",
        last: bool = False,
        end_of_log: bool = False,
    ) -> StopDecision:
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


# ---------------------------------------------------------------------------------------------
# Replay one policy over trajectories
# ---------------------------------------------------------------------------------------------
def replay(traj: Trajectory, rule: DualThreshold) -> StopDecision:
    """Where ``rule`` stops on a logged/simulated trajectory (the same rule as a live debate).

    When the log ends before the rule would stop (the logged run stopped earlier than this rule
    would), the replay stops at the last logged round with reason ``end_of_log``: later rounds were
    never played, so their outcome is unknown. Count these (``replay_frame(...).censored``) before
    trusting a replay of thresholds more patient than the logged run's.
    """
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
    """Per claim: stop round, label, gold, correct, reason, s, c, censored (``end_of_log``)."""
    rows = []
    for t in trajs:
        d = replay(t, rule)
        rows.append(
            dict(id=t.id, gold=t.gold, label=d.label, correct=(d.label == t.gold) if t.gold else None,
                 rounds=d.round, stop_reason=d.reason, s=d.s, c=d.c, source=d.source,
                 censored=d.reason == "end_of_log")
        )
    return pd.DataFrame(rows, columns=["id", "gold", "label", "correct", "rounds", "stop_reason", "s", "c",
                                       "source", "censored"])


def trajectories_frame(trajs: Sequence[Trajectory]) -> pd.DataFrame:
    """Long format, one row per (claim, round): id, gold, round, s, c, label, p_<LABEL>..., source."""
    rows = []
    for t in trajs:
        for st in t.rounds:
            row = dict(id=t.id, gold=t.gold, round=st.round, s=st.s, c=st.c, label=st.label(),
                       p_stop=st.p_stop, source=st.source)
            row.update({f"p_{k}": v for k, v in st.label_probs.items()})
            rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Vectorised replay over the whole grid
# ---------------------------------------------------------------------------------------------
@dataclass
class _Arrays:
    """Trajectories as dense arrays (n claims x R rounds); NaN / False where a round is missing."""

    S: np.ndarray  # (n, R) stop margins, NaN where not asked
    C: np.ndarray  # (n, R) confidences
    L: np.ndarray  # (n, R) argmax label index, -1 where missing
    present: np.ndarray  # (n, R) bool
    last: np.ndarray  # (n,) index of the last present round
    gold: np.ndarray  # (n,) gold label index, -1 if unknown
    protocol_end: np.ndarray  # (n, R) bool: round is the protocol's last


def _to_arrays(trajs: Sequence[Trajectory], labels: Sequence[str]) -> _Arrays:
    n = len(trajs)
    R = max((max(st.round for st in t.rounds) for t in trajs if t.rounds), default=1)
    S = np.full((n, R), np.nan)
    C = np.zeros((n, R))
    L = np.full((n, R), -1, dtype=np.int64)
    present = np.zeros((n, R), dtype=bool)
    protocol_end = np.zeros((n, R), dtype=bool)
    gold = np.full(n, -1, dtype=np.int64)
    index = {lab: i for i, lab in enumerate(labels)}
    for i, t in enumerate(trajs):
        if not t.rounds:
            raise ValueError(f"trajectory {t.id!r} has no rounds")
        gold[i] = index.get(t.gold, -1) if t.gold is not None else -1
        for st in t.rounds:
            j = st.round - 1
            S[i, j] = st.s
            C[i, j] = st.c
            L[i, j] = index[argmax_label(st.label_probs, labels)]
            present[i, j] = True
            protocol_end[i, j] = st.round >= t.max_rounds
    last = np.where(present.any(1), R - 1 - np.argmax(present[:, ::-1], axis=1), 0)
    return _Arrays(S, C, L, present, last, gold, protocol_end)


def _grid(spec: tuple[float, float, float]) -> np.ndarray:
    lo, hi, step = spec
    n = int(round((hi - lo) / step)) + 1
    return np.round(lo + step * np.arange(n), 10)


def _replay_grid(a: _Arrays, ts: np.ndarray, tv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stop round index, predicted label index and censored flag for every claim x grid cell.

    Walks the (at most 3) rounds once, each time for the whole grid at once: a claim stops at the
    first round where both thresholds hold, or at the protocol's last round, or where its log ends.
    Shapes: returns three arrays (n, len(ts), len(tv)).
    """
    n, R = a.S.shape
    with np.errstate(invalid="ignore"):
        s_ok = a.S[:, :, None] >= ts[None, None, :] - EPS  # NaN (not asked) -> False
    c_ok = a.C[:, :, None] >= tv[None, None, :] - EPS
    forced = a.protocol_end | (np.arange(R)[None, :] == a.last[:, None])  # protocol end or end of log
    shape = (n, len(ts), len(tv))
    k = np.zeros(shape, dtype=np.int64)
    early = np.zeros(shape, dtype=bool)
    decided = np.zeros(shape, dtype=bool)
    for r in range(R):
        rule_stop = s_ok[:, r, :, None] & c_ok[:, r, None, :] & a.present[:, r, None, None]
        new = (rule_stop | forced[:, r, None, None]) & ~decided
        k[new] = r
        early |= new & rule_stop
        decided |= new
    labels = np.take_along_axis(a.L, k.reshape(n, -1), axis=1).reshape(shape)
    at_protocol_end = np.take_along_axis(a.protocol_end, k.reshape(n, -1), axis=1).reshape(shape)
    censored = ~early & ~at_protocol_end
    return k, labels, censored


def _macro_f1_grid(pred: np.ndarray, gold: np.ndarray, n_labels: int) -> np.ndarray:
    """Macro F1 per grid cell; like sklearn's default, averaged over labels present in gold or pred."""
    f1s, present = [], []
    for lab in range(n_labels):
        p = pred == lab
        g = (gold == lab)[:, None, None]
        tp = (p & g).sum(0)
        n_pred, n_gold = p.sum(0), g.sum()
        denom = n_pred + n_gold
        f1s.append(np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0))
        present.append(denom > 0)
    f1 = np.stack(f1s)
    pres = np.stack(present)
    return (f1 * pres).sum(0) / np.maximum(pres.sum(0), 1)


@dataclass
class CalibrationResult:
    """The whole grid, the best pair and the Pareto front of quality against mean rounds.

    Attributes:
        grid: one row per (tau_s, tau_v): accuracy, macro_f1, quality (the objective's metric),
            mean_rounds, objective (= quality - cost_per_round * mean_rounds), stop_round1 (share
            stopping after the opening), censored (share of replays that ran past the log).
        best: the best row as a dict (tau_s, tau_v, quality, mean_rounds, objective). Ties go to
            fewer rounds, then to the higher tau_v and tau_s (the more cautious pair).
        pareto: the grid rows no other row beats on both quality and mean rounds.
    """

    grid: pd.DataFrame
    best: dict[str, float]
    pareto: pd.DataFrame
    objective: str
    cost_per_round: float
    n_claims: int
    tau_s_values: np.ndarray = field(repr=False)
    tau_v_values: np.ndarray = field(repr=False)

    def matrix(self, column: str = "quality") -> pd.DataFrame:
        """A tau_v x tau_s table of ``column`` (for a heatmap)."""
        return self.grid.pivot(index="tau_v", columns="tau_s", values=column)

    def at(self, tau_s: float, tau_v: float) -> dict[str, float]:
        """The grid row nearest to (tau_s, tau_v)."""
        i = int(np.argmin(np.abs(self.tau_s_values - tau_s)))
        j = int(np.argmin(np.abs(self.tau_v_values - tau_v)))
        row = self.grid[(self.grid.tau_s == self.tau_s_values[i]) & (self.grid.tau_v == self.tau_v_values[j])]
        return row.iloc[0].to_dict()

    def rule(self, labels: Sequence[str] = ("TRUE", "HALF-TRUE", "FALSE")) -> DualThreshold:
        """The best pair as a :class:`DualThreshold`."""
        return DualThreshold(float(self.best["tau_s"]), float(self.best["tau_v"]), tuple(labels))


def pareto_front(grid: pd.DataFrame, quality: str = "quality", cost: str = "mean_rounds") -> pd.DataFrame:
    """Rows not dominated by any other (another row with cost <= and quality >=, one strictly).

    Duplicated (cost, quality) points keep one representative. Sorted by cost.

    >>> g = pd.DataFrame({"quality": [0.5, 0.7, 0.6, 0.7], "mean_rounds": [1.0, 2.0, 2.5, 3.0]})
    >>> pareto_front(g)[["quality", "mean_rounds"]].values.tolist()
    [[0.5, 1.0], [0.7, 2.0]]
    """
    pts = grid.drop_duplicates(subset=[cost, quality]).sort_values([cost, quality], ascending=[True, False])
    keep, best_q = [], -np.inf
    for idx, q in zip(pts.index, pts[quality].to_numpy()):
        if q > best_q + 1e-12:
            keep.append(idx)
            best_q = q
    return pts.loc[keep].reset_index(drop=True)


def calibrate(
    trajs: Sequence[Trajectory],
    config: Config | None = None,
    *,
    objective: Literal["accuracy", "macro_f1"] | None = None,
    cost_per_round: float | None = None,
) -> CalibrationResult:
    """Replay every (tau_s, tau_v) of the configured grid and score it (one numpy pass).

    Use a **dev** split; report the chosen pair on another split (:func:`split_dev_test`).
    Trajectories without a gold label are ignored. Metrics are computed here in numpy (macro F1 is
    averaged over the labels present in gold or predictions, as scikit-learn does) because the
    whole grid is scored at once.
    """
    cfg = config or Config()
    rc = cfg.radar
    objective = objective or rc.objective
    cost = rc.cost_per_round if cost_per_round is None else cost_per_round
    labels = list(rc.labels)
    scored = [t for t in trajs if t.gold in labels]
    if not scored:
        raise ValueError("no trajectory with a gold label among " + ", ".join(labels))
    a = _to_arrays(scored, labels)
    ts, tv = _grid(rc.grid_tau_s), _grid(rc.grid_tau_v)
    k, pred, censored = _replay_grid(a, ts, tv)
    gold = a.gold
    acc = (pred == gold[:, None, None]).mean(0)
    mf1 = _macro_f1_grid(pred, gold, len(labels))
    rounds = (k + 1).mean(0)
    quality = acc if objective == "accuracy" else mf1
    obj = quality - cost * rounds
    TS, TV = np.meshgrid(ts, tv, indexing="ij")
    grid = pd.DataFrame(
        dict(tau_s=TS.ravel(), tau_v=TV.ravel(), accuracy=acc.ravel(), macro_f1=mf1.ravel(),
             quality=quality.ravel(), mean_rounds=rounds.ravel(), objective=obj.ravel(),
             stop_round1=(k == 0).mean(0).ravel(), censored=censored.mean(0).ravel())
    )
    order = grid.sort_values(["objective", "mean_rounds", "tau_v", "tau_s"],
                             ascending=[False, True, False, False], kind="mergesort")
    b = order.iloc[0]
    best = {key: float(b[key]) for key in ("tau_s", "tau_v", "quality", "mean_rounds", "objective")}
    return CalibrationResult(grid, best, pareto_front(grid), objective, cost, len(scored), ts, tv)


def evaluate_rule(trajs: Sequence[Trajectory], rule: DualThreshold) -> dict[str, float]:
    """Accuracy, macro F1, mean rounds and censored share of one rule (scalar; same code as the grid)."""
    labels = list(rule.labels)
    scored = [t for t in trajs if t.gold in labels]
    if not scored:
        raise ValueError("no trajectory with a gold label")
    a = _to_arrays(scored, labels)
    if rule.enabled:
        ts, tv = np.array([rule.tau_s]), np.array([rule.tau_v])
    else:  # never stop early: thresholds nothing can reach
        ts, tv = np.array([np.inf]), np.array([np.inf])
    k, pred, censored = _replay_grid(a, ts, tv)
    return dict(
        n=len(scored),
        accuracy=float((pred[:, 0, 0] == a.gold).mean()),
        macro_f1=float(_macro_f1_grid(pred, a.gold, len(labels))[0, 0]),
        mean_rounds=float((k[:, 0, 0] + 1).mean()),
        censored=float(censored[:, 0, 0].mean()),
    )



def split_dev_test(trajs: Sequence[Trajectory], dev_fraction: float = 0.5, seed: int = 0,
                   stratify: bool = True) -> tuple[list[Trajectory], list[Trajectory]]:
    """Seeded split into (dev, test), stratified by gold label so each half keeps the class mix."""
    rng = np.random.default_rng(seed)
    groups: dict[Any, list[Trajectory]] = {}
    for t in trajs:
        groups.setdefault(t.gold if stratify else None, []).append(t)
    dev, test = [], []
    for key in sorted(groups, key=str):
        items = list(groups[key])
        perm = rng.permutation(len(items))
        n_dev = int(round(dev_fraction * len(items)))
        dev += [items[i] for i in perm[:n_dev]]
        test += [items[i] for i in perm[n_dev:]]
    return dev, test


# ---------------------------------------------------------------------------------------------
# Simulator
# ---------------------------------------------------------------------------------------------
def _probs_with_max(c: float, winner: int, runner_up: int, n_labels: int) -> np.ndarray:
    """A distribution whose largest entry is exactly ``c`` at ``winner`` (c must exceed 1/n)."""
    p = np.zeros(n_labels)
    rest = 1.0 - c
    others = [j for j in range(n_labels) if j != winner]
    if c >= 0.5:
        w = np.array([0.75 if j == runner_up else 0.25 / max(len(others) - 1, 1) for j in others])
    else:  # keep every other label below c
        w = np.full(len(others), 1.0 / len(others))
    p[others] = rest * w / w.sum()
    p[winner] = c
    return p


def simulate_trajectories(
    n: int = 200,
    *,
    max_rounds: int = 3,
    labels: Sequence[str] = ("TRUE", "HALF-TRUE", "FALSE"),
    class_weights: Sequence[float] | None = None,
    seed: int = 0,
    noise: float = 0.12,
    drift: float = 0.10,
    halftruth_penalty: float = 0.15,
    planted: tuple[float, float] | None = None,
) -> list[Trajectory]:
    """Synthetic Judge trajectories whose confidence evolves over rounds with noise.

    Model (per claim): a starting confidence ``c1`` (lower by ``halftruth_penalty`` for HALF-TRUE
    claims: omissions are hard), then ``c_{r+1} = c_r + drift + noise``; the stop margin follows
    the confidence, ``s_r ~ 2 c_r - 1 + noise``. Whether the argmax is the gold label:

    * ``planted=None`` (default, a calibrated-ish Judge): correct at round r iff ``u < c_r`` for one
      uniform ``u`` per claim, so more confidence means more often right and a claim that turns
      right tends to stay right. Wrong answers on HALF-TRUE claims pick TRUE or FALSE; wrong
      answers on the others mostly pick HALF-TRUE.
    * ``planted=(tau_s*, tau_v*)``: the argmax is right exactly when ``s >= tau_s*`` and
      ``c >= tau_v*`` (or at the last round) and wrong otherwise. With any cost per round, the
      best thresholds are then the planted ones: a test that calibration finds them.
    """
    rng = np.random.default_rng(seed)
    L = len(labels)
    w = np.ones(L) / L if class_weights is None else np.asarray(class_weights, float) / np.sum(class_weights)
    ht = labels.index("HALF-TRUE") if "HALF-TRUE" in labels else -1
    floor = 1.0 / L + 0.02
    out = []
    for i in range(n):
        g = int(rng.choice(L, p=w))
        u = rng.uniform()
        c = rng.uniform(floor, 1.0) - (halftruth_penalty if g == ht else 0.0)
        wrong_pick = int(rng.choice([j for j in range(L) if j != g and j != ht] or [j for j in range(L) if j != g])
                         if g == ht else (ht if ht >= 0 and rng.uniform() < 0.7 else
                                          rng.choice([j for j in range(L) if j != g])))
        rounds = []
        for r in range(1, max_rounds + 1):
            if r > 1:
                c = c + drift + rng.normal(0, noise)
            c = float(np.clip(c, floor, 0.999))
            last = r == max_rounds
            s = float(np.clip(2 * c - 1 + rng.normal(0, 2 * noise), -1.0, 1.0))
            if planted is None:
                correct = u < c
            else:
                correct = last or (s >= planted[0] - EPS and c >= planted[1] - EPS)
            winner = g if correct else wrong_pick
            runner = wrong_pick if correct else g
            p = _probs_with_max(c, winner, runner, L)
            p_stop = None if last else (1 + s) / 2
            rounds.append(RoundState(
                round=r, label_probs={lab: float(v) for lab, v in zip(labels, p)},
                p_stop=p_stop, p_continue=None if last else 1 - p_stop, source="simulated",
            ))
        out.append(Trajectory(id=f"sim-{i:04d}", rounds=tuple(rounds), gold=labels[g], max_rounds=max_rounds,
                              meta={"simulated": True}))
    return out


# ---------------------------------------------------------------------------------------------
# Loaders for the RADAR repository's logged outputs
# ---------------------------------------------------------------------------------------------
DEFAULT_RUN = "outputs/retrieved_evidence_bgebase_answer_map_multi_people_hybrid_mcq_llama.json"
DECISIONS_CSV = "outputs/continuation_decisions_summary.csv"
VERDICTS_CSV = "outputs/claim_stage_verdict_summary.csv"


@dataclass
class LoggedRun:
    """A parsed RADAR answer map: trajectories plus what the original run logged.

    Attributes:
        trajectories: one per parsed claim (round r = Judge state after round r).
        logged: per claim, the run's own outcome: executed rounds, final verdict (from RADAR's
            separate final-judge call), its thresholds, and the logged STOP/CONTINUE decisions.
        skipped: ``(claim id, reason)`` for records that could not be parsed (kept out, not fatal).
        n_decisions: scored STOP/CONTINUE decisions parsed (the forced "opening" rows excluded).
        path: the file read.
    """

    trajectories: list[Trajectory]
    logged: pd.DataFrame
    skipped: list[tuple[str, str]]
    n_decisions: int
    path: Path
    thresholds: tuple[float, float] | None = None


def _gold_labels(data_dir: str | Path | None) -> dict[str, str]:
    """Gold labels of the PolitiFact-Hidden test split: GT_test_all.json, else the 150-claim summary."""
    from mabpd_kit import datasets as ds

    try:
        gt = json.loads(ds.locate("PolitiFact-Hidden", "GT_test_all.json", data_dir).read_text())
        return {str(k): str(v).upper() for k, v in gt.items()}
    except FileNotFoundError:
        pass
    try:
        df = pd.read_csv(ds.locate("RADAR", VERDICTS_CSV, data_dir))
        return {str(k): str(v).upper() for k, v in zip(df.claim_id, df.ground_truth)}
    except FileNotFoundError:
        return {}


def _norm_probs(d: Mapping[str, Any] | None, labels: Sequence[str]) -> dict[str, float] | None:
    if not isinstance(d, Mapping):
        return None
    probs = {lab: float(d.get(lab, 0.0) or 0.0) for lab in labels}
    total = sum(probs.values())
    if not total > 0 or any(not math.isfinite(v) or v < 0 for v in probs.values()):
        return None
    return {k: v / total for k, v in probs.items()}


def _parse_claim(cid: str, rec: Mapping[str, Any], labels: Sequence[str], max_rounds: int) -> tuple[list[RoundState], dict]:
    """One record of RADAR's hybrid adaptive answer map -> Judge states per executed round.

    Layout (found by reading the files): ``executed_rounds`` lists the stages played;
    ``round_judges["round_k"]["verdict_probabilities"]`` is the Judge's label distribution after
    round k; ``continuation_decisions`` has one entry per stage, and the entry named after stage
    k+1 holds ``choice_probabilities`` {STOP, CONTINUE} asked *after* round k (the "opening" entry
    is a forced continue with no probabilities). When the closing round was played, no round judge
    follows it and the final judge's distribution is that round's state.
    """
    executed = list(rec.get("executed_rounds") or [])
    if not executed:
        raise ValueError("no executed_rounds: not a hybrid adaptive-stopping record")
    judges = rec.get("round_judges") or {}
    decisions = {d.get("round"): d for d in rec.get("continuation_decisions") or [] if isinstance(d, Mapping)}
    final = rec.get("final_verdict") if isinstance(rec.get("final_verdict"), Mapping) else {}
    states = []
    for r in range(1, len(executed) + 1):
        probs = _norm_probs((judges.get(f"round_{r}") or {}).get("verdict_probabilities"), labels)
        if probs is None and r == len(executed):
            probs = _norm_probs(final.get("verdict_probabilities"), labels)
        if probs is None:
            raise ValueError(f"no label probabilities for round {r}")
        p_stop = p_cont = None
        if r < max_rounds:
            dec = decisions.get(ROUND_NAMES[r]) if r < len(ROUND_NAMES) else None
            cp = (dec or {}).get("choice_probabilities")
            if isinstance(cp, Mapping) and "STOP" in cp and "CONTINUE" in cp:
                p_stop, p_cont = float(cp["STOP"]), float(cp["CONTINUE"])
            elif r < len(executed):
                raise ValueError(f"no STOP/CONTINUE probabilities after round {r}")
        states.append(RoundState(round=r, label_probs=probs, p_stop=p_stop, p_continue=p_cont, source="logged"))
    info = dict(
        executed_rounds=len(executed),
        final_verdict=str(final.get("verdict", "")).upper() or None,
        logged_decisions=[(d.get("round"), d.get("decision")) for d in rec.get("continuation_decisions") or []],
    )
    return states, info


def load_radar_run(
    path: str | Path | None = None,
    *,
    data_dir: str | Path | None = None,
    config: Config | None = None,
    gold: Mapping[str, str] | None = None,
) -> LoggedRun:
    """Read a RADAR ``*_hybrid_*`` answer map (the real Llama-3-8B adaptive-stopping run by default).

    ``path`` defaults to ``mabpd_kit.datasets.locate("RADAR", "outputs/...hybrid_mcq_llama.json")``.
    Gold labels come from PolitiFact-Hidden's ``GT_test_all.json`` (or ``gold=``). Records that
    cannot be parsed are listed in ``skipped`` with the reason; the rest load.
    """
    from mabpd_kit import datasets as ds

    cfg = config or Config()
    labels = tuple(cfg.radar.labels)
    max_rounds = cfg.radar.max_rounds
    p = Path(path) if path is not None else ds.locate("RADAR", DEFAULT_RUN, data_dir)
    raw = json.loads(Path(p).read_text())
    if not isinstance(raw, Mapping):
        raise ValueError(f"{p}: expected a JSON object of claim id -> record")
    gold_map = dict(gold) if gold is not None else _gold_labels(data_dir)
    trajs, rows, skipped, n_dec, thresholds = [], [], [], 0, None
    for cid, rec in raw.items():
        cid = str(cid)
        try:
            if not isinstance(rec, Mapping):
                raise ValueError("record is not an object")
            states, info = _parse_claim(cid, rec, labels, max_rounds)
        except (ValueError, TypeError, KeyError) as exc:
            skipped.append((cid, str(exc)))
            continue
        th = rec.get("thresholds") or {}
        if "tau_s" in th and "tau_v" in th:
            thresholds = (float(th["tau_s"]), float(th["tau_v"]))
        n_dec += sum(1 for s in states if s.p_stop is not None)
        g = gold_map.get(cid)
        trajs.append(Trajectory(id=cid, rounds=tuple(states), gold=g, max_rounds=max_rounds,
                                meta={"source_file": Path(p).name}))
        rows.append(dict(id=cid, gold=g, **info))
    if skipped:
        warnings.warn(f"{len(skipped)} of {len(raw)} records in {Path(p).name} skipped (see .skipped)", stacklevel=2)
    return LoggedRun(trajs, pd.DataFrame(rows), skipped, n_dec, Path(p), thresholds)


def load_radar_decisions(path: str | Path | None = None, *, data_dir: str | Path | None = None) -> pd.DataFrame:
    """RADAR's ``continuation_decisions_summary.csv``: every logged STOP/CONTINUE of 4 runs.

    The CSV names its ``source_file`` on a run's first row only (later rows are blank); this fills
    it down, adds ``run`` (a short name: evidence ``retrieved``/``gold`` x judge ``bj``/``fj``),
    ``round_index`` (1 = opening) and ``s = p(STOP) - p(CONTINUE)``, and joins the gold label.
    """
    from mabpd_kit import datasets as ds

    p = Path(path) if path is not None else ds.locate("RADAR", DECISIONS_CSV, data_dir)
    df = pd.read_csv(p, dtype={"claim_id": str})
    df["source_file"] = df["source_file"].replace("", np.nan).ffill()
    name = df["source_file"].fillna("").str.rsplit("/", n=1).str[-1]
    evidence = np.where(name.str.contains("matching_evidence_full"), "gold", "retrieved")
    judge = name.str.extract(r"_(bj|fj)_", expand=False).fillna("?")
    df["run"] = pd.Series(evidence, index=df.index) + "-" + judge
    df["round_index"] = df["round"].map({n: i + 1 for i, n in enumerate(ROUND_NAMES)})
    df = df.rename(columns={"prob_stop": "p_stop", "prob_continue": "p_continue"})
    df["s"] = df["p_stop"] - df["p_continue"]
    gold = _gold_labels(data_dir)
    df["gold"] = df["claim_id"].map(gold)
    return df[["run", "source_file", "claim_id", "round", "round_index", "decision", "p_stop", "p_continue", "s", "gold"]]
