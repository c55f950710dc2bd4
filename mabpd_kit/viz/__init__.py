"""Charts and the span viewer, offline by default.

Charts render as a **static, offline picture**: every chart is turned into an inline SVG by
vl-convert (a bundled copy of Vega, no browser JavaScript, no CDN). That is what makes a
notebook's charts survive ``jupyter nbconvert --to html``, GitHub previews and a laptop with no
network. The price is that charts are pictures: tooltips and zoom do not work.

Importing this package changes nothing: the course theme and the SVG renderer are switched on
by the first chart a ``viz`` function builds (or by :func:`altair`, :func:`static`,
:func:`interactive`), once per process.

>>> import mabpd_kit as mk
>>> mk.viz.bar(df, "category", "n")       # the first chart: theme + inline SVG from now on
>>> alt = mk.viz.altair()                 # altair itself, set up the same way, for your own charts
>>> mk.viz.interactive()                  # opt in: live Vega charts (anywidget, still no CDN)
>>> mk.viz.static()                       # back to inline SVG (or mk.viz.static("png"))

**Accessible by default**: colours are Okabe-Ito (colour-blind safe, :mod:`~mabpd_kit.viz.colors`)
and every chart carries alternative text. The offline renderer shows a chart as an ``<img>`` whose
``alt`` is the chart's Vega-Lite ``description`` (set it with :func:`describe`), else a sentence made
from its title, mark and axes (:func:`alt_text`); the SVG also gets a ``<title>``. So screen readers
read the charts of every notebook, and ``nbconvert`` no longer warns "Alternative text is missing".

The span viewer (:mod:`~mabpd_kit.viz.spans`) shows what the agents highlighted, coloured per
bias category; it is plain HTML and never loads altair:

>>> from mabpd_kit.types import Span
>>> html = mk.viz.span_html("A radical plan.", [Span(text="radical", start=2, end=9, category="loaded language", score=0.8)])
>>> mk.viz.show_spans("A radical plan.", [...])   # the same, as a displayable object in a notebook

The per-area chart builders live in submodules (``viz.lexicon``, ``viz.pipeline``,
``viz.stopping``, ``viz.identity``, ``viz.evaluation``); they get altair from :func:`altair` and
use :func:`category_color` and the colours of :mod:`~mabpd_kit.viz.colors`, so that a category
has the same colour in every chart of the course.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from mabpd_kit.viz.colors import (
    AGENT_COLORS,
    CATEGORY_COLORS,
    EXTRA_COLORS,
    OKABE_ITO,
    OTHER_COLOR,
    OUTCOME_COLORS,
    SERIES_COLORS,
    color_for,
    norm_name,
)
from mabpd_kit.viz.spans import show_spans, span_html

if TYPE_CHECKING:  # altair is imported on first use (``import mabpd_kit`` stays fast)
    import altair as alt
    import pandas as pd

__all__ = [
    "CATEGORY_COLORS",
    "AGENT_COLORS",
    "OUTCOME_COLORS",
    "OTHER_COLOR",
    "OKABE_ITO",
    "SERIES_COLORS",
    "THEME_NAME",
    "alt_text",
    "describe",
    "drop_zero_usage",
    "figure_html",
    "altair",
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

THEME_NAME = "mabpd"

# the per-area chart modules, imported on first access: ``mk.viz.lexicon.coverage_chart(lex)``
_SUBMODULES = ("colors", "spans", "lexicon", "pipeline", "scores", "stopping", "identity", "evaluation", "simulator", "corpus",
               "llm_labels")


_FROM_PIPELINE = ("show", "decision_html")  # a Decision's span viewer and trace: mk.viz.show(d)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES or name in _FROM_PIPELINE:
        import importlib

        module = importlib.import_module(f"{__name__}.{name if name in _SUBMODULES else 'pipeline'}")
        return module if name in _SUBMODULES else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(_SUBMODULES) | set(_FROM_PIPELINE))

# --------------------------------------------------------------------------------------------
# Renderer and theme: set up on first use, never on import
# --------------------------------------------------------------------------------------------

# the renderer this package last enabled; None until the first chart (or static()/interactive())
_state: dict[str, str | None] = {"renderer": None}


def _skip_slow_iri_grammar() -> None:
    """Keep ``import altair`` from compiling an unused grammar (seconds per notebook kernel).

    altair imports jsonschema, which imports the optional ``rfc3987_syntax`` package when present
    (Jupyter installs it); that package builds an Earley parser for RFC 3987 IRIs on import, which
    takes 2-3 s. It only serves jsonschema's "iri" format check, which altair never uses. Marking it
    absent *before* jsonschema is first imported makes jsonschema skip that one format checker;
    if jsonschema is already loaded (or the grammar too), nothing changes. Called by the first
    chart, never on import.
    """
    import sys

    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]


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
                # charts without their own scale: the Okabe-Ito series order (blue, orange, green, ...), so the
                # first two series are never vermillion against orange, and vermillion (biased) is not a series colour
                "range": {"category": list(dict.fromkeys(SERIES_COLORS + tuple(EXTRA_COLORS)))},
                "background": "white",
            }
        }


def _setup(renderer: str | None = None) -> ModuleType:
    """The course theme and, unless one was chosen already, the offline SVG renderer (idempotent)."""
    if _state["renderer"] is None:
        _skip_slow_iri_grammar()
        _register_theme()
        if renderer is None:
            _enable("svg")
    import altair as alt

    return alt


def _enable(name: str) -> None:
    import altair as alt

    if name == "jupyter":
        alt.renderers.enable("jupyter", offline=True)
    else:
        # altair's own static renderer, wrapped (once) under its own name to add alt text
        if name not in _base_renderers:
            alt.renderers.enable(name)
            _base_renderers[name] = alt.renderers.get()
            alt.renderers.register(name, _with_alt_text(_base_renderers[name], name))
        alt.renderers.enable(name)
    _state["renderer"] = name


# altair's static renderers before this package wrapped them (so wrapping twice is impossible)
_base_renderers: dict[str, Any] = {}


def _with_alt_text(base: Any, fmt: str) -> Any:
    def render(spec: dict, **metadata: Any) -> Any:
        out = base(spec, **metadata)
        bundle, meta = (out if isinstance(out, tuple) else (out, {}))
        bundle = dict(bundle)
        text = alt_text(spec)
        if "image/svg+xml" in bundle:
            bundle["image/svg+xml"] = _svg_with_title(bundle["image/svg+xml"], text)
            bundle["text/html"] = figure_html(bundle["image/svg+xml"], text)
        elif "image/png" in bundle:
            import base64

            png = bundle["image/png"]
            b64 = png if isinstance(png, str) else base64.b64encode(png).decode()
            bundle["text/html"] = figure_html(b64, text, mime="image/png")
        bundle["text/plain"] = f"[chart] {text}"
        return (bundle, meta) if isinstance(out, tuple) else bundle

    return render


# --------------------------------------------------------------------------------------------
# Alternative text: every chart says what it shows
# --------------------------------------------------------------------------------------------


def _title_text(title: Any) -> str:
    if isinstance(title, dict):
        title = title.get("text", "")
    if isinstance(title, (list, tuple)):
        title = " ".join(str(t) for t in title)
    return str(title or "").strip()


def _channel(enc: dict, name: str) -> str:
    ch = enc.get(name)
    if not isinstance(ch, dict):
        return ""
    title = ch.get("title")
    if isinstance(title, str) and title:
        return title
    field = ch.get("field") or (ch.get("aggregate") if isinstance(ch.get("aggregate"), str) else "")
    return str(field).replace("_", " ") if field else ""


def _describe_view(spec: dict) -> str:
    for key in ("layer", "hconcat", "vconcat", "concat"):
        if key in spec:
            parts = [p for p in (_describe_view(s) for s in spec[key]) if p]
            parts = list(dict.fromkeys(parts))
            return "; ".join(parts[:3])
    if "spec" in spec:  # facet / repeat
        return _describe_view(spec["spec"])
    mark = spec.get("mark", "")
    mark = mark.get("type", "") if isinstance(mark, dict) else mark
    enc = spec.get("encoding", {}) or {}
    x, y, colour = _channel(enc, "x"), _channel(enc, "y"), _channel(enc, "color")
    if mark in ("rule", "text") and not (x and y):
        return ""
    kind = {"bar": "bar chart", "line": "line chart", "point": "scatter plot", "circle": "scatter plot",
            "rect": "heat map", "area": "area chart", "tick": "strip plot", "boxplot": "box plot"}.get(mark, f"{mark} chart")
    what = f"{kind} of {y} against {x}" if x and y else f"{kind} of {x or y}" if (x or y) else kind
    return what + (f", coloured by {colour}" if colour else "")


def alt_text(spec: dict | Any) -> str:
    """The alternative text of a chart (a Vega-Lite dict or an altair chart).

    Its ``description`` when set (:func:`describe`), else "<title>. <kind> of <y> against <x>,
    coloured by <field>" built from the spec, so that even a chart nobody described is not silent.
    """
    if not isinstance(spec, dict):
        spec = spec.to_dict()
    desc = spec.get("description")
    if isinstance(desc, str) and desc.strip():
        return desc.strip()
    title = _title_text(spec.get("title"))
    body = _describe_view(spec)
    body = body[:1].upper() + body[1:] if body else "Chart"
    return f"{title}. {body}." if title else f"{body}."


def describe(chart: Any, text: str) -> Any:
    """The chart with ``text`` as its alternative text (Vega-Lite ``description``): say what it shows."""
    return chart.properties(description=text)


def _svg_with_title(svg: str, text: str) -> str:
    """Add ``role="img"``, an ``aria-label`` and a ``<title>`` to an SVG (screen readers, hover)."""
    import html as _html

    if "<title>" in svg[:2000] or not svg.lstrip().startswith("<svg"):
        return svg
    end = svg.index(">") + 1
    head = svg[: end - 1].rstrip("/")
    esc = _html.escape(text, quote=True)
    return f'{head} role="img" aria-label="{esc}"><title>{_html.escape(text)}</title>{svg[end:]}'


def figure_html(image: str, text: str, mime: str = "image/svg+xml") -> str:
    """A chart picture as ``<img alt=...>`` in plain HTML (``image``: SVG text, or base64 for PNG)."""
    import base64
    import html as _html

    data = base64.b64encode(image.encode("utf-8")).decode() if mime == "image/svg+xml" else image
    return (f'<img class="mabpd-chart" src="data:{mime};base64,{data}" alt="{_html.escape(text, quote=True)}" '
            'style="max-width:100%;height:auto">')


def altair() -> ModuleType:
    """The ``altair`` module, with the course theme and the offline renderer switched on.

    The first call (in practice: the first chart any ``viz`` function builds) enables the theme
    and the inline-SVG renderer; later calls just return the module. Use it for charts of your
    own so they look and export like the course's::

        alt = mk.viz.altair()
        alt.Chart(df).mark_bar().encode(x="category", y="n")
    """
    return _setup()


def static(format: Literal["svg", "png"] = "svg") -> None:
    """Render charts as static pictures made by vl-convert (the default, from the first chart on).

    ``"svg"`` keeps text sharp and files small; ``"png"`` is safer for very large scatter plots
    (thousands of marks make a heavy SVG). Neither needs a network or browser JavaScript, and both
    are embedded in HTML exports.
    """
    if format not in ("svg", "png"):
        raise ValueError(f"static renderer must be 'svg' or 'png', not {format!r}")
    _setup(format)
    _enable(format)


def interactive() -> None:
    """Opt in to live, interactive charts (tooltips, zoom, selections) in JupyterLab.

    Uses altair's ``"jupyter"`` renderer with ``offline=True``: an anywidget whose Vega
    JavaScript comes from vl-convert's bundle, not from a CDN. Needs a running kernel; in an
    exported HTML file these charts are empty, so call :func:`static` before exporting.
    """
    _setup("jupyter")
    _enable("jupyter")


def renderer() -> str:
    """Name of the chart renderer this package enabled (``svg``, ``png`` or ``jupyter``); ``svg``,
    the default, before the first chart."""
    return _state["renderer"] or "svg"


def chart_svg(chart: alt.TopLevelMixin) -> str:
    """A chart as an SVG string (for HTML reports written outside a notebook)."""
    import vl_convert as vlc

    _setup()  # the course theme is part of the spec
    return vlc.vegalite_to_svg(chart.to_dict())


# --------------------------------------------------------------------------------------------
# Generic charts
# --------------------------------------------------------------------------------------------


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
    alt = altair()

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
    alt = altair()

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
    alt = altair()

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
    alt = altair()

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


#: Columns that count LLM usage: all zero when everything ran offline on the rule-based agents.
USAGE_COLUMNS = ("calls", "mean_calls", "prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens",
                 "tokens", "repaired_calls", "cost", "cost_usd", "retries")


def drop_zero_usage(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the LLM-usage columns (calls, tokens, cost) that are 0 or empty in every row:
    offline they only say "nothing was called", which the offline line of ``mk.connect()`` says once."""
    drop = [c for c in USAGE_COLUMNS if c in df.columns and not df[c].fillna(0).astype(bool).any()]
    return df.drop(columns=drop) if drop else df


def _color_for_column(df: pd.DataFrame, column: str) -> alt.Color:
    values = [str(v) for v in dict.fromkeys(df[column].tolist())]
    if values and all(v in OUTCOME_COLORS for v in values):
        alt = altair()

        domain = [v for v in OUTCOME_COLORS if v in values]
        return alt.Color(f"{column}:N", scale=alt.Scale(domain=domain, range=[OUTCOME_COLORS[v] for v in domain]))
    kind: Literal["category", "agent"] = (
        "agent" if values and all(norm_name(v) in AGENT_COLORS for v in values) else "category"
    )
    return category_color(column, categories=values, kind=kind)
