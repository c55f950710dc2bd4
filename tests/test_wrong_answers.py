"""The exercise checks tell right from wrong (mabpd_kit.exercises), in process, for three student seeds.

Each wrong answer a student types (sign errors, the other half, stale values, a reversed rule, an
unstratified split, the wrong metric, misaligned rows, swapped rows or systems ...) is computed the way a
student would, with the kit's own functions, and the check must fail with an AssertionError and a
message; each right answer written differently (rows in another order, lists instead of Series, another
stratified split, other phrasing) must pass. The same data is generated with and without the benchmark
copies (``MABPD_DATA_DIR``), so both students get the same discriminating checks.

The notebooks' own ``### WRONG`` answers are replayed in a kernel by tests/test_exercises.py.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mabpd_kit as mk
from mabpd_kit import exercises as ex

STUDENTS = ("ada", "grace", "linus")
ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("MABPD_DATA_DIR") or ROOT.parent / "shared" / "data")   # as conftest's data_dir


def _fails(check, *args, **kw) -> str:
    with pytest.raises(AssertionError) as info:
        check(*args, **kw)
    message = str(info.value)
    assert len(message) >= 20, f"the check fails without a helpful message: {message!r}"
    return message


def _digest(frame: pd.DataFrame) -> str:
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=True).values.tobytes()).hexdigest()


def test_student_seeds_differ_and_default_to_zero(monkeypatch):
    monkeypatch.delenv("MABPD_STUDENT", raising=False)
    assert ex.student_seed() == 0
    seeds = {ex.student_seed(s) for s in STUDENTS}
    assert len(seeds) == 3
    monkeypatch.setenv("MABPD_STUDENT", "ada")
    assert ex.student_seed() == ex.student_seed("ada") != 0
    assert _digest(ex.threshold_data(ex.student_seed("ada"))) != _digest(ex.threshold_data(ex.student_seed("grace")))


@pytest.mark.parametrize("with_data", [False, True], ids=["no-data", "data"])
def test_exercise_data_is_the_same_with_and_without_benchmark_data(with_data, monkeypatch, tmp_path):
    if with_data and not DATA_DIR.is_dir():
        pytest.skip("no benchmark copies on this machine")
    monkeypatch.setenv("MABPD_DATA_DIR", str(DATA_DIR if with_data else tmp_path))
    seed = ex.student_seed("ada")
    frame = ex.threshold_data(seed)
    trajs, dev, test = ex.stopping_data(seed)
    sim = ex.verifier_data(seed)
    fingerprint = (_digest(frame), [t.id for t in dev], [d.pred for d in sim["full"].decisions])
    monkeypatch.setenv("MABPD_DATA_DIR", str(tmp_path / "elsewhere"))
    again = ex.threshold_data(seed), ex.stopping_data(seed)[1], ex.verifier_data(seed)
    assert fingerprint == (_digest(again[0]), [t.id for t in again[1]], [d.pred for d in again[2]["full"].decisions])


_CACHE: dict = {}


@pytest.fixture(params=[(s, d) for s in STUDENTS for d in ("no-data", "data")], ids=lambda p: f"{p[0]}-{p[1]}")
def data(request, monkeypatch, tmp_path_factory):
    """The three exercises' data for one student, generated with or without the benchmark copies."""
    student, mode = request.param
    if mode == "data" and not DATA_DIR.is_dir():
        pytest.skip("no benchmark copies on this machine")
    if request.param not in _CACHE:
        monkeypatch.setenv("MABPD_DATA_DIR", str(DATA_DIR if mode == "data" else tmp_path_factory.mktemp("none")))
        seed = ex.student_seed(student)
        _CACHE[request.param] = {"seed": seed, "sim": ex.verifier_data(seed),
                                 "frame": ex.threshold_data(seed)}
    return _CACHE[request.param]


def _ys(ds):
    return [d.gold for d in ds], [d.pred for d in ds]


