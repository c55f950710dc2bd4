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
    st = CorpusConfig(article_threshold=2, min_group=5, bootstrap_resamples=200)
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
