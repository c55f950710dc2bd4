"""One self-contained, offline HTML report of a corpus run.

Everything is inline: charts are SVG made by vl-convert (no Vega script, no CDN), the span viewer
is plain HTML, and a few lines of inline JavaScript sort and filter the article table and open the
drill-down. The file makes no network request.

- **Overview**: the share of biased articles per group with 95% intervals (small groups faded and
  warned), the category mix of the evidence per group, the trend per month (when a date column is
  given), and the rule and its threshold.
- **Articles**: a table of every article (sortable by any column, filtered by text, group and
  decision).
- **Drill-down**: click a row: the article with its evidence spans highlighted, and the decision
  trace of each flagged sentence (``settings.report_articles`` articles, the most biased first,
  have one; the others show their row only).

>>> report(results, "report.html", by="outlet", date="published_at")   # doctest: +SKIP
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mabpd_kit.corpus.settings import CorpusConfig, resolve

if TYPE_CHECKING:
    from mabpd_kit.corpus.store import CorpusResults

__all__ = ["report", "report_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1a1a1a;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
.note{color:#555;font-size:13px}.warn{color:#8a4b00;font-size:13px}
.charts{display:flex;flex-wrap:wrap;gap:16px}.charts figure{margin:0}
.charts figcaption{font-size:12px;color:#555;max-width:480px}
#controls{margin:8px 0;display:flex;gap:8px;flex-wrap:wrap}
table{border-collapse:collapse;font-size:13px;width:100%}th,td{border-bottom:1px solid #eee;padding:3px 6px;text-align:left}
th{cursor:pointer;background:#f6f6f6;position:sticky;top:0}tr.row:hover{background:#fff6e5;cursor:pointer}
tr.sel{background:#ffe8c2}td.biased{color:#b03a2e;font-weight:bold}
#detail{margin-top:16px;border-top:2px solid #e45756;padding-top:8px}
details.trace{margin:4px 0;font-size:13px}details.trace pre{white-space:pre-wrap;background:#f8f8f8;padding:6px}
"""

_JS = """
(function(){
const rows=[...document.querySelectorAll('#articles tbody tr')];
const q=document.getElementById('q'),g=document.getElementById('group'),d=document.getElementById('decision');
const count=document.getElementById('count');
function apply(){const t=q.value.toLowerCase();let n=0;
 for(const r of rows){const ok=(!t||r.dataset.search.includes(t))&&(!g.value||r.dataset.group===g.value)
   &&(!d.value||r.dataset.decision===d.value);r.style.display=ok?'':'none';if(ok)n++;}
 count.textContent=n+' of '+rows.length+' articles shown';}
[q,g,d].forEach(e=>e.addEventListener('input',apply));apply();
document.querySelectorAll('#articles th').forEach((th,i)=>th.addEventListener('click',()=>{
 const asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';const tb=th.closest('table').tBodies[0];
 const key=r=>{const v=r.cells[i].dataset.v??r.cells[i].textContent;const f=parseFloat(v);return isNaN(f)?v:f;};
 [...tb.rows].sort((a,b)=>{const x=key(a),y=key(b);return (x>y?1:x<y?-1:0)*(asc?1:-1);}).forEach(r=>tb.appendChild(r));}));
function open(id){const tpl=document.getElementById('art-'+id);const box=document.getElementById('detail');
 rows.forEach(r=>r.classList.toggle('sel',r.dataset.id===id));
 box.innerHTML=tpl?tpl.innerHTML:'<p class="note">No drill-down for this article (only the '
   +document.body.dataset.drill+' most biased articles carry one).</p>';box.dataset.open=id;box.scrollIntoView();}
rows.forEach(r=>r.addEventListener('click',()=>open(r.dataset.id)));
if(location.hash.startsWith('#article='))open(decodeURIComponent(location.hash.slice(9)));
})();
"""


def _origin(stat: str, threshold: float) -> str:
    """Where the rule's threshold comes from, in words."""
    default = CorpusConfig()
    if stat == default.article_stat and threshold == default.article_threshold:
        return ("the shipped default: the threshold was adapted on HyperPartisan train with 5-fold cross-validation; "
                "a count grows with article length, so adapt it on a labelled sample of your corpus")
    return "a threshold set for this run, not the shipped default"


def _svg(chart: Any) -> str:
    """The chart as inline SVG inside a labelled image role (its description is the alternative text)."""
    from mabpd_kit.viz import alt_text, chart_svg

    try:
        svg = chart_svg(chart)
    except Exception as exc:  # a chart that cannot be drawn never costs the report
        return f"<p class='warn'>chart not drawn: {html.escape(str(exc))}</p>"
    return f"<div role='img' aria-label='{html.escape(alt_text(chart), quote=True)}'>{svg}</div>"


def _figure(svg: str, reading: str) -> str:
    return f"<figure>{svg}<figcaption><b>Reading:</b> {html.escape(reading)}</figcaption></figure>"


def _cell(value: Any, fmt: str = "{}") -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "<td data-v=''></td>"
    shown = fmt.format(value) if isinstance(value, (int, float)) else str(value)
    return f"<td data-v='{html.escape(str(value), quote=True)}'>{html.escape(shown)}</td>"


