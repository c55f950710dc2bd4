"""``mabpd demo``'s samples and report page (the command is :mod:`mabpd_kit.cli.demo`): the rule-based pipeline
offline on the 28 shipped sentences, a route chart and each decision with its spans and trace."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from mabpd_kit.data.shipped import load_samples, samples_path

if TYPE_CHECKING:
    import pandas as pd

    from mabpd_kit.mabpd import BatchResult

__all__ = ["agreement_text", "build_report", "load_samples", "samples_path"]


def agreement_text(frame: pd.DataFrame) -> str:
    """The share of decided items whose label agrees with the authors', with its 95% Wilson interval and n."""
    from mabpd_kit.data.shipped import interval_text
    from mabpd_kit.evaluate.audit import wilson
    ok = frame[~frame.failed]
    if ok.empty:
        return "agreement with the authors' labels: no item was decided"
    k, n = int((ok.pred == ok.gold).sum()), len(ok)
    lo, hi = wilson(k, n)
    return interval_text(k / n, lo, hi, n, label=f"agreement with the authors' labels, {k} of {n}:")


def build_report(result: BatchResult, samples: list[dict], config_name: str) -> str:
    """The demo page: summary, route chart (SVG), one block per decision with highlighted spans."""
    import pandas as pd

    from mabpd_kit import viz
    from mabpd_kit.viz.pipeline import decision_html
    df = result.to_frame()
    routes = (df.assign(outcome=df.label.fillna("failed")).groupby(["route", "outcome"]).size()
              .reset_index(name="items"))
    chart = viz.bar(routes, "route", "items", color="outcome", title="Which route decided each item")
    by_id = {s["id"]: s for s in samples}
    blocks = []
    for d in result.decisions:
        s = by_id.get(d.id, {})
        gold = {1: "biased", 0: "neutral"}.get(d.gold, "?")
        verdict = "agrees" if d.pred == d.gold else "DISAGREES"
        blocks.append(f"<section><h3>{html.escape(d.id)} · gold {gold} ({html.escape(s.get('taxonomy', ''))}) · "
                      f"pipeline {d.label} · {verdict}</h3><p><i>Why the authors labelled it so:</i> "
                      f"{html.escape(s.get('rationale', ''))}</p>{decision_html(d)}</section>")
    table = pd.DataFrame({"id": df.id, "gold": df.gold, "label": df.label, "score": df.score.round(3),
                          "route": df.route}).to_html(index=False)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>mabpd-kit demo</title></head>"
            "<body style='font-family: sans-serif; max-width: 60em; margin: auto'>"
            "<h1>mabpd-kit demo: MABPD on the course samples (offline, rule-based agents)</h1>"
            f"<p>{len(df)} items, configuration <b>{html.escape(config_name)}</b>; {html.escape(agreement_text(df))}. "
            "The samples are teaching examples, not a benchmark.</p>"
            f"{viz.chart_svg(chart)}<p><b>Reading:</b> how many items each route decided, split by outcome.</p>"
            f"<h2>Decisions</h2>{table}{''.join(blocks)}</body></html>")
