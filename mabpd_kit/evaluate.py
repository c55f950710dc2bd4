"""Evaluation harness: run pipeline configurations on a benchmark and compare them honestly.

``mabpd evaluate --dataset babe --split train --configs full,no-debate,single-agent`` (or
:func:`evaluate` from Python) does, for each configuration name (``Config.ablation(name)``):

1. run :meth:`Pipeline.analyze_many` on every item, streaming decisions to a JSONL checkpoint per
   configuration (rerun the command and finished items are reused: resumable, and with an LLM
   the response cache makes repeats free);
2. score it: accuracy, precision, recall, binary F1 (biased = positive), macro F1 with a
   bootstrap confidence interval;
3. compare it with the *first* configuration by a paired bootstrap on the same items
   (difference, CI and two-sided p; 10,000 resamples by default, ``Config().metrics``).

Where the benchmark file carries other systems' predictions (the BABE training file has ten
LLMs' zero-shot ``*_label`` columns), they are scored on the same items as reference anchors.

Outputs (``--out``, default ``reports/evaluate/<dataset>-<split>``): ``results.csv`` (one row
per item and configuration), ``metrics.csv``, ``comparisons.csv``, ``report.md`` (tables and
closing note), ``chart.svg`` / ``chart.png`` and ``checkpoints/*.jsonl``.

Scoring rule for failed items: a decision that failed (bad input, endpoint error) is counted
as *neutral* and reported in the ``n_failed`` column, so a flaky run cannot look better by
dropping its hard items.

Zero-shot discipline: nothing here fits a weight or threshold. :func:`threshold_sweep` exists
for the notebook's *threshold adaptation* exercise, which calibrates on one half of the BABE
training split and reports on the other half; never on a test split.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit import metrics as M
from mabpd_kit.config import Config

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from mabpd_kit.llm import LLM

__all__ = [
    "BENCHMARKS",
    "Evaluation",
    "add_arguments",
    "evaluate",
    "flip_counts",
    "load_benchmark",
    "run",
    "score_system",
    "threshold_sweep",
]

#: benchmark name -> display name (binary benchmarks the pipeline can be evaluated on)
BENCHMARKS = {"babe": "BABE", "hyperpartisan": "HyperPartisan (by article)"}
_ALIASES = {"babe": "babe", "hyperpartisan": "hyperpartisan", "hp": "hyperpartisan", "semeval": "hyperpartisan",
            "semeval2019": "hyperpartisan"}


def _canonical(dataset: str) -> str:
    key = dataset.strip().lower().replace("_", "-")
    if key not in _ALIASES:
        raise KeyError(f"unknown benchmark {dataset!r}; choose from {', '.join(BENCHMARKS)}")
    return _ALIASES[key]


def load_benchmark(
    dataset: str = "babe",
    split: str = "train",
    *,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    seed: int | None = None,
    truncate: int | None = None,
) -> pd.DataFrame:
    """The items of a binary benchmark: ``id, text, label`` plus its metadata columns.

    ``limit=N`` takes a seeded random sample of N items (kept in file order), so a quick run
    still sees every outlet and topic rather than the first N rows of one source.
    ``truncate`` (HyperPartisan) cuts articles to N words (the paper: 600).
    """
    from mabpd_kit import datasets as ds

    name = _canonical(dataset)
    if name == "babe":
        df = ds.load_babe(split, data_dir=data_dir)
    else:
        df = ds.load_hyperpartisan(split, data_dir=data_dir, truncate=truncate)
    if limit is not None and limit < len(df):
        if limit < 1:
            raise ValueError("limit must be at least 1")
        seed = Config().metrics.seed if seed is None else seed
        attrs = dict(df.attrs)
        df = df.sample(n=limit, random_state=seed).sort_index()
        df.attrs.update(attrs)
    return df.reset_index(drop=True)


def score_system(gold: Sequence[Any], pred: Sequence[Any], *, n_resamples: int | None = None, seed: int | None = None) -> dict[str, float]:
    """Accuracy, precision, recall, F1, macro F1 and a bootstrap CI of macro F1 for one system."""
    row: dict[str, float] = dict(M.classification_report(gold, pred))
    _, lo, hi = M.metric_ci(gold, pred, M.macro_f1, n_resamples=n_resamples, seed=seed)
    row.update(macro_f1_lo=lo, macro_f1_hi=hi)
    return row


def threshold_sweep(gold: Sequence[Any], score: Sequence[float], thresholds: Sequence[float] | None = None) -> pd.DataFrame:
    """Metrics of the rule ``biased iff score >= t`` for each threshold ``t`` (default 0.20-0.80 step 0.01).

    For the threshold-adaptation exercise: pick ``t`` on a calibration half, then report on the
    other half with that fixed ``t``.
    """
    import pandas as pd

    ts = np.round(np.arange(0.20, 0.8001, 0.01), 2) if thresholds is None else np.asarray(thresholds, dtype=float)
    s = np.asarray(score, dtype=float)
    rows = [{"threshold": float(t), **M.classification_report(gold, (s >= t).astype(int))} for t in ts]
    return pd.DataFrame(rows)


_FLIPS = ("fn_rescued", "fp_added", "tp_lost", "fp_removed")


def flip_counts(gold: Sequence[Any], baseline: Sequence[int], system: Sequence[int]) -> dict[str, int]:
    """Where two systems disagree, who was right? Counts from the baseline's point of view.

    ``fn_rescued``: biased items the system missed and the baseline caught; ``fp_added``: neutral
    items the baseline flags and the system does not; ``tp_lost`` and ``fp_removed`` the reverse.
    (The paper: debate rescues 716 false negatives and adds 152 false positives versus one agent.)
    """
    g, b, s = (np.asarray(v, dtype=int) for v in (gold, baseline, system))
    return {
        "fn_rescued": int(((g == 1) & (b == 1) & (s == 0)).sum()),
        "fp_added": int(((g == 0) & (b == 1) & (s == 0)).sum()),
        "tp_lost": int(((g == 1) & (b == 0) & (s == 1)).sum()),
        "fp_removed": int(((g == 0) & (b == 0) & (s == 1)).sum()),
    }


def _fingerprint(cfg: Config, llm: LLM | None) -> str:
    """Short hash of everything that changes a decision: the configuration and the model."""
    who = "rule" if llm is None or llm.offline else f"{llm.endpoint}|{llm.model}"
    return hashlib.sha1((cfg.model_dump_json() + who).encode()).hexdigest()[:10]


def _md_table(df: pd.DataFrame, floats: str = "{:.3f}") -> str:
    """A GitHub markdown table (no extra dependency)."""
    def fmt(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else floats.format(v)
        return str(v)

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body])


@dataclass
class Evaluation:
    """Everything one evaluation produced; ``str(ev)`` is the closing note."""

    dataset: str
    split: str
    configs: list[str]
    mode: str
    n_items: int
    predictions: pd.DataFrame  # one row per (system, item)
    metrics: pd.DataFrame  # one row per system (pipeline configs first, then anchors)
    comparisons: pd.DataFrame  # paired bootstrap of each config against the first
    wall_s: float
    n_resamples: int
    seed: int
    files: dict[str, str] = field(default_factory=dict)
    run_s: dict[str, float] = field(default_factory=dict)

    @property
    def baseline(self) -> str:
        return self.configs[0]

    def chart(self) -> alt.TopLevelMixin:
        """Grouped bars of macro F1 / F1 / precision / recall per system, macro F1 with its CI."""
        from mabpd_kit.viz.evaluation import metrics_chart

        return metrics_chart(self.metrics, title=f"{self.dataset} {self.split}: {self.n_items} items, {self.mode}")

    def closing_note(self) -> str:
        lines = [f"{self.dataset} {self.split}, {self.n_items} items, {self.mode}; {self.wall_s:.1f} s in all"]
        for r in self.metrics[self.metrics["kind"] == "pipeline"].itertuples(index=False):
            lines.append(
                f"  {r.system:<24} macro F1 {r.macro_f1:.3f} [{r.macro_f1_lo:.3f}, {r.macro_f1_hi:.3f}]  "
                f"F1 {r.f1:.3f}  P {r.precision:.3f}  R {r.recall:.3f}  failed {r.n_failed}  ({self.run_s.get(r.system, 0):.1f} s)"
            )
        cmp = self.comparisons[self.comparisons["metric"] == "macro_f1"]
        for r in cmp.itertuples(index=False):
            lines.append(
                f"  {r.baseline} - {r.system}: macro F1 diff {r.diff:+.3f} [{r.lo:+.3f}, {r.hi:+.3f}], "
                f"p = {r.p_value:.4f} (paired bootstrap, {r.n_resamples} resamples); versus {r.system}, "
                f"{r.baseline} rescues {r.fn_rescued} false negatives and adds {r.fp_added} false positives "
                f"(loses {r.tp_lost} true positives, removes {r.fp_removed} false positives)"
            )
        anchors = self.metrics[self.metrics["kind"] != "pipeline"]
        if len(anchors):
            best = anchors.sort_values("macro_f1", ascending=False).iloc[0]
            lines.append(f"  reference anchors: {len(anchors)} LLM label columns, best {best['system']} macro F1 {best['macro_f1']:.3f} (n={best['n']})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.closing_note()

    def markdown(self) -> str:
        """The report: metrics table, paired comparisons, anchors and how to read them."""
        cols = ["system", "n", "n_failed", "accuracy", "precision", "recall", "f1", "macro_f1", "macro_f1_lo", "macro_f1_hi"]
        pipe = self.metrics[self.metrics["kind"] == "pipeline"][cols]
        anchors = self.metrics[self.metrics["kind"] != "pipeline"][cols]
        cmp = self.comparisons[["baseline", "system", "metric", "diff", "lo", "hi", "p_value", *_FLIPS]]
        when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        parts = [
            f"# Evaluation: {self.dataset} {self.split}",
            "",
            f"{self.n_items} items · {self.mode} · configurations {', '.join(self.configs)} · {self.wall_s:.1f} s · {when}",
            "",
            "## Metrics (positive class: biased; failed items count as neutral)",
            "",
            _md_table(pipe),
            "",
            f"macro_f1_lo / _hi: {100 * 0.95:.0f}% bootstrap interval over items ({self.n_resamples} resamples, seed {self.seed}).",
            "",
            f"## Paired bootstrap against `{self.baseline}`",
            "",
            ("diff = baseline minus system on the same resampled items; p is two-sided for \"no difference\". "
            "fn_rescued / fp_added: items where only the baseline says biased (rightly / wrongly); "
            "tp_lost / fp_removed: items where only the system says biased (rightly / wrongly)."),
            "",
            _md_table(cmp, floats="{:.4f}") if len(cmp) else "(only one configuration)",
            "",
        ]
        if len(anchors):
            parts += [
                "## Reference anchors: zero-shot LLM labels shipped with the benchmark file",
                "",
                "Scored on the evaluated items that carry a label (`n`); unparseable answers are left out.",
                "",
                _md_table(anchors),
                "",
            ]
        if self.split == "test":
            parts += [("**Held-out test split.** Report these numbers once; choosing a configuration, threshold "
                      "or prompt because of them turns the test split into a training split."), ""]
        parts += ["## Closing note", "", "```", self.closing_note(), "```", ""]
        return "\n".join(parts)

    def write(self, out_dir: str | Path) -> dict[str, str]:
        """Write results.csv, metrics.csv, comparisons.csv, report.md, chart.svg and chart.png."""
        import vl_convert as vlc

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = {
            "results": out / "results.csv",
            "metrics": out / "metrics.csv",
            "comparisons": out / "comparisons.csv",
            "report": out / "report.md",
            "chart_svg": out / "chart.svg",
            "chart_png": out / "chart.png",
        }
        self.predictions.to_csv(files["results"], index=False)
        self.metrics.to_csv(files["metrics"], index=False)
        self.comparisons.to_csv(files["comparisons"], index=False)
        spec = self.chart().to_dict()
        files["chart_svg"].write_text(vlc.vegalite_to_svg(spec), encoding="utf-8")
        files["chart_png"].write_bytes(vlc.vegalite_to_png(spec, scale=2))
        self.files = {k: str(v) for k, v in files.items()}
        files["report"].write_text(self.markdown(), encoding="utf-8")
        return self.files


def evaluate(
    dataset: str = "babe",
    split: str = "train",
    configs: Sequence[str] = ("full", "no-debate", "single-agent"),
    *,
    frame: pd.DataFrame | None = None,
    limit: int | None = None,
    llm: LLM | None = None,
    config: Config | None = None,
    data_dir: str | Path | None = None,
    out_dir: str | Path | None = None,
    truncate: int | None = None,
    anchors: bool = True,
    n_resamples: int | None = None,
    seed: int | None = None,
    progress: bool = True,
) -> Evaluation:
    """Run each named configuration on the benchmark and score it (see the module docstring).

    ``frame`` evaluates your own items instead (columns ``id``, ``text``, ``label``; e.g. one half
    of BABE train). ``out_dir=None`` keeps checkpoints and files out of the disk entirely.
    """
    import pandas as pd

    from mabpd_kit.pipeline import Pipeline

    base = config or Config()
    n_resamples = base.metrics.bootstrap_resamples if n_resamples is None else n_resamples
    seed = base.metrics.seed if seed is None else seed
    configs = [c.strip() for c in configs if c.strip()]
    if not configs:
        raise ValueError("give at least one configuration name")
    cfgs = {name: base.ablation(name) for name in configs}  # unknown names fail here, before any work
    if frame is None:
        truncate = base.text.truncate_words if truncate is None else truncate  # config default: None (no cut)
        items = load_benchmark(dataset, split, data_dir=data_dir, limit=limit, seed=seed, truncate=truncate)
        ds_name = BENCHMARKS[_canonical(dataset)]
    else:
        missing = {"id", "text", "label"} - set(frame.columns)
        if missing:
            raise ValueError(f"frame lacks columns {sorted(missing)}")
        items = frame.reset_index(drop=True)
        ds_name = dataset
    gold = items["label"].astype(int).to_numpy()
    mode = "rule-based agents (offline)" if llm is None or llm.offline else f"LLM {llm.model} at {llm.endpoint}"
    if progress:
        print(f"mabpd evaluate: {ds_name} {split}, {len(items)} items, {mode}", file=sys.stderr)

    t0 = time.perf_counter()
    meta_cols = [c for c in ("outlet", "type", "topic", "title") if c in items.columns]
    frames, rows, run_s = [], [], {}
    preds: dict[str, np.ndarray] = {}
    for name, cfg in cfgs.items():
        ckpt = None
        if out_dir is not None:
            ckpt = Path(out_dir) / "checkpoints" / f"{name}-{_fingerprint(cfg, llm)}.jsonl"
        t1 = time.perf_counter()
        res = Pipeline(cfg, llm).analyze_many(items["text"].tolist(), ids=items["id"].tolist(), gold=gold.tolist(),
                                              checkpoint=ckpt, progress=progress)
        run_s[name] = time.perf_counter() - t1
        f = res.to_frame()
        failed = f["failed"].fillna(False).astype(bool).to_numpy()
        pred = np.where(failed, 0, pd.to_numeric(f["pred"], errors="coerce").fillna(0).astype(int).to_numpy())
        preds[name] = pred
        frames.append(pd.DataFrame({
            "system": name, "id": items["id"], "gold": gold, "pred": pred, "score": f["score"].to_numpy(),
            "route": f["route"].to_numpy(), "failed": failed, "calls": f["calls"].to_numpy(),
            "prompt_tokens": f["prompt_tokens"].to_numpy(), "completion_tokens": f["completion_tokens"].to_numpy(),
            "latency_s": f["latency_s"].to_numpy(), **{c: items[c].to_numpy() for c in meta_cols},
            "text": items["text"],
        }))
        rows.append({"system": name, "kind": "pipeline", "n": len(items), "n_failed": int(failed.sum()),
                     **score_system(gold, pred, n_resamples=n_resamples, seed=seed),
                     "calls": int(f["calls"].sum()), "tokens": int(f["prompt_tokens"].sum() + f["completion_tokens"].sum()),
                     "seconds": run_s[name]})

    if anchors:
        for col in items.attrs.get("llm_label_columns", []):
            if col not in items.columns:
                continue
            mask = items[col].notna().to_numpy()
            if mask.sum() < 10:
                continue
            apred = items.loc[mask, col].astype(int).to_numpy()
            rows.append({"system": col.removesuffix("_label"), "kind": "reference LLM (zero-shot labels)", "n": int(mask.sum()),
                         "n_failed": 0, **score_system(gold[mask], apred, n_resamples=n_resamples, seed=seed),
                         "calls": 0, "tokens": 0, "seconds": 0.0})

    comps = []
    base_name = configs[0]
    for name in configs[1:]:
        flips = flip_counts(gold, preds[base_name], preds[name])
        for metric in (M.macro_f1, M.f1):
            r = M.paired_bootstrap(gold, preds[base_name], preds[name], metric=metric, n_resamples=n_resamples, seed=seed)
            comps.append({"baseline": base_name, "system": name, "metric": r.metric, "baseline_score": r.score_a,
                          "system_score": r.score_b, "diff": r.diff, "lo": r.lo, "hi": r.hi, "p_value": r.p_value,
                          "n_resamples": r.n_resamples, "n_items": r.n_items, **flips})
    comparisons = pd.DataFrame(comps, columns=["baseline", "system", "metric", "baseline_score", "system_score",
                                               "diff", "lo", "hi", "p_value", "n_resamples", "n_items", *_FLIPS])
    ev = Evaluation(
        dataset=ds_name, split=split, configs=configs, mode=mode, n_items=len(items),
        predictions=pd.concat(frames, ignore_index=True), metrics=pd.DataFrame(rows), comparisons=comparisons,
        wall_s=time.perf_counter() - t0, n_resamples=n_resamples, seed=seed, run_s=run_s,
    )
    if out_dir is not None:
        ev.write(out_dir)
    return ev


# --------------------------------------------------------------------------------------------
# `mabpd evaluate`
# --------------------------------------------------------------------------------------------
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
    parser.add_argument("--truncate", type=int, default=None,
                        help="HyperPartisan: cut articles to N words (paper: 600; default config text.truncate_words)")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default config.metrics, 10,000)")
    parser.add_argument("--no-anchors", action="store_true", help="do not score the file's reference LLM labels")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    base = Config.load(args.config) if args.config else Config()
    llm = None
    if args.endpoint:
        from mabpd_kit.llm import connect

        if "://" in args.endpoint:
            llm = connect(base_url=args.endpoint, model=args.model, config=base)
        else:
            llm = connect(args.endpoint, model=args.model, config=base)
    else:
        print("mabpd evaluate: rule-based agents (offline); pass --endpoint to evaluate an LLM", file=sys.stderr)
    name = _canonical(args.dataset)
    out = Path(args.out) if args.out else Path("reports") / "evaluate" / f"{name}-{args.split}"
    ev = evaluate(name, args.split, args.configs.split(","), limit=args.limit, llm=llm, config=base,
                  data_dir=args.data_dir, out_dir=out, truncate=args.truncate, anchors=not args.no_anchors,
                  n_resamples=args.resamples, progress=not args.quiet)
    print(ev.closing_note())
    print(f"wrote {', '.join(Path(p).name for p in ev.files.values())} to {out}")
    return 0