def report_html(results: "CorpusResults", *, by: str | None = None, date: str | None = None,
                title: str = "Corpus analysis", settings: CorpusConfig | None = None) -> str:
    """The report as one HTML string (see the module docstring)."""
    from mabpd_kit.corpus import groups
    from mabpd_kit.viz import corpus as vc

    st = resolve(settings)
    df = results.to_frame()
    ok = df[~df["failed"]] if len(df) else df
    thr, stat = results.threshold, results.stat
    n_bias = int(ok["pred"].sum()) if len(ok) else 0
    out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
           f"<style>{_CSS}</style></head><body data-drill='{st.report_articles}'><h1>{html.escape(title)}</h1>",
           f"<p>{len(df)} articles, {len(df) - len(ok)} failed (reasons in the table), {n_bias} of {len(ok)} "
           f"judged biased. <b>Rule:</b> an article is biased iff <code>{stat} &ge; {thr:g}</code> ({_origin(stat, thr)}; "
           "the sentence decisions are zero-shot).</p>"]
    out.append("<h2>Overview</h2><div class='charts'>")
    if by and by in ok and len(ok):
        agg = groups.aggregate(ok, by, settings=st)
        small = agg[agg["small"]]
        out.append(_figure(_svg(vc.group_chart(agg, by, top=st.report_groups)),
                           f"each bar is the share of a {by}'s articles judged biased, the black line its 95% "
                           "bootstrap interval over articles; faded bars are groups with fewer than "
                           f"{st.min_group} articles."))
        mix = groups.category_mix(ok, by, results=results)
        if len(mix):
            top = agg.sort_values("n", ascending=False)[by].head(st.report_groups).tolist()
            out.append(_figure(_svg(vc.category_mix_chart(mix, by, groups=top)),
                               f"which kinds of evidence the flagged sentences of each {by} carry ({len(top)} largest groups)."))
        if len(small):
            out.append(f"<p class='warn'>{len(small)} {by} groups have fewer than {st.min_group} articles: "
                       "their intervals are wide; compare them with care.</p>")
    if date and date in ok and len(ok):
        tr = groups.trend(ok, date, settings=st)
        if len(tr):
            out.append(_figure(_svg(vc.trend_chart(tr)), "the share of biased articles per month; the band is the "
                               "95% interval, hollow points are months with few articles."))
    out.append(_figure(_svg(vc.threshold_chart(ok, stat, thr, gold=None)),
                       f"how many articles have each value of {stat}; right of the dashed line they are judged biased."))
    out.append("</div>")
    out += _table(df, by, date)
    out.append("<div id='detail' class='note'>Click an article to see its highlighted evidence and the trace of each "
               "flagged sentence.</div>")
    drill = sorted((a for a in results if not a.failed), key=lambda a: -(getattr(a, stat) or 0))[:st.report_articles]
    for a in drill:
        out.append(f"<template id='art-{html.escape(a.id, quote=True)}'>"
                   f"{vc.article_html(a, threshold=thr, stat=stat)}</template>")
    out.append(f"<script>{_JS}</script></body></html>")
    return "".join(out)


def _table(df: Any, by: str | None, date: str | None) -> list[str]:
    cols = [("id", "{}"), *([(by, "{}")] if by else []), *([(date, "{}")] if date else []),
            ("decision", "{}"), ("n_biased", "{:d}"), ("n_sentences", "{:d}"), ("share_biased", "{:.2f}"),
            ("spans_per_100w", "{:.1f}"), ("top_category", "{}"), ("top_spans", "{}")]
    groups_ = sorted({str(v) for v in df[by].dropna()}) if by and by in df else []
    out = ["<h2>Articles</h2><div id='controls'>",
           "<input id='q' type='search' placeholder='filter: id, text of the strongest spans...' size='40'>",
           "<select id='group'><option value=''>every group</option>" +
           "".join(f"<option>{html.escape(g)}</option>" for g in groups_) + "</select>",
           "<select id='decision'><option value=''>every decision</option><option>biased</option>"
           "<option>neutral</option><option>failed</option></select><span id='count' class='note'></span></div>",
           "<table id='articles'><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c, _ in cols) +
           "</tr></thead><tbody>"]
    for rec in df.to_dict("records"):
        decision = "failed" if rec["failed"] else ("biased" if rec["pred"] == 1 else "neutral")
        rec["decision"] = decision if decision != "failed" else f"failed: {rec.get('error') or ''}"
        group = str(rec.get(by)) if by and rec.get(by) is not None else ""
        search = " ".join(str(rec.get(c) or "") for c, _ in cols).lower()
        cells = []
        for c, fmt in cols:
            v = rec.get(c)
            cells.append(f"<td class='biased'>{html.escape(str(v))}</td>" if c == "decision" and decision == "biased"
                         else _cell(v, fmt))
        out.append(f"<tr class='row' data-id='{html.escape(str(rec['id']), quote=True)}' "
                   f"data-group='{html.escape(group, quote=True)}' data-decision='{decision}' "
                   f"data-search='{html.escape(search, quote=True)}'>{''.join(cells)}</tr>")
    out.append("</tbody></table>")
    return out


def report(results: "CorpusResults | str | Path", path: str | Path, *, by: str | None = None,
           date: str | None = None, title: str = "Corpus analysis", settings: CorpusConfig | None = None) -> Path:
    """Write the report to ``path`` (``results``: a :class:`CorpusResults` or a results file); returns the path."""
    from mabpd_kit.corpus.store import load

    res = load(results, settings=settings) if isinstance(results, (str, Path)) else results
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(report_html(res, by=by, date=date, title=title, settings=settings), encoding="utf-8")
    return p
