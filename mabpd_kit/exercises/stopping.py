"""Exercise 07: dual-threshold calibration on trajectories chosen so that each choice matters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mabpd_kit.exercises._common import TOL, _candidates, _close

RADAR_PAIR = (-0.6, 0.75)   # the logged RADAR run's thresholds (Config().radar.tau_s, tau_v)


def _grid(lo: float, hi: float, step: float) -> np.ndarray:
    return np.array([round(lo + i * step, 10) for i in range(int(round((hi - lo) / step)) + 1)])


def _replay_table(trajs: Sequence[Any], labels: Sequence[str]) -> dict[str, np.ndarray]:
    """Per claim and round: stop margin, confidence, argmax label, and whether the round must stop."""
    keep = [t for t in trajs if t.gold in labels and not any(st.one_hot for st in t.rounds)]
    width = max(len(t.rounds) for t in keep)
    s = np.full((len(keep), width), np.nan)
    c = np.zeros((len(keep), width))
    lab = np.zeros((len(keep), width), dtype=int)
    forced = np.zeros((len(keep), width), dtype=bool)
    for i, t in enumerate(keep):
        for j, st in enumerate(t.rounds):
            probs = [st.label_probs.get(x, 0.0) for x in labels]
            lab[i, j] = int(np.argmax(probs))
            c[i, j] = max(st.label_probs.values())
            if st.p_stop is not None and st.p_continue is not None:
                s[i, j] = st.p_stop - st.p_continue
            forced[i, j] = st.round >= t.max_rounds or j == len(t.rounds) - 1
    gold = np.array([list(labels).index(t.gold) for t in keep])
    return {"s": s, "c": c, "label": lab, "forced": forced, "gold": gold}


def stopping_grid(trajs: Sequence[Any], cost: float = 0.0, config: Any = None) -> Any:
    """Accuracy, mean rounds and objective (accuracy - cost * mean rounds) of every grid pair (reference)."""
    import pandas as pd

    from mabpd_kit.config import Config
    rc = (config or Config()).radar
    tab = _replay_table(trajs, list(rc.labels))
    ts, tv = _grid(*rc.grid_tau_s), _grid(*rc.grid_tau_v)
    with np.errstate(invalid="ignore"):
        ok_s = tab["s"][:, :, None, None] >= ts[None, None, :, None] - TOL
    ok = (ok_s & (tab["c"][:, :, None, None] >= tv[None, None, None, :] - TOL)) | tab["forced"][:, :, None, None]
    stop = ok.argmax(axis=1)                                             # first round that stops
    label = np.take_along_axis(tab["label"][:, :, None, None].repeat(len(ts), 2).repeat(len(tv), 3), stop[:, None], 1)[:, 0]
    acc = (label == tab["gold"][:, None, None]).mean(0)
    rounds = (stop + 1).mean(0)
    TS, TV = np.meshgrid(ts, tv, indexing="ij")
    return pd.DataFrame({"tau_s": TS.ravel(), "tau_v": TV.ravel(), "n": len(tab["gold"]), "accuracy": acc.ravel(),
                         "mean_rounds": rounds.ravel(), "objective": (acc - cost * rounds).ravel()})


def _chosen(grid: Any) -> tuple[float, float]:
    """The pair calibration picks: the best objective, then fewer rounds, then the higher tau_v and tau_s."""
    rows = sorted(zip(grid["objective"], grid["mean_rounds"], grid["tau_v"], grid["tau_s"]),
                  key=lambda r: (-round(r[0], 9), r[1], -r[2], -r[3]))
    return round(rows[0][3], 6), round(rows[0][2], 6)


def _key(pair: Any) -> tuple[float, float] | None:
    try:
        a, b = (float(x) for x in pair)
    except (TypeError, ValueError):
        return None
    return round(a, 6), round(b, 6)


def _row(grid: Any, pair: Any) -> dict[str, float]:
    k = _key(pair)
    hit = grid[(grid["tau_s"].round(6) == k[0]) & (grid["tau_v"].round(6) == k[1])]
    assert len(hit) == 1, f"{pair} is not a pair of the calibration grid."
    return hit.iloc[0].to_dict()


def stopping_data(seed: int = 0, n: int = 160) -> tuple[list, list, list]:
    """(claims, dev, test): simulated Judge trajectories split in halves, chosen so that each wrong choice (the test
    half, all claims, the logged pair, another cost, a swapped pair) gives another best pair."""
    from mabpd_kit.radar.calibrate import simulate_trajectories, split_dev_test
    for s in _candidates(seed, tries=300):
        trajs = simulate_trajectories(n, seed=s, drift=0.05)
        dev, test = split_dev_test(trajs, dev_fraction=0.5, seed=s)
        d0, d2 = _chosen(stopping_grid(dev)), _chosen(stopping_grid(dev, 0.02))
        if (d0[0] == d0[1] or d2[0] == d2[1]
                or d0 in (_chosen(stopping_grid(test)), _chosen(stopping_grid(trajs)), RADAR_PAIR)
                or d2 in (d0, _chosen(stopping_grid(dev, 0.2)), _chosen(stopping_grid(test, 0.02)))):
            continue
        return trajs, dev, test
    raise RuntimeError(f"no discriminating trajectories near seed {seed}")  # pragma: no cover


def check_calibrated_pair(dev: Sequence[Any], test: Sequence[Any], pair: Any, cost: float = 0.0) -> str:
    """Exercises 07-1 and 07-3: ``pair`` is a best pair of the dev half at ``cost`` per round."""
    k = _key(pair) if pair is not None and len(pair) == 2 else None
    assert k is not None, "pair must be a tuple of two thresholds (tau_s, tau_v)."
    assert k != RADAR_PAIR, "That is the logged run's pair (RADAR_PAIR): calibrate on the dev half and read its best row."
    if k == _chosen(stopping_grid(dev, cost)):
        row = _row(stopping_grid(dev, cost), k)
        return (f"Correct: {tuple(pair)} is the dev half's best pair at cost {cost} per round: accuracy "
                f"{row['accuracy']:.3f} in {row['mean_rounds']:.2f} mean rounds.")
    assert k != _chosen(stopping_grid(test, cost)), "This pair was chosen on the test half: calibrate on dev."
    assert k != _chosen(stopping_grid([*dev, *test], cost)), "This pair was chosen on all the claims: calibrate on dev only."
    for other in (0.0, 0.02, 0.2):
        assert other == cost or k != _chosen(stopping_grid(dev, other)), (
            f"This pair is best on dev at a cost of {other} per round; this exercise charges {cost}.")
    raise AssertionError(f"{tuple(pair)} is not a best pair of the dev half (cost {cost} per round): read the calibration's "
                         "best row, tau_s first.")


def check_stopping_report(report: Any, dev: Sequence[Any], test: Sequence[Any], pair: Any) -> str:
    """Exercise 07-2: rows 'RADAR run' and 'calibrated on dev' (any order), each pair scored on test."""
    want = {"RADAR run", "calibrated on dev"}
    assert report is not None and hasattr(report, "index") and set(report.index) == want, (
        "report needs exactly two rows, indexed 'RADAR run' and 'calibrated on dev'.")
    assert {"n", "accuracy", "mean_rounds"} <= set(report.columns), "report needs the columns evaluate_rule returns."
    grids = {"test": stopping_grid(test), "dev": stopping_grid(dev), "all claims": stopping_grid([*dev, *test])}
    for name, rule in (("RADAR run", RADAR_PAIR), ("calibrated on dev", pair)):
        got = report.loc[name]
        scored = [half for half, g in grids.items() if (r := _row(g, rule))["n"] == got["n"]
                  and _close(got["accuracy"], r["accuracy"]) and _close(got["mean_rounds"], r["mean_rounds"])]
        if "test" in scored:
            continue
        other = RADAR_PAIR if name != "RADAR run" else pair
        swapped = _row(grids["test"], other)
        assert not (_close(got["accuracy"], swapped["accuracy"]) and _close(got["mean_rounds"], swapped["mean_rounds"])
                    and _key(other) != _key(rule)), f"The row {name!r} holds the other pair's scores: the rows are swapped."
        assert not scored, f"The row {name!r} is scored on {scored[0]}, not on the {len(test)} test claims."
        raise AssertionError(f"The row {name!r} is not its pair scored on the test half with evaluate_rule.")
    return f"Correct: both pairs are scored on the {len(test)} test claims."
