"""The tour as a student meets it, in headless Chromium (Debian's, driven by playwright). `make test-browser`.

1. JupyterLab on 127.0.0.1 (random port, token, no news feed, a temp copy of the notebooks): open
   00_tour, run all cells, drag the panel's slider, and check that the Python callback's caption and
   the chart changed.
2. An executed, HTML-exported 00_tour opened with every non-file request blocked: the charts
   (inline SVG) and the highlighted spans are there, and no Vega script comes from a CDN.

Screenshots and the exported HTML go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
BIN = Path(sys.executable).parent
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
VEGA_CDN = re.compile(r"cdn\.jsdelivr|vega@|vega-lite@|vega-embed@")
LAB_START_S = 90
RUN_ALL_S = int(os.environ.get("MABPD_BROWSER_RUN_S", "240"))
REDRAW_S = 60


def _offline_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MABPD_BASE_URL", "MABPD_API_KEY", "MABPD_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(MABPD_OFFLINE="1", FAST="1", JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
               JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"), IPYTHONDIR=str(tmp / "ipython"))
    return env


def _lab_settings(tmp: Path) -> Path:
    """User settings for a quiet, non-interactive JupyterLab: start the notebook's kernel without
    asking, never fetch news or check for updates (no toast, no request leaves the machine)."""
    settings = tmp / "lab-settings"
    for rel, body in {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": '{"autoStartDefaultKernel": true}',
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
            '{"fetchNews": "false", "checkForUpdates": false}',
    }.items():
        (settings / rel).parent.mkdir(parents=True, exist_ok=True)
        (settings / rel).write_text(body)
    return settings


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: run tools/ensure_chromium.sh or set CHROMIUM=/path")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """JupyterLab serving a temp copy of notebooks/; yields (base url with token, log path)."""
    tmp = tmp_path_factory.mktemp("lab")
    work = tmp / "root"
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    if (ROOT / "data").is_dir():
        (work / "data").symlink_to(ROOT / "data")
    port, token = _free_port(), secrets.token_hex(16)
    log = ARTIFACTS / "jupyterlab.log"
    ARTIFACTS.mkdir(exist_ok=True)
    cmd = [str(BIN / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}", "--LabApp.news_url=None",
           "--LabApp.expose_app_in_browser=True", "--ServerApp.terminals_enabled=False",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly"]
    if os.geteuid() == 0:  # CI containers run as root
        cmd.append("--allow-root")
    with open(log, "w") as fh:
        env = _offline_env(tmp) | {"JUPYTERLAB_SETTINGS_DIR": str(_lab_settings(tmp)),
                                   "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "lab-workspaces")}
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + LAB_START_S
            while True:
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"JupyterLab did not start in {LAB_START_S} s; see {log}")
                    time.sleep(0.5)
            yield f"{base}/lab/tree/notebooks/00_tour.ipynb?token={token}", log
        finally:
            _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """Stop the server and the kernels it started (its own process group)."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _block_outside(page, allowed: str) -> list[str]:
    """Abort every request whose URL does not start with ``allowed`` (data: and blob: URLs never hit
    the network); returns the list of blocked URLs. Allowed requests are not intercepted at all."""
    blocked: list[str] = []

    def abort(route):
        blocked.append(route.request.url)
        route.abort()

    page.route(re.compile(rf"^(?!{re.escape(allowed)}|data:|blob:)"), abort)
    return blocked


KERNEL_READY_JS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""


