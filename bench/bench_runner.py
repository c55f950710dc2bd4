"""The one batch runner at scale (issue 22): memory, local processes and Dask, on a synthetic corpus.

The corpus is generated on the fly (an iterator of :class:`~mabpd_kit.corpus.inputs.Doc`): articles
of ``PER_ARTICLE`` sentences drawn, in a fixed pseudo-random order, from a fixed list of neutral and
loaded English sentences written for this bench (no benchmark text). Every run is rule-based, in a
fresh interpreter (``--child``), writing its results file in a temporary folder:

1. **peak resident memory** of one process (``engine="local", workers=1``: no worker processes)
   at each of ``--sizes`` sentences (default 100,000 and 1,000,000): ``ru_maxrss`` of that
   interpreter; goal: under 1 GB and within 10% of each other;
2. **throughput** on ``--speed-sentences`` (default 200,000): 1 and 2 local processes (goal >= 1.9x)
   and a 2-worker Dask ``LocalCluster`` (goal >= 0.85 of the 2-process pool); ``--repeats`` runs of
   each, alternating (every other repeat in reverse order), the fastest counting (the machine may be
   shared: the load average is printed beside every figure);
3. **identical records**: the three results files compared item by item (id, n_sentences, n_biased,
   and every sentence's score).

Usage: .venv/bin/python bench/bench_runner.py [--sizes 100000,1000000] [--speed-sentences 200000]
       [--repeats 1] [--skip-memory] [--skip-speed] [--no-dask]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("MABPD_OFFLINE", "1")
PER_ARTICLE = 10

#: written for this bench: plain reporting, and the same events in loaded language
NEUTRAL = [
    "The city council met on Tuesday to review the annual budget.",
    "Officials said the new bridge will open to traffic in March.",
    "The report was published by the state transport agency on Friday.",
    "About two hundred residents attended the public hearing at the library.",
    "The committee will vote on the proposal next week.",
    "Rainfall in the region was close to the long-term average this spring.",
    "The school district hired forty new teachers for the coming year.",
    "According to the agency, unemployment fell slightly in the third quarter.",
    "The museum extended its opening hours during the summer holidays.",
    "The mayor and the union leaders agreed to meet again in two weeks.",
    "Construction of the new clinic is expected to take eighteen months.",
    "The court scheduled the next hearing for the end of the month.",
    "Local farmers reported a larger harvest than last year.",
    "The minister answered questions from reporters after the meeting.",
]
LOADED = [
    "Critics slammed the disastrous plan as a reckless giveaway to cronies.",
    "The senator's outrageous scheme would gut the schools and betray working families.",
    "Radical activists rammed the bill through in a shameful late-night stunt.",
    "The mayor's pathetic excuses cannot hide the catastrophic failure of his policy.",
    "Corrupt officials bulldozed the neighbourhood to reward their wealthy donors.",
    "The so-called reform is a brazen attack on the freedoms of ordinary people.",
    "Extremists hijacked the meeting with their absurd and dangerous demands.",
    "The governor's cowardly retreat exposed the utter bankruptcy of his agenda.",
    "Greedy developers trashed the historic park in a blatant land grab.",
    "The agency's incompetent leaders botched the rollout from day one.",
]
POOL = NEUTRAL + LOADED


def corpus(n_sentences: int) -> Iterator[object]:
    """Articles of PER_ARTICLE sentences (ids ``a0``, ``a1``, ...), the same for every run."""
    from mabpd_kit.corpus.inputs import Doc

    state = 12345
    for a in range(n_sentences // PER_ARTICLE):
        picks = []
        for _ in range(PER_ARTICLE):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF  # a fixed LCG: no RNG import, same everywhere
            picks.append(POOL[(state >> 8) % len(POOL)])
        yield Doc(f"a{a}", " ".join(picks), meta={"outlet": f"outlet{a % 25}"})


def child(spec: dict) -> None:
    """One run in this (fresh) interpreter; prints its figures as one JSON line."""
    from mabpd_kit.corpus import analyze

    t0 = time.perf_counter()
    counts = analyze(corpus(spec["sentences"]), spec["out"], workers=spec["workers"], engine=spec["engine"],
                     load_results=False)
    wall = time.perf_counter() - t0
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"wall": wall, "sentences": counts["sentences"], "articles": counts["articles"],
                      "failed": counts["failed"], "computed": counts["computed"],
                      "cpu_main": me.ru_utime + me.ru_stime, "cpu_kids": kids.ru_utime + kids.ru_stime,
                      "rss_main_mb": me.ru_maxrss / 1024, "rss_kids_mb": kids.ru_maxrss / 1024,
                      "file_mb": Path(spec["out"]).stat().st_size / 2**20}), flush=True)


def run(out: Path, sentences: int, workers: int, engine: str) -> dict:
    if out.exists():
        out.unlink()
    spec = {"out": str(out), "sentences": sentences, "workers": workers, "engine": engine}
    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench run {spec} failed:\n{proc.stderr[-3000:]}")
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    r["load"] = os.getloadavg()[0]
    return r


def keys(path: Path) -> Iterator[tuple]:
    """What must be identical item by item: id, n_sentences, n_biased, every sentence's score."""
    with path.open("rb") as fh:
        for raw in fh:
            line = json.loads(raw)
            rec = line["record"]
            yield (line["id"], rec["n_sentences"], rec["n_biased"], tuple(s["score"] for s in rec["sentences"]))


