"""``mabpd evaluate --dataset babe --split train --configs full,no-debate,single-agent``: run MABPD configurations
on a benchmark and compare them (:mod:`mabpd_kit.evaluate`; definitions: docs/evaluation.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mabpd_kit.config import Config

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default="babe", help="babe or hyperpartisan (default babe)")
    parser.add_argument("--split", default="train", help="train (dev use) or test (held out: report once, tune never)")
    parser.add_argument("--configs", default="full,no-debate,single-agent",
                        help=f"comma-separated ablation names, the first is the baseline ({', '.join(Config.ABLATIONS)})")
    parser.add_argument("--limit", type=int, default=None, help="seeded random sample of N items")
    parser.add_argument("--endpoint", default=None,
                        help="LLM preset name (openai, ollama, vllm, ...) or an OpenAI-compatible base URL; default: rule-based agents")
    parser.add_argument("--model", default=None, help="model name for --endpoint")
    parser.add_argument("--config", default=None, help="a saved configuration (TOML or JSON) as the base of every ablation")
    parser.add_argument("--out", default=None, help="output folder (default reports/evaluate/<dataset>-<split>)")
    parser.add_argument("--data-dir", default=None, help="benchmark folder (default MABPD_DATA_DIR, else download)")
    parser.add_argument("--truncate-words", "--truncate", dest="truncate", type=int, default=None, metavar="N",
                        help="cut every text to N words, 0 = no cut (default: the paper's 600, config "
                             "text.article_words, for hyperpartisan; config text.truncate_words otherwise)")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default config.metrics, 10,000)")
    parser.add_argument("--no-anchors", action="store_true", help="do not score the file's reference LLM labels")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--batch", metavar="STATE", default=None,
                        help="send the calls through the Batch API (half price, within 24 h), one stage per pass; "
                             "STATE is a JSON file: run the same command again to resume after a crash")


def run(args: argparse.Namespace) -> int:
    from mabpd_kit.evaluate import canonical, evaluate
    base = Config.load(args.config) if args.config else Config()
    llm = None
    if args.endpoint:
        from mabpd_kit.llm import connect
        url = "://" in args.endpoint  # a base URL, else a preset name
        llm = connect(None if url else args.endpoint, base_url=args.endpoint if url else None, model=args.model,
                      config=base)
    else:
        print("mabpd evaluate: rule-based agents (offline); pass --endpoint to evaluate an LLM", file=sys.stderr)
    name = canonical(args.dataset)
    out = Path(args.out) if args.out else Path("reports") / "evaluate" / f"{name}-{args.split}"
    ev = evaluate(name, args.split, args.configs.split(","), limit=args.limit, llm=llm, config=base,
                  data_dir=args.data_dir, out_dir=out, truncate=args.truncate, anchors=not args.no_anchors,
                  n_resamples=args.resamples, progress=not args.quiet, batch=args.batch)
    print(ev.closing_note())
    _leaning_audit(ev, name, args, out)
    if name == "babe" and args.split == "train":  # the leave-one-outlet-out check of the corrected share
        from mabpd_kit.evaluate.validity import validity_section
        print(validity_section(ev.predictions, ev.baseline))
    print(f"wrote {', '.join(Path(p).name for p in ev.files.values())} to {out}")
    if ev.all_failed:  # nothing was measured for these: not a result to report
        print(f"mabpd evaluate: every item failed under {', '.join(ev.all_failed)}; "
              "see the error column of results.csv", file=sys.stderr)
        return 1
    return 0


def _leaning_audit(ev: object, name: str, args: argparse.Namespace, out: Path) -> None:
    """Error rates by outlet leaning, the baseline beside the ten LLMs' labels (``leaning_audit.csv``)."""
    from mabpd_kit.evaluate.audit import leaning_audit, leaning_gaps
    pred = ev.predictions  # type: ignore[attr-defined]
    if name != "babe" or "type" not in pred:
        return
    df = pred[pred["system"] == ev.baseline][["id", "gold", "pred", "type"]]  # type: ignore[attr-defined]
    if not args.no_anchors and args.split == "train":
        from mabpd_kit.data import load_babe
        llm = load_babe("train", data_dir=args.data_dir, download=False)
        cols = [c for c in llm.columns if c.endswith("_label")]
        df = df.merge(llm[["id", *cols]].astype({"id": str}), on="id", how="left")
    audit = leaning_audit(df, gold="gold")
    gaps = leaning_gaps(audit).set_index("system")
    pct = f"{100 * audit.attrs['confidence']:.0f}%"
    print(f"\nthe bias of the bias detector: error rates by outlet leaning ({pct} Wilson intervals; '{ev.baseline}' is "  # type: ignore[attr-defined]
          "'kit', the others are the LLM labels shipped with BABE train)")
    print(f"  {'system':<13} " + "  ".join(f"{g + ' FPR':<17}  {g + ' FNR':<17}" for g in audit["group"].unique())
          + "  FPR right-left")
    for s, t in audit.groupby("system", sort=False):
        cells = "  ".join(f"{r.fpr:.3f} [{r.fpr_lo:.2f},{r.fpr_hi:.2f}]  {r.fnr:.3f} [{r.fnr_lo:.2f},{r.fnr_hi:.2f}]"
                          for r in t.itertuples())
        g = gaps.loc[s] if s in gaps.index else None
        gap = "" if g is None else f"  {g.fpr_diff:+.3f} [{g.fpr_diff_lo:+.2f},{g.fpr_diff_hi:+.2f}]"
        print(f"  {s:<13} {cells}{gap}")
    audit.to_csv(out / "leaning_audit.csv", index=False)