# -- 05 ex 2: the verifier's trade ---------------------------------------------------------------
def test_05_verifier_trade(data):
    sim = data["sim"]
    full, nv, nd = (sim[k].decisions for k in ("full", "no-verifier", "no-debate"))
    y, pf = _ys(full)
    pn, pd_ = [d.pred for d in nv], [d.pred for d in nd]
    P, R = mk.metrics.precision, mk.metrics.recall
    gain, cost = P(y, pf) - P(y, pn), R(y, pn) - R(y, pf)
    assert "Correct" in ex.check_verifier_trade(sim, gain, cost)
    # right, written differently: numpy arrays, confusion counts
    yy, a, b = np.array(y), np.array(pf), np.array(pn)
    prec = lambda p: ((p == 1) & (yy == 1)).sum() / (p == 1).sum()
    rec = lambda p: ((p == 1) & (yy == 1)).sum() / (yy == 1).sum()
    ex.check_verifier_trade(sim, float(prec(a) - prec(b)), float(rec(b) - rec(a)))
    other = ex.verifier_data(data["seed"] + 1, n_items=100)                   # a stale result: someone else's data
    oy, of = _ys(other["full"].decisions)
    on = [d.pred for d in other["no-verifier"].decisions]
    wrong = {
        "full alone": (P(y, pf), R(y, pf)),
        "stale no-debate comparison": (P(y, pf) - P(y, pd_), R(y, pd_) - R(y, pf)),
        "sign error in the gain": (-gain, cost),
        "sign error in the cost": (gain, -cost),
        "both signs": (-gain, -cost),
        "gain and cost swapped": (cost, gain),
        "precision with (pred, gold)": (P(pf, y) - P(pn, y), cost),
        "recall with (pred, gold)": (gain, R(pn, y) - R(pf, y)),
        "another seed's numbers": (P(oy, of) - P(oy, on), R(oy, on) - R(oy, of)),
        "in percentage points": (100 * gain, 100 * cost),
        "the gain in percentage points": (100 * gain, cost),
    }
    for name, (g, c) in wrong.items():
        _fails(ex.check_verifier_trade, sim, g, c)
    # the same answer x 100 is told it is in points, not sent looking for an argument-order bug (review40c 05)
    with pytest.raises(AssertionError, match="percentage points"):
        ex.check_verifier_trade(sim, 100 * gain, 100 * cost)


# -- 05 ex 3: the one-way rule in words ---------------------------------------------------------
RIGHT_TEXTS = [
    "The verifier can only turn a biased label into neutral, never neutral into biased, so the true positives of full "
    "are a subset of those of no-verifier and its recall cannot be higher.",
    "By the one-way rule a biased decision may become neutral but a neutral one is never turned to biased: full finds no "
    "biased item that no-verifier misses.",
    "It only ever flips biased -> neutral; it cannot make neutral -> biased, so recall can only drop or stay the same.",
]
WRONG_TEXTS = [
    "The verifier can only turn a neutral label into biased (the one-way rule), so recall never drops at all here.",
    "By the one-way rule the verifier never turns a biased label into neutral, so true positives are never lost.",
    "It only ever flips neutral -> biased, never biased -> neutral, so the true positives of full can only grow.",
    "The verifier upgrades neutral decisions to biased ones when it finds a span, which is why recall cannot fall.",
    "The verifier is strict, so recall goes down a little on this sample, as the table shows us.",
    "It depends on the data: on another sample the cost could well be negative, who knows really.",
    "Recall.",
]


def test_05_free_text_rule():
    for text in RIGHT_TEXTS:
        assert "Correct" in ex.check_recall_reason(text), text
    for text in WRONG_TEXTS:
        _fails(ex.check_recall_reason, text)
    _fails(ex.check_recall_reason, None)


# -- 05 ex 4: which step made this label wrong (the trace) --------------------------------------
def test_05_trace_blame(data):
    sim = data["sim"]

    def right(d):
        if d.verifier is not None and d.pre_verifier_label != d.label:
            return "verifier"
        return "debate" if d.route == "debate" else "router"

    def right_too(d):          # the same reading, from other fields of the trace
        if d.verifier is not None and d.verifier.overturned:
            return "verifier"
        return "router" if d.routing is not None and d.routing.label is not None else "debate"

    assert "Correct" in ex.check_blame(sim, right)
    ex.check_blame(sim, right_too)
    wrong = {
        "verifier whenever it ran": lambda d: "verifier" if d.verifier is not None else right(d),
        "verifier forgotten": lambda d: "debate" if d.route == "debate" else "router",
        "always the debate": lambda d: "debate",
        "always the router": lambda d: "router",
        "router and debate swapped": lambda d: right(d) if right(d) == "verifier" else
        {"router": "debate", "debate": "router"}[right(d)],
        "the last step that ran": lambda d: "verifier" if d.verifier is not None else ("debate" if d.debate else "router"),
        "no answer": lambda d: None,
        "the route asked before the verifier": lambda d: "debate" if d.route == "debate" else (
            "verifier" if d.verifier is not None and d.pre_verifier_label != d.label else "router"),
    }
    for name, fn in wrong.items():
        _fails(ex.check_blame, sim, fn)


