"""Charts for dual-threshold stopping (lesson 07), built from :mod:`mabpd_kit.radar`'s frames (``replay_frame``,
``trajectories_frame``, the calibration grid): the grid, the quality/rounds trade-off, trajectories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from mabpd_kit.radar.calibrate import CalibrationResult
from mabpd_kit.radar.stopping import DualThreshold, Trajectory, replay_frame, trajectories_frame
from mabpd_kit.viz import OUTCOME_COLORS, altair
from mabpd_kit.viz.colors import OKABE_ITO, OTHER_COLOR

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt

__all__ = ["CHANGE_COLORS", "LABEL_COLORS", "changes_chart", "changes_frame", "grid_heatmap", "opening_margin_chart",
           "stop_outcome_chart", "tradeoff_chart", "trajectory_chart"]

OUTLINE = "#555555"  # dark grey outline: light fills (yellow HALF-TRUE) show on white
#: One colour per veracity label, used by every chart here.
LABEL_COLORS: dict[str, str] = {k: OUTCOME_COLORS[k] for k in ("TRUE", "HALF-TRUE", "FALSE")}

#: Named threshold pairs, in order: "your pair" first (orange, as "yours" in every lesson), then the marks
#: (dark grey, reddish purple, bluish green: a named pair is never black (wrong) or blue (neutral)).
_MARK_COLORS = (OKABE_ITO["orange"], "#555555", OKABE_ITO["reddish purple"], OKABE_ITO["bluish green"])
#: The Pareto front's line (sky blue: not the neutral blue, not a pair's colour).
FRONT_COLOR = OKABE_ITO["sky blue"]
#: What happened to a claim when the thresholds moved away from the reference pair: none of the reserved hues
#: (a changed label can be a fix, so not black = wrong; a later stop is not "neutral" blue nor "yours" orange).
CHANGE_COLORS: dict[str, str] = {
    "label changes": OKABE_ITO["reddish purple"],
    "stops earlier": OKABE_ITO["sky blue"],
    "stops later": OKABE_ITO["bluish green"],
    "would go on, log ends": "#555555",   # grey: the log cannot say what would have happened
    "unchanged": OTHER_COLOR,
}


def _label_scale():
    alt = altair()
    return alt.Scale(domain=list(LABEL_COLORS), range=list(LABEL_COLORS.values()))


def _marks_frame(cal: CalibrationResult, marks: Mapping[str, tuple[float, float]]) -> pd.DataFrame:
    rows = [{**cal.at(ts, tv), "name": name} for name, (ts, tv) in marks.items()]
    return pd.DataFrame(rows, columns=["name", "tau_s", "tau_v", "quality", "mean_rounds"])


_VALUE_TITLES = {"mean_rounds": "mean rounds", "stop_round1": "share stopping after the opening",
                 "censored": "share of replays past the log", "macro_f1": "macro F1"}


def _ticks(values: np.ndarray) -> list[float]:
    """Round tick values on the grid: every 0.5 when it spans 1 or more, else every 0.25."""
    lo, hi = float(values.min()), float(values.max())
    step = 0.5 if hi - lo >= 1 else 0.25
    return [round(v, 2) for v in np.arange(np.ceil(lo / step - 1e-9) * step, hi + 1e-9, step)]


def grid_heatmap(cal: CalibrationResult, value: str = "quality", *,
                 marks: Mapping[str, tuple[float, float]] | None = None, title: str | None = None) -> alt.LayerChart:
    """``value`` (quality, mean_rounds, objective, ...) over the tau_s x tau_v grid; ``marks`` names pairs to circle."""
    alt = altair()
    df = cal.grid.copy()
    ts, tv = np.asarray(cal.tau_s_values, dtype=float), np.asarray(cal.tau_v_values, dtype=float)
    hs = float(np.diff(ts).min()) / 2 if len(ts) > 1 else 0.025
    hv = float(np.diff(tv).min()) / 2 if len(tv) > 1 else 0.025
    df["s0"], df["s1"], df["v0"], df["v1"] = df.tau_s - hs, df.tau_s + hs, df.tau_v - hv, df.tau_v + hv
    name = {"quality": cal.objective.replace("_", " "),
            "objective": f"{cal.objective.replace('_', ' ')} - {cal.cost_per_round:g} x rounds"}.get(value, _VALUE_TITLES.get(value, value))
    scheme = "viridis" if value in ("quality", "accuracy", "macro_f1", "objective") else "yellowgreen"   # never orange (yours)
    xs = alt.Scale(domain=[float(ts.min()) - hs, float(ts.max()) + hs], nice=False, zero=False)
    ys = alt.Scale(domain=[float(tv.min()) - hv, float(tv.max()) + hv], nice=False, zero=False)
    cells = alt.Chart(df).mark_rect().encode(
        x=alt.X("s0:Q", scale=xs, axis=alt.Axis(values=_ticks(ts), format=".2~f"), title="tau_s (stop margin threshold)"),
        x2="s1:Q",
        y=alt.Y("v0:Q", scale=ys, axis=alt.Axis(values=_ticks(tv), format=".2~f"), title="tau_v (confidence threshold)"),
        y2="v1:Q",
        color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme=scheme), title=name),
        tooltip=["tau_s", "tau_v", alt.Tooltip(f"{value}:Q", format=".3f", title=name), alt.Tooltip("mean_rounds:Q", format=".2f")],
    )
    layers = [cells]
    if marks:
        mf = _marks_frame(cal, marks)
        layers.append(alt.Chart(mf).mark_point(shape="circle", size=160, filled=False, strokeWidth=2.5).encode(
            x=alt.X("tau_s:Q", scale=xs), y=alt.Y("tau_v:Q", scale=ys),
            color=alt.Color("name:N", scale=alt.Scale(domain=list(marks), range=list(_MARK_COLORS[1:1 + len(marks)])),
                            title="pair"),   # no "your pair" here: the marks keep their tradeoff_chart colours
            tooltip=["name", "tau_s", "tau_v"],
        ))
    t = title or f"{name} over the threshold grid ({cal.n_claims} claims)"
    return alt.layer(*layers).resolve_scale(color="independent").properties(
        title=t, width=420, height=240, description=f"{t}: one cell per (tau_s, tau_v) pair, colour = {name}.")


def tradeoff_chart(cal: CalibrationResult, *, current: tuple[float, float] | None = None,
                   marks: Mapping[str, tuple[float, float]] | None = None,
                   title: str | None = None) -> alt.LayerChart:
    """Quality against mean rounds: every grid pair, the Pareto front, named ``marks`` and ``current`` ("your pair")."""
    alt = altair()
    grid = cal.grid
    named = dict(marks or {})
    domain = (["your pair"] if current is not None else []) + list(named)
    color = alt.Color("name:N", scale=alt.Scale(domain=domain, range=list(_MARK_COLORS)[: len(domain)]), title="pair")
    base = alt.Chart(grid).mark_circle(size=22, color=OTHER_COLOR, opacity=0.5).encode(
        x=alt.X("mean_rounds:Q", title="mean debate rounds", scale=alt.Scale(zero=False)),
        y=alt.Y("quality:Q", title=cal.objective, scale=alt.Scale(zero=False)),
        tooltip=["tau_s", "tau_v", alt.Tooltip("quality:Q", format=".3f"), alt.Tooltip("mean_rounds:Q", format=".2f")],
    )
    front = alt.Chart(cal.pareto).mark_line(point=True, color=FRONT_COLOR, interpolate="step-after").encode(
        x="mean_rounds:Q", y="quality:Q", tooltip=["tau_s", "tau_v", "quality", "mean_rounds"])
    layers = [base, front]
    tip = ["name", "tau_s", "tau_v", "quality", "mean_rounds"]
    if named:
        layers.append(alt.Chart(_marks_frame(cal, named)).mark_point(size=170, filled=False, strokeWidth=2.5).encode(
            x="mean_rounds:Q", y="quality:Q", color=color, tooltip=tip))
    if current is not None:
        layers.append(alt.Chart(_marks_frame(cal, {"your pair": current})).mark_point(
            shape="diamond", size=150, filled=True, opacity=1, stroke="white", strokeWidth=1).encode(
            x="mean_rounds:Q", y="quality:Q", color=color, tooltip=tip))
    t = title or f"{cal.objective} vs rounds: all {len(grid)} threshold pairs, Pareto front in sky blue"
    desc = (f"{t}. Grey dots: every (tau_s, tau_v) pair; sky blue line: the Pareto front"
            + (f"; diamond: your pair {current[0]:+.2f}, {current[1]:.2f}" if current is not None else "")
            + (f"; rings: {', '.join(named)}" if named else "") + ".")
    return alt.layer(*layers).properties(title=t, width=420, height=240, description=desc)


def trajectory_chart(trajs: Sequence[Trajectory], *, value: str = "c", title: str | None = None) -> alt.Chart:
    """How ``value`` (``c`` = confidence or ``s`` = stop margin) evolves over rounds, one line per claim, one panel
    per gold label; each point's shape is its probability source."""
    alt = altair()
    df = trajectories_frame(trajs).dropna(subset=[value])
    ylab = "confidence c = max p(label)" if value == "c" else "stop margin s = p(STOP) - p(CONTINUE)"
    # a dark-grey halo under each line and an outline on each point: HALF-TRUE's yellow stays visible on white
    halo = alt.Chart(df).mark_line(opacity=0.5, strokeWidth=2.5, color=OUTLINE).encode(
        x=alt.X("round:O", title="round"), y=alt.Y(f"{value}:Q", title=ylab), detail="id:N")
    line = halo.mark_line(opacity=0.9, strokeWidth=1.2).encode(
        color=alt.Color("gold:N", scale=_label_scale(), title="gold"))
    points = line.mark_point(filled=True, size=34, opacity=0.9, stroke=OUTLINE, strokeWidth=0.7).encode(
        shape=alt.Shape("source:N", title="probability source"),
        tooltip=["id", "gold", "round", alt.Tooltip(f"{value}:Q", format=".3f"), "label", "source"],
    )
    t = title or f"{value} per round, one line per claim"
    return alt.layer(halo, line, points, data=df).properties(width=150, height=180).facet(
        column=alt.Column("gold:N", title=None, sort=list(LABEL_COLORS))).properties(
        title=t, description=f"{t}: one panel per gold label, one line per claim, {ylab} against the round.")


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
        color=alt.Color("outcome:N", scale=alt.Scale(domain=["right", "wrong"],
                                                     range=[OUTCOME_COLORS["right"], OUTCOME_COLORS["wrong"]])),
        column=alt.Column("gold:N", title=None, sort=list(LABEL_COLORS)),
        tooltip=["gold", "rounds", "outcome", "claims"],
    ).properties(width=120, height=160, title=(t := title or f"stops at tau_s={rule.tau_s:+.2f}, tau_v={rule.tau_v:.2f}"),
                 description=f"{t}: claims per stop round and gold label, right answers grey, wrong black.")


