"""Exercises generated from solutions: marker handling, determinism, the in-sync check, and (under
``make test-notebooks``) that every check cell passes on the solution and fails on the stub."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "make_exercises.py"
_spec = importlib.util.spec_from_file_location("make_exercises", TOOL)
mx = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules["make_exercises"] = mx  # dataclasses look their module up while the class is built
_spec.loader.exec_module(mx)  # type: ignore[union-attr]

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
RUN_NOTEBOOKS = os.environ.get("MABPD_RUN_EXERCISES") == "1"


def _solution_nb(extra_cells=()) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                   "language_info": {"name": "python", "version": "3.11.9"}}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 98 · Test\n\n**Learning objectives**\n- doubling\n\n**Prerequisites**: none\n\n**Time**: ~1 min"),
        nbformat.v4.new_code_cell("import os\nFAST = os.environ.get('FAST', '0') == '1'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "def double(x):\n"
            "    ### BEGIN SOLUTION\n"
            "    y = 2 * x\n"
            "    ### END SOLUTION\n"
            "    ### STUB y = None\n"
            "    ### HINT Multiply by two.\n"
            "    return y"
        ),
        nbformat.v4.new_code_cell("assert double(3) == 6, f'double(3) returned {double(3)!r}; it should be 6'",
                                  metadata={"tags": ["check"]}),
        nbformat.v4.new_code_cell("after = 'the notebook goes on'"),
        *extra_cells,
    ]
    for i, c in enumerate(nb.cells):
        c.id = f"c{i}"
        if c.cell_type == "code":
            c.outputs = [nbformat.v4.new_output("stream", text="stale output\n")]
            c.execution_count = 7
    return nb


def _write_solution(tmp_path: Path, nb=None, name="98_test.ipynb") -> Path:
    sol = tmp_path / "solutions"
    sol.mkdir(exist_ok=True)
    nbformat.write(nb if nb is not None else _solution_nb(), sol / name)
    return sol / name


def _run_cells(cells) -> dict:
    """Execute code cells in one namespace (no kernel); returns {cell index: exception or None}."""
    ns: dict = {}
    result = {}
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        try:
            exec(compile("".join(cell["source"]), f"cell{i}", "exec"), ns)
            result[i] = None
        except Exception as exc:  # noqa: BLE001 - we inspect it
            result[i] = exc
    return result


# ------------------------------------------------------------------------------------------------
# the generator
# ------------------------------------------------------------------------------------------------


def test_transform_keeps_indentation_and_replaces_markers():
    src, n = mx.transform_code(
        "x = 1\nif x:\n    ### BEGIN SOLUTION\n    y = x + 1\n    z = 3\n    ### END SOLUTION\n"
        "    ### STUB y = 0\n    ### HINT add one\nprint(y)"
    )
    assert n == 1
    assert src == "x = 1\nif x:\n    # TODO: your code here\n    y = 0\n    # Hint: add one\nprint(y)"
    compile(src, "exercise", "exec")  # still valid Python


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("### BEGIN SOLUTION\nx = 1", "without '### END SOLUTION'"),
        ("### END SOLUTION", "without '### BEGIN SOLUTION'"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "inside an open solution block"),
        ("### BEGIN SOLUTIONS\nx = 1\n### END SOLUTION", "unknown marker"),
        ("### STUB", "needs code"),
        ("### HINT   ", "needs text"),
    ],
)
def test_transform_rejects_malformed_markers(source, message):
    with pytest.raises(mx.MarkerError, match=message):
        mx.transform_code(source, "nb, cell 3")


def test_exercise_cells_stubs_tags_and_stripped_outputs(tmp_path):
    path = _write_solution(tmp_path)
    res = mx.make_exercise(path, tmp_path / "exercises")
    nb = json.loads(res.text)
    assert (res.n_solutions, res.n_checks) == (1, 1)
    assert nb["metadata"]["mabpd_generated_from"] == "solutions/98_test.ipynb"
    assert nb["metadata"]["language_info"] == {"name": "python"}, "no machine-specific versions"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    body = "".join(code[1]["source"])
    assert "2 * x" not in body and "# TODO: your code here" in body and "y = None" in body and "# Hint: Multiply by two." in body
    assert code[2]["metadata"]["tags"] == ["check", "raises-exception"]
    assert code[0]["metadata"]["tags"] == ["parameters"]
    # the maintainers' note is in the metadata, not in a cell a student can open (review40c bundle)
    assert nb["metadata"]["mabpd_note"].startswith("generated from solutions/98_test.ipynb by tools/make_exercises.py")
    assert not any("generated from" in "".join(c["source"]) or "<!--" in "".join(c["source"]) for c in nb["cells"])
    assert [c["id"] for c in nb["cells"]] == [f"c{i}" for i in range(len(nb["cells"]))]


def test_check_cell_fails_on_stub_and_passes_on_solution(tmp_path):
    path = _write_solution(tmp_path)
    exercise = json.loads(mx.make_exercise(path, tmp_path / "exercises").text)["cells"]
    solution = json.loads(path.read_text())["cells"]
    on_solution = _run_cells(solution)
    assert all(e is None for e in on_solution.values())
    on_stub = _run_cells(exercise)
    err = on_stub[3]
    assert isinstance(err, AssertionError) and "it should be 6" in str(err)
    assert on_stub[2] is None and on_stub[4] is None, "stubs don't raise; later cells still run"


def test_markdown_worked_answers_are_removed():
    src, n = mx.transform_markdown("**Why?**\n\n<!-- BEGIN SOLUTION -->\n*Worked answer:* recall collapses.\n"
                                   "<!-- END SOLUTION -->\n\nDiscuss.")
    assert n == 1 and src == "**Why?**\n\n*Your answer here.*\n\nDiscuss."
    for bad, message in [("<!-- BEGIN SOLUTION -->", "without '<!-- END SOLUTION -->'"),
                         ("<!-- END SOLUTION -->", "without '<!-- BEGIN SOLUTION -->'")]:
        with pytest.raises(mx.MarkerError, match=message):
            mx.transform_markdown(bad)


def test_nbgrader_metadata_and_badges(tmp_path):
    nb = _solution_nb([nbformat.v4.new_markdown_cell("Why?\n<!-- BEGIN SOLUTION -->\nBecause.\n<!-- END SOLUTION -->")])
    nb.cells[0].source += ("\n[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
                           "(https://colab.research.google.com/github/o/r/blob/main/solutions/98_test.ipynb) "
                           "[![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/o/r/HEAD?labpath=solutions%2F98_test.ipynb)")
    cells = json.loads(mx.make_exercise(_write_solution(tmp_path, nb), tmp_path / "exercises").text)["cells"]
    head = "".join(cells[0]["source"])
    assert "blob/main/exercises/98_test.ipynb" in head and "labpath=exercises%2F98_test.ipynb" in head
    assert "solutions/98_test.ipynb" not in head.split("> **Exercise notebook**")[0]
    answer, check, essay = cells[2]["metadata"], cells[3]["metadata"], cells[-1]["metadata"]
    assert answer["nbgrader"] == {"grade": False, "grade_id": "98-answer-1", "locked": False, "schema_version": 3,
                                  "solution": True, "task": False}
    assert check["nbgrader"] == {"grade": True, "grade_id": "98-check-1", "locked": True, "points": 1,
                                 "schema_version": 3, "solution": False, "task": False}
    assert check["editable"] is False and check["deletable"] is False
    assert essay["nbgrader"]["grade_id"] == "98-answer-2" and essay["nbgrader"]["solution"] is True
    assert "Because." not in "".join(cells[-1]["source"])
    assert "nbgrader" not in cells[1]["metadata"] and "nbgrader" not in cells[4]["metadata"]


def test_output_is_deterministic(tmp_path):
    path = _write_solution(tmp_path)
    a = mx.make_exercise(path, tmp_path / "exercises").text
    nb = _solution_nb()
    for c in nb.cells:
        del c["id"]  # old notebooks without cell ids get stable derived ones
    nb.nbformat_minor = 4
    b1 = mx.make_exercise(_write_solution(tmp_path, nb, "97_noids.ipynb"), tmp_path).text
    b2 = mx.make_exercise(tmp_path / "solutions" / "97_noids.ipynb", tmp_path).text
    assert a == mx.make_exercise(path, tmp_path / "exercises").text
    assert b1 == b2 and '"id": "c0"' not in b1


def test_notebook_without_markers_or_checks_is_an_error(tmp_path):
    nb = _solution_nb()
    nb.cells[3].metadata = {}
    with pytest.raises(mx.MarkerError, match="no code cell tagged 'check'"):
        mx.make_exercise(_write_solution(tmp_path, nb), tmp_path)
    nb.cells[2].source = "def double(x):\n    return 2 * x"
    with pytest.raises(mx.MarkerError, match="no '### BEGIN SOLUTION' block"):
        mx.make_exercise(_write_solution(tmp_path, nb), tmp_path)


def _cli(*args: str) -> subprocess.CompletedProcess:
    """The command line, in process (a subprocess would pay the interpreter start-up each time)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = mx.main(list(args))
    return subprocess.CompletedProcess(["make_exercises.py", *args], rc, out.getvalue(), err.getvalue())


