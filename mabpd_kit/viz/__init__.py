"""Charts and the span viewer, offline by default: charts render as inline SVG made by vl-convert (no
JavaScript, no CDN), :func:`interactive` opts in to live charts, and every chart carries alternative text.
Per-area builders live in submodules (``viz.lexicon``, ...), imported on first access."""

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
    SYSTEM_COLORS,
    color_for,
    norm_name,
    system_color,
)
from mabpd_kit.viz.spans import show_spans, span_html
from mabpd_kit.viz.tables import Table, table

if TYPE_CHECKING:  # altair is imported on first use (``import mabpd_kit`` stays fast)
    import altair as alt
    import pandas as pd

__all__ = [
    "CATEGORY_COLORS", "AGENT_COLORS", "OUTCOME_COLORS", "OTHER_COLOR", "OKABE_ITO", "SERIES_COLORS", "SYSTEM_COLORS",
    "system_color", "THEME_NAME", "alt_text", "describe", "drop_zero_usage", "figure_html", "altair", "static",
    "interactive", "renderer", "color_for", "category_color", "chart_svg", "bar", "line", "heatmap", "span_html",
    "table", "Table", "show_spans",
]

THEME_NAME = "mabpd"

_SUBMODULES = ("colors", "spans", "lexicon", "pipeline", "scores", "stopping", "identity", "evaluation", "simulator",
               "corpus", "llm_labels")
_FROM_PIPELINE = ("show", "decision_html")  # a Decision's span viewer and trace: mk.viz.show(d)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES or name in _FROM_PIPELINE:
        import importlib
        module = importlib.import_module(f"{__name__}.{name if name in _SUBMODULES else 'pipeline'}")
        return module if name in _SUBMODULES else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(_SUBMODULES) | set(_FROM_PIPELINE))

# the renderer this package last enabled; None until the first chart (or static()/interactive())
_state: dict[str, str | None] = {"renderer": None}


def _skip_slow_iri_grammar() -> None:
    """Mark ``rfc3987_syntax`` absent before jsonschema is imported: its IRI parser costs seconds per lesson."""
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
        return {"config": {
            "view": {"continuousWidth": 360, "continuousHeight": 220, "stroke": None},
            "font": "Helvetica, Arial, sans-serif", "title": {"fontSize": 14, "anchor": "start"},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e6e6"},
            "legend": {"labelFontSize": 11, "titleFontSize": 12},
            # charts without their own scale: the series colours (never biased, neutral or yours); a mark without
            # a colour is dark grey, never vega's default blue
            "range": {"category": list(dict.fromkeys(SERIES_COLORS + tuple(EXTRA_COLORS)))},
            "mark": {"color": "#333333"}, "background": "white"}}


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
            alt.renderers.register(name, _with_alt_text(_base_renderers[name]))
        alt.renderers.enable(name)
    _state["renderer"] = name


# altair's static renderers before this package wrapped them (so wrapping twice is impossible)
_base_renderers: dict[str, Any] = {}


def _with_alt_text(base: Any) -> Any:
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
    """A chart's alternative text: its ``description``, else "<title>. <kind> of <y> against <x>, coloured by <field>"."""
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
    """The chart with ``text`` as its alternative text (Vega-Lite ``description``)."""
    return chart.properties(description=text)


def _svg_with_title(svg: str, text: str) -> str:
    """Add ``role="img"``, an ``aria-label`` and a ``<title>`` to an SVG."""
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
    """The ``altair`` module with the course theme and the offline renderer switched on (for your own charts)."""
    return _setup()


def static(format: Literal["svg", "png"] = "svg") -> None:
    """Render charts as static pictures made by vl-convert: ``"svg"`` (the default), or ``"png"`` for many marks."""
    if format not in ("svg", "png"):
        raise ValueError(f"static renderer must be 'svg' or 'png', not {format!r}")
    _setup(format)
    _enable(format)


def interactive() -> None:
    """Live charts in JupyterLab (altair's offline ``jupyter`` renderer); empty in an HTML export, so call
    :func:`static` before exporting."""
    _setup("jupyter")
    _enable("jupyter")


def renderer() -> str:
    """The chart renderer this package enabled: ``svg`` (the default), ``png`` or ``jupyter``."""
    return _state["renderer"] or "svg"


def chart_svg(chart: alt.TopLevelMixin) -> str:
    """A chart as an SVG string (for HTML reports written outside a notebook)."""
    import vl_convert as vlc
    _setup()  # the course theme is part of the spec
    return vlc.vegalite_to_svg(chart.to_dict())


