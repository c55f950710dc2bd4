"""Pipeline charts draw the decision trace: their data must equal what the Decision recorded."""

from __future__ import annotations

import math

import pytest

from mabpd_kit.config import Config
from mabpd_kit.mabpd import Pipeline

vp = pytest.importorskip("mabpd_kit.viz.pipeline")

TEXTS = [
    "The radical senator slammed the bill, a so-called reform.",          # strong fast path
    "The committee approved the budget on Tuesday after a two-hour debate.",  # neutral veto
    "The council approved the plan, which critics called reckless.",        # debate
    "Protesters were shot near the square.",                                  # debate
    'The senator said the plan was "a radical power grab".',                 # verifier: quotation
    "Critics say the plan will hurt families.",
]
GOLD = [1, 0, 1, 1, 0, 1]


@pytest.fixture(scope="module")
def batch():
    return Pipeline().analyze_many(TEXTS, gold=GOLD, progress=False)


@pytest.fixture(scope="module")
def debated(batch):
    d = next(d for d in batch if d.debate is not None)
    return d


def rows(chart) -> list[dict]:
    """All inline data rows of a (possibly layered / faceted) chart spec."""
    spec = chart.to_dict()
    out = []
    for values in spec.get("datasets", {}).values():
        out.extend(values)
    return out


def test_route_chart_counts_every_decision_once(batch):
    data = rows(vp.route_chart(batch))
    assert sum(r["items"] for r in data) == len(batch)
    for route in {d.route for d in batch}:
        want = sum(d.route == route for d in batch)
        assert sum(r["items"] for r in data if r["route"] == route) == want
    # stacked by final label: the biased counts are the trace's biased labels
    assert sum(r["items"] for r in data if r["label"] == "biased") == sum(d.label == "biased" for d in batch)


def test_route_chart_by_correct_needs_gold():
    res = Pipeline().analyze_many(TEXTS[:2], progress=False)
    with pytest.raises(ValueError, match="gold"):
        vp.route_chart(res, by="correct")
    with pytest.raises(ValueError, match="by must be"):
        vp.route_chart(res, by="colour")


def test_score_breakdown_stacks_to_the_recorded_score(batch):
    for d in batch:
        data = rows(vp.score_breakdown_chart(d))
        parts = [r for r in data if "contribution" in r]
        assert math.isclose(sum(r["contribution"] for r in parts), d.scoring.score, abs_tol=1e-9)
        # an agent that adds nothing draws no segment and is not in the legend (unless none adds anything)
        adding = {a for a, c in d.scoring.components.items() if d.scoring.weights[a] * c > 0} or set(d.reports)
        assert {r["agent"] for r in parts} == adding
        assert [r["boundary"] for r in data if "boundary" in r and "text" not in r] == [d.scoring.boundary]
        assert [r["text"] for r in data if "text" in r] == [f"boundary {d.scoring.boundary:.2f}"]   # the line is named


def test_score_chart_has_one_row_per_item_and_the_trace_boundary(batch):
    cfg = Config()
    chart = vp.score_chart(batch, cutoffs={"veto": cfg.router.neutral_veto_below})
    spec = chart.to_dict()
    assert "vconcat" in spec and spec["description"].startswith(f"Histograms of the combined score of {len(batch)} items")
    bars = spec["vconcat"][0]["layer"][0]
    assert bars["mark"]["type"] == "bar" and bars["encoding"]["x"]["bin"] == {"extent": [0, 1], "step": 0.025}
    data = rows(chart)
    ticks = [r for r in data if "score" in r]
    assert sorted(r["score"] for r in ticks) == sorted(d.score for d in batch)
    cuts = {r["kind"]: r["at"] for r in data if "kind" in r}
    assert cuts == {"boundary": batch[0].scoring.boundary, "router": cfg.router.neutral_veto_below}


