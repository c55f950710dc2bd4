"""Corpus charts are built from the frames (nothing recomputed), in the course colours, and say
which groups are too small; the article viewer highlights the evidence and shows each trace."""

from __future__ import annotations

import pandas as pd

from mabpd_kit.corpus import CorpusConfig, Doc, aggregate, analyze_doc, category_mix, trend
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.viz import color_for
from mabpd_kit.viz.colors import OUTCOME_COLORS
from mabpd_kit.viz.corpus import article_html, category_mix_chart, group_chart, threshold_chart, trend_chart

ST = CorpusConfig(bootstrap_resamples=200, min_group=3)


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"id": [str(k) for k in range(8)], "outlet": list("aaaabbbc"), "pred": [1, 1, 0, 1, 0, 0, 1, 1],
                         "share_biased": [.5, .4, .1, .6, .0, .1, .2, .9], "spans_per_100w": [3, 2, 0, 4, 0, 0, 1, 5],
                         "n_biased": [12, 11, 2, 14, 0, 1, 3, 20], "label": [1, 1, 0, 1, 0, 0, 0, 1],
                         "published_at": ["2017-01-02", "2017-01-05", "2017-02-01", "2017-02-03"] * 2,
                         "categories": [{"biased language": 2, "framing bias": 1}] * 8, "failed": False})


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def test_group_chart_draws_the_intervals_and_fades_small_groups():
    agg = aggregate(_frame(), "outlet", settings=ST)
    spec = group_chart(agg, "outlet").to_dict()
    bars, ci, n = _layers(spec)
    assert bars["mark"]["color"] == OUTCOME_COLORS["biased"]
    assert ci["encoding"]["x"]["field"] == "biased_rate_lo" and ci["encoding"]["x2"]["field"] == "biased_rate_hi"
    assert bars["encoding"]["opacity"]["scale"]["range"] == [0.85, 0.3]
    values = spec["datasets"][next(iter(spec["datasets"]))]
    sizes = {v["outlet"]: v["size"] for v in values}
    assert sizes == {"a": "enough articles", "b": "enough articles", "c": "small group"}
    assert "highest c at 1.00 (n = 1, a small group); 1 small groups faded" in spec["description"]  # alt text


def test_category_mix_chart_uses_the_course_colours():
    spec = category_mix_chart(category_mix(_frame(), "outlet"), "outlet").to_dict()
    scale = spec["encoding"]["color"]["scale"]
    assert scale["domain"] == ["biased language", "framing bias"]
    assert scale["range"] == [color_for("biased language"), color_for("framing bias")]
    assert spec["encoding"]["x"]["stack"] == "normalize"


def test_trend_chart_and_threshold_chart():
    spec = trend_chart(trend(_frame(), "published_at", settings=ST)).to_dict()
    band, line, points = _layers(spec)
    assert band["mark"]["type"] == "area" and band["encoding"]["y2"]["field"] == "biased_rate_hi"
    fill = points["encoding"]["fill"]["scale"]
    assert dict(zip(fill["domain"], fill["range"])).get("few articles", "white") == "white"  # thin months hollow
    sizes = {r["size"] for d in spec["datasets"].values() for r in d if "size" in r}
    assert set(fill["domain"]) == sizes   # the legend lists only the kinds drawn
    spec = threshold_chart(_frame(), "n_biased", 10.5).to_dict()
    hist, rule = _layers(spec)
    assert hist["encoding"]["color"]["scale"]["domain"] == ["biased", "neutral"]
    rule_data = spec["datasets"][rule["data"]["name"]]
    assert rule_data == [{"t": 10.5}] and "10.5" in spec["title"]
    assert "4 are at or above the threshold 10.5" in spec["description"]


def test_article_html_highlights_evidence_and_lists_traces():
    a = analyze_doc(Pipeline(), Doc("x", "The council met on Monday. Critics slammed the disastrous so-called reform."))
    html = article_html(a, threshold=1, stat="n_biased")
    assert "x · BIASED · 1/2 sentences biased" in html
    assert html.count("<details class='trace'>") == 1 and "[x#1] BIASED" in html
    assert ">slammed</span>" in html and "biased language (1)" in html  # one highlight per stretch, agents merged
    failed = analyze_doc(Pipeline(), Doc("y", "", reason="empty text"))
    assert "failed (empty text)" in article_html(failed)
