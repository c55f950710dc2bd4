"""Identity bias: charts draw the measures, the simulator panel, the CLI, and the real question sets."""

from __future__ import annotations

import pytest

from mabpd_kit.cli import main
from mabpd_kit.config import Config
from mabpd_kit.identity import (
    BeliefSpec,
    identity_report,
    load_questions,
    parse_number,
    read_logs,
    recovery_sweep,
    simulate,
)

vid = pytest.importorskip("mabpd_kit.viz.identity")


@pytest.fixture(scope="module")
def report():
    return identity_report(simulate(BeliefSpec(w_self=1.0, w_peer=1.5), 150, seed=0),
                           config=Config().replace(**{"identity.bootstrap": 100}))


def _values(chart_dict):
    """The inline data rows of a (layered) chart spec."""
    if "datasets" in chart_dict:
        return [row for rows in chart_dict["datasets"].values() for row in rows]
    return chart_dict["data"]["values"]


# ---------------------------------------------------------------------------------------------
# charts
# ---------------------------------------------------------------------------------------------


def test_behaviour_chart_draws_the_summary_with_cis(report):
    spec = vid.behaviour_chart(report.summary).to_dict()
    rows = {(r["condition"], r["measure"]): r for r in _values(spec)}
    for _, s in report.summary.iterrows():
        for m in ("conformity", "obstinacy", "delta"):
            r = rows[(s["condition"], m)]
            assert r["value"] == pytest.approx(s[m]) and r["lo"] == pytest.approx(s[f"{m}_lo"])
    assert len(spec["layer"]) == 2  # bars + CI rules
    colors = spec["layer"][0]["encoding"]["color"]["scale"]
    assert colors["domain"] == ["vanilla", "anonymised"] and colors["range"] == [vid.CONDITION_COLORS["vanilla"], vid.CONDITION_COLORS["anonymised"]]


def test_behaviour_chart_title_counts_unparsed_answers(report):
    sim = simulate(BeliefSpec(), 20, seed=0)
    assert "unparsed" not in vid.behaviour_chart(report.summary).to_dict()["title"]
    lost = sim.assign(answer=sim["answer"].where(sim.index % 10 != 3, None))  # 1 answer in 10 unreadable
    n = int(lost["answer"].isna().sum())
    for mode in ("neither", "drop"):
        summary = identity_report(lost, ci=False, config=Config().replace(**{"identity.unparsed": mode})).summary
        assert vid.behaviour_chart(summary).to_dict()["title"].endswith(f"({n} unparsed answers, read as {mode})")


def test_trust_and_accuracy_charts(report):
    spec = vid.trust_chart(report.trust).to_dict()
    assert len(spec["layer"]) == 2  # bars + CI rules (the report was made with CIs)
    t = _values(spec)
    got = {(r["condition"], r["event"]): r["rate"] for r in t}
    for _, row in report.trust.iterrows():
        assert got[(row["condition"], "subversion")] == pytest.approx(row["subversion_rate"])
        assert got[(row["condition"], "correction")] == pytest.approx(row["correction_rate"])
    a = _values(vid.accuracy_chart(report.accuracy).to_dict())
    assert len(a) == 2 * len(report.accuracy) and {r["kind"] for r in a} == {"majority vote", "single agent"}
    # equal lines never hide each other: vanilla left of its round, anonymised right; the line styles have a legend
    enc = vid.accuracy_chart(report.accuracy).to_dict()["encoding"]
    assert enc["strokeDash"]["title"] == "line" and enc["strokeDash"]["scale"]["domain"] == ["majority vote", "single agent"]
    xs = {(r["condition"], r["round"]): r["x"] for r in a if r["kind"] == "majority vote"}
    assert all(xs[("vanilla", rnd)] < rnd < xs[("anonymised", rnd)] for (_, rnd) in xs)


def test_ibc_chart_puts_yours_beside_the_paper(report):
    rows = _values(vid.ibc_chart({"mine": report.ibc, "a number": 0.1}).to_dict())
    paper = [r for r in rows if r.get("source") == "paper"]
    mine = [r for r in rows if r.get("source") == "yours"]
    assert len(paper) == 5 and {r["label"] for r in mine} == {"mine", "a number"}
    assert any(r["ibc"] == pytest.approx(0.584) for r in paper)
    assert [r["ibc"] for r in mine if r["label"] == "mine"] == [pytest.approx(report.ibc.estimate)]


def test_recovery_chart_has_one_point_per_seed_and_measure():
    sweep = recovery_sweep(gaps=(0.0, 0.5), seeds=(0, 1), n_questions=80)
    spec = vid.recovery_chart(sweep).to_dict()
    pts = [r for r in _values(spec) if "measure" in r]
    assert len(pts) == 2 * 2 * 2
    scale = spec["layer"][1]["encoding"]["color"]["scale"]
    # the colours are pinned to the measures (an unpinned scale sorts the names and swaps them)
    assert dict(zip(scale["domain"], scale["range"])) == vid.RECOVERY_COLORS
    shapes = spec["layer"][1]["encoding"]["shape"]["scale"]
    assert dict(zip(shapes["domain"], shapes["range"])) == vid.RECOVERY_SHAPES
    assert spec["title"] and "recovered gap (dark grey circles)" in spec["description"]