def test_sad_factors_are_the_traced_factors(debated):
    data = rows(vp.sad_factors_chart(debated))
    assert len(data) == 4 * sum(len(r.arguments) for r in debated.debate.rounds)
    for rnd in debated.debate.rounds:
        for w in rnd.arguments:
            got = {r["factor"]: r["value"] for r in data if r["round"] == rnd.index and r["agent"] == w.agent}
            assert got == {"q": w.q, "f": w.f, "g": w.g, "k": w.k}


def test_vote_chart_shares_match_B_and_N(debated):
    data = rows(vp.vote_chart(debated))
    for rnd in debated.debate.rounds:
        b = next(r for r in data if r.get("round") == f"round {rnd.index}" and r["side"].startswith("B"))
        assert math.isclose(b["weight"], rnd.vote.B)
        assert math.isclose(b["share"], rnd.vote.B / (rnd.vote.B + rnd.vote.N))
    assert [r["boundary"] for r in data if "boundary" in r] == [debated.debate.vote.boundary]


def test_debate_charts_refuse_a_decision_without_debate(batch):
    fast = next(d for d in batch if d.debate is None)
    with pytest.raises(ValueError, match="no debate"):
        vp.sad_factors_chart(fast)
    with pytest.raises(ValueError, match="no debate"):
        vp.vote_chart(fast)


def test_agent_scores_chart_and_failed_decision(batch):
    d = batch[0]
    data = rows(vp.agent_scores_chart(d))
    bars = {r["agent"]: r for r in data if "agent" in r}
    assert {a: r["score"] for a, r in bars.items()} == {a: rep.score for a, rep in d.reports.items()}
    assert {a: r["verdict"] for a, r in bars.items()} == {a: rep.verdict for a, rep in d.reports.items()}
    failed = Pipeline().analyze("")
    assert failed.failed
    with pytest.raises(ValueError, match="no agent reports"):
        vp.agent_scores_chart(failed)


def test_ablation_frame_metrics_from_pred_and_gold(batch):
    nd = Pipeline(Config().ablation("no-debate")).analyze_many(TEXTS, gold=GOLD, progress=False)
    df = vp.ablation_frame({"full": batch, "no-debate": nd}).set_index("ablation")
    for name, res in (("full", batch), ("no-debate", nd)):
        tp = sum(d.pred == 1 and d.gold == 1 for d in res)
        fn = sum(d.pred == 0 and d.gold == 1 for d in res)
        assert math.isclose(df.loc[name, "recall"], tp / (tp + fn))
        assert df.loc[name, "debated"] == sum(d.debate is not None for d in res) / len(res)
    assert df.loc["no-debate", "debated"] == 0.0
    long = rows(vp.ablation_chart(df.reset_index(), metrics=("recall",)))
    assert {r["ablation"]: r["value"] for r in long} == df["recall"].to_dict()
    with pytest.raises(ValueError, match="unknown metric"):
        vp.ablation_chart(df.reset_index(), metrics=("auc",))


def test_ablation_frame_needs_gold():
    res = Pipeline().analyze_many(TEXTS[:2], progress=False)
    with pytest.raises(ValueError, match="gold"):
        vp.ablation_frame({"full": res})


def test_frames_and_inputs(batch, debated):
    df = vp.decisions_frame(batch)
    assert list(df["id"]) == [d.id for d in batch]
    assert df["correct"].tolist() == [d.gold == d.pred for d in batch]
    sad = vp.sad_frame(batch)
    assert set(sad["id"]) == {d.id for d in batch if d.debate is not None}
    assert len(vp.decisions_frame(debated)) == 1          # a single Decision is accepted
    with pytest.raises(TypeError, match="Decision"):
        vp.decisions_frame("not a decision")


def test_a_chart_renders_offline(debated):
    import mabpd_kit.viz as viz

    svg = viz.chart_svg(vp.vote_chart(debated))
    assert svg.lstrip().startswith("<svg") and "round 1" in svg


