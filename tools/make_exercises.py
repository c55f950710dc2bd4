#!/usr/bin/env python
"""Generate ``exercises/NN_topic.ipynb`` from the hand-written ``solutions/NN_topic.ipynb``.

Never edit ``exercises/`` by hand: edit the solution and run ``make exercises``.
``make test`` runs ``--check``, which fails when a generated file is stale.

Markers, inside code cells of a solution notebook (they are comments, so the solution runs as is)::

    ### BEGIN SOLUTION
    threshold = 0.42                      # removed from the exercise ...
    ### END SOLUTION                      # ... and replaced by "# TODO: your code here"
    ### STUB threshold = None             # becomes the code line "threshold = None"
    ### HINT Where does macro F1 peak?    # becomes "# Hint: Where does macro F1 peak?"

Inside a solution block, plausible **wrong answers** (dropped from the exercise, like the rest of the block)::

    ### BEGIN SOLUTION
    threshold = 0.42
    ### WRONG threshold = 0.5              # a wrong answer: the whole block replaced by this line
    ### WRONG threshold = best_on_test     # another one (each line is its own wrong answer)
    ### WRONG+ print("continued")          # "WRONG+" adds a line to the wrong answer just above (after
    ###                                   # "### WRONG+ ", further spaces are the line's own indentation)
    ### END SOLUTION

``tests/test_exercises.py`` runs the solution with the block replaced by each wrong answer
(``wrong_answers()``) and fails unless the next ``check`` cell raises an AssertionError, so a
check that accepts a plausible wrong answer fails the tests. Every check cell has at least one.

- The TODO line, stub and hint keep the indentation of their marker, so blocks inside a
  function or loop stay valid Python.
- A stub must not raise: later cells of the exercise still run.
- A code cell tagged ``check`` asserts the student's result with a helpful message. It passes on
  the solution; in the exercise it fails on the stub, so the generator tags it ``raises-exception``
  (nbmake and nbclient then run the rest of the notebook).
- In a **markdown** cell, a worked answer between ``<!-- BEGIN SOLUTION -->`` and
  ``<!-- END SOLUTION -->`` (each on its own line) becomes ``*Your answer here.*``.
- Grader metadata compatible with **nbgrader** (schema 3) is added: a code cell that had a solution
  block is an answer cell (``solution: true``), a ``check`` cell is an autograded test (``grade: true``,
  1 point, ``locked``, and read-only in Jupyter), a markdown cell that had a worked answer is a
  manually graded answer. ``grade_id`` is ``<NN>-answer-<k>`` / ``<NN>-check-<k>``, stable across runs.
- Launch badges in the first cell point at the exercise (``solutions/NN_...`` -> ``exercises/NN_...``).
- Outputs and execution counts are stripped; the output is byte-for-byte deterministic.

Usage::

    python tools/make_exercises.py            # write exercises/
    python tools/make_exercises.py --check    # exit 1 and list stale files, write nothing
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB = "### STUB"
HINT = "### HINT"
WRONG = "### WRONG"
WRONG_MORE = "### WRONG+"
TODO = "# TODO: your code here"
MD_BEGIN = "<!-- BEGIN SOLUTION -->"
MD_END = "<!-- END SOLUTION -->"
MD_TODO = "*Your answer here.*"
NBGRADER_SCHEMA = 3
CHECK_TAG = "check"
RAISES_TAG = "raises-exception"
GENERATED_KEY = "mabpd_generated_from"
#: The maintainers' note, in the notebook's metadata rather than a cell: a student who opens a cell never sees it.
GENERATED_NOTE_KEY = "mabpd_note"
GENERATED_NOTE = "generated from {rel} by tools/make_exercises.py: edit the solution and run `make exercises`, never this file"
NAME_RE = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")


class MarkerError(ValueError):
    """A solution notebook's markers are malformed (the message says where)."""


