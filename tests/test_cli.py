"""The CLI dispatcher stays fast and reports user errors in one line."""

import subprocess
import sys

from mabpd_kit import cli


def test_help_lists_every_command(capsys):
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    for name in cli.COMMANDS:
        assert name in out


def test_import_is_lazy():
    code = "import sys, mabpd_kit; bad=[m for m in ('altair','scipy','pandas','openai') if m in sys.modules]; print(','.join(bad))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import mabpd_kit pulled in heavy modules: {out}"


def test_every_command_module_exists():
    import ast
    import importlib.util
    from pathlib import Path

    for name in cli.COMMANDS:
        module = cli.module_name(name)
        spec = importlib.util.find_spec(module)
        assert spec is not None, f"`mabpd {name}` points at missing module {module}"
        # the uniform interface, read from the source (importing every command would be slow)
        defined = {n.name for n in ast.parse(Path(spec.origin).read_text(encoding="utf-8")).body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assert {"add_arguments", "run"} <= defined, f"{module} must define add_arguments(parser) and run(args)"


def test_user_errors_are_one_clean_line(capsys):
    """A wrong dataset name exits 2 with one readable line (no traceback, no KeyError quotes)."""
    assert cli.main(["evaluate", "--dataset", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("mabpd evaluate: error: unknown benchmark 'nope'")
    assert "Traceback" not in err and not err.endswith('"')
