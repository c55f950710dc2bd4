"""Charts of the MABPD pipeline and the decision viewer, drawn from what a Decision recorded (never recomputed, so
a chart cannot disagree with its decision); batch views take a ``BatchResult`` or a list of decisions."""

from __future__ import annotations

import html as _html
from typing import TYPE_CHECKING, Any

from mabpd_kit import roster
from mabpd_kit.viz import _x_rule, altair, category_color, span_html
from mabpd_kit.viz.colors import OKABE_ITO, OUTCOME_COLORS
from mabpd_kit.viz.scores import (
    _VERDICT_COLORS,
    _decisions,
    _verdict_color,
    ablation_chart,
    ablation_diff_chart,
    ablation_frame,
    score_chart,
)

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from mabpd_kit.mabpd import Decision, SADResult

__all__ = ["decision_html", "trace_text", "show", "debate_frame", "debate_html", "show_debate", "stop_chart", "ROUTES",
           "FACTORS", "ROUND1_COLORS", "decisions_frame", "sad_frame", "ablation_frame", "route_chart",
           "agent_verdicts_chart", "agent_scores_chart", "score_breakdown_chart", "score_chart", "sad_factors_chart",
           "vote_chart", "ablation_chart", "ablation_diff_chart"]

#: Routes in the order the router tries them (failed last), the x order of :func:`route_chart`.
ROUTES: tuple[str, ...] = ("neutral_veto", "strong_fast_path", "moderate_fast_path", "debate", "no_debate",
                           "single_agent", "failed")  # router order; test_viz_pipeline checks it is mabpd.router.Route
#: The SAD factors of one argument (SPEC 1.6), in the order they are computed.
FACTORS: dict[str, str] = {"q": "evidence quality q (valid / cited)",
                           "f": "evidence factor f (q if biased, max(q, floor) if neutral)",
                           "g": "agreement factor g", "k": "adjusted confidence k = clip(conf·f·g)"}


def _rounds(n: int) -> str:
    return f"{n} round" + ("" if n == 1 else "s")


def _agent_order(present: Any) -> list[str]:
    """The agents in ``present``, in roster order; any not on it after them."""
    present = list(dict.fromkeys(present))
    return [a for a in roster.names() if a in present] + [a for a in present if a not in roster.names()]


def _debate(x: Any) -> SADResult:
    """The SAD trace of a Decision (or a SADResult as is); a clear error when there was no debate."""
    if hasattr(x, "rounds"):
        return x
    deb = getattr(x, "debate", None)
    if deb is None:
        route = getattr(x, "route", "?")
        raise ValueError(f"this decision took the route {route!r}: there was no debate to draw "
                         "(pick an item whose route is 'debate')")
    return deb


def trace_text(d: Decision) -> str:
    """``d.explanation()`` with each agent's grounding spans added to its line ("; grounding: 'Doctors said'")."""
    lines = d.explanation().split("\n")
    if d.failed:
        return "\n".join(lines)
    for a, r in d.reports.items():
        found = [str(g.text).strip() for g in getattr(r, "counter_spans", ()) if g.category == "grounding" and g.valid]
        if not found:
            continue
        head = f"  {a:<8} {r.verdict:<7} conf {r.confidence:.2f} score {r.score:.2f}  spans:"
        at = next((i for i, line in enumerate(lines) if line.startswith(head)), None)
        if at is not None:
            lines[at] += "; grounding: " + ", ".join(repr(t) for t in dict.fromkeys(found))
    return "\n".join(lines)


def decision_html(d: Decision) -> str:
    """Self-contained HTML of one decision: the cleaned text with highlighted spans, then :func:`trace_text`."""
    title = "FAILED" if d.failed else f"{d.label} · {d.route} · score {d.score:.2f}"
    return (f"<div class='mabpd-decision'>{span_html(d.clean_text or d.text, d.spans(), title=title)}"
            f"<pre>{_html.escape(trace_text(d))}</pre></div>")


