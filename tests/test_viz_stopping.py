"""Charts of the dual-threshold stop (mabpd_kit.viz.stopping) that lesson 07 reads."""

from __future__ import annotations

import pandas as pd

from mabpd_kit.viz.stopping import changes_chart


def test_changes_chart_keeps_every_kind_of_change_when_it_cuts():
    # 07 on simulated trajectories: 20 label changes and 233 later stops; the reading describes both
    rows = [{"id": f"l{i:03d}", "change": "label changes", "rounds_ref": 1, "rounds_new": 2, "label_ref": "TRUE",
             "label_new": "FALSE"} for i in range(20)]
    rows += [{"id": f"s{i:03d}", "change": "stops later", "rounds_ref": 1, "rounds_new": 2, "label_ref": "TRUE",
              "label_new": "TRUE"} for i in range(233)]
    spec = changes_chart(pd.DataFrame(rows), max_claims=20).to_dict()
    data = spec["datasets"][spec["layer"][0]["data"]["name"]]
    assert {r["change"] for r in data} == {"label changes", "stops later"}
    assert len({r["id"] for r in data}) == 20
    assert "20 label changes, 233 stops later" in str(spec["title"])


def test_changes_chart_shows_everything_when_it_fits():
    rows = [{"id": f"c{i}", "change": k, "rounds_ref": 1, "rounds_new": 2, "label_ref": "TRUE", "label_new": "TRUE"}
            for i, k in enumerate(["stops later"] * 3 + ["unchanged"] * 5)]
    spec = changes_chart(pd.DataFrame(rows)).to_dict()
    data = spec["datasets"][spec["layer"][0]["data"]["name"]]
    assert sorted({r["id"] for r in data}) == ["c0", "c1", "c2"] and str(spec["title"]).startswith("3 of 8 claims change")
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["stops later"]   # the legend: only what is drawn
    none = changes_chart(pd.DataFrame([{**rows[-1], "id": "u"}])).to_dict()
    assert none["layer"][0]["encoding"]["color"]["legend"] is None


def test_stopping_charts_keep_off_the_reserved_hues():
    """A kind of change, a named pair or the Pareto front is never biased (vermillion), neutral (blue), wrong (black)
    or yours (orange); orange is "your pair" only (lesson 07's review: 'stops later' was blue, 'label changes' black)."""
    from mabpd_kit.radar import calibrate, simulate_trajectories
    from mabpd_kit.viz import stopping
    from mabpd_kit.viz.colors import OKABE_ITO

    reserved = {OKABE_ITO[k] for k in ("vermillion", "blue", "black", "orange")}
    assert not reserved & {*stopping.CHANGE_COLORS.values(), *stopping._MARK_COLORS[1:], stopping.FRONT_COLOR}
    assert stopping._MARK_COLORS[0] == OKABE_ITO["orange"]
    cal = calibrate(simulate_trajectories(30, seed=0))
    heat = stopping.grid_heatmap(cal, "mean_rounds", marks={"RADAR run": (-0.6, 0.75)}).to_dict()
    assert heat["layer"][1]["encoding"]["color"]["scale"]["range"] == ["#555555"]   # the ring keeps its tradeoff colour
    assert heat["layer"][0]["encoding"]["color"]["scale"]["scheme"] != "oranges"
