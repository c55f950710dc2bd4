"""Chart builders of notebook 07 return altair specs with the right data and encodings."""

from __future__ import annotations

import pytest

from mabpd_kit.radar import DualThreshold, calibrate, simulate_trajectories
from mabpd_kit.viz.stopping import (
    grid_heatmap,
    opening_margin_chart,
    stop_outcome_chart,
    tradeoff_chart,
    trajectory_chart,
)


@pytest.fixture(scope="module")
def cal():
    return calibrate(simulate_trajectories(60, seed=0))


def _datasets(spec: dict) -> list[list[dict]]:
    return list(spec.get("datasets", {}).values())


def test_heatmap_covers_the_grid_and_marks_pairs(cal):
    spec = grid_heatmap(cal, "mean_rounds", marks={"RADAR run": (-0.6, 0.75)}).to_dict()
    sizes = sorted(len(d) for d in _datasets(spec))
    assert sizes == [1, 41 * 20]
    rect = spec["layer"][0]
    assert rect["mark"]["type"] == "rect" and rect["encoding"]["color"]["field"] == "mean_rounds"
    mark_rows = [d for d in _datasets(spec) if len(d) == 1][0]
    assert mark_rows[0]["tau_s"] == pytest.approx(-0.6) and mark_rows[0]["tau_v"] == pytest.approx(0.75)
    # ticks sit on grid values (not on bin edges such as -1.05), and the title says what the colour is
    grid_s, grid_v = set(cal.grid.tau_s.round(6)), set(cal.grid.tau_v.round(6))
    enc = rect["encoding"]
    assert enc["x"]["axis"]["values"] and set(enc["x"]["axis"]["values"]) <= grid_s
    assert enc["y"]["axis"]["values"] and set(enc["y"]["axis"]["values"]) <= grid_v
    assert spec["title"].startswith("mean rounds over the threshold grid") and "accuracy" not in spec["title"]
    assert enc["color"]["title"] == "mean rounds"
    assert grid_heatmap(cal, "quality").to_dict()["layer"][0]["encoding"]["color"]["title"] == cal.objective.replace("_", " ")


def test_tradeoff_places_the_current_pair_at_its_replayed_figures(cal):
    spec = tradeoff_chart(cal, current=(0.1, 0.8)).to_dict()
    point = [d for d in _datasets(spec) if len(d) == 1][0][0]
    row = cal.at(0.1, 0.8)
    assert point["name"] == "your pair"
    assert point["quality"] == pytest.approx(row["quality"]) and point["mean_rounds"] == pytest.approx(row["mean_rounds"])
    assert any(len(d) == len(cal.pareto) for d in _datasets(spec))


def test_trajectory_and_outcome_charts():
    trajs = simulate_trajectories(12, seed=1)
    spec = trajectory_chart(trajs).to_dict()
    data = _datasets(spec)[0]
    assert len(data) == 12 * 3 and spec["facet"]["column"]["field"] == "gold"
    out = stop_outcome_chart(trajs, DualThreshold(-1.0, 0.0)).to_dict()
    rows = _datasets(out)[0]
    assert sum(r["claims"] for r in rows) == 12 and {r["rounds"] for r in rows} == {1}


def test_opening_margin_chart_averages_round_one_per_run_and_label():
    import pandas as pd

    dec = pd.DataFrame({"run": ["a", "a", "a", "b"], "round_index": [1, 1, 2, 1], "gold": ["TRUE", "TRUE", "TRUE", "FALSE"],
                        "s": [0.2, 0.4, -0.9, -0.5]})
    rows = _datasets(opening_margin_chart(dec).to_dict())[0]
    got = {(r["run"], r["gold"]): (round(r["mean_s"], 9), r["claims"]) for r in rows}
    assert got == {("a", "TRUE"): (0.3, 2), ("b", "FALSE"): (-0.5, 1)}


def test_trajectory_chart_marks_each_rounds_probability_source():
    from mabpd_kit.radar import RoundState, Trajectory

    one_hot = Trajectory(id="oh", gold="TRUE", rounds=(RoundState(
        round=1, label_probs={"TRUE": 1.0, "HALF-TRUE": 0.0, "FALSE": 0.0}, p_stop=1.0, p_continue=0.0,
        source="one_hot"),))
    spec = trajectory_chart(simulate_trajectories(4, seed=1) + [one_hot]).to_dict()
    shapes = [lay["encoding"].get("shape", {}).get("field") for lay in spec["spec"]["layer"]]
    assert "source" in shapes
    rows = _datasets(spec)[0]
    assert {r["source"] for r in rows} == {"simulated", "one_hot"}


def test_your_pair_is_drawn_on_top_of_the_marks(cal):
    spec = tradeoff_chart(cal, current=(-0.6, 0.75), marks={"RADAR run": (-0.6, 0.75)}).to_dict()
    top = spec["layer"][-1]
    rows = spec["datasets"][top["data"]["name"]]
    assert [r["name"] for r in rows] == ["your pair"] and top["mark"]["shape"] == "diamond"
    assert spec["title"] and "your pair -0.60, 0.75" in spec["description"]


def test_changes_frame_names_each_claims_change():
    from mabpd_kit.radar import RoundState, Trajectory
    from mabpd_kit.viz.stopping import changes_chart, changes_frame

    def st(r, s, top):
        return RoundState(round=r, label_probs={"TRUE": top, "HALF-TRUE": (1 - top) / 2, "FALSE": (1 - top) / 2},
                          p_stop=(1 + s) / 2, p_continue=(1 - s) / 2, source="logprobs")

    logged = Trajectory(id="log", gold="TRUE", rounds=(st(1, 0.5, 0.8),))             # stopped at 1: no round 2
    full = Trajectory(id="sim", gold="TRUE", rounds=(st(1, 0.5, 0.8), st(2, 0.9, 0.97), st(3, 1.0, 0.99)))
    ref, strict = DualThreshold(-0.6, 0.75), DualThreshold(-0.6, 0.95)
    f = changes_frame([logged, full], strict, ref).set_index("id")
    assert f.loc["log", "change"] == "would go on, log ends" and f.loc["log", "rounds_new"] == 1
    assert f.loc["sim", "change"] == "stops later" and f.loc["sim", "rounds_new"] == 2
    assert changes_frame([logged, full], ref, ref).change.eq("unchanged").all()
    spec = changes_chart(f.reset_index()).to_dict()
    assert spec["title"].startswith("2 of 2 claims change") and spec["description"]
    none = changes_chart(changes_frame([full], ref, ref)).to_dict()
    assert none["title"].startswith("no claim of 1 changes")