def compare(a: Path, b: Path) -> tuple[int, int, str | None]:
    """(records compared, records that differ, the first difference)."""
    n = bad = 0
    first = None
    sentinel = ("<missing>",)
    ia, ib = keys(a), keys(b)
    while True:
        x, y = next(ia, None), next(ib, None)
        if x is None and y is None:
            return n, bad, first
        n += 1
        if x != y:
            bad += 1
            if first is None:
                first = f"record {n}: {(x or sentinel)[:3]} vs {(y or sentinel)[:3]}"


def load() -> str:
    return "load average {:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())


def speed_line(name: str, r: dict) -> str:
    cpu = r["cpu_main"] + r["cpu_kids"]
    return (f"{name}: {r['sentences']:,} sentences ({r['articles']:,} articles, {r['failed']} failed) in "
            f"{r['wall']:.1f} s = {r['sentences'] / r['wall']:,.0f} sentences/s wall; "
            f"{r['sentences'] / cpu:,.0f}/s per CPU second ({r['cpu_main']:.1f} CPU s in the parent, "
            f"{r['cpu_kids']:.1f} in workers; {cpu / r['wall']:.2f} cores busy on average); peak RSS parent {r['rss_main_mb']:.0f} MB, largest child "
            f"{r['rss_kids_mb']:.0f} MB; load {r['load']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000", help="sentences of the memory runs, comma-separated")
    ap.add_argument("--speed-sentences", type=int, default=200_000, help="sentences of the throughput runs")
    ap.add_argument("--repeats", type=int, default=1, help="throughput runs of each executor (the fastest counts)")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--no-dask", action="store_true", help="no Dask run (without mabpd-kit[scale])")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    print(f"== the batch runner, rule-based corpus, synthetic articles of {PER_ARTICLE} sentences "
          f"({len(NEUTRAL)} neutral, {len(LOADED)} loaded sentences in the pool); {os.cpu_count()} cores; "
          f"{load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-runner-", dir="/tmp") as tmp:
        d = Path(tmp)
        if not args.skip_memory:
            sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
            print("-- peak resident memory, one process (engine='local', workers=1), each run in a fresh interpreter",
                  flush=True)
            rss = {}
            for n in sizes:
                r = run(d / f"mem{n}.jsonl", n, 1, "local")
                rss[n] = r["rss_main_mb"]
                print(f"{n:,} sentences: peak RSS {r['rss_main_mb']:.0f} MB (children {r['rss_kids_mb']:.0f} MB); "
                      f"{r['sentences']:,} sentences analysed, {r['articles']:,} articles, {r['failed']} failed, "
                      f"results file {r['file_mb']:.0f} MB; {r['wall']:.0f} s = {r['sentences'] / r['wall']:,.0f} "
                      f"sentences/s wall, {r['sentences'] / (r['cpu_main'] + r['cpu_kids']):,.0f}/s per CPU second; "
                      f"load {r['load']:.2f}", flush=True)
                (d / f"mem{n}.jsonl").unlink()
            if len(rss) > 1:
                lo, hi = min(rss.values()), max(rss.values())
                print(f"memory: largest {hi:.0f} MB (goal < 1024 MB: {'met' if hi < 1024 else 'MISSED'}); "
                      f"largest / smallest {hi / lo:.3f} (goal <= 1.10: {'met' if hi <= 1.10 * lo else 'MISSED'})",
                      flush=True)
        if not args.skip_speed:
            n = args.speed_sentences
            print(f"-- throughput on {n:,} sentences (each run in a fresh interpreter, start-up included)", flush=True)
            runs_ = [("1 local process", 1, "local"), ("2 local processes", 2, "local")]
            if not args.no_dask:
                runs_.append(("Dask LocalCluster, 2 workers", 2, "dask"))
            best: dict[str, dict] = {}
            least_cpu: dict[str, float] = {}  # CPU seconds of the work, the least of the repeats (contention inflates it)
            for rep in range(args.repeats):
                # every other repeat in reverse order: this box's speed drifts under sustained load, so a fixed
                # order would always give the last executor the slowest minutes
                for name, w, engine in (runs_ if rep % 2 == 0 else runs_[::-1]):
                    out = d / f"speed-{engine}{w}-{rep}.jsonl"
                    r = run(out, n, w, engine)
                    r["out"] = out
                    print(f"  run {rep + 1}: " + speed_line(name, r), flush=True)
                    least_cpu[name] = min(least_cpu.get(name, float("inf")), r["cpu_main"] + r["cpu_kids"])
                    if name not in best or r["wall"] < best[name]["wall"]:
                        if name in best:
                            best[name]["out"].unlink()
                        best[name] = r
                    else:
                        out.unlink()
            for name, r in best.items():
                print(speed_line(name, r), flush=True)
            one, two = best["1 local process"], best["2 local processes"]
            up = one["wall"] / two["wall"]
            c1, c2 = least_cpu["1 local process"], least_cpu["2 local processes"]
            print(f"speed-up 1 -> 2 local processes: {up:.2f}x wall (goal >= 1.9x: {'met' if up >= 1.9 else 'MISSED'}); "
                  f"least CPU seconds of the work: 1 process {c1:.1f}, 2 processes {c2:.1f}, so on 2 idle cores at most "
                  f"{2 * c1 / c2:.2f}x (the work the pool adds); {load()}", flush=True)
            if "Dask LocalCluster, 2 workers" in best:
                dk = best["Dask LocalCluster, 2 workers"]
                ratio = two["wall"] / dk["wall"]
                cd = least_cpu["Dask LocalCluster, 2 workers"]
                print(f"Dask / local pool (2 workers each): {ratio:.2f} of the local pool's sentences/s wall "
                      f"(goal >= 0.85: {'met' if ratio >= 0.85 else 'MISSED'}); least CPU seconds of the work: Dask "
                      f"{cd:.1f} (parent {dk['cpu_main']:.1f}: scheduler, folding the parts; workers counted when "
                      f"the cluster reaps them), local pool {c2:.1f}: on idle cores about {c2 / cd:.2f}", flush=True)
            base = one["out"]
            for name, r in best.items():
                if r is one:
                    continue
                m, bad, first = compare(base, r["out"])
                print(f"records, {name} vs 1 local process: {m:,} compared item by item (id, n_sentences, n_biased, "
                      f"sentence scores), {bad} differ" + (f"; first: {first}" if first else ""), flush=True)
    print(f"(after the runs: {load()})")


if __name__ == "__main__":
    t = time.perf_counter()
    main()
    if "--child" not in sys.argv:
        print(f"(bench took {time.perf_counter() - t:.0f} s)")
