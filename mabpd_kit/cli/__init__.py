"""``mabpd`` command line. Each sub-command lives in the module of its method and is imported lazily,
so ``mabpd --help`` stays fast and one broken module cannot break the others."""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module, function that adds arguments, function that runs, one-line help)
COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "doctor": ("mabpd_kit.llm.doctor", "add_arguments", "run", "environment, endpoint (key redacted), probe, cache"),
    "analyze": ("mabpd_kit.pipeline", "cli_add_arguments", "cli_run", "analyse text (FILE or -) for media bias"),
    "demo": ("mabpd_kit.demo", "add_arguments", "run", "offline demo on data/samples -> reports/demo.html"),
    "evaluate": ("mabpd_kit.evaluate", "add_arguments", "run", "evaluate configurations on a benchmark"),
    "lexicon": ("mabpd_kit.lexicon", "cli_add_arguments", "cli_run", "build / check / match the bias lexicon"),
    "data": ("mabpd_kit.datasets", "cli_add_arguments", "cli_run", "download / locate benchmark data"),
    "radar": ("mabpd_kit.halftruth", "cli_add_arguments", "cli_run", "RADAR half-truth debate and threshold calibration"),
    "identity": ("mabpd_kit.identity", "cli_add_arguments", "cli_run", "identity-bias debate and simulator"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mabpd", description="mabpd-kit: multi-agent debate for media bias")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    for name, (module, add, _run, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        if name == chosen:  # import only the module that will run
            getattr(importlib.import_module(module), add)(p)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 0
    module, _add, run, _help = COMMANDS[args.command]
    try:
        return int(getattr(importlib.import_module(module), run)(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; finished items are kept in the checkpoint", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, KeyError) as exc:  # user errors: one clear line, no traceback
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # KeyError's str() adds quotes
        print(f"mabpd {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
