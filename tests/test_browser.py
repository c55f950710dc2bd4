"""The lessons as a student meets them, in headless Chromium (Debian's, driven by playwright). `make test-browser`.

1. JupyterLab on 127.0.0.1 (random port, token, no news feed, a temp copy of the notebooks): open
   00_tour, run all cells, drag the panel's slider, and check that the Python callback's caption and
   the chart changed.
2. Every lesson with a slider panel (found in its source: ``ParameterPanel`` or ``..._panel(``), run
   the same way, then EVERY panel on the page in document order (the outermost ``.widget-vbox`` with a
   ``.widget-output`` child and a control): its first slider, drop-down or check box is moved as a
   student would, and its caption or chart must change without "Could not redraw". The page must show
   at least as many panels as the lesson's code builds. Written generically, so a new lesson or panel is
   covered without editing this file; ``MABPD_BROWSER_LESSONS=00,03`` narrows the run.
3. An executed, HTML-exported 00_tour opened with every non-file request blocked: the charts
   (inline SVG pictures with alt text) and the highlighted spans are there, no Vega script comes from
   a CDN, and nbconvert found no image without alternative text.

Screenshots (before / after for every panel, lab_<lesson>_p<k>_*.png, clipped to the panel; p1 also as
lab_<lesson>_before/after.png), the exported HTML and the timings (one line per panel in
browser_lesson_times.txt) go to test-artifacts/ (gitignored).
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
        # windowing "none": every cell is in the DOM, so a panel far down a lesson can be found and scrolled to
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
            '{"autoStartDefaultKernel": true, "windowingMode": "none"}',
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
    """JupyterLab serving a temp copy of notebooks/; yields (url of 00_tour with the token, log path).
    Any other lesson: replace ``00_tour.ipynb`` in that url."""
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
        charts = page.locator("img.mabpd-chart")
        assert charts.count() >= 1 and all((charts.nth(i).get_attribute("alt") or "").strip()
                                           for i in range(charts.count())), "every chart has alt text"
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
    assert "Alternative text is missing" not in res.stderr, "an image in the export has no alt text"
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
        alts = page.evaluate("() => [...document.querySelectorAll('img')].map(i => i.getAttribute('alt') || '')")
        assert all(a.strip() and not a.startswith("No description") for a in alts), alts
        spans = page.locator(".mabpd-spans span[title]")
        assert spans.count() >= 4 and "score" in (spans.first.get_attribute("title") or "")
        radical = page.locator(".mabpd-spans span[title]", has_text="radical").first
        bg = radical.evaluate("e => getComputedStyle(e).backgroundColor")
        assert bg not in ("rgba(0, 0, 0, 0)", "transparent", "rgb(255, 255, 255)"), bg
        page.screenshot(path=str(ARTIFACTS / "export_tour.png"), full_page=True)
    finally:
        (ARTIFACTS / "export_blocked_requests.txt").write_text("\n".join(blocked))
        page.close()


# ------------------------------------------------------------------------------------------------
# every lesson with a panel: run all, then move the first control of EVERY panel; each must redraw
# ------------------------------------------------------------------------------------------------

PANEL_RE = re.compile(r"ParameterPanel\(|\w_panel\(")
#: a panel built in a code cell (``ParameterPanel(`` or ``..._panel(``, not a ``def ..._panel(`` line)
PANEL_CALL_RE = re.compile(r"(?<!def )\b(?:ParameterPanel|\w+_panel)\(")


def _panel_lessons() -> dict[Path, int]:
    """The lessons with a panel, each with the number of panels its code cells build."""
    import json

    only = {x.strip() for x in os.environ.get("MABPD_BROWSER_LESSONS", "").split(",") if x.strip()}
    out = {}
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        if PANEL_RE.search(code) and (not only or nb.name[:2] in only):
            out[nb] = len(PANEL_CALL_RE.findall(code))
    return out


PANEL_LESSONS = _panel_lessons()
#: what a lesson prints instead of a panel it cannot build without benchmark data (lesson 08's LLM vote)
NO_PANEL_TEXT = "The panel needs"
#: the controls a panel's "first control" is chosen from (a text box is skipped: no value to pick)
CONTROL_SEL = ".noUi-handle, select, input[type=checkbox]"
FRAME_MARGIN = 16
MAX_VIEWPORT_H = 2400

# A panel: a .widget-vbox with a .widget-output among its own children and a control inside it (a
# ParameterPanel's VBox: [title], controls, caption, output). Only the outermost such box counts, so a box
# nested inside a panel is not a second panel. Numbered 1.. in document order (data-mabpd-panel).
FIND_PANELS_JS = """() => {
  const root = window.jupyterapp.shell.currentWidget.node;
  const boxes = [...root.querySelectorAll('.widget-vbox')].filter(b =>
    [...b.children].some(c => c.classList.contains('widget-output')) && b.querySelector('%s'));
  const panels = boxes.filter(b => !boxes.some(o => o !== b && o.contains(b)));
  panels.forEach((p, i) => p.setAttribute('data-mabpd-panel', String(i + 1)));
  return panels.length;
}""" % CONTROL_SEL

# title: the HTML children above the first control; caption: those below it; chart: the output's HTML
# (length and a hash; the whole of it is compared, not a prefix).
PANEL_STATE_JS = """(p) => {
  const kids = [...p.children];
  const first = kids.findIndex(c => c.matches('%s') || c.querySelector('%s'));
  const html = (keep) => kids.filter((c, i) => c.classList.contains('widget-html') && keep(i))
                             .map(c => c.innerText.trim()).join(' | ');
  const out = kids.find(c => c.classList.contains('widget-output'));
  const o = out ? out.innerHTML : '';
  let h = 0;
  for (let i = 0; i < o.length; i++) h = (h * 31 + o.charCodeAt(i)) | 0;
  return {title: first > 0 ? html(i => i < first) : '', caption: html(i => i > first),
          chart: o.length + ':' + h, drawn: !!(out && out.querySelector('.jp-OutputArea-output'))};
}""" % (CONTROL_SEL, CONTROL_SEL)

PANEL_CHANGED_JS = f"""([p, old]) => {{
  const now = ({PANEL_STATE_JS})(p);
  return now.caption !== old.caption || now.chart !== old.chart;
}}"""

# Scroll the panel to the top of the notebook's scroller (a margin above it); its box and the scroller's.
FRAME_JS = """(p, margin) => {
  let s = p.parentElement;
  while (s && !(/(auto|scroll)/.test(getComputedStyle(s).overflowY) && s.scrollHeight > s.clientHeight)) s = s.parentElement;
  if (s) s.scrollTop += p.getBoundingClientRect().top - s.getBoundingClientRect().top - margin;
  const r = p.getBoundingClientRect();
  const v = s ? s.getBoundingClientRect() : {top: 0, bottom: window.innerHeight};
  return {x: r.x, y: r.y, width: r.width, height: r.height, top: v.top, bottom: v.bottom};
}"""

READOUT_JS = """(e) => {
  const w = e.closest('.widget-slider');
  const r = w && w.querySelector('.widget-readout');
  return r ? (r.tagName === 'INPUT' ? r.value : r.innerText).trim() : '';
}"""

LABEL_JS = """(e) => {
  const w = e.closest('.widget-inline-hbox') || e.parentElement;
  const l = w.querySelector('.widget-label');
  return ((l && l.textContent.trim()) || w.innerText.trim().split('\\n')[0] || '').slice(0, 40);
}"""


def _frame(page, panel) -> dict[str, float]:
    """Scroll the panel to the top of the notebook and return a screenshot clip: its box plus a margin,
    within the notebook's visible area. A panel taller than that area first gets a taller window."""
    for _ in range(3):
        r = panel.evaluate(FRAME_JS, FRAME_MARGIN)
        short = r["height"] + 2 * FRAME_MARGIN - (r["bottom"] - r["top"])
        vp = page.viewport_size
        if short <= 0 or vp["height"] >= MAX_VIEWPORT_H:
            break
        page.set_viewport_size({"width": vp["width"], "height": int(min(MAX_VIEWPORT_H, vp["height"] + short + 8))})
        page.wait_for_timeout(300)  # JupyterLab lays the shell out again
    vp = page.viewport_size
    x0, y0 = max(0.0, r["x"] - FRAME_MARGIN), max(r["top"], r["y"] - FRAME_MARGIN)
    y1 = min(r["bottom"], r["y"] + r["height"] + FRAME_MARGIN, vp["height"])
    return {"x": x0, "y": y0, "width": min(vp["width"] - x0, r["width"] + 2 * FRAME_MARGIN), "height": max(1.0, y1 - y0)}


