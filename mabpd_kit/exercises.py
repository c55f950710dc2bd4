"""Exercise data and hidden reference checks for the course's exercises (solutions/, exercises/).

Each exercise whose answer matters gets its **own data**, generated from the student's seed
(:func:`student_seed`: ``MABPD_STUDENT`` or a ``student_id``), and chosen so that the plausible wrong
answers give a different result from the right one (a sign error, a stale pair, the other half, a
non-stratified split ...). The ``check_*`` functions compute the expected answer with their own code
(plain numpy loops, not the kit function the exercise asks the student to call) and raise
``AssertionError`` with a message naming the mistake. They return a one-line success message.

The data does not depend on the benchmark copies under ``MABPD_DATA_DIR``: a student with the
bundle alone and one with BABE get checks that discriminate the same way.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

TOL = 1e-9
STEPS = ("router", "debate", "verifier")
RADAR_PAIR = (-0.6, 0.75)   # the logged RADAR run's thresholds (Config().radar.tau_s, tau_v)


def student_seed(student_id: str | int | None = None) -> int:
    """The student's seed: ``student_id`` if given, else ``MABPD_STUDENT``; 0 when neither is set."""
    sid = os.environ.get("MABPD_STUDENT", "") if student_id is None else str(student_id)
    sid = sid.strip()
    if not sid:
        return 0
    return int.from_bytes(hashlib.sha256(sid.encode("utf-8")).digest()[:4], "big")


def _candidates(seed: int, tries: int = 60):
    for k in range(tries):
        yield (int(seed) + 7919 * k) % (2**32)


# -- plain metrics (the reference: no kit metric code) ------------------------------------------
def _counts(y: Sequence[int], p: Sequence[int]) -> tuple[int, int, int, int]:
    tp = fp = fn = tn = 0
    for g, q in zip(y, p):
        g, q = int(g), int(q)
        tp += g == 1 and q == 1
        fp += g == 0 and q == 1
        fn += g == 1 and q == 0
        tn += g == 0 and q == 0
    return tp, fp, fn, tn


def _prec(y, p) -> float:
    tp, fp, _, _ = _counts(y, p)
    return tp / (tp + fp) if tp + fp else 0.0


def _rec(y, p) -> float:
    tp, _, fn, _ = _counts(y, p)
    return tp / (tp + fn) if tp + fn else 0.0


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def _macro_f1(y, p) -> float:
    tp, fp, fn, tn = _counts(y, p)
    present = [c for c, n in ((1, tp + fp + fn), (0, tn + fn + fp)) if n]
    f = {1: _f1(tp, fp, fn), 0: _f1(tn, fn, fp)}
    return sum(f[c] for c in present) / len(present) if present else 0.0


def _acc(y, p) -> float:
    y, p = list(y), list(p)
    return sum(int(a) == int(b) for a, b in zip(y, p)) / len(y) if y else 0.0


def _close(a: Any, b: float) -> bool:
    try:
        return abs(float(a) - b) < TOL
    except (TypeError, ValueError):
        return False


# -- 05: the verifier's trade, and which step made a label wrong --------------------------------
def _ref_step(d: Any) -> str:
    if d.verifier is not None and d.verifier.overturned:
        return "verifier"
    return "debate" if d.debate is not None else "router"


def _trade(sim: Any, other: str) -> tuple[float, float]:
    full, base = sim["full"].decisions, sim[other].decisions
    y = [d.gold for d in full]
    pf, pb = [d.pred for d in full], [d.pred for d in base]
    return _prec(y, pf) - _prec(y, pb), _rec(y, pb) - _rec(y, pf)


def verifier_data(seed: int = 0, n_items: int = 200) -> Any:
    """Simulated decisions (mabpd.simulator: hallucinating agents, quotations) under ``full``, ``no-verifier``
    and ``no-debate``, on which the verifier overturns labels both ways of being right and wrong, so a
    sign error or a comparison with the wrong configuration changes the answer."""
    from mabpd_kit.mabpd.simulator import SimSpec, simulate

    spec = SimSpec(hallucination=0.2, quotation_share=0.4)
    for s in _candidates(seed):
        sim = simulate(spec, n_items=n_items, seed=s, configs=("full", "no-verifier", "no-debate"))
        gain, cost = _trade(sim, "no-verifier")
        other = _trade(sim, "no-debate")
        steps = {_ref_step(d) for d in sim["full"].decisions if d.pred != d.gold}
        if abs(gain) > 0.005 and cost > 0.005 and abs(other[0] - gain) > 0.005 and abs(other[1] - cost) > 0.005 \
                and abs(gain - cost) > 0.005 and steps == set(STEPS):
            sim.seed = s
            return sim
    raise RuntimeError(f"no discriminating verifier data near seed {seed}")  # pragma: no cover


