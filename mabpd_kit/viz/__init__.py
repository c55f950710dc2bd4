"""Charts and the span viewer, offline by default.

Importing this package switches altair to a **static, offline renderer**: every chart is turned
into an inline SVG by vl-convert (a bundled copy of Vega, no browser JavaScript, no CDN). That
is what makes a notebook's charts survive ``jupyter nbconvert --to html``, GitHub previews and a
laptop with no network. The price is that charts are pictures: tooltips and zoom do not work.

>>> import mabpd_kit.viz as viz          # charts now render as inline SVG
>>> viz.interactive()                    # opt in: live Vega charts (anywidget, still no CDN)
>>> viz.static()                         # back to inline SVG (or viz.static("png"))

The span viewer shows what the agents highlighted, coloured per bias category:

>>> from mabpd_kit.types import Span
>>> html = viz.span_html("A radical plan.", [Span(text="radical", start=2, end=9, category="loaded language", score=0.8)])
>>> viz.show_spans("A radical plan.", [...])   # the same, as a displayable object in a notebook

Everything here is self-contained HTML with inline styles (no <script>, no stylesheet), so the
same markup works in JupyterLab, in an exported HTML report and in an e-mail.

The per-area chart builders live in submodules (``viz.lexicon``, ``viz.pipeline``,
``viz.stopping``, ``viz.identity``, ``viz.evaluation``); they use :func:`category_color` and the
theme registered here so that a category has the same colour in every chart of the course.
"""

from __future__ import annotations

import html as _html
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mabpd_kit.types import Span

if TYPE_CHECKING:  # altair is imported lazily at runtime (``import mabpd_kit`` stays fast)
    import altair as alt
    import pandas as pd
    from IPython.display import HTML

__all__ = [
    "CATEGORY_COLORS",
    "AGENT_COLORS",
    "OUTCOME_COLORS",
    "OTHER_COLOR",
    "THEME_NAME",
    "static",
    "interactive",
    "renderer",
    "color_for",
    "category_color",
    "chart_svg",
    "bar",
    "line",
    "heatmap",
    "span_html",
    "show_spans",
]

# --------------------------------------------------------------------------------------------
# Colours: one colour per bias category, the same in every chart and in the span viewer.
# Keys are normalised names (lower case, "_" and "-" read as spaces), see ``_norm``.
# --------------------------------------------------------------------------------------------

#: The seven taxonomy types of the BiasAgent (SPEC 1.2) and the four meta-categories they roll up
#: into. Meta-categories reuse the colour of their most typical member so the two views agree.
CATEGORY_COLORS: dict[str, str] = {
    # taxonomy types
    "loaded language": "#e45756",
    "emotional language": "#f58518",
    "political labeling": "#b279a2",
    "framing": "#4c78a8",
    "exaggeration": "#d6a700",
    "selection": "#54a24b",
    "omission": "#72b7b2",
    # meta-categories
    "biased language": "#e45756",
    "framing bias": "#4c78a8",
    "unsupported claims": "#d6a700",
    "selective presentation": "#54a24b",
}
#: Source agents (charts that compare agents, and ``span_html(color_by="agent")``).
AGENT_COLORS: dict[str, str] = {
    "bias": "#e45756",
    "evidence": "#54a24b",
    "framing": "#4c78a8",
    "verifier": "#9d755d",
    "lexicon": "#b279a2",
    "judge": "#4c78a8",
    "politician": "#f58518",
    "scientist": "#54a24b",
}
#: Decisions and gold labels: MABPD verdicts and RADAR's three labels, the same in every chart.
OUTCOME_COLORS: dict[str, str] = {
    "biased": "#e45756",
    "neutral": "#4c78a8",
    "TRUE": "#54a24b",
    "HALF-TRUE": "#f58518",
    "FALSE": "#e45756",
}
OTHER_COLOR = "#8c8c8c"
# Used, in a fixed order picked by a stable hash of the name, for categories not listed above.
_EXTRA = ("#ff9da6", "#9ecae9", "#88d27a", "#fdbf6f", "#bab0ac", "#d67195", "#439894", "#8f6d31")

