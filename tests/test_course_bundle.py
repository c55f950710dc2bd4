"""The course bundle as a class meets it: no repository, no network, only dist/course/ (issues 24, 40).

1. ``tools/make_course.py bundle`` writes the student bundle (wheel, lessons, exercises, course.json,
   course packs, READMEs; no solutions, no reference answers) and the instructor bundle (plus solutions,
   the instructor pack and grade.py, which runs the hidden checks on submissions), with their zips.
2. A fresh venv outside the repository gets the kit's dependencies and Jupyter the way
   tests/test_install.py installs them (uv, offline from its cache, pinned to this environment), and
   then the kit itself is uninstalled: the kernel starts with no mabpd_kit, as on Colab.
3. A lesson copied out of the bundle (``00_tour``, ``FAST=1``) runs top to bottom with pip kept off
   every index (``PIP_NO_INDEX=1``, proxies pointed at a closed port): the setup cell must install the
   kit from the bundle's ``../wheels/`` and no cell may raise.
4. Alone (no wheel, no course.json) the setup cell prints one line and raises nothing; with a
   course.json whose source pip cannot install, one line with pip's last error line.

Part of ``make test-install`` (the tier that builds a venv; ``make test-unit`` leaves this file out).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from test_install import _clean_env, _pins, _uv

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
LESSON = "00_tour.ipynb"
NO_NETWORK = {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "http_proxy": "http://127.0.0.1:9",
              "https_proxy": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
              "HTTPS_PROXY": "http://127.0.0.1:9", "no_proxy": "", "NO_PROXY": ""}


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    res = _run([sys.executable, ROOT / "tools" / "make_course.py", "bundle", "--out", out], timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return out


@pytest.fixture(scope="module")
def venv(tmp_path_factory, bundle) -> Path:
    """A fresh venv (with pip) holding the kit's dependencies and Jupyter, but not the kit."""
    uv = _uv()
    if uv is None:
        pytest.skip("uv is not available (tools/setup_venv.sh installs it into .venv)")
    tmp = tmp_path_factory.mktemp("course-venv")
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", venv], timeout=300)   # ensurepip: pip without the network
    assert made.returncode == 0, made.stderr
    pins = tmp / "constraints.txt"
    pins.write_text("\n".join(p for p in _pins() if not p.lower().startswith("pip==")) + "\n")
    wheel = next((bundle / "course" / "wheels").glob("mabpd_kit-*.whl"))
    install = [uv, "pip", "install", "-q", "--python", venv / "bin" / "python", "-c", pins, wheel]
    res = _run([*install[:3], "--offline", *install[3:]], timeout=900)
    if res.returncode != 0:  # the cache lacks a package: one online install fills it (setup, not the test)
        res = _run(install, timeout=1200)
        if res.returncode != 0:
            pytest.skip(f"could not install the dependencies: {res.stderr[-1500:]}")
    return venv


def _without_kit(venv: Path) -> None:
    res = _run([_uv(), "pip", "uninstall", "-q", "--python", venv / "bin" / "python", "mabpd-kit"], timeout=120)
    assert res.returncode == 0, res.stderr
    check = _run([venv / "bin" / "python", "-c", "import importlib.util as u; print(u.find_spec('mabpd_kit'))"],
                 timeout=60, cwd=venv)
    assert check.stdout.strip() == "None", check.stdout + check.stderr


def _execute(venv: Path, notebook: Path, env: dict) -> dict:
    """Run a notebook on the venv's kernel, in its own folder; return the executed notebook (errors allowed)."""
    res = _run([venv / "bin" / "jupyter", "nbconvert", "--to", "notebook", "--execute", "--allow-errors",
                "--ExecutePreprocessor.timeout=300", "--ExecutePreprocessor.kernel_name=python3",
                "--output", notebook.with_suffix(".out.ipynb").name, notebook],
               cwd=notebook.parent, env=env, timeout=420)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(notebook.with_suffix(".out.ipynb").read_text(encoding="utf-8"))