# -- 07: calibrate on dev, report on test, pay for rounds ----------------------------------------
_STOP: dict = {}


@pytest.fixture(params=[*STUDENTS, ""], ids=lambda s: s or "no-student-id")
def stop(request):
    """Exercise 07's trajectories for one student and for MABPD_STUDENT unset (seed 0, the bundle's default);
    they do not depend on the benchmark copies (test_exercise_data_is_the_same_with_and_without_benchmark_data)."""
    if request.param not in _STOP:
        _STOP[request.param] = ex.stopping_data(ex.student_seed(request.param))
    return _STOP[request.param]


def _best(trajs, cost=None):
    cal = mk.radar.calibrate(trajs, mk.Config(), cost_per_round=cost)
    return cal.best["tau_s"], cal.best["tau_v"]


def test_07_calibrated_pairs(stop):
    trajs, dev, test = stop
    pair, cheap = _best(dev), _best(dev, 0.02)
    assert pair[0] != pair[1] and cheap[0] != cheap[1], "a swapped pair must differ from the right one"
    for cost, right in ((0.0, pair), (0.02, cheap)):
        assert "Correct" in ex.check_calibrated_pair(dev, test, right, cost)
        ex.check_calibrated_pair(dev, test, [np.float64(right[0]), np.float32(right[1])], cost)
    wrong = {
        "made up": ((0.5, 0.1), 0.0), "on test": (_best(test), 0.0), "on all claims": (_best(trajs), 0.0),
        "the logged pair": (ex.RADAR_PAIR, 0.0), "tau_v first": ((pair[1], pair[0]), 0.0), "not a pair": (0.5, 0.0),
        "stale pair of exercise 1": (pair, 0.02), "ten times the cost": (_best(dev, 0.2), 0.02),
        "cost on test": (_best(test, 0.02), 0.02), "stop after the opening": ((-1.0, 0.0), 0.02),
        "tau_v first at cost 0.02": ((cheap[1], cheap[0]), 0.02),
    }
    for name, (p, cost) in wrong.items():
        _fails(ex.check_calibrated_pair, dev, test, p if isinstance(p, tuple) else (p,), cost)


def test_07_report(stop):
    trajs, dev, test = stop
    pair = _best(dev)
    ev = lambda half, p: mk.radar.evaluate_rule(half, mk.radar.DualThreshold(*p))
    right = pd.DataFrame({"RADAR run": ev(test, ex.RADAR_PAIR), "calibrated on dev": ev(test, pair)}).T
    assert "Correct" in ex.check_stopping_report(right, dev, test, pair)
    ex.check_stopping_report(right.iloc[::-1], dev, test, pair)                                 # rows in another order
    ex.check_stopping_report(pd.DataFrame.from_dict({"calibrated on dev": ev(test, pair),
                                                     "RADAR run": ev(test, ex.RADAR_PAIR)}, orient="index"), dev, test, pair)
    wrong = {
        "on dev": {"RADAR run": ev(dev, ex.RADAR_PAIR), "calibrated on dev": ev(dev, pair)},
        "rows swapped": {"RADAR run": ev(test, pair), "calibrated on dev": ev(test, ex.RADAR_PAIR)},
        "on all claims": {"RADAR run": ev(trajs, ex.RADAR_PAIR), "calibrated on dev": ev(trajs, pair)},
        "logged pair twice": {"RADAR run": ev(test, ex.RADAR_PAIR), "calibrated on dev": ev(test, ex.RADAR_PAIR)},
        "calibrated pair on dev": {"RADAR run": ev(test, ex.RADAR_PAIR), "calibrated on dev": ev(dev, pair)},
        "a row missing": {"calibrated on dev": ev(test, pair)},
        "misnamed rows": {"radar": ev(test, ex.RADAR_PAIR), "dev": ev(test, pair)},
    }
    for name, rows in wrong.items():
        _fails(ex.check_stopping_report, pd.DataFrame(rows).T, dev, test, pair)


# -- 08: rates by leaning, a stratified split, the paired comparison -----------------------------
def _rates(frame, fill=True):
    g = frame.assign(type=frame["type"].fillna("(none)")) if fill else frame
    return pd.DataFrame({"fp_rate": g[g["gold"] == 0].groupby("type")["pred"].mean(),
                         "fn_rate": 1 - g[g["gold"] == 1].groupby("type")["pred"].mean()})