THEME_NAME = "mabpd"

ColorBy = Literal["category", "meta_category", "agent"]


def _norm(name: str | None) -> str:
    return " ".join((name or "").replace("_", " ").replace("-", " ").lower().split())


def color_for(name: str | None, kind: Literal["category", "agent"] = "category") -> str:
    """The course colour of a category (or meta-category) or of an agent, as ``#rrggbb``.

    Unknown names get a stable colour from a spare palette (the same name, the same colour,
    in every run), and ``None``/"other" a neutral grey.
    """
    key = _norm(name)
    if not key or key == "other":
        return OTHER_COLOR
    table = AGENT_COLORS if kind == "agent" else CATEGORY_COLORS
    if key in table:
        return table[key]
    return _EXTRA[zlib.crc32(key.encode()) % len(_EXTRA)]


def _tint(hex_colour: str, strength: float = 0.35) -> str:
    """Mix a colour with white: a light background on which dark text stays readable."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    mix = [round(255 - (255 - c) * strength) for c in (r, g, b)]
    return "#{:02x}{:02x}{:02x}".format(*mix)


# --------------------------------------------------------------------------------------------
# Renderer and theme
# --------------------------------------------------------------------------------------------

_state: dict[str, str] = {"renderer": "svg"}


def _register_theme() -> None:
    import altair as alt

    if THEME_NAME in alt.theme.names():
        alt.theme.enable(THEME_NAME)
        return

    @alt.theme.register(THEME_NAME, enable=True)
    def _theme() -> alt.theme.ThemeConfig:
        return {
            "config": {
                "view": {"continuousWidth": 360, "continuousHeight": 220, "stroke": None},
                "font": "Helvetica, Arial, sans-serif",
                "title": {"fontSize": 14, "anchor": "start"},
                "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e6e6"},
                "legend": {"labelFontSize": 11, "titleFontSize": 12},
                "range": {"category": list(dict.fromkeys(CATEGORY_COLORS.values())) + list(_EXTRA)},
                "background": "white",
            }
        }


def static(format: Literal["svg", "png"] = "svg") -> None:
    """Render charts as static pictures made by vl-convert (the default on import).

    ``"svg"`` keeps text sharp and files small; ``"png"`` is safer for very large scatter plots
    (thousands of marks make a heavy SVG). Neither needs a network or browser JavaScript, and both
    are embedded in HTML exports.
    """
    import altair as alt

    if format not in ("svg", "png"):
        raise ValueError(f"static renderer must be 'svg' or 'png', not {format!r}")
    alt.renderers.enable(format)
    _state["renderer"] = format


def interactive() -> None:
    """Opt in to live, interactive charts (tooltips, zoom, selections) in JupyterLab.

    Uses altair's ``"jupyter"`` renderer with ``offline=True``: an anywidget whose Vega
    JavaScript comes from vl-convert's bundle, not from a CDN. Needs a running kernel; in an
    exported HTML file these charts are empty, so call :func:`static` before exporting.
    """
    import altair as alt

    alt.renderers.enable("jupyter", offline=True)
    _state["renderer"] = "jupyter"


def renderer() -> str:
    """Name of the chart renderer this package last enabled (``svg``, ``png`` or ``jupyter``)."""
    return _state["renderer"]


def chart_svg(chart: alt.TopLevelMixin) -> str:
    """A chart as an SVG string (for HTML reports written outside a notebook)."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart.to_dict())


def category_color(
    field: str = "category",
    *,
    categories: Iterable[str] | None = None,
    kind: Literal["category", "agent"] = "category",
    title: str | None = None,
    legend: bool = True,
) -> alt.Color:
    """An ``alt.Color`` encoding that uses the course colours for ``field``.

    Pass ``categories`` (the values present in the data, in the order you want in the legend);
    without it the known categories (or agents) of the course are used as the domain.
    """
    import altair as alt

    domain = list(categories) if categories is not None else list(
        (AGENT_COLORS if kind == "agent" else CATEGORY_COLORS).keys()
    )
    scale = alt.Scale(domain=domain, range=[color_for(c, kind) for c in domain])
    return alt.Color(
        f"{field}:N", scale=scale, title=title or field.replace("_", " "), legend=alt.Legend() if legend else None
    )