def check_verifier_trade(sim: Any, gain: Any, cost: Any) -> str:
    """Exercise 05-2: precision(full) - precision(no-verifier) and recall(no-verifier) - recall(full)."""
    assert gain is not None and cost is not None, "Compute both verifier_precision_gain and verifier_recall_cost."
    g, c = _trade(sim, "no-verifier")
    og, oc = _trade(sim, "no-debate")
    if _close(gain, og) or _close(cost, oc):
        raise AssertionError("You compared full with another configuration: the verifier's trade is full against no-verifier.")
    assert not _close(gain, -g), "verifier_precision_gain has the wrong sign: it is precision(full) minus precision(no-verifier)."
    assert not _close(cost, -c), "verifier_recall_cost has the wrong sign: it is recall(no-verifier) minus recall(full)."
    assert not (_close(gain, c) and _close(cost, g)), "You swapped the two numbers: the gain is in precision, the cost in recall."
    assert _close(gain, g), ("verifier_precision_gain is not precision(full) - precision(no-verifier) on these decisions: "
                             "precision and recall take (gold, predictions), gold first.")
    assert _close(cost, c), ("verifier_recall_cost is not recall(no-verifier) - recall(full): gold first, and the order is "
                             "the other way round from the precision gain.")
    return f"Correct: the verifier gains {g:+.3f} precision for {c:.3f} recall on these {len(sim['full'].decisions)} decisions."


_DIRECTION = re.compile(r"\b(biased|neutral)\b(?:\W+\w+){0,3}?\W+(?:to|into|->|→|becomes?)\W+(?:\w+\W+){0,2}?(biased|neutral)\b")
_NEGATION = re.compile(r"\b(never|not|cannot|can't|no|nor)\b")


def _directions(text: str) -> set[str]:
    """'b>n' / 'n>b' for each change of label the text asserts the verifier can make (negations flipped)."""
    out: set[str] = set()
    for sentence in re.split(r"(?<=[.;!?])\s+|,\s*(?:but|while|whereas)\s+", text.lower()):
        for m in _DIRECTION.finditer(sentence):
            frm, to = m.group(1), m.group(2)
            if frm == to:
                continue
            said = "b>n" if frm == "biased" else "n>b"
            before = sentence[max(0, m.start() - 40): m.start()] + sentence[m.start(): m.end()]
            negated = bool(_NEGATION.search(before.split(",")[-1]))
            out.add(said if not negated else ("n>b" if said == "b>n" else "b>n"))
    return out


def check_recall_reason(text: Any) -> str:
    """Exercise 05-3: a free-text answer states the one-way rule (biased -> neutral only), not its reverse."""
    text = text if isinstance(text, str) else ""
    assert len(text.split()) >= 10, ("Write one or two sentences: which way can the verifier change a label, and what does "
                                     "that imply for the true positives of full compared with no-verifier?")
    said = _directions(text)
    assert "n>b" not in said, ("Your answer has the verifier turning neutral into biased (or not biased into neutral): "
                               "that is the reverse of the one-way rule in lesson 05's verifier section.")
    assert "b>n" in said, ("Say explicitly which way the verifier may change a label, from which label to which "
                           "(e.g. 'it can only turn X into Y'), and why that bounds recall.")
    return "Correct: the one-way rule (biased to neutral only) is what makes the recall cost never negative."


