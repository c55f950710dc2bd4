"""``mabpd analyze FILE|- [--lines] [--format table|json|html]``: MABPD on your own text (one item, or one per
line), or on a corpus (a table or a folder: :mod:`mabpd_kit.corpus.command`). An option the input cannot use is
refused in one line, exit code 2, before anything runs."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from mabpd_kit.cli._input import text_items
from mabpd_kit.config import Config

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="text file (one item per line with --lines, else the whole file), - for stdin, "
                                     "or a corpus: a .csv/.tsv/.jsonl/.json/.parquet table or a folder of .txt/.html files")
    parser.add_argument("--lines", action="store_true", help="treat every non-empty line as one item")
    parser.add_argument("--format", choices=("table", "json", "html"), help="plain-text input: table (default), json or html")
    parser.add_argument("--output", "-o", help="write to this file instead of stdout")
    parser.add_argument("--ablation", default="full", help=f"one of {', '.join(Config.ABLATIONS)}")
    parser.add_argument("--config", help="a saved configuration (TOML or JSON)")
    parser.add_argument("--checkpoint", help="JSONL checkpoint to resume from")
    parser.add_argument("--llm", action="store_true", help="use the configured endpoint (MABPD_BASE_URL) instead of rule-based agents")
    parser.add_argument("--quiet", action="store_true", help="no progress bar (shown on stderr when it is a terminal)")
    parser.add_argument("--batch", metavar="STATE", default=None,
                        help="with --llm: send the calls through the Batch API (half price, within 24 h), one stage "
                             "per pass; STATE is a JSON file: run the same command again to resume after a crash")
    from mabpd_kit.corpus.command import add_corpus_options
    add_corpus_options(parser.add_argument_group("corpus input (a table or a folder)"))


def run(args: argparse.Namespace) -> int:
    from mabpd_kit.corpus import command as corpus
    if args.file != "-" and corpus.is_corpus(args.file):
        args.corpus = args.file
        return corpus.run(args)
    given = [flag for attr, flag in corpus.CORPUS_OPTIONS if getattr(args, attr, None) not in (None, False)]
    if given:
        where = "stdin" if args.file == "-" else args.file
        print(f"mabpd analyze: error: {', '.join(given)} {'is' if len(given) == 1 else 'are'} for a corpus (a "
              f".csv/.tsv/.jsonl/.json/.parquet table or a folder of .txt/.html files); {where} is plain text",
              file=sys.stderr)
        return 2
    from mabpd_kit.mabpd import Pipeline
    items = text_items(args.file, args.lines)
    cfg = (Config.load(args.config) if args.config else Config()).ablation(args.ablation)
    llm = None
    if args.llm:
        from mabpd_kit.llm import connect
        llm = connect(config=cfg)
    else:
        print("mabpd analyze: rule-based agents (offline); pass --llm to use a configured endpoint", file=sys.stderr)
    progress = not args.quiet and sys.stderr.isatty()  # stdout stays clean for --format json
    with contextlib.redirect_stdout(sys.stderr):  # the batch's summary line is not --format json
        if args.batch:
            if llm is None:
                raise ValueError("--batch needs --llm (the Batch API of the configured endpoint)")
            from mabpd_kit.llm.batch import run_batched
            pipe = Pipeline(cfg, llm)
            ckpt = args.checkpoint or str(Path(args.batch).with_suffix(".jsonl"))  # finished items are not redone
            res = run_batched(lambda: pipe.analyze_many(items, checkpoint=ckpt, progress=progress), llm,
                              state=args.batch, quiet=args.quiet)
        else:
            res = Pipeline(cfg, llm).analyze_many(items, checkpoint=args.checkpoint, progress=progress)
    if args.format == "json":
        body = "\n".join(json.dumps(d.to_dict(), ensure_ascii=False) for d in res.decisions) + "\n"
    elif args.format == "html":
        from mabpd_kit.viz.pipeline import decision_html
        body = ("<!doctype html><meta charset='utf-8'><title>mabpd analyze</title>"
                + "".join(decision_html(d) for d in res.decisions))
    else:
        df = res.to_frame()[["id", "label", "score", "route", "failed", "error", "text"]].copy()
        df["text"] = df["text"].str.slice(0, 70)
        body = df.to_string(index=False) + "\n"
    if args.output:
        Path(args.output).write_text(body, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(body)
    return 1 if res.failed and len(res.failed) == len(res) else 0