def opening_margin_chart(decisions: pd.DataFrame, *, title: str | None = None) -> alt.Chart:
    """Mean stop margin after the opening per gold label, one panel per run (:func:`mabpd_kit.radar.load_radar_decisions`)."""
    alt = altair()
    first = decisions[(decisions.round_index == 1) & decisions.gold.notna()]
    df = first.groupby(["run", "gold"], as_index=False).agg(mean_s=("s", "mean"), claims=("s", "size"))
    return alt.Chart(df).mark_bar(stroke=OUTLINE, strokeWidth=0.8).encode(   # outlined: yellow on white
        x=alt.X("gold:N", sort=list(LABEL_COLORS), title=None),
        y=alt.Y("mean_s:Q", title="mean s = p(STOP) - p(CONTINUE)"),
        color=alt.Color("gold:N", scale=_label_scale(), legend=None),
        column=alt.Column("run:N", title="logged run (evidence - judge)"),
        tooltip=["run", "gold", alt.Tooltip("mean_s:Q", format=".3f"), "claims"],
    ).properties(width=110, height=170, title=(t := title or "How much the Judge wants to stop after the opening"),
                 description=f"{t}: mean stop margin s after round 1 per gold label, one panel per logged run.")


def changes_frame(trajs: Sequence[Trajectory], rule: DualThreshold, reference: DualThreshold) -> pd.DataFrame:
    """Per claim, what moving from ``reference`` to ``rule`` changes: stop round, label and rightness under each, and
    ``change`` ("would go on, log ends": the log has no round to show where the new rule stops)."""
    a, b = replay_frame(trajs, reference), replay_frame(trajs, rule)
    f = a[["id", "gold", "rounds", "label", "correct"]].merge(
        b[["id", "rounds", "label", "correct", "stop_reason"]], on="id", suffixes=("_ref", "_new"))
    kind = pd.Series("unchanged", index=f.index)
    kind[(f.stop_reason == "end_of_log") & (f.rounds_new == f.rounds_ref)] = "would go on, log ends"
    kind[f.rounds_new < f.rounds_ref] = "stops earlier"
    kind[f.rounds_new > f.rounds_ref] = "stops later"
    kind[f.label_new != f.label_ref] = "label changes"
    return f.assign(change=kind)


