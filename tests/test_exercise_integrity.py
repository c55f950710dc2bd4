"""Exercise notebooks give nothing away, for every notebook in solutions/ and exercises/.

Static checks on the sources (fast, part of ``make test-unit``):

- an exercise has no stored outputs and no worked answer: the text of every markdown solution block
  (``<!-- BEGIN SOLUTION -->``) is gone;
- the **literal values** of the solution blocks (``### BEGIN SOLUTION``: numbers with a decimal point
  or three digits or more, strings of five characters or more) that the lesson text around them
  does not already contain appear nowhere in the exercise: not in a stub, a hint or a message;
- every answer and check cell carries nbgrader metadata (``tools/make_exercises.py`` adds it).

What the notebooks *print* is checked where they run: ``tests/test_exercises.py``
(``test_check_cells_pass_on_the_solution_and_fail_on_the_stub``: no line or value the solution's
answers printed shows up in the executed exercise).
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("make_exercises", ROOT / "tools" / "make_exercises.py")
mx = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules.setdefault("make_exercises", mx)
_spec.loader.exec_module(mx)  # type: ignore[union-attr]

SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def split_solution(nb: dict) -> tuple[list[str], list[str], str]:
    """(code inside solution blocks, markdown worked answers, the rest: what the lesson shows anyway).

    The rest leaves out the solution blocks, STUB and HINT lines and markdown worked answers, so a
    literal that only a hint or a stub repeats counts as the solution's own.
    """
    code_blocks: list[str] = []
    md_blocks: list[str] = []
    rest: list[str] = []
    for cell in nb["cells"]:
        inside, block = False, []
        begin, end = (mx.BEGIN, mx.END) if cell["cell_type"] == "code" else (mx.MD_BEGIN, mx.MD_END)
        for line in _src(cell).split("\n"):
            s = line.strip()
            if s == begin:
                inside, block = True, []
            elif s == end:
                inside = False
                (code_blocks if cell["cell_type"] == "code" else md_blocks).append("\n".join(block))
            elif inside:
                block.append(line)
            elif not (cell["cell_type"] == "code" and s.startswith((mx.STUB, mx.HINT))):
                rest.append(line)
    return code_blocks, md_blocks, "\n".join(rest)


def literals(code: str) -> set[str]:
    """Distinctive literals of a code block: numbers with a "." or 3+ digits, strings of 5+ characters."""
    import textwrap

    out: set[str] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(textwrap.dedent(code) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    for tok in tokens:
        if tok.type == tokenize.NUMBER and ("." in tok.string or len(tok.string.strip("-")) >= 3):
            out.add(tok.string)
        elif tok.type == tokenize.STRING and not tok.string.lstrip("rbuRBU").startswith(("f", "F")):
            try:
                value = eval(tok.string, {})  # a literal, from our own repository
            except Exception:  # noqa: BLE001 - f-strings and friends: skip
                continue
            if isinstance(value, str) and len(value.strip()) >= 5:
                out.add(value)
    return out


def _present(lit: str, text: str) -> bool:
    if re.fullmatch(r"-?[\d.]+(e-?\d+)?", lit):
        return re.search(rf"(?<![\w.]){re.escape(lit)}(?![\w]|\.\d)", text) is not None
    return lit in text


def _exercise(solution: Path) -> dict:
    path = ROOT / "exercises" / solution.name
    assert path.exists(), f"{path} is missing: run `make exercises`"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("solution", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_exercise_has_no_outputs_and_no_worked_answer(solution: Path):
    ex = _exercise(solution)
    assert all(not c.get("outputs") for c in ex["cells"] if c["cell_type"] == "code"), "stored outputs"
    _, md_blocks, _ = split_solution(json.loads(solution.read_text(encoding="utf-8")))
    text = "\n".join(_src(c) for c in ex["cells"])
    for block in md_blocks:
        for line in (ln.strip() for ln in block.splitlines()):
            assert len(line) < 12 or line not in text, f"exercises/{solution.name} shows the worked answer: {line[:80]!r}"
    assert "worked answer" not in text.lower(), (
        f"exercises/{solution.name} mentions a worked answer: wrap it in <!-- BEGIN SOLUTION --> / <!-- END SOLUTION -->")


@pytest.mark.parametrize("solution", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_exercise_does_not_contain_the_solutions_literal_values(solution: Path):
    code_blocks, _, rest = split_solution(json.loads(solution.read_text(encoding="utf-8")))
    own = {lit for block in code_blocks for lit in literals(block)} - {lit for lit in literals(rest)}
    own = {lit for lit in own if not _present(lit, rest)}
    text = "\n".join(_src(c) for c in _exercise(solution)["cells"])
    leaked = sorted(lit for lit in own if _present(lit, text))
    assert not leaked, (f"exercises/{solution.name} contains values from the solution blocks {leaked}: "
                        "a hint, stub or message gives the answer away")


@pytest.mark.parametrize("solution", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_answer_and_check_cells_carry_grader_metadata(solution: Path):
    cells = _exercise(solution)["cells"]
    checks = [c for c in cells if "check" in c["metadata"].get("tags", [])]
    answers = [c for c in cells if c["cell_type"] == "code" and mx.TODO in _src(c)]
    assert checks and answers
    assert all(c["metadata"].get("nbgrader", {}).get("grade") is True for c in checks), "check cells: nbgrader grade"
    assert all(c["metadata"].get("nbgrader", {}).get("solution") is True for c in answers), "answer cells: nbgrader solution"
    ids = [c["metadata"]["nbgrader"]["grade_id"] for c in cells if "nbgrader" in c["metadata"]]
    assert len(ids) == len(set(ids)), f"grade ids must be unique: {ids}"


def test_the_literal_finder():
    assert literals('x = 0.42\nname = "horse_race_framing"\nn = 7\nbig = 600\ns = f"{x}"') == {"0.42", "horse_race_framing", "600"}
    assert _present("0.5", "weights (0, 0.5, 0.5)") and not _present("0.5", "a 0.50 boundary")
    code, md, rest = split_solution({"cells": [
        {"cell_type": "code", "source": "a = 1\n### BEGIN SOLUTION\nb = 0.25\n### END SOLUTION\n### HINT try 0.25"},
        {"cell_type": "markdown", "source": "Q\n<!-- BEGIN SOLUTION -->\nA\n<!-- END SOLUTION -->"}]})
    assert code == ["b = 0.25"] and md == ["A"] and "0.25" not in rest and "a = 1" in rest
