"""Dual-threshold stopping: the rule's edge cases, replay == vectorised grid, calibration, loaders."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mabpd_kit.config import Config
from mabpd_kit.radar import (
    DualThreshold,
    RoundState,
    Trajectory,
    argmax_label,
    calibrate,
    evaluate_rule,
    load_radar_decisions,
    load_radar_run,
    pareto_front,
    replay,
    replay_frame,
    simulate_trajectories,
    split_dev_test,
)

LABELS = ("TRUE", "HALF-TRUE", "FALSE")
CONFIDENT = {"TRUE": 0.8, "HALF-TRUE": 0.15, "FALSE": 0.05}


# -- the rule ----------------------------------------------------------------------------------
def test_s_exactly_at_tau_s_stops_despite_float_error():
    assert 0.2 - 0.8 < -0.6  # the binary-float trap the tolerance exists for
    d = DualThreshold(-0.6, 0.75).decide(0.2, 0.8, CONFIDENT, round=1)
    assert d.stop and d.reason == "both_thresholds_met"
    assert d.s == pytest.approx(-0.6)


def test_c_exactly_at_tau_v_stops_and_just_below_does_not():
    rule = DualThreshold(0.0, 0.75)
    at = {"TRUE": 0.75, "HALF-TRUE": 0.2, "FALSE": 0.05}
    below = {"TRUE": 0.7499, "HALF-TRUE": 0.2001, "FALSE": 0.05}
    assert rule.decide(0.6, 0.4, at, round=1).stop
    d = rule.decide(0.6, 0.4, below, round=1)
    assert not d.stop and d.reason == "confidence_below_tau_v"


def test_margin_just_below_tau_s_continues_with_reason():
    d = DualThreshold(0.0, 0.5).decide(0.4999, 0.5001, CONFIDENT, round=2, source="logprobs")
    assert not d.stop and d.reason == "margin_below_tau_s" and d.source == "logprobs" and d.round == 2
    d = DualThreshold(0.5, 0.95).decide(0.5, 0.5, CONFIDENT, round=1)
    assert d.reason == "both_below"


def test_stop_continue_tie_gives_zero_margin():
    tie = (0.5, 0.5)
    assert DualThreshold(0.0, 0.0).decide(*tie, CONFIDENT, round=1).stop
    assert not DualThreshold(0.05, 0.0).decide(*tie, CONFIDENT, round=1).stop


def test_label_ties_follow_label_order_in_rule_and_replay():
    tie = {"TRUE": 0.1, "HALF-TRUE": 0.45, "FALSE": 0.45}
    assert argmax_label(tie, LABELS) == "HALF-TRUE"
    assert argmax_label(tie, ("FALSE", "HALF-TRUE", "TRUE")) == "FALSE"
    d = DualThreshold(-1.0, 0.0).decide(0.9, 0.1, tie, round=1)
    assert d.label == "HALF-TRUE"
    traj = Trajectory(id="t", gold="HALF-TRUE", rounds=(RoundState(round=1, label_probs=tie, p_stop=0.9, p_continue=0.1),))
    assert evaluate_rule([traj], DualThreshold(-1.0, 0.0))["accuracy"] == 1.0  # vectorised path agrees


def test_last_round_always_stops_and_never_rule_runs_to_the_end():
    d = DualThreshold(1.0, 0.95).decide(None, None, CONFIDENT, round=3, last=True)
    assert d.stop and d.reason == "max_rounds" and math.isnan(d.s)
    trajs = simulate_trajectories(30, seed=3)
    assert all(replay(t, DualThreshold.never()).round == 3 for t in trajs)
    assert evaluate_rule(trajs, DualThreshold.never())["mean_rounds"] == 3.0


def test_replay_of_a_censored_log_says_so():
    r1 = RoundState(round=1, label_probs=CONFIDENT, p_stop=0.9, p_continue=0.1)
    t = Trajectory(id="c", gold="TRUE", rounds=(r1,), max_rounds=3)
    d = replay(t, DualThreshold(0.95, 0.95))
    assert d.round == 1 and d.reason == "end_of_log"
    assert replay_frame([t], DualThreshold(0.95, 0.95)).censored.tolist() == [True]
    assert replay(t, DualThreshold(0.5, 0.5)).reason == "both_thresholds_met"


# -- replay and grid agree ---------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(ts=st.sampled_from(np.round(np.arange(-1, 1.0001, 0.05), 10).tolist()),
       tv=st.sampled_from(np.round(np.arange(0, 0.9501, 0.05), 10).tolist()),
       seed=st.integers(0, 5))
def test_scalar_replay_matches_vectorised_grid(ts, tv, seed):
    trajs = simulate_trajectories(40, seed=seed)
    rule = DualThreshold(ts, tv)
    frame = replay_frame(trajs, rule)
    cal = calibrate(trajs)
    row = cal.at(ts, tv)
    assert row["accuracy"] == pytest.approx(frame.correct.mean())
    assert row["mean_rounds"] == pytest.approx(frame.rounds.mean())


def _reference_macro_f1(gold, pred):
    """Plain-Python macro F1 over labels present in gold or predictions (scikit-learn's default)."""
    f1s = []
    for lab in sorted(set(gold) | set(pred)):
        tp = sum(g == p == lab for g, p in zip(gold, pred))
        n_pred, n_gold = sum(p == lab for p in pred), sum(g == lab for g in gold)
        f1s.append(2 * tp / (n_pred + n_gold))
    return sum(f1s) / len(f1s)


def test_macro_f1_grid_agrees_with_a_reference_implementation():
    trajs = simulate_trajectories(80, seed=7)
    cal = calibrate(trajs, objective="macro_f1")
    for ts, tv in [(-1.0, 0.0), (-0.6, 0.75), (0.3, 0.9), (1.0, 0.95)]:
        f = replay_frame(trajs, DualThreshold(ts, tv))
        assert cal.at(ts, tv)["macro_f1"] == pytest.approx(_reference_macro_f1(list(f.gold), list(f.label)), abs=1e-12)


# -- calibration -----------------------------------------------------------------------------------
@pytest.mark.parametrize("planted", [(0.2, 0.8), (-0.4, 0.6), (0.5, 0.7)])
def test_calibration_recovers_planted_thresholds(planted):
    trajs = simulate_trajectories(600, seed=11, planted=planted, noise=0.2)
    cal = calibrate(trajs, cost_per_round=0.01)
    assert (cal.best["tau_s"], cal.best["tau_v"]) == pytest.approx(planted)
    assert cal.best["quality"] == 1.0


def test_calibration_grid_shape_objective_and_pareto():
    cfg = Config()
    trajs = simulate_trajectories(120, seed=2)
    cal = calibrate(trajs, cfg, cost_per_round=0.05)
    assert len(cal.grid) == 41 * 20
    assert cal.matrix("quality").shape == (20, 41)
    assert np.allclose(cal.grid.objective, cal.grid.quality - 0.05 * cal.grid.mean_rounds)
    assert cal.best["objective"] == pytest.approx(cal.grid.objective.max())
    front = cal.pareto
    assert front.mean_rounds.is_monotonic_increasing and front.quality.is_monotonic_increasing
    for row in cal.grid.itertuples():  # every point is matched or beaten by a front point
        assert ((front.mean_rounds <= row.mean_rounds + 1e-12) & (front.quality >= row.quality - 1e-12)).any()


def test_pareto_front_drops_dominated_points():
    import pandas as pd

    g = pd.DataFrame({"quality": [0.6, 0.6, 0.8, 0.7, 0.9], "mean_rounds": [1.0, 1.5, 2.0, 2.2, 3.0]})
    assert pareto_front(g)[["quality", "mean_rounds"]].values.tolist() == [[0.6, 1.0], [0.8, 2.0], [0.9, 3.0]]


def test_split_is_seeded_disjoint_and_stratified():
    trajs = simulate_trajectories(90, seed=4)
    dev, test = split_dev_test(trajs, seed=1)
    assert {t.id for t in dev}.isdisjoint({t.id for t in test}) and len(dev) + len(test) == 90
    assert [t.id for t in dev] == [t.id for t in split_dev_test(trajs, seed=1)[0]]
    for lab in LABELS:
        n_dev = sum(t.gold == lab for t in dev)
        n_all = sum(t.gold == lab for t in trajs)
        assert abs(n_dev - n_all / 2) <= 1


def test_simulated_halftruths_are_less_confident_at_the_opening():
    trajs = simulate_trajectories(600, seed=0)
    c1 = {lab: np.mean([t.rounds[0].c for t in trajs if t.gold == lab]) for lab in LABELS}
    assert c1["HALF-TRUE"] < c1["TRUE"] - 0.05 and c1["HALF-TRUE"] < c1["FALSE"] - 0.05


def test_calibrate_needs_gold_labels():
    t = simulate_trajectories(5)[0].model_copy(update={"gold": None})
    with pytest.raises(ValueError, match="gold"):
        calibrate([t])


# -- loaders -------------------------------------------------------------------------------------------
def _record(rounds_played: int, stop_after: int | None) -> dict:
    names = ["opening", "rebuttal", "closing"]
    probs = {"TRUE": 0.1, "FALSE": 0.8, "HALF-TRUE": 0.1}
    decisions = [{"round": "opening", "decision": "continue", "choice_probabilities": None}]
    for r in range(1, min(rounds_played + (stop_after is not None), 3)):
        decisions.append({"round": names[r], "decision": "stop" if r == stop_after else "continue",
                          "choice_probabilities": {"STOP": 0.7, "CONTINUE": 0.3}})
    return {"thresholds": {"tau_s": -0.6, "tau_v": 0.75}, "executed_rounds": names[:rounds_played],
            "continuation_decisions": decisions,
            "round_judges": {f"round_{r}": {"verdict_probabilities": probs} for r in range(1, min(rounds_played, 2) + 1)},
            "final_verdict": {"verdict": "FALSE", "verdict_probabilities": probs}}


def test_loader_parses_the_hybrid_format_and_skips_bad_records(tmp_path):
    data = {"1": _record(1, 1), "2": _record(3, None), "3": {"executed_rounds": []}, "4": "junk"}
    p = tmp_path / "run.json"
    p.write_text(json.dumps(data))
    with pytest.warns(UserWarning, match="2 of 4"):
        run = load_radar_run(p, gold={"1": "FALSE", "2": "TRUE"})
    assert [t.id for t in run.trajectories] == ["1", "2"]
    assert [len(t.rounds) for t in run.trajectories] == [1, 3]
    assert {cid for cid, _ in run.skipped} == {"3", "4"}
    assert run.thresholds == (-0.6, 0.75)
    assert run.n_decisions == 1 + 2  # claim 1: after round 1; claim 2: after rounds 1 and 2
    t2 = run.trajectories[1]
    assert t2.rounds[2].p_stop is None and t2.rounds[2].label_probs["FALSE"] == pytest.approx(0.8)


@pytest.mark.shared_data
def test_real_logged_run_replays_to_its_own_decisions(data_dir):
    run = load_radar_run(data_dir=data_dir)
    assert len(run.trajectories) == 23 and not run.skipped and run.n_decisions == 30
    assert run.thresholds == (-0.6, 0.75)
    assert all(t.gold in LABELS for t in run.trajectories)
    frame = replay_frame(run.trajectories, DualThreshold(*run.thresholds)).merge(run.logged, on="id")
    assert (frame.rounds == frame.executed_rounds).all()  # our rule reproduces the run's stops
    assert not frame.censored.any()
    # logged stop margins and confidences are p(STOP)-p(CONTINUE) and max p(label) of the round judge
    raw = json.loads(run.path.read_text())
    for t in run.trajectories:
        for dec in raw[t.id]["continuation_decisions"][1:]:
            r = ["opening", "rebuttal", "closing"].index(dec["round"])  # decision after round r
            assert t.rounds[r - 1].s == pytest.approx(dec["stop_margin"], abs=1e-9)
            assert t.rounds[r - 1].c == pytest.approx(dec["confidence"], abs=1e-6)


@pytest.mark.shared_data
def test_real_decisions_csv(data_dir):
    df = load_radar_decisions(data_dir=data_dir)
    assert len(df) == 1095 and df.run.nunique() == 4 and df.source_file.notna().all()
    assert df.claim_id.nunique() == 150 and df.gold.notna().all()
    assert np.allclose(df.s, df.p_stop - df.p_continue)
    assert set(df.decision) == {"stop", "continue"}