def _text(cell: dict) -> str:
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _errors(nb: dict) -> list[tuple[int, str]]:
    return [(i, o.get("ename", "")) for i, c in enumerate(nb["cells"]) for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def _setup_only(src: Path, dst: Path) -> Path:
    """The lesson's first cells up to its setup cell: what the student runs before anything needs the kit."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    code = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]
    nb["cells"] = nb["cells"][: code[1] + 1]
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(nb), encoding="utf-8")
    return dst


def test_bundle_holds_what_a_class_needs(bundle):
    course = bundle / "course"
    manifest = json.loads((course / "course.json").read_text())
    assert manifest["wheel"].startswith("wheels/mabpd_kit-") and (course / manifest["wheel"]).is_file()
    assert {p.name for p in (course / "notebooks").glob("*.ipynb")} == {
        p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    assert {p.name for p in (course / "exercises").glob("*.ipynb")} == {
        p.name for p in (ROOT / "exercises").glob("[0-9][0-9]_*.ipynb")}
    assert (course / "README.md").is_file()
    assert list((course / "packs").glob("*.pack.json"))
    for nb in bundle.rglob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code"), nb.name
        assert not any("<!-- generated from" in "".join(c["source"]) for c in cells), f"{nb.name}: a maintainers' note"
    names = zipfile.ZipFile(bundle / "course.zip").namelist()
    assert f"course/{manifest['wheel']}" in names and f"course/notebooks/{LESSON}" in names


def test_the_student_bundle_holds_no_reference_answers(bundle):
    course = bundle / "course"
    names = zipfile.ZipFile(bundle / "course.zip").namelist()
    assert not (course / "solutions").exists() and not any(n.startswith("course/solutions/") for n in names)
    assert not (course / "instructors").exists() and not (course / "grade.py").exists()
    solution_lines, given = set(), set()   # given: what the lessons, stubs and hints show anyway
    for sol in (ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"):
        for cell in json.loads(sol.read_text(encoding="utf-8"))["cells"]:
            inside = False
            for line in "".join(cell["source"]).splitlines():
                if line.strip() in ("### BEGIN SOLUTION", "<!-- BEGIN SOLUTION -->"):
                    inside = True
                elif line.strip() in ("### END SOLUTION", "<!-- END SOLUTION -->"):
                    inside = False
                elif inside and len(line.strip()) >= 25 and not line.strip().startswith("### WRONG"):
                    solution_lines.add(line.strip())
                elif not inside:
                    given.add(line.strip())
    lessons = "\n".join(p.read_text(encoding="utf-8") for p in (course / "notebooks").glob("*.ipynb"))
    secret = {line for line in solution_lines if line not in given and not any(line in g for g in given)
              and json.dumps(line)[1:-1] not in lessons}
    assert len(secret) > 20
    text = "\n".join(p.read_text(encoding="utf-8") for p in course.rglob("*") if p.suffix in (".ipynb", ".md", ".json"))
    shown = sorted(line for line in secret if json.dumps(line)[1:-1] in text or line in text)
    assert not shown, f"the student bundle shows solution lines: {shown[:3]}"
    for marker in ("### BEGIN SOLUTION", "### WRONG", "<!-- BEGIN SOLUTION -->"):
        assert marker not in text


def test_the_readmes_say_how_to_install_jupyter_and_what_data_is_used(bundle):
    readme = (bundle / "course" / "README.md").read_text(encoding="utf-8")
    assert "Install Jupyter" in readme and "pip install jupyterlab" in readme and "jupyter lab" in readme
    assert "## 3. Data" in readme and "MABPD_DATA_DIR" in readme and "MABPD_STUDENT" in readme
    notes = (bundle / "course" / "notebooks" / "README.md").read_text(encoding="utf-8")
    assert "make " not in notes and "Makefile" not in notes and "jupyter lab" in notes
    instructor = (bundle / "instructor" / "README.md").read_text(encoding="utf-8")
    assert "grade.py submissions/*.ipynb" in instructor and "course.zip" in instructor
    for folder in ("solutions", "instructors"):
        assert (bundle / "instructor" / folder).is_dir()
    assert "instructor/grade.py" in zipfile.ZipFile(bundle / "instructor.zip").namelist()


def _filled(exercise: Path, solution: Path) -> dict:
    """The exercise as a student hands it in: every answer cell holds the worked answer (the same cell index)."""
    ex, sol = (json.loads(p.read_text(encoding="utf-8")) for p in (exercise, solution))
    for e, s in zip(ex["cells"], sol["cells"]):
        if e.get("metadata", {}).get("nbgrader", {}).get("solution") and e["cell_type"] == "code":
            e["source"] = s["source"]
    return ex


def test_grade_py_runs_the_hidden_checks_on_submissions(bundle, tmp_path):
    """The instructor's grade.py: a right submission scores every check, the stub none, and a check the student
    edited into passing is put back."""
    name = "08_evaluation.ipynb"
    inst = bundle / "instructor"
    subs = tmp_path / "submissions"
    subs.mkdir()
    (subs / f"ada__{name}").write_text(json.dumps(_filled(inst / "exercises" / name, inst / "solutions" / name)))
    shutil.copy(inst / "exercises" / name, subs / f"bob__{name}")
    cheat = json.loads((inst / "exercises" / name).read_text())
    for c in cheat["cells"]:
        if "check" in c["metadata"].get("tags", []):
            c["source"] = ["print('Correct')"]
    (subs / f"eve__{name}").write_text(json.dumps(cheat))
    env = {k: v for k, v in os.environ.items() if k not in ("MABPD_STUDENT", "MABPD_DATA_DIR")}
    res = _run([sys.executable, inst / "grade.py", *sorted(subs.glob("*.ipynb")), "--out", tmp_path / "g.csv"],
               cwd=tmp_path, env={**env, "MABPD_OFFLINE": "1"}, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    import csv
    rows = list(csv.DictReader((tmp_path / "g.csv").open()))
    score = {s: sum(int(r["passed"]) for r in rows if r["student"] == s) for s in ("ada", "bob", "eve")}
    assert score == {"ada": 3, "bob": 0, "eve": 0}, res.stdout
    assert "student ada: 3 of 3 checks pass" in res.stdout and "AssertionError" in res.stdout


def test_a_bundle_lesson_installs_the_kit_from_the_bundle_wheel_offline(bundle, venv, tmp_path):
    _without_kit(venv)
    course = tmp_path / "course"
    shutil.copytree(bundle / "course", course)   # as unpacked on a hub or a USB stick: no repository around it
    env = {**_clean_env(tmp_path), **NO_NETWORK}
    nb = _execute(venv, course / "notebooks" / LESSON, env)
    setup = nb["cells"][[i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"][1]]
    out = _text(setup)
    wheel = next((course / "wheels").glob("mabpd_kit-*.whl")).name
    assert f"installing mabpd-kit from ../wheels/{wheel}" in out, out
    assert "data:" in out and "setup:" not in out, out
    assert _errors(nb) == [], f"cells raised: {_errors(nb)}"
    where = _run([venv / "bin" / "python", "-c", "import mabpd_kit, sys; print(mabpd_kit.__file__)"],
                 cwd=tmp_path, env=env, timeout=120)
    assert where.stdout.strip().startswith(str(venv)) and str(ROOT) not in where.stdout, where.stdout + where.stderr
    direct = next((venv / "lib").glob("python3*/site-packages/mabpd_kit-*.dist-info/direct_url.json"))
    assert json.loads(direct.read_text())["url"].endswith(f"course/wheels/{wheel}")


def test_alone_the_setup_cell_says_what_to_do_in_one_line(bundle, venv, tmp_path):
    _without_kit(venv)
    lesson = _setup_only(bundle / "course" / "notebooks" / LESSON, tmp_path / "alone" / LESSON)
    nb = _execute(venv, lesson, {**_clean_env(tmp_path), **NO_NETWORK})
    assert _errors(nb) == []
    lines = _text(nb["cells"][-1]).splitlines()
    assert len(lines) == 1 and lines[0].startswith("setup: mabpd-kit is not installed"), lines
    assert "wheels/mabpd_kit-*.whl" in lines[0] and "fail on `mk`" in lines[0]


def test_a_source_pip_cannot_install_gives_pips_last_line_and_no_traceback(bundle, venv, tmp_path):
    _without_kit(venv)
    lesson = _setup_only(bundle / "course" / "notebooks" / LESSON, tmp_path / "nb" / LESSON)
    (tmp_path / "course.json").write_text(json.dumps({"source": "mabpd-kit==999"}))   # one folder up, as in a bundle
    nb = _execute(venv, lesson, {**_clean_env(tmp_path), **NO_NETWORK})
    assert _errors(nb) == []
    lines = _text(nb["cells"][-1]).splitlines()
    assert lines[0] == "installing mabpd-kit from mabpd-kit==999 (about a minute) ..."
    assert len(lines) == 2 and lines[1].startswith("setup: pip could not install mabpd-kit from mabpd-kit==999: ERROR:")
    assert "Traceback" not in lines[1] and lines[1].endswith("Until then the cells below fail on `mk`.")
