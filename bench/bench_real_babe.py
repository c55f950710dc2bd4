"""The tiny real model scored on a balanced random sample of BABE train (prints the figures).

MABPD's LLM pipeline, with the kit's defaults, against ``connect("local", server=--server)`` (llama.cpp's
``llama-server`` or llama-cpp-python's server with SmolLM2-135M-Instruct; it starts or reuses the one local
server of this machine), on ``--per-class`` biased and as many neutral
sentences drawn from BABE train with a fixed seed, interleaved biased / neutral so that a run stopped early
is still balanced. Results stream to a JSONL checkpoint in ``--work`` (outside the repository: BABE text is
benchmark data) and a rerun resumes from it; a failed item is *not* retried on resume (its failure is the
result). The model's answers go to an answer cache beside it, so an item cut by a crash costs only its
unanswered calls.

``--report`` (no model needed) reads the checkpoint and prints: n decided / failed with the reasons, accuracy
and macro F1 with percentile bootstrap 95% CIs (seeded) on the decided items and over all items with a failure
counted as wrong, the rule-based agents on the same sentences, wall time per sentence and the share of
structured calls that needed the repair turn.

Usage (one real-model job at a time; the machine has 2 cores)::

    MABPD_DATA_DIR=/work/shared/data .venv/bin/python bench/bench_real_babe.py --per-class 12 --server llama-server
    MABPD_DATA_DIR=/work/shared/data .venv/bin/python bench/bench_real_babe.py --report
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time
from pathlib import Path

DEFAULT_WORK = Path(os.environ.get("TMPDIR", "/tmp")) / "mabpd-real-babe"


def sample(per_class: int, seed: int):
    """``per_class`` biased and ``per_class`` neutral BABE train rows, drawn with ``seed``, interleaved b, n, b, ..."""
    import numpy as np

    from mabpd_kit.data.babe import load_babe

    df = load_babe("train", llm_labels=False, download=False)
    rng = np.random.default_rng(seed)
    picks = {lab: df[df["label"] == lab].iloc[rng.permutation(int((df["label"] == lab).sum()))[:per_class]]
             for lab in (1, 0)}
    rows = [picks[lab].iloc[k] for k in range(per_class) for lab in (1, 0)]
    return [str(r["id"]) for r in rows], [str(r["text"]) for r in rows], [int(r["label"]) for r in rows]


def run(args: argparse.Namespace) -> None:
    import mabpd_kit as mk
    from mabpd_kit.config import Config
    from mabpd_kit.llm import local

    if local.default_model_path() is None:
        print(f"bench_real_babe: no local model ({local.INSTALL_HINT}); skipped")
        return
    ids, texts, gold = sample(args.per_class, args.seed)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    (work / "sample.json").write_text(json.dumps({"seed": args.seed, "per_class": args.per_class, "ids": ids,
                                                  "gold": gold, "server": args.server}, indent=1))
    cfg = Config().replace(**{"llm.server": args.server})  # the profile named, so the grammar holds
    llm = mk.connect("local", server=args.server, config=cfg, cache_dir=work / "cache", cache_mode="auto", quiet=True)
    print(f"{len(ids)} BABE train sentences (seed {args.seed}), checkpoint {work / 'llm.jsonl'}", flush=True)
    t0 = time.time()
    pipe = mk.Pipeline(cfg, llm)
    for k in range(len(ids)):  # one at a time, so the log says when each item ended
        d = pipe.analyze_many(texts[: k + 1], ids=ids[: k + 1], gold=gold[: k + 1], checkpoint=work / "llm.jsonl",
                              progress=False, retry_failed=False)[k]
        state = f"failed: {d.error}" if d.failed else f"{d.label} (gold {'biased' if d.gold else 'neutral'}, {d.route})"
        print(f"[{k + 1}/{len(ids)}] {d.id} {d.latency_s:.0f} s, {d.usage.calls} calls, "
              f"{d.usage.repaired_calls} repaired: {state} ({time.time() - t0:.0f} s in all)", flush=True)


def reason(error: str) -> str:
    """A failure's reason without the endpoint's address and the reply: the class, the schema and the validation message."""
    m = re.search(r"^(\w+): .*?gave no valid (\w+) after (.*?): (.*?)\. Reply began", error, flags=re.S)
    return f"{m.group(1)}: no valid {m.group(2)} after {m.group(3)}: {m.group(4)}" if m else error[:160]


def _ci(y, p, metric, seed: int):
    from mabpd_kit.metrics import metric_ci

    est, lo, hi = metric_ci(y, p, metric=metric, n_resamples=10_000, seed=seed)
    return f"{est:.2f} [{lo:.2f}, {hi:.2f}]"


def report(args: argparse.Namespace) -> None:
    import mabpd_kit as mk
    from mabpd_kit.mabpd.pipeline import Decision
    from mabpd_kit.metrics import accuracy, macro_f1
    from mabpd_kit.runs import read_checkpoint

    work = Path(args.work)
    meta = json.loads((work / "sample.json").read_text())
    ids_all, texts_all, gold_all = sample(meta["per_class"], meta["seed"])
    done = {i: rec for i, (_, _, rec) in read_checkpoint(work / "llm.jsonl", Decision).items()}
    order = [k for k, i in enumerate(ids_all) if i in done]
    ds = [done[ids_all[k]] for k in order]
    n, failed = len(ds), [d for d in ds if d.failed]
    decided = [d for d in ds if not d.failed]
    server = meta.get("server", "llama-cpp-python")  # samples drawn before --server ran on it
    n_biased = sum(d.gold for d in ds)
    print(f"{n} of {len(ids_all)} sampled sentences run on {server} (seed {meta['seed']}; gold: {n_biased} biased, "
          f"{n - n_biased} neutral); decided {len(decided)}, failed {len(failed)}")
    reasons = collections.Counter(reason(d.error or "") for d in failed)
    for r, c in reasons.most_common():
        print(f"  failed x{c}: {r}")
    for d in failed:  # the whole message once per item, for the record
        print(f"    {d.id}: {d.error}")
    if decided:
        y, p = [d.gold for d in decided], [d.pred for d in decided]
        print(f"decided items (n={len(decided)}): accuracy {_ci(y, p, accuracy, args.seed)}, "
              f"macro F1 {_ci(y, p, macro_f1, args.seed)}; {sum(a == b for a, b in zip(y, p))} right; "
              f"predicted biased {sum(p)}, neutral {len(p) - sum(p)}")
        tp = sum(a == 1 and b == 1 for a, b in zip(y, p))
        tn = sum(a == 0 and b == 0 for a, b in zip(y, p))
        print(f"  biased gold: {tp} of {sum(y)} called biased; neutral gold: {tn} of {len(y) - sum(y)} called neutral; "
              f"failed items' gold: {sum(d.gold for d in failed)} biased, {len(failed) - sum(d.gold for d in failed)} neutral")
        print("  routes: " + ", ".join(f"{r} {c}" for r, c in collections.Counter(d.route for d in decided).most_common()))
    y_all = [d.gold for d in ds]
    p_all = [(1 - d.gold) if d.failed else d.pred for d in ds]  # a failure counts as wrong
    print(f"all items, a failure counted as wrong (n={n}): accuracy {_ci(y_all, p_all, accuracy, args.seed)}, "
          f"macro F1 {_ci(y_all, p_all, macro_f1, args.seed)}")
    rule = mk.Pipeline(mk.Config()).analyze_many([texts_all[k] for k in order], ids=[ids_all[k] for k in order],
                                                 gold=[gold_all[k] for k in order], progress=False)
    pr = [d.pred for d in rule]
    print(f"rule-based agents, the same {n} sentences: accuracy {_ci(y_all, pr, accuracy, args.seed)}, "
          f"macro F1 {_ci(y_all, pr, macro_f1, args.seed)}; on the LLM's {len(decided)} decided ones: "
          f"accuracy {accuracy([d.gold for d in decided], [r.pred for r, d in zip(rule, ds) if not d.failed]):.2f}")
    from mabpd_kit.metrics import paired_bootstrap

    print(f"  paired, rule-based vs the model (failures wrong): "
          f"{paired_bootstrap(y_all, pr, p_all, metric=accuracy, n_resamples=10_000, seed=args.seed)}")
    lat = sorted(d.latency_s for d in ds)
    calls = sum(d.usage.calls for d in ds)
    print(f"wall time per sentence: mean {sum(lat) / n:.0f} s, median {lat[n // 2]:.0f} s, min {lat[0]:.0f} s, "
          f"max {lat[-1]:.0f} s ({sum(lat) / 60:.0f} min in all); {calls} calls ({calls / n:.1f} per sentence)")
    # a decided item's usage counts its repaired structured calls (each one extra call); a failed item's usage
    # keeps its calls but not that count, and its last structured call failed after the repair turn
    rep = sum(d.usage.repaired_calls for d in decided)
    dec_calls = sum(d.usage.calls for d in decided)
    after = sum("after 2 call(s) including the repair retry" in (d.error or "") for d in failed)
    print(f"repair turn, decided items: {rep} of {dec_calls - rep} structured calls needed it ({rep / max(dec_calls - rep, 1):.0%}), "
          f"each then valid; failed items: {after} of {len(failed)} failed after the repair turn (their other repairs "
          f"are not counted in a failed item's usage)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-class", type=int, default=12)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--server", default="llama-server", choices=("llama-server", "llama-cpp-python"))
    ap.add_argument("--work", default=str(DEFAULT_WORK), help="checkpoint, sample ids and answer cache")
    ap.add_argument("--report", action="store_true", help="print the figures from the checkpoint (no model)")
    args = ap.parse_args()
    if "MABPD_DATA_DIR" not in os.environ:
        print("bench_real_babe: set MABPD_DATA_DIR (BABE train); skipped", file=sys.stderr)
        return
    (report if args.report else run)(args)


if __name__ == "__main__":
    main()
