"""Lessons never contradict their own numbers (issue 24): the static half of the claims convention.

Every sentence a student reads that states a result is either printed by a code cell from the lesson's own
variables, or, where it must stay in markdown (a folded self-check answer), backed by a code cell tagged
``claim`` that asserts it against the lesson's output (``assert cond, "02 self-check Q3: ..."``). Executing
the lesson (nbmake, ``make test-notebooks``) then fails when a claim breaks. This file checks, without
executing anything, that the convention is followed in every ``notebooks/NN_*.ipynb``:

1. a lesson with self-check answers (a "Self-check" / "Check yourself" cell with a ``<details>`` block) has
   at least one ``claim`` cell whose assertion message names a self-check question;
2. every ``claim`` cell asserts (an ``assert`` with a message string) and may fail (no ``raises-exception``
   tag, which would let nbmake pass over a broken claim);
3. markdown that states results (the self-check answers and the ``**Reading:**`` cells under charts)
   states no number the lesson does not back: every decimal number, percentage or integer of three or more
   digits in it is a definition (a value of the frozen ``Config``: the paper's weights 0.50/0.25/0.25,
   SPEC thresholds and bands), a figure of the paper (SPEC 1, below), a number given in the question itself
   (a worked example's input), or written in one of the lesson's ``claim`` cells (which asserts it).
   Everything else belongs in an f-string printed from the lesson's own variables.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

SELF_CHECK_RE = re.compile(r"^#+\s*(self-check|check yourself)\b", re.IGNORECASE | re.MULTILINE)
# a decimal number (0.676), a percentage (38%, 10 %), an integer of 3+ digits (300, 1,000)
NUMBER_RE = re.compile(r"(?<![\w.])(\d+\.\d+|\d+(?:\.\d+)?\s?%|\d{1,3}(?:,\d{3})+|\d{3,})(?![\w.]\d|\w)")
# references, not results: "SPEC 1.9", "section 2.3", "notebook 04", "issue 24", "LLaMA 3.3", "Python 3.11"
REFERENCE_RE = re.compile(r"\b(SPEC|section|§|notebook|lesson|issue|LLaMA|Llama|Python|v)\s?\d+(\.\d+)*", re.IGNORECASE)
# SPEC 1, "Paper figures" (BABE held-out test, LLaMA 3.3 70B): definitions a lesson may quote in markdown
PAPER_FIGURES = {"83.4", "84.7", "84.6", "86.2", "10.6", "9.3", "20 pp", "93%", "716", "152", "38%", "6.8", "16.5",
                 "2.0", "75.0", "88.8", "61.4", "600", "206", "644"}


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _claims(cells: list[dict]) -> list[tuple[int, dict]]:
    return [(i, c) for i, c in enumerate(cells) if c["cell_type"] == "code" and "claim" in _tags(c)]


def self_checks(cells: list[dict]) -> list[tuple[int, str, str]]:
    """(index, questions, answers) of each self-check cell that folds its answers in a <details> block."""
    out = []
    for i, c in enumerate(cells):
        src = _src(c)
        if c["cell_type"] == "markdown" and SELF_CHECK_RE.search(src) and "<details" in src:
            questions, answers = src.split("<details", 1)
            out.append((i, questions, answers))
    return out


def _normal(number: str) -> str:
    return re.sub(r"\s|,", "", number)


def definitions() -> set[str]:
    """Every number of the frozen Config, as a lesson would write it (0.5, 0.50, 50%), and the paper's figures."""
    import mabpd_kit as mk

    values: list[float] = []

    def walk(node):
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, (list, tuple)):
            for v in node:
                walk(v)
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            values.append(node)

    walk(mk.Config().model_dump())
    out = {_normal(p) for p in PAPER_FIGURES}
    for v in values:
        out |= {f"{v}", f"{v:.1f}", f"{v:.2f}", f"{v:.3f}", f"{v:,}", f"{v * 100:.0f}%", f"{v * 100:g}%"}
    return {_normal(s) for s in out}