def test_cli_write_then_check_then_stale_and_orphan(tmp_path):
    _write_solution(tmp_path)
    dirs = ["--solutions", str(tmp_path / "solutions"), "--exercises", str(tmp_path / "exercises")]
    first = _cli(*dirs, "--check")
    assert first.returncode == 1 and "missing:" in first.stderr and "98_test.ipynb" in first.stderr
    assert not (tmp_path / "exercises").exists(), "--check writes nothing"
    assert _cli(*dirs).returncode == 0
    assert _cli(*dirs, "--check").returncode == 0
    # edit the solution: the exercise is stale
    nb = _solution_nb()
    nb.cells[4].source = "after = 'changed'"
    _write_solution(tmp_path, nb)
    stale = _cli(*dirs, "--check")
    assert stale.returncode == 1 and "stale:" in stale.stderr and "make exercises" in stale.stderr
    # remove the solution: its generated exercise is an orphan, removed on regeneration
    (tmp_path / "solutions" / "98_test.ipynb").unlink()
    orphan = _cli(*dirs, "--check")
    assert orphan.returncode == 1 and "no solution any more" in orphan.stderr
    assert _cli(*dirs).returncode == 0 and not (tmp_path / "exercises" / "98_test.ipynb").exists()


def test_repository_exercises_are_in_sync():
    res = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr + "\nrun `make exercises` and commit exercises/"


