"""Charts and the article viewer for corpus analysis (lesson 09, the corpus report); groups under
``settings.min_group`` articles are drawn faded, so a wide interval is never read as a finding."""

from __future__ import annotations

import html as _html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mabpd_kit.viz import altair, category_color, describe
from mabpd_kit.viz.colors import OTHER_COLOR, OUTCOME_COLORS
from mabpd_kit.viz.spans import span_html

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

__all__ = ["article_html", "category_mix_chart", "group_chart", "threshold_chart", "trend_chart"]

_TITLES = {"biased_rate": "share of biased articles", "share_biased": "share of biased sentences",
           "spans_per_100w": "evidence spans per 100 words",
           "prevalence": "corrected share of sentences judged biased (BABE-style lexical/framing bias)",
           "biased_per_1000w": "flagged sentences per 1,000 words", "spans_per_100w_rate": "evidence spans per 100 words"}


def group_chart(agg: pd.DataFrame, by: str, measure: str = "biased_rate", *, title: str | None = None,
                top: int | None = 30) -> alt.LayerChart:
    """One bar per group (``aggregate(...)``) with its bootstrap interval; ``top``: the largest groups only."""
    alt = altair()
    data = agg.sort_values("n", ascending=False).head(top) if top else agg
    data = data.assign(size=data["small"].map({True: "small group", False: "enough articles"}))
    order = data.sort_values(measure, ascending=False)[by].astype(str).tolist()
    y = alt.Y(f"{by}:N", sort=order, title=by)
    base = alt.Chart(data).encode(y=y)
    bars = base.mark_bar(color=OUTCOME_COLORS["biased"]).encode(
        x=alt.X(f"{measure}:Q", title=_TITLES.get(measure, measure)),
        opacity=alt.Opacity("size:N", title=None, scale=alt.Scale(   # the legend lists only the kinds drawn
            domain=[k for k in ("enough articles", "small group") if k in set(data["size"])] or ["enough articles"],
            range=[o for k, o in (("enough articles", 0.85), ("small group", 0.3)) if k in set(data["size"])] or [0.85])),
        tooltip=[by, "n", alt.Tooltip(f"{measure}:Q", format=".3f"), alt.Tooltip(f"{measure}_lo:Q", format=".3f"),
                 alt.Tooltip(f"{measure}_hi:Q", format=".3f"), "warning"])
    ci = base.mark_rule(color="#1a1a1a").encode(x=f"{measure}_lo:Q", x2=f"{measure}_hi:Q")
    n = base.mark_text(align="left", dx=4, fontSize=10, color="#555555").encode(
        x=f"{measure}_hi:Q", text=alt.Text("n:Q", format="d"))
    chart = alt.layer(bars, ci, n).properties(width=360, height=alt.Step(16))
    chart = chart.properties(title=title or f"{_TITLES.get(measure, measure)} by {by} (95% CI; n at the right)")
    if not len(data):
        return describe(chart, f"No {by} to show.")
    best = data.sort_values(measure, ascending=False).iloc[0]
    name = _TITLES.get(measure, measure)
    return describe(chart, f"{name[:1].upper() + name[1:]} for {len(data)} values of {by}, with 95% "
                           f"intervals; highest {best[by]} at {best[measure]:.2f} (n = {int(best['n'])}"
                           f"{', a small group' if best['small'] else ''}); {int(data['small'].sum())} small groups faded.")


def category_mix_chart(mix: pd.DataFrame, by: str, *, groups: Sequence[Any] | None = None,
                       title: str | None = None) -> alt.Chart:
    """Stacked bars: each group's evidence spans split by category."""
    alt = altair()
    data = mix if groups is None else mix[mix[by].isin(list(groups))]
    cats = data.groupby("category")["n"].sum().sort_values(ascending=False).index.tolist()
    chart = alt.Chart(data).mark_bar().encode(
        y=alt.Y(f"{by}:N", title=by),
        x=alt.X("share:Q", stack="normalize", title="share of evidence spans", axis=alt.Axis(format="%")),
        color=category_color("category", categories=cats),
        order=alt.Order("n:Q", sort="descending"),
        tooltip=[by, "category", "n", alt.Tooltip("share:Q", format=".0%")],
    ).properties(width=360, height=alt.Step(16))
    chart = chart.properties(title=title or f"category mix of the evidence by {by}")
    top = cats[0] if cats else "none"
    return describe(chart, f"Evidence spans of {data[by].nunique()} values of {by} split into {len(cats)} categories "
                           f"(shares of each group's spans); the most frequent category overall is {top}.")