def changes_chart(changes: pd.DataFrame, *, max_claims: int = 30, title: str | None = None) -> alt.LayerChart:
    """One row per changed claim (at most ``max_claims``, every kind kept): its stop round under the reference pair
    (hollow) and yours (filled), coloured by the kind of change."""
    alt = altair()
    order = list(CHANGE_COLORS)
    moved = changes[changes.change != "unchanged"].sort_values("id", kind="stable")
    moved = moved.assign(_k=moved.change.map(order.index), _turn=moved.groupby("change").cumcount())
    changed = moved.sort_values(["_turn", "_k"], kind="stable").head(max_claims).sort_values(["_k", "id"], kind="stable")
    n_changed = len(moved)
    counts = ", ".join(f"{int((moved.change == k).sum())} {k}" for k in order if (moved.change == k).any())
    t = title or (f"{n_changed} of {len(changes)} claims change against the reference pair"
                  + (f" ({counts}; {max_claims} shown, every kind)" if n_changed > max_claims else "") if n_changed
                  else f"no claim of {len(changes)} changes its stop round or label")
    rows = [dict(id=str(r.id), which=which, round=rnd, label=lab, change=r.change) for r in changed.itertuples()
            for which, rnd, lab in (("reference", r.rounds_ref, r.label_ref), ("your pair", r.rounds_new, r.label_new))]
    df = pd.DataFrame(rows, columns=["id", "which", "round", "label", "change"])
    shown = [k for k in order if k in set(df["change"])]   # the legend lists only the kinds drawn (none: no legend)
    color = alt.Color("change:N", scale=alt.Scale(domain=shown or order, range=[CHANGE_COLORS[k] for k in shown or order]),
                      title="change", legend=alt.Legend() if shown else None)
    y = alt.Y("id:N", title="claim", sort=list(dict.fromkeys(df["id"])))
    x = alt.X("round:Q", title="stopped after round (hollow: reference pair, diamond: yours)",
              scale=alt.Scale(domain=[0.8, 3.2]), axis=alt.Axis(tickMinStep=1))
    tip = ["id:N", "which:N", "round:Q", "label:N", "change:N"]
    line = alt.Chart(df).mark_line(strokeWidth=2).encode(x=x, y=y, detail="id:N", color=color)
    ref = alt.Chart(df[df.which == "reference"]).mark_point(size=80, strokeWidth=2, filled=False, shape="circle").encode(
        x=x, y=y, color=color, tooltip=tip)
    yours = alt.Chart(df[df.which == "your pair"]).mark_point(size=110, filled=True, shape="diamond", opacity=1).encode(
        x=x, y=y, color=color, tooltip=tip)
    height = max(40, 16 * max(len(changed), 1))
    return alt.layer(line, ref, yours).properties(
        width=300, height=height, title=t,
        description=f"{t}. Each row is a claim: hollow circle = stop round under the reference pair, "
                    "diamond = under your pair; colour = kind of change.")
