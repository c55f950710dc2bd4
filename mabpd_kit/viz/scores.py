"""Score and ablation views of a batch of MABPD decisions (re-exported by :mod:`mabpd_kit.viz.pipeline`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mabpd_kit.viz import altair, drop_zero_usage
from mabpd_kit.viz.colors import OUTCOME_COLORS, SERIES_COLORS

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from mabpd_kit.mabpd import Decision

__all__ = ["ablation_chart", "ablation_diff_chart", "ablation_frame", "score_chart"]

_VERDICT_COLORS = {"biased": OUTCOME_COLORS["biased"], "neutral": OUTCOME_COLORS["neutral"]}

def _verdict_color(field: str = "verdict", title: str = "verdict", legend: str = "right") -> alt.Color:
    alt = altair()
    return alt.Color(f"{field}:N", title=title, legend=alt.Legend(orient=legend),
                     scale=alt.Scale(domain=list(_VERDICT_COLORS), range=list(_VERDICT_COLORS.values())))


def _decisions(x: Any) -> list[Decision]:
    """Accept one Decision, a BatchResult or any iterable of decisions."""
    if hasattr(x, "decisions"):
        return list(x.decisions)
    if hasattr(x, "reports") and hasattr(x, "route"):
        return [x]
    if isinstance(x, Iterable) and not isinstance(x, (str, bytes, Mapping)):
        out = list(x)
        if all(hasattr(d, "reports") and hasattr(d, "route") for d in out):
            return out
    raise TypeError(f"expected a Decision, a BatchResult or a list of decisions, got {type(x).__name__}")


def ablation_frame(results: Mapping[str, Any]) -> pd.DataFrame:
    """Metrics per configuration (name -> BatchResult or decisions on the same gold items; failed items out)."""
    import pandas as pd

    from mabpd_kit import metrics as M
    rows = []
    for name, res in results.items():
        ds = _decisions(res)
        ok = [d for d in ds if not d.failed and d.gold is not None]
        if not ok:
            raise ValueError(f"{name!r}: no decision with a gold label (pass gold= to analyze_many)")
        rep = M.classification_report([d.gold for d in ok], [d.pred for d in ok])
        rows.append({
            "ablation": name, "n": len(ok), "failed": sum(d.failed for d in ds),
            **{k: rep[k] for k in ("accuracy", "precision", "recall", "f1", "macro_f1")},
            "mean_calls": sum(d.usage.calls for d in ok) / len(ok),
            "debated": sum(d.debate is not None for d in ok) / len(ok),
            "overturned": sum(bool(d.verifier and d.verifier.overturned) for d in ok) / len(ok),
        })
    return drop_zero_usage(pd.DataFrame(rows))


def score_chart(x: Any, *, cutoffs: Mapping[str, float] | None = None, title: str | None = None,
                step: float = 0.025) -> alt.VConcatChart:
    """The combined scores, one histogram per gold label stacked by the final label, with the boundary;
    ``cutoffs`` (e.g. the router's) adds dashed rules."""
    alt = altair()
    import pandas as pd
    ds = [d for d in _decisions(x) if not d.failed and d.scoring is not None]
    if not ds:
        raise ValueError("no scored decision to draw")
    df = pd.DataFrame([{"id": d.id, "score": d.score, "label": d.label, "route": d.route,
                        "gold": {1: "gold biased", 0: "gold neutral"}.get(d.gold, "no gold"),
                        "text": d.text[:80]} for d in ds])
    boundaries = {d.scoring.boundary for d in ds}
    rules = pd.DataFrame([{"cut": f"boundary {b:.2f}", "at": b, "kind": "boundary"} for b in sorted(boundaries)]
                         + [{"cut": f"{k} {v:.2f}", "at": v, "kind": "router"} for k, v in (cutoffs or {}).items()])
    kinds = [k for k in ("boundary", "router") if k in set(rules["kind"])]
    lines = alt.Chart(rules).mark_rule(color="#333333").encode(
        x="at:Q", strokeDash=alt.StrokeDash("kind:N", scale=alt.Scale(
            domain=kinds, range=[{"boundary": [1, 0], "router": [4, 3]}[k] for k in kinds]), title=None),
        tooltip=["cut", "at"])
    groups = [g for g in ("gold biased", "gold neutral", "no gold") if g in set(df["gold"])]
    panels = []
    for i, g in enumerate(groups):
        n = int((df["gold"] == g).sum())
        bars = alt.Chart(df).transform_filter(alt.datum.gold == g).mark_bar().encode(
            x=alt.X("score:Q", bin=alt.Bin(extent=[0, 1], step=step),
                    title="combined score" if i == len(groups) - 1 else None, scale=alt.Scale(domain=[0, 1]),
                    axis=alt.Axis(values=sorted({0.0, 0.5, 1.0, *(cutoffs or {}).values()}), format=".2f")),
            y=alt.Y("count():Q", title="items"),
            color=_verdict_color("label", "final label"),
            tooltip=[alt.Tooltip("count():Q", title="items"), "label:N"])
        panels.append(alt.layer(bars, lines).properties(title=f"{g} ({n} items)", width=420, height=90))
    n_pos = sum(d.score >= min(boundaries) for d in ds)
    desc = (f"Histograms of the combined score of {len(df)} items, one per gold label, coloured by the final label; "
            f"{n_pos} items score at or above the {min(boundaries):.2f} boundary.")
    return alt.vconcat(*panels).properties(title=title or f"Combined score of {len(df)} items", description=desc)


def ablation_chart(x: Any, *, metrics: Sequence[str] = ("macro_f1", "precision", "recall"), title: str | None = None
                   ) -> alt.Chart:
    """Grouped bars of :func:`ablation_frame` (``x``: name -> results, or that frame)."""
    alt = altair()
    import pandas as pd
    df = x if isinstance(x, pd.DataFrame) else ablation_frame(x)
    missing = [m for m in metrics if m not in df.columns]
    if missing:
        raise ValueError(f"unknown metric(s) {missing}; the frame has {list(df.columns)}")
    long = df.melt(id_vars=["ablation", "n"], value_vars=list(metrics), var_name="metric", value_name="value")
    chart = alt.Chart(long).mark_bar().encode(
        y=alt.Y("ablation:N", sort=list(df["ablation"]), title=None),
        yOffset=alt.YOffset("metric:N", sort=list(metrics)),
        x=alt.X("value:Q", scale=alt.Scale(domain=[0, 1]), title="metric value"),
        color=alt.Color("metric:N", sort=list(metrics), scale=alt.Scale(range=list(SERIES_COLORS[:5]))),
        tooltip=["ablation", "metric", alt.Tooltip("value:Q", format=".3f"), "n"])
    return chart.properties(title=title or f"Ablations on {int(df['n'].max())} items", width=360)


def ablation_diff_chart(diffs: pd.DataFrame, *, reference: str = "full", title: str | None = None) -> alt.LayerChart:
    """Differences from ``reference`` (``diffs``: ablation, diff, lo, hi[, changed, n]) as dots with their intervals;
    a dot is filled where the interval excludes 0."""
    alt = altair()
    df = diffs.copy()
    df["interval"] = ["excludes 0" if lo > 0 or hi < 0 else "includes 0" for lo, hi in zip(df["lo"], df["hi"])]
    lo, hi = min(float(df["lo"].min()), 0.0), max(float(df["hi"].max()), 0.0)
    pad = max(0.005, 0.08 * (hi - lo))
    axis = {"title": f"difference from {reference} (95% paired bootstrap interval)",
            "scale": alt.Scale(domain=[lo - pad, hi + pad], nice=False), "axis": alt.Axis(format="+.2f")}
    x = alt.X("diff:Q", **axis)
    y = alt.Y("ablation:N", sort=list(df.sort_values("diff")["ablation"]), title=None)
    tips = ["ablation", alt.Tooltip("diff:Q", format="+.3f"), alt.Tooltip("lo:Q", format="+.3f"),
            alt.Tooltip("hi:Q", format="+.3f"), *(["changed"] if "changed" in df.columns else [])]
    base = alt.Chart(df)
    lines = base.mark_rule(strokeWidth=2, color="#555555").encode(y=y, x=alt.X("lo:Q", **axis), x2="hi:Q", tooltip=tips)
    # dark grey, filled or hollow: a hue in the course names a verdict, yours or a system
    shown = [k for k in ("excludes 0", "includes 0") if k in set(df["interval"])]
    fill = alt.Fill("interval:N", title="95% interval", scale=alt.Scale(
        domain=shown, range=[{"excludes 0": "#333333", "includes 0": "#ffffff"}[k] for k in shown]))
    dots = base.mark_point(filled=True, size=90, stroke="#222222", strokeWidth=1.2, opacity=1).encode(
        y=y, x=x, fill=fill, tooltip=tips)
    zero = alt.Chart(alt.Data(values=[{"diff": 0.0}])).mark_rule(strokeDash=[4, 3], color="#222222").encode(x=x)
    items = f" on {int(df['n'].max())} items" if "n" in df.columns else ""
    return (zero + lines + dots).properties(title=title or f"Each configuration minus {reference}{items}", width=380)


