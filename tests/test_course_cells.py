"""One setting, one setup cell (tools/make_course.py, course.json; issue 24).

Every lesson, solution and exercise carries exactly the current setup cell, and launch links exist only
when course.json names a repository; the README's block is the same template; no notebook or install
document points at the git URL that does not exist. Running the cell in a kernel without the kit is
tests/test_course_bundle.py (the install tier).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for d in ("notebooks", "solutions", "exercises") for p in (ROOT / d).glob("[0-9][0-9]_*.ipynb"))
DEAD_URL = "mabpd-kit/mabpd-kit"


def _load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


mc = _load_tool("make_course")
mx = _load_tool("make_exercises")


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in NOTEBOOKS])
def test_every_notebook_carries_the_current_setup_cell(path: Path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    i = mc.setup_cell_index(cells)
    assert i is not None and _src(cells[i]) == mc.SETUP_CELL.rstrip("\n"), (
        f"{path.parent.name}/{path.name}: not the current setup cell; run `python tools/make_course.py cells` "
        "and `make exercises`")
    assert DEAD_URL not in json.dumps(cells), f"{path.name}: still points at {DEAD_URL}, which does not exist"


def test_make_course_cells_check_passes_and_the_readme_block_is_the_template():
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "make_course.py"), "cells", "--check"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Setup cell", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert block.strip() == mc.SETUP_CELL.strip()


def test_install_documents_name_no_dead_url():
    for rel in ("README.md", "notebooks/README.md", "docs/instructors/room_setup.md", "docs/instructors/README.md"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert DEAD_URL not in text, f"{rel}: {DEAD_URL} does not exist"


def test_default_setting_has_no_repository_so_no_links():
    manifest = mc.read_manifest()
    assert manifest["repository"] == "" and manifest["source"] == ""
    assert mc.launch_links("notebooks/00_tour.ipynb", manifest) == ""
    for path in NOTEBOOKS:
        head = _src(json.loads(path.read_text(encoding="utf-8"))["cells"][0])
        assert "colab.research.google.com" not in head and "mybinder.org" not in head and "badge" not in head, path.name


def test_links_come_from_the_one_setting_and_follow_to_the_exercise(tmp_path):
    manifest = {"repository": "https://github.com/someone/course-kit", "branch": "spring"}
    links = mc.launch_links("solutions/03_scoring_weights.ipynb", manifest)
    assert links == ("[Open In Colab](https://colab.research.google.com/github/someone/course-kit/blob/spring/"
                     "solutions/03_scoring_weights.ipynb) · [Launch Binder](https://mybinder.org/v2/gh/someone/"
                     "course-kit/spring?labpath=solutions%2F03_scoring_weights.ipynb)")
    assert "![" not in links  # text links: no picture to fetch offline
    head = "# 03 · Title\n\n**Learning objectives**\n- x"
    with_links = mc.header_with_links(head, links)
    assert with_links == f"# 03 · Title\n\n{links}\n\n**Learning objectives**\n- x"
    assert mc.header_with_links(with_links, links) == with_links  # idempotent
    assert mc.header_with_links(with_links, "") == head  # repository removed: links gone
    # an old badge line is replaced, not kept beside the new links
    old = "# 03 · Title\n\n[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](x)\n\n**L**"
    assert mc.header_with_links(old, "") == "# 03 · Title\n\n**L**"
    assert "exercises/03_scoring_weights.ipynb" in mx._badges_to_exercise(links)
    assert "exercises%2F03_scoring_weights.ipynb" in mx._badges_to_exercise(links)
    (tmp_path / "course.json").write_text(json.dumps({"repository": "https://gitlab.com/a/b"}))
    with pytest.raises(ValueError, match="github.com/OWNER/NAME"):
        mc.read_manifest(tmp_path)


def test_rewrite_touches_only_the_header_and_the_setup_cell(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# 05 · T\n", "\n", "**Time**: ~1 min"]},
                    {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "outputs": [], "execution_count": None,
                     "source": ["FAST = False"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["import mabpd_kit as mk"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["x = 1"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "notebooks").mkdir()
    path = tmp_path / "notebooks" / "05_t.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    assert mc.rewrite_cells(path, {"repository": "https://github.com/o/n"}, root=tmp_path)
    cells = json.loads(path.read_text())["cells"]
    assert "blob/main/notebooks/05_t.ipynb" in _src(cells[0]) and _src(cells[2]) == mc.SETUP_CELL.rstrip("\n")
    assert cells[1] == nb["cells"][1] and cells[3] == nb["cells"][3]
    assert not mc.rewrite_cells(path, {"repository": "https://github.com/o/n"}, root=tmp_path)


@pytest.mark.parametrize("in_kernel", [True, False])
def test_batch_summary_lines_are_ordinary_output_in_a_kernel(in_kernel, monkeypatch, capsys):
    """In a kernel stderr is drawn as a pink warning box: a batch's summary line goes to stdout there
    (mabpd_kit.runs.results.status); a command keeps it on stderr, its stdout being its data."""
    import mabpd_kit as mk
    from mabpd_kit.runs import results

    monkeypatch.setattr(results, "_in_kernel", lambda: in_kernel)
    monkeypatch.setattr(mk.runs, "progress_bar", lambda *a, **k: results._NoBar())  # no kernel to draw a bar in
    mk.mabpd.Pipeline().analyze_many(["The reckless plan failed.", "The council met on Tuesday."], progress=True)
    out, err = capsys.readouterr()
    line = next(x for x in (out + err).splitlines() if x.startswith("MABPD rule: "))
    assert line.startswith("MABPD rule: 2 items (0 from checkpoint), 0 failed"), line
    assert (line in out.splitlines()) is in_kernel and (line in err.splitlines()) is not in_kernel


def test_lesson_09_shows_an_excerpt_around_the_strongest_sentence_not_the_article():
    from mabpd_kit.corpus.articles import ArticleResult, SentenceResult, SpanResult
    from mabpd_kit.viz.corpus import article_html

    sents = [f"Sentence number {k} is plain." for k in range(10)]
    sents[6] = "The outrageous scheme failed."
    text, sentences = "", []
    for k, s in enumerate(sents):
        start = len(text)
        text += s + " "
        spans = [SpanResult(text="outrageous", start=start + 4, end=start + 14, category="biased language",
                            agent="bias", score=0.9)] if k == 6 else []
        sentences.append(SentenceResult(k=k, start=start, end=start + len(s), label="biased" if k in (1, 6) else "neutral",
                                        score=0.9 if k == 6 else (0.6 if k == 1 else 0.1), spans=spans, trace=f"t{k}"))
    art = ArticleResult(id="a1", text=text, n_sentences=10, n_biased=2, sentences=sentences)
    full, cut = article_html(art), article_html(art, excerpt=1)
    assert "number 0" in full and "number 9" in full
    assert "number 5" in cut and "number 7" in cut and "number 4" not in cut and "number 1" not in cut
    assert "excerpt: sentences 6-8" in cut and "outrageous" in cut and "t6" in cut and "t1" not in cut
    nb = json.loads((ROOT / "notebooks" / "09_corpus_analysis.ipynb").read_text(encoding="utf-8"))
    text09 = "\n".join(_src(c) for c in nb["cells"])
    assert "excerpt=" in text09 and "**Content note.**" in text09 and 'Path("reports")' in text09
