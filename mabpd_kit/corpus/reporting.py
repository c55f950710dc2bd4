"""One self-contained, offline HTML report of a corpus run (inline SVG charts and a few lines of inline
JavaScript; no network request): the group overview, the article table and the drill-downs. Built from
one small row per article (:func:`summary_of`); every value from the corpus or the caller is escaped."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mabpd_kit.corpus.settings import CorpusConfig, resolve

if TYPE_CHECKING:
    from mabpd_kit.corpus.store import CorpusResults

__all__ = ["report", "report_html", "why_html"]

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
.why table.contrib{width:auto}.why{margin-bottom:8px}
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


def _origin(stat: str, threshold: float, score: Any = None) -> str:
    default = CorpusConfig()
    if stat == "p_biased":
        fitted = "the shipped coefficients" if score in (None, default.score) else "coefficients fitted for this run"
        return (f"{fitted}: a calibrated probability from a logistic regression on the density of biased sentences, "
                "spans per 100 words, the strongest sentence scores, the category mix and log length, fitted on "
                "HyperPartisan train by nested cross-validation; refit it on a labelled sample of your corpus "
                "with mk.corpus.adapt_score")
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


def _missing(v: Any) -> bool:
    return v is None or type(v).__name__ == "NAType" or (isinstance(v, float) and v != v)


def _cell(value: Any, fmt: str = "{}") -> str:
    if _missing(value):
        return "<td data-v=''></td>"
    shown = fmt.format(value) if isinstance(value, (int, float)) else str(value)
    return f"<td data-v='{html.escape(str(value), quote=True)}'>{html.escape(shown)}</td>"


def _source(results: Any) -> Any:
    """A results file when there is one to stream, else the articles in memory."""
    if isinstance(results, (str, Path)):
        return Path(results)
    if results.lazy and results.path:
        return Path(results.path)
    return results


#: columns of the summary frame (a metadata column of the same name is not read)
_FIXED = frozenset({"id", "failed", "error", "pred", "value", "n_biased", "n_sentences", "share_biased", "p_biased",
                    "spans_per_100w", "n_spans", "top_category", "categories", "offset", "decision", "top_spans",
                    "n_words", "bins"})


def summary_of(results: CorpusResults | str | Path, *, by: str | None = None, date: str | None = None,
               leaning: str | None = None, settings: CorpusConfig | None = None, threshold: float | None = None,
               rates: Any = None) -> Any:
    """The one read of a run's results that the report and the CLI work from."""
    from mabpd_kit.corpus.summary import summarize

    st = resolve(settings)
    is_file = isinstance(results, (str, Path))
    thr = threshold if threshold is not None else st.rule[1] if is_file else results.threshold
    stat = st.rule[0] if is_file else results.stat
    score = st.score if is_file else getattr(results, "score", None) or st.score
    cols = [c for c in dict.fromkeys((by, date, leaning)) if c and c not in _FIXED]
    rates = rates or _shipped_rates()
    return summarize(_source(results), columns=cols, threshold=thr, stat=stat, score=score,
                     edges=rates.edges if rates else None)