def trend_chart(tr: pd.DataFrame, *, by: str | None = None, title: str | None = None,
                coverage: float = 0.98, measure: str = "biased_rate") -> alt.LayerChart:
    """The share of biased articles (or another ``measure``) per month with its interval band; only the months
    holding the central ``coverage`` of the articles are drawn (a stray 1900 date would squash the axis)."""
    alt = altair()
    data = tr.sort_values("month")
    cum = data.groupby("month")["n"].sum().cumsum()
    total = float(cum.iloc[-1]) if len(cum) else 0.0
    lo_m = cum.index[cum >= total * (1 - coverage) / 2][0] if total else None
    hi_m = cum.index[cum >= total * (1 + coverage) / 2][0] if total else None
    shown = data[(data["month"] >= lo_m) & (data["month"] <= hi_m)] if total else data
    left_out = int(data["n"].sum() - shown["n"].sum())
    x = alt.X("month:T", title="month", timeUnit="yearmonth")
    color = (category_color(by, categories=sorted(tr[by].astype(str).unique())) if by
             else alt.value(OUTCOME_COLORS["biased"]))
    sizes = shown["small"].map({True: "few articles", False: "enough articles"})
    base = alt.Chart(shown.assign(month=shown["month"] + "-01", size=sizes)).encode(x=x)
    name = _TITLES.get(measure, measure)
    band = base.mark_area(opacity=0.2).encode(y=alt.Y(f"{measure}_lo:Q", title=name), y2=f"{measure}_hi:Q", color=color)
    line = base.mark_line().encode(y=f"{measure}:Q", color=color)
    points = base.mark_point(size=40).encode(
        y=f"{measure}:Q", color=color,
        fill=alt.Fill("size:N", title=None, scale=alt.Scale(   # the legend lists only the kinds drawn
            domain=[k for k in ("enough articles", "few articles") if k in set(sizes)] or ["enough articles"],
            range=[c for k, c in (("enough articles", OUTCOME_COLORS["biased"]), ("few articles", "white"))
                   if k in set(sizes)] or [OUTCOME_COLORS["biased"]])),
        tooltip=["month", "n", alt.Tooltip(f"{measure}:Q", format=".2f"), "warning"])
    note = f"; {left_out} article{'s' if left_out != 1 else ''} with stray dates not drawn" if left_out else ""
    chart = alt.layer(band, line, points).properties(width=420, height=200)
    chart = chart.properties(title=title or f"{name} per month (95% CI band{note})")
    span = f"from {shown['month'].min()} to {shown['month'].max()}" if len(shown) else "none"
    return describe(chart, f"{name[:1].upper() + name[1:]} per month, {span}, with a 95% interval band; "
                           f"{int(shown['small'].sum()) if len(shown) else 0} months with few articles drawn hollow.")


