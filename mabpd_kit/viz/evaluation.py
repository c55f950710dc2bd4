"""Charts for evaluation results (notebook 08 and ``mabpd evaluate``).

Every builder takes the DataFrames that :mod:`mabpd_kit.evaluate` produces (for any method's
results) and returns an altair chart; nothing is computed here that the tables do not already
hold, except simple per-group rates in :func:`error_rates_chart`. altair comes from
:func:`mabpd_kit.viz.altair` (course theme and offline renderer on first use), so importing this
module is cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mabpd_kit.viz import altair

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

__all__ = ["confusion_chart", "error_rates_chart", "metrics_chart", "precision_recall_chart", "threshold_chart"]

_METRIC_TITLES = {"macro_f1": "macro F1", "f1": "F1 (biased)", "precision": "precision", "recall": "recall",
                  "accuracy": "accuracy"}


def metrics_chart(
    metrics: pd.DataFrame,
    which: Sequence[str] = ("macro_f1", "f1", "precision", "recall"),
    title: str | None = None,
) -> alt.LayerChart:
    """Grouped bars: one group per metric, one bar per system; macro F1 carries its bootstrap CI."""
    import pandas as pd

    alt = altair()

    systems = metrics["system"].tolist()
    long = metrics.melt(id_vars=["system"], value_vars=list(which), var_name="metric", value_name="value")
    long["metric"] = long["metric"].map(lambda m: _METRIC_TITLES.get(m, m))
    order = [_METRIC_TITLES.get(m, m) for m in which]
    x = alt.X("metric:N", sort=order, title=None, axis=alt.Axis(labelAngle=0))
    bars = alt.Chart(long).mark_bar().encode(
        x=x,
        xOffset=alt.XOffset("system:N", sort=systems),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title="score"),
        color=alt.Color("system:N", sort=systems, title="system"),
        tooltip=["system", "metric", alt.Tooltip("value:Q", format=".3f")],
    )
    layers: list[Any] = [bars]
    if {"macro_f1_lo", "macro_f1_hi"} <= set(metrics.columns) and "macro_f1" in which:
        ci = pd.DataFrame({"system": metrics["system"], "metric": _METRIC_TITLES["macro_f1"],
                           "lo": metrics["macro_f1_lo"], "hi": metrics["macro_f1_hi"]})
        layers.append(
            alt.Chart(ci).mark_rule(color="black").encode(
                x=x, xOffset=alt.XOffset("system:N", sort=systems), y="lo:Q", y2="hi:Q"
            )
        )
    chart = alt.layer(*layers).properties(width=alt.Step(14) if len(systems) > 6 else 360, height=240)
    return chart.properties(title=title) if title else chart


def precision_recall_chart(metrics: pd.DataFrame, title: str | None = None) -> alt.LayerChart:
    """Each system as a point in (recall, precision): who buys precision with recall, and who the other way."""
    alt = altair()

    base = alt.Chart(metrics).encode(
        x=alt.X("recall:Q", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("precision:Q", scale=alt.Scale(domain=[0, 1])),
    )
    points = base.mark_point(filled=True, size=80).encode(
        color=alt.Color("kind:N", title=None), tooltip=["system", alt.Tooltip("precision:Q", format=".3f"),
                                                        alt.Tooltip("recall:Q", format=".3f")]
    )
    labels = base.mark_text(align="left", dx=6, fontSize=10).encode(text="system:N")
    chart = alt.layer(points, labels).properties(width=320, height=320)
    return chart.properties(title=title) if title else chart


def confusion_chart(gold: Sequence[Any], pred: Sequence[Any], title: str | None = None) -> alt.LayerChart:
    """2 x 2 (or k x k) confusion matrix as a labelled heat map (rows gold, columns predicted)."""
    from mabpd_kit import metrics
    from mabpd_kit.viz import heatmap

    cm = metrics.confusion(gold, pred)
    names = {0: "neutral", 1: "biased"}
    long = cm.rename(index=lambda v: names.get(v, v), columns=lambda v: names.get(v, v)).stack().rename("count").reset_index()
    return heatmap(long, x="pred", y="gold", value="count", fmt="d", title=title)


def error_rates_chart(
    predictions: pd.DataFrame, by: str = "type", system: str | None = None, min_items: int = 20, title: str | None = None
) -> alt.Chart:
    """False-positive rate (neutral called biased) and false-negative rate (biased missed) per group.

    ``predictions`` is :attr:`Evaluation.predictions` (or any frame with gold, pred and ``by``);
    groups with fewer than ``min_items`` items are left out (their rates are noise).
    """
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
        color=alt.Color("rate:N", title=None),
        tooltip=["group", "rate", alt.Tooltip("value:Q", format=".2f"), "n"],
    ).properties(width=320)
    return chart.properties(title=title) if title else chart


def threshold_chart(
    sweeps: pd.DataFrame, chosen: float | None = None, metric: str = "macro_f1", title: str | None = None
) -> alt.LayerChart:
    """``metric`` against the decision threshold, one line per ``half`` (e.g. calibrate / report);
    a vertical rule marks the threshold chosen on the calibration half."""
    import pandas as pd

    alt = altair()

    color = alt.Color("half:N", title=None) if "half" in sweeps.columns else alt.value("#4c78a8")
    lines = alt.Chart(sweeps).mark_line().encode(
        x=alt.X("threshold:Q", title="decision threshold on the score"),
        y=alt.Y(f"{metric}:Q", title=_METRIC_TITLES.get(metric, metric)),
        color=color,
    )
    layers: list[Any] = [lines]
    if chosen is not None:
        layers.append(alt.Chart(pd.DataFrame({"threshold": [chosen]})).mark_rule(strokeDash=[4, 3], color="black").encode(x="threshold:Q"))
    chart = alt.layer(*layers).properties(width=360, height=220)
    return chart.properties(title=title) if title else chart