def report_html(results: CorpusResults | str | Path, *, by: str | None = None, date: str | None = None,
                title: str = "Corpus analysis", settings: CorpusConfig | None = None,
                threshold: float | None = None, rates: Any = None, leaning: str | None = None) -> str:
    """The report as one HTML string (``results``: a :class:`CorpusResults` or a results file, streamed).
    ``rates``: the sentence error rates (:func:`mabpd_kit.corpus.prevalence.error_rates`; default the
    shipped ones); ``leaning``: a column of the outlets' leaning, for the detector's own bias."""
    from mabpd_kit.corpus import groups
    from mabpd_kit.corpus.summary import Summary
    from mabpd_kit.viz import corpus as vc

    st = resolve(settings)
    e = html.escape
    summary = results if isinstance(results, Summary) else \
        summary_of(results, by=by, date=date, leaning=leaning, settings=st, threshold=threshold, rates=rates)
    thr, stat, score, df = summary.threshold, summary.stat, summary.score, summary.frame
    cols = [c for c in dict.fromkeys((by, date, leaning)) if c and c not in _FIXED and c in df.columns]
    by = by if by in cols else None
    date = date if date in cols else None
    ok = df[~df["failed"]]
    n_bias = int(ok["pred"].sum()) if len(ok) else 0
    out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{e(title)}</title>"
           f"<style>{_CSS}</style></head><body data-drill='{st.report_articles}'><h1>{e(title)}</h1>",
           f"<p>{len(df)} articles, {len(df) - len(ok)} failed{_reasons(df)}{e(summary.note)}, {n_bias} of {len(ok)} "
           f"judged biased. <b>Rule:</b> an article is biased iff <code>{e(stat)} &ge; {thr:g}</code> "
           f"({e(_origin(stat, thr, score))}; the sentence decisions are zero-shot).</p>"]
    out.append("<h2>Overview</h2><div class='charts'>")
    if by and len(ok) and ok[by].notna().any():
        out += _group_section(ok, by, st, stat, leaning)
    elif len(ok) and "bins" in ok:
        out += _group_section(ok.assign(corpus="every article"), "corpus", st, stat, None, brief=True)
    if date and len(ok) and "bins" in ok:
        out += _month_prevalence(ok, date, st)
    if date and len(ok):
        tr = groups.trend(ok, date, settings=st)
        if len(tr):
            out.append(_figure(_svg(vc.trend_chart(tr)), "the share of biased articles per month; the band is the "
                               "95% interval, hollow points are months with few articles."))
    binned = ok.assign(value=(ok["value"].astype(float) * 20).round() / 20) if stat == "p_biased" else ok
    counts = binned.groupby("value").size().reset_index(name="articles").rename(columns={"value": stat})
    out.append(_figure(_svg(vc.threshold_chart(counts, stat, thr, gold=None)),
                       f"how many articles have each value of {stat}; right of the dashed line they are judged biased."))
    out.append("</div>")
    out += _table(summary, _shown(df, st.report_max_rows), by, date)
    out.append("<div id='detail' class='note'>Click an article to see its highlighted evidence and the trace of each "
               "flagged sentence.</div>")
    out += _drill(summary, ok, st, thr, stat, score)
    out.append(f"<script>{_JS}</script></body></html>")
    return "".join(out)


def _shipped_rates() -> Any:
    """The shipped sentence error rates, or None when the artefact cannot be read."""
    from mabpd_kit.corpus.prevalence import shipped_rates

    try:
        return shipped_rates()
    except (OSError, ValueError, KeyError):
        return None


#: the construct the corrected share measures, named in the first chart's title
CONSTRUCT = "Corrected share of sentences judged biased (BABE-style lexical/framing bias)"