# ------------------------------------------------------------------------------------------------
# the real notebooks: executed under `make test-notebooks` (MABPD_RUN_EXERCISES=1), skipped in unit runs
# ------------------------------------------------------------------------------------------------


def _execute(path: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def _check_cells(nb) -> list[tuple[int, dict]]:
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code" and "check" in c.metadata.get("tags", [])]


def _errors(cell) -> list[dict]:
    return [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]


_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d{3,}(?![\d])")


def _lines(cell) -> list[str]:
    """Text a cell showed: streams, plain-text results and error messages, one stripped line each."""
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out += o.get("text", "").splitlines()
        elif o.get("output_type") in ("execute_result", "display_data"):
            out += o.get("data", {}).get("text/plain", "").splitlines()
        elif o.get("output_type") == "error":
            out += str(o.get("evalue", "")).splitlines()
    return [line.strip() for line in out if len(line.strip()) >= 8]


def _is_answer_cell(cell) -> bool:
    return cell.cell_type == "code" and mx.BEGIN in cell.source


def solution_leaks(solution_nb, exercise_nb) -> list[str]:
    """What the solution's answers printed that the exercise shows too (it must show none of it).

    The answer cells' and check cells' output lines of the executed solution are its *answers*, except
    lines the exercise prints in the same (answer) cell anyway: those do not depend on the answer. A leak
    is an answer line anywhere in the exercise's output, or a number with three or more decimals from
    the answers in an exercise check cell (a failure message that gives the expected value away).
    """
    same_anyway: set[str] = set()
    answers: set[str] = set()
    for sc, ec in zip(solution_nb.cells, exercise_nb.cells):
        if _is_answer_cell(sc):
            same_anyway |= set(_lines(sc)) & set(_lines(ec))
        if _is_answer_cell(sc) or "check" in sc.metadata.get("tags", []):
            answers |= set(_lines(sc))
    answers -= same_anyway
    shown_elsewhere = {n for c in exercise_nb.cells if c.cell_type == "code" and "check" not in c.metadata.get("tags", [])
                       for line in _lines(c) for n in _NUMBER.findall(line)}
    numbers = {n for line in answers for n in _NUMBER.findall(line)} - shown_elsewhere
    leaks = []
    for i, c in enumerate(exercise_nb.cells):
        if c.cell_type != "code":
            continue
        is_check = "check" in c.metadata.get("tags", [])
        for line in _lines(c):
            if line in answers and not (_is_answer_cell(solution_nb.cells[i]) and line in same_anyway):
                leaks.append(f"cell {i + 1}: {line[:120]}")
            elif is_check and numbers & set(_NUMBER.findall(line)):
                leaks.append(f"cell {i + 1} (check) gives a value away: {line[:120]}")
    return leaks


def test_solution_leaks_finds_answers_and_given_away_values():
    def nb(*cells):
        out = nbformat.v4.new_notebook()
        out.cells = list(cells)
        return out

    def code(src, text="", tags=(), error=None):
        c = nbformat.v4.new_code_cell(src, metadata={"tags": list(tags)} if tags else {})
        c.outputs = [nbformat.v4.new_output("stream", text=text)] if text else []
        if error:
            c.outputs.append(nbformat.v4.new_output("error", ename="AssertionError", evalue=error, traceback=[]))
        return c

    setup = code("paper = f()", "paper weights: macro F1 0.7031")
    solved = nb(setup, code(f"{mx.BEGIN}\nx = g()\n{mx.END}", "answer is 0.6512 for bias\nsetting: unchanged here"),
                code("assert x", "Correct: 0.6512", tags=["check"]))
    fine = nb(setup, code("x = None", "answer is None for bias\nsetting: unchanged here"),
              code("assert x", tags=["check"], error="x is not the macro F1 of that agent alone; paper 0.7031"))
    assert solution_leaks(solved, fine) == []
    leaky = nb(setup, code("x = None", "answer is None for bias"),
               code("assert x", tags=["check"], error="x should be 0.6512"))
    assert solution_leaks(solved, leaky) == ["cell 3 (check) gives a value away: x should be 0.6512"]


@pytest.mark.skipif(not RUN_NOTEBOOKS, reason="executes notebooks: run by `make test-notebooks` (MABPD_RUN_EXERCISES=1)")
@pytest.mark.parametrize("solution", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_check_cells_pass_on_the_solution_and_fail_on_the_stub(solution: Path, monkeypatch):
    """One run of each: the checks pass on the solution, fail with a message on the stub, and the exercise's
    outputs show nothing the solution's answers printed (tests/test_exercise_integrity.py: the sources)."""
    monkeypatch.setenv("FAST", "1")
    solved = _execute(solution)  # any error in a cell (check cells included) raises CellExecutionError
    assert _check_cells(solved), f"{solution.name}: no check cell"
    for i, cell in _check_cells(solved):
        assert any("correct" in line.lower() or "passed" in line.lower() for line in _lines(cell)), (
            f"solutions/{solution.name}, cell {i + 1}: a passing check says so (print a success line)")
    exercise = ROOT / "exercises" / solution.name
    assert exercise.exists(), f"{exercise} is missing: run `make exercises` and commit exercises/"
    nb = _execute(exercise)  # only raises-exception cells may fail
    for i, cell in _check_cells(nb):
        errs = _errors(cell)
        assert errs, f"exercises/{solution.name}, cell {i + 1}: the check passes on the stub; it must fail until solved"
        err = errs[0]
        assert err["ename"] == "AssertionError", (
            f"exercises/{solution.name}, cell {i + 1}: the check fails with {err['ename']}: {err['evalue']}; "
            "stubs must not raise and checks must fail by assertion"
        )
        assert len(err["evalue"].strip()) >= 10, (
            f"exercises/{solution.name}, cell {i + 1}: give the assertion a message that helps the student"
        )
    leaks = solution_leaks(solved, nb)
    assert not leaks, f"exercises/{solution.name} shows what the solution printed:\n" + "\n".join(leaks)


# ------------------------------------------------------------------------------------------------
# wrong answers: "### WRONG <code>" inside a solution block; the next check cell must reject each one
# ------------------------------------------------------------------------------------------------


def _src_of(cell) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def _is_check(cell) -> bool:
    return cell["cell_type"] == "code" and "check" in cell.get("metadata", {}).get("tags", [])


def wrong_answer_plan(cells) -> tuple[dict[int, list[int]], list[str]]:
    """{check cell index: the answer cells with wrong answers since the previous check}, and what is missing:
    a check cell with no wrong answer before it, or wrong answers that no later check cell could reject."""
    plan: dict[int, list[int]] = {}
    problems: list[str] = []
    pending: list[int] = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        if mx.wrong_answers(_src_of(cell), f"cell {i + 1}"):
            pending.append(i)
        if _is_check(cell):
            if not pending:
                problems.append(f"cell {i + 1} (check): no '### WRONG' answer in the answer cell(s) before it")
            plan[i], pending = pending, []
    if pending:
        problems.append(f"cell(s) {', '.join(str(i + 1) for i in pending)}: wrong answers with no check cell after them")
    return plan, problems


def replay_wrong_answers(cells, run) -> list[str]:
    """Run the solution cell by cell with ``run(index, source) -> (ename, message) | None``; after each check
    cell, replay every wrong answer before it (that block replaced, the cells up to the check run again)
    and report each wrong answer the check does not reject with an AssertionError and a message that
    helps (at least 10 characters, not a line of the solution). The solution is run again after each
    replay, so the next exercise starts from the solved state."""
    cells = [dict(c, source=_src_of(c)) for c in cells]   # a runner (nbclient) may write into the list it ran
    plan, problems = wrong_answer_plan(cells)
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]

    def solved(lo: int, hi: int) -> str | None:
        for k in (k for k in code if lo <= k <= hi):
            err = run(k, _src_of(cells[k]))
            if err:
                return f"cell {k + 1}: the solution raises {err[0]}: {err[1][:200]}"
        return None

    for i in code:
        if (bad := solved(i, i)):
            return problems + [bad]
        for a in plan.get(i, []):
            block_lines = {line.strip() for line in _src_of(cells[a]).split("\n")
                           if len(line.strip()) >= 15 and not line.strip().startswith("#")}
            for variant in mx.wrong_answers(_src_of(cells[a])):
                label = " / ".join(line.strip() for line in variant.split("\n")
                                   if line.strip() and line not in _src_of(cells[a]).split("\n"))[:160]
                err = run(a, variant)
                if err:
                    problems.append(f"cell {a + 1}, wrong answer `{label}`: raises {err[0]} in its own cell "
                                    "(a wrong answer must run, so that the check is what rejects it)")
                else:
                    for k in (k for k in code if a < k <= i):
                        err = run(k, _src_of(cells[k]))
                        if err or k == i:
                            break
                    if not err:
                        problems.append(f"cell {i + 1} (check) accepts the wrong answer `{label}` of cell {a + 1}")
                    elif k != i:
                        problems.append(f"cell {k + 1} raises {err[0]} on the wrong answer `{label}` before the check runs")
                    elif err[0] != "AssertionError":
                        problems.append(f"cell {i + 1} (check) fails with {err[0]} on `{label}`, not an assertion with a message")
                    elif len(err[1].strip()) < 10:
                        problems.append(f"cell {i + 1} (check): the message for `{label}` does not help: {err[1]!r}")
                    elif any(line in err[1] for line in block_lines):
                        problems.append(f"cell {i + 1} (check): the message for `{label}` gives the solution line away: {err[1][:200]}")
                if (bad := solved(a, i)):
                    return problems + [f"restoring after `{label}`: {bad}"]
    return problems


def _in_process():
    ns: dict = {}

    def run(index, source):
        try:
            exec(compile(source, f"cell{index}", "exec"), ns)
        except Exception as exc:  # noqa: BLE001 - we report it
            return type(exc).__name__, str(exc)
        return None

    return run


def test_wrong_answers_replace_their_block_and_never_reach_the_exercise(tmp_path):
    src = ("def f(x):\n    ### BEGIN SOLUTION\n    y = 2 * x\n    ### WRONG y = x + 2\n    ### WRONG y = x\n"
           "    ### WRONG+ y = y * 1\n    ### WRONG y = 0\n    ### WRONG+ for _ in range(2):\n    ### WRONG+     y += x\n"
           "    ### END SOLUTION\n    ### STUB y = None\n    return y")
    assert mx.wrong_answers(src) == [
        "def f(x):\n    y = x + 2\n    ### STUB y = None\n    return y",
        "def f(x):\n    y = x\n    y = y * 1\n    ### STUB y = None\n    return y",
        "def f(x):\n    y = 0\n    for _ in range(2):\n        y += x\n    ### STUB y = None\n    return y",
    ]
    assert mx.wrong_answers("x = 1") == []
    assert mx.transform_code(src)[0] == "def f(x):\n    # TODO: your code here\n    y = None\n    return y"
    nb = _solution_nb()
    nb.cells[2].source = src.replace("def f", "def double")
    text = mx.make_exercise(_write_solution(tmp_path, nb), tmp_path / "exercises").text
    assert "WRONG" not in text and "x + 2" not in text


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("### WRONG x = 1", "outside a solution block"),
        ("### BEGIN SOLUTION\nx = 2\n### WRONG   \n### END SOLUTION", "needs code"),
        ("### BEGIN SOLUTION\nx = 2\n### WRONG+ x = 3\n### END SOLUTION", "none above it"),
    ],
)
def test_wrong_answer_markers_are_checked(source, message):
    with pytest.raises(mx.MarkerError, match=message):
        mx.transform_code(source, "nb, cell 3")