@dataclass(frozen=True)
class Result:
    """What generating one exercise produced: its path, its text, and how many exercises it holds."""

    path: Path
    text: str
    n_solutions: int
    n_checks: int


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def transform_code(source: str, where: str = "cell") -> tuple[str, int]:
    """Replace the marked solution blocks of one code cell; return (new source, blocks replaced)."""
    out: list[str] = []
    inside = wrong_open = False
    blocks = 0
    for n, line in enumerate(source.split("\n"), start=1):
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        if stripped == BEGIN:
            if inside:
                raise MarkerError(f"{where}, line {n}: '{BEGIN}' inside an open solution block")
            inside = True
            wrong_open = False
            blocks += 1
            out.append(indent + TODO)
        elif stripped == END:
            if not inside:
                raise MarkerError(f"{where}, line {n}: '{END}' without '{BEGIN}'")
            inside = False
        elif inside:
            if stripped.startswith(WRONG):  # a wrong answer: dropped with the block, but it must be well formed
                more = stripped.startswith(WRONG_MORE)
                if not stripped[len(WRONG_MORE if more else WRONG) :].strip():
                    raise MarkerError(f"{where}, line {n}: '{WRONG}' needs code after it, e.g. '{WRONG} x = 0.5'")
                if more and not wrong_open:
                    raise MarkerError(f"{where}, line {n}: '{WRONG_MORE}' continues a '{WRONG}' line; none above it")
                wrong_open = True
            continue  # solution code: dropped
        elif stripped.startswith(WRONG):
            raise MarkerError(f"{where}, line {n}: '{WRONG}' outside a solution block would show a wrong answer "
                              "in the exercise; put it between BEGIN and END SOLUTION")
        elif stripped.startswith(STUB):
            code = stripped[len(STUB) :].strip()
            if not code:
                raise MarkerError(f"{where}, line {n}: '{STUB}' needs code after it, e.g. '{STUB} x = None'")
            out.append(indent + code)
        elif stripped.startswith(HINT):
            hint = stripped[len(HINT) :].strip()
            if not hint:
                raise MarkerError(f"{where}, line {n}: '{HINT}' needs text after it")
            out.append(f"{indent}# Hint: {hint}")
        elif stripped.startswith("###") and stripped[3:].split()[:1] in (["BEGIN"], ["END"], ["SOLUTION"]):
            # "### BEGIN SOLUTIONS", "### END", ...: a misspelt marker must not leak a solution silently.
            raise MarkerError(f"{where}, line {n}: unknown marker {stripped!r} (use BEGIN/END SOLUTION, STUB, HINT)")
        else:
            out.append(line)
    if inside:
        raise MarkerError(f"{where}: '{BEGIN}' without '{END}'")
    return "\n".join(out), blocks


def wrong_answers(source: str, where: str = "cell") -> list[str]:
    """One source per wrong answer of a code cell: the cell with that answer's block replaced by it.

    The wrong answer's lines keep the indentation of its marker; the cell's other solution blocks
    stay as solved. A cell without ``### WRONG`` lines gives an empty list.
    """
    transform_code(source, where)  # malformed markers raise here, with the line
    lines = source.split("\n")
    variants: list[str] = []
    start = None
    answers: list[list[str]] = []
    for n, line in enumerate(lines):
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        if stripped == BEGIN:
            start, answers = n, []
        elif stripped == END and start is not None:
            for answer in answers:
                variants.append("\n".join(lines[:start] + answer + lines[n + 1 :]))
            start = None
        elif start is not None and stripped.startswith(WRONG_MORE):
            rest = stripped[len(WRONG_MORE) :].rstrip()  # one space after the marker; more is the code's own indent
            answers[-1].append(indent + (rest[1:] if rest.startswith(" ") else rest))
        elif start is not None and stripped.startswith(WRONG):
            answers.append([indent + stripped[len(WRONG) :].strip()])
    return variants


def transform_markdown(source: str, where: str = "cell") -> tuple[str, int]:
    """Replace the worked answers of one markdown cell; return (new source, blocks replaced)."""
    out: list[str] = []
    inside = False
    blocks = 0
    for n, line in enumerate(source.split("\n"), start=1):
        stripped = line.strip()
        if stripped == MD_BEGIN:
            if inside:
                raise MarkerError(f"{where}, line {n}: '{MD_BEGIN}' inside an open solution block")
            inside = True
            blocks += 1
            out.append(MD_TODO)
        elif stripped == MD_END:
            if not inside:
                raise MarkerError(f"{where}, line {n}: '{MD_END}' without '{MD_BEGIN}'")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise MarkerError(f"{where}: '{MD_BEGIN}' without '{MD_END}'")
    return "\n".join(out), blocks


def _nbgrader(grade_id: str, *, solution: bool, grade: bool) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": not solution, "schema_version": NBGRADER_SCHEMA,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = 1
    return meta


def _badges_to_exercise(source: str) -> str:
    """Launch badges of a solution point at its exercise copy."""
    return re.sub(r"solutions(/|%2F)(\d\d_[a-z0-9_]+\.ipynb)", r"exercises\1\2", source)


def _cell_id(name: str, index: int) -> str:
    return hashlib.sha1(f"{name}:{index}".encode()).hexdigest()[:12]