def _group_section(ok: Any, by: str, st: CorpusConfig, stat: str, leaning: str | None,
                   brief: bool = False) -> list[str]:
    """The group comparisons (``brief``: the first two charts only)."""
    from mabpd_kit.corpus import groups
    from mabpd_kit.viz import corpus as vc

    e = html.escape
    agg = groups.aggregate(ok, by, settings=st)
    out: list[str] = []
    if "prevalence" in agg and agg["prevalence"].notna().any():
        shown = agg.assign(small=agg["small"] | agg["wide"],
                           warning=agg["warning"].where(~agg["wide"], "interval wider than "
                                                        f"{st.prevalence_max_width:g}: too uncertain to compare"))
        out.append(_figure(_svg(vc.group_chart(shown, by, "prevalence", top=st.report_groups,
                                               title=f"{CONSTRUCT} by {by}")),
                           f"each bar estimates the share of a {by}'s sentences that BABE's annotators would call "
                           "biased: the share the kit flags (classify-and-count), corrected for the detector's error "
                           "rates on BABE train; the black line is the 95% interval, which carries the uncertainty of "
                           "those rates, how much they vary between outlets, and the sample (sentences clustered in "
                           f"articles). Faded: fewer than {st.min_group} articles, or an interval wider than "
                           f"{st.prevalence_max_width:g}."))
    if "biased_per_1000w" in agg:
        out.append(_figure(_svg(vc.group_chart(agg, by, "biased_per_1000w", top=st.report_groups,
                                               title=f"Sentences the kit flags as biased per 1,000 words by {by}")),
                           "each bar is a group's flagged sentences over its words (length is the exposure, so longer "
                           "articles do not count as more biased); the black line is the 95% bootstrap interval over "
                           "articles."))
    if brief:
        return out
    mix = groups.category_mix(ok, by)
    if len(mix):
        top = agg.sort_values("n", ascending=False)[by].head(st.report_groups).tolist()
        out.append(_figure(_svg(vc.category_mix_chart(mix, by, groups=top)),
                           f"which kinds of evidence the flagged sentences of each {by} carry ({len(top)} largest groups)."))
    out.append(_figure(_svg(vc.group_chart(agg, by, top=st.report_groups,
                                           title=f"Share of articles judged biased by the article rule, by {by}")),
                       f"each bar is the share of a {by}'s articles judged biased by the article rule ({stat}: "
                       "a hyperpartisan-style article score fitted on HyperPartisan, another construct, which rises "
                       "with article length); the black line its 95% bootstrap interval over articles. Not the "
                       "measure to compare groups with."))
    out.append("</div>")
    out += _group_table(agg, by, st)
    out += _ratio_table(ok, by, agg, st)
    out.append(f"<p class='note' id='supports'>{e(_supports())}</p>")
    small = agg[agg["small"]]
    if len(small):
        out.append(f"<p class='warn'>{len(small)} {e(by)} groups have fewer than {st.min_group} articles: "
                   "their intervals are wide; compare them with care.</p>")
    out += _leaning_audit(ok, leaning)
    out.append("<div class='charts'>")
    return out


def _month_prevalence(ok: Any, date: str, st: CorpusConfig) -> list[str]:
    from mabpd_kit.corpus import groups
    from mabpd_kit.viz import corpus as vc

    dated = ok.assign(month=groups.month(ok[date]).to_numpy())
    agg = groups.aggregate(dated[dated["month"].notna()], "month", measures=(), settings=st, exposure=False)
    if not len(agg) or "prevalence" not in agg or agg["prevalence"].isna().all():
        return []
    return [_figure(_svg(vc.trend_chart(agg, measure="prevalence", title=f"{CONSTRUCT} per month")),
                    "the corrected share of sentences judged biased per month; the band is its 95% interval, hollow "
                    f"points are months with fewer than {st.min_group} articles.")]


def _supports() -> str:
    from mabpd_kit.corpus.prevalence import shipped_validity

    v = shipped_validity()
    check = (f" On BABE train, leave-one-outlet-out, the 95% intervals held the annotators' share for "
             f"{v['covered']} of {v['groups']} outlets (Spearman {v['spearman']:.2f}, mean absolute error "
             f"{v['mae']:.3f}, median width {v['median_width']:.2f}), so an interval can miss." if v else "")
    return ("What these group estimates support: ranking and comparing groups by how much of their text reads as "
            "BABE-style lexical or framing bias, where the intervals (or a rate ratio's interval) leave no doubt; "
            "they cannot support claims about a group's politics, intent, accuracy or hyperpartisanship, nor "
            "comparisons between groups whose intervals overlap or are flagged too wide." + check)