def test_replay_rejects_checks_that_accept_a_wrong_answer():
    nb = _solution_nb()
    answer = "def double(x):\n    ### BEGIN SOLUTION\n    y = 2 * x\n    ### WRONG y = x + x + 0 * {}\n    ### END SOLUTION\n    return y"
    nb.cells[2].source = answer.replace("{}", "0")                    # 2x: right, whatever the check
    assert "accepts the wrong answer" in replay_wrong_answers(nb.cells, _in_process())[0]
    nb.cells[2].source = answer.replace("y = x + x + 0 * {}", "y = x + 3")   # 6 at x = 3, wrong elsewhere
    assert replay_wrong_answers(nb.cells, _in_process())[0].startswith("cell 4 (check) accepts the wrong answer `y = x + 3`")
    nb.cells[3].source = "for v in (3, 5):\n    assert double(v) == 2 * v, f'double({v}) is {double(v)}: it should double'\nprint('Correct')"
    assert replay_wrong_answers(nb.cells, _in_process()) == []         # a check that tests more than one value
    nb.cells[2].source = answer.replace("y = x + x + 0 * {}", "y = x.upper()")
    assert "fails with AttributeError" in replay_wrong_answers(nb.cells, _in_process())[0]
    nb.cells[2].source = "### BEGIN SOLUTION\nk = 2\n### WRONG k = int('two')\n### END SOLUTION\ndef double(x):\n    return k * x"
    assert "raises ValueError in its own cell" in replay_wrong_answers(nb.cells, _in_process())[0]
    nb.cells[3].source = "assert double(5) == 10, 'write y = x * 2 + 0 * x here'"
    nb.cells[2].source = answer.replace("y = x + x + 0 * {}", "y = x + 3").replace("y = 2 * x", "y = x * 2 + 0 * x")
    assert "gives the solution line away" in replay_wrong_answers(nb.cells, _in_process())[0]
    nb.cells[2].source = "def double(x):\n    ### BEGIN SOLUTION\n    y = 2 * x\n    ### END SOLUTION\n    return y"
    assert wrong_answer_plan(nb.cells)[1] == ["cell 4 (check): no '### WRONG' answer in the answer cell(s) before it"]


