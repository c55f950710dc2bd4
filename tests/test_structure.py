"""The shape of the package: no import-time side effects, no import cycles, small modules, a clean face.

- Every module of ``mabpd_kit`` is imported in a fresh interpreter: none may switch altair's
  renderer or theme, and none may write into ``sys.modules`` anything but the modules it imports
  (the old viz code inserted ``sys.modules["rfc3987_syntax"] = None`` on import). Charts get altair
  from ``viz.altair()``, which sets up the theme and the offline renderer on first use.
- The imports between ``mabpd_kit`` modules (read with ``ast``, imports inside functions included,
  ``if TYPE_CHECKING:`` blocks excluded) form no cycle.
- No module is longer than about 500 lines, except data tables named in ``DATA_TABLES``.
- ``dir(mabpd_kit)`` lists public names only.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import mabpd_kit

ROOT = Path(mabpd_kit.__file__).resolve().parent
MAX_LINES = 500
#: Modules that are mostly data (tables, word lists): allowed above MAX_LINES. None at the moment.
DATA_TABLES: frozenset[str] = frozenset()


def all_modules() -> dict[str, Path]:
    """Every module of the package (name -> file), found with pkgutil without importing anything."""
    found = {"mabpd_kit": ROOT / "__init__.py"}

    def walk(path: Path, prefix: str) -> None:
        for info in pkgutil.iter_modules([str(path)]):
            name = f"{prefix}.{info.name}"
            if info.ispkg:
                found[name] = path / info.name / "__init__.py"
                walk(path / info.name, name)
            else:
                found[name] = path / f"{info.name}.py"

    walk(ROOT, "mabpd_kit")
    return found


MODULES = all_modules()

# -- (a) importing changes nothing ---------------------------------------------------------------

_PROBE = r"""
import importlib, json, sys, types
import typing  # the standard library's own aliases (typing.io, typing.re) are not ours
names = json.loads(sys.argv[1])
writes, errors = {}, {}
for name in names:
    before = dict(sys.modules)
    try:
        importlib.import_module(name)
    except Exception as exc:  # reported, not hidden: a module that cannot be imported is a failure too
        errors[name] = f"{type(exc).__name__}: {exc}"
    bad = sorted(k for k, v in sys.modules.items()
                 if (k not in before and not isinstance(v, types.ModuleType))
                 or (k in before and v is not before[k]))
    if bad:
        writes[name] = bad
altair_state = None
if "altair" in sys.modules:  # some module imported altair: its renderer and theme must be the defaults
    import altair as alt
    altair_state = [alt.renderers.active, alt.theme.active]
print(json.dumps({"writes": writes, "errors": errors, "altair": altair_state,
                  "altair_imported": "altair" in sys.modules}))
"""


@pytest.fixture(scope="module")
def fresh_import() -> dict:
    names = sorted(MODULES)
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(names)], capture_output=True, text=True,
                         timeout=120, env={**__import__("os").environ, "MABPD_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_module_imports(fresh_import):
    assert not fresh_import["errors"], f"modules that fail to import: {fresh_import['errors']}"


def test_importing_writes_nothing_into_sys_modules(fresh_import):
    assert not fresh_import["writes"], (
        "these imports put something other than a freshly imported module into sys.modules "
        f"(a None or fake entry, or a replaced module): {fresh_import['writes']}")


def test_importing_leaves_altair_renderer_and_theme_alone(fresh_import):
    state = fresh_import["altair"]
    assert state in (None, ["default", "default"]), (
        f"after importing every module, altair's renderer/theme are {state}: switch them on first chart "
        "use (mabpd_kit.viz.altair()), not on import")


def test_viz_sets_up_on_first_chart_in_a_fresh_interpreter():
    code = (
        "import sys; import mabpd_kit.viz as viz; assert 'altair' not in sys.modules\n"
        "import pandas as pd; viz.bar(pd.DataFrame({'c': ['a'], 'n': [1]}), 'c', 'n')\n"
        "import altair as alt; print(alt.renderers.active, alt.theme.active, viz.renderer())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["svg", "mabpd", "svg"]


def _imports_altair(tree: ast.AST) -> list[int]:
    """Lines that import altair (``if TYPE_CHECKING:`` blocks excluded)."""
    lines: list[int] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "altair" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "altair" and not node.level:
            lines.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return lines


def test_charts_get_altair_from_viz():
    """Only ``mabpd_kit.viz`` imports altair; chart builders call ``viz.altair()``, which switches on the
    course theme and the offline SVG renderer on first use. A builder that imports altair itself makes
    charts that render with altair's defaults (HTML + JavaScript from a CDN) when it is the first one drawn."""
    direct = {name: lines for name, path in MODULES.items() if name != "mabpd_kit.viz"
              and (lines := _imports_altair(ast.parse(path.read_text(encoding="utf-8"))))}
    assert not direct, f"modules importing altair directly (use `alt = mabpd_kit.viz.altair()`), with lines: {direct}"


# -- (b) no import cycles ------------------------------------------------------------------------


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_pkg: bool) -> set[str]:
    """mabpd_kit modules imported anywhere in ``tree`` (functions too), ``if TYPE_CHECKING:`` excluded."""
    found: set[str] = set()
    package = module if is_pkg else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "mabpd_kit":
                    found.add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "mabpd_kit":
                for a in node.names:  # `from pkg import sub` imports the submodule sub
                    found.add(f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return {m for m in found if m in MODULES}


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = _imports(tree, name, path.name == "__init__.py")
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_import_reader_resolves_relative_and_lazy_imports():
    src = (
        "from typing import TYPE_CHECKING\n"
        "from . import registry\n"
        "from .cache import ResponseCache\n"
        "if TYPE_CHECKING:\n    from .client import LLM\n"
        "def f():\n    from mabpd_kit.llm.probe import probe\n"
    )
    got = _imports(ast.parse(src), "mabpd_kit.llm.client", False)
    assert got == {"mabpd_kit.llm.registry", "mabpd_kit.llm.cache", "mabpd_kit.llm.probe"}


def test_no_import_cycles():
    found = cycles(import_graph())
    detail = "; ".join(" <-> ".join(c) for c in found)
    assert not found, f"import cycles among mabpd_kit modules (imports in functions count): {detail}"


# -- (c) small modules ---------------------------------------------------------------------------


def test_no_module_over_500_lines():
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES and name not in DATA_TABLES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"


# -- (d) a clean face ----------------------------------------------------------------------------


def test_dir_of_the_package_lists_public_names_only():
    names = dir(mabpd_kit)
    private = [n for n in names if n.startswith("_") and n != "__version__"]
    assert not private, f"dir(mabpd_kit) shows private names: {private}"
    assert not {"Any", "importlib", "annotations"} & set(names)
    assert {"Config", "connect", "Pipeline", "Decision", "Lexicon", "Span", "viz", "lexicon"} <= set(names)


def test_the_runner_sits_below_the_llm_layer():
    """``runs`` (the one batch runner) imports nothing of ``llm``: the LLM layer and the methods use the
    runner, never the other way round (issue 22.4)."""
    for name, path in MODULES.items():
        if name == "mabpd_kit.runs" or name.startswith("mabpd_kit.runs."):
            got = _imports(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py")
            up = sorted(m for m in got if m == "mabpd_kit.llm" or m.startswith("mabpd_kit.llm.")
                        or m.split(".")[1] in ("mabpd", "radar", "identity", "corpus", "cli", "viz"))
            assert not up, f"{name} imports {up}: the runner must not reach up the flow"