def bar(
    df: pd.DataFrame,
    x: str,
    y: str,
    *,
    color: str | None = None,
    title: str | None = None,
    horizontal: bool = False,
) -> alt.Chart:
    """A bar chart of ``y`` against ``x`` (nominal ``x``, quantitative ``y``).

    ``color`` names a column coloured with the course palette when it holds bias categories or
    agent names. ``horizontal=True`` puts the categories on the y axis (good for long labels).
    """
    import altair as alt

    cat = alt.X(f"{x}:N", sort=None) if not horizontal else alt.Y(f"{x}:N", sort=None)
    val = alt.Y(f"{y}:Q") if not horizontal else alt.X(f"{y}:Q")
    enc: dict[str, Any] = {"x": cat, "y": val} if not horizontal else {"y": cat, "x": val}
    if color:
        enc["color"] = _color_for_column(df, color)
    chart = alt.Chart(df).mark_bar().encode(**enc, tooltip=list(dict.fromkeys([x, y] + ([color] if color else []))))
    return chart.properties(title=title) if title else chart


def line(
    df: pd.DataFrame,
    x: str,
    y: str,
    *,
    color: str | None = None,
    title: str | None = None,
    points: bool = True,
) -> alt.Chart:
    """A line chart of quantitative ``y`` against quantitative ``x``, one line per ``color`` value."""
    import altair as alt

    enc: dict[str, Any] = {"x": alt.X(f"{x}:Q"), "y": alt.Y(f"{y}:Q")}
    if color:
        enc["color"] = _color_for_column(df, color)
    chart = alt.Chart(df).mark_line(point=points).encode(**enc, tooltip=[x, y] + ([color] if color else []))
    return chart.properties(title=title) if title else chart


def heatmap(
    df: pd.DataFrame,
    x: str,
    y: str,
    value: str,
    *,
    title: str | None = None,
    fmt: str = ".2f",
    scheme: str = "blues",
) -> alt.LayerChart:
    """A labelled heat map: one cell per (``x``, ``y``), coloured and annotated by ``value``.

    Used for confusion matrices and threshold grids; the number is printed in every cell so the
    picture reads without a colour legend.
    """
    import altair as alt

    base = alt.Chart(df).encode(x=alt.X(f"{x}:O"), y=alt.Y(f"{y}:O"))
    cells = base.mark_rect().encode(color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme=scheme)), tooltip=[x, y, value])
    labels = base.mark_text(baseline="middle").encode(
        text=alt.Text(f"{value}:Q", format=fmt),
        color=alt.when(alt.datum[value] > 0.5 * (float(df[value].max()) if len(df) else 0.0))
        .then(alt.value("white"))
        .otherwise(alt.value("black")),
    )
    chart = alt.layer(cells, labels)
    return chart.properties(title=title) if title else chart


def _color_for_column(df: pd.DataFrame, column: str) -> alt.Color:
    values = [str(v) for v in dict.fromkeys(df[column].tolist())]
    if values and all(v in OUTCOME_COLORS for v in values):
        import altair as alt

        domain = [v for v in OUTCOME_COLORS if v in values]
        return alt.Color(f"{column}:N", scale=alt.Scale(domain=domain, range=[OUTCOME_COLORS[v] for v in domain]))
    kind: Literal["category", "agent"] = (
        "agent" if values and all(_norm(v) in AGENT_COLORS for v in values) else "category"
    )
    return category_color(column, categories=values, kind=kind)


# --------------------------------------------------------------------------------------------
# Span viewer
# --------------------------------------------------------------------------------------------

_BOX = (
    "font-family:Georgia,'Times New Roman',serif;font-size:15px;line-height:1.9;color:#1a1a1a;"
    "background:#ffffff;border:1px solid #dddddd;border-radius:6px;padding:10px 14px;margin:4px 0;"
)
_SMALL = "font-family:Helvetica,Arial,sans-serif;font-size:12px;line-height:1.5;color:#333333;"


