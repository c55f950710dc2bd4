"""The corpus side of ``mabpd analyze CORPUS`` (:func:`add_corpus_options`, :func:`run`) and of
``mabpd report RESULTS.jsonl`` (:func:`add_report_arguments`, :func:`run_report`). An option a run
cannot honour is refused before anything runs (:func:`refusal`), one line and exit code 2."""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mabpd_kit.argtypes import integer, number

__all__ = ["CORPUS_OPTIONS", "add_corpus_options", "add_report_arguments", "is_corpus", "refusal",
           "run", "run_report"]

#: ``(attribute, flag)`` of every corpus option: given on plain-text input, each is refused.
CORPUS_OPTIONS = (("text_col", "--text-col"), ("id_col", "--id-col"), ("out", "--out"), ("mode", "--mode"),
                  ("workers", "--workers"), ("threshold", "--threshold"), ("export", "--export"),
                  ("level", "--level"), ("report", "--report"), ("by", "--by"), ("date", "--date"), ("leaning", "--leaning"),
                  ("follow_symlinks", "--follow-symlinks"), ("engine", "--engine"), ("scheduler", "--scheduler"))
#: ``(attribute, flag, why)`` of the text-input options of ``mabpd analyze``: refused on a corpus.
_TEXT_OPTIONS = (
    ("lines", "--lines", "a corpus has one article per row (or per file) already"),
    ("format", "--format", "a corpus writes a JSONL results file (--out); rows as CSV, JSONL or Parquet with --export FILE"),
    ("output", "-o/--output", "a corpus writes its results to --out (rows to --export, the HTML report to --report)"),
    ("checkpoint", "--checkpoint", "a corpus resumes from its results file (--out)"),
)

def is_corpus(path: str) -> bool:
    """A folder or a file a corpus reader takes (else ``mabpd analyze`` reads plain text)."""
    from mabpd_kit.corpus.inputs import CorpusError, reader  # the folder reader is defined there

    try:
        return reader(None, path).name != "frame"
    except CorpusError:
        return False


def add_corpus_options(group: argparse._ActionsContainer) -> None:
    """The corpus options (``mabpd analyze`` adds them as a group beside its text options)."""
    group.add_argument("--text-col", help="the text column (default: the first of text, content, body, article, ...)")
    group.add_argument("--id-col", help="the id column (default: the row number; a folder uses file names)")
    group.add_argument("--out", help="results file, JSONL, one line per article; a rerun resumes from it "
                                     "(default: <corpus>.mabpd.jsonl next to the corpus)")
    group.add_argument("--mode", choices=("article", "direct"),
                       help="article: sentence by sentence (default); direct: the paper's whole article, cut to 600 "
                            "words, decided by that one decision's label (no threshold)")
    group.add_argument("--workers", type=integer(1), help="processes for the rule-based path (default: every core), or "
                                                   "the workers of a local Dask cluster (--engine dask)")
    group.add_argument("--engine", choices=("local", "dask"),
                       help="local: this machine's processes (default); dask: a Dask cluster (pip install "
                            "'mabpd-kit[scale]'; a LocalCluster of --workers, or --scheduler ADDRESS)")
    group.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786 "
                                                              "(needs --engine dask)")
    group.add_argument("--threshold", type=number(0), help="the article decision's threshold: on the probability p_biased "
                       "(default config.corpus.score_threshold, 0.5), or with corpus.article_decision 'count' on "
                       "the count (config.corpus.article_threshold)")
    group.add_argument("--export", help="also write rows to this .jsonl/.csv/.parquet file")
    group.add_argument("--level", choices=("article", "sentence", "span"), help="rows of --export (default: article)")
    group.add_argument("--report", help="also write the offline HTML report here")
    group.add_argument("--by", help="group column for the report (outlet, topic...); needs --report")
    group.add_argument("--date", help="date column for the report's trend; needs --report")
    group.add_argument("--leaning", help="column of the outlets' political leaning: the report shows the detector's "
                       "own error rates by leaning (the bias of the bias detector); needs --report")
    group.add_argument("--follow-symlinks", action="store_true",
                       help="a folder: read what its symbolic links point to, even outside the folder "
                            "(default: such a link is flagged, not read)")


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="a results file written by `mabpd analyze CORPUS`")
    parser.add_argument("--output", "-o", default="report.html", help="the HTML file to write")
    parser.add_argument("--by", help="group column (outlet, topic...)")
    parser.add_argument("--date", help="date column for the trend")
    parser.add_argument("--leaning", help="column of the outlets' political leaning (the detector's own bias by leaning)")
    parser.add_argument("--threshold", type=number(0), help="the article decision's threshold (default: the shipped "
                        "value; on p_biased unless corpus.article_decision is 'count')")
    parser.add_argument("--title", default="Corpus analysis")


