"""The corpus report at scale: peak memory, time and file size at 10,000 and 200,000 articles.

A synthetic results file is written with the store's own record writer
(:class:`mabpd_kit.corpus.store.Writer`): articles of 20 sentences (~330 words), a third of them
with 1-14 biased sentences carrying evidence spans and a decision trace, 400 outlets (a few tiny),
dates over three years, 1% failed - the shape of a real run, without running the pipeline 200,000
times. Then ``mabpd report RESULTS --by outlet --date published_at`` runs in a fresh child
process (the command students type: it loads the file and writes the report), and the child's
peak resident memory (``os.wait4``), its wall time and the size of the HTML file are printed.

Goals (issue 17): under 1 GB of memory and a file of a few MB, whatever the corpus size.

Usage: .venv/bin/python bench/bench_report.py [--sizes 10000 200000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_MB, GOAL_FILE_MB = 1_000, 10

BIASED = ["Critics slammed the disastrous so-called reform as a reckless power grab.",
          "The radical mayor rammed the bill through, ignoring outraged residents.",
          "Lawmakers caved to extremist pressure in a shameful late-night vote."]
NEUTRAL = ["The council met on Monday to discuss the budget for the coming year.",
           "The vote is scheduled for next week, according to the city clerk.",
           "Officials said the plan would cost about 40 million dollars over five years.",
           "The committee heard testimony from residents and local business owners."]


def _article(k: int, rng: random.Random):
    from mabpd_kit.corpus.articles import ArticleResult, SentenceResult, SpanResult

    outlet = f"outlet{rng.randrange(400) if rng.random() > 0.01 else 400 + rng.randrange(40)}.example"
    meta = {"outlet": outlet, "published_at": f"{2016 + rng.randrange(3)}-{1 + rng.randrange(12):02d}-"
                                              f"{1 + rng.randrange(28):02d}", "title": f"Article {k} on the budget"}
    if rng.random() < 0.01:
        return ArticleResult(id=f"a{k}", digest=f"{k:016x}", fingerprint="bench", meta=meta, failed=True,
                             error=rng.choice(["empty text", "too large", "not English (de)"]))
    n_b = rng.randrange(1, 15) if rng.random() < 0.33 else 0
    texts = [rng.choice(BIASED) if i < n_b else rng.choice(NEUTRAL) for i in range(20)]
    rng.shuffle(texts)
    sents, pos, cats = [], 0, {}
    for i, t in enumerate(texts):
        biased = t in BIASED
        spans = []
        if biased:
            word = t.split()[2]
            at = pos + t.index(word)
            cat = rng.choice(["biased language", "framing", "loaded language"])
            cats[cat] = cats.get(cat, 0) + 1
            spans = [SpanResult(text=word, start=at, end=at + len(word), category=cat, agent="bias", score=0.8)]
        sents.append(SentenceResult(k=i, start=pos, end=pos + len(t), label="biased" if biased else "neutral",
                                    score=0.8 if biased else 0.1, route="consensus", spans=spans,
                                    trace=("BIASED by consensus: bias agent 0.80, framing agent 0.70, evidence "
                                           "agent found no attribution; score 0.78 >= 0.50") if biased else ""))
        pos += len(t) + 1
    text = " ".join(texts)
    n_words = len(text.split())
    n_spans = sum(cats.values())
    return ArticleResult(id=f"a{k}", digest=f"{k:016x}", fingerprint="bench", meta=meta, text=text, n_words=n_words,
                         n_sentences=20, n_biased=n_b, share_biased=n_b / 20, mean_score=0.3, max_score=0.8,
                         n_spans=n_spans, spans_per_100w=100 * n_spans / n_words, categories=cats,
                         top_spans=[s for x in sents for s in x.spans][:5], sentences=sents)


def write_results(path: Path, n: int) -> None:
    from mabpd_kit.corpus.store import Writer

    rng = random.Random(n)
    with Writer(path) as w:
        for k in range(n):
            w.write(_article(k, rng))


def run_report(results: Path, out: Path) -> tuple[float, float, int]:
    """``(peak RSS MB, wall s, exit code)`` of ``mabpd report`` in a fresh process."""
    cmd = [sys.executable, "-m", "mabpd_kit.cli", "report", str(results), "-o", str(out), "--by", "outlet",
           "--date", "published_at"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        print(err[-2000:], file=sys.stderr)
    return usage.ru_maxrss / 1024, wall, proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 200_000])
    ap.add_argument("--keep", help="write the results files and reports here (default: a temporary folder)")
    args = ap.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_report_"))
    tmp.mkdir(parents=True, exist_ok=True)
    print(f"corpus report: peak memory of `mabpd report` (fresh process), time and file size; goals < {GOAL_MB} MB "
          f"and a file of a few MB")
    ok = True
    try:
        for n in args.sizes:
            results = tmp / f"run{n}.mabpd.jsonl"
            t0 = time.perf_counter()
            if not results.exists():
                write_results(results, n)
            made = time.perf_counter() - t0
            rss, wall, rc = run_report(results, tmp / f"report{n}.html")
            size = (tmp / f"report{n}.html").stat().st_size / 1e6 if rc == 0 else float("nan")
            ok &= rc == 0 and rss < GOAL_MB and size < GOAL_FILE_MB
            print(f"  {n:>7,} articles (results file {results.stat().st_size / 1e6:,.0f} MB, written in {made:.0f} s): "
                  f"peak RSS {rss:,.0f} MB, {wall:.1f} s, report {size:.1f} MB" + ("" if rc == 0 else f", exit {rc}"))
    finally:
        if not args.keep:
            for f in tmp.iterdir():
                f.unlink()
            tmp.rmdir()
    print("goals met" if ok else "GOAL MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