def _settled_state(page, panel, quiet_s: float = 0.5) -> dict:
    """The panel's state once the kernel is idle and two reads ``quiet_s`` apart agree (an update clears
    the output before drawing the new chart; the in-between state must not count as the redraw)."""
    page.wait_for_function(KERNEL_READY_JS, timeout=REDRAW_S * 1000)
    deadline = time.monotonic() + REDRAW_S
    state = panel.evaluate(PANEL_STATE_JS)
    while time.monotonic() < deadline:
        page.wait_for_timeout(quiet_s * 1000)
        now = panel.evaluate(PANEL_STATE_JS)
        if now == state:
            return now
        state = now
    raise AssertionError(f"the panel kept changing for {REDRAW_S} s")


def _move_first_control(page, panel) -> str:
    """Move the panel's first slider, drop-down or check box as a student would: drag the slider's handle
    (right, or left when it is at its maximum), pick the next drop-down option, click the check box.
    Returns what was done; fails when the control's value did not change."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    control = panel.locator(CONTROL_SEL).first
    control.wait_for()
    label = control.evaluate(LABEL_JS)
    kind = control.evaluate("e => e.tagName === 'SELECT' ? 'select' : e.tagName === 'INPUT' ? 'checkbox' : 'slider'")
    if kind == "select":
        options = control.evaluate("e => [...e.options].map(o => o.value)")
        current = control.evaluate("e => e.value")
        assert len(options) > 1, f"drop-down {label!r} has a single option"
        target = options[(options.index(current) + 1) % len(options)]
        control.select_option(target)
        return f"drop-down {label}: {current!r} -> {target!r}"
    if kind == "checkbox":
        was = control.is_checked()
        control.click()
        assert control.is_checked() != was, f"check box {label!r} did not toggle"
        return f"check box {label}: {'ticked' if not was else 'unticked'}"
    old = control.evaluate(READOUT_JS)
    for dx, way in ((90, "right"), (-90, "left")):
        box = control.bounding_box()
        assert box is not None, f"slider {label!r} has no handle on screen"
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + dx, y, steps=8)
        page.mouse.up()
        try:
            page.wait_for_function(f"([e, old]) => ({READOUT_JS})(e) !== old", arg=[control.element_handle(), old],
                                   timeout=3000)
        except PlaywrightTimeout:
            continue
        return f"slider {label} dragged {way}: {old} -> {control.evaluate(READOUT_JS)}"
    raise AssertionError(f"slider {label!r}: dragging its handle right and left left it at {old}")


def _exercise_panel(page, panel, shot: str) -> tuple[str, str, str]:
    """Screenshot, move the first control, wait for the redraw, screenshot; returns (title, done, result)."""
    page.wait_for_function(f"(p) => {{ const s = ({PANEL_STATE_JS})(p); return s.drawn || s.caption !== ''; }}",
                           arg=panel.element_handle(), timeout=REDRAW_S * 1000)
    before = _settled_state(page, panel)
    page.screenshot(path=f"{shot}_before.png", clip=_frame(page, panel))
    done = "-"
    try:
        done = _move_first_control(page, panel)
        page.wait_for_function(PANEL_CHANGED_JS, arg=[panel.element_handle(), before], timeout=REDRAW_S * 1000)
        after = _settled_state(page, panel)
        assert "Could not redraw" not in after["caption"], f"the panel failed: {after['caption']}"
        changed = [part for part in ("caption", "chart") if after[part] != before[part]]
        assert changed, "caption and chart are as before once the kernel is idle again"
        page.screenshot(path=f"{shot}_after.png", clip=_frame(page, panel))
    except Exception as exc:
        exc.add_note(f"after: {done}")
        raise
    return before["title"], done, "redrew " + " and ".join(changed)


@pytest.mark.parametrize("lesson", list(PANEL_LESSONS), ids=[p.stem for p in PANEL_LESSONS])
def test_lesson_panel_redraws_when_a_control_moves(chromium, lab, lesson: Path):
    """Run all cells, then, for every panel in document order: scroll it to the top, screenshot
    (lab_<lesson>_p<k>_before.png), move its first control, wait until its caption or chart changes with
    no "Could not redraw", screenshot (..._after.png). One line per panel in browser_lesson_times.txt.
    Every panel is tried; the test fails if any did not redraw or fewer panels are on the page than the
    lesson's code builds."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    url, _ = lab
    page = chromium.new_page(viewport={"width": 1280, "height": 1000})
    blocked = _block_outside(page, url.split("/lab/")[0])
    page.set_default_timeout(RUN_ALL_S * 1000)
    name, expected = lesson.stem, PANEL_LESSONS[lesson]
    lines: list[str] = []
    failures: list[str] = []
    t0 = time.monotonic()
    try:
        # a workspace of its own, reset: only this lesson is open (no hidden tab of an earlier one)
        page.goto(url.replace("/lab/tree/", f"/lab/workspaces/{name}/tree/").replace("00_tour.ipynb", lesson.name)
                  + "&reset", wait_until="domcontentloaded")
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=LAB_START_S * 1000)
        page.wait_for_function(KERNEL_READY_JS, timeout=LAB_START_S * 1000)
        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
        panel_or_note = page.locator(".jp-NotebookPanel .widget-vbox", has=page.locator(".widget-output")).or_(
            page.locator(".jp-OutputArea-output", has_text=NO_PANEL_TEXT))
        panel_or_note.first.wait_for(timeout=RUN_ALL_S * 1000)
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").locator("visible=true").first.wait_for(
            timeout=RUN_ALL_S * 1000)
        assert not page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                                has_text="Traceback").count(), f"{name}: a cell failed"
        # without benchmark data a lesson may say a panel cannot be built (and why) instead of building it
        not_built = page.locator(".jp-OutputArea-output", has_text=NO_PANEL_TEXT).count()
        expected -= not_built
        try:  # widget views render after the kernel is idle
            page.wait_for_function(f"() => ({FIND_PANELS_JS})() >= {expected}", timeout=REDRAW_S * 1000)
        except PlaywrightTimeout:
            pass  # counted below
        n = page.evaluate(FIND_PANELS_JS)
        lines.append(f"# {name}: run all {time.monotonic() - t0:.1f} s; {n} panels on the page, "
                     f"{expected} built in the code" + (f" ({not_built} said it needs data)" if not_built else ""))
        for k in range(1, n + 1):
            t = time.monotonic()
            panel = page.locator(f"[data-mabpd-panel='{k}']")
            shot = str(ARTIFACTS / f"lab_{name}_p{k}")
            title = panel.evaluate(PANEL_STATE_JS)["title"]
            try:
                title, done, result = _exercise_panel(page, panel, shot)
            except (AssertionError, PlaywrightError) as exc:
                done, result = "; ".join(getattr(exc, "__notes__", [])) or "-", f"FAILED: {str(exc).splitlines()[0]}"
                failures.append(f"{name} panel {k} ({title or 'no title'}) {done}: {exc}")
                try:
                    page.screenshot(path=f"{shot}_failure.png", clip=_frame(page, panel))
                except Exception:
                    pass
            lines.append(f"{name}\tp{k}\t{title or '-'}\t{done}\t{result}\t{time.monotonic() - t:.1f} s")
        for old, new in (("p1_before", "before"), ("p1_after", "after")):  # the single-panel names of before
            if (ARTIFACTS / f"lab_{name}_{old}.png").exists():
                shutil.copy(ARTIFACTS / f"lab_{name}_{old}.png", ARTIFACTS / f"lab_{name}_{new}.png")
        assert n >= 1 or (not_built and expected == 0), f"{name}: no panel on the page"
        assert n >= expected, f"{name}: {n} panels on the page, the lesson's code builds {expected}"
        assert not failures, "\n".join(failures)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / f"lab_{name}_failure.png"), full_page=True)
        raise
    finally:
        with open(ARTIFACTS / "browser_lesson_times.txt", "a") as fh:
            fh.write("".join(line + "\n" for line in lines))
        (ARTIFACTS / f"lab_{name}_blocked_requests.txt").write_text("\n".join(blocked))
        try:  # free the kernel for the next lesson (two cores)
            page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        except Exception:
            pass
        page.close()
