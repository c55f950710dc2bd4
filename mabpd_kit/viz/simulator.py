"""Charts for the MABPD simulator (:mod:`mabpd_kit.mabpd.simulator`, lessons 04 and 05), from its traces."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from mabpd_kit.viz import _x_rule, altair
from mabpd_kit.viz.colors import SERIES_COLORS, SYSTEM_COLORS, system_color

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt

    from mabpd_kit.mabpd.simulator import Simulation

__all__ = ["CONFIG_COLORS", "config_chart", "difference_chart", "gain_phrase", "simulator_view", "sweep_chart"]

#: One colour per configuration, the same in every simulator chart (course series colours).
CONFIG_COLORS: dict[str, str] = {"full": SYSTEM_COLORS["full"], "no-debate": SYSTEM_COLORS["no debate"],
                                 "single-agent": SYSTEM_COLORS["single agent"],
                                 "no-evidence-weighting": SYSTEM_COLORS["no evidence weighting"]}
_MEASURES = {"macro_f1": "macro F1", "precision": "precision", "recall": "recall"}


def _scale(names: Sequence[str]) -> alt.Scale:
    alt = altair()
    names = list(names)
    extra = iter(SERIES_COLORS[4:])
    return alt.Scale(domain=names, range=[CONFIG_COLORS.get(n) or system_color(n) or next(extra, "#555555") for n in names])


def config_chart(sim: Simulation, *, title: str | None = None) -> alt.Chart:
    """Macro F1, precision and recall of each configuration of one simulation, side by side."""
    alt = altair()
    m = sim.metrics()
    df = m[list(_MEASURES)].rename(columns=_MEASURES).rename_axis("config").reset_index()
    long = df.melt(id_vars="config", var_name="measure", value_name="value")
    names = list(m.index)
    t = title or f"Simulated items: quality per configuration ({len(sim.truth) // 3} items)"
    return alt.Chart(long).mark_bar().encode(
        x=alt.X("config:N", sort=names, title=None, axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title=None),
        color=alt.Color("config:N", scale=_scale(names), legend=None),
        column=alt.Column("measure:N", sort=list(_MEASURES.values()), title=None),
        tooltip=["config", "measure", alt.Tooltip("value:Q", format=".3f")],
    ).properties(width=130, height=170, title=t,
                 description=f"{t}. Bars: macro F1, precision and recall of " + ", ".join(names) + ".")


#: The measures of :func:`difference_chart` in greys, dark to light, so they never read as configurations.
MEASURE_GREYS = ("#333333", "#8c8c8c", "#cccccc")


def difference_chart(metrics: pd.DataFrame, *, baseline: str = "full", title: str | None = None) -> alt.LayerChart:
    """What each configuration changes against ``baseline``, in points (x 100) of macro F1, precision and recall
    (``metrics``: ``Simulation.metrics()``)."""
    alt = altair()
    others = [n for n in metrics.index if n != baseline]
    rows = [{"config": n, "measure": _MEASURES[m], "points": round(100 * (metrics.loc[n, m] - metrics.loc[baseline, m]), 1)}
            for n in others for m in _MEASURES]
    df = pd.DataFrame(rows)
    measures = list(_MEASURES.values())
    t = title or f"Each configuration minus {baseline}, in points"
    y = alt.Y("config:N", sort=others, title=None)
    base = alt.Chart(df).encode(y=y, yOffset=alt.YOffset("measure:N", sort=measures))
    bars = base.mark_bar().encode(
        x=alt.X("points:Q", title=f"difference from {baseline} (points: x 100)"),
        color=alt.Color("measure:N", sort=measures, title=None,   # greys: the hues mean configurations
                        scale=alt.Scale(domain=measures, range=list(MEASURE_GREYS[:len(measures)]))),
        tooltip=["config", "measure", alt.Tooltip("points:Q", format="+.1f")])
    label = alt.Text("points:Q", format="+.1f")      # outside the bar's end: right of a gain, left of a loss
    text = [base.transform_filter(f"datum.points {op} 0").mark_text(align=a, dx=d, fontSize=10).encode(
        x=alt.X("points:Q"), text=label) for op, a, d in ((">=", "left", 3), ("<", "right", -3))]
    zero = _x_rule("points", 0.0, "#333333", dashed=False)
    return alt.layer(bars, *text, zero).properties(
        width=380, height=alt.Step(12), title=t,
        description=f"{t}: " + "; ".join(f"{r.config} {r.measure} {r.points:+.1f}" for r in df.itertuples()) + ".")


def sweep_chart(frame: pd.DataFrame, setting: str, *, measure: str = "macro_f1",
                current: float | None = None, title: str | None = None) -> alt.LayerChart:
    """``measure`` of each configuration as one planted ``setting`` varies; ``current`` draws a dashed rule."""
    alt = altair()
    names = list(dict.fromkeys(frame["config"]))
    label = _MEASURES.get(measure, measure)
    t = title or f"{label} as the planted {setting} varies"
    lines = alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X(f"{setting}:Q", title=f"planted {setting}"),
        y=alt.Y(f"{measure}:Q", title=label, scale=alt.Scale(zero=False)),
        color=alt.Color("config:N", scale=_scale(names), title="configuration"),
        strokeDash=alt.StrokeDash("config:N", legend=None),   # a second cue besides colour; one legend
        tooltip=[setting, "config", alt.Tooltip(f"{measure}:Q", format=".3f")])
    layers = [lines]
    if current is not None:
        layers.append(_x_rule(setting, current, "#555555"))
    return alt.layer(*layers).properties(
        width=380, height=220, title=t,
        description=f"{t}: one line per configuration ({', '.join(names)}), {label} on the vertical axis.")


def gain_phrase(value: float, unit: str = " points") -> str:
    """A signed difference in words: '4.2 points higher than', '3.0 points lower than', 'the same as' (below 0.05)."""
    if abs(value) < 0.05:
        return "the same as"
    return f"{abs(value):.1f}{unit} {'higher' if value > 0 else 'lower'} than"


def simulator_view(hallucination: float = 0.0, competence: float = 0.75, correlation: float = 0.0,
                   calibration: float = 0.6, n_items: int = 600, seed: int = 0):
    """The simulator panel: the F1 chart of full / no-debate / single-agent and a caption."""
    from mabpd_kit.mabpd.simulator import SimSpec, simulate
    spec = SimSpec(hallucination=hallucination, competence=competence, correlation=correlation, calibration=calibration)
    sim = simulate(spec, n_items=n_items, seed=seed, configs=("full", "no-debate", "single-agent"))
    m = sim.metrics()
    gain = 100 * (m.loc["full", "macro_f1"] - m.loc["no-debate", "macro_f1"])
    single = 100 * (m.loc["full", "macro_f1"] - m.loc["single-agent", "macro_f1"])
    rec = sim.recover()
    caption = (f"macro F1 full {m.loc['full', 'macro_f1']:.3f}, no-debate {m.loc['no-debate', 'macro_f1']:.3f}, "
               f"single-agent {m.loc['single-agent', 'macro_f1']:.3f}: the full pipeline is {gain_phrase(gain)} no-debate "
               f"and {gain_phrase(single)} one agent; {m.loc['full', 'debated']:.0%} of items "
               f"debated; hallucination measured from invalid spans {rec['hallucination']:.2f} (planted {hallucination:.2f}); "
               f"n = {n_items:,} simulated items")
    title = f"Simulated agents: hallucination {hallucination:.2f}, competence {competence:.2f}, correlation {correlation:.2f}"
    return config_chart(sim, title=title), caption
