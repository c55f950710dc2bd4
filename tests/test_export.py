"""The offline lesson export keeps the self-check Answers folded and still embeds local pictures.

nbconvert's ``embed_images=True`` re-serialised every HTML block through BeautifulSoup, which closed the
``<details>`` a self-check opens before its markdown answers: the exported page showed an empty fold and the
answers open below it (issue 20). These tests fail on that code.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest

from mabpd_kit.export import export_lesson, offline_html

ROOT = Path(__file__).resolve().parents[1]
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
DATA = "data:image/png;base64," + base64.b64encode(PNG).decode()  # the page's own CSS has pictures of its own
SELF_CHECK = ("1. Which route?\n\n<details><summary>Answers</summary>\n\n1. The *debate* route.\n"
              "2. A second answer.\n\n</details>\n")


def folds(page: str) -> list[str]:
    """The inside of every ``<details>`` element of the page."""
    return re.findall(r"<details>(.*?)</details>", page, flags=re.S)


def test_answers_stay_folded_in_the_export():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(SELF_CHECK)])
    page = offline_html(nb)
    (inside,) = folds(page)
    assert "<summary>Answers</summary>" in inside
    assert "<li>The <em>debate</em> route.</li>" in inside and "A second answer." in inside
    after = page.split("</details>", 1)[1]
    assert "A second answer." not in after  # nothing of the answers printed open below the fold


def test_local_pictures_are_still_embedded_next_to_a_fold(tmp_path):
    (tmp_path / "dot.png").write_bytes(PNG)
    md = ('<p><img src="dot.png" alt="a dot" width="10"></p>\n\n![the dot](dot.png)\n\n'
          + SELF_CHECK.replace("A second answer.", '<img src="dot.png" alt="in the fold">'))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(md)])
    nbformat.write(nb, tmp_path / "lesson.ipynb")
    page = (export_lesson(tmp_path / "lesson.ipynb", tmp_path / "out", execute=False)).read_text(encoding="utf-8")
    data = DATA
    assert page.count(data) == 3  # the HTML picture, the markdown picture and the one inside the fold
    assert 'src="dot.png"' not in page
    (tag,) = re.findall(r'<img[^>]*alt="a dot"[^>]*>', page)
    assert data in tag and 'width="10"' in tag  # the picture's other attributes kept
    (inside,) = folds(page)
    assert data in inside and "The <em>debate</em> route." in inside


def test_a_picture_outside_the_notebook_folder_is_not_embedded(tmp_path):
    (tmp_path / "secret.png").write_bytes(PNG)
    (tmp_path / "nb").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell('<img src="../secret.png" alt="x">')])
    nbformat.write(nb, tmp_path / "nb" / "lesson.ipynb")
    page = export_lesson(tmp_path / "nb" / "lesson.ipynb", tmp_path / "out", execute=False).read_text(encoding="utf-8")
    assert DATA not in page and 'src="../secret.png"' in page


@pytest.mark.parametrize("lesson", ["04_consensus_and_sad.ipynb", "10_real_model.ipynb"])
def test_a_lesson_export_keeps_every_answers_block_folded(lesson, tmp_path):
    src = ROOT / "notebooks" / lesson
    cells = nbformat.read(src, as_version=4).cells
    expected = sum(c.source.count("<details>") for c in cells if c.cell_type == "markdown")
    assert expected >= 1
    page = export_lesson(src, tmp_path, execute=False).read_text(encoding="utf-8")
    inner = folds(page)
    assert len(inner) == expected
    for inside in inner:  # each fold holds its answers (a list or paragraphs), not just its summary
        assert len(re.sub(r"<summary>.*?</summary>|\s", "", inside)) > 40, inside