def test_08_rates(data):
    pred = data["frame"]
    right = _rates(pred)
    assert "Correct" in ex.check_rates(pred, right)
    ex.check_rates(pred, right.iloc[::-1])                                        # rows in another order
    g = pred.assign(type=pred["type"].fillna("(none)"))
    tab = pd.crosstab(g["type"], [g["gold"], g["pred"]], normalize=False)
    ex.check_rates(pred, pd.DataFrame({"fp_rate": tab[(0, 1)] / (tab[(0, 0)] + tab[(0, 1)]),
                                       "fn_rate": tab[(1, 0)] / (tab[(1, 0)] + tab[(1, 1)])}))
    grouped = g.groupby("type")["pred"].mean()
    wrong = {
        "fp and fn swapped": right.rename(columns={"fp_rate": "fn_rate", "fn_rate": "fp_rate"}),
        "not split by gold": pd.DataFrame({"fp_rate": grouped, "fn_rate": 1 - grouped}),
        "missing leanings dropped": _rates(pred, fill=False),
        "share predicted neutral": right.assign(fp_rate=1 - right["fp_rate"]),
        "fn as a hit rate": right.assign(fn_rate=1 - right["fn_rate"]),
        "counts, not shares": pd.DataFrame({"fp_rate": g[g["gold"] == 0].groupby("type")["pred"].sum(),
                                            "fn_rate": (1 - g[g["gold"] == 1]["pred"]).groupby(g["type"]).sum()}),
        "off by one in the denominator": pd.DataFrame({
            "fp_rate": g[g["gold"] == 0].groupby("type")["pred"].sum() / (g[g["gold"] == 0].groupby("type").size() + 1),
            "fn_rate": right["fn_rate"]}),
        "a stale frame": _rates(ex.threshold_data(data["seed"] + 1)),
    }
    for name, rates in wrong.items():
        _fails(ex.check_rates, pred, rates)
    counted = _fails(ex.check_rates, pred, wrong["counts, not shares"])          # filtered right, then summed (review40f)
    assert "take the mean of pred over the group, not the sum" in counted, counted


