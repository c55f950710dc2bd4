"""Evaluation figures: `mabpd evaluate` on the BABE training split with the rule-based agents
(full, no-debate, single-agent; macro F1, binary F1, precision, recall, paired-bootstrap p-values,
run time), the speed of the 10,000-resample paired bootstrap, and loader times. Prints; asserts nothing.

    MABPD_DATA_DIR=../shared/data .venv/bin/python bench/bench_evaluate.py [--limit N]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from mabpd_kit import data, evaluate, metrics


def loaders() -> None:
    for name, fn in [
        ("BABE train", lambda: data.load_babe("train", download=False)),
        ("HyperPartisan train (600 words)", lambda: data.load_hyperpartisan("train", truncate=600, download=False)),
        ("PolitiFact-Hidden", lambda: data.load_politifact_hidden(download=False)),
        ("LIAR train", lambda: data.load_liar("train", download=False)),
        ("LIAR-PLUS test", lambda: data.load_liar_plus("test", download=False)),
    ]:
        t = time.perf_counter()
        try:
            df = fn()
        except FileNotFoundError as exc:
            print(f"  {name}: unavailable ({str(exc)[:80]}...)")
            continue
        extra = f", {df.attrs['n_truncated']} truncated" if "n_truncated" in df.attrs else ""
        print(f"  {name}: {len(df)} rows{extra} in {time.perf_counter() - t:.2f} s")


def bootstrap_speed() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 3121)
    a = np.where(rng.random(3121) < 0.7, y, 1 - y)
    b = np.where(rng.random(3121) < 0.68, y, 1 - y)
    t = time.perf_counter()
    r = metrics.paired_bootstrap(y, a, b, n_resamples=10_000, seed=0)
    print(f"  paired bootstrap, macro F1, 3,121 items, 10,000 resamples (vectorised): {time.perf_counter() - t:.2f} s  ({r})")
    t = time.perf_counter()
    metrics.paired_bootstrap(y, a, b, metric=lambda t_, p_: metrics.macro_f1(t_, p_), n_resamples=200, seed=0)
    per = (time.perf_counter() - t) / 200
    print(f"  the same through a Python loop: {per * 1000:.1f} ms per resample, ~{per * 10_000:.0f} s for 10,000")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None, help="seeded sample of N sentences (default: all 3,121)")
    args = ap.parse_args()
    print("loaders (local copies under MABPD_DATA_DIR):")
    loaders()
    print("metrics:")
    bootstrap_speed()
    if data.data_dir() is None:
        print("evaluation: MABPD_DATA_DIR not set, skipping the BABE evaluation")
        return
    print("mabpd evaluate --dataset babe --split train --configs full,no-debate,single-agent (rule-based):")
    with tempfile.TemporaryDirectory() as out:  # fresh checkpoints: time the real run, not a resume
        t = time.perf_counter()
        ev = evaluate.evaluate("babe", "train", ["full", "no-debate", "single-agent"], limit=args.limit, out_dir=out, progress=False)
        total = time.perf_counter() - t
    print(ev.closing_note())
    per_item = sum(ev.run_s.values()) / (len(ev.configs) * ev.n_items)
    print(f"  wall time {total:.1f} s including loading, scoring and writing; pipeline {per_item * 1000:.1f} ms per sentence and configuration")


if __name__ == "__main__":
    main()