def make_exercise(solution: Path, exercises_dir: Path) -> Result:
    """Build the exercise notebook for one solution notebook (in memory; nothing is written)."""
    nb = json.loads(solution.read_text(encoding="utf-8"))
    if nb.get("nbformat") != 4:
        raise MarkerError(f"{solution}: only nbformat 4 notebooks are supported")
    rel = f"solutions/{solution.name}"
    stem = solution.name[:2]
    n_solutions = n_checks = n_answers = 0
    cells = []
    first_markdown_done = False
    for i, cell in enumerate(nb.get("cells", [])):
        where = f"{solution.name}, cell {i + 1}"
        kind = cell.get("cell_type")
        meta = {k: v for k, v in cell.get("metadata", {}).items() if k in ("tags", "editable", "deletable")}
        src = _source(cell)
        new: dict = {"cell_type": kind, "id": cell.get("id") or _cell_id(solution.name, i), "metadata": meta}
        if kind == "code":
            src, blocks = transform_code(src, where)
            n_solutions += blocks
            tags = list(meta.get("tags", []))
            if CHECK_TAG in tags:
                n_checks += 1
                if blocks:
                    raise MarkerError(f"{where}: a 'check' cell must not contain a solution block")
                if RAISES_TAG not in tags:
                    tags.append(RAISES_TAG)
                meta["nbgrader"] = _nbgrader(f"{stem}-check-{n_checks}", solution=False, grade=True)
                meta["editable"] = meta["deletable"] = False
            elif blocks:
                n_answers += 1
                meta["nbgrader"] = _nbgrader(f"{stem}-answer-{n_answers}", solution=True, grade=False)
            if tags:
                meta["tags"] = tags
            new.update(execution_count=None, outputs=[])
        elif kind == "markdown":
            src, blocks = transform_markdown(src, where)
            if blocks:
                n_answers += 1
                meta["nbgrader"] = _nbgrader(f"{stem}-answer-{n_answers}", solution=True, grade=True)
        if kind == "markdown" and not first_markdown_done:
            first_markdown_done = True
            src = _badges_to_exercise(src).rstrip("\n") + (
                "\n\n> **Exercise notebook**: fill in each `# TODO` (and each *Your answer here.*), then run "
                "the `check` cell below it: it says whether your answer is right and, if not, what is wrong."
            )   # where this file comes from is for maintainers: the notebook's metadata says it (GENERATED_NOTE)
        new["source"] = src
        if cell.get("attachments"):
            new["attachments"] = cell["attachments"]
        cells.append(new)
    if n_solutions == 0:
        raise MarkerError(f"{solution}: no '{BEGIN}' block, so there is nothing to exercise")
    if n_checks == 0:
        raise MarkerError(f"{solution}: no code cell tagged '{CHECK_TAG}' asserts the student's answer")
    metadata = {k: nb.get("metadata", {})[k] for k in ("kernelspec", "language_info") if k in nb.get("metadata", {})}
    if "language_info" in metadata:  # only the stable part: no version numbers that change per machine
        metadata["language_info"] = {"name": metadata["language_info"].get("name", "python")}
    metadata[GENERATED_KEY] = rel
    metadata[GENERATED_NOTE_KEY] = GENERATED_NOTE.format(rel=rel)
    out = {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": max(5, nb.get("nbformat_minor", 5))}
    # The layout Jupyter itself saves (sources as lists of lines, sorted keys, indent 1): clean diffs.
    for cell in cells:
        cell["source"] = cell["source"].splitlines(keepends=True)
    text = json.dumps(out, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    return Result(exercises_dir / solution.name, text, n_solutions, n_checks)


def generate(solutions_dir: Path, exercises_dir: Path) -> tuple[list[Result], list[Path]]:
    """All exercises, plus generated files in ``exercises_dir`` whose solution no longer exists."""
    results = []
    for sol in sorted(solutions_dir.glob("*.ipynb")):
        if not NAME_RE.match(sol.name):
            raise MarkerError(f"{sol}: notebooks are named NN_topic.ipynb (two digits, lower case)")
        results.append(make_exercise(sol, exercises_dir))
    wanted = {r.path.name for r in results}
    orphans = []
    for ex in sorted(exercises_dir.glob("*.ipynb")) if exercises_dir.is_dir() else []:
        if ex.name not in wanted:
            try:
                generated = GENERATED_KEY in json.loads(ex.read_text(encoding="utf-8")).get("metadata", {})
            except (json.JSONDecodeError, OSError):
                generated = False
            if generated:
                orphans.append(ex)
    return results, orphans


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if exercises/ is out of date; write nothing")
    ap.add_argument("--solutions", type=Path, default=ROOT / "solutions")
    ap.add_argument("--exercises", type=Path, default=ROOT / "exercises")
    args = ap.parse_args(argv)
    try:
        results, orphans = generate(args.solutions, args.exercises)
    except MarkerError as exc:
        print(f"make_exercises: error: {exc}", file=sys.stderr)
        return 2
    stale = [r for r in results if not r.path.exists() or r.path.read_text(encoding="utf-8") != r.text]
    if args.check:
        if not stale and not orphans:
            print(f"exercises in sync: {len(results)} notebook(s)")
            return 0
        print("exercises out of date (edit solutions/, then run `make exercises`):", file=sys.stderr)
        for r in stale:
            print(f"  {'stale' if r.path.exists() else 'missing'}: {r.path}", file=sys.stderr)
        for p in orphans:
            print(f"  no solution any more: {p}", file=sys.stderr)
        return 1
    args.exercises.mkdir(parents=True, exist_ok=True)
    for r in stale:
        r.path.write_text(r.text, encoding="utf-8")
    for p in orphans:
        p.unlink()
    for r in results:
        state = "written" if r in stale else "unchanged"
        print(f"{r.path.name}: {r.n_solutions} exercise block(s), {r.n_checks} check cell(s), {state}")
    for p in orphans:
        print(f"{p.name}: removed (its solution is gone)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
