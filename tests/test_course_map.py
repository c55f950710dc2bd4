"""The course map in one place: ``lessons`` in course.json (tools/make_course.py docs).

Every document that lists the lessons carries the map between ``<!-- course-map:start FORM -->`` and
``<!-- course-map:end -->``, written from course.json; a stale document fails here. The map's titles, minutes
and objectives are the notebooks' own headers, so the map never says something its lesson does not.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_make_course():
    spec = importlib.util.spec_from_file_location("make_course", ROOT / "tools" / "make_course.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_course"] = mod
    spec.loader.exec_module(mod)
    return mod


mc = _load_make_course()
LESSONS = mc.read_manifest()["lessons"]


def test_every_document_carries_the_current_course_map():
    assert mc.cmd_docs(check=True) == 0, "run: python tools/make_course.py docs"


def test_a_stale_document_is_found_and_rewritten(tmp_path, capsys):
    for rel in ("course.json", *mc.MAP_DOCS):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    manifest = json.loads((tmp_path / "course.json").read_text(encoding="utf-8"))
    manifest["lessons"][3]["title"] = "Weights, renamed"
    (tmp_path / "course.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert mc.cmd_docs(check=True, root=tmp_path) == 1
    assert "3 document(s) out of date" in capsys.readouterr().out
    assert mc.cmd_docs(check=False, root=tmp_path) == 0
    assert mc.cmd_docs(check=True, root=tmp_path) == 0
    for rel in mc.MAP_DOCS:
        assert "03 · Weights, renamed" in (tmp_path / rel).read_text() or "03 Weights, renamed" in (tmp_path / rel).read_text()


def test_a_document_without_markers_or_with_an_unknown_form_is_a_one_line_error(tmp_path):
    with pytest.raises(ValueError, match="unknown course-map form 'list'"):
        mc.fill_course_map("<!-- course-map:start list -->\n<!-- course-map:end -->", LESSONS)
    (tmp_path / "course.json").write_text("{}", encoding="utf-8")
    for rel in mc.MAP_DOCS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="README.md: no <!-- course-map:start FORM -->"):
        mc.cmd_docs(check=True, root=tmp_path)


def test_the_student_bundle_readme_gets_the_table():
    readme = mc.fill_course_map(mc.STUDENT_README, LESSONS)
    rows = [line for line in readme.splitlines() if re.match(r"^\| \d\d ", line)]
    assert [r[2:4] for r in rows] == [e["id"] for e in LESSONS]
    assert "| 10 A real model on your laptop | `10_real_model` |" in readme


@pytest.mark.parametrize("entry", LESSONS, ids=[e["id"] for e in LESSONS])
def test_the_map_says_what_each_notebook_header_says(entry):
    nb = json.loads((ROOT / entry["notebook"]).read_text(encoding="utf-8"))
    src = nb["cells"][0]["source"]
    header = "".join(src) if isinstance(src, list) else src
    assert re.search(rf"^# {entry['id']} · {re.escape(entry['title'])}\s*$", header, re.M)
    assert f"**Time**: ~{entry['minutes']} min" in header
    flat = re.sub(r"\s+", " ", header)
    for objective in entry["objectives"]:
        assert f"- {objective}" in flat, objective
    assert entry["data"] and entry["notebook"].startswith("notebooks/")
