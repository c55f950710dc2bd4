"""Exercises 08 and 09: rates by leaning, a stratified split, a paired comparison, Cohen's h."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mabpd_kit.exercises._common import TOL, _acc, _candidates, _close, _macro_f1

LEANINGS = ("left", "center", "right", None)


def _thresholds() -> list[float]:
    return [round(0.20 + 0.01 * i, 2) for i in range(61)]


def _best_f1(gold: Sequence[int], score: Sequence[float]) -> float:
    return max(_macro_f1(gold, [int(x >= t) for x in score]) for t in _thresholds())


def _first_best(gold: Sequence[int], score: Sequence[float]) -> float:
    scores = [_macro_f1(gold, [int(x >= t) for x in score]) for t in _thresholds()]
    return _thresholds()[int(np.argmax(scores))]


def _stratified(frame: Any, part: Any) -> bool:
    for label in (0, 1):
        n, k = int((frame["gold"] == label).sum()), int((part["gold"] == label).sum())
        if abs(k - n / 2) > 1:
            return False
    return True


def threshold_data(seed: int = 0, n: int = 240, boundary: float = 0.5, split_seed: int = 0) -> Any:
    """Scored items (id, gold, score, pred at ``boundary``, type = outlet leaning) in file order, chosen so that the
    default boundary is not the best threshold on a stratified half and a plain or unstratified split is not
    stratified. ``split_seed`` is the seed the exercise splits with."""
    import pandas as pd
    for s in _candidates(seed):
        rng = np.random.default_rng(s)
        lean = rng.choice(len(LEANINGS), size=n, p=[0.35, 0.25, 0.3, 0.1])
        gold = (rng.random(n) < np.array([0.55, 0.3, 0.5, 0.4])[lean]).astype(int)
        score = np.clip(0.36 + 0.2 * gold + 0.04 * (lean == 0) + rng.normal(0, 0.13, n), 0, 1).round(3)
        frame = pd.DataFrame({"id": [f"ex-{i:03d}" for i in range(n)], "gold": gold, "score": score,
                              "type": [LEANINGS[i] for i in lean]})
        frame = frame.iloc[np.argsort(lean, kind="stable")].reset_index(drop=True)
        frame["pred"] = (frame["score"] >= boundary).astype(int)
        half = frame.iloc[: n // 2]
        perm = frame.iloc[np.random.default_rng(split_seed).permutation(n)[: n // 2]]
        mask = _stratified_mask(frame, split_seed)
        cal, rep = frame[mask], frame[~mask]
        best = _best_f1(cal["gold"], cal["score"])
        if (_stratified(frame, half) or _stratified(frame, perm)
                or _macro_f1(cal["gold"], (cal["score"] >= boundary).astype(int)) > best - 0.01
                or _best_f1(rep["gold"], rep["score"]) <= _macro_f1(rep["gold"], (rep["score"] >= boundary).astype(int))
                or _macro_f1(cal["gold"], (cal["score"] >= _first_best(rep["gold"], rep["score"])).astype(int)) > best - TOL):
            continue
        frame.attrs["seed"] = s
        return frame
    raise RuntimeError(f"no discriminating threshold data near seed {seed}")  # pragma: no cover


def _stratified_mask(frame: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(frame), dtype=bool)
    for label in (0, 1):
        idx = np.flatnonzero(frame["gold"].to_numpy() == label)
        mask[rng.choice(idx, size=len(idx) // 2, replace=False)] = True
    return mask


def check_rates(pred: Any, rates: Any) -> str:
    """Exercise 08-1: fp_rate and fn_rate per outlet leaning ('(none)' for a missing one)."""
    import pandas as pd
    assert rates is not None and {"fp_rate", "fn_rate"} <= set(getattr(rates, "columns", ())), (
        "Build rates with columns fp_rate and fn_rate, indexed by outlet leaning (type).")
    cells: dict[str, dict[int, list[int]]] = {}
    for t, g, p in zip(pred["type"], pred["gold"], pred["pred"]):
        key = "(none)" if t is None or t != t else str(t)
        cells.setdefault(key, {0: [], 1: []})[int(g)].append(int(p))
    assert set(map(str, rates.index)) >= set(cells), (
        "rates needs a row for every leaning, missing ones as '(none)' (fill the type column before grouping).")
    values = pd.to_numeric(pd.Series(rates[["fp_rate", "fn_rate"]].to_numpy().ravel()), errors="coerce")
    assert not (values > 1).any(), (
        "A rate is a share between 0 and 1: take the mean of pred over the group, not the sum (a count).")
    for key, by_gold in cells.items():
        fp = sum(by_gold[0]) / len(by_gold[0]) if by_gold[0] else None
        fn = (len(by_gold[1]) - sum(by_gold[1])) / len(by_gold[1]) if by_gold[1] else None
        got = rates.loc[key]
        if fp is not None and fn is not None and _close(got["fp_rate"], fn) and _close(got["fn_rate"], fp) and abs(fp - fn) > TOL:
            raise AssertionError("fp_rate and fn_rate are swapped: fp is neutral sentences predicted biased.")
        assert fp is None or _close(got["fp_rate"], fp), (
            f"fp_rate for {key!r} is not the share of its *neutral* sentences predicted biased (filter gold == 0 first).")
        assert fn is None or _close(got["fn_rate"], fn), (
            f"fn_rate for {key!r} is not the share of its *biased* sentences predicted neutral (filter gold == 1 first).")
    return f"Correct: fp_rate and fn_rate for {len(cells)} outlet leanings."


def check_split(pred: Any, cal: Any, rep: Any, threshold: Any, boundary: float = 0.5) -> str:
    """Exercise 08-2: disjoint halves stratified by gold label; a threshold that maximises macro F1 on cal."""
    assert threshold is not None, "Set threshold to the value that maximises macro F1 on the calibration half."
    assert set(cal["id"]).isdisjoint(rep["id"]) and len(cal) + len(rep) == len(pred), "cal and rep must be disjoint halves of pred."
    assert _stratified(pred, cal), ("The halves are not stratified by gold label: draw half of the neutral items and half "
                                    "of the biased items, not half of all items.")
    got = _macro_f1(cal["gold"], (cal["score"] >= float(threshold)).astype(int))
    best = _best_f1(cal["gold"], cal["score"])
    if got >= best - TOL:
        return f"Correct: a threshold chosen on the calibration half ({len(cal)} items), stratified by gold label."
    assert not _close(threshold, boundary), "That is the default boundary: the exercise asks for the threshold adapted on cal."
    cal_best = f"cal's best is {_first_best(cal['gold'], cal['score']):.2f}"
    on_all = _macro_f1(pred["gold"], (pred["score"] >= float(threshold)).astype(int)) >= _best_f1(pred["gold"], pred["score"]) - TOL
    assert not on_all, f"This threshold is the best on all items of pred, not on the calibration half ({cal_best})."
    assert _macro_f1(rep["gold"], (rep["score"] >= float(threshold)).astype(int)) < _best_f1(rep["gold"], rep["score"]) - TOL, (
        f"This threshold is the best on the report half: choose it on the calibration half (cal; {cal_best}).")
    raise AssertionError(f"This threshold does not maximise macro F1 on the calibration half ({cal_best}).")


def check_paired(rep: Any, threshold: float, result: Any, boundary: float = 0.5, n_all: int | None = None,
                 cal: Any = None) -> str:
    """Exercise 08-3: paired bootstrap of macro F1 on rep, A = adapted threshold, B = default boundary (``cal`` lets
    the check name a comparison made on the calibration half)."""
    assert result is not None, "Store the paired bootstrap result in result."
    assert result.n_items == len(rep), (
        f"result covers {result.n_items} items: report on the report half (rep, {len(rep)} items), not on "
        + ("all of pred." if n_all and result.n_items == n_all else "the calibration half."))
    gold = list(rep["gold"])
    a = list((rep["score"] >= threshold).astype(int))
    b = list((rep["score"] >= boundary).astype(int))
    want = (_macro_f1(gold, a), _macro_f1(gold, b))
    got = (result.score_a, result.score_b)
    if _close(got[0], want[0]) and _close(got[1], want[1]):
        return "Correct: the adapted threshold against the default boundary, paired, on the report half."
    assert not (_close(got[0], want[1]) and _close(got[1], want[0])), "A and B are swapped: A is the adapted threshold, B the default."
    if cal is not None:
        on_cal = [_macro_f1(list(cal["gold"]), list((cal["score"] >= t).astype(int))) for t in (threshold, boundary)]
        assert not (_close(got[0], on_cal[0]) and _close(got[1], on_cal[1])), (
            "This looks like the calibration half (cal), where the threshold was chosen: compare on the report half (rep).")
    assert not (_close(got[0], _acc(gold, a)) and _close(got[1], _acc(gold, b))), (
        "The systems are right but the metric is not: compare macro F1 (the default metric), not accuracy.")
    assert _close(got[0], want[0]) or _close(got[1], want[1]) or str(getattr(result, "metric", "")).lower() in ("", "macro_f1"), (
        f"The metric is {result.metric}: compare macro F1.")
    assert not (_close(got[0], want[0]) ^ _close(got[1], want[1])), (
        "System A" if not _close(got[0], want[0]) else "System B") + (
        " is not what the exercise asks: A = rep's score at your threshold, B = rep's score at the default boundary.")
    raise AssertionError("Neither system scores as expected against rep's gold labels: pass rep['gold'] (the same rows as "
                         "the predictions, in the same order) and the two predictions of the report half.")


def check_cohens_h(df: Any, pair: Sequence[str], h: Any) -> str:
    """Exercise 09-3: h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p2)), p = share of an outlet's articles predicted biased."""
    import math
    assert h is not None, "Store Cohen's h in h."
    shares = []
    for outlet in pair:
        preds = [int(p) for o, p, f in zip(df["outlet"], df["pred"], df["failed"]) if o == outlet and not f]
        shares.append(sum(preds) / len(preds))
    want = 2 * math.asin(math.sqrt(shares[0])) - 2 * math.asin(math.sqrt(shares[1]))
    if _close(h, want):
        return f"Correct: h = {want:.3f} between {pair[0]} and {pair[1]}."
    assert not (_close(h, -want) and abs(want) > TOL), f"The sign is reversed: h is {pair[0]} minus {pair[1]}, in that order."
    assert not _close(h, want / 2) or abs(want) < TOL, "Each arcsine is doubled: h = 2·asin(√p₁) − 2·asin(√p₂)."
    assert not _close(h, shares[0] - shares[1]), "That is the difference of the two shares; Cohen's h transforms each share first."
    no_root = 2 * math.asin(shares[0]) - 2 * math.asin(shares[1])
    assert not _close(h, no_root) or _close(no_root, want), (
        "The square root is missing: take √p of each share before the arcsine, h = 2·asin(√p₁) − 2·asin(√p₂).")
    raise AssertionError(f"h is not Cohen's h of {pair[0]} vs {pair[1]}: take each outlet's share of articles predicted "
                         "biased (the mean of pred over its articles that did not fail), then the formula.")


def check_large(agg: Any, large: Any, min_group: int) -> str:
    """Exercise 09-1: the outlets not flagged small (at least ``min_group`` articles), highest biased rate first."""
    assert large is not None and {"outlet", "biased_rate", "n"} <= set(getattr(large, "columns", ())), (
        "Store the large outlets' rows of agg in large (the same columns).")
    want = {o for o, n in zip(agg["outlet"], agg["n"]) if n >= min_group}
    got = list(large["outlet"])
    assert not (set(got) and set(got) <= set(agg["outlet"]) - want), "These are the small outlets: keep the others."
    assert set(got) == want and len(got) == len(want), (
        f"Keep every outlet with at least min_group ({min_group}) articles, and only those, once each.")
    rates = [float(r) for r in large["biased_rate"]]
    assert all(a >= b for a, b in zip(rates, rates[1:])), "Sort by biased_rate, highest first."
    top = f"; the top one is {got[0]}" if got else ""
    return f"Correct: {len(got)} outlets have at least {min_group} articles{top}."
