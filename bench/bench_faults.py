"""Fault run figures (printed, not asserted; `tests/test_faults.py` asserts them on a smaller batch).

An LLM MABPD batch of ``--n`` synthetic news sentences (written for this bench, no benchmark text)
against FakeLLMServer injecting faults into ``--rate`` of the calls (429, 500, malformed JSON,
truncated JSON, empty replies, wrong types, refusals, garbled bodies, slow answers), with the LLM
cache and a checkpoint; then the same items against a healthy server with the same cache and
checkpoint. Targets (issue 16): 100% decided after the rerun, 0 calls repeated for items that
had succeeded in the first run.

Run: ``.venv/bin/python bench/bench_faults.py [--n 200] [--rate 0.2] [--seed 0]``
"""

from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("MABPD_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="items (default 200)")
    ap.add_argument("--rate", type=float, default=0.2, help="share of calls given a fault (default 0.2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--concurrency", type=int, default=8, help="endpoint limit (config.llm.concurrency)")
    args = ap.parse_args()

    from mabpd_kit.testing.faults import fault_run

    with tempfile.TemporaryDirectory() as work:
        os.environ["MABPD_CACHE_DIR"] = os.path.join(work, "cache")
        f = fault_run(args.n, workdir=work, rate=args.rate, seed=args.seed, concurrency=args.concurrency)
    n = f["n"]
    print(f"== fault run: {n} MABPD items, {f['rate']:.0%} of calls faulted in run 1, then a healthy rerun")
    print("faults injected in run 1: " + ", ".join(f"{k} {v}" for k, v in sorted(f["injected"].items())))
    print(f"run 1 (faulty):  {f['decided_1']}/{n} decided ({f['decided_1'] / n:.1%}), {f['calls_1']} server calls, "
          f"{f['wall_s_1']:.1f} s; failures: " + ", ".join(f"{k} {v}" for k, v in f["errors_1"].most_common()))
    print(f"run 2 (healthy): {f['decided_2']}/{n} decided ({f['decided_2'] / n:.1%}; target 100%), "
          f"{f['resumed_2']} from the checkpoint, {f['calls_2']} server calls for {n - f['resumed_2']} items, "
          f"{f['wall_s_2']:.1f} s")
    print(f"calls repeated for items that had succeeded in run 1: {f['repeated_2']} (target 0)")
    print("labels after run 2: " + ", ".join(f"{k} {v}" for k, v in sorted(f["labels_2"].items(), key=str)))


if __name__ == "__main__":
    main()