def test_tour_runs_in_jupyterlab_and_slider_redraws(chromium, lab):
    url, log = lab
    page = chromium.new_page(viewport={"width": 1280, "height": 1000})
    blocked = _block_outside(page, url.split("/lab/")[0])
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.set_default_timeout(RUN_ALL_S * 1000)
    try:
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=LAB_START_S * 1000)
        page.wait_for_function(KERNEL_READY_JS, timeout=LAB_START_S * 1000)
        assert not page.locator(".jp-Dialog").count(), "JupyterLab asks a question: " + page.locator(".jp-Dialog").inner_text()
        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")

        caption = page.locator(".widget-html-content", has_text="sentences flagged at floor")
        caption.wait_for(timeout=RUN_ALL_S * 1000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=RUN_ALL_S * 1000)
        panel = page.locator(".widget-vbox", has=caption)
        chart = panel.locator(".widget-output img, .widget-output svg").first
        chart.wait_for()
        before_caption, before_chart = caption.inner_text(), chart.evaluate("e => e.outerHTML")
        assert "at floor 0.45" in before_caption, before_caption

        # Every output the tour promises is on the page: spans, the static chart, the panel.
        assert page.locator(".mabpd-spans").count() >= 2
        assert page.locator(".jp-RenderedSVG, .jp-RenderedImage").count() >= 1
        assert not page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                                has_text="Traceback").count()
        panel.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "lab_tour_before.png"), full_page=False)

        # Drag the slider handle to the right, as a student would.
        handle = panel.locator(".noUi-handle").first
        box = handle.bounding_box()
        assert box is not None
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 120, y, steps=8)
        page.mouse.up()

        page.wait_for_function(
            "([el, old]) => el.innerText !== old", arg=[caption.element_handle(), before_caption], timeout=REDRAW_S * 1000
        )
        after_caption = caption.inner_text()
        page.wait_for_function(
            "([sel, old]) => { const e = document.querySelector(sel); return e && e.outerHTML !== old; }",
            arg=[".widget-vbox .widget-output img, .widget-vbox .widget-output svg", before_chart],
            timeout=REDRAW_S * 1000,
        )
        floor = float(re.search(r"at floor (\d\.\d+)", after_caption).group(1))  # type: ignore[union-attr]
        assert floor > 0.45, f"the slider moved right, the floor should rise: {after_caption!r}"
        readout = panel.locator(".widget-readout").first.inner_text()
        assert float(readout) == pytest.approx(floor), "caption computed by Python for the value shown"
        page.screenshot(path=str(ARTIFACTS / "lab_tour_after.png"), full_page=False)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "lab_tour_failure.png"), full_page=True)
        raise
    finally:
        (ARTIFACTS / "lab_blocked_requests.txt").write_text("\n".join(blocked))
        (ARTIFACTS / "lab_console.txt").write_text("\n".join(console))
        page.close()


def test_exported_tour_shows_charts_and_spans_offline(chromium, tmp_path):
    work = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", work)
    cmd = [str(BIN / "jupyter"), "nbconvert", "--to", "html", "--execute", "--ExecutePreprocessor.timeout=300",
           "--ExecutePreprocessor.store_widget_state=False", "--output-dir", str(tmp_path), str(work / "00_tour.ipynb")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=_offline_env(tmp_path))
    assert res.returncode == 0, res.stderr[-3000:]
    html_path = tmp_path / "00_tour.html"
    html = html_path.read_text(encoding="utf-8")
    shutil.copy(html_path, ARTIFACTS / "00_tour.html")

    assert not VEGA_CDN.search(html), "a chart needs Vega from a CDN: the offline renderer was not used"
    assert not re.search(r"<script[^>]+src=[\"'][^\"']*vega", html)
    n_svg = html.count("data:image/svg+xml;base64,") + len(re.findall(r"<svg[\s>]", html))
    assert n_svg >= 2, "the category chart and the panel's snapshot should be inline SVG"
    assert html.count('class="mabpd-spans"') >= 2
    assert "offline" in html, "the offline line of mk.connect() is part of the report"

    page = chromium.new_page(viewport={"width": 1100, "height": 900})
    blocked = _block_outside(page, "file:")
    try:
        page.goto(html_path.as_uri(), wait_until="load")
        images = page.evaluate(
            "() => [...document.querySelectorAll('img[src^=\"data:image/svg+xml\"]')]"
            ".map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
        )
        assert images and all(ok and w > 100 and h > 50 for ok, w, h in images), images
        spans = page.locator(".mabpd-spans span[title]")
        assert spans.count() >= 4 and "score" in (spans.first.get_attribute("title") or "")
        radical = page.locator(".mabpd-spans span[title]", has_text="radical").first
        bg = radical.evaluate("e => getComputedStyle(e).backgroundColor")
        assert bg not in ("rgba(0, 0, 0, 0)", "transparent", "rgb(255, 255, 255)"), bg
        page.screenshot(path=str(ARTIFACTS / "export_tour.png"), full_page=True)
    finally:
        (ARTIFACTS / "export_blocked_requests.txt").write_text("\n".join(blocked))
        page.close()