def _display(html: str, text: str) -> None:
    try:
        from IPython.display import HTML, display
    except ImportError:  # plain Python without IPython: the text is the whole story
        print(text)
        return
    display(HTML(html))


def show(d: Decision) -> None:
    """Display one decision (span viewer and explanation) in a notebook; prints the explanation elsewhere."""
    _display(decision_html(d), trace_text(d))


def debate_frame(x: Any) -> pd.DataFrame:
    """The debate as a transcript, one row per (round, agent). ``x``: a Decision that went to debate, or its
    SADResult."""
    import pandas as pd
    deb = _debate(x)
    rows = [{"round": r.index, "agent": w.agent, "verdict": w.verdict, "confidence": w.argument.confidence,
             "evidence": "; ".join(repr(s.text) + ("" if s.valid else " (not in text)") for s in w.argument.spans),
             "rationale": w.argument.rationale, "counter_argument": w.argument.counter_argument, "k": w.k,
             "changed": w.argument.changed} for r in deb.rounds for w in r.arguments]
    return pd.DataFrame(rows)


def debate_html(x: Any) -> str:
    """Self-contained HTML of a debate: per round its vote, s and c, then every argument."""
    deb = _debate(x)
    e = _html.escape
    parts = [f"<div class='mabpd-debate'><b>SAD</b>: g over {e(deb.agreement_over)} other agents; "
             f"stopped by {e(deb.stop_reason)} after {_rounds(len(deb.rounds))}; label <b>{e(deb.label)}</b>"]
    for r in deb.rounds:
        parts.append(f"<h4>round {r.index}: B={r.vote.B:.3f} N={r.vote.N:.3f} -> {e(r.vote.label)} "
                     f"(s={r.s:.2f}, c={r.c:.2f})</h4><table><tr><th>agent</th><th>verdict</th><th>k</th>"
                     "<th>evidence</th><th>reasoning</th><th>anticipated counter-argument</th></tr>")
        for w in r.arguments:
            a = w.argument
            ev = "; ".join(e(repr(s.text)) + ("" if s.valid else " <i>(not in text)</i>") for s in a.spans) or "none"
            parts.append(f"<tr><td>{e(a.agent)}</td><td style='color:{_VERDICT_COLORS[a.verdict]}'>{e(a.verdict)}"
                         f"{' (changed)' if a.changed else ''}</td><td>{w.k:.2f}</td><td>{ev}</td>"
                         f"<td>{e(a.rationale)}</td><td>{e(a.counter_argument) or '-'}</td></tr>")
        parts.append("</table>")
    return "".join(parts) + "</div>"


def show_debate(x: Any) -> None:
    """Display :func:`debate_html` in a notebook (prints the transcript frame elsewhere)."""
    _display(debate_html(x), debate_frame(x).to_string())


def decisions_frame(x: Any) -> pd.DataFrame:
    """One row per decision: ``Decision.row()`` plus ``pre_verifier_label``, ``verifier_check``, ``correct`` and
    ``verdict_<agent>`` / ``score_<agent>`` per agent report."""
    import pandas as pd
    rows = []
    for d in _decisions(x):
        row = d.row()
        row["pre_verifier_label"] = d.pre_verifier_label
        row["verifier_check"] = d.verifier.check if d.verifier is not None else "not_run"
        row["correct"] = None if d.gold is None or d.pred is None else bool(d.gold == d.pred)
        for a, r in d.reports.items():
            row[f"verdict_{a}"] = r.verdict
            row[f"score_{a}"] = r.score
        rows.append(row)
    return pd.DataFrame(rows)


def sad_frame(x: Any) -> pd.DataFrame:
    """One row per (item, round, agent) of every debate in ``x``: ``id`` plus :meth:`SADResult.to_frame`."""
    import pandas as pd
    if hasattr(x, "rounds"):  # a bare SADResult
        return x.to_frame().assign(id=None)
    frames = [d.debate.to_frame().assign(id=d.id) for d in _decisions(x) if d.debate is not None]
    if not frames:
        return pd.DataFrame(columns=["id", "round", "agent", "verdict", "confidence", "q", "f", "g", "k", "w", "B", "N"])
    return pd.concat(frames, ignore_index=True)