def _group_table(agg: Any, by: str, st: CorpusConfig) -> list[str]:
    """The group figures behind the charts, with their 95% intervals (the largest groups first)."""
    if "prevalence" not in agg and "biased_per_1000w" not in agg:
        return []
    e = html.escape

    def iv(r: Any, m: str, f: str = "{:.2f}") -> str:
        if m not in r or _missing(r[m]):
            return ""
        return f"{f.format(r[m])} [{f.format(r[m + '_lo'])}, {f.format(r[m + '_hi'])}]"

    out = [f"<h3>Groups by {e(by)}</h3><table id='groups'><thead><tr><th>{e(by)}</th><th>articles</th>"
           "<th>sentences</th><th>flagged (classify-and-count)</th><th>corrected share [95%]</th>"
           "<th>flagged per 1,000 words [95%]</th><th>note</th></tr></thead><tbody>"]
    for r in agg.sort_values("n", ascending=False).head(st.report_groups).to_dict("records"):
        note = "interval too wide to compare" if r.get("wide") is True else r.get("warning") or ""
        sents = "" if _missing(r.get("n_sentences")) else f"{int(r['n_sentences'])}"
        out.append(f"<tr><td>{e(str(r[by]))}</td><td>{int(r['n'])}</td><td>{sents}</td>"
                   f"<td>{iv(r, 'cc')}</td><td>{iv(r, 'prevalence')}</td><td>{iv(r, 'biased_per_1000w', '{:.1f}')}</td>"
                   f"<td>{e(str(note))}</td></tr>")
    out.append("</tbody></table>")
    return out


def _ratio_table(ok: Any, by: str, agg: Any, st: CorpusConfig) -> list[str]:
    """Rate ratios of every group against the largest, with 95% intervals."""
    from mabpd_kit.corpus.density import rate_ratios

    if "n_words" not in ok or len(agg) < 2:
        return []
    names = agg.sort_values("n", ascending=False)[by].head(st.report_groups).tolist()
    ref = names[0]
    rows = [rate_ratios(ok, by, measure=m, groups=[g, ref], settings=st) for g in names[1:]
            for m in ("biased_per_1000w", "spans_per_100w_rate")]
    e = html.escape
    out = [f"<h3>Rate ratios against {e(str(ref))} (the largest group; length as the exposure)</h3>",
           "<table id='ratios'><thead><tr><th>group</th><th>measure</th><th>ratio</th><th>95% interval</th>"
           "<th>reading</th></tr></thead><tbody>"]
    for r in (x.iloc[0] for x in rows if len(x)):
        reading = ("no clear difference" if not r["clear"] else "higher" if r["ratio"] > 1 else "lower")
        out.append(f"<tr><td>{e(str(r['group_a']))}</td><td>{e(str(r['measure']))}</td>"
                   f"<td>{r['ratio']:.2f}</td><td>[{r['ratio_lo']:.2f}, {r['ratio_hi']:.2f}]</td>"
                   f"<td>{reading}{' (small group)' if r['small'] else ''}</td></tr>")
    out.append("</tbody></table>")
    return out


def _leaning_audit(ok: Any, leaning: str | None) -> list[str]:
    """The detector's error rates by outlet leaning, as measured on BABE train (a corpus has no labels)."""
    if not leaning or leaning not in ok:
        return []
    from mabpd_kit.corpus.prevalence import shipped_by_leaning

    rows = shipped_by_leaning()
    if not rows:
        return ["<p class='note' id='leaning-audit'>The detector's error rates by leaning are not in this "
                "build's fit artefact: run <code>mabpd fit sentence_error_rates</code>.</p>"]
    cells = "".join(f"<tr><td>{html.escape(str(r['group']))}</td><td>{r['fpr']:.3f} [{r['fpr_lo']:.2f}, "
                    f"{r['fpr_hi']:.2f}]</td><td>{r['fnr']:.3f} [{r['fnr_lo']:.2f}, {r['fnr_hi']:.2f}]</td>"
                    f"<td>{r['n_neutral']}</td><td>{r['n_biased']}</td></tr>" for r in rows)
    return ["<h3 id='leaning-audit'>The bias of the bias detector, by outlet leaning</h3>",
            f"<p>Your column <code>{html.escape(leaning)}</code> groups the outlets by leaning. This corpus has "
            "no annotations, so the detector's own error rates cannot be measured on it; these were measured on "
            "BABE train's annotated sentences (false-positive rate: neutral sentences judged biased; "
            "false-negative rate: biased sentences missed; 95% Wilson intervals). Where the rates differ "
            "between leanings, a difference between your groups can come from the detector.</p>",
            "<table><thead><tr><th>leaning</th><th>false-positive rate</th><th>false-negative rate</th>"
            f"<th>neutral sentences</th><th>biased sentences</th></tr></thead><tbody>{cells}</tbody></table>"]


