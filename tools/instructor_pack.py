#!/usr/bin/env python
"""The numbers an instructor reads, from the lessons' own runs, in one place (docs/instructors/figures.json).

Commands::

    python tools/instructor_pack.py run 00 10          # time lessons (full mode, with and without data), keep their figures
    python tools/instructor_pack.py run 08 --modes data
    python tools/instructor_pack.py render             # write every figure into docs/instructors/*.md
    python tools/instructor_pack.py render --check     # exit 1 when a document is not what the JSON and lessons say

``run`` executes each lesson top to bottom in a kernel (``FAST=0``, offline; with ``MABPD_DATA_DIR`` for
``data``, an empty folder for ``no-data``), records its wall time, the kernel's CPU time, the load average
before and after, the date and commit, and evaluates the lesson's ``FIGURES`` (expressions over the
lesson's own variables, in the same kernel) into ``figures.json``. Lessons not named keep their entry.

``render`` fills every ``<!--fig:KEY-->...<!--/fig-->`` span of the instructor documents. Keys:
``NN.wall`` / ``NN.wall_nodata`` (seconds), ``NN.cpu``, ``NN.when``, ``NN.minutes`` and ``NN.exercise_minutes``
(the notebook headers, read from the notebooks each time), ``NN.title``, ``NN.fig.NAME`` (a lesson figure),
``course.wall`` / ``course.wall_nodata`` (the sum), ``table.runs`` (the timing table) and ``table.minutes``
(the header minutes of every lesson and exercise). The lesson list
is the course map, ``lessons`` in course.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACK = ROOT / "docs" / "instructors"
FIGURES_JSON = PACK / "figures.json"
DOCS = ("README.md", "timings.md", "lab_90min.md", "workshop_3h.md")
SPAN_RE = re.compile(r"<!--fig:([A-Za-z0-9_.]+)-->(.*?)<!--/fig-->", re.S)
TIME_RE = re.compile(r"\*\*Time\*\*: ~(\d+) min")
TITLE_RE = re.compile(r"^# \d\d · (.+?)(?::| \(|$)", re.M)

# Figures a document quotes, per lesson: name -> a Python expression over the lesson's own variables.
FIGURES: dict[str, dict[str, str]] = {
    "10": {
        "n": "n",
        "n_failed": "n_failed",
        "failed_ids": "', '.join(failed_ids) or 'none'",
        "n_decided": "n - n_failed",
        "k_rule": "k_rule",
        "k_real": "k_real",
        "real_biased": "len(called_biased['real'])",
        "rule_biased": "len(called_biased['rule'])",
        "label_s01": "next(('failed' if d.failed else d.label) for d in real if d.id == 's01')",
        "label_n02": "next(('failed' if d.failed else d.label) for d in real if d.id == 'n02')",
    },
}


def course_map(root: Path = ROOT) -> list[dict]:
    """The lessons in teaching order (course.json ``lessons``): id, notebook, exercise (or None)."""
    data = json.loads((root / "course.json").read_text(encoding="utf-8"))
    return data.get("lessons", [])


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def header(path: Path) -> dict:
    """Title and header minutes of a notebook (its first cell)."""
    first = "".join(_cells(path)[0]["source"])
    t, m = TITLE_RE.search(first), TIME_RE.search(first)
    return {"title": t.group(1).strip() if t else path.stem, "minutes": int(m.group(1)) if m else None}


def _commit() -> str:
    res = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return res.stdout.strip() or "?"


def run_lesson(notebook: Path, data_dir: str | None, figures: dict[str, str]) -> dict:
    """Execute one lesson in a fresh kernel; wall, kernel CPU, load, and its figures."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    probe = ("import json as _j, resource as _r\n_u = _r.getrusage(_r.RUSAGE_SELF); _c = _r.getrusage(_r.RUSAGE_CHILDREN)\n"
             "_figs = {}\n" + "".join(f"try:\n    _figs[{k!r}] = {v}\nexcept Exception as _e:\n    _figs[{k!r}] = None\n"
                                     for k, v in figures.items())
             + "print('@@PACK@@' + _j.dumps({'cpu': _u.ru_utime + _u.ru_stime + _c.ru_utime + _c.ru_stime, "
               "'figures': _figs}, default=str))")
    nb.cells.append(nbformat.v4.new_code_cell(probe))
    env_keys = ("FAST", "MABPD_DATA_DIR", "MABPD_OFFLINE")
    old = {k: os.environ.get(k) for k in env_keys}
    with tempfile.TemporaryDirectory() as empty:
        os.environ.update(FAST="0", MABPD_OFFLINE="1", MABPD_DATA_DIR=data_dir or empty)
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        try:
            NotebookClient(nb, timeout=1200, kernel_name="python3",
                           resources={"metadata": {"path": str(notebook.parent)}}).execute()
        finally:
            for k, v in old.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        wall = time.perf_counter() - t0
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    probe_out = json.loads(out.split("@@PACK@@", 1)[1])
    return {"wall_s": round(wall, 1), "cpu_s": round(probe_out["cpu"], 1), "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
            "when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": _commit(),
            "figures": probe_out["figures"]}


