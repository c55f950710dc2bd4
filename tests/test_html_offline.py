"""Exported lessons open with no network (issue 16).

``jupyter nbconvert --to html`` loads require.js and MathJax from a CDN and the badges from Colab
and Binder; :func:`mabpd_kit.export.export_lesson` leaves those out. Checked twice:

- every lesson, exported from its saved outputs: the page references nothing to fetch
  (:func:`external_resources`: scripts, stylesheets, pictures, frames, CSS urls), while a plain
  nbconvert export of the same notebook does (so the check can see what it looks for);
- 00_tour executed and exported, opened in Chromium with every non-file request blocked: no request
  leaves the machine, and the charts and highlighted spans are drawn.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from mabpd_kit.export import export_lesson, external_resources

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def test_external_resources_finds_what_a_page_would_fetch():
    page = ("<script src='https://cdn.example/require.js'></script><link rel=stylesheet href=//x.example/a.css>"
            "<img src=\"https://mybinder.org/badge_logo.svg\" alt=b><style>a{background:url(http://x/y.png)}</style>"
            "<a href='https://colab.research.google.com/'>open</a><img src='data:image/svg+xml;base64,AA'>")
    assert external_resources(page) == ["https://cdn.example/require.js", "https://mybinder.org/badge_logo.svg",
                                        "//x.example/a.css", "http://x/y.png"]


def test_plain_nbconvert_export_fetches_from_the_network():
    """Today's documented export: what the offline export must leave out."""
    import nbformat
    from nbconvert import HTMLExporter

    page, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.read(LESSONS[0], as_version=4))
    left = external_resources(page)
    assert any("require" in u for u in left) and any("mathjax" in u.lower() for u in left)
    assert any("badge" in u for u in left) == ("badge.svg" in LESSONS[0].read_text(encoding="utf-8"))


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_lesson_exports_with_nothing_to_fetch(lesson, tmp_path):
    out = export_lesson(lesson, tmp_path, execute=False)
    page = out.read_text(encoding="utf-8")
    assert external_resources(page) == []
    assert not re.search(r"<script[^>]+src=", page) and "MathJax.Hub" not in page
    assert "Open In Colab" in page or "colab-badge" not in lesson.read_text(encoding="utf-8")  # a badge: its text


@pytest.mark.browser
def test_executed_tour_export_makes_no_request_in_chromium(tmp_path, monkeypatch):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: run tools/ensure_chromium.sh or set CHROMIUM=/path")
    from playwright.sync_api import sync_playwright

    for k in ("MABPD_BASE_URL", "MABPD_API_KEY", "MABPD_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MABPD_OFFLINE", "1")
    monkeypatch.setenv("FAST", "1")
    out = export_lesson(ROOT / "notebooks" / "00_tour.ipynb", tmp_path / "00_tour.html")
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.route(re.compile(r"^(?!file:|data:|blob:|about:)"), lambda route: route.abort())
            page.goto(out.as_uri(), wait_until="load")
            page.wait_for_timeout(500)
            images = page.evaluate("() => [...document.querySelectorAll('img')].map(i => [i.complete, i.naturalWidth])")
            assert images and all(ok and w > 0 for ok, w in images), images
            assert page.locator(".mabpd-spans span[title]").count() >= 4
        finally:
            browser.close()
    external = [u for u in requests if not u.startswith(("file:", "data:", "blob:", "about:"))]
    assert external == [], external