def _settings(args: argparse.Namespace, cfg: object) -> object:
    from mabpd_kit.corpus.settings import resolve

    st = resolve(None, cfg)
    changes = {k: v for k, v in (("mode", getattr(args, "mode", None)), ("workers", getattr(args, "workers", None)),
                                 ("score_threshold" if st.article_decision == "score" else "article_threshold",
                                  args.threshold)) if v is not None}
    return st.model_copy(update=changes) if changes else st


def refusal(args: argparse.Namespace) -> str | None:
    """Why this corpus run cannot honour an option it was given (one line naming it), or None."""
    given = [(flag, why) for attr, flag, why in _TEXT_OPTIONS if getattr(args, attr, None) not in (None, False)]
    if given:
        flags = ", ".join(f for f, _ in given)
        return f"{flags} {'is' if len(given) == 1 else 'are'} for plain-text input, not a corpus: {given[0][1]}"
    for attr, flag, needs, why in (("by", "--by", "report", "it groups the report"),
                                   ("date", "--date", "report", "it is the report's trend"),
                                   ("leaning", "--leaning", "report", "the report shows the detector's bias by it"),
                                   ("level", "--level", "export", "it says which rows --export writes")):
        if getattr(args, attr, None) is not None and not getattr(args, needs, None):
            return f"{flag} needs --{needs} ({why})"
    if getattr(args, "mode", None) == "direct" and getattr(args, "threshold", None) is not None:
        return "--threshold is the article rule's: --mode direct decides each article by its one decision's label"
    if getattr(args, "workers", None) is not None and getattr(args, "llm", False) and getattr(args, "engine", None) != "dask":
        return ("--workers is for the rule-based path: with --llm the endpoint's concurrency "
                "(config llm.concurrency) sets how many calls run at once")
    if getattr(args, "scheduler", None) and getattr(args, "engine", None) != "dask":
        return "--scheduler is a Dask scheduler's address: it needs --engine dask"
    if getattr(args, "batch", None) and not getattr(args, "llm", False):
        return "--batch needs --llm (the Batch API of the configured endpoint)"
    if getattr(args, "follow_symlinks", False) and not Path(args.corpus).is_dir():
        return f"--follow-symlinks is for a folder; {args.corpus} is a table"
    return None


