"""Charts for identity bias in multi-agent debate (lesson 06), from the frames of :mod:`mabpd_kit.identity`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from mabpd_kit.config import Config
from mabpd_kit.identity import BeliefSpec, IBCResult, identity_report, paper_table, recovered_gap, simulate
from mabpd_kit.viz import _x_rule, altair
from mabpd_kit.viz.colors import OKABE_ITO, OTHER_COLOR

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt

__all__ = ["CONDITION_COLORS", "accuracy_chart", "anonymisation_verdict", "behaviour_chart", "cut_phrase", "explore",
           "ibc_chart", "recovery_chart", "trust_chart"]

#: One colour per debate condition: two greys, never a reserved hue or a system's colour.
CONDITION_COLORS: dict[str, str] = {"vanilla": "#555555", "anonymised": "#b3b3b3", "all": OTHER_COLOR}
#: "yours" against "paper" (ibc_chart), and the two measures of recovery_chart.
YOURS_COLOR, PAPER_COLOR = OKABE_ITO["orange"], "#bab0ac"   # orange = yours in every lesson; vermillion = biased
#: The two measures of recovery_chart: greys with a shape each (nothing here is "yours", neutral or wrong).
RECOVERY_COLORS: dict[str, str] = {"recovered gap": "#555555", "IBC (all rounds)": "#b3b3b3"}
RECOVERY_SHAPES: dict[str, str] = {"recovered gap": "circle", "IBC (all rounds)": "square"}


def _condition_order(values: Sequence[str]) -> list[str]:
    """The conditions in one order for every chart: vanilla, anonymised, then others."""
    return [v for v in CONDITION_COLORS if v in set(values)] + sorted(set(values) - set(CONDITION_COLORS))


def _condition_color(values: Sequence[str], title: str = "condition"):
    alt = altair()
    domain = _condition_order(values)
    rng = [CONDITION_COLORS.get(v, OTHER_COLOR) for v in domain]
    return alt.Color("condition:N", scale=alt.Scale(domain=domain, range=rng), title=title)


def behaviour_chart(summary: pd.DataFrame, *, title: str = "On disagreement: follow the peer or stay?") -> alt.Chart:
    """Conformity, obstinacy and Delta per condition, with 95% CIs when the summary has ``*_lo`` / ``*_hi``."""
    if "n_unparsed" in summary.columns and int(summary["n_unparsed"].sum()):
        how = f", read as {summary['unparsed'].iloc[0]}" if "unparsed" in summary.columns else ""
        title = f"{title} ({int(summary['n_unparsed'].sum())} unparsed answers{how})"
    rows = [{"condition": r["condition"], "measure": m, "value": r[m], "lo": r.get(f"{m}_lo", float("nan")),
             "hi": r.get(f"{m}_hi", float("nan"))}
            for _, r in summary.iterrows() for m in ("conformity", "obstinacy", "delta")]
    return _bars_with_cis(pd.DataFrame(rows), x="measure", order=["conformity", "obstinacy", "delta"], y="value",
                          y_title="share of disagreement pairs (Delta: conformity - obstinacy)", title=title, width=320)


def trust_chart(trust: pd.DataFrame, *, title: str = "Subversion and correction") -> alt.LayerChart:
    """Subversion (right -> wrong) and correction (wrong -> right) rates per condition, with CIs when computed."""
    rows = [{"condition": r["condition"], "event": ev, "rate": r[f"{ev}_rate"],
             "lo": r.get(f"{ev}_rate_lo", float("nan")), "hi": r.get(f"{ev}_rate_hi", float("nan"))}
            for _, r in trust.iterrows() for ev in ("subversion", "correction")]
    return _bars_with_cis(pd.DataFrame(rows), x="event", order=["subversion", "correction"], y="rate",
                          y_title="rate per exposure", title=title, width=220)


def _bars_with_cis(df: pd.DataFrame, *, x: str, order: list[str], y: str, y_title: str, title: str,
                   width: int) -> alt.LayerChart:
    """Bars of ``y`` per ``x``, one per condition side by side, with 95% CI rules when ``lo`` / ``hi`` hold any."""
    alt = altair()
    base = alt.Chart(df).encode(
        x=alt.X(f"{x}:N", sort=order, title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("condition:N", sort=_condition_order(df["condition"].tolist())))
    bars = base.mark_bar().encode(
        y=alt.Y(f"{y}:Q", title=y_title),
        color=_condition_color(df["condition"].tolist()),
        tooltip=["condition", x, alt.Tooltip(f"{y}:Q", format=".3f")])
    layers = [bars]
    if df["lo"].notna().any():
        layers.append(base.mark_rule(color="black").encode(y="lo:Q", y2="hi:Q"))
    desc = (f"{title}: {y_title} per {x} ({', '.join(order)}), one bar per condition"
            + (", with 95% confidence intervals" if df["lo"].notna().any() else "") + ".")
    return alt.layer(*layers).properties(title=title, width=width, height=220, description=desc)


#: Line style per accuracy kind (accuracy_chart): solid for the majority vote, dashed for one agent.
ACCURACY_DASHES: dict[str, list[int]] = {"majority vote": [1, 0], "single agent": [6, 4]}
#: How far each condition's points sit from the round they belong to, so equal values never hide a line.
_CONDITION_OFFSET: dict[str, float] = {"vanilla": -0.06, "anonymised": 0.06}


def accuracy_chart(accuracy: pd.DataFrame, *, title: str = "Accuracy by round") -> alt.Chart:
    """Majority-vote (solid) and mean single-agent (dashed) accuracy per round and condition."""
    alt = altair()
    df = accuracy.melt(id_vars=["condition", "round"], value_vars=["majority_accuracy", "agent_accuracy"],
                       var_name="kind", value_name="accuracy")
    df["kind"] = df["kind"].map({"majority_accuracy": "majority vote", "agent_accuracy": "single agent"})
    df["x"] = df["round"].astype(float) + df["condition"].map(_CONDITION_OFFSET).fillna(0.0)
    rounds = sorted(int(r) for r in df["round"].unique())
    kinds = list(ACCURACY_DASHES)
    return alt.Chart(df).mark_line(point=True, opacity=0.85).encode(
        x=alt.X("x:Q", title="round (0 = independent)", scale=alt.Scale(domain=[rounds[0] - 0.3, rounds[-1] + 0.3]),
                axis=alt.Axis(values=rounds, format="d", labelAngle=0)),
        y=alt.Y("accuracy:Q", scale=alt.Scale(domain=[0, 1])),
        color=_condition_color(df["condition"].tolist()),
        shape=alt.Shape("condition:N", legend=None),
        strokeDash=alt.StrokeDash("kind:N", title="line", legend=alt.Legend(symbolType="stroke"),
                                  scale=alt.Scale(domain=kinds, range=[ACCURACY_DASHES[k] for k in kinds])),
        detail="kind:N",
        tooltip=["condition", "round", "kind", alt.Tooltip("accuracy:Q", format=".3f")],
    ).properties(title=title, width=260, height=220,
                 description=f"{title}: majority-vote (solid) and single-agent (dashed) accuracy per round and "
                             "condition (vanilla drawn slightly left of each round, anonymised slightly right).")


def ibc_chart(mine: dict[str, IBCResult | float] | None = None, *, title: str = "IBC: the paper beside yours") -> alt.Chart:
    """The paper's IBC per model / dataset (grey) beside your runs (``mine``: label -> IBC result or number)."""
    alt = altair()
    df = paper_table().assign(label=lambda d: d["model"] + " / " + d["dataset"], source="paper")[["label", "ibc", "source"]]
    extra = [{"label": label, "ibc": v.estimate, "source": "yours", "lo": v.lo, "hi": v.hi} if isinstance(v, IBCResult)
             else {"label": label, "ibc": float(v), "source": "yours", "lo": float("nan"), "hi": float("nan")}
             for label, v in (mine or {}).items()]
    df = pd.concat([df, pd.DataFrame(extra, columns=["label", "ibc", "source", "lo", "hi"])], ignore_index=True)
    base = alt.Chart(df).encode(y=alt.Y("label:N", sort=None, title=None))
    bars = base.mark_bar().encode(
        x=alt.X("ibc:Q", title="IBC = Delta(vanilla) - Delta(anonymised)"),
        color=alt.Color("source:N", scale=alt.Scale(domain=["paper", "yours"], range=[PAPER_COLOR, YOURS_COLOR]), title=None),
        tooltip=["label", "source", alt.Tooltip("ibc:Q", format="+.3f")])
    zero = _x_rule("x", 0.0, "black", dashed=False)
    layers = [bars, zero]
    if df["lo"].notna().any():
        layers.append(base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q"))
    desc = f"{title}: IBC per model and dataset, the paper's in grey, yours highlighted" + (
        f" ({', '.join(f'{r.label} {r.ibc:+.3f}' for r in df[df.source == 'yours'].itertuples())})" if extra else "") + "."
    return alt.layer(*layers).properties(title=title, width=360, height=alt.Step(18), description=desc)


def recovery_chart(sweep: pd.DataFrame, *, title: str = "Does the measure recover the planted bias?") -> alt.Chart:
    """Planted ``w_peer - w_self`` against the recovered gap and the raw IBC, one point per seed; dashed: y = x."""
    alt = altair()
    df = sweep.melt(id_vars=["gap", "seed"], value_vars=["recovered_gap", "ibc"], var_name="measure", value_name="value")
    df["measure"] = df["measure"].map({"recovered_gap": "recovered gap", "ibc": "IBC (all rounds)"})
    lo, hi = float(sweep["gap"].min()), float(sweep["gap"].max())
    diag = alt.Chart(pd.DataFrame({"gap": [lo, hi], "value": [lo, hi]})).mark_line(strokeDash=[4, 4], color="black")
    diag = diag.encode(x="gap:Q", y="value:Q")
    pts = alt.Chart(df).mark_point(size=60, opacity=0.9, filled=True).encode(
        x=alt.X("gap:Q", title="planted w_peer - w_self"),
        y=alt.Y("value:Q", title="measured"),
        color=alt.Color("measure:N", title=None,
                        scale=alt.Scale(domain=list(RECOVERY_COLORS), range=list(RECOVERY_COLORS.values()))),
        shape=alt.Shape("measure:N", title=None,
                        scale=alt.Scale(domain=list(RECOVERY_SHAPES), range=list(RECOVERY_SHAPES.values()))),
        tooltip=["gap", "seed", "measure", alt.Tooltip("value:Q", format="+.3f")])
    return alt.layer(diag, pts).properties(
        title=title, width=320, height=260,
        description=f"{title}: planted w_peer - w_self against the recovered gap (dark grey circles) and the "
                    "all-round IBC (light grey squares), one point per seed; dashed line y = x is perfect recovery.")


def explore(w_self: float = 1.0, w_peer: float = 1.5, n_agents: int = 5, rounds: int = 2, competence: float = 0.5,
            prior_strength: float = 1.0, n_questions: int = 300, seed: int = 0,
            config: Config | None = None) -> tuple[alt.HConcatChart, str]:
    """Plant weights in the belief simulator and measure: ``(chart, caption)`` for a ParameterPanel (the
    anonymisation part read through 95% bootstrap intervals, :func:`anonymisation_verdict`)."""
    alt = altair()
    spec = BeliefSpec(n_agents=n_agents, rounds=rounds, w_self=w_self, w_peer=w_peer, competence=competence,
                      prior_strength=prior_strength)
    logs = simulate(spec, n_questions=n_questions, seed=seed)
    rep = identity_report(logs, ci=True, config=config)
    assert rep.ibc is not None
    chart = alt.hconcat(   # about 800 px wide with the legends below: fits a 1,280 px screen beside Jupyter's margins
        behaviour_chart(rep.summary, title="Conformity / obstinacy / Delta").properties(width=230),
        ibc_chart({"simulator (yours)": rep.ibc}).properties(width=220),
    ).resolve_scale(color="independent").configure_legend(orient="bottom", direction="horizontal")
    caption = (f"planted w_peer - w_self = {w_peer - w_self:+.2f} -> IBC {rep.ibc.estimate:+.3f}, "
               f"recovered gap {recovered_gap(logs, spec):+.2f}; {anonymisation_verdict(rep.trust, rep.cuts)} "
               f"(simulator, offline, {n_questions} questions)")
    return chart.properties(description=f"Belief simulator at w_self={w_self}, w_peer={w_peer}: {caption}"), caption


def anonymisation_verdict(trust: pd.DataFrame, cuts: dict[str, float]) -> str:
    """What anonymisation does to subversion and correction (``trust`` from ``trust_rates(ci=True)``); an event
    whose two conditions' 95% intervals overlap is not called moved."""
    t = trust.set_index("condition")
    moved = [cut_phrase(ev, cuts[f"{ev}_cut"]) for ev in ("subversion", "correction")
             if max(t[f"{ev}_rate_lo"]) > min(t[f"{ev}_rate_hi"])]
    if not moved:
        return ("anonymisation changes neither subversion nor correction measurably "
                "(the conditions' 95% intervals overlap)")
    rest = [ev for ev in ("subversion", "correction") if not any(ev in m for m in moved)]
    return (f"anonymisation {' and '.join(moved)} (the conditions' 95% intervals apart)"
            + (f"; {rest[0]} within its interval" if rest else ""))


def cut_phrase(event: str, cut: float) -> str:
    """A relative cut in words: 'cuts subversion by 64%', 'raises subversion by 119%', 'leaves subversion
    unchanged' (under half a per cent), 'leaves subversion undefined' (NaN)."""
    if cut != cut:
        return f"leaves {event} undefined (no exposures)"
    if abs(cut) < 0.005:
        return f"leaves {event} unchanged"
    return f"{'cuts' if cut > 0 else 'raises'} {event} by {abs(cut):.0%}"
