"""mabpd_kit.viz: offline renderer (set up by the first chart), course colours, chart helpers and the span viewer.

That importing viz changes nothing (renderer, theme, sys.modules) is checked in a fresh interpreter
by tests/test_structure.py."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mabpd_kit.viz as viz
from mabpd_kit.types import Span

CDN = re.compile(r"cdn\.jsdelivr|unpkg\.com|vega@|vega-lite@|vega-embed@", re.I)


def _bundle(chart) -> dict:
    out = chart._repr_mimebundle_()
    return out[0] if isinstance(out, tuple) else out


@pytest.fixture(autouse=True)
def _back_to_svg():
    yield
    viz.static("svg")


def test_first_chart_enables_offline_svg_renderer():
    chart = viz.bar(pd.DataFrame({"category": ["framing", "omission"], "n": [2, 5]}), "category", "n")
    import altair as alt

    assert alt.renderers.active == "svg" and viz.renderer() == "svg"
    bundle = _bundle(chart)
    assert sorted(bundle) == ["image/svg+xml", "text/html", "text/plain"], "the picture, with alt text; no JS"
    svg = bundle["image/svg+xml"]
    assert svg.lstrip().startswith("<svg") and "framing" in svg
    assert not CDN.search(svg) and "<script" not in svg
    # accessible: an <img> with alt text (what nbconvert checks), and an SVG <title> / aria-label
    alt_line = "Bar chart of n against category."
    assert re.fullmatch(r'<img class="mabpd-chart" src="data:image/svg\+xml;base64,[A-Za-z0-9+/=]+" '
                        rf'alt="{re.escape(alt_line)}" style="[^"]*">', bundle["text/html"])
    assert f'aria-label="{alt_line}"' in svg and f"<title>{alt_line}</title>" in svg
    assert "<script" not in bundle["text/html"] and bundle["text/plain"] == f"[chart] {alt_line}"


def test_alt_text_from_description_title_and_encodings():
    df = pd.DataFrame({"category": ["framing", "omission"], "n": [2, 5]})
    chart = viz.bar(df, "category", "n", color="category", title="Hits per category")
    assert viz.alt_text(chart) == "Hits per category. Bar chart of n against category, coloured by category."
    assert viz.alt_text(viz.describe(chart, "Omission has most hits.")) == "Omission has most hits."
    alt = viz.altair()
    layered = (chart + alt.Chart(df).mark_rule().encode(x="n:Q")).properties(title={"text": "Layered"})
    assert viz.alt_text(layered) == "Layered. Bar chart of n against category, coloured by category."
    assert viz.alt_text(alt.hconcat(chart, chart)).startswith("Bar chart of n against category")
    png = viz.static("png") or _bundle(chart)
    assert 'alt="Hits per category.' in png["text/html"] and png["text/html"].startswith('<img class="mabpd-chart" src="data:image/png;base64,')


def test_png_and_interactive_switches():
    import altair as alt

    chart = viz.bar(pd.DataFrame({"category": ["framing"], "n": [1]}), "category", "n")
    viz.static("png")
    png = _bundle(chart)["image/png"]
    assert png[:8] == b"\x89PNG\r\n\x1a\n" if isinstance(png, bytes) else png.startswith("iVBOR")
    viz.interactive()
    assert alt.renderers.active == "jupyter" and alt.renderers.options.get("offline") is True
    with pytest.raises(ValueError, match="svg' or 'png"):
        viz.static("pdf")  # type: ignore[arg-type]


def test_theme_registered_and_enabled():
    alt = viz.altair()

    assert alt.theme.active == viz.THEME_NAME
    spec = viz.bar(pd.DataFrame({"c": ["a"], "n": [1]}), "c", "n").to_dict()
    assert spec["config"]["range"]["category"][:2] == ["#cc79a7", "#009e73"]
    for reserved in ("#d55e00", "#0072b2", "#e69f00"):   # biased, neutral, yours: never a plain series
        assert reserved not in spec["config"]["range"]["category"]
    assert spec["config"]["mark"]["color"] == "#333333", "a mark without a colour is grey, never vega's blue"


def test_colours_are_normalised_and_stable():
    assert viz.color_for("loaded_language") == viz.color_for("Loaded-Language") == viz.CATEGORY_COLORS["loaded language"]
    assert viz.color_for(None) == viz.color_for("other") == viz.OTHER_COLOR
    assert viz.color_for("evidence", "agent") == viz.AGENT_COLORS["evidence"]
    unknown = viz.color_for("brand new category")
    assert unknown == viz.color_for("brand_new_category") and re.fullmatch(r"#[0-9a-f]{6}", unknown)
    assert unknown not in (viz.OTHER_COLOR,)


def test_category_color_encodes_course_palette():
    enc = viz.category_color("taxonomy", categories=["framing", "omission"]).to_dict()
    assert enc["field"] == "taxonomy" and enc["type"] == "nominal"
    assert enc["scale"] == {"domain": ["framing", "omission"], "range": ["#56b4e9", "#c8c8c8"]}
    agents = viz.category_color("agent", kind="agent").to_dict()
    assert agents["scale"]["domain"][:3] == ["bias", "evidence", "framing"]


def test_chart_helpers_build_expected_specs():
    df = pd.DataFrame({"agent": ["bias", "evidence", "bias"], "round": [1, 1, 2], "conf": [0.2, 0.5, 0.9]})
    b = viz.bar(df, "agent", "conf", color="agent", title="T", horizontal=True).to_dict()
    assert b["mark"]["type"] == "bar" and b["title"] == "T"
    assert b["encoding"]["y"]["field"] == "agent" and b["encoding"]["x"]["field"] == "conf"
    assert b["encoding"]["color"]["scale"]["range"] == [viz.AGENT_COLORS["bias"], viz.AGENT_COLORS["evidence"]]
    ln = viz.line(df, "round", "conf", color="agent").to_dict()
    assert ln["mark"]["type"] == "line" and ln["encoding"]["x"]["type"] == "quantitative"
    grid = pd.DataFrame({"gold": [0, 0, 1, 1], "pred": [0, 1, 0, 1], "n": [5, 1, 2, 7]})
    hm = viz.heatmap(grid, "pred", "gold", "n", fmt="d").to_dict()
    assert [layer["mark"]["type"] for layer in hm["layer"]] == ["rect", "text"]
    assert hm["layer"][1]["encoding"]["text"]["format"] == "d"
    svg = viz.chart_svg(viz.heatmap(grid, "pred", "gold", "n", fmt="d"))
    assert svg.startswith("<svg") and ">7<" in svg


TEXT = "The radical senator slammed the bill, a so-called reform."


def _spans() -> list[Span]:
    return [
        Span(text="radical", start=4, end=11, category="labels_left", taxonomy="political labeling",
             meta_category="biased language", agent="bias", score=0.7, reason="lexicon: 'radical'"),
        Span(text="slammed", start=20, end=27, category="loaded language", agent="framing", score=0.8),
        Span(text="so-called", category="framing", agent="evidence", score=0.6),  # no offsets: located
        Span(text="destroy families", category="exaggeration", agent="evidence", score=0.9, valid=False),
    ]


def test_span_html_highlights_with_tooltip_legend_and_strikes_invalid():
    out = viz.span_html(TEXT, _spans(), title="Example")
    assert "<script" not in out and "<style" not in out, "inline styles only, works in exported HTML"
    # each located span is wrapped, coloured by taxonomy (else category)
    assert re.search(r'border-bottom:2px solid #555555[^>]*title="bias agent · political labeling '
                     r'\(biased language\) · score 0.70 · valid\nlexicon: &#x27;radical&#x27;">radical</span>', out)
    assert re.search(r'solid #d55e00[^>]*title="framing agent · loaded language · score 0.80 · valid">slammed<', out)
    assert re.search(r'solid #56b4e9[^>]*>so-called</span>', out)
    # the invalid span is listed, struck through, with its reason in the tooltip
    assert re.search(r'line-through;" title="evidence agent · exaggeration · score 0.90 · INVALID[^"]*">'
                     r"&ldquo;destroy families&rdquo;", out)
    assert "political labeling (1)" in out and "loaded language (1)" in out and "invalid span (1)" in out
    assert "Example" in out


def test_span_html_colour_by_agent_and_meta():
    by_agent = viz.span_html(TEXT, _spans()[:2], color_by="agent")
    assert "solid #d55e00" in by_agent and f"solid {viz.AGENT_COLORS['framing']}" in by_agent
    assert "bias (1)" in by_agent
    by_meta = viz.span_html(TEXT, _spans()[:1], color_by="meta_category")
    assert "biased language (1)" in by_meta


def test_span_html_overlap_invalid_in_place_and_bad_offsets():
    spans = [
        Span(text="radical senator", start=4, end=19, category="framing", score=0.4),
        Span(text="senator", start=12, end=19, category="loaded language", score=0.9, agent="evidence"),
        Span(text="bill", start=32, end=36, category="omission", valid=False),
        Span(text="beyond", start=500, end=510, category="framing"),
    ]
    out = viz.span_html(TEXT, spans)
    # the overlap takes the higher-scoring colour, with the other as an inset underline, and both tooltips
    overlap = re.search(r'<span style="([^"]*)"[^>]*title="([^"]*)">senator</span>', out)
    assert overlap and "solid #d55e00" in overlap.group(1) and "inset 0 -4px 0 #56b4e9" in overlap.group(1)
    assert "framing" in overlap.group(2) and "loaded language" in overlap.group(2)
    assert re.search(r'line-through[^>]*>bill</span>', out)
    assert "offsets 500..510 outside the text" in out


def test_span_html_escapes_and_uses_orig_offsets():
    raw = "<b>Tom</b> &amp; the <i>so-called</i> plan"
    s = Span(text="so-called", start=0, end=1, orig_start=24, orig_end=33, category="framing")
    out = viz.span_html(raw, [s], use_orig=True, legend=False)
    assert "&lt;b&gt;Tom&lt;/b&gt; &amp;amp; the &lt;i&gt;" in out
    assert re.search(r">so-called</span>&lt;/i&gt; plan", out)
    assert "framing (1)" not in out  # legend off
    assert "no spans" in viz.span_html("plain", [])


def test_show_spans_is_displayable_html():
    obj = viz.show_spans(TEXT, _spans(), title="T")
    assert obj._repr_html_() == viz.span_html(TEXT, _spans(), title="T")


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60),
    cuts=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60), st.booleans()), max_size=6),
)
def test_span_html_never_loses_or_reorders_text(text, cuts):
    spans = [
        Span(text=text[min(a, b):max(a, b)], start=min(a, b), end=max(a, b), category="framing", valid=v)
        for a, b, v in cuts
    ]
    out = viz.span_html(text, spans, legend=False)
    body = re.search(r'<div style="white-space:pre-wrap;">(.*?)</div>', out, re.S)
    assert body is not None
    assert html.unescape(re.sub(r"<[^>]+>", "", body.group(1))) == text


def test_outcome_columns_use_the_course_verdict_colours():
    """'biased' is red and 'neutral' blue wherever a chart colours by outcome (not a hashed spare colour)."""
    import pandas as pd

    from mabpd_kit import viz

    df = pd.DataFrame({"route": ["debate", "debate", "neutral_veto"], "items": [3, 2, 5], "outcome": ["biased", "neutral", "neutral"]})
    scale = viz.bar(df, "route", "items", color="outcome").to_dict()["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"])) == {"biased": "#d55e00", "neutral": "#0072b2"}


def test_frozen_models_display_as_a_field_table():
    import mabpd_kit as mk

    cfg = mk.Config()
    html = cfg.sad._repr_html_()
    assert html.startswith("<table>") and "<code>neutral_floor</code>" in html and "<th>meaning</th>" in html
    assert "f_a = max(q_a, neutral_floor)" in html  # the field's description
    assert "RouterConfig(" in repr(cfg.router) and "<b>RouterConfig</b>" in cfg.router._repr_html_()


def test_difference_chart_shows_small_differences_from_full_labelled():
    import pandas as pd

    from mabpd_kit.viz.simulator import difference_chart

    m = pd.DataFrame({"macro_f1": [0.80, 0.79, 0.83], "precision": [0.90, 0.886, 0.85], "recall": [0.70, 0.707, 0.74]},
                     index=["full", "no-verifier", "no weighting"])
    spec = difference_chart(m).to_dict()
    data = spec["datasets"][spec["layer"][0]["data"]["name"]]
    got = {(r["config"], r["measure"]): r["points"] for r in data}
    assert got[("no-verifier", "precision")] == -1.4 and got[("no weighting", "recall")] == 4.0
    assert {c for c, _ in got} == {"no-verifier", "no weighting"}          # the baseline is the zero line
    assert spec["layer"][1]["mark"]["type"] == "text"                       # every bar carries its number


def test_identity_bars_put_the_conditions_in_one_order():
    import pandas as pd

    from mabpd_kit.viz.identity import trust_chart

    trust = pd.DataFrame({"condition": ["anonymised", "vanilla"], "subversion_rate": [0.4, 0.5], "correction_rate": [0.45, 0.5]})
    spec = trust_chart(trust).to_dict()
    layer = spec["layer"][0] if "layer" in spec else spec
    assert layer["encoding"]["xOffset"]["sort"] == ["vanilla", "anonymised"]
    assert layer["encoding"]["color"]["scale"]["domain"] == ["vanilla", "anonymised"]