def unbacked_numbers(text: str, allowed: set[str]) -> list[str]:
    """The numbers a result-stating markdown text states that nothing allows."""
    text = REFERENCE_RE.sub(" ", text)
    text = re.sub(r"`[^`]*`", " ", text)  # code spans name things (`0.50` in a config key path, `top_k=200`)
    return [n for n in NUMBER_RE.findall(text) if _normal(n) not in allowed]


def _assert_messages(tree: ast.AST) -> list[ast.Assert]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Assert)]


def _message_text(node: ast.expr | None) -> str | None:
    """The literal text of an assertion message (a string or f-string), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp):  # "a" + "b", "..." % x
        left, right = _message_text(node.left), _message_text(node.right)
        return (left or "") + (right or "") if (left or right) else None
    return None


# ------------------------------------------------------------------------------------------------
# the rules on small hand-made lessons (so the test itself is known to catch what it should)
# ------------------------------------------------------------------------------------------------


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text, tags=()):
    return {"cell_type": "code", "metadata": {"tags": list(tags)} if tags else {}, "source": text, "outputs": []}


def problems(cells: list[dict], lesson: str, allowed: set[str]) -> list[str]:
    """Every breach of the convention in one lesson's cells, one line each."""
    out = []
    claims = _claims(cells)
    claim_text = "\n".join(_src(c) for _, c in claims)
    claim_numbers = {_normal(n) for n in NUMBER_RE.findall(claim_text)}
    named_self_check = False
    for i, c in claims:
        where = f"{lesson}, cell {i + 1} (claim)"
        try:
            tree = ast.parse(_src(c))
        except SyntaxError as exc:
            out.append(f"{where}: does not parse ({exc.msg})")
            continue
        asserts = _assert_messages(tree)
        if not asserts:
            out.append(f"{where}: a claim cell asserts its claim (`assert cond, \"NN self-check Qk: ...\"`)")
        for a in asserts:
            text = _message_text(a.msg)
            if not text or len(text.strip()) < 10:
                out.append(f"{where}, line {a.lineno}: the assertion needs a message naming the sentence it checks")
            elif re.search(r"self-check|check yourself", text, re.IGNORECASE):
                named_self_check = True
        if "raises-exception" in _tags(c):
            out.append(f"{where}: tagged raises-exception, so a broken claim would not fail the run")
    checks = self_checks(cells)
    if checks and not named_self_check:
        out.append(f"{lesson}: the self-check answers (cell {checks[0][0] + 1}) are backed by no `claim` cell "
                   "whose assertion names a self-check question")
    for i, questions, answers in checks:
        given = {_normal(n) for n in NUMBER_RE.findall(REFERENCE_RE.sub(" ", questions))}
        bad = unbacked_numbers(answers, allowed | claim_numbers | given)
        if bad:
            out.append(f"{lesson}, cell {i + 1} (self-check answers): states {', '.join(bad)}, which no claim "
                       "cell asserts (compute it, or assert it in a claim cell)")
    for i, c in enumerate(cells):
        src = _src(c)
        if c["cell_type"] == "markdown" and src.lstrip().startswith("**Reading"):
            bad = unbacked_numbers(src, allowed | claim_numbers)
            if bad:
                out.append(f"{lesson}, cell {i + 1} (reading): states {', '.join(bad)} in markdown; print the reading "
                           "from the chart's frame, or assert the number in a claim cell")
    return out


SELF_CHECK = "## Self-check\n\n1. How many?\n2. Score of 0.8?\n\n<details><summary>Answers</summary>\n\n{}\n\n</details>"


def test_rules_catch_an_unbacked_answer_and_accept_a_backed_one():
    allowed = {"0.50"}
    bare = [_md(SELF_CHECK.format("1. The lexicon alone gets macro F1 0.676.\n2. 0.8 x 0.50 = 0.40."))]
    found = problems(bare, "99_x", allowed)
    assert any("backed by no `claim` cell" in p for p in found), found
    assert any("states 0.676, 0.40" in p for p in found), found
    backed = bare + [_code('assert round(f1, 3) == 0.676, "99 self-check Q1: the lexicon alone gets 0.676"\n'
                           'assert score(0.8) == 0.40, "99 self-check Q2: 0.8 x 0.50 = 0.40"', tags=["claim"])]
    assert problems(backed, "99_x", allowed) == []