def check_blame(sim: Any, which_step: Callable[[Any], str]) -> str:
    """Exercise 05-4: for every wrong decision of ``full``, the step whose output became the wrong label."""
    wrong = [d for d in sim["full"].decisions if d.pred != d.gold]
    misses: dict[str, list[str]] = {}
    for d in wrong:
        got, want = which_step(d), _ref_step(d)
        assert got in STEPS, f"which_step must return one of {STEPS}, not {got!r} (decision {d.id})."
        if got != want:
            misses.setdefault(f"{want} blamed as {got}", []).append(d.id)
    if misses:
        worst = max(misses, key=lambda k: len(misses[k]))
        ids = misses[worst]
        raise AssertionError(f"{sum(map(len, misses.values()))} of {len(wrong)} wrong decisions blamed on the wrong step; "
                             f"e.g. {ids[0]} ({len(ids)} like it: {worst.split(' blamed')[0]} decided, you said "
                             f"{worst.split('as ')[1]}). Read its trace: route, debate, pre_verifier_label, verifier.")
    counts = {s: sum(_ref_step(d) == s for d in wrong) for s in STEPS}
    return f"Correct: of {len(wrong)} wrong labels, " + ", ".join(f"{n} made by the {s}" for s, n in counts.items()) + "."


# -- 07: dual-threshold calibration ---------------------------------------------------------------
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
    """(claims, dev, test): simulated Judge trajectories split in halves, chosen so that the dev half's best
    pairs differ from the test half's and all claims', from the logged run's pair, and move when a round
    costs 0.02 (and again at 0.2)."""
    from mabpd_kit.radar.calibrate import simulate_trajectories, split_dev_test

    for s in _candidates(seed, tries=300):
        trajs = simulate_trajectories(n, seed=s, drift=0.05)
        dev, test = split_dev_test(trajs, dev_fraction=0.5, seed=s)
        d0, d2 = _chosen(stopping_grid(dev)), _chosen(stopping_grid(dev, 0.02))
        if (d0 in (_chosen(stopping_grid(test)), _chosen(stopping_grid(trajs)), RADAR_PAIR)
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


# -- 08: error rates by leaning, an adapted threshold, a paired comparison ----------------------
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
    """Scored items (id, gold, score, pred at ``boundary``, type = outlet leaning, some missing) generated
    like the no-debate score on BABE, in file order (grouped by outlet, so the first half is not the
    second's mix). Chosen so that: the default boundary is not the best threshold on a stratified half,
    a plain first/second-half or unstratified random split is not stratified, and accuracy differs from
    macro F1. ``split_seed`` is the seed the exercise splits with (``Config().metrics.seed``)."""
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
    assert rates is not None and {"fp_rate", "fn_rate"} <= set(getattr(rates, "columns", ())), (
        "Build rates with columns fp_rate and fn_rate, indexed by outlet leaning (type).")
    cells: dict[str, dict[int, list[int]]] = {}
    for t, g, p in zip(pred["type"], pred["gold"], pred["pred"]):
        key = "(none)" if t is None or t != t else str(t)
        cells.setdefault(key, {0: [], 1: []})[int(g)].append(int(p))
    assert set(map(str, rates.index)) >= set(cells), (
        "rates needs a row for every leaning, missing ones as '(none)' (fill the type column before grouping).")
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
    assert _macro_f1(rep["gold"], (rep["score"] >= float(threshold)).astype(int)) < _best_f1(rep["gold"], rep["score"]) - TOL, (
        "This threshold is the best on the report half: choose it on the calibration half (cal).")
    raise AssertionError("This threshold does not maximise macro F1 on the calibration half (cal).")


def check_paired(rep: Any, threshold: float, result: Any, boundary: float = 0.5, n_all: int | None = None) -> str:
    """Exercise 08-3: paired bootstrap of macro F1, A = adapted threshold, B = default boundary, on rep."""
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
    assert not (_close(got[0], _acc(gold, a)) and _close(got[1], _acc(gold, b))), (
        "The systems are right but the metric is not: compare macro F1 (the default metric), not accuracy.")
    assert _close(got[0], want[0]) or _close(got[1], want[1]) or str(getattr(result, "metric", "")).lower() in ("", "macro_f1"), (
        f"The metric is {result.metric}: compare macro F1.")
    assert not (_close(got[0], want[0]) ^ _close(got[1], want[1])), (
        "System A" if not _close(got[0], want[0]) else "System B") + (
        " is not what the exercise asks: A = rep's score at your threshold, B = rep's score at the default boundary.")
    raise AssertionError("Neither system scores as expected against rep's gold labels: pass rep['gold'] (the same rows as "
                         "the predictions, in the same order) and the two predictions of the report half.")


# -- 09: Cohen's h by hand ----------------------------------------------------------------------------
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
    raise AssertionError(f"h is not Cohen's h of {pair[0]} vs {pair[1]}: take each outlet's share of articles predicted "
                         "biased (the mean of pred over its articles that did not fail), then the formula.")
