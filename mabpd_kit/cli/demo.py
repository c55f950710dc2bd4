"""``mabpd demo``: the MABPD pipeline offline on the shipped samples; a table and ``reports/demo.html``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mabpd_kit.config import Config

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--samples", help="JSONL with id, text, label (default: the shipped samples)")
    parser.add_argument("--out", default="reports/demo.html", help="HTML report to write")
    parser.add_argument("--ablation", default="full", help=f"one of {', '.join(Config.ABLATIONS)}")


def run(args: argparse.Namespace) -> int:
    from mabpd_kit.demo import agreement_text, build_report, load_samples
    from mabpd_kit.mabpd import Pipeline
    samples = load_samples(args.samples)
    cfg = Config().ablation(args.ablation)
    print(f"mabpd demo: offline, rule-based agents ({args.ablation}); {len(samples)} sample items")
    result = Pipeline(cfg).analyze_many([s["text"] for s in samples], ids=[s["id"] for s in samples],
                                        gold=[s.get("label") for s in samples], progress=False)
    df = result.to_frame()
    show = df[["id", "gold", "label", "score", "route"]].copy()
    show["text"] = df.text.str.slice(0, 60)
    print(show.to_string(index=False))
    print(f"{agreement_text(df)}; {int(df.failed.sum())} failed; routes: {df.route.value_counts().to_dict()}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(result, samples, args.ablation), encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0