@dataclass(frozen=True)
class _Placed:
    """A span with the offsets it is drawn at (``None`` when it cannot be placed in the text)."""

    span: Span
    start: int | None
    end: int | None
    where: str  # "offsets", "found" (located by its text) or why it could not be placed


def _label(span: Span, color_by: ColorBy) -> str:
    if color_by == "agent":
        return _norm(span.agent) or "other"
    if color_by == "meta_category":
        return _norm(span.meta_category) or "other"
    return _norm(span.taxonomy or span.category) or "other"


def _place(text: str, span: Span, use_orig: bool) -> _Placed:
    start, end = (span.orig_start, span.orig_end) if use_orig else (span.start, span.end)
    if start is not None and end is not None:
        if 0 <= start < end <= len(text):
            return _Placed(span, start, end, "offsets")
        return _Placed(span, None, None, f"offsets {start}..{end} outside the text (length {len(text)})")
    if span.valid and span.text:
        # Hand-made spans often carry no offsets: locate the first exact occurrence.
        at = text.find(span.text)
        if at >= 0:
            return _Placed(span, at, at + len(span.text), "found")
    return _Placed(span, None, None, "no offsets" if span.valid else "not found in the text")


def _tooltip(span: Span) -> str:
    parts = [f"{span.agent} agent", _norm(span.taxonomy or span.category) or "other"]
    if span.meta_category:
        parts[-1] += f" ({_norm(span.meta_category)})"
    parts.append(f"score {span.score:.2f}")
    parts.append("valid" if span.valid else "INVALID: never counts as evidence")
    line = " · ".join(parts)
    extra = "; ".join(x for x in (span.reason, span.note) if x)
    return f"{line}\n{extra}" if extra else line