def _stratified(pred, seed):
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(pred), dtype=bool)
    for label in (0, 1):
        idx = np.flatnonzero(pred["gold"].to_numpy() == label)
        mask[rng.choice(idx, size=len(idx) // 2, replace=False)] = True
    return pred[mask], pred[~mask]


def _sweep_best(part, column="macro_f1"):
    sweep = mk.evaluate.threshold_sweep(part["gold"], part["score"])
    return float(sweep.loc[sweep[column].idxmax(), "threshold"])


def test_08_split(data):
    pred, seed = data["frame"], mk.Config().metrics.seed
    cal, rep = _stratified(pred, seed)
    assert "Correct" in ex.check_split(pred, cal, rep, _best_thr := _sweep_best(cal))
    ex.check_split(pred, cal, rep, np.float64(_best_thr))
    other_cal, other_rep = _stratified(pred, seed + 5)                        # another stratified split is right too
    ex.check_split(pred, other_cal, other_rep, _sweep_best(other_cal))
    by_class = pd.concat([g.sample(frac=0.5, random_state=1) for _, g in pred.groupby("gold")])
    ex.check_split(pred, by_class, pred.drop(by_class.index), _sweep_best(by_class))
    head, tail = pred.iloc[: len(pred) // 2], pred.iloc[len(pred) // 2:]
    perm = np.random.default_rng(seed).permutation(len(pred))
    rcal, rrep = pred.iloc[perm[: len(pred) // 2]], pred.iloc[perm[len(pred) // 2:]]
    wrong = {
        "first and second half": (head, tail, _sweep_best(head)),
        "unstratified random half": (rcal, rrep, _sweep_best(rcal)),
        "chosen on the report half": (cal, rep, _sweep_best(rep)),
        "the default boundary": (cal, rep, mk.Config().scoring.boundary),
        "cal is all of pred": (pred, rep, _sweep_best(pred)),
        "no threshold": (cal, rep, None),
    }
    for name, (c, r, t) in wrong.items():
        _fails(ex.check_split, pred, c, r, t)
    t_all = _sweep_best(pred)                                      # chosen on all items: named as such (review40d)
    try:
        ex.check_split(pred, cal, rep, t_all)                     # passes only where it is also best on cal
    except AssertionError as err:
        assert "all items" in str(err) and "cal's best is" in str(err), err


def test_08_paired(data):
    pred = data["frame"]
    cfg = mk.Config()
    cal, rep = _stratified(pred, cfg.metrics.seed)
    t, b = _sweep_best(cal), cfg.scoring.boundary
    pb = lambda gold, part, ta, tb, **kw: mk.metrics.paired_bootstrap(
        gold, (part["score"] >= ta).astype(int), (part["score"] >= tb).astype(int), n_resamples=500, seed=0, **kw)
    assert "Correct" in ex.check_paired(rep, t, pb(rep["gold"], rep, t, b), b, n_all=len(pred))
    ex.check_paired(rep, t, mk.metrics.paired_bootstrap(rep["gold"].tolist(), list((rep["score"] >= t).astype(int)),
                                                        list((rep["score"] >= b).astype(int)), n_resamples=200, seed=3), b)
    wrong = {
        "on the calibration half": pb(cal["gold"], cal, t, b),
        "on all of pred": pb(pred["gold"], pred, t, b),
        "A and B swapped": pb(rep["gold"], rep, b, t),
        "accuracy": pb(rep["gold"], rep, t, b, metric=mk.metrics.accuracy),
        "gold of other rows": pb(pred["gold"].iloc[: len(rep)], rep, t, b),
        "B is the adapted threshold again": pb(rep["gold"], rep, t, t),
        "a stale boundary": pb(rep["gold"], rep, t, 0.55 if abs(b - 0.55) > 1e-9 else 0.45),
        "precision": pb(rep["gold"], rep, t, b, metric=mk.metrics.precision),
    }
    for name, result in wrong.items():
        if len(rep) != len(cal) or name != "on the calibration half":
            _fails(ex.check_paired, rep, t, result, b, n_all=len(pred))
        _fails(ex.check_paired, rep, t, result, b, n_all=len(pred), cal=cal)       # as the exercise's check cell calls it
    assert "Correct" in ex.check_paired(rep, t, pb(rep["gold"], rep, t, b), b, n_all=len(pred), cal=cal)
    on_cal = _fails(ex.check_paired, rep, t, wrong["on the calibration half"], b, n_all=len(pred), cal=cal)
    assert "calibration half" in on_cal and "report half" in on_cal, on_cal      # not the generic message (review40f)


# -- 09 ex 3: Cohen's h by hand ------------------------------------------------------------------
@pytest.mark.parametrize("student", STUDENTS)
def test_09_cohens_h(student):
    import math

    rng = np.random.default_rng(ex.student_seed(student))
    n = 60
    df = pd.DataFrame({"outlet": rng.choice(["a.example", "b.example"], n), "pred": rng.integers(0, 2, n),
                       "label": rng.integers(0, 2, n), "failed": rng.random(n) < 0.1})
    df.loc[df["outlet"] == "a.example", "pred"] = (rng.random((df["outlet"] == "a.example").sum()) < 0.7).astype(int)
    pair = ["a.example", "b.example"]
    ok = df[~df["failed"]]
    p1, p2 = (ok.loc[ok["outlet"] == o, "pred"].mean() for o in pair)
    h = 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))
    assert "Correct" in ex.check_cohens_h(df, pair, h)
    ex.check_cohens_h(df, pair, float(2 * (np.arcsin(np.sqrt(p1)) - np.arcsin(np.sqrt(p2)))))   # numpy, factored
    q1, q2 = (df.loc[df["outlet"] == o, "pred"].mean() for o in pair)
    g1, g2 = (ok.loc[ok["outlet"] == o, "label"].mean() for o in pair)
    wrong = {"second minus first": -h, "no factor 2": h / 2, "rate difference": p1 - p2,
             "failed rows kept": 2 * math.asin(math.sqrt(q1)) - 2 * math.asin(math.sqrt(q2)),
             "gold labels, not predictions": 2 * math.asin(math.sqrt(g1)) - 2 * math.asin(math.sqrt(g2)),
             "no square root": 2 * math.asin(p1) - 2 * math.asin(p2),
             "no answer": None}
    for name, value in wrong.items():
        _fails(ex.check_cohens_h, df, pair, value)
    assert "square root" in _fails(ex.check_cohens_h, df, pair, wrong["no square root"])


# -- 06: disagreement pairs on the student's own log; why anonymisation cuts subversion more -----
@pytest.mark.parametrize("with_data", [False, True], ids=["no-data", "data"])
@pytest.mark.parametrize("student", STUDENTS)
def test_06_pairs(student, with_data, monkeypatch, tmp_path):
    if with_data and not DATA_DIR.is_dir():
        pytest.skip("no benchmark copies on this machine")
    monkeypatch.setenv("MABPD_DATA_DIR", str(DATA_DIR if with_data else tmp_path))
    log = ex.pairs_log(ex.student_seed(student))
    r0, r1 = log
    frame = pd.DataFrame([{"question": "q", "agent": a, "round": r, "answer": x, "correct": x == "A"}
                          for r, answers in enumerate(log) for a, x in enumerate(answers)])
    s = mk.identity.identity_summary(frame, ci=False).iloc[0]                  # the kit's own count agrees
    assert "Correct" in ex.check_pairs(log, s["conformity"], s["obstinacy"])
    from fractions import Fraction
    n = int(s["n_pairs"])
    assert "Correct" in ex.check_pairs(log, Fraction(round(s["conformity"] * n), n), np.float64(s["obstinacy"]))
    pairs = [(i, j) for i in range(4) for j in range(4) if i != j and r0[i] != r0[j]]
    wrong = {
        "swapped": (s["obstinacy"], s["conformity"]),
        "all ordered pairs": (sum(r1[i] == r0[j] for i, j in pairs) / 12, sum(r1[i] == r0[i] for i, j in pairs) / 12),
        "peer's current answer": (sum(r1[i] == r1[j] for i, j in pairs) / n, s["obstinacy"]),
        "every ordered pair, agreeing ones too": (
            sum(r1[i] == r0[j] for i in range(4) for j in range(4) if i != j) / 12,
            sum(r1[i] == r0[i] for i in range(4) for j in range(4) if i != j) / 12),
        "a guess": (0.5, 0.5),
    }
    for name, (c, o) in wrong.items():
        _fails(ex.check_pairs, log, c, o)
    _fails(ex.check_pairs, log, None, None)
    assert ex.pairs_log(ex.student_seed(student)) == log                     # the same log with and without data


def test_06_asymmetry():
    seeds, n = [0, 1], 200
    good = mk.identity.BeliefSpec(w_self=(0, 0, 0, 2, 2), w_peer=(2, 2, 2, 0.5, 0.5),
                                  competence=(0.85, 0.85, 0.85, 0.3, 0.3))
    assert "Correct" in ex.check_asymmetry(good, "B", seeds, n)
    assert "Correct" in ex.check_asymmetry(good, " b) the right ones defer", seeds, n)   # a letter, written loosely
    for reason in ("A", "C", "D", "", None, "E"):
        _fails(ex.check_asymmetry, good, reason, seeds, n)
    reversed_ = mk.identity.BeliefSpec(w_self=(2, 2, 2, 0, 0), w_peer=(0.5, 0.5, 0.5, 2, 2),
                                       competence=(0.85, 0.85, 0.85, 0.3, 0.3))
    # subversion cut ~1%: the "gap" is only correction rising (review40d)
    flat = mk.identity.BeliefSpec(w_self=(1, 1, 1, 3, 3), w_peer=(2, 2, 2, 1, 1), competence=(0.9, 0.9, 0.9, 0.3, 0.3))
    for spec in (mk.identity.BeliefSpec(w_self=1.0, w_peer=1.5), reversed_, mk.identity.BeliefSpec(w_self=1.5, w_peer=1.0),
                 flat, None):
        _fails(ex.check_asymmetry, spec, "B", seeds, n)
    assert "raises correction" in ex.check_asymmetry(good, "B", seeds, n)


# -- 09 ex 1: the outlets that reach min_group, highest rate first --------------------------------
def test_09_large_outlets():
    # as the exercise's toy corpus without data: outlets of 3, 3 and 1 articles, min_group 3
    # a-news (first by name) has the lower rate, so a sort by n or by name is caught (review40d)
    agg = pd.DataFrame({"outlet": ["a-news.example", "b-news.example", "c-news.example"], "n": [3, 3, 1],
                        "biased_rate": [1 / 3, 2 / 3, 1.0]})
    agg["small"] = agg["n"] < 3
    right = agg[~agg["small"]].sort_values("biased_rate", ascending=False)
    assert "Correct" in ex.check_large(agg, right, 3)
    assert "Correct" in ex.check_large(agg, agg[agg["n"] >= 3].sort_values("biased_rate", ascending=False).reset_index(), 3)
    wrong = {"the small outlets": agg[agg["small"]],
             "n > min_group": agg[agg["n"] > 3],
             "nothing filtered": agg.sort_values("biased_rate", ascending=False),
             "lowest first": agg[~agg["small"]].sort_values("biased_rate"),
             "not sorted by rate": agg[~agg["small"]].sort_values("outlet"),
             "sorted by n": agg[~agg["small"]].sort_values("n", ascending=False),
             "no answer": None}
    for name, value in wrong.items():
        _fails(ex.check_large, agg, value, 3)


# -- 01: a horse-race category that generalises, a protected phrase --------------------------------
LEX_SENTENCES = [
    "Pundits called the primary a two-man horse race, with the governor as the clear frontrunner.",
    "The senator, long seen as the underdog, now leads in three polls.",
    "Farmers fear a locust attack on the crops this spring.",
    "Protesters attacked the proposal at the town hall.",
    "The senator will attack the plan in her speech.",
]


def _lex2(terms=("horse race", "frontrunner", "underdog", "comeback kid"), context="locust attack",
          taxonomy=("framing", "framing bias"), protect=True, word="attack"):
    from mabpd_kit.lexicon import Category, Protected, Term

    lex = mk.Lexicon.default()
    cat = Category(id="horse_race_framing", name="Horse-race framing", taxonomy=taxonomy[0], meta_category=taxonomy[1])
    new = [Term(term=t, category="horse_race_framing", band=0.7, pos="noun", note="A race, not policies.") for t in terms]
    prot = [Protected(term=word, context=context, note="Insects.")] if protect else []
    return lex, lex.extend(categories=[cat], terms=new, protected=prot)


def test_01_lexicon():
    lex, right = _lex2()
    assert "Correct" in ex.check_lexicon(lex, right, LEX_SENTENCES)
    ex.check_lexicon(*_lex2(terms=("horse race", "frontrunner", "underdog"), context="a locust attack"), LEX_SENTENCES)
    ex.check_lexicon(*_lex2(terms=("frontrunner", "underdog", "dark horse")), LEX_SENTENCES)
    wrong = {
        "no new lexicon": (lex, lex),
        "wrong taxonomy": _lex2(taxonomy=("loaded language", "biased language")),
        "no protection": _lex2(protect=False),
        "the bare word protected": _lex2(context="attack"),
        "the whole sentence protected": _lex2(context="Farmers fear a locust attack on the crops this spring."),
        "a context too broad": _lex2(context="attack on"),
        "the wrong word protected": _lex2(word="locust"),
        "neutral election words as terms": _lex2(terms=("primary", "polls", "senator")),
        "neutral words beside real ones": _lex2(terms=("horse race", "frontrunner", "underdog", "primary")),
        "phrases copied from the sentences": _lex2(terms=("two-man horse race", "clear frontrunner", "long seen as the underdog")),
        "terms not in the sentences": _lex2(terms=("comeback kid", "dark horse", "long shot")),
    }
    for name, (a, b) in wrong.items():
        _fails(ex.check_lexicon, a, b, LEX_SENTENCES)


# -- 02: reported speech; exact, fuzzy and paraphrased quotes ----------------------------------------
@pytest.fixture(scope="module")
def agent_reports():
    cfg = mk.Config()
    pipe = mk.Pipeline(cfg, llm=None)
    agents = mk.mabpd.make_agents(cfg, llm=None, lexicon=pipe.lexicon)

    def reports(text):
        cues = mk.mabpd.analyse_cues(text, pipe.lexicon, cfg)
        return {name: mk.runs.drive(agent.report(text, cues)) for name, agent in agents.items()}
    return reports


def test_02_reported_speech(agent_reports):
    right = ['The senator said the bill was "a radical power grab by extremists".',
             '"It is a radical power grab," the senator said.',
             'Protesters called the bill "a radical power grab".']
    assert "Correct" in ex.check_reported_speech(right[0], agent_reports)
    for sentence in right[1:]:
        ex.check_reported_speech(sentence, agent_reports)
    wrong = ["The radical senator slammed the bill as a power grab.",                     # the writer's voice
             'The senator said the bill was "fair".',                                      # nothing loaded
             "According to the senator, the bill was a radical power grab by extremists.",  # no quotation
             'The radical senator said the bill was "a power grab by extremists".',        # a loaded word outside
             '"Radical extremists" stormed the meeting.',                                  # a scare quote
             '"A radical power grab by extremists."',                                      # no source at all
             "", None]
    for sentence in wrong:
        _fails(ex.check_reported_speech, sentence, agent_reports)


QUOTE_TEXT = "Lawmakers rammed through the so-called reform after a chaotic late-night session."


def test_02_quotes():
    cfg = mk.Config()
    assert "Correct" in ex.check_quotes(QUOTE_TEXT, ["rammed through", "So called reform after", "forced the reform through"], cfg)
    ex.check_quotes(QUOTE_TEXT, ["a chaotic late-night session", "late night session", "a messy session at night"], cfg)
    wrong = [["rammed through", "so-called reform after", "forced the reform through"],      # 2 is exact
             ["rammed through", "so-called reforms after", "forced the reform through"],     # a changed word
             ["rammed thru", "So called reform after", "forced the reform through"],        # 1 is not exact
             ["rammed through", "So called reform after", "so-called reform after a chaotic"],  # 3 is in the text
             ["rammed through", "So called reform after", "banana bread recipe"],           # 3 is no paraphrase
             ["rammed through", "So called reform after"],                                  # two quotes
             ["rammed through", "RAMMED THROUGH", "forced the reform through"],        # 2 is 1 in capitals
             ["rammed through", "So called reform after", ""]]
    for quotes in wrong:
        _fails(ex.check_quotes, QUOTE_TEXT, quotes, cfg)


# -- 04: the burden of proof flips the vote; ground it ----------------------------------------------
EX_TEXT = "The city council approved a new bike lane on Main Street after a public hearing."


@pytest.fixture(scope="module")
def sad():
    from mabpd_kit.mabpd import Argument

    cfg = mk.Config()

    def argument(agent, verdict, confidence, quotes):
        spans = [mk.Span(text=q, agent=agent, category="loaded language", score=0.8) for q in quotes]
        spans = mk.mabpd.EvidenceStore.build(EX_TEXT, spans, ratio=cfg.text.fuzzy_ratio).spans
        return Argument(agent=agent, round=1, verdict=verdict, confidence=confidence, spans=spans)

    async def keep(agent, rnd, own, others):
        return own

    def debate_of(arguments, on=True):
        c = cfg.replace(**{"sad.rounds": 1, "sad.evidence_weighting": on})
        return mk.runs.drive(mk.mabpd.debate(arguments, keep, c))
    return argument, debate_of


def test_04_burden_and_grounding(sad):
    arg, debate_of = sad
    ev, fr = arg("evidence", "neutral", 0.6, ["after a public hearing"]), arg("framing", "neutral", 0.5, [])
    mine = [arg("bias", "biased", 0.9, ["a reckless war on drivers", "the council's pet project"]), ev, fr]
    assert "Correct" in ex.check_burden_flip(mine, debate_of)
    ex.check_burden_flip([arg("bias", "biased", 0.9, []), ev, fr], debate_of)               # no quotes at all
    ex.check_burden_flip([mine[0], arg("evidence", "neutral", 0.6, ["a calm process"]), fr], debate_of)
    wrong = {
        "grounded: biased either way": [arg("bias", "biased", 0.9, ["approved a new bike lane"]), ev, fr],
        "too weak to win unweighted": [arg("bias", "biased", 0.2, ["a reckless war on drivers"]), ev, fr],
        "framing forgotten": [mine[0], ev],
        "all biased, nothing counts": [mine[0], arg("evidence", "biased", 0.6, ["pet project"]),
                                       arg("framing", "biased", 0.5, ["reckless"])],
        "two bias arguments": [mine[0], mine[0], fr],
        "not a list": None,
    }
    for name, args in wrong.items():
        _fails(ex.check_burden_flip, args, debate_of)
    grounded = [arg("bias", "biased", 0.9, ["approved a new bike lane", "bike lane on Main Street"]), ev, fr]
    assert "Correct" in ex.check_grounded(grounded, mine, debate_of)
    ex.check_grounded([arg("bias", "biased", 0.9, ["approved a new bike lane"]), fr, ev], mine, debate_of)
    wrong = {
        "nothing grounded": mine,
        "half grounded": [arg("bias", "biased", 0.9, ["approved a new bike lane", "a reckless war on drivers"]), ev, fr],
        "half grounded, still biased": [arg("bias", "biased", 0.9, ["approved a new bike lane", "a reckless scheme"]),
                                        ev, fr],
        "confidence changed too": [arg("bias", "biased", 1.0, ["approved a new bike lane"]), ev, fr],
        "the neutral side weakened": [arg("bias", "biased", 0.9, ["approved a new bike lane", "a reckless war"]),
                                      arg("evidence", "neutral", 0.6, ["a calm process"]), fr],
        "a verdict changed": [arg("bias", "biased", 0.9, ["approved a new bike lane"]), ev,
                              arg("framing", "biased", 0.5, [])],
        "two arguments": [arg("bias", "biased", 0.9, ["approved a new bike lane"]), ev],
    }
    for name, args in wrong.items():
        _fails(ex.check_grounded, args, mine, debate_of)