def test_agent_verdicts_chart_shares_per_gold_label(batch):
    data = rows(vp.agent_verdicts_chart(batch))
    for a in ("bias", "evidence", "framing"):
        pos = [d for d in batch if d.gold == 1]
        got = next(r["share"] for r in data if r["agent"] == a and r["gold"] == "gold biased")
        assert math.isclose(got, sum(d.reports[a].verdict == "biased" for d in pos) / len(pos))
    split = sum(len({r.verdict for r in d.reports.values()}) > 1 for d in batch) / len(batch)
    assert f"disagree on {split:.0%}" in vp.agent_verdicts_chart(batch).to_dict()["title"]
    # every bar carries its count and its Wilson interval (n < 100: review40c 02)
    from mabpd_kit.evaluate.audit import wilson

    for r in data:
        assert r["count"] == f"{r['called']} of {r['items']}" and (r["lo"], r["hi"]) == wilson(r["called"], r["items"])
        assert r["lo"] <= r["share"] <= r["hi"]


def test_route_chart_by_verifier_check_and_bare_debate_frame(batch, debated):
    data = rows(vp.route_chart(batch, by="verifier_check"))
    checks = {(d.verifier.check if d.verifier else "not_run") for d in batch}
    assert {r["verifier_check"] for r in data} == checks
    frame = vp.sad_frame(debated.debate)                       # a bare SADResult works too
    assert len(frame) == sum(len(r.arguments) for r in debated.debate.rounds)
    assert frame["k"].tolist() == [w.k for r in debated.debate.rounds for w in r.arguments]


