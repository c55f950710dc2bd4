"""Every HTML output of the kit escapes every value it did not write itself.

A payload set (tags with event handlers, a closing ``</script>``/``</textarea>``, attribute-breaking
quotes, ``javascript:`` URLs, a template expression, U+2028 for embedded JSON) is placed in every
user-controlled value of each output: column names (group, date and metadata columns), ids, group
values, dates, article text, span text, categories, agents, traces, errors, titles, sample files,
system names. Each output is parsed with :mod:`html.parser`: no element or attribute the payload
could create may exist (no ``on*`` attribute, no ``javascript:`` URL, no ``img``/``iframe``/
``object``/``embed``/``textarea`` the kit never writes, only the kit's own ``<script>``), and the
payloads must still be there as text (escaped, not dropped). The browser test
(``test_report_with_payloads_fires_no_dialog``) opens the report and the demo page in Chromium,
clicks through the drill-down and asserts that no dialog fires.
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from mabpd_kit.corpus import CorpusConfig
from mabpd_kit.corpus.articles import ArticleResult, SentenceResult, SpanResult
from mabpd_kit.corpus.store import Writer

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

PAYLOADS = [
    "<img src=x onerror=alert('col')>",
    "\"><script>alert(1)</script>",
    "'><svg onload=alert(2)>",
    "</textarea><svg onload=alert(3)>",
    "</script><script>alert(4)</script>",
    "javascript:alert(5)",
    "{{7*7}}",
    "x\u2028y\u2029z<!--",
    "' onmouseover='alert(6)",
    "\" autofocus onfocus=\"alert(7)",
    "<iframe src=javascript:alert(8)>",
    "</template><img src=x onerror=alert(9)>",
]
P = PAYLOADS
#: tags a payload could bring in and that the kit itself never writes
FOREIGN_TAGS = {"img", "iframe", "object", "embed", "textarea", "base", "form", "link", "math", "frame"}
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data"}


class _Audit(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


def audit(doc: str, *, allowed: set[str] = frozenset(), scripts: int = 0) -> _Audit:
    """Parse ``doc`` and fail on anything a payload created; ``allowed``: foreign tags the output may
    hold itself (e.g. a chart picture), ``scripts``: how many <script> elements the kit writes."""
    a = _Audit()
    a.feed(doc)
    a.close()
    for tag, attrs in a.tags:
        assert tag not in FOREIGN_TAGS - set(allowed), f"a payload made a <{tag} {attrs}>"
        if tag == "meta":
            assert {n for n, _ in attrs} <= {"charset", "name", "content"}, f"a payload made a <meta {attrs}>"
        for name, value in attrs:
            assert not name.startswith("on"), f"a payload made an event handler: <{tag} {name}={value!r}>"
            assert name not in ("autofocus", "srcdoc"), f"a payload made <{tag} {name}>"
            if name in URL_ATTRS and value:
                assert not value.strip().lower().startswith(("javascript:", "data:text/html")), (tag, name, value)
            if tag == "img" and name == "src":
                assert value and value.startswith("data:image/"), f"<img src={value!r}> loads something"
    assert len(a.scripts) == scripts, f"{len(a.scripts)} <script> elements, the kit writes {scripts}"
    for s in a.scripts:
        assert "alert(" not in s.replace("\\u003c", "<") or _json_only(s), "a payload is running code in a script"
        assert "\u2028" not in s and "\u2029" not in s, "a raw line separator inside a script"
    return a


def _json_only(script: str) -> bool:
    """True when the payloads in a script are inside JSON literals only (the kit's data blocks)."""
    body = script.strip()
    try:
        json.loads(body)
        return True
    except ValueError:
        return False


def assert_text_kept(a: _Audit, *needles: str) -> None:
    """The payloads are shown as text, not dropped."""
    text = "".join(a.text)
    for n in needles:
        assert n in text, f"{n!r} is not in the page's text"


# ------------------------------------------------------------------------------------------------
# the corpus report and its drill-down
# ------------------------------------------------------------------------------------------------

BY, DATE = P[0], "published' onmouseover='alert(10)"


def _article(k: int) -> ArticleResult:
    p = P[k % len(P)]
    text = f"Critics slammed {p} the plan. The council met on Monday {p}."
    cut = text.index(". ") + 1
    sent_b = SentenceResult(k=0, start=0, end=cut, label="biased", score=0.9, route=p,
                            spans=[SpanResult(text="slammed", start=8, end=15, category=p, agent=p, score=0.8)],
                            trace=f"BIASED {p}")
    sent_n = SentenceResult(k=1, start=cut + 1, end=len(text), label="neutral", score=0.1, route="consensus")
    failed = k == len(P)
    return ArticleResult(
        id=f"{p}#{k}", digest="d", fingerprint="f", text=text, n_words=len(text.split()), n_sentences=2,
        n_biased=0 if failed else 1 + k % 3, share_biased=0.5, n_spans=1, spans_per_100w=5.0,
        categories={p: 1, "biased language": 2}, top_spans=[SpanResult(text=p, start=0, end=3, category=p, agent=p,
                                                                       score=0.7)],
        sentences=[] if failed else [sent_b, sent_n], failed=failed, error=p if failed else None, flags=[p],
        meta={BY: P[(k + 1) % len(P)], DATE: ["2017-01-15", p, "2017-02-15"][k % 3], P[2]: P[3]})


@pytest.fixture(scope="module")
def payload_results(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("esc") / f"{P[1]}.jsonl".replace("/", "_")
    with Writer(path) as w:
        for k in range(3 * len(P) + 1):
            w.write(_article(k))
    return path


SETTINGS = CorpusConfig(article_threshold=2, min_group=50, bootstrap_resamples=50, report_articles=30)


@pytest.fixture(scope="module")
def report_file(payload_results) -> Path:
    from mabpd_kit.corpus.reporting import report

    return report(payload_results, payload_results.with_suffix(".html"), by=BY, date=DATE, title=P[1],
                  settings=SETTINGS)


def test_corpus_report_escapes_every_value(report_file):
    doc = report_file.read_text(encoding="utf-8")
    a = audit(doc, scripts=_kit_scripts(doc))
    # the --by column name in the small-group warning, the figure captions and the table header
    assert_text_kept(a, f"{BY} groups have fewer than", f"share of a {BY}'s articles", *P[:7])


def _kit_scripts(doc: str) -> int:
    """The report writes its own script and JSON data blocks: count the opening tags the kit wrote
    (``<script>`` or ``<script type='application/json' ...>``) - a payload's ``<script>`` is escaped."""
    return len(re.findall(r"<script(?: type='application/json' id='[a-z-]+')?>", doc))


def test_report_drill_down_templates_hold_no_payload_element(report_file):
    """The drill-down is copied into the page with innerHTML: its templates must be as clean."""
    doc = report_file.read_text(encoding="utf-8")
    for tpl in re.findall(r"<template[^>]*>(.*?)</template>", doc, flags=re.S):
        audit(tpl)


def test_article_html_and_span_html_escape():
    from mabpd_kit.types import Span
    from mabpd_kit.viz.corpus import article_html
    from mabpd_kit.viz.spans import span_html

    for k in range(len(P) + 1):
        audit(article_html(_article(k), threshold=1, stat="n_biased"))
    text = " ".join(P)
    spans = [Span(text=p, start=text.index(p), end=text.index(p) + len(p), category=p, agent=p, score=0.5,
                  reason=p, note=p) for p in P]
    spans.append(Span(text=P[0] + " not in the text", category=P[1], agent=P[2], score=0.4, valid=False))
    a = audit(span_html(text, spans, title=P[1], color_by="category"))
    assert_text_kept(a, *P[:4])
    audit(span_html(text, spans, color_by="agent"))


def test_demo_page_escapes_sample_files(tmp_path):
    from mabpd_kit.demo import build_report
    from mabpd_kit.mabpd import Pipeline

    samples = [{"id": p, "text": f"Critics slammed the disastrous {p} plan.", "label": k % 2, "taxonomy": p,
                "rationale": p} for k, p in enumerate(P)]
    result = Pipeline().analyze_many([s["text"] for s in samples], ids=[s["id"] for s in samples],
                                     gold=[s["label"] for s in samples], progress=False)
    doc = build_report(result, samples, P[1])
    (tmp_path / "demo.html").write_text(doc, encoding="utf-8")
    a = audit(doc)
    assert_text_kept(a, *P[:4])


def test_evaluation_report_escapes_system_names(tmp_path):
    """The evaluation writes markdown (rendered to HTML by whoever opens it) and an SVG chart."""
    import mistune

    from mabpd_kit.evaluate.report import Evaluation

    metrics = pd.DataFrame([{"system": p, "kind": "pipeline", "n": 10, "n_failed": 0, "accuracy": .5,
                             "precision": .5, "recall": .5, "f1": .5, "macro_f1": .5, "macro_f1_lo": .4,
                             "macro_f1_hi": .6} for p in P[:4]])
    cmp = pd.DataFrame([{"baseline": P[0], "system": p, "metric": "macro_f1", "diff": 0.0, "lo": -.1, "hi": .1,
                         "p_value": 1.0, "n_resamples": 10, "fn_rescued": 0, "fp_added": 0, "tp_lost": 0,
                         "fp_removed": 0} for p in P[1:4]])
    ev = Evaluation(dataset=P[1], split=P[2], configs=P[:4], mode=P[3], n_items=10, predictions=pd.DataFrame(),
                    metrics=metrics, comparisons=cmp, wall_s=1.0, n_resamples=10, seed=0)
    md = ev.markdown()
    a = audit(mistune.html(md))
    assert_text_kept(a, P[0])
    files = ev.write(tmp_path)
    audit(Path(files["chart_svg"]).read_text(encoding="utf-8"))


def test_chart_pictures_escape_titles():
    from mabpd_kit import viz

    chart = viz.bar(pd.DataFrame({"route": list(P[:4]), "items": [1, 2, 3, 4]}), "route", "items", title=P[1])
    svg = viz.chart_svg(chart)
    audit(svg)
    audit(viz.figure_html(svg, P[0]), allowed={"img"})


# ------------------------------------------------------------------------------------------------
# in Chromium: no dialog fires
# ------------------------------------------------------------------------------------------------


@pytest.mark.browser
def test_report_with_payloads_fires_no_dialog(report_file, tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: run tools/ensure_chromium.sh or set CHROMIUM=/path")
    from playwright.sync_api import sync_playwright

    from mabpd_kit.demo import build_report
    from mabpd_kit.mabpd import Pipeline

    samples = [{"id": p, "text": f"Critics slammed the disastrous {p} plan.", "label": 1, "taxonomy": p,
                "rationale": p} for p in P]
    result = Pipeline().analyze_many([s["text"] for s in samples], ids=[s["id"] for s in samples],
                                     gold=[1] * len(P), progress=False)
    demo = tmp_path / "demo.html"
    demo.write_text(build_report(result, samples, P[1]), encoding="utf-8")

    dialogs: list[str] = []
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.route(re.compile(r"^(?!file:|data:|blob:|about:)"), lambda route: route.abort())
            page.goto(report_file.as_uri(), wait_until="load")
            rows = page.locator("#articles tbody tr")
            assert rows.count() > 10
            for i in range(rows.count()):  # every drill-down opened (innerHTML of its template)
                rows.nth(i).click()
                page.locator("#detail").hover()
            for sel in ("#group", "#decision"):
                for value in page.locator(f"{sel} option").evaluate_all("os => os.map(o => o.value)"):
                    page.select_option(sel, value)
            page.fill("#q", P[0])
            page.mouse.move(5, 5)
            for p in P:  # an id in the address: #article=<payload>
                page.goto(report_file.as_uri() + "#article=" + p.replace("#", "%23"), wait_until="load")
            page.wait_for_timeout(300)
            page.goto(demo.as_uri(), wait_until="load")
            page.mouse.move(200, 300)
            page.wait_for_timeout(300)
        finally:
            browser.close()
    assert not dialogs, f"a payload ran: {dialogs}"
    assert not errors, errors