def test_identity_charts_keep_off_the_reserved_hues():
    """Conditions and recovery measures are greys: never biased (vermillion), neutral (blue), wrong (black),
    yours (orange), nor a system's colour (lesson 06's review: anonymised was no-debate's bluish green)."""
    from mabpd_kit.viz.colors import OKABE_ITO, SYSTEM_COLORS

    taken = {OKABE_ITO[k] for k in ("vermillion", "blue", "black", "orange")} | {
        SYSTEM_COLORS[k] for k in ("full", "no debate", "single agent")}
    assert not taken & {*vid.CONDITION_COLORS.values(), *vid.RECOVERY_COLORS.values()}
    assert vid.YOURS_COLOR == OKABE_ITO["orange"]


def test_cut_phrase_says_negative_cuts_in_words():
    assert vid.cut_phrase("subversion", 0.643) == "cuts subversion by 64%"
    assert vid.cut_phrase("subversion", -1.19) == "raises subversion by 119%"
    assert vid.cut_phrase("correction", 0.001) == "leaves correction unchanged"
    assert "undefined" in vid.cut_phrase("correction", float("nan"))


def test_explore_fits_a_laptop_screen():
    import re

    import vl_convert as vlc

    chart, caption = vid.explore(w_self=3.0, w_peer=0.0, n_questions=80)
    assert "raises subversion by" in caption and "-" not in caption.split("anonymisation")[1]
    assert caption in chart.to_dict()["description"]   # the chart says what the caption says, never a bare cut
    width = float(re.search(r'width="([0-9.]+)"', vlc.vegalite_to_svg(chart.to_dict())).group(1))
    assert width < 900, f"the panel's chart is {width:.0f} px wide; it must fit beside Jupyter's margins on 1,280 px"
    assert chart.to_dict()["description"].startswith("Belief simulator")


def test_anonymisation_verdict_reads_the_intervals():
    import pandas as pd

    def trust(sub, cor):   # (vanilla lo, hi, anonymised lo, hi) per event
        return pd.DataFrame([{"condition": c, "subversion_rate_lo": sub[2 * i], "subversion_rate_hi": sub[2 * i + 1],
                              "correction_rate_lo": cor[2 * i], "correction_rate_hi": cor[2 * i + 1]}
                             for i, c in enumerate(("vanilla", "anonymised"))])
    cuts = {"subversion_cut": 0.04, "correction_cut": 0.03}
    overlap = vid.anonymisation_verdict(trust((0.4, 0.5, 0.38, 0.48), (0.4, 0.5, 0.41, 0.51)), cuts)
    assert overlap.startswith("anonymisation changes neither") and "by " not in overlap
    apart = vid.anonymisation_verdict(trust((0.4, 0.5, 0.1, 0.2), (0.4, 0.5, 0.41, 0.51)), {**cuts, "subversion_cut": 0.64})
    assert apart == "anonymisation cuts subversion by 64% (the conditions' 95% intervals apart); correction within its interval"


def test_explore_panel_redraws_when_a_slider_moves():
    from mabpd_kit.widgets import ParameterPanel

    panel = ParameterPanel(vid.explore, {"w_self": (0.0, 3.0, 0.25), "w_peer": (0.0, 3.0, 0.25),
                                         "n_agents": (2, 9, 1), "rounds": (1, 4, 1)})
    assert panel.error is None and "+0.50" in panel.caption  # defaults already show a planted gap
    first = panel.caption
    panel.set(w_peer=1.0)
    assert panel.error is None and "planted w_peer - w_self = +0.00 -> IBC +0.000" in panel.caption
    assert panel.caption != first and panel.runs == 2


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------


def test_cli_simulate_prints_measures(capsys):
    assert main(["identity", "simulate", "--w-self", "1", "--w-peer", "2", "--questions", "100"]) == 0
    out = capsys.readouterr().out
    assert "belief simulator (offline)" in out and "IBC = +" in out and "recovered w_peer - w_self" in out


def test_cli_run_offline_then_measure(data_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MABPD_OFFLINE", "1")
    monkeypatch.setenv("MABPD_DATA_DIR", str(data_dir))
    log = tmp_path / "run.jsonl"
    assert main(["identity", "run", "--dataset", "mmlu", "--n", "4", "--checkpoint", str(log)]) == 0
    assert "belief simulator plays the agents" in capsys.readouterr().err  # stdout stays for results
    assert len(read_logs(log)) == 2 * 4 * 5 * 3
    assert main(["identity", "measure", str(log), "--no-ci"]) == 0
    assert "IBC" in capsys.readouterr().out
    assert main(["identity", "measure", str(log), "--no-ci", "--unparsed", "drop"]) == 0
    assert "drop" in capsys.readouterr().out  # the reading reaches the report


def test_cli_without_action_explains():
    assert main(["identity"]) == 2


# ---------------------------------------------------------------------------------------------
# real question sets (shared data)
# ---------------------------------------------------------------------------------------------


def test_mmlu_questions(data_dir):
    qs = load_questions("mmlu", 10, data_dir=data_dir, download=False)
    assert len(qs) == 10 and all(q.letters == "ABCD" and q.answer in "ABCD" for q in qs)
    assert "(A) " in qs[0].block() and len({q.id for q in qs}) == 10


def test_number_parser_reads_every_gsm8k_reference_solution(data_dir):
    from mabpd_kit import data

    df = data.load_gsm8k("test", data_dir=data_dir, download=False)
    got = [parse_number(s).answer for s in df["solution"]]
    wrong = [(a, g) for a, g in zip(df["answer"], got) if parse_number(a).answer != g]
    assert not wrong, wrong[:5]
    qs = load_questions("gsm8k", 5, data_dir=data_dir, download=False)
    assert all(q.kind == "numeric" and q.answer_format().startswith("a single number") for q in qs)
