"""Command-line entry points for corpus analysis, used by ``mabpd analyze`` and ``mabpd report``.

Same shape as a ``cli`` command module (``add_arguments(parser)``, ``run(args) -> int``), twice:

- ``mabpd analyze CORPUS`` (a .csv/.tsv/.jsonl/.json/.parquet file or a folder of .txt/.html files):
  :func:`add_arguments` / :func:`run`: analyse into a resumable results file, then optionally export
  rows and write the report;
- ``mabpd report RESULTS.jsonl``: :func:`add_report_arguments` / :func:`run_report`.

A corpus that cannot be read at all is one line on stderr and exit code 2 (no traceback); bad rows
are flagged in the results and the run goes on. :func:`is_corpus` tells ``analyze`` which path to take.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_arguments", "add_corpus_options", "add_report_arguments", "is_corpus", "run", "run_report"]

_TABLES = (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")


def is_corpus(path: str) -> bool:
    """A folder or a table file: ``mabpd analyze`` runs corpus analysis on it (else: plain text)."""
    p = Path(path)
    name = p.name.lower().removesuffix(".gz")
    return p.is_dir() or name.endswith(_TABLES)


def add_corpus_options(group: "argparse._ActionsContainer") -> None:
    """The corpus options (``mabpd analyze`` adds them as a group beside its text options)."""
    group.add_argument("--text-col", help="the text column (default: the first of text, content, body, article, ...)")
    group.add_argument("--id-col", help="the id column (default: the row number; a folder uses file names)")
    group.add_argument("--out", help="results file, JSONL, one line per article; a rerun resumes from it "
                                     "(default: <corpus>.mabpd.jsonl next to the corpus)")
    group.add_argument("--mode", choices=("article", "direct"), default="article",
                       help="article: sentence by sentence (default); direct: the paper's whole article, cut to 600 words")
    group.add_argument("--workers", type=int, help="processes for the rule-based path (default: every core)")
    group.add_argument("--threshold", type=float, help="article threshold (default: config.corpus.article_threshold)")
    group.add_argument("--export", help="also write rows to this .jsonl/.csv/.parquet file")
    group.add_argument("--level", choices=("article", "sentence", "span"), default="article", help="rows of --export")
    group.add_argument("--report", help="also write the offline HTML report here")
    group.add_argument("--by", help="group column for the report (outlet, topic...)")
    group.add_argument("--date", help="date column for the report's trend")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("corpus", help="a .csv/.tsv/.jsonl/.json/.parquet file or a folder of .txt/.html files")
    add_corpus_options(parser)
    parser.add_argument("--config", help="a saved configuration (TOML or JSON)")
    parser.add_argument("--llm", action="store_true", help="use the configured endpoint instead of rule-based agents")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="a results file written by `mabpd analyze CORPUS`")
    parser.add_argument("--output", "-o", default="report.html", help="the HTML file to write")
    parser.add_argument("--by", help="group column (outlet, topic...)")
    parser.add_argument("--date", help="date column for the trend")
    parser.add_argument("--threshold", type=float, help="article threshold (default: the shipped value)")
    parser.add_argument("--title", default="Corpus analysis")


def _settings(args: argparse.Namespace, cfg: object) -> object:
    from mabpd_kit.corpus.settings import resolve

    st = resolve(None, cfg)
    changes = {k: v for k, v in (("mode", getattr(args, "mode", None)), ("workers", getattr(args, "workers", None)),
                                 ("article_threshold", args.threshold)) if v is not None}
    return st.model_copy(update=changes) if changes else st


def run(args: argparse.Namespace) -> int:
    from mabpd_kit.config import Config
    from mabpd_kit.corpus.inputs import CorpusError, read
    from mabpd_kit.corpus.parallel import analyze
    from mabpd_kit.corpus.reporting import report
    from mabpd_kit.corpus.store import export, load

    cfg = Config.load(args.config) if args.config else Config()
    st = _settings(args, cfg)
    out = Path(args.out or f"{str(args.corpus).rstrip('/')}.mabpd.jsonl")
    llm = None
    if args.llm:
        from mabpd_kit.llm import connect

        llm = connect(config=cfg)
    try:
        corpus = read(args.corpus, text_col=args.text_col, id_col=args.id_col, settings=st)
        counts = analyze(corpus, out, config=cfg, llm=llm, settings=st, progress=not args.quiet and sys.stderr.isatty(),
                         load_results=False)
    except CorpusError as exc:
        print(f"mabpd analyze: {exc}", file=sys.stderr)
        return 2
    done = counts["computed"] + counts["resumed"]
    if not done:
        what = "no .txt or .html files" if Path(args.corpus).is_dir() else "no rows"
        print(f"mabpd analyze: error: {what} in {args.corpus}: nothing to analyse", file=sys.stderr)
        return 2
    print(f"mabpd analyze: {counts['computed']} articles analysed ({counts['sentences']} sentences), "
          f"{counts['resumed']} from the results file, {counts['failed']} failed (reasons in the file) -> {out}",
          file=sys.stderr)
    if args.export:
        n = export(out, args.export, level=args.level, settings=st)
        print(f"wrote {n} {args.level} rows to {args.export}", file=sys.stderr)
    if args.report:
        report(load(out, settings=st), args.report, by=args.by, date=args.date, settings=st)
        print(f"wrote {args.report}", file=sys.stderr)
    return 1 if done and counts["failed"] == done else 0


def run_report(args: argparse.Namespace) -> int:
    from mabpd_kit.corpus.reporting import report
    from mabpd_kit.corpus.store import load

    if not Path(args.results).is_file():
        print(f"mabpd report: no results file {args.results}", file=sys.stderr)
        return 2
    res = load(args.results, threshold=args.threshold)
    if not len(res):
        print(f"mabpd report: {args.results} holds no article results", file=sys.stderr)
        return 2
    report(res, args.output, by=args.by, date=args.date, title=args.title)
    print(f"wrote {args.output} ({len(res)} articles)", file=sys.stderr)
    return 0
