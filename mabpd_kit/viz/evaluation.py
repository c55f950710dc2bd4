"""Charts for evaluation results (lesson 08, ``mabpd evaluate``), drawn from the frames of :mod:`mabpd_kit.evaluate`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mabpd_kit.viz import _x_rule, altair
from mabpd_kit.viz.colors import SERIES_COLORS, system_color

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

__all__ = ["confusion_chart", "error_rates_chart", "metrics_chart", "precision_recall_chart", "threshold_chart"]

_REFERENCE_GREY = "#bdbdbd"   # the reference LLMs: one grey in the bars' band and in the precision/recall points
_METRIC_TITLES = {"macro_f1": "macro F1", "f1": "F1 (biased)", "precision": "precision", "recall": "recall",
                  "accuracy": "accuracy"}


def metrics_chart(metrics: pd.DataFrame, which: Sequence[str] = ("macro_f1", "f1", "precision", "recall"),
                  title: str | None = None) -> alt.LayerChart:
    """Grouped bars: one group per metric, one bar per system, macro F1 with its bootstrap CI; reference LLMs
    (``kind`` starting with "reference") are one grey band per metric."""
    import pandas as pd
    alt = altair()
    is_ref = metrics["kind"].astype(str).str.startswith("reference") if "kind" in metrics.columns else metrics["system"] != metrics["system"]
    refs, metrics = metrics[is_ref], metrics[~is_ref]
    systems = metrics["system"].tolist()
    long = metrics.melt(id_vars=["system"], value_vars=list(which), var_name="metric", value_name="value")
    long["metric"] = long["metric"].map(lambda m: _METRIC_TITLES.get(m, m))
    order = [_METRIC_TITLES.get(m, m) for m in which]
    x = alt.X("metric:N", sort=order, title=None, axis=alt.Axis(labelAngle=0))
    layers: list[Any] = []
    if len(refs):   # the reference LLMs as one see-through grey band per metric (lowest to highest), over the bars
        band = pd.DataFrame({"metric": [_METRIC_TITLES.get(m, m) for m in which], "lo": [refs[m].min() for m in which],
                             "hi": [refs[m].max() for m in which], "what": f"{len(refs)} reference LLMs: lowest to highest"})
        band_chart = alt.Chart(band).mark_bar(color=_REFERENCE_GREY, fillOpacity=0.5, stroke="#555555", strokeWidth=1).encode(
            x=x, y="lo:Q", y2="hi:Q", opacity=alt.Opacity("what:N", title=None, legend=alt.Legend(
                symbolOpacity=1, symbolType="square", symbolFillColor="#dedede", symbolStrokeColor="#555555", labelLimit=0)),
            tooltip=["what", alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")])
    layers.append(alt.Chart(long).mark_bar().encode(
        x=x,
        xOffset=alt.XOffset("system:N", sort=systems),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title="score"),
        color=alt.Color("system:N", sort=systems, title="system", scale=_system_scale(metrics)),
        tooltip=["system", "metric", alt.Tooltip("value:Q", format=".3f")]))
    if len(refs):
        layers.append(band_chart)
    if {"macro_f1_lo", "macro_f1_hi"} <= set(metrics.columns) and "macro_f1" in which:
        ci = pd.DataFrame({"system": metrics["system"], "metric": _METRIC_TITLES["macro_f1"],
                           "lo": metrics["macro_f1_lo"], "hi": metrics["macro_f1_hi"]})
        layers.append(alt.Chart(ci).mark_rule(color="black").encode(
            x=x, xOffset=alt.XOffset("system:N", sort=systems), y="lo:Q", y2="hi:Q"))
    chart = alt.layer(*layers).properties(width=alt.Step(14) if len(systems) > 6 else 360, height=240)
    return chart.properties(title=title) if title else chart


def _place_labels(points: list[tuple[float, float, str]]) -> list[tuple[float, float, str, str]]:
    """Greedy label placement in pixels: for each point (x, y, text) the first free spot around it (6 px a character,
    12 px a line); returns (x_px, y_px, text, align) for every label."""
    placed: list[tuple[float, float, float, float]] = []
    dots = [(px - 5, py - 5, px + 5, py + 5) for px, py, _ in points]
    out = []
    for px, py, text in points:
        w, h = 6.0 * len(text), 12.0
        nearby = [(px + 7 if a == "left" else px - 7, py + d * k * h, a) for k in (1, 2) for a in ("left", "right")
                  for d in (-1, 1)]
        spots = [(px + 7, py, "left"), (px - 7, py, "right"), *nearby]
        boxes = [(sx, sy - h / 2, sx + w, sy + h / 2) if a == "left" else (sx - w, sy - h / 2, sx, sy + h / 2)
                 for sx, sy, a in spots]
        free = [all(x1 <= b[0] or x0 >= b[2] or y1 <= b[1] or y0 >= b[3] for b in placed + dots)
                for x0, y0, x1, y1 in boxes]
        i = free.index(True) if True in free else len(spots) - 1
        placed.append(boxes[i])
        out.append((spots[i][0], spots[i][1], text, spots[i][2]))
    return out


def _system_scale(metrics: pd.DataFrame) -> alt.Scale:
    """One colour per system: the evaluated configurations in Okabe-Ito colours, the reference LLMs in one grey."""
    alt = altair()
    systems = metrics["system"].tolist()
    kinds = metrics["kind"].astype(str).tolist() if "kind" in metrics.columns else [""] * len(systems)
    rng, own = [], 0
    for kind in kinds:
        if kind.startswith("reference"):
            rng.append(_REFERENCE_GREY)
        else:
            rng.append(system_color(systems[len(rng)]) or SERIES_COLORS[own % len(SERIES_COLORS)])
            own += 1
    return alt.Scale(domain=systems, range=rng)


def precision_recall_chart(metrics: pd.DataFrame, title: str | None = None, size: int = 360) -> alt.LayerChart:
    """Each system as a labelled point in (recall, precision), on axes zoomed to where the systems are."""
    import pandas as pd

    alt = altair()
    df = metrics.dropna(subset=["precision", "recall"]).reset_index(drop=True)
    lo = max(0.0, min(float(df["recall"].min()), float(df["precision"].min())) - 0.05) if len(df) else 0.0
    lo = float(int(lo * 10) / 10)  # a round lower end: 0.5, 0.6, ...
    span = 1.0 - lo

    def to_px(x: float, y: float) -> tuple[float, float]:
        return (x - lo) / span * size, (1.0 - (y - lo) / span) * size

    pts = [(*to_px(r.recall, r.precision), str(r.system)) for r in df.itertuples()]
    labels = _place_labels(pts)
    lab = pd.DataFrame([{"recall": lo + sx / size * span, "precision": lo + (1 - sy / size) * span, "system": t,
                         "align": a} for sx, sy, t, a in labels])
    scale = alt.Scale(domain=[lo, 1.0], nice=False)
    x = alt.X("recall:Q", scale=scale, title=f"recall (axis from {lo:.1f})" if lo else "recall")
    y = alt.Y("precision:Q", scale=scale, title=f"precision (axis from {lo:.1f})" if lo else "precision")
    kinds = list(dict.fromkeys(df["kind"])) if "kind" in df.columns else []
    # each system its course colour (as in the bars above it), the reference LLMs greys; the shape tells the kinds apart
    points = alt.Chart(df).mark_point(filled=True, size=70).encode(
        x=x, y=y,
        color=alt.Color("system:N", title=None, scale=_system_scale(df), legend=None),
        shape=alt.Shape("kind:N", title=None, scale=alt.Scale(domain=kinds),
                        legend=alt.Legend(orient="bottom", direction="vertical")),
        tooltip=["system", alt.Tooltip("precision:Q", format=".3f"), alt.Tooltip("recall:Q", format=".3f")],
    )
    texts = [alt.Chart(lab[lab["align"] == a]).mark_text(align=a, baseline="middle", fontSize=10).encode(
        x=x, y=y, text="system:N") for a in ("left", "right") if (lab["align"] == a).any()]
    best = df.loc[df["precision"].add(df["recall"]).idxmax(), "system"] if len(df) else ""
    desc = (f"Precision against recall of {len(df)} systems; axes from {lo:.1f} to 1. "
            + "; ".join(f"{r.system}: precision {r.precision:.2f}, recall {r.recall:.2f}" for r in df.itertuples())
            + (f". Highest precision plus recall: {best}." if best else ""))
    chart = alt.layer(points, *texts).properties(width=size, height=size, description=desc)
    return chart.properties(title=title) if title else chart


def confusion_chart(gold: Sequence[Any], pred: Sequence[Any], title: str | None = None) -> alt.LayerChart:
    """The confusion matrix, rows gold and columns predicted, each cell with its kind, count and share of its row."""
    import pandas as pd

    from mabpd_kit import metrics
    alt = altair()
    cm = metrics.confusion(gold, pred)
    names = {0: "neutral", 1: "biased"}
    kinds = {(0, 0): "true negative", (0, 1): "false positive", (1, 0): "false negative", (1, 1): "true positive"}
    rows = []
    for g in cm.index:
        total = int(cm.loc[g].sum())
        for p in cm.columns:
            n = int(cm.loc[g, p])
            rows.append({"gold": f"gold {names.get(g, g)}", "pred": f"predicted {names.get(p, p)}", "count": n,
                         "share": n / total if total else 0.0, "cell": kinds.get((g, p), "correct" if g == p else "error"),
                         "label": f"{kinds.get((g, p), '')}\n{n} ({(n / total if total else 0):.0%} of row)".strip()})
    df = pd.DataFrame(rows)
    df["ink"] = ["white" if share > 0.55 else "black" for share in df["share"]]   # dark text on every light fill
    order_g = [f"gold {names.get(g, g)}" for g in cm.index]
    order_p = [f"predicted {names.get(p, p)}" for p in cm.columns]
    base = alt.Chart(df).encode(
        x=alt.X("pred:N", sort=order_p, title=None, axis=alt.Axis(orient="top", labelAngle=0, labelFontSize=12)),
        y=alt.Y("gold:N", sort=order_g, title=None, axis=alt.Axis(labelFontSize=12)))
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("share:Q", scale=alt.Scale(scheme="greys", domain=[0, 1]), legend=None),   # not blue (neutral)
        tooltip=["gold", "pred", "count", alt.Tooltip("share:Q", format=".0%")])
    texts = [base.transform_filter(alt.datum.ink == ink).mark_text(fontSize=13, lineBreak="\n", lineHeight=17, color=ink)
             .encode(text="label:N") for ink in ("black", "white") if (df["ink"] == ink).any()]
    desc = "Confusion matrix. " + "; ".join(f"{r.gold}, {r.pred}: {r['count']} ({r.cell})" for _, r in df.iterrows())
    chart = alt.layer(cells, *texts).properties(width=120 * len(order_p), height=90 * len(order_g), description=desc)
    return chart.properties(title=title) if title else chart


def error_rates_chart(predictions: pd.DataFrame, by: str = "type", system: str | None = None, min_items: int = 20,
                      title: str | None = None) -> alt.Chart:
    """False-positive and false-negative rate per group of ``predictions`` (gold, pred and ``by``); groups under
    ``min_items`` items are left out."""
    import pandas as pd
    alt = altair()
    df = predictions if system is None else predictions[predictions["system"] == system]
    df = df.assign(group=df[by].fillna("(none)").astype(str))
    rows = []
    for g, part in df.groupby("group"):
        if len(part) < min_items:
            continue
        neg, pos = part[part["gold"] == 0], part[part["gold"] == 1]
        rows.append({"group": g, "rate": "false-positive rate", "value": float((neg["pred"] == 1).mean()) if len(neg) else 0.0, "n": len(part)})
        rows.append({"group": g, "rate": "false-negative rate", "value": float((pos["pred"] == 0).mean()) if len(pos) else 0.0, "n": len(part)})
    long = pd.DataFrame(rows, columns=["group", "rate", "value", "n"])
    chart = alt.Chart(long).mark_bar().encode(
        y=alt.Y("group:N", title=by, sort="-x"),
        x=alt.X("value:Q", title="rate", scale=alt.Scale(domain=[0, 1])),
        yOffset="rate:N",
        color=alt.Color("rate:N", title=None, scale=alt.Scale(domain=["false-positive rate", "false-negative rate"],
                                                              range=["#555555", "#b3b3b3"])),   # greys: no system's colour
        tooltip=["group", "rate", alt.Tooltip("value:Q", format=".2f"), "n"],
    ).properties(width=320)
    return chart.properties(title=title) if title else chart


def threshold_chart(sweeps: pd.DataFrame, chosen: float | None = None, metric: str = "macro_f1",
                    title: str | None = None) -> alt.LayerChart:
    """``metric`` against the decision threshold, one line per ``half`` (e.g. calibrate / report), with a rule at
    ``chosen``."""
    alt = altair()
    color = (alt.Color("half:N", title=None, scale=alt.Scale(range=["#555555", "#b3b3b3"])) if "half" in sweeps.columns
             else alt.value("#555555"))   # greys: a half of the data is no system, and blue means neutral
    lo, hi = float(sweeps["threshold"].min()), float(sweeps["threshold"].max())
    pad = max(0.02, 0.03 * (hi - lo))   # a chosen threshold at the sweep's edge stays visible beside the axis
    lines = alt.Chart(sweeps).mark_line().encode(
        x=alt.X("threshold:Q", title=f"decision threshold on the score (swept {lo:.2f}-{hi:.2f})",
                scale=alt.Scale(domain=[lo - pad, hi + pad], nice=False)),
        y=alt.Y(f"{metric}:Q", title=_METRIC_TITLES.get(metric, metric)),
        color=color)
    layers: list[Any] = [lines]
    if chosen is not None:
        layers.append(_x_rule("threshold", chosen, "black"))
    chart = alt.layer(*layers).properties(width=360, height=220)
    return chart.properties(title=title) if title else chart