def _count_axis(values: Any, step: int) -> alt.Axis:
    """Whole-number ticks on bin edges, about ten of them (a label per bin crowds a 0-64 axis)."""
    alt = altair()
    lo, hi = int(values.min()), int(values.max()) + step
    every = step * max(1, -(-((hi - lo) // step) // 10))
    return alt.Axis(format="d", values=list(range(lo, hi + 1, every)), labelOverlap=True)


def threshold_chart(df: pd.DataFrame, stat: str, threshold: float, *, gold: str | None = "label",
                    title: str | None = None) -> alt.LayerChart:
    """How the article statistic is spread (by gold label when there is one) and where the rule cuts; ``df``: one
    row per article, or value counts with an ``articles`` column."""
    import pandas as pd
    alt = altair()
    data = df[~df["failed"].astype(bool)] if "failed" in df else df
    weighted = "articles" in data
    data = data if weighted else data.assign(articles=1)
    if gold and gold in data:
        data = data.assign(gold=data[gold].map({1: "biased", 0: "neutral"}))
        color = alt.Color("gold:N", scale=alt.Scale(domain=["biased", "neutral"],
                                                    range=[OUTCOME_COLORS["biased"], OUTCOME_COLORS["neutral"]]),
                          title="gold label")
    else:
        data = data.assign(gold="all")
        color = alt.value(OTHER_COLOR)   # no gold label: grey (blue would say "neutral")
    values = data[stat].dropna()
    whole = bool(len(values)) and bool((values % 1 == 0).all())   # a count: integer bins and ticks, never 0.1 steps
    step = max(1, -(-int(values.max() - values.min()) // 40)) if whole else None
    hist = alt.Chart(data[[stat, "gold", "articles"]]).mark_bar(opacity=0.6).encode(
        x=alt.X(f"{stat}:Q", title=stat.replace("_", " "),
                bin=alt.Bin(step=step, extent=[int(values.min()), int(values.max()) + step]) if whole else alt.Bin(maxbins=40),
                axis=_count_axis(values, step) if whole else alt.Axis()),
        y=alt.Y("sum(articles):Q", stack=None, title="articles", axis=alt.Axis(tickMinStep=1)), color=color)
    rule = alt.Chart(pd.DataFrame({"t": [threshold]})).mark_rule(color="#1a1a1a", strokeDash=[4, 3], size=2).encode(
        x="t:Q", tooltip=[alt.Tooltip("t:Q", title="threshold")])
    chart = alt.layer(hist, rule).properties(width=420, height=200)
    chart = chart.properties(title=title or f"articles by {stat.replace('_', ' ')}; dashed: the rule's threshold {threshold:g}")
    above = int(data.loc[data[stat] >= threshold, "articles"].sum())
    return describe(chart, f"Histogram of {int(data['articles'].sum())} articles by {stat.replace('_', ' ')}"
                           f"{', coloured by gold label' if gold and gold in df else ''}; {above} are at or above the "
                           f"threshold {threshold:g} (dashed line) and so judged biased.")


def article_html(article: Any, *, threshold: float | None = None, stat: str = "n_biased",
                 excerpt: int | None = None) -> str:
    """One article as HTML: its text with its biased sentences' spans highlighted, then each flagged sentence's trace;
    ``excerpt=k``: only the top flagged sentence and ``k`` either side."""
    from mabpd_kit.types import Span
    a = article
    if a.failed:
        return f"<div class='corpus-article'><b>{_html.escape(a.id)}</b>: failed ({_html.escape(a.error or '')})</div>"
    sents = sorted(a.sentences, key=lambda s: s.start)
    lo, hi, where = 0, len(a.text), ""
    flagged_all = [s for s in sents if s.label == "biased"]
    if excerpt is not None and sents:
        c = sents.index(max(flagged_all, key=lambda s: s.score or 0)) if flagged_all else 0
        window = sents[max(0, c - excerpt): c + excerpt + 1]
        lo, hi = window[0].start, window[-1].end
        where = f" · excerpt: sentences {window[0].k + 1}-{window[-1].k + 1}"
    best: dict[tuple[int, int, str], Any] = {}  # one highlight per stretch and category (agents often agree)
    for sent in sents:
        for s in sent.spans:
            key = (s.start, s.end, s.category)
            if lo <= s.start and s.end <= hi and (key not in best or best[key].score < s.score):
                best[key] = s
    spans = [Span(text=s.text, start=s.start - lo, end=s.end - lo, category=s.category, agent=s.agent, score=s.score)
             for s in best.values()]
    value = getattr(a, stat, None)
    verdict = "" if threshold is None or value is None else (" · BIASED" if value >= threshold else " · neutral")
    head = (f"{a.id}{verdict} · {a.n_biased}/{a.n_sentences} sentences biased · "
            f"{a.spans_per_100w or 0:.1f} spans per 100 words{where}")
    parts = [f"<div class='corpus-article'>{span_html(a.text[lo:hi], spans, title=head)}"]
    flagged = [s for s in flagged_all if lo <= s.start and s.end <= hi]
    if flagged:
        parts.append(f"<h4>Flagged sentences ({len(flagged)}): how each decision was reached</h4>")
    for s in flagged:
        parts.append(f"<details class='trace'><summary>sentence {s.k + 1} (score {s.score or 0:.2f}, {_html.escape(s.route)}): "
                     f"{_html.escape(a.text[s.start:s.end][:160])}</summary><pre>{_html.escape(s.trace)}</pre></details>")
    parts.append("</div>")
    return "".join(parts)