def _reasons(df: Any) -> str:
    """The failure reasons with their counts."""
    failed = df[df["failed"]]
    if not len(failed):
        return ""
    top = failed["error"].fillna("no reason given").value_counts().head(5)
    more = failed["error"].nunique() - len(top)
    return (" (" + "; ".join(f"{html.escape(str(r))}: {n}" for r, n in top.items())
            + (f"; {more} other reasons" if more > 0 else "") + ")")


def _by_value(df: Any) -> Any:
    """Articles by the rule's statistic, highest first (stable)."""
    return df.assign(_v=df["value"].astype(float).fillna(-1.0)).sort_values("_v", ascending=False, kind="stable")


def _shown(df: Any, cap: int) -> Any:
    return df if len(df) <= cap else _by_value(df[~df["failed"]]).head(cap)


def _drill(summary: Any, ok: Any, st: CorpusConfig, thr: float, stat: str, score: Any = None) -> list[str]:
    """The drill-downs of the most biased articles, within the size budget."""
    from mabpd_kit.viz import corpus as vc

    top = _by_value(ok).head(st.report_articles)
    out: list[str] = []
    size = 0
    for a in summary.articles(top["offset"].tolist()):
        why = why_html(a, score, thr) if stat == "p_biased" else ""
        shown = vc.article_html(a, threshold=None) if stat == "p_biased" else vc.article_html(a, threshold=thr, stat=stat)
        block = f"<template id='art-{html.escape(a.id, quote=True)}'>{why}{shown}</template>"
        size += len(block.encode("utf-8"))
        if size > st.report_max_bytes and out:
            break
        out.append(block)
    if len(out) < len(ok):
        out.append(f"<p class='note' id='drill-note'>{len(out)} of {len(ok)} articles carry a drill-down (the most "
                   f"biased first; at most {st.report_articles} and {st.report_max_bytes / 1e6:g} MB).</p>")
    return out


def why_html(a: Any, score: Any = None, threshold: float = 0.5) -> str:
    """Why an article got its probability (:func:`mabpd_kit.corpus.score.explain`) as escaped HTML."""
    from mabpd_kit.corpus.score import explain

    e = html.escape
    w = explain(a, score)
    if w is None:
        return ""
    verdict = "biased" if w["p"] >= threshold else "not biased"
    out = [f"<div class='why'><h4>Why: p_biased = {w['p']:.2f} ({verdict} at the threshold {threshold:g})</h4>",
           f"<p class='note'>log-odds {w['logit']:+.2f} = intercept {w['intercept']:+.2f} + the contributions "
           "(coefficient x the feature's standardised value, against the average training article):</p>",
           "<table class='contrib'><thead><tr><th>feature</th><th>value</th><th>coefficient</th>"
           "<th>contribution</th></tr></thead><tbody>"]
    for c in sorted(w["contributions"], key=lambda c: -abs(c["contribution"])):
        out.append(f"<tr><td>{e(str(c['feature']))}</td><td>{c['value']:.3g}</td><td>{c['coef']:+.2f}</td>"
                   f"<td>{c['contribution']:+.2f}</td></tr>")
    out.append("</tbody></table>")
    if w["sentences"]:
        out.append("<p class='note'>Sentences that moved the score most (log-odds with the sentence minus without "
                   "it, flagged as neutral):</p><ol class='movers'>")
        out += [f"<li>{s['delta']:+.2f}: sentence {int(s['k']) + 1} (score {float(s['score'] or 0):.2f}) "
                f"&ldquo;{e(str(s['sentence'])[:200])}&rdquo;</li>" for s in w["sentences"]]
        out.append("</ol>")
    if w["spans"]:
        out.append("<p class='note'>Evidence spans that moved it most:</p><ol class='movers'>")
        out += [f"<li>{s['delta']:+.2f}: &ldquo;{e(str(s['span']))}&rdquo; ({e(str(s['category']))}, "
                f"{e(str(s['agent']))})</li>" for s in w["spans"]]
        out.append("</ol>")
    out.append("</div>")
    return "".join(out)


