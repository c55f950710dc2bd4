"""The corpus HTML report: self-contained (nothing loaded from anywhere), and in headless Chromium
the filter hides rows, a click opens the drill-down with highlighted spans and the decision trace,
and no network request is made."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest

from mabpd_kit.corpus import CorpusConfig, analyze, read, report

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
BIASED = "Critics slammed the disastrous so-called reform. Lawmakers rammed the bill through at night."
NEUTRAL = "The council met on Monday to discuss the budget. The vote is scheduled for next week."


@pytest.fixture(scope="module")
def report_path(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    rows = [{"text": BIASED if k % 3 == 0 else NEUTRAL, "outlet": ["alpha.com", "beta.org", "gamma.net"][k % 3],
             "published_at": f"2017-{1 + k % 4:02d}-15"} for k in range(24)] + [{"text": "", "outlet": "beta.org"}]
    st = CorpusConfig(article_decision="count", article_threshold=2, min_group=5, bootstrap_resamples=200)
    res = analyze(read(pd.DataFrame(rows)), tmp / "run.jsonl", workers=1, settings=st)
    return report(res, tmp / "report.html", by="outlet", date="published_at", settings=st)


def test_report_is_self_contained(report_path):
    html = report_path.read_text(encoding="utf-8")
    assert html.count("<svg") >= 4  # groups, category mix, trend, threshold: inline SVG
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html)  # nothing loaded from anywhere
    assert "cdn" not in html.lower() and "vega@" not in html
    assert "n_biased &ge; 2</code> (a threshold set for this run, not the shipped default" in html  # the rule as run
    assert "failed: empty text" in html  # the bad row is in the table, with its reason
    assert html.count("<tr class='row'") == 25 and html.count("<template id='art-") == 24


@pytest.mark.browser
def test_report_filters_and_drills_down_offline_in_chromium(report_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: run tools/ensure_chromium.sh or set CHROMIUM=/path")
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.route(re.compile(r"^(?!file:|data:|blob:|about:)"), lambda route: route.abort())
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report_path.as_uri(), wait_until="load")
            rows = page.locator("#articles tbody tr")
            assert rows.count() == 25
            assert page.locator("#count").inner_text() == "25 of 25 articles shown"
            page.select_option("#group", "alpha.com")
            assert page.locator("#count").inner_text() == "8 of 25 articles shown"
            page.select_option("#decision", "biased")
            visible = page.locator("#articles tbody tr:visible")
            assert visible.count() == 8
            page.select_option("#group", "")
            page.fill("#q", "gamma")
            assert page.locator("#count").inner_text() == "0 of 25 articles shown"  # gamma: never biased
            page.fill("#q", "")
            page.select_option("#decision", "failed")
            assert page.locator("#articles tbody tr:visible").count() == 1
            page.select_option("#decision", "")
            page.locator("#articles th", has_text="n_biased").click()  # sort
            page.locator("#articles th", has_text="n_biased").click()  # descending
            first = page.locator("#articles tbody tr").first
            assert first.get_attribute("data-decision") == "biased"
            first.click()
            detail = page.locator("#detail")
            assert detail.get_attribute("data-open") == first.get_attribute("data-id")
            assert detail.locator("span[title*='biased language']").count() >= 1  # highlighted spans
            assert "Flagged sentences (2)" in detail.inner_text()
            detail.locator("details.trace summary").first.click()
            assert "BIASED" in detail.locator("details.trace pre").first.inner_text()  # the decision trace
            page.screenshot(path=str(_artifacts() / "corpus_report.png"), full_page=False)
            assert not errors, errors
        finally:
            browser.close()
    assert all(u.startswith("file:") for u in requests), [u for u in requests if not u.startswith("file:")]


def _artifacts() -> Path:
    d = ROOT / "test-artifacts"
    d.mkdir(exist_ok=True)
    return d


def test_a_large_run_is_reported_from_aggregates_with_a_bounded_table_and_drill_down(tmp_path, monkeypatch):
    """Issue 17: the report streams the results file into aggregates; only the rows it shows in
    full are read again (not every record), the table holds report_max_rows articles (the most
    biased first, with how many more are not shown), report_articles drill-downs."""
    from mabpd_kit.corpus.articles import ArticleResult
    from mabpd_kit.corpus.store import Writer, load

    path = tmp_path / "big.jsonl"
    with Writer(path) as w:
        for k in range(300):
            w.write(ArticleResult(id=f"a{k}", text="Critics slammed it.", n_sentences=10, n_biased=k % 13,
                                  share_biased=(k % 13) / 10, spans_per_100w=float(k % 7),
                                  categories={"biased language": k % 13}, meta={"outlet": f"o{k % 4}"}))
    full = []
    orig = ArticleResult.model_validate_json
    monkeypatch.setattr(ArticleResult, "model_validate_json",
                        classmethod(lambda cls, data, **kw: (full.append(1), orig(data, **kw))[1]))
    st = CorpusConfig(article_decision="count", article_threshold=6, report_max_rows=40, report_articles=10,
                      bootstrap_resamples=100)
    res = load(path, settings=st)
    assert len(res) == 300 and not full  # counting reads no full record
    out = report(res, tmp_path / "r.html", by="outlet", settings=st)
    assert len(full) <= 40 + 10, f"{len(full)} full records read for 40 rows and 10 drill-downs"
    html = out.read_text(encoding="utf-8")
    assert html.count("<tr class='row'") == 40 and html.count("<template id='art-") == 10
    assert "The 40 most biased of 300 articles; 260 more not shown" in html
    assert "300 articles, 0 failed" in html and html.count("data-decision='biased'") == 40  # n_biased 12..7 first


def test_a_large_group_interval_is_drawn_in_bounded_memory():
    """A group of 100,000 articles: the bootstrap is drawn from the value counts (the same
    distribution as resampling articles) instead of a 1,000 x 100,000 matrix of indices (800 MB)."""
    import tracemalloc

    import numpy as np

    from mabpd_kit.corpus.groups import bootstrap_mean

    rng = np.random.default_rng(3)
    for x in (rng.integers(0, 2, 100_000).astype(float), rng.integers(0, 20, 100_000) / 20):
        tracemalloc.start()
        mean, lo, hi = bootstrap_mean(x, resamples=1_000, confidence=0.95, seed=[0, 1])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 100e6, f"{peak / 1e6:.0f} MB for one interval"
        half = 1.96 * x.std() / np.sqrt(len(x))  # the normal interval the bootstrap approaches
        assert lo < mean < hi and abs((hi - lo) / 2 - half) < 0.15 * half, (lo, hi, half)


def test_the_first_chart_is_the_corrected_share_and_names_its_construct(report_path):
    """Issue 38: the headline is a measure whose construct the title names, not the article score."""
    html = report_path.read_text(encoding="utf-8")
    first = html[html.index("<figure>"):html.index("</figure>")]
    assert "corrected share of sentences judged biased (babe-style lexical/framing bias)" in first.lower()
    svg = first[first.index("<svg"):]
    assert "Corrected share of sentences judged biased (BABE-style lexical/framing bias) by outlet" in svg  # title
    article_chart = html.index("Share of articles judged biased by the article rule")
    assert html.index("Sentences the kit flags as biased per 1,000 words") < article_chart
    assert "hyperpartisan-style article score fitted on HyperPartisan" in html
    per_month = html.index("Corrected share of sentences judged biased (BABE-style lexical/framing bias) per month")
    assert per_month < html.index("share of biased articles per month")  # the construct first, by month too


def test_the_report_says_what_its_group_estimates_support_and_gives_rate_ratios(report_path):
    html = report_path.read_text(encoding="utf-8")
    note = html[html.index("id='supports'"):]
    note = note[:note.index("</p>")]
    assert "cannot support" in note and "leave-one-outlet-out" in note and "of 9 outlets" in note
    table = html[html.index("<table id='ratios'>"):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 1 + 2 * 2  # header + (2 groups x 2 measures) against the largest
    assert "Rate ratios against" in html and "length as the exposure" in html
    groups = html[html.index("<table id='groups'>"):]
    groups = groups[:groups.index("</table>")]
    assert groups.count("<tr>") == 1 + 3 and "corrected share [95%]" in groups  # header + 3 outlets


def test_a_leaning_column_asks_for_the_leaning_audit(tmp_path):
    rows = [{"text": BIASED if k % 2 else NEUTRAL, "outlet": f"o{k % 2}", "leaning": ["left", "right"][k % 2]}
            for k in range(8)]
    st = CorpusConfig(min_group=2, bootstrap_resamples=50, prevalence_draws=200)
    res = analyze(read(pd.DataFrame(rows)), tmp_path / "run.jsonl", workers=1, settings=st)
    html = report(res, tmp_path / "r.html", by="outlet", settings=st, leaning="leaning").read_text(encoding="utf-8")
    assert "id='leaning-audit'" in html and "The bias of the bias detector, by outlet leaning" in html
    assert "measured on BABE train" in html and "false-positive rate" in html  # what it is, and on which data
    plain = report(res, tmp_path / "p.html", by="outlet", settings=st).read_text(encoding="utf-8")
    assert "leaning-audit" not in plain and "bias of the bias detector" not in plain