def span_html(
    text: str,
    spans: Sequence[Span],
    legend: bool = True,
    title: str | None = None,
    *,
    color_by: ColorBy = "category",
    use_orig: bool = False,
) -> str:
    """Render ``text`` with ``spans`` highlighted, as self-contained HTML (inline styles only).

    - Each span is coloured by its bias category (``taxonomy`` if set, else ``category``), or by
      ``meta_category`` or ``agent`` with ``color_by``; a legend lists the colours used.
    - Hovering a highlight shows a tooltip: agent, category, score, validity, reason.
    - Invalid spans (quotes an agent cited but that are not in the text) are struck through:
      in place when they carry offsets, otherwise listed under the text.
    - Offsets are ``start``/``end`` into ``text`` (the cleaned text); ``use_orig=True`` uses
      ``orig_start``/``orig_end`` to highlight the raw input instead. A valid span without offsets
      is located by its first exact occurrence in ``text``.
    - Overlapping spans: the overlap takes the colour of the highest-scoring span and an
      underline in the second one's colour; the tooltip lists all of them.
    """
    placed = [_place(text, s, use_orig) for s in spans]
    inline = [p for p in placed if p.start is not None]
    unplaced = [p for p in placed if p.start is None]

    # Cut the text at every span boundary; each piece knows which spans cover it.
    cuts = sorted({0, len(text), *(p.start for p in inline), *(p.end for p in inline)})  # type: ignore[misc]
    pieces: list[str] = []
    for a, b in zip(cuts, cuts[1:]):
        chunk = _html.escape(text[a:b])
        cover = [p for p in inline if p.start <= a and b <= p.end]  # type: ignore[operator]
        if not cover:
            pieces.append(chunk)
            continue
        valid = sorted((p for p in cover if p.span.valid), key=lambda p: -p.span.score)
        tip = _html.escape("\n".join(_tooltip(p.span) for p in cover), quote=True)
        if valid:
            main = color_for(_label(valid[0].span, color_by), "agent" if color_by == "agent" else "category")
            style = f"background:{_tint(main)};border-bottom:2px solid {main};padding:1px 0;border-radius:2px;"
            if len(valid) > 1:
                second = color_for(_label(valid[1].span, color_by), "agent" if color_by == "agent" else "category")
                style += f"box-shadow:inset 0 -4px 0 {second};"
            if len(valid) < len(cover):
                style += "text-decoration:line-through;"
        else:
            style = "text-decoration:line-through;text-decoration-color:#c0392b;border-bottom:1px dashed #c0392b;"
        pieces.append(f'<span style="{style}color:#1a1a1a;" title="{tip}">{chunk}</span>')

    out = [f'<div class="mabpd-spans" style="{_BOX}">']
    if title:
        out.append(f'<div style="{_SMALL}font-weight:bold;font-size:13px;margin-bottom:4px;">{_html.escape(title)}</div>')
    out.append(f'<div style="white-space:pre-wrap;">{"".join(pieces)}</div>')

    if unplaced:
        out.append(f'<div style="{_SMALL}margin-top:8px;border-top:1px solid #eeeeee;padding-top:4px;">')
        out.append("<b>Cited but not located in the text</b> (never counted as evidence):<ul style='margin:2px 0;'>")
        for p in unplaced:
            tip = _html.escape(_tooltip(p.span), quote=True)
            deco = "text-decoration:line-through;" if not p.span.valid else ""
            out.append(
                f'<li><span style="{deco}" title="{tip}">&ldquo;{_html.escape(p.span.text)}&rdquo;</span> '
                f"<i>({_html.escape(p.span.agent)}: {_html.escape(p.where)})</i></li>"
            )
        out.append("</ul></div>")

    if legend:
        counts: dict[str, int] = {}
        for p in placed:
            if p.span.valid:
                lab = _label(p.span, color_by)
                counts[lab] = counts.get(lab, 0) + 1
        n_invalid = sum(not p.span.valid for p in placed)
        chips = []
        for lab, n in counts.items():
            c = color_for(lab, "agent" if color_by == "agent" else "category")
            chips.append(
                f'<span style="display:inline-block;margin:2px 10px 2px 0;white-space:nowrap;">'
                f'<span style="display:inline-block;width:12px;height:12px;background:{_tint(c)};'
                f'border-bottom:2px solid {c};vertical-align:middle;margin-right:4px;"></span>'
                f"{_html.escape(lab)} ({n})</span>"
            )
        if n_invalid:
            chips.append(
                f'<span style="display:inline-block;margin:2px 10px 2px 0;white-space:nowrap;">'
                f'<span style="text-decoration:line-through;text-decoration-color:#c0392b;">struck through</span>'
                f" = invalid span ({n_invalid})</span>"
            )
        if not chips:
            chips.append("<i>no spans</i>")
        out.append(f'<div style="{_SMALL}margin-top:6px;">{"".join(chips)}</div>')
    out.append("</div>")
    return "".join(out)


def show_spans(
    text: str,
    spans: Sequence[Span],
    legend: bool = True,
    title: str | None = None,
    *,
    color_by: ColorBy = "category",
    use_orig: bool = False,
) -> HTML:
    """:func:`span_html` wrapped for display: the last line of a notebook cell, or ``display(...)``."""
    from IPython.display import HTML

    return HTML(span_html(text, spans, legend=legend, title=title, color_by=color_by, use_orig=use_orig))


def _skip_slow_iri_grammar() -> None:
    """Keep ``import altair`` from compiling an unused grammar (seconds per notebook kernel).

    altair imports jsonschema, which imports the optional ``rfc3987_syntax`` package when present
    (Jupyter installs it); that package builds an Earley parser for RFC 3987 IRIs on import, which
    takes 3-4 s. It only serves jsonschema's "iri" format check, which altair never uses. Marking it
    absent *before* jsonschema is first imported makes jsonschema skip that one format checker;
    if jsonschema is already loaded (or the grammar too), nothing changes.
    """
    import sys

    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]


def _setup() -> None:
    """Import-time side effect: the course theme and the offline SVG renderer."""
    _skip_slow_iri_grammar()
    _register_theme()
    static("svg")


_setup()
