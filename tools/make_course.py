#!/usr/bin/env python
"""The course as an instructor hands it out, and the two notebook cells that make it install anywhere.

One setting, ``course.json`` at the repository root (copied into every bundle):

- ``source``: what follows ``pip install`` when a notebook's kernel has no mabpd-kit and no wheel is
  near it (a git URL, ``--extra-index-url URL mabpd-kit``, or ``mabpd-kit`` once it is on PyPI).
  Empty by default: the kit is not published, so a notebook installs from the bundle's wheel.
- ``repository`` (and ``branch``): the kit's public GitHub URL. When set, every notebook's first cell
  gets "Open In Colab" / "Launch Binder" links for its own path (text links: nothing to fetch offline).
  Empty by default: no links.

Commands::

    python tools/make_course.py cells           # rewrite the setup cell and the launch links of notebooks/ and solutions/
    python tools/make_course.py cells --check   # exit 1 when a notebook does not carry the current cells
    python tools/make_course.py docs            # write the course map into the documents that list the lessons
    python tools/make_course.py docs --check    # exit 1 when a document's course map is not course.json's
    python tools/make_course.py bundle          # dist/course/ + course.zip, dist/instructor/ + instructor.zip (`make course`)

``lessons`` in course.json is the course map (number, title, minutes, data, notebook, exercise, objectives).
``docs`` rewrites, in each of ``MAP_DOCS``, only what stands between ``<!-- course-map:start FORM -->`` and
``<!-- course-map:end -->``; FORM is ``table`` (one row a lesson) or ``objectives`` (each lesson's objectives).
``cells`` touches only the first cell's launch-link line and the setup cell (the second code cell) of
each notebook, reading and writing each file in one go; run ``tools/make_exercises.py`` after it.
Two bundles. ``course/`` (and ``course.zip``) is what students get: the wheel (``uv build --wheel`` of this
checkout), the lessons and exercises without outputs, course.json, the course packs of recorded model answers
(``packs/``, replayed with ``MABPD_PACK``), a README (install Jupyter, the student's seed, data) and a
``notebooks/README.md`` for the bundle (no Makefile there). No solutions and no instructor pack: the
exercises' reference answers are computed by hidden checks (``mabpd_kit.exercises``), not stored.
``instructor/`` (and ``instructor.zip``) adds ``solutions/``, the instructor pack (docs/instructors) and
``grade.py`` (tools/grade_submissions.py), the hidden tests an instructor runs on submissions.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = "course.json"
NOTEBOOK_DIRS = ("notebooks", "solutions")
NAME_RE = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")
LINK_LINE_RE = re.compile(r"^.*(colab\.research\.google\.com|mybinder\.org).*\n?", re.M)
MAP_DOCS = ("README.md", "notebooks/README.md", "docs/instructors/README.md")
MAP_RE = re.compile(r"(<!-- course-map:start (\w+) -->\n)(.*?)(<!-- course-map:end -->)", re.S)
GITHUB_RE = re.compile(r"^https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")

# The setup cell: students read it, so it stays short and says what it does.
SETUP_CELL = '''\
# Setup (source hidden): installs mabpd-kit if this kernel lacks it, then says which data the lesson reads.
# Installs from the first of: a wheel (.whl) beside this notebook or in the bundle's wheels/ folder; the
# source the instructor set in course.json; else it says why not. Same cell in every lesson (make_course.py).
import importlib.util
import json
import subprocess
import sys
from pathlib import Path


def install_mabpd_kit():
    """None when mabpd-kit can be imported (installed here if need be), else one sentence saying why not."""
    if importlib.util.find_spec("mabpd_kit"):
        return None
    places = [Path("."), Path(".."), Path("course")]   # on Colab the kernel runs in /content: an unzipped bundle is course/
    wheels = [w for p in places for w in sorted([*p.glob("mabpd_kit-*.whl"), *p.glob("wheels/mabpd_kit-*.whl")])]
    manifest = next((p / "course.json" for p in places if (p / "course.json").is_file()), None)
    source = json.loads(manifest.read_text(encoding="utf-8")).get("source", "") if manifest else ""
    if wheels:
        args = [str(wheels[-1]), "--find-links", str(wheels[-1].parent)]
    elif source:
        args = source.split()   # what follows `pip install`: a git URL, an index and a name, ...
    else:
        return ("mabpd-kit is not installed, no wheel is here and no course.json names a source: upload the course "
                "bundle's wheels/mabpd_kit-*.whl beside this notebook (or pip install the kit) and run this cell again")
    print(f"installing mabpd-kit from {args[0]} (about a minute) ...")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-color", *args], capture_output=True, text=True)
    if pip.returncode != 0:
        last = [line.strip() for line in pip.stderr.splitlines() if line.strip()] or [f"exit status {pip.returncode}"]
        return f"pip could not install mabpd-kit from {args[0]}: {last[-1]}"
    importlib.invalidate_caches()
    return None


problem = install_mabpd_kit()
if problem:
    print(f"setup: {problem}. Until then the cells below fail on `mk`.")
else:
    import mabpd_kit as mk

    print(mk.data.describe())   # benchmark copies under MABPD_DATA_DIR, else the samples shipped with the kit
'''


def read_manifest(root: Path = ROOT) -> dict:
    """course.json with its defaults filled in; a repository that is not a GitHub URL is an error."""
    path = root / MANIFEST
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    out = dict(data)
    for key, default in (("source", ""), ("repository", ""), ("branch", "main")):
        out.setdefault(key, default)
    if out["repository"] and not GITHUB_RE.match(out["repository"]):
        raise ValueError(f"{path}: repository must look like https://github.com/OWNER/NAME, not {out['repository']!r}")
    return out


def launch_links(rel_path: str, manifest: dict) -> str:
    """The first cell's "Open In Colab" / "Launch Binder" line for ``rel_path``, or "" with no repository."""
    m = GITHUB_RE.match(manifest.get("repository") or "")
    if not m:
        return ""
    owner, name = m.groups()
    branch = manifest.get("branch") or "main"
    colab = f"https://colab.research.google.com/github/{owner}/{name}/blob/{branch}/{rel_path}"
    binder = f"https://mybinder.org/v2/gh/{owner}/{name}/{branch}?labpath={quote(rel_path, safe='')}"
    return f"[Open In Colab]({colab}) · [Launch Binder]({binder})"


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def header_with_links(header: str, links: str) -> str:
    """The first cell with its launch-link line replaced (removed when ``links`` is empty): right after the title."""
    body = LINK_LINE_RE.sub("", header)
    title, sep, rest = body.partition("\n")
    rest = rest.lstrip("\n")
    if not links:
        return f"{title}\n\n{rest}" if sep else title
    return f"{title}\n\n{links}\n\n{rest}"