def _table(summary: Any, shown: Any, by: str | None, date: str | None) -> list[str]:
    cols = [("id", "{}"), *([(by, "{}")] if by else []), *([(date, "{}")] if date else []),
            ("decision", "{}"), ("p_biased", "{:.2f}"), ("n_biased", "{:d}"), ("n_sentences", "{:d}"), ("share_biased", "{:.2f}"),
            ("spans_per_100w", "{:.1f}"), ("top_category", "{}"), ("top_spans", "{}")]
    e = html.escape
    groups_ = sorted({str(v) for v in shown[by].dropna()}) if by else []
    total = len(summary.frame)
    out = ["<h2>Articles</h2>"]
    if len(shown) < total:
        out.append(f"<p class='note' id='rows-note'>The {len(shown)} most biased of {total} articles; "
                   f"{total - len(shown)} more not shown (every row: <code>mabpd analyze ... --export rows.csv</code> "
                   "or <code>mk.corpus.export(...)</code>).</p>")
    out += ["<div id='controls'>",
            "<input id='q' type='search' placeholder='filter: id, text of the strongest spans...' size='40'>",
            "<select id='group'><option value=''>every group</option>" +
            "".join(f"<option>{e(g)}</option>" for g in groups_) + "</select>",
            "<select id='decision'><option value=''>every decision</option><option>biased</option>"
            "<option>neutral</option><option>failed</option></select><span id='count' class='note'></span></div>",
            "<table id='articles'><thead><tr>" + "".join(f"<th>{e(c)}</th>" for c, _ in cols) +
            "</tr></thead><tbody>"]
    spans = {a.id: "; ".join(s.text for s in a.top_spans) for a in summary.articles(shown["offset"].tolist())}
    for rec in shown.to_dict("records"):
        failed = bool(rec["failed"])
        decision = "failed" if failed else ("biased" if not _missing(rec["pred"]) and rec["pred"] == 1 else "neutral")
        rec["decision"] = decision if not failed else f"failed: {rec.get('error') or ''}"
        rec["top_spans"] = spans.get(rec["id"], "")
        group = "" if not by or _missing(rec.get(by)) else str(rec.get(by))
        search = " ".join(str(rec.get(c) or "") for c, _ in cols).lower()
        cells = []
        for c, fmt in cols:
            v = rec.get(c)
            cells.append(f"<td class='biased'>{e(str(v))}</td>" if c == "decision" and decision == "biased"
                         else _cell(v, fmt))
        out.append(f"<tr class='row' data-id='{e(str(rec['id']), quote=True)}' "
                   f"data-group='{e(group, quote=True)}' data-decision='{decision}' "
                   f"data-search='{e(search, quote=True)}'>{''.join(cells)}</tr>")
    out.append("</tbody></table>")
    return out


def report(results: CorpusResults | str | Path, path: str | Path, *, by: str | None = None,
           date: str | None = None, title: str = "Corpus analysis", settings: CorpusConfig | None = None,
           threshold: float | None = None, rates: Any = None, leaning: str | None = None) -> Path:
    """Write the report (:func:`report_html`) to ``path``, all or nothing; returns the path."""
    from mabpd_kit.files import write_text

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_text(p, report_html(results, by=by, date=date, title=title, settings=settings, threshold=threshold,
                              rates=rates, leaning=leaning))
    return p