def route_chart(x: Any, *, by: str = "label", title: str | None = None) -> alt.Chart:
    """Items per route, stacked by ``by``: ``"label"``, ``"correct"`` (needs gold) or ``"verifier_check"``."""
    alt = altair()
    df = decisions_frame(x)
    if by not in ("label", "correct", "verifier_check"):
        raise ValueError("by must be 'label', 'correct' or 'verifier_check'")
    if by == "correct":
        if df["correct"].isna().all():
            raise ValueError("by='correct' needs gold labels: pass gold= to analyze / analyze_many")
        df = df.assign(correct=df["correct"].map({True: "correct", False: "wrong"}).fillna("no gold"))
    df = df.assign(**{by: df[by].fillna("failed").astype(str)})
    counts = df.groupby(["route", by], as_index=False).size().rename(columns={"size": "items"})
    order = [r for r in ROUTES if r in set(counts["route"])]
    if by == "label":
        color = _verdict_color("label", "final label")
    elif by == "correct":
        shown = [k for k in ("correct", "wrong", "no gold") if k in set(df["correct"])]   # the legend lists what is drawn
        color = alt.Color("correct:N", title="vs gold", scale=alt.Scale(domain=shown, range=[OUTCOME_COLORS[k] for k in shown]))
    else:
        color = alt.Color("verifier_check:N", title="verifier")
    chart = alt.Chart(counts).mark_bar().encode(
        y=alt.Y("route:N", sort=order, title=None),
        x=alt.X("items:Q", title="items", stack=True),
        color=color,
        tooltip=["route", by, "items"],
    )
    return chart.properties(title=title or f"Route taken by {len(df)} items", width=360)


def agent_verdicts_chart(x: Any, *, title: str | None = None) -> alt.LayerChart:
    """How often each agent's independent report says biased, by gold label, with its 95% Wilson interval."""
    alt = altair()
    import pandas as pd

    from mabpd_kit.evaluate.audit import wilson
    ds = [d for d in _decisions(x) if not d.failed and d.gold is not None and d.reports]
    if not ds:
        raise ValueError("agent_verdicts_chart needs decisions with gold labels (pass gold= to analyze_many)")
    rows = [{"agent": a, "gold": "gold biased" if d.gold == 1 else "gold neutral", "biased": r.verdict == "biased"}
            for d in ds for a, r in d.reports.items()]
    df = pd.DataFrame(rows).groupby(["agent", "gold"], as_index=False).agg(
        share=("biased", "mean"), called=("biased", "sum"), items=("biased", "size"))
    bounds = [wilson(int(k), int(n)) for k, n in zip(df["called"], df["items"])]
    df = df.assign(lo=[b[0] for b in bounds], hi=[b[1] for b in bounds],
                   count=[f"{int(k)} of {int(n)}" for k, n in zip(df["called"], df["items"])])
    n_split = sum(len({r.verdict for r in d.reports.values()}) > 1 for d in ds)
    split = n_split / len(ds)
    order = _agent_order(df["agent"])
    golds = [g for g in ("gold biased", "gold neutral") if g in set(df["gold"])]
    base = alt.Chart(df).encode(y=alt.Y("agent:N", sort=order, title=None), yOffset=alt.YOffset("gold:N", sort=golds))
    x = alt.X("share:Q", scale=alt.Scale(domain=[0, 1]), title="share of items the agent calls biased (95% Wilson interval)")
    bars = base.mark_bar().encode(
        x=x, color=alt.Color("gold:N", scale=alt.Scale(domain=golds, range=[_VERDICT_COLORS[g.split()[1]] for g in golds]),
                             title=None),
        tooltip=["agent", "gold", alt.Tooltip("share:Q", format=".2f"), "count",
                 alt.Tooltip("lo:Q", format=".2f"), alt.Tooltip("hi:Q", format=".2f")])
    whiskers = base.mark_rule(color="#000000", strokeWidth=1.2).encode(x=alt.X("lo:Q", scale=alt.Scale(domain=[0, 1])), x2="hi:Q")
    counts = base.mark_text(align="left", dx=4, fontSize=10, color="#333333").encode(x="hi:Q", text="count:N")
    return alt.layer(bars, whiskers, counts).properties(
        title=title or f"Independent agent verdicts on {len(ds)} items (agents disagree on {split:.0%}, {n_split} of {len(ds)})",
        width=360)