def category_color(field: str = "category", *, categories: Iterable[str] | None = None,
                   kind: Literal["category", "agent"] = "category", title: str | None = None,
                   legend: bool = True) -> alt.Color:
    """An ``alt.Color`` encoding in the course colours for ``field`` (domain: ``categories``, else the course's)."""
    alt = altair()
    domain = list(categories) if categories is not None else list(AGENT_COLORS if kind == "agent" else CATEGORY_COLORS)
    scale = alt.Scale(domain=domain, range=[color_for(c, kind) for c in domain])
    return alt.Color(f"{field}:N", scale=scale, title=title or field.replace("_", " "),
                     legend=alt.Legend() if legend else None)


def bar(df: pd.DataFrame, x: str, y: str, *, color: str | None = None, title: str | None = None,
        horizontal: bool = False) -> alt.Chart:
    """A bar chart of quantitative ``y`` against nominal ``x`` (``horizontal``: categories on the y axis)."""
    alt = altair()
    cat = alt.X(f"{x}:N", sort=None) if not horizontal else alt.Y(f"{x}:N", sort=None)
    val = alt.Y(f"{y}:Q") if not horizontal else alt.X(f"{y}:Q")
    enc = {"x": cat, "y": val} if not horizontal else {"y": cat, "x": val}
    return _xy_chart(alt.Chart(df).mark_bar(), df, enc, x, y, color, title)


def line(df: pd.DataFrame, x: str, y: str, *, color: str | None = None, title: str | None = None,
         points: bool = True) -> alt.Chart:
    """A line chart of quantitative ``y`` against quantitative ``x``, one line per ``color`` value."""
    alt = altair()
    enc = {"x": alt.X(f"{x}:Q"), "y": alt.Y(f"{y}:Q")}
    return _xy_chart(alt.Chart(df).mark_line(point=points), df, enc, x, y, color, title)


def _xy_chart(base: alt.Chart, df: pd.DataFrame, enc: dict[str, Any], x: str, y: str, color: str | None,
              title: str | None) -> alt.Chart:
    if color:
        enc = {**enc, "color": _color_for_column(df, color)}
    chart = base.encode(**enc, tooltip=list(dict.fromkeys([x, y] + ([color] if color else []))))
    return chart.properties(title=title) if title else chart


def _x_rule(field: str, value: float, color: str, *, dashed: bool = True, **mark: Any) -> alt.Chart:
    """A vertical reference line at ``field`` = ``value`` (a boundary, a threshold, zero), dashed by default."""
    alt = altair()
    import pandas as pd
    dash = {"strokeDash": [4, 3]} if dashed else {}
    return alt.Chart(pd.DataFrame({field: [value]})).mark_rule(**dash, color=color, **mark).encode(x=f"{field}:Q")


def heatmap(df: pd.DataFrame, x: str, y: str, value: str, *, title: str | None = None, fmt: str = ".2f",
            scheme: str = "blues") -> alt.LayerChart:
    """A heat map with ``value`` printed in every cell (confusion matrices, threshold grids)."""
    alt = altair()
    base = alt.Chart(df).encode(x=alt.X(f"{x}:O"), y=alt.Y(f"{y}:O"))
    cells = base.mark_rect().encode(color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme=scheme)), tooltip=[x, y, value])
    labels = base.mark_text(baseline="middle").encode(
        text=alt.Text(f"{value}:Q", format=fmt),
        color=alt.when(alt.datum[value] > 0.5 * (float(df[value].max()) if len(df) else 0.0)).then(alt.value("white"))
        .otherwise(alt.value("black")))
    chart = alt.layer(cells, labels)
    return chart.properties(title=title) if title else chart


#: Columns that count LLM usage: all zero when everything ran offline on the rule-based agents.
USAGE_COLUMNS = ("calls", "mean_calls", "prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens",
                 "tokens", "repaired_calls", "cost", "cost_usd", "retries")


def drop_zero_usage(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the LLM-usage columns (calls, tokens, cost) that are 0 or empty in every row."""
    drop = [c for c in USAGE_COLUMNS if c in df.columns and not df[c].fillna(0).astype(bool).any()]
    return df.drop(columns=drop) if drop else df


def _color_for_column(df: pd.DataFrame, column: str) -> alt.Color:
    values = [str(v) for v in dict.fromkeys(df[column].tolist())]
    if values and all(v in OUTCOME_COLORS for v in values):
        alt = altair()
        domain = [v for v in OUTCOME_COLORS if v in values]
        return alt.Color(f"{column}:N", scale=alt.Scale(domain=domain, range=[OUTCOME_COLORS[v] for v in domain]))
    agents = values and all(norm_name(v) in AGENT_COLORS for v in values)
    kind: Literal["category", "agent"] = "agent" if agents else "category"
    return category_color(column, categories=values, kind=kind)