@pytest.mark.parametrize("solution", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_every_check_cell_has_a_wrong_answer(solution: Path):
    """Static (no execution): each check cell of each solution has a '### WRONG' answer to reject."""
    _, problems = wrong_answer_plan(json.loads(solution.read_text(encoding="utf-8"))["cells"])
    assert not problems, f"solutions/{solution.name}:\n" + "\n".join(problems)


class _Kernel:
    """One kernel for a solution notebook; ``run(index, source)`` executes one cell's source in it."""

    def __init__(self, path: Path):
        from nbclient import NotebookClient

        self.nb = nbformat.read(path, as_version=4)
        # the client gets its own copy: nbclient stores each executed cell back into its notebook's list
        self.client = NotebookClient(nbformat.read(path, as_version=4), timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})

    def run(self, index: int, source: str):
        from nbclient.exceptions import CellExecutionError

        cell = nbformat.v4.new_code_cell(source)
        try:
            self.client.execute_cell(cell, index)
        except CellExecutionError as exc:
            return exc.ename, exc.evalue
        return None


@pytest.mark.skipif(not RUN_NOTEBOOKS, reason="executes notebooks: run by `make test-notebooks` (MABPD_RUN_EXERCISES=1)")
@pytest.mark.parametrize("solution", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_check_cells_reject_every_wrong_answer(solution: Path, monkeypatch):
    """Each '### WRONG' answer, put in place of its block in the solution, makes the next check cell fail
    with an AssertionError whose message helps and does not quote the solution."""
    monkeypatch.setenv("FAST", "1")
    kernel = _Kernel(solution)
    with kernel.client.setup_kernel():
        problems = replay_wrong_answers(kernel.nb.cells, kernel.run)
    assert not problems, f"solutions/{solution.name}:\n" + "\n".join(problems)
