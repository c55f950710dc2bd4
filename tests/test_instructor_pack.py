"""The instructor pack quotes the lessons' own runs (docs/instructors/figures.json), in one place.

- The course map (course.json ``lessons``) lists every lesson and exercise, in order.
- Every figure span of the instructor documents holds what figures.json and the notebook headers say
  (``tools/instructor_pack.py render --check``); a stale value or an unknown key fails.
- Known stale facts do not come back (09's content note is in section 2; 08's minutes are its header's).
- Under ``MABPD_RUN_EXERCISES=1`` (make test-notebooks): lesson 10 run again gives the figures quoted.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("instructor_pack", ROOT / "tools" / "instructor_pack.py")
ip = importlib.util.module_from_spec(_spec)
sys.modules["instructor_pack"] = ip
_spec.loader.exec_module(ip)


def test_the_course_map_lists_every_lesson_and_exercise_in_order():
    lessons = ip.course_map()
    assert [e["notebook"] for e in lessons] == [f"notebooks/{p.name}" for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]
    assert [e["id"] for e in lessons] == [Path(e["notebook"]).name[:2] for e in lessons]
    assert {e["exercise"] for e in lessons if e["exercise"]} == {f"exercises/{p.name}" for p in (ROOT / "exercises").glob("*.ipynb")}


def test_the_documents_hold_the_figures_of_the_run_and_the_headers():
    assert ip.render(check=True) == [], "run `python tools/instructor_pack.py render` and commit docs/instructors"
    vals = ip.values()
    for entry in ip.course_map():
        assert vals[f"{entry['id']}.minutes"] == str(ip.header(ROOT / entry["notebook"])["minutes"])
    spans = {m.group(1): m.group(2) for name in ip.DOCS
             for m in ip.SPAN_RE.finditer((ROOT / "docs" / "instructors" / name).read_text(encoding="utf-8"))}
    assert {"table.runs", "table.minutes", "08.minutes", "08.wall", "10.fig.n_failed", "10.fig.label_s01"} <= set(spans)
    data = json.loads(ip.FIGURES_JSON.read_text(encoding="utf-8"))
    assert spans["10.fig.n_failed"] == str(data["lessons"]["10"]["figures"]["data"]["n_failed"])


def test_stale_facts_of_issue_40_stay_gone():
    docs = {n: (ROOT / "docs" / "instructors" / n).read_text(encoding="utf-8") for n in ip.DOCS}
    assert "opens with a content note" not in docs["lab_90min.md"] + docs["workshop_3h.md"]
    assert "section 2" in docs["lab_90min.md"]
    row = next(line for line in docs["workshop_3h.md"].splitlines() if "`08_evaluation`" in line and line.startswith("| 2:25"))
    header = ip.header(ROOT / "notebooks" / "08_evaluation.ipynb")["minutes"]
    assert f"header: ~<!--fig:08.minutes-->{header}<!--/fig-->" in row and "as reading" in row
    assert "4 of the 8 sentences fail" not in docs["README.md"] and "s01 (biased) ends neutral" not in docs["README.md"]
    for name, text in docs.items():   # every wall time quoted is a rendered span, not a number typed in
        plain = ip.SPAN_RE.sub("", text)
        assert not re.search(r"\|\s*\d+ s( CPU)?\s*\|", plain), f"{name}: a run time typed by hand"


def test_render_fills_spans_and_check_reports_a_stale_one(tmp_path):
    root = tmp_path
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns("*.md", "reports", "__pycache__"))
    shutil.copytree(ROOT / "exercises", root / "exercises")
    shutil.copy(ROOT / "course.json", root / "course.json")
    (root / "docs" / "instructors").mkdir(parents=True)
    figures = {"lessons": {"10": {"data": {"wall_s": 12.3, "cpu_s": 4.0, "load": [1.0, 1.1], "when": "d", "commit": "c"},
                                  "figures": {"data": {"n_failed": 3}}}}}
    (root / "docs" / "instructors" / "figures.json").write_text(json.dumps(figures))
    for name in ip.DOCS:
        (root / "docs" / "instructors" / name).write_text("x <!--fig:10.wall-->old<!--/fig--> "
                                                          "<!--fig:10.fig.n_failed-->4<!--/fig--> <!--fig:08.wall-->?<!--/fig-->\n")
    assert ip.render(check=True, root=root) == list(ip.DOCS)
    ip.render(check=False, root=root)
    text = (root / "docs" / "instructors" / "README.md").read_text()
    assert "<!--fig:10.wall-->12 s<!--/fig-->" in text and "<!--fig:10.fig.n_failed-->3<!--/fig-->" in text
    assert "<!--fig:08.wall-->not measured<!--/fig-->" in text
    assert ip.render(check=True, root=root) == []
    (root / "docs" / "instructors" / "README.md").write_text("<!--fig:10.nonsense-->1<!--/fig-->")
    with pytest.raises(KeyError, match="unknown figure"):
        ip.render(check=True, root=root)


@pytest.mark.skipif("1" not in (os.environ.get("MABPD_RUN_EXERCISES"), os.environ.get("MABPD_RUN_LESSONS")),
                    reason="runs lesson 10: make test-notebooks")
def test_lesson_10_run_again_gives_the_figures_quoted():
    data = json.loads(ip.FIGURES_JSON.read_text(encoding="utf-8"))["lessons"]["10"]["figures"]
    mode = "data" if "data" in data and os.environ.get("MABPD_DATA_DIR") else "no-data"
    if mode not in data:
        pytest.skip(f"figures.json has no {mode} run of lesson 10")
    again = ip.run_lesson(ROOT / "notebooks" / "10_real_model.ipynb", os.environ.get("MABPD_DATA_DIR") if mode == "data" else None,
                          ip.FIGURES["10"])
    assert again["figures"] == data[mode]
