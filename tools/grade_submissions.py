#!/usr/bin/env python
"""Grade students' exercise notebooks with the course's own check cells, offline (``grade.py`` in the instructor bundle).

Usage::

    python grade.py submissions/*.ipynb                 # one line per check, a total per notebook, grades.csv
    python grade.py submissions/*/*.ipynb --out marks.csv --timeout 900

For each submission ``NN_topic.ipynb`` (or ``STUDENT__NN_topic.ipynb``):

- its check cells (nbgrader ``grade_id`` ``NN-check-k``) are replaced by the pristine ones of
  ``exercises/NN_topic.ipynb`` beside this script, so an edited or deleted check counts as the original;
- it runs top to bottom in a kernel (errors allowed), in its own folder, with ``FAST=1`` and
  ``MABPD_STUDENT`` set to the student's id: ``--student``, else the part of the file name before ``__``,
  else the name of the folder that holds it. The checks then compare against the data generated for
  that student (``mabpd_kit.exercises``), the same data the student saw;
- each check cell scores one point when it runs without an error; a failing one is listed with the
  first line of its message.

Exit status 0 when every submission could be run (whatever the marks), 2 on a bad argument.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME_RE = re.compile(r"^(?:(?P<student>.+?)__)?(?P<name>\d\d_[a-z0-9_]+)\.ipynb$")


def _exercises_dir() -> Path:
    for cand in (HERE / "exercises", HERE.parent / "exercises"):
        if cand.is_dir():
            return cand
    raise SystemExit("grade: no exercises/ folder beside this script")


def _grade_id(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_check(cell: dict) -> bool:
    return cell.get("cell_type") == "code" and "check" in cell.get("metadata", {}).get("tags", [])


def with_pristine_checks(submission: dict, pristine: dict) -> tuple[dict, list[str]]:
    """The submission with every check cell of the pristine exercise put back in its place (by grade id;
    a check the student deleted goes back after the cell that preceded it). Returns (notebook, check ids)."""
    nb = copy.deepcopy(submission)
    checks = {_grade_id(c): c for c in pristine["cells"] if _is_check(c)}
    cells, seen = [], set()
    for cell in nb["cells"]:
        gid = _grade_id(cell)
        if gid in checks:
            cells.append(copy.deepcopy(checks[gid]))
            seen.add(gid)
        elif not _is_check(cell):
            cells.append(cell)
    order = [_grade_id(c) for c in pristine["cells"] if _is_check(c)]
    for gid in order:
        if gid not in seen:   # deleted: after the pristine cell before it, matched by source, else at the end
            i = [c["id"] for c in pristine["cells"]].index(checks[gid]["id"])
            before = "".join(pristine["cells"][i - 1].get("source", "")) if i else None
            at = next((k + 1 for k, c in enumerate(cells) if "".join(c.get("source", "")) == before), len(cells))
            cells.insert(at, copy.deepcopy(checks[gid]))
    nb["cells"] = cells
    return nb, order


def _student(path: Path, given: str | None, match: re.Match) -> str:
    if given is not None:
        return given
    return match.group("student") or path.parent.name


def run_checks(nb: dict, folder: Path, student: str, timeout: int) -> dict[str, tuple[bool, str]]:
    """Execute the notebook (errors allowed) and return {grade id: (passed, first line of the error)}."""
    import nbformat
    from nbclient import NotebookClient

    node = nbformat.reads(json.dumps(nb), as_version=4)   # sources as strings, as nbclient wants them
    old = {k: os.environ.get(k) for k in ("FAST", "MABPD_STUDENT")}
    os.environ.update(FAST="1", MABPD_STUDENT=student)
    try:
        NotebookClient(node, timeout=timeout, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    out = {}
    for cell in node.cells:
        if _is_check(cell):
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            msg = (f"{errors[0]['ename']}: {str(errors[0]['evalue']).splitlines()[0] if errors[0]['evalue'] else ''}"
                   if errors else "")
            out[_grade_id(cell)] = (not errors, msg[:200])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("submissions", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path("grades.csv"))
    ap.add_argument("--student", default=None, help="the student id for every submission (default: from the path)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = ap.parse_args(argv)
    exercises = _exercises_dir()
    rows = []
    for path in args.submissions:
        m = NAME_RE.match(path.name)
        pristine = exercises / f"{m.group('name')}.ipynb" if m else None
        if not m or not pristine.is_file() or not path.is_file():
            print(f"grade: {path}: not an exercise notebook of this course (NN_topic.ipynb)", file=sys.stderr)
            return 2
        student = _student(path, args.student, m)
        try:
            submission = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            print(f"grade: {path}: cannot read it as a notebook ({exc})", file=sys.stderr)
            return 2
        nb, order = with_pristine_checks(submission, json.loads(pristine.read_text(encoding="utf-8")))
        results = run_checks(nb, path.resolve().parent, student, args.timeout)
        points = sum(results.get(g, (False, ""))[0] for g in order)
        print(f"{path}: student {student or '(seed 0)'}: {points} of {len(order)} checks pass")
        for gid in order:
            ok, msg = results.get(gid, (False, "check cell did not run"))
            print(f"  {gid}: {'pass' if ok else 'FAIL ' + msg}")
            rows.append({"submission": str(path), "student": student, "check": gid, "passed": int(ok), "message": msg})
    with args.out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=["submission", "student", "check", "passed", "message"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"grades: {args.out} ({len(rows)} checks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
