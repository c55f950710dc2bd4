"""Charts for dual-threshold stopping (notebook 07): the grid, the quality/rounds trade-off, trajectories.

Every builder returns an altair chart (tests read ``chart.to_dict()``) built from a frame of
:mod:`mabpd_kit.radar` (``replay_frame``, ``trajectories_frame``, the calibration grid). altair comes
from :func:`mabpd_kit.viz.altair` (course theme and offline renderer on the first chart), so
importing this module does nothing.

>>> from mabpd_kit.radar import calibrate, simulate_trajectories
>>> from mabpd_kit.viz.stopping import grid_heatmap, tradeoff_chart
>>> cal = calibrate(simulate_trajectories(100))
>>> chart = tradeoff_chart(cal, current=(-0.6, 0.75))      # where this pair sits among all pairs
>>> heat = grid_heatmap(cal, marks={"best": (cal.best["tau_s"], cal.best["tau_v"])})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from mabpd_kit.radar.calibrate import CalibrationResult
from mabpd_kit.radar.stopping import DualThreshold, Trajectory, replay_frame, trajectories_frame
from mabpd_kit.viz import OUTCOME_COLORS, altair

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt

__all__ = ["LABEL_COLORS", "grid_heatmap", "opening_margin_chart", "stop_outcome_chart", "tradeoff_chart", "trajectory_chart"]

#: One colour per veracity label, used by every chart here.
LABEL_COLORS: dict[str, str] = {k: OUTCOME_COLORS[k] for k in ("TRUE", "HALF-TRUE", "FALSE")}

_MARK_COLORS = ("#d62728", "#1f1f1f", "#9467bd", "#17becf")


def _label_scale():
    alt = altair()

    return alt.Scale(domain=list(LABEL_COLORS), range=list(LABEL_COLORS.values()))


def _marks_frame(cal: CalibrationResult, marks: Mapping[str, tuple[float, float]]) -> pd.DataFrame:
    rows = []
    for name, (ts, tv) in marks.items():
        row = cal.at(ts, tv)
        rows.append(dict(name=name, tau_s=row["tau_s"], tau_v=row["tau_v"], quality=row["quality"],
                         mean_rounds=row["mean_rounds"]))
    return pd.DataFrame(rows, columns=["name", "tau_s", "tau_v", "quality", "mean_rounds"])


def grid_heatmap(cal: CalibrationResult, value: str = "quality", *,
                 marks: Mapping[str, tuple[float, float]] | None = None, title: str | None = None) -> alt.LayerChart:
    """``value`` (quality, mean_rounds, objective, stop_round1, censored ...) over the tau_s x tau_v grid.

    ``marks`` names threshold pairs to circle (e.g. the logged run's and the calibrated pair).
    """
    alt = altair()

    df = cal.grid.copy()
    scheme = "viridis" if value in ("quality", "accuracy", "macro_f1", "objective") else "oranges"
    cells = alt.Chart(df).mark_rect().encode(
        x=alt.X("tau_s:Q", bin=alt.Bin(step=0.05, extent=[-1.025, 1.025]), title="tau_s (stop margin threshold)"),
        y=alt.Y("tau_v:Q", bin=alt.Bin(step=0.05, extent=[-0.025, 0.975]), title="tau_v (confidence threshold)"),
        color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme=scheme), title=value),
        tooltip=["tau_s", "tau_v", alt.Tooltip(f"{value}:Q", format=".3f"), alt.Tooltip("mean_rounds:Q", format=".2f")],
    )
    layers = [cells]
    if marks:
        mf = _marks_frame(cal, marks)
        layers.append(alt.Chart(mf).mark_point(shape="circle", size=160, filled=False, strokeWidth=2.5).encode(
            x="tau_s:Q", y="tau_v:Q",
            color=alt.Color("name:N", scale=alt.Scale(range=list(_MARK_COLORS)), title="pair"),
            tooltip=["name", "tau_s", "tau_v"],
        ))
    t = title or f"{value} over the threshold grid ({cal.n_claims} claims, {cal.objective})"
    return alt.layer(*layers).properties(title=t, width=420, height=240)


def tradeoff_chart(cal: CalibrationResult, *, current: tuple[float, float] | None = None,
                   marks: Mapping[str, tuple[float, float]] | None = None,
                   title: str | None = None) -> alt.LayerChart:
    """Quality against mean rounds: every grid pair (grey), the Pareto front (line), named pairs.

    ``current`` is drawn as a large red point labelled "your pair": the live view behind the
    notebook's sliders.
    """
    alt = altair()

    grid = cal.grid
    named = dict(marks or {})
    if current is not None:
        named = {"your pair": current, **named}
    base = alt.Chart(grid).mark_circle(size=22, color="#bdbdbd", opacity=0.6).encode(
        x=alt.X("mean_rounds:Q", title="mean debate rounds", scale=alt.Scale(zero=False)),
        y=alt.Y("quality:Q", title=cal.objective, scale=alt.Scale(zero=False)),
        tooltip=["tau_s", "tau_v", alt.Tooltip("quality:Q", format=".3f"), alt.Tooltip("mean_rounds:Q", format=".2f")],
    )
    front = alt.Chart(cal.pareto).mark_line(point=True, color="#4c78a8", interpolate="step-after").encode(
        x="mean_rounds:Q", y="quality:Q", tooltip=["tau_s", "tau_v", "quality", "mean_rounds"],
    )
    layers = [base, front]
    if named:
        mf = _marks_frame(cal, named)
        enc = dict(x="mean_rounds:Q", y="quality:Q",
                   color=alt.Color("name:N", scale=alt.Scale(domain=list(named), range=list(_MARK_COLORS)), title="pair"))
        layers.append(alt.Chart(mf).mark_point(size=180, filled=True, opacity=0.9).encode(
            **enc, tooltip=["name", "tau_s", "tau_v", "quality", "mean_rounds"]))
    t = title or f"{cal.objective} vs rounds: all {len(grid)} threshold pairs, Pareto front in blue"
    return alt.layer(*layers).properties(title=t, width=420, height=240)


def trajectory_chart(trajs: Sequence[Trajectory], *, value: str = "c", title: str | None = None) -> alt.Chart:
    """How ``value`` (``c`` = confidence or ``s`` = stop margin) evolves over rounds, one line per claim,
    coloured by gold label, one panel per gold label. Each point's shape is its probability source
    (a ``one_hot`` round, a bare verdict, sits at c = 1 without being a real confidence)."""
    alt = altair()

    df = trajectories_frame(trajs).dropna(subset=[value])
    ylab = "confidence c = max p(label)" if value == "c" else "stop margin s = p(STOP) - p(CONTINUE)"
    line = alt.Chart(df).mark_line(opacity=0.45, strokeWidth=1).encode(
        x=alt.X("round:O", title="round"),
        y=alt.Y(f"{value}:Q", title=ylab),
        detail="id:N",
        color=alt.Color("gold:N", scale=_label_scale(), title="gold"),
    )
    points = line.mark_point(filled=True, size=30, opacity=0.7).encode(
        shape=alt.Shape("source:N", title="probability source"),
        tooltip=["id", "gold", "round", alt.Tooltip(f"{value}:Q", format=".3f"), "label", "source"],
    )
    return alt.layer(line, points, data=df).properties(width=150, height=180).facet(column=alt.Column("gold:N", title=None, sort=list(LABEL_COLORS))).properties(
        title=title or f"{value} per round, one line per claim"
    )


def stop_outcome_chart(trajs: Sequence[Trajectory], rule: DualThreshold, *, title: str | None = None) -> alt.Chart:
    """Where ``rule`` stops, per gold label: claims per stop round, split into right and wrong answers."""
    alt = altair()

    f = replay_frame(trajs, rule)
    f = f[f.gold.notna()].copy()
    f["outcome"] = f.correct.map({True: "right", False: "wrong"})
    counts = f.groupby(["gold", "rounds", "outcome"]).size().reset_index(name="claims")
    return alt.Chart(counts).mark_bar().encode(
        x=alt.X("rounds:O", title="stopped after round"),
        y=alt.Y("claims:Q", title="claims"),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=["right", "wrong"], range=["#54a24b", "#e45756"])),
        column=alt.Column("gold:N", title=None, sort=list(LABEL_COLORS)),
        tooltip=["gold", "rounds", "outcome", "claims"],
    ).properties(width=120, height=160, title=title or f"stops at tau_s={rule.tau_s:+.2f}, tau_v={rule.tau_v:.2f}")


def opening_margin_chart(decisions: pd.DataFrame, *, title: str | None = None) -> alt.Chart:
    """Mean stop margin after the opening per gold label, one panel per logged run.

    ``decisions``: :func:`mabpd_kit.radar.load_radar_decisions` (columns run, round_index, gold, s).
    """
    alt = altair()

    first = decisions[(decisions.round_index == 1) & decisions.gold.notna()]
    df = first.groupby(["run", "gold"], as_index=False).agg(mean_s=("s", "mean"), claims=("s", "size"))
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("gold:N", sort=list(LABEL_COLORS), title=None),
        y=alt.Y("mean_s:Q", title="mean s = p(STOP) - p(CONTINUE)"),
        color=alt.Color("gold:N", scale=_label_scale(), legend=None),
        column=alt.Column("run:N", title="logged run (evidence - judge)"),
        tooltip=["run", "gold", alt.Tooltip("mean_s:Q", format=".3f"), "claims"],
    ).properties(width=110, height=170, title=title or "How much the Judge wants to stop after the opening")