def agent_scores_chart(d: Decision, *, title: str | None = None) -> alt.LayerChart:
    """One bar per agent: its report score, coloured by its verdict, labelled with valid/cited spans, and the
    score boundary."""
    alt = altair()
    import pandas as pd
    if not d.reports:
        raise ValueError(f"decision {d.id!r} has no agent reports ({d.error or d.route})")
    df = pd.DataFrame([{"agent": a, "score": r.score, "confidence": r.confidence, "verdict": r.verdict,
                        "spans": f"{sum(s.valid for s in r.spans)}/{len(r.spans)} valid"}
                       for a, r in d.reports.items()])
    base = alt.Chart(df).encode(y=alt.Y("agent:N", sort=list(df["agent"]), title=None))
    drawn = [v for v in _VERDICT_COLORS if v in set(df["verdict"])]   # the legend lists only the verdicts drawn
    color = alt.Color("verdict:N", title="verdict", legend=alt.Legend(orient="bottom"),
                      scale=alt.Scale(domain=drawn, range=[_VERDICT_COLORS[v] for v in drawn]))
    bars = base.mark_bar().encode(x=alt.X("score:Q", scale=alt.Scale(domain=[0, 1]), title="agent score"),
                                  color=color, tooltip=["agent", "verdict", "score", "confidence", "spans"])
    text = base.mark_text(align="left", dx=4).encode(x="score:Q", text="spans:N")
    layers = [bars, text]
    if d.scoring is not None:
        layers.append(_x_rule("boundary", d.scoring.boundary, "#333333"))
    return alt.layer(*layers).properties(title=title or f"Agent reports · {d.label} via {d.route}", width=360)


def score_breakdown_chart(d: Decision, *, title: str | None = None) -> alt.LayerChart:
    """The combined score as a stack of weight × agent score (SPEC 1.4), with the boundary."""
    alt = altair()
    import pandas as pd
    sc = d.scoring
    if sc is None:
        raise ValueError(f"decision {d.id!r} has no score ({d.error or d.route})")
    df = pd.DataFrame([{"item": "score", "agent": a, "weight": sc.weights[a], "agent score": c,
                        "contribution": sc.weights[a] * c} for a, c in sc.components.items()])
    if (df["contribution"] > 0).any():   # an agent that adds nothing draws no segment: the legend leaves it out
        df = df[df["contribution"] > 0]
    bars = alt.Chart(df).mark_bar().encode(
        x=alt.X("sum(contribution):Q", scale=alt.Scale(domain=[0, 1]), title="combined score = Σ weight × agent score"),
        y=alt.Y("item:N", title=None, axis=None),
        color=category_color("agent", categories=list(df["agent"]), kind="agent"),
        order=alt.Order("agent:N"),
        tooltip=["agent", "weight", "agent score", alt.Tooltip("contribution:Q", format=".3f")],
    )
    rule = _x_rule("boundary", sc.boundary, "#333333", size=2)
    named = alt.Chart(pd.DataFrame({"boundary": [sc.boundary], "text": [f"boundary {sc.boundary:.2f}"]})).mark_text(
        align="left", baseline="bottom", dx=4, dy=-2, y=0, fontSize=10, color="#333333").encode(x="boundary:Q", text="text:N")
    verdict = "above" if sc.above_boundary else "below"
    return alt.layer(bars, rule, named).properties(
        title=title or f"Score {sc.score:.3f} ({verdict} the {sc.boundary:.2f} boundary)", width=420, height=60)