def test_rules_catch_claim_cells_without_a_real_assertion():
    answers = [_md(SELF_CHECK.format("1. Three."))]
    for src, tags, what in [("print(x == 3)", ["claim"], "asserts its claim"),
                            ("assert x == 3", ["claim"], "needs a message"),
                            ('assert x == 3, "99 self-check Q1"', ["claim", "raises-exception"], "raises-exception")]:
        found = problems(answers + [_code(src, tags)], "99_x", set())
        assert any(what in p for p in found), (src, found)


def test_rules_catch_a_number_in_a_reading_and_skip_references():
    cells = [_md("**Reading:** the full pipeline beats the lexicon by 3.5 points (SPEC 1.9, notebook 04, `tau=0.65`).")]
    assert problems(cells, "99_x", set()) == ["99_x, cell 1 (reading): states 3.5 in markdown; print the reading "
                                             "from the chart's frame, or assert the number in a claim cell"]
    assert problems([_md("**Reading:** the lower bars, 38% as in the paper.")], "99_x", {"38%"}) == []


# ------------------------------------------------------------------------------------------------
# the lessons
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def allowed() -> set[str]:
    return definitions()


def test_config_definitions_are_whitelisted(allowed):
    assert {"0.50", "0.25", "0.45", "0.90"} <= allowed, "the paper's weights and SPEC thresholds are definitions"


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.name for p in LESSONS])
def test_lesson_states_only_backed_results(lesson: Path, allowed):
    found = problems(_cells(lesson), f"notebooks/{lesson.name}", allowed)
    assert not found, "\n".join(found)


def _shows(tree: ast.Module) -> list[str]:
    """What a cell would show the student: print/display calls, and a bare expression as its last statement."""
    shown = [ast.unparse(n)[:80] for n in ast.walk(tree)
             if isinstance(n, ast.Call) and getattr(n.func, "id", "") in ("print", "display")]
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr) and not isinstance(last.value, ast.Constant) and not (
            isinstance(last.value, ast.Call) and getattr(last.value.func, "id", "") in ("print", "display")):
        shown.append(ast.unparse(last)[:80])
    return shown


@pytest.mark.parametrize("path", [p for p in LESSONS if not p.name.startswith("09_")],  # 09: its own branch
                         ids=[p.name for p in LESSONS if not p.name.startswith("09_")])
def test_claim_cells_are_hidden_and_print_nothing(path: Path):
    """Issue 40: a claim cell keeps its assertions but is hidden from the student's view (JupyterLab collapses its
    source, nbconvert drops it), and it shows nothing: a hidden cell's line ("claims of self-check Q2 hold on this
    run") appears above the questions it answers, out of nowhere; a failing claim still fails the run."""
    bad = []
    for i, c in _claims(_cells(path)):
        meta = c.get("metadata", {})
        if not (meta.get("jupyter", {}).get("source_hidden") and meta.get("transient", {}).get("remove_source")
                and "remove_input" in _tags(c)):
            bad.append(f"cell {i + 1}: not hidden (jupyter.source_hidden, transient.remove_source, tag remove_input)")
        bad += [f"cell {i + 1}: shows {what}" for what in _shows(ast.parse(_src(c)))]
    assert not bad, f"{path.name}: " + "; ".join(bad)


def test_rules_catch_a_claim_cell_that_shows_something():
    assert _shows(ast.parse('assert x == 3, "99 self-check Q1"')) == []
    assert _shows(ast.parse('assert x, "m"\nprint("claims of self-check Q1 hold")')) == ['print(\'claims of self-check Q1 hold\')']
    assert _shows(ast.parse('assert x, "m"\nframe.head()')) == ["frame.head()"]