def cmd_run(ids: list[str], modes: list[str]) -> int:
    lessons = {entry["id"]: entry for entry in course_map()}
    data = json.loads(FIGURES_JSON.read_text(encoding="utf-8")) if FIGURES_JSON.is_file() else {"lessons": {}}
    data_dir = os.environ.get("MABPD_DATA_DIR")
    for lid in ids:
        if lid not in lessons:
            print(f"instructor_pack: no lesson {lid!r} in course.json's lessons", file=sys.stderr)
            return 2
        entry = data["lessons"].setdefault(lid, {})
        for mode in modes:
            if mode == "data" and not data_dir:
                print(f"{lid}: no MABPD_DATA_DIR, so no run with data", file=sys.stderr)
                continue
            res = run_lesson(ROOT / lessons[lid]["notebook"], data_dir if mode == "data" else None, FIGURES.get(lid, {}))
            figures = res.pop("figures")
            entry[mode] = res
            if figures:
                entry.setdefault("figures", {})[mode] = figures
            print(f"{lid} {mode}: {res['wall_s']} s wall, {res['cpu_s']} s kernel CPU, load {res['load']}")
    data["about"] = ("Written by tools/instructor_pack.py run (timed full-mode runs of the lessons, offline) and "
                     "rendered into the instructor documents by tools/instructor_pack.py render: do not edit by hand.")
    FIGURES_JSON.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def _fmt_s(v: float | None) -> str:
    return "not measured" if v is None else f"{v:.0f} s"


def values(root: Path = ROOT) -> dict[str, str]:
    """Every key a document may quote, as text."""
    data = json.loads((root / "docs" / "instructors" / "figures.json").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    rows = ["| lesson | wall, with data | wall, no data | kernel CPU (with data) | load (start -> end) | measured |",
            "|---|---|---|---|---|---|"]
    total = {"data": 0.0, "no-data": 0.0}
    complete = {"data": True, "no-data": True}
    for entry in course_map(root):
        lid = entry["id"]
        h = header(root / entry["notebook"])
        out[f"{lid}.title"] = h["title"]
        out[f"{lid}.minutes"] = str(h["minutes"])
        if entry.get("exercise"):
            out[f"{lid}.exercise_minutes"] = str(header(root / entry["exercise"])["minutes"])
        runs = data["lessons"].get(lid, {})
        for mode, suffix in (("data", ""), ("no-data", "_nodata")):
            r = runs.get(mode)
            out[f"{lid}.wall{suffix}"] = _fmt_s(r and r["wall_s"])
            if r:
                total[mode] += r["wall_s"]
            else:
                complete[mode] = False
        main = runs.get("data") or runs.get("no-data") or {}
        out[f"{lid}.cpu"] = _fmt_s(main.get("cpu_s"))
        out[f"{lid}.when"] = f"{main['when']}, {main['commit']}" if main else "not measured"
        for mode in ("data", "no-data"):
            for name, value in runs.get("figures", {}).get(mode, {}).items():
                out.setdefault(f"{lid}.fig.{name}", str(value))
        load = main.get("load")
        rows.append(f"| `{Path(entry['notebook']).stem}` | {out[f'{lid}.wall']} | {out[f'{lid}.wall_nodata']} | "
                    f"{out[f'{lid}.cpu']} | {f'{load[0]} -> {load[1]}' if load else ''} | {out[f'{lid}.when']} |")
    for mode, suffix in (("data", ""), ("no-data", "_nodata")):
        out[f"course.wall{suffix}"] = (f"{total[mode]:.0f} s" if complete[mode] else
                                       f"{total[mode]:.0f} s for the lessons measured so far")
    out["table.runs"] = "\n" + "\n".join(rows) + "\n"
    minutes = ["| lesson | header | exercise header |", "|---|---|---|"]
    for entry in course_map(root):
        lid = entry["id"]
        minutes.append(f"| {lid} {out[f'{lid}.title']} | {out[f'{lid}.minutes']} | {out.get(f'{lid}.exercise_minutes', '(none)')} |")
    out["table.minutes"] = "\n" + "\n".join(minutes) + "\n"
    return out


def render(check: bool, root: Path = ROOT) -> list[str]:
    """Fill the figure spans of the documents; return the documents that changed (written unless ``check``)."""
    vals = values(root)
    stale = []
    for name in DOCS:
        path = root / "docs" / "instructors" / name
        text = path.read_text(encoding="utf-8")

        def fill(m: re.Match) -> str:
            if m.group(1) not in vals:
                raise KeyError(f"{name}: unknown figure {m.group(1)!r} (see tools/instructor_pack.py)")  # noqa: B023
            return f"<!--fig:{m.group(1)}-->{vals[m.group(1)]}<!--/fig-->"

        new = SPAN_RE.sub(fill, text)
        if new != text:
            stale.append(name)
            if not check:
                path.write_text(new, encoding="utf-8")
    return stale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="time lessons and keep their figures in docs/instructors/figures.json")
    r.add_argument("ids", nargs="+", help="lesson ids, e.g. 00 10")
    r.add_argument("--modes", nargs="+", default=["data", "no-data"], choices=["data", "no-data"])
    c = sub.add_parser("render", help="write the figures into the instructor documents")
    c.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        return cmd_run(args.ids, args.modes)
    try:
        stale = render(args.check)
    except KeyError as exc:
        print(f"instructor_pack: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.check:
        for name in stale:
            print(f"  stale figures: docs/instructors/{name}", file=sys.stderr)
        print("instructor figures current" if not stale else f"{len(stale)} document(s) out of date: run render")
        return 1 if stale else 0
    print(f"{len(stale)} document(s) rewritten" if stale else "instructor figures current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