#: The setup cell's metadata: its source collapsed in Jupyter and dropped from exports; its output stays.
SETUP_METADATA = {"tags": ["remove_input"], "jupyter": {"source_hidden": True}, "transient": {"remove_source": True}}


def setup_cell_index(cells: list[dict]) -> int | None:
    """Index of the setup cell: the second code cell (the first is ``parameters``)."""
    code = [i for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    return code[1] if len(code) >= 2 else None


def rewrite_cells(path: Path, manifest: dict, root: Path = ROOT, write: bool = True) -> bool:
    """Give one notebook the current setup cell and launch links; True when it changed (written if ``write``)."""
    text = path.read_text(encoding="utf-8")
    nb = json.loads(text)
    cells = nb["cells"]
    rel = path.resolve().relative_to(root.resolve()).as_posix()
    changed = False
    head = _src(cells[0])
    new_head = header_with_links(head, launch_links(rel, manifest))
    if new_head != head:
        cells[0]["source"] = _lines(new_head)
        changed = True
    i = setup_cell_index(cells)
    if i is None:
        raise ValueError(f"{path}: no second code cell to hold the setup cell")
    if _src(cells[i]) != SETUP_CELL.rstrip("\n"):
        cells[i]["source"] = _lines(SETUP_CELL.rstrip("\n"))
        changed = True
    meta = cells[i].setdefault("metadata", {})
    if meta != {**meta, **SETUP_METADATA}:   # collapsed in Jupyter, its code left out of an HTML export
        meta.update(SETUP_METADATA)
        changed = True
    if changed and write:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


def course_notebooks(root: Path = ROOT) -> list[Path]:
    return [p for d in NOTEBOOK_DIRS for p in sorted((root / d).glob("*.ipynb")) if NAME_RE.match(p.name)]


def cmd_cells(check: bool) -> int:
    manifest = read_manifest()
    stale = [p for p in course_notebooks() if rewrite_cells(p, manifest, write=not check)]
    if check:
        for p in stale:
            print(f"  stale setup cell or launch links: {p.relative_to(ROOT)}", file=sys.stderr)
        print(f"{len(stale)} notebook(s) out of date" if stale else "setup cells and launch links current")
        return 1 if stale else 0
    for p in stale:
        print(f"rewritten: {p.relative_to(ROOT)}")
    print(f"{len(stale)} notebook(s) rewritten; now run tools/make_exercises.py")
    return 0


def _name(path: str | None) -> str:
    return f"`{Path(path).stem}`" if path else "-"


def course_map(form: str, lessons: list[dict]) -> str:
    """The course map as Markdown: ``table`` (one row a lesson) or ``objectives`` (a heading and list a lesson)."""
    if form == "table":
        rows = ["| lesson | notebook | minutes | exercise | data |", "|---|---|---|---|---|"]
        rows += [f"| {e['id']} {e['title']} | {_name(e['notebook'])} | ~{e['minutes']} | {_name(e['exercise'])} "
                 f"| {e['data']} |" for e in lessons]
        return "\n".join(rows) + "\n"
    if form == "objectives":
        parts = [f"**{e['id']} · {e['title']}** (~{e['minutes']} min; {e['data']})\n\n"
                 + "".join(f"- {o}\n" for o in e["objectives"]) for e in lessons]
        return "\n".join(parts)
    raise ValueError(f"unknown course-map form {form!r}: table or objectives")


def fill_course_map(text: str, lessons: list[dict]) -> str:
    """``text`` with every course-map block between its markers rewritten from ``lessons``."""
    return MAP_RE.sub(lambda m: m[1] + course_map(m[2], lessons) + m[4], text)


def cmd_docs(check: bool, root: Path = ROOT) -> int:
    lessons = read_manifest(root).get("lessons", [])
    stale = []
    for rel in MAP_DOCS:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        if not MAP_RE.search(text):
            raise ValueError(f"{rel}: no <!-- course-map:start FORM --> ... <!-- course-map:end --> block")
        new = fill_course_map(text, lessons)
        if new != text:
            stale.append(rel)
            if not check:
                path.write_text(new, encoding="utf-8")
    verb = "out of date" if check else "rewritten"
    for rel in stale:
        print(f"  course map {verb}: {rel}", file=sys.stderr if check else sys.stdout)
    print(f"{len(stale)} document(s) {verb}" if stale else "course maps current")
    return 1 if check and stale else 0


def _strip_outputs(src: Path, dst: Path) -> None:
    nb = json.loads(src.read_text(encoding="utf-8"))
    for c in nb["cells"]:
        if c.get("cell_type") == "code":
            c["outputs"], c["execution_count"] = [], None
    dst.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _uv() -> str | None:
    for cand in (shutil.which("uv"), str(Path(sys.executable).with_name("uv"))):
        if cand and Path(cand).exists():
            return cand
    return None


def build_wheel(out_dir: Path) -> Path:
    """The kit's wheel, built from a copy of the sources (the checkout's build/ is never touched): ``uv build``
    offline from uv's cache when it can, else online; without uv, ``pip wheel --no-deps``."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, src / name)
        shutil.copytree(ROOT / "mabpd_kit", src / "mabpd_kit", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        uv = _uv()
        tries = ([[uv, "build", "--wheel", "--offline", "-q", "-o", str(out_dir), str(src)],
                  [uv, "build", "--wheel", "-q", "-o", str(out_dir), str(src)]] if uv else
                 [[sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out_dir), str(src)]])
        for cmd in tries:
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode == 0:
                break
        else:
            raise RuntimeError("building the wheel failed: " + " | ".join(res.stderr.strip().splitlines()[-3:]))
    (out_dir / ".gitignore").unlink(missing_ok=True)   # uv build leaves one in its output folder
    wheels = sorted(out_dir.glob("mabpd_kit-*.whl"))
    if not wheels:
        raise RuntimeError(f"no mabpd_kit wheel was written into {out_dir}")
    return wheels[-1]


STUDENT_README = """\
# mabpd-kit course (version {version})

The lessons and exercises of the mabpd-kit course, with the kit itself:

- `notebooks/`: the lessons 00-10, in order (`00_tour` first; the table below); `notebooks/README.md` says how to
  run them.
- `exercises/`: one exercise per lesson 01-09. Fill in each `# TODO`, then run the **check** cell under it:
  it fails with a hint until your answer is right.
- `wheels/{wheel}`: the kit; `packs/`: recorded model answers (lesson 10 replays one); `course.json`: where a
  notebook installs the kit from when no wheel is near it{source_note}.

<!-- course-map:start table -->
<!-- course-map:end -->

## 1. Install Jupyter (once)

On Colab or a JupyterHub, skip this. On your own machine, with Python 3.10 or newer:

    python3 -m venv mabpd-course                # Windows: py -m venv mabpd-course
    source mabpd-course/bin/activate            # Windows: mabpd-course\\Scripts\\activate
    pip install jupyterlab wheels/{wheel}

(The last step also installs the kit; without it, every notebook's setup cell, its second code cell, installs it
from `wheels/`.) Then start Jupyter **in this folder**: `jupyter lab`, and open `notebooks/00_tour.ipynb`.

## 2. Your own exercise data

Exercises 05, 06, 07 and 08 run on data generated for you. Set your id before starting Jupyter, e.g.
`MABPD_STUDENT=jdoe jupyter lab` (Windows: `set MABPD_STUDENT=jdoe` first); unset, everyone gets the same data.
Your instructor grades with the same id.

## 3. Data

Everything runs offline with what is in this folder: the lessons use the small teaching samples shipped with
the kit (a few dozen sentences, a toy corpus): on so few items a number is an illustration, not a finding. The
benchmark data sets (BABE, the RADAR logs, HyperPartisan) are **not** in the bundle: if your instructor gives you
a copy, point `MABPD_DATA_DIR` at its folder before starting Jupyter and the lessons use it (each lesson prints
which data it runs on). Never commit or share benchmark copies.

Lesson 09 writes its offline HTML report into a `reports/` folder next to the notebook (`notebooks/reports/`);
the lesson links to it.

Built by `make course` (tools/make_course.py).
"""

STUDENT_NOTES = """\
# Running the notebooks (course bundle)

- Start Jupyter in the bundle's folder (`jupyter lab`; see `../README.md` to install it) and open the notebooks in
  order, `00_tour` first. Each notebook's setup cell (its second code cell) installs the kit from `../wheels/` when
  the kernel lacks it.
- Everything runs **offline** by default: `mk.connect()` prints one line saying the built-in rule-based agents
  are in use. To use a real model, set `MABPD_BASE_URL` / `MABPD_MODEL` (and a key in `MABPD_API_KEY` if the server
  needs one) before starting Jupyter.
- Set `FAST = True` in the first code cell (or start Jupyter with `FAST=1`) for a quick run on small data.
- Data: without `MABPD_DATA_DIR` the lessons use the teaching samples shipped with the kit and say so; with it
  pointing at a copy of the benchmarks, they use those.
- `10_real_model` replays answers recorded from a small real model (`../packs/`); `LIVE = True` in its first cell
  asks the model on your machine (`pip install "mabpd-kit[local]"`; minutes per sentence on 2 cores).
- Exercises: open `../exercises/NN_topic.ipynb`, replace each `# TODO: your code here`, run the **check** cell
  under it. Set `MABPD_STUDENT` to your id before starting Jupyter to get your own exercise data.
- Export a notebook as an HTML report:
  `jupyter nbconvert --to html --execute --ExecutePreprocessor.store_widget_state=False notebooks/00_tour.ipynb`.
  Its charts, tables and highlighted spans are inline and show with no network; nbconvert's page template still
  links MathJax and require.js from a CDN, which only the formulas need.
"""

INSTRUCTOR_README = """\
# mabpd-kit course: instructor bundle (version {version})

What students get is `course.zip` (`course/`: the lessons, the exercises, the wheel, the packs, course.json, a
README with the install and data steps). This bundle adds what they must not get:

- `solutions/`: the worked exercises (the check cells pass on them).
- `instructors/`: plans (90-minute lab, 3-hour workshop), timings and lesson figures (generated from a timed run of
  the lessons: `instructors/figures.json`), room setup, glossary, self-check answers.
- `grade.py`: the hidden tests. `python grade.py submissions/*.ipynb` runs each submitted exercise with its check
  cells replaced by the pristine ones (a student cannot edit a check into passing) and with `MABPD_STUDENT` set to
  the student (the part of the file name before `__`, e.g. `jdoe__08_evaluation.ipynb`, else the folder holding it,
  or `--student ID`): the checks compare against the data generated for that student. One point per check; a table
  on screen and `grades.csv`. Needs Jupyter and the kit (`pip install jupyterlab wheels/{wheel}`).
- Everything in `course/` too (same files), so this folder runs the lessons as well.

Every notebook's setup cell (its second code cell) installs the kit when the kernel lacks it: from a
wheel beside the notebook or in `../wheels/`, else from `course.json`'s `source`, else it prints one
line saying what to do.

**JupyterHub or a USB stick**: copy `course/` (or unzip `course.zip`) where students open notebooks; keep
`wheels/` and `course.json` next to `notebooks/` and `exercises/`. Or install once for everyone:
`pip install wheels/{wheel}`.

**Colab**: Colab runs every kernel in `/content`, whatever notebook you open. Either upload
`wheels/{wheel}` to the session's files (`/content`) before running the setup cell, or upload
`course.zip` and run `!unzip -q course.zip` in a cell first (the setup cell also looks in `course/`).

**Offline room** (no package index): the wheel needs its dependencies. Put their wheels in `wheels/` too
(on a connected machine: `pip download -d wheels wheels/{wheel}`); the setup cell passes `wheels/` to pip
as `--find-links`. Or install everything once from the wheelhouse before class.

**Data**: the bundles hold no benchmark data. Without it the lessons run on the kit's teaching samples and say
so; to show the benchmarks, give the room a copy and set `MABPD_DATA_DIR` (room_setup.md). The exercises'
data is generated per student and does not depend on it.

Built by `make course` (tools/make_course.py) from the repository.
"""


def _copy_notebooks(src_dir: Path, dst_dir: Path) -> None:
    dst_dir.mkdir(parents=True)
    for nb in sorted(src_dir.glob("*.ipynb")):
        if NAME_RE.match(nb.name):
            _strip_outputs(nb, dst_dir / nb.name)


def _zip(folder: Path, zip_path: Path) -> None:
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(folder.parent).as_posix())


def write_student_bundle(course: Path, wheel: Path, manifest: dict, packs: bool) -> None:
    """course/: lessons, exercises, wheel, packs, course.json and READMEs; no solutions, no instructor pack."""
    version = wheel.name.split("-")[1]
    for d in ("notebooks", "exercises"):
        _copy_notebooks(ROOT / d, course / d)
    (course / "notebooks" / "README.md").write_text(STUDENT_NOTES, encoding="utf-8")
    if packs:
        found = sorted((ROOT / "mabpd_kit" / "resources" / "packs").glob("*.pack.json"))
        if found:
            (course / "packs").mkdir()
            for p in found:
                shutil.copy(p, course / "packs" / p.name)
    bundle_manifest = {**manifest, "version": version, "wheel": f"wheels/{wheel.name}"}
    (course / MANIFEST).write_text(json.dumps(bundle_manifest, indent=1) + "\n", encoding="utf-8")
    note = f"; today: `{manifest['source']}`" if manifest["source"] else " (empty in this bundle: the wheel in wheels/ is used)"
    readme = STUDENT_README.format(version=version, wheel=wheel.name, source_note=note)
    (course / "README.md").write_text(fill_course_map(readme, manifest.get("lessons", [])), encoding="utf-8")


def write_instructor_bundle(instructor: Path, course: Path, wheel: Path) -> None:
    """instructor/: the student bundle plus solutions/, instructors/ (the pack, rendered) and grade.py."""
    shutil.copytree(course, instructor)
    _copy_notebooks(ROOT / "solutions", instructor / "solutions")
    shutil.copytree(ROOT / "docs" / "instructors", instructor / "instructors")
    shutil.copy(ROOT / "tools" / "grade_submissions.py", instructor / "grade.py")
    version = wheel.name.split("-")[1]
    (instructor / "README.md").write_text(INSTRUCTOR_README.format(version=version, wheel=wheel.name), encoding="utf-8")


def _pack_is_current() -> None:
    """The instructor documents must quote figures.json as it is (tools/instructor_pack.py render)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("instructor_pack", ROOT / "tools" / "instructor_pack.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    stale = mod.render(check=True)
    if stale:
        raise ValueError(f"instructor figures out of date in {', '.join(stale)}: run python tools/instructor_pack.py render")


def cmd_bundle(out: Path, packs: bool) -> int:
    _pack_is_current()
    manifest = read_manifest()
    course, instructor = out / "course", out / "instructor"
    for folder in (course, instructor):
        if folder.exists():
            shutil.rmtree(folder)
    (course / "wheels").mkdir(parents=True)
    wheel = build_wheel(course / "wheels")
    write_student_bundle(course, wheel, manifest, packs)
    write_instructor_bundle(instructor, course, wheel)
    for folder in (course, instructor):
        _zip(folder, out / f"{folder.name}.zip")
        n_files = sum(1 for f in folder.rglob("*") if f.is_file())
        size = (out / f"{folder.name}.zip").stat().st_size / 1e6
        print(f"{folder.name} bundle: {folder} ({n_files} files), {out / folder.name}.zip ({size:.1f} MB)")
    print(f"wheel {wheel.name}; hand students course.zip only (instructor.zip holds the solutions and grade.py)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cells", help="rewrite (or --check) the setup cell and launch links of every notebook")
    c.add_argument("--check", action="store_true")
    d = sub.add_parser("docs", help="write (or --check) the course map in README.md, notebooks/README.md, docs/instructors")
    d.add_argument("--check", action="store_true")
    b = sub.add_parser("bundle", help="write dist/course/ + course.zip (students) and dist/instructor/ + instructor.zip")
    b.add_argument("--out", type=Path, default=ROOT / "dist")
    b.add_argument("--no-packs", action="store_true", help="leave the recorded course packs out")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "cells":
            return cmd_cells(args.check)
        if args.cmd == "docs":
            return cmd_docs(args.check)
        return cmd_bundle(args.out, packs=not args.no_packs)
    except (ValueError, RuntimeError) as exc:
        print(f"make_course: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