def test_show_displays_spans_and_explanation(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    d = Pipeline().analyze("Radical leftists slammed the so-called reform.")
    vp.show(d)
    assert len(shown) == 1 and "mabpd-decision" in shown[0].data and "router:" in shown[0].data
    assert vp.decision_html(d) == shown[0].data


def test_debate_view_shows_every_argument_with_its_counter_argument(debated, monkeypatch):
    import html

    args = [w.argument for r in debated.debate.rounds for w in r.arguments]
    df = vp.debate_frame(debated)
    assert df["counter_argument"].tolist() == [a.counter_argument for a in args]
    assert all(df["counter_argument"])                     # rule agents always anticipate one
    assert df["k"].tolist() == [w.k for r in debated.debate.rounds for w in r.arguments]
    page = vp.debate_html(debated)
    for a in args:
        assert html.escape(a.counter_argument) in page
    assert f"stopped by {debated.debate.stop_reason}" in page and f"g over {debated.debate.agreement_over}" in page
    for r in debated.debate.rounds:
        assert f"(s={r.s:.2f}, c={r.c:.2f})" in page
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    vp.show_debate(debated)
    assert shown[0].data == page


def test_stop_chart_draws_round_one_statistics_and_the_thresholds(batch):
    from collections import Counter

    cfg = Config()
    chart = vp.stop_chart(batch)
    data = rows(chart)
    pts = [r for r in data if "debates" in r]
    deb = [d for d in batch if d.debate is not None]
    want = Counter((round(d.debate.rounds[0].s, 6), round(d.debate.rounds[0].c, 6), d.debate.stop_reason) for d in deb)
    got = Counter()
    for r in pts:
        got[r["s"], r["c"], r["stop_reason"]] += r["debates"]
    assert got == want
    assert [(r["s"], r["c"]) for r in data if "debates" not in r] == [(cfg.sad.tau_s, cfg.sad.tau_v)]
    # the colour is the state at round 1 (the round the point is placed by), not the final stop reason
    for r in pts:
        assert r["at_round_1"] == ("went on to round 2" if r["mean_rounds"] > 1 else f"ended: {r['stop_reason']}")
    # the legend lists only the states drawn, in one fixed order, each in its fixed colour at every setting
    scale = chart.to_dict()["layer"][0]["encoding"]["color"]["scale"]
    drawn = {r["at_round_1"] for r in pts}
    assert scale["domain"] == [k for k in vp.ROUND1_COLORS if k in drawn]
    assert scale["range"] == [vp.ROUND1_COLORS[k] for k in scale["domain"]]
    # light fills (yellow, light grey) get a dark outline so they show on white
    mark = chart.to_dict()["layer"][0]["mark"]
    assert mark["stroke"] == "#333333" and mark["strokeWidth"] >= 1
    assert chart.to_dict()["layer"][0]["encoding"]["color"]["field"] == "at_round_1"
    assert set(vp.STOP_REASON_COLORS) == set(__import__("typing").get_args(__import__("mabpd_kit.mabpd.sad", fromlist=["StopReason"]).StopReason))
    fast = [d for d in batch if d.debate is None]
    with pytest.raises(ValueError, match="debate"):
        vp.stop_chart(fast)


def test_route_order_covers_every_route_of_the_router():
    import typing

    from mabpd_kit.mabpd.router import Route
    from mabpd_kit.viz.pipeline import ROUTES

    assert set(ROUTES) == set(typing.get_args(Route))


def test_stop_reasons_never_take_a_systems_hue():
    """Lesson 04 draws stop reasons and systems (full, no debate, single agent) on the same page: a stop reason in
    the full pipeline's reddish purple would read as that system (review40c 04)."""
    from mabpd_kit.viz import colors

    taken = set(colors.SYSTEM_COLORS.values()) | {colors.OKABE_ITO[h] for h in ("vermillion", "blue", "orange", "black")}
    assert not set(vp.ROUND1_COLORS.values()) & taken
    assert len(set(vp.ROUND1_COLORS.values())) == len(vp.ROUND1_COLORS)


def test_agent_scores_legend_lists_only_the_verdicts_drawn():
    """Three biased bars get a legend with 'biased' only, not a blue 'neutral' nothing draws (review40e, lesson 02)."""
    d = Pipeline().analyze('The so-called reform, which the minister insisted was "fair", was rammed through by '
                           "radical lawmakers.")
    spec = vp.agent_scores_chart(d).to_dict()
    scale = spec["layer"][0]["encoding"]["color"]["scale"]
    assert scale["domain"] == [v for v in ("biased", "neutral") if v in {r.verdict for r in d.reports.values()}]


def test_stop_chart_spreads_a_crowded_column_without_crossing_tau_s():
    """75 round-1 circles at one s would hide each other (review40e, lesson 04 cell 55): more than seven at one s are
    drawn a little apart along s, within 0.105, and never on the other side of the tau_s rule."""
    import pandas as pd

    pts = pd.DataFrame({"s": [0.2] * 12 + [0.4] * 12 + [-0.2] * 2, "c": [0.5 + i / 100 for i in range(26)]})
    for tau_s in (0.0, 0.4):
        drawn = vp._spread(pts, tau_s)
        for s, x in zip(pts["s"], drawn):
            assert abs(x - s) <= 0.105 + 1e-9 and (x >= tau_s) == (s >= tau_s)
        assert drawn[-2:] == [-0.2, -0.2]                                   # a short column stays where it is
        assert len(set(drawn[:12])) > 1


def test_trace_lists_every_grounding_span_the_viewer_highlights():
    """The span viewer and the trace under it agree: a grounding span (here 'Doctors said', found by the evidence
    agent while it votes biased) is listed on that agent's line, once, and its tooltip names its kind once."""
    import html
    import re

    d = Pipeline().analyze("Doctors said the patient suffered a massive stroke.")
    grounding = [s for s in d.spans() if s.category == "grounding" and s.valid]
    assert grounding and d.reports["evidence"].verdict == "biased"
    trace = vp.trace_text(d)
    line = next(x for x in trace.split("\n") if x.lstrip().startswith("evidence"))
    assert line.endswith("; grounding: 'Doctors said'")
    assert d.explanation().split("\n")[0] == trace.split("\n")[0]          # the rest of the trace is the decision's own
    page = vp.decision_html(d)
    assert html.escape(trace) in page
    tips = [html.unescape(t) for t in re.findall(r'title="([^"]*)"', page) if "grounding" in t]
    assert tips == ["evidence agent · grounding · score 0.00 · valid\ngrounding: named source"]
