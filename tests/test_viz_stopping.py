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