def sad_factors_chart(x: Any, *, title: str | None = None) -> alt.Chart:
    """q, f, g and k of every argument, one panel per factor and one row per round."""
    alt = altair()
    deb = _debate(x)
    df = deb.to_frame()
    long = df.melt(id_vars=["round", "agent", "verdict", "n_cited", "n_valid"], value_vars=list(FACTORS),
                   var_name="factor", value_name="value")
    long["meaning"] = long["factor"].map(FACTORS)
    chart = alt.Chart(long).mark_bar().encode(
        x=alt.X("agent:N", sort=[*roster.names(), *(a for a in dict.fromkeys(df["agent"]) if a not in roster.names())],
                title=None),
        y=alt.Y("value:Q", title=None),
        color=_verdict_color(),
        tooltip=["round", "agent", "verdict", "meaning", alt.Tooltip("value:Q", format=".3f"), "n_cited", "n_valid"],
    ).properties(width=110, height=110)
    return chart.facet(
        column=alt.Column("factor:N", sort=list(FACTORS), title=None),
        row=alt.Row("round:O", title=None, header=alt.Header(labelExpr="'round ' + datum.value")),
    ).properties(title=title or f"SAD factors per round ({_rounds(len(deb.rounds))})")


def vote_chart(x: Any, *, title: str | None = None) -> alt.LayerChart:
    """The role-weighted vote per round: B and N as shares of B + N (empty when both are 0), with the boundary."""
    alt = altair()
    import pandas as pd
    deb = _debate(x)
    rows = []
    for r in deb.rounds:
        v = r.vote
        total = v.B + v.N
        for side, val in (("B (biased)", v.B), ("N (neutral)", v.N)):
            rows.append({"round": f"round {r.index}", "side": side, "weight": val,
                         "share": val / total if total > 0 else 0.0, "label": v.label})
    df = pd.DataFrame(rows)
    bars = alt.Chart(df).mark_bar().encode(
        y=alt.Y("round:N", title=None),
        x=alt.X("share:Q", scale=alt.Scale(domain=[0, 1]), title="share of the weighted vote"),
        color=alt.Color("side:N", scale=alt.Scale(domain=["B (biased)", "N (neutral)"], range=list(_VERDICT_COLORS.values())),
                        title=None),
        order=alt.Order("side:N"),
        tooltip=["round", "side", alt.Tooltip("weight:Q", format=".3f"), alt.Tooltip("share:Q", format=".3f"), "label"],
    )
    rule = _x_rule("boundary", deb.vote.boundary, "#333333", size=2)
    return alt.layer(bars, rule).properties(title=title or f"SAD vote: {deb.label}", width=420)


#: The SAD stop reasons in a fixed order and colour (none a system's colour or a reserved hue).
STOP_REASON_COLORS: dict[str, str] = {"dual_threshold": OKABE_ITO["yellow"], "agreement": "#777777",
                                      "max_rounds": "#aaaaaa"}
#: What the stop chart colours: a debate's state at round 1.
ROUND1_COLORS: dict[str, str] = {**{f"ended: {r}": c for r, c in STOP_REASON_COLORS.items()}, "went on to round 2": "#dddddd"}


def _at_round_1(stop_reason: str, rounds: int) -> str:
    return f"ended: {stop_reason}" if rounds == 1 else "went on to round 2"


