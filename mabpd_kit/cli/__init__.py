"""``mabpd`` command line: one module per command (``add_arguments(parser)``, ``run(args) -> int``), imported
only when chosen, so ``mabpd --help`` stays fast and one broken command cannot break the others."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

__all__ = ["COMMANDS", "error_line", "main"]

# name -> one-line help; the command lives in ``mabpd_kit.cli.<name>``
COMMANDS: dict[str, str] = {
    "doctor": "environment, endpoint (key redacted), probe, cache",
    "analyze": "analyse text (FILE or -) or a corpus (table or folder) for media bias",
    "report": "offline HTML report of a corpus analysis (RESULTS.jsonl)",
    "demo": "offline demo on the shipped samples -> reports/demo.html",
    "evaluate": "evaluate configurations on a benchmark",
    "lexicon": "build / check / match the bias lexicon",
    "data": "download / locate benchmark data",
    "radar": "RADAR half-truth debate and threshold calibration",
    "identity": "identity-bias debate and simulator",
    "pack": "course packs: record LLM answers once, replay them offline",
    "serve": "a real model on this machine (llama.cpp), no key, no network",
    "fit": "refit the kit's fitted numbers (article score, count threshold) into their artefacts",
}


def module_name(command: str) -> str:
    """The module that implements ``mabpd <command>``."""
    return f"{__name__}.{command}"


class _Parser(argparse.ArgumentParser):
    """A parser whose error (a bad flag or value) is one line naming it, not the usage block."""

    def error(self, message: str) -> NoReturn:
        from mabpd_kit.printable import printable
        self.exit(2, f"{self.prog}: error: {printable(message)} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="mabpd", description="mabpd-kit: multi-agent debate for media bias")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    for name, help_ in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        if name == chosen:  # import only the module that will run
            importlib.import_module(module_name(name)).add_arguments(p)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a bad flag or value (one line on stderr)
        return exc.code if isinstance(exc.code, int) else 2
    if not args.command:
        parser.print_help()
        return 0
    from mabpd_kit.printable import Printable
    stderr, sys.stderr = sys.stderr, Printable(sys.stderr)  # an endpoint's text never drives the terminal
    try:
        return int(importlib.import_module(module_name(args.command)).run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; finished items are kept in the checkpoint", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place where every error becomes one line
        if os.environ.get("MABPD_DEBUG", "").strip() not in ("", "0"):
            raise
        print(f"mabpd {args.command}: {error_line(exc)}", file=sys.stderr)
        return 2
    finally:
        sys.stderr = stderr


def error_line(exc: BaseException) -> str:
    """One line for ``exc``: ``error: <message>`` for user errors (a missing file, a bad name, an
    endpoint that refused), else the exception's type and message and how to see the traceback."""
    from mabpd_kit.llm.errors import LLMError  # here, not at the top: `mabpd --help` stays fast
    if isinstance(exc, KeyError) and exc.args:  # KeyError's str() adds quotes
        msg = str(exc.args[0])
    elif isinstance(exc, OSError) and exc.strerror and exc.filename is not None:  # "Is a directory: x"
        msg = f"{exc.strerror}: {exc.filename}"
    else:
        msg = str(exc)
    msg = " ".join(msg.split()) or type(exc).__name__
    if isinstance(exc, (ValueError, KeyError, OSError, LLMError)):  # PromptError is a ValueError
        return f"error: {msg}"
    return f"unexpected error: {type(exc).__name__}: {msg} (set MABPD_DEBUG=1 for the traceback)"
