"""Calibrating RADAR's dual-threshold rule: replay the whole grid in one numpy pass, pick a pair, simulate.
A claim with a one-hot round says nothing about thresholds: left out and counted unless ``one_hot="include"``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from mabpd_kit.config import Config
from mabpd_kit.radar.stopping import EPS, DualThreshold, RoundState, Trajectory, argmax_label

OneHot = Literal["exclude", "include"]


def _split_one_hot(trajs: Sequence[Trajectory], one_hot: OneHot) -> tuple[list[Trajectory], list[str]]:
    """(trajectories to replay, ids of those with a one-hot round); with ``exclude`` the latter are left out."""
    if one_hot not in ("exclude", "include"):
        raise ValueError(f"one_hot must be 'exclude' or 'include', not {one_hot!r}")
    flags = [any(st.one_hot for st in t.rounds) for t in trajs]
    flagged = [t.id for t, f in zip(trajs, flags) if f]
    if one_hot == "include":
        return list(trajs), flagged
    return [t for t, f in zip(trajs, flags) if not f], flagged

__all__ = ["CalibrationResult", "calibrate", "evaluate_rule", "pareto_front", "simulate_trajectories", "split_dev_test"]


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
    """(stop round index, predicted label index, censored) per claim and grid cell, each (n, len(ts), len(tv))."""
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
    """The whole grid (one row per (tau_s, tau_v)), the best pair (ties: fewer rounds, then higher tau_v
    and tau_s) and the Pareto front of quality against mean rounds."""

    grid: pd.DataFrame
    best: dict[str, float]
    pareto: pd.DataFrame
    objective: str
    cost_per_round: float
    n_claims: int
    tau_s_values: np.ndarray = field(repr=False)
    tau_v_values: np.ndarray = field(repr=False)
    n_one_hot: int = 0
    one_hot_ids: list[str] = field(default_factory=list, repr=False)
    one_hot: str = "exclude"

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
    """Rows no other row beats on both cost and quality (one per duplicated point), sorted by cost."""
    pts = grid.drop_duplicates(subset=[cost, quality]).sort_values([cost, quality], ascending=[True, False])
    keep, best_q = [], -np.inf
    for idx, q in zip(pts.index, pts[quality].to_numpy()):
        if q > best_q + 1e-12:
            keep.append(idx)
            best_q = q
    return pts.loc[keep].reset_index(drop=True)


def calibrate(trajs: Sequence[Trajectory], config: Config | None = None, *,
              objective: Literal["accuracy", "macro_f1"] | None = None, cost_per_round: float | None = None,
              one_hot: OneHot = "exclude") -> CalibrationResult:
    """Replay every (tau_s, tau_v) of the configured grid and score it; use a dev split
    (:func:`split_dev_test`). Trajectories without a gold label are ignored."""
    cfg = config or Config()
    rc = cfg.radar
    objective = objective or rc.objective
    cost = rc.cost_per_round if cost_per_round is None else cost_per_round
    labels = list(rc.labels)
    scored, flagged = _split_one_hot([t for t in trajs if t.gold in labels], one_hot)
    if not scored:
        raise ValueError("no trajectory with a gold label among " + ", ".join(labels)
                         + (f" ({len(flagged)} left out for one-hot rounds)" if flagged else ""))
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
    return CalibrationResult(grid, best, pareto_front(grid), objective, cost, len(scored), ts, tv,
                             n_one_hot=len(flagged), one_hot_ids=flagged, one_hot=one_hot)


def evaluate_rule(trajs: Sequence[Trajectory], rule: DualThreshold, *,
                  one_hot: OneHot = "exclude") -> dict[str, float]:
    """n, accuracy, macro F1, mean rounds, censored share and n_one_hot of one rule."""
    labels = list(rule.labels)
    scored, flagged = _split_one_hot([t for t in trajs if t.gold in labels], one_hot)
    if not scored:
        raise ValueError("no trajectory with a gold label")
    a = _to_arrays(scored, labels)
    if rule.enabled:
        ts, tv = np.array([rule.tau_s]), np.array([rule.tau_v])
    else:  # never stop early: thresholds nothing can reach
        ts, tv = np.array([np.inf]), np.array([np.inf])
    k, pred, censored = _replay_grid(a, ts, tv)
    return dict(
        n=len(scored), accuracy=float((pred[:, 0, 0] == a.gold).mean()),
        macro_f1=float(_macro_f1_grid(pred, a.gold, len(labels))[0, 0]), mean_rounds=float((k[:, 0, 0] + 1).mean()),
        censored=float(censored[:, 0, 0].mean()), n_one_hot=len(flagged),
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


def simulate_trajectories(n: int = 200, *, max_rounds: int = 3, labels: Sequence[str] = ("TRUE", "HALF-TRUE", "FALSE"),
                          class_weights: Sequence[float] | None = None, seed: int = 0, noise: float = 0.12,
                          drift: float = 0.10, halftruth_penalty: float = 0.15,
                          planted: tuple[float, float] | None = None) -> list[Trajectory]:
    """Synthetic Judge trajectories; with ``planted=(tau_s, tau_v)`` the argmax is right exactly when both
    thresholds hold (or at the last round), so calibration must find the planted pair."""
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