def _spread(pts: pd.DataFrame, tau_s: float, lanes: int = 7, step: float = 0.035) -> list[float]:
    """The x at which each point is drawn: in a column of more than ``lanes`` circles at one s, neighbours in c
    zigzag sideways by up to (lanes // 2) * step, never across ``tau_s`` nor out of [-1, 1]."""
    out = []
    for s, group in pts.groupby("s", sort=False):
        order = group["c"].rank(method="first").astype(int) - 1
        for i, k in zip(group.index, order):
            x = s + ((k * 3) % lanes - lanes // 2) * step if len(group) > lanes else s
            x = max(x, tau_s) if s >= tau_s else min(x, tau_s - step / 3)
            out.append((i, min(1.0, max(-1.0, x))))
    return [x for _, x in sorted(out)]


def stop_chart(x: Any, *, tau_s: float | None = None, tau_v: float | None = None, title: str | None = None) -> alt.LayerChart:
    """Every debate's round-1 (s, c) against the dual thresholds (default ``Config().sad``): a point in the
    upper-right box ends after round 1. Equal points are one circle sized by their count."""
    alt = altair()
    import pandas as pd

    from mabpd_kit.config import Config
    sad = Config().sad
    ts, tv = sad.tau_s if tau_s is None else tau_s, sad.tau_v if tau_v is None else tau_v
    rows = [{"s": round(d.debate.rounds[0].s, 6), "c": round(d.debate.rounds[0].c, 6),
             "stop_reason": d.debate.stop_reason, "rounds": len(d.debate.rounds),
             "at_round_1": _at_round_1(d.debate.stop_reason, len(d.debate.rounds))}
            for d in _decisions(x) if d.debate is not None]
    if not rows:
        raise ValueError("no item of this batch went to debate: nothing to draw")
    df = pd.DataFrame(rows)
    pts_df = df.groupby(["s", "c", "at_round_1", "stop_reason"], as_index=False).agg(
        debates=("rounds", "size"), mean_rounds=("rounds", "mean"))
    pts_df["s_drawn"] = _spread(pts_df, ts)
    pts_df["label"] = [f"s {r.s:g}, c {r.c:.3f}, {r.at_round_1}, finally stopped by {r.stop_reason}; {r.debates} "
                       f"debate{'s' if r.debates != 1 else ''}" for r in pts_df.itertuples()]   # aria: the real s only
    states = [r for r in ROUND1_COLORS if r in set(df.at_round_1)]   # the legend lists only states drawn
    most = int(pts_df.debates.max())
    spread = float((pts_df.s_drawn - pts_df.s).abs().max())
    x_title = "s = (agreeing - not) / agents, round 1" + (f" (circles spread up to ±{spread:.2f} sideways)" if spread > 1e-9 else "")
    pts = alt.Chart(pts_df).mark_circle(opacity=0.85, stroke="#333333", strokeWidth=1).encode(
        x=alt.X("s_drawn:Q", scale=alt.Scale(domain=[-1, 1]), title=x_title,
                axis=alt.Axis(values=sorted(set(pts_df.s)), format="g")),   # ticks only at the s values that occur
        description="label:N",
        y=alt.Y("c:Q", scale=alt.Scale(domain=[0, 1]), title="c = max(B, N) / (B + N), round 1"),
        size=alt.Size("debates:Q", title="debates", scale=alt.Scale(domain=[1, max(2, most)], range=[40, 400]),
                      legend=None if most == 1 else alt.Legend(values=sorted({1, most // 2, most}), format="d")),
        color=alt.Color("at_round_1:N", title="at round 1",
                        scale=alt.Scale(domain=states, range=[ROUND1_COLORS[r] for r in states])),
        tooltip=[alt.Tooltip("s:Q", title="s"), alt.Tooltip("c:Q", title="c", format=".3f"),
                 alt.Tooltip("at_round_1:N", title="at round 1"), alt.Tooltip("stop_reason:N", title="finally stopped by"),
                 alt.Tooltip("debates:Q", title="debates"), alt.Tooltip("mean_rounds:Q", title="rounds (mean)", format=".2f")])
    rules = alt.Chart(pd.DataFrame({"s": [ts], "c": [tv]}))
    t = title or f"Round-1 agreement s and confidence c (tau_s={ts}, tau_v={tv})"
    return alt.layer(pts, rules.mark_rule(strokeDash=[4, 3], color="#555555").encode(x="s:Q"),
                     rules.mark_rule(strokeDash=[4, 3], color="#555555").encode(y="c:Q")).properties(
        title=t, width=360, height=260,
        description=f"{t}. {len(df)} debates; " + ", ".join(f"{int((df.at_round_1 == r).sum())} {r}" for r in states) + ".")
