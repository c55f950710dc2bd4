"""Static conventions of every notebook (see notebooks/README.md); running them is `make test-notebooks`."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for d in ("notebooks", "solutions", "exercises") for p in (ROOT / d).glob("*.ipynb"))
NAME_RE = re.compile(r"^\d\d_[a-z0-9]+(_[a-z0-9]+)*\.ipynb$")
SECRET_RE = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}|\bgsk_[A-Za-z0-9]{16,}|Bearer [A-Za-z0-9._-]{16,}")
MACHINE_PATH_RE = re.compile(r"(?<![\w.])/(?:home|work|root|Users)/[\w.-]+")
# viz functions that show spans or switch settings: not charts
NOT_CHARTS = {"span_html", "show_spans", "show", "decision_html", "static", "interactive", "renderer", "color_for",
              "chart_svg", "table"}


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _ids(paths):
    return [f"{p.parent.name}/{p.name}" for p in paths]


def _chain(node: ast.AST) -> tuple[list[str], ast.AST]:
    """Names along a call/attribute chain, root first, and the root node.

    ``alt.Chart(df).mark_bar().encode(x=1)`` -> (["alt", "Chart", "mark_bar", "encode"], Name alt).
    """
    names: list[str] = []
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        else:
            if isinstance(node, ast.Name):
                names.append(node.id)
            return names[::-1], node


def _is_chart_expr(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp):  # chart_a | chart_b, bars + rule
        return _is_chart_expr(node.left) or _is_chart_expr(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "display":
        return any(_is_chart_expr(a) for a in node.args)
    names, base = _chain(node)
    if isinstance(base, ast.BinOp):  # (a | b).properties(...)
        return _is_chart_expr(base)
    if not names or NOT_CHARTS & set(names):
        return False
    root = names[0].lower()
    return (
        names[0] in ("viz", "alt")
        or "viz" in names
        or "chart" in root
        or "panel" in root
        or any(n.endswith("_chart") for n in names)
    )


def draws_chart(cell: dict) -> bool:
    """Heuristic of notebooks/README.md rule 5: does this code cell end by showing a chart?"""
    if "chart" in cell.get("metadata", {}).get("tags", []):
        return True
    src = "\n".join(line for line in _src(cell).splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return False
    return bool(tree.body) and isinstance(tree.body[-1], ast.Expr) and _is_chart_expr(tree.body[-1].value)


def test_there_is_a_tour():
    assert (ROOT / "notebooks" / "00_tour.ipynb").exists()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_name_and_no_outputs(path: Path):
    assert NAME_RE.match(path.name), f"{path.name}: name notebooks NN_topic.ipynb (two digits, lower case, '_')"
    nb = _load(path)
    dirty = [i + 1 for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
             and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, (f"{path.name}: cells {dirty} have stored outputs; clear them "
                       f"(jupyter nbconvert --clear-output --inplace {path.parent.name}/{path.name})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_header_cell(path: Path):
    cells = _load(path)["cells"]
    assert cells and cells[0]["cell_type"] == "markdown", f"{path.name}: the first cell must be markdown"
    head = _src(cells[0])
    nn = path.name[:2]
    assert re.match(rf"#\s+{nn}\s+·\s+\S", head), f"{path.name}: first cell starts with '# {nn} · Title'"
    for part in ("**Learning objectives**", "**Prerequisites**", "**Time**"):
        assert part in head, f"{path.name}: first cell needs {part}"
    assert re.search(r"^\s*[-*] ", head.split("**Learning objectives**", 1)[1], re.M), (
        f"{path.name}: list the learning objectives as bullets")
    assert re.search(r"\*\*Time\*\*:?\s*~?\s*\d+\s*min", head), f"{path.name}: give the time as '**Time**: ~N min'"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_parameters_cell_sets_fast(path: Path):
    code = [c for c in _load(path)["cells"] if c["cell_type"] == "code"]
    assert code, f"{path.name}: no code cells"
    first = code[0]
    assert "parameters" in first.get("metadata", {}).get("tags", []), (
        f"{path.name}: tag the first code cell 'parameters' (papermill and CI override it)")
    assert re.search(r"^FAST\s*=", _src(first), re.M), f"{path.name}: the parameters cell must set FAST"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_every_chart_has_a_reading(path: Path):
    cells = _load(path)["cells"]
    missing = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code" and draws_chart(cell):
            nxt = cells[i + 1] if i + 1 < len(cells) else None
            if not (nxt and nxt["cell_type"] == "markdown" and _src(nxt).lstrip().startswith("**Reading:**")):
                missing.append(i + 1)
    assert not missing, f"{path.name}: cells {missing} draw a chart; follow each with a '**Reading:** ...' markdown cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_no_secrets_or_machine_paths(path: Path):
    text = "\n".join(_src(c) for c in _load(path)["cells"])
    assert not SECRET_RE.search(text), f"{path.name}: looks like an API key; keys come from environment variables only"
    hit = MACHINE_PATH_RE.search(text)
    assert not hit, f"{path.name}: machine-specific path {hit.group(0)!r}; use paths relative to the repo"


def _module_aliases(source: str) -> list[str]:
    """Imports that bind a mabpd_kit *module* to a name other than ``mk`` (``import mabpd_kit.viz as viz``,
    ``from mabpd_kit import datasets as ds``, ``from mabpd_kit.viz import identity``)."""
    import importlib.util

    src = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return []
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("mabpd_kit") and not (a.name == "mabpd_kit" and a.asname == "mk"):
                    bad.append(f"import {a.name}" + (f" as {a.asname}" if a.asname else ""))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mabpd_kit"):
            for a in node.names:
                try:
                    is_module = importlib.util.find_spec(f"{node.module}.{a.name}") is not None
                except ModuleNotFoundError:
                    is_module = False
                if is_module:
                    bad.append(f"from {node.module} import {a.name}" + (f" as {a.asname}" if a.asname else ""))
    return bad


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_one_alias_for_the_package(path: Path):
    """Every notebook reaches the kit as ``import mabpd_kit as mk`` and ``mk.<method>``: no per-notebook
    module aliases (``ds``, ``M``, ``vp``...). Importing a class or function by name is fine."""
    bad = [b for c in _load(path)["cells"] if c["cell_type"] == "code" for b in _module_aliases(_src(c))]
    assert not bad, f"{path.name}: use `import mabpd_kit as mk` and mk.<namespace>, not {bad}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import mabpd_kit as mk", []),
        ("from mabpd_kit.config import Config", []),
        ("import mabpd_kit.viz as viz", ["import mabpd_kit.viz as viz"]),
        ("from mabpd_kit import metrics as M", ["from mabpd_kit import metrics as M"]),
        ("import mabpd_kit", ["import mabpd_kit"]),
    ],
)
def test_module_alias_detection(source: str, expected: list[str]):
    assert _module_aliases(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("chart", True),
        ("category_chart", True),
        ("panel", True),
        ("viz.bar(df, 'a', 'b')", True),
        ("mk.viz.stopping.pareto_front(res)", True),
        ("alt.Chart(df).mark_bar().encode(x='a')", True),
        ("(chart_a | chart_b).properties(width=300)", True),
        ("band_chart(lex)", True),
        ("display(chart)", True),
        ("viz.show_spans(text, spans)", False),
        ("viz.interactive()", False),
        ("df.head()", False),
        ("chart = viz.bar(df, 'a', 'b')", False),
        ("print(chart)", False),
        ("%time x = 1\nx", False),
    ],
)
def test_chart_detection_heuristic(source: str, expected: bool):
    assert draws_chart({"cell_type": "code", "source": source, "metadata": {}}) is expected
    assert draws_chart({"cell_type": "code", "source": "x = 1", "metadata": {"tags": ["chart"]}})


def _readme_setup_cell() -> str:
    text = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    block = text.split("## Setup cell", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    return block.strip()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_setup_cell_and_launch_badges(path: Path):
    """Every notebook runs on Colab / a fresh hub: the README's setup cell, verbatim, right after the parameters
    cell, and launch badges for its own path in the first cell (notebooks/README.md, "Setup cell")."""
    cells = _load(path)["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert len(code) >= 2 and _src(code[1]).strip() == _readme_setup_cell(), (
        f"{path.name}: the second code cell must be the setup cell of notebooks/README.md ('Setup cell'), verbatim")
    head = _src(cells[0])
    folder = path.parent.name
    repository = json.loads((ROOT / "course.json").read_text(encoding="utf-8")).get("repository", "")
    if repository:  # launch links only for a configured repository (course.json; tools/make_course.py cells)
        assert f"/{folder}/{path.name}" in head and f"labpath={folder}%2F{path.name}" in head, (
            f"{path.name}: run tools/make_course.py cells: no launch links for {folder}/{path.name} in the first cell")
    else:
        assert "colab.research.google.com" not in head and "mybinder.org" not in head, (
            f"{path.name}: launch links to an unconfigured repository (course.json has none): run tools/make_course.py cells")