@contextlib.contextmanager
def _quiet_dates() -> Iterator[None]:
    """No pandas warning on free-text dates: :func:`_date_note` counts them instead."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Cc]ould not infer format.*")
        yield


def _date_note(summary: Any, date: str) -> str | None:
    """'N of M values of DATE are not dates (left out of the trend)', or None."""
    from mabpd_kit.corpus.groups import month

    values = summary.frame[date].tolist() if date in summary.frame else [None] * len(summary.frame)
    given = [v for v in values if v is not None and str(v).strip()]
    if not given:
        return f"no article has a value in --date column {date!r}: the report has no trend" if values else None
    with _quiet_dates():
        bad = int(month(given).isna().sum())
    return f"{bad} of {len(given)} values of {date!r} are not dates (left out of the trend)" if bad else None


def run(args: argparse.Namespace) -> int:
    from mabpd_kit.config import Config
    from mabpd_kit.corpus.inputs import CorpusError, read
    from mabpd_kit.corpus.parallel import analyze
    why = refusal(args)
    if why is not None:
        print(f"mabpd analyze: error: {why}", file=sys.stderr)
        return 2
    cfg = Config.load(args.config) if args.config else Config()
    if getattr(args, "ablation", None) is not None:
        cfg = cfg.ablation(args.ablation)  # part of the fingerprint: another ablation is analysed anew
    st = _settings(args, cfg)
    why = _threshold_refusal(args.threshold, st)
    if why is not None:
        print(f"mabpd analyze: error: {why}", file=sys.stderr)
        return 2
    out = Path(args.out or f"{str(args.corpus).rstrip('/')}.mabpd.jsonl")
    llm = None
    if args.llm:
        from mabpd_kit.llm import connect

        llm = connect(config=cfg)
    from mabpd_kit.runs import Busy

    def one_pass() -> Any:
        corpus = read(args.corpus, text_col=args.text_col, id_col=args.id_col, settings=st,
                      follow_symlinks=bool(getattr(args, "follow_symlinks", False)))
        return analyze(corpus, out, config=cfg, llm=llm, settings=st, progress=not args.quiet and sys.stderr.isatty(),
                       engine=getattr(args, "engine", None), scheduler=getattr(args, "scheduler", None))

    try:
        if getattr(args, "batch", None):
            from mabpd_kit.llm.batch import run_batched

            res = run_batched(one_pass, llm, state=args.batch, quiet=args.quiet)  # type: ignore[arg-type]
        else:
            res = one_pass()
    except (CorpusError, Busy) as exc:
        print(f"mabpd analyze: {exc}", file=sys.stderr)
        return 2
    return _after(args, out, st, res)


def _after(args: argparse.Namespace, out: Path, st: Any, res: Any) -> int:
    """What ``mabpd analyze`` says and writes after a run."""
    from mabpd_kit.corpus.reporting import summary_of
    from mabpd_kit.corpus.store import export, failed_sentences_note

    summary = summary_of(out, by=args.by, date=args.date, leaning=args.leaning, settings=st)
    counts = summary.counts()
    done = counts["articles"]
    if not done:
        what = "no .txt or .html files" if Path(args.corpus).is_dir() else "no rows"
        print(f"mabpd analyze: error: {what} in {args.corpus}: nothing to analyse", file=sys.stderr)
        return 2
    print(f"mabpd analyze: {res.computed or 0} articles analysed now, {res.resumed} from the results file: "
          f"{done} articles ({counts['sentences']} sentences analysed), {counts['failed']} failed (reasons in the "
          f"file){failed_sentences_note(counts)} -> {out}", file=sys.stderr)
    print(f"mabpd analyze: {_decided(summary, st)}", file=sys.stderr)
    if args.export:
        level = args.level or "article"
        n = export(out, args.export, level=level, settings=st)
        print(f"wrote {n} {level} rows to {args.export}", file=sys.stderr)
    if args.report:
        why = _missing_column(summary, args)
        if why is not None:
            print(f"mabpd analyze: error: {why}; no report written", file=sys.stderr)
            return 2
        _write_report("mabpd analyze", summary, args, args.report, settings=st)
        print(f"wrote {args.report}", file=sys.stderr)
    return 1 if done and counts["failed"] == done else 0


def _missing_column(summary: Any, args: argparse.Namespace) -> str | None:
    """'--by: no article has a column ...' for the first of --by and --leaning no article has, or None."""
    for flag, col in (("--by", args.by), ("--leaning", args.leaning)):
        why = summary.missing(col) if col else None
        if why is not None:
            return f"{flag}: {why}"
    return None


def _write_report(prog: str, summary: Any, args: argparse.Namespace, path: str, **kw: Any) -> None:
    """The report of ``summary`` at ``path``, then a line on the values of --date that are not dates."""
    from mabpd_kit.corpus.reporting import report

    with _quiet_dates():
        report(summary, path, by=args.by, date=args.date, leaning=args.leaning, **kw)
    note = _date_note(summary, args.date) if args.date else None
    if note:
        print(f"{prog}: {note}", file=sys.stderr)


def _decided(summary: Any, st: Any) -> str:
    """'K of N articles judged biased (the rule)'."""
    stat, thr = st.rule
    df = summary.frame
    ok = df[~df["failed"]]
    what = (f"the hyperpartisan-style article score p_biased >= {thr:g}, fitted on SemEval-2019 HyperPartisan"
            if stat == "p_biased" else f"the count rule {stat} >= {thr:g}")
    mean = f"; mean p_biased {ok['p_biased'].astype(float).mean():.2f}" if len(ok) and ok["p_biased"].notna().any() else ""
    return f"{int(ok['pred'].sum()) if len(ok) else 0} of {len(ok)} decided articles judged biased ({what}{mean})"


def _threshold_refusal(threshold: float | None, st: Any) -> str | None:
    """Why ``--threshold`` cannot be the article rule's, or None (the score decision's is 0 to 1)."""
    if threshold is not None and st.article_decision == "score" and threshold > 1:
        return (f"--threshold {threshold:g} is on the probability p_biased, so from 0 to 1 (with "
                "corpus.article_decision 'count' it is a count)")
    return None


def run_report(args: argparse.Namespace) -> int:
    from mabpd_kit.corpus.reporting import summary_of
    from mabpd_kit.corpus.settings import resolve

    if not Path(args.results).is_file():
        print(f"mabpd report: no results file {args.results}", file=sys.stderr)
        return 2
    why = _threshold_refusal(args.threshold, resolve(None))
    summary = summary_of(args.results, by=args.by, date=args.date, leaning=args.leaning, threshold=args.threshold)
    why = why or _missing_column(summary, args)
    if why is not None:
        print(f"mabpd report: error: {why}", file=sys.stderr)
        return 2
    if not len(summary):
        print(f"mabpd report: {args.results} holds no article results", file=sys.stderr)
        return 2
    _write_report("mabpd report", summary, args, args.output, title=args.title)
    print(f"wrote {args.output} ({len(summary)} articles)", file=sys.stderr)
    return 0
