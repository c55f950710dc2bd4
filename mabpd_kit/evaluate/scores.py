"""Evaluation: score systems on the same items and compare them honestly.

Two layers:

- :func:`compare` is generic: it takes each system's results (any :class:`mabpd_kit.runs.Results`,
  or a frame, with ``id``, ``gold``, ``pred`` and ``failed`` columns from ``to_frame()``) and scores
  them: accuracy, precision, recall, binary F1 (positive class 1 = biased), macro F1 with a
  bootstrap confidence interval, and a paired bootstrap of every system against the *first* one
  on the same items (difference, CI and two-sided p; 10,000 resamples by default,
  ``Config().metrics``). Three-way labels (RADAR's TRUE / HALF-TRUE / FALSE) get accuracy and
  macro F1. Where the items carry other systems' predictions (the BABE training file has ten
  LLMs' zero-shot ``*_label`` columns), those are scored on the same items as reference anchors.
- :func:`evaluate` is the MABPD wiring behind ``mabpd evaluate --dataset babe --split train
  --configs full,no-debate,single-agent``: for each configuration name (``Config.ablation(name)``)
  it runs :meth:`mabpd_kit.mabpd.Pipeline.analyze_many` on every item, streaming decisions to a
  JSONL checkpoint per configuration (rerun and finished items are reused: resumable, and with an
  LLM the response cache makes repeats free), then hands the results to :func:`compare`.

Outputs (``--out``, default ``reports/evaluate/<dataset>-<split>``): ``results.csv`` (one row
per item and system), ``metrics.csv``, ``comparisons.csv``, ``report.md`` (tables and
closing note), ``chart.svg`` / ``chart.png`` and ``checkpoints/*.jsonl``.

Scoring rule for failed items: a decision that failed (bad input, endpoint error) is counted
as *neutral* (``failed_as=0``) and reported in the ``n_failed`` column, so a flaky run cannot look
better by dropping its hard items.

Zero-shot discipline: nothing here fits a weight or threshold. :func:`threshold_sweep` exists
for the notebook's *threshold adaptation* exercise, which calibrates on one half of the BABE
training split and reports on the other half; never on a test split.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit import metrics as metrics_
from mabpd_kit.config import Config

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from mabpd_kit.llm import LLM
    from mabpd_kit.runs import Results

__all__ = [
    "ANCHOR_KIND",
    "BENCHMARKS",
    "Evaluation",
    "compare",
    "evaluate",
    "flip_counts",
    "load_benchmark",
    "predictions",
    "score_system",
    "threshold_sweep",
]

#: benchmark name -> display name (binary benchmarks the pipeline can be evaluated on)
BENCHMARKS = {"babe": "BABE", "hyperpartisan": "HyperPartisan (by article)"}
_ALIASES = {"babe": "babe", "hyperpartisan": "hyperpartisan", "hp": "hyperpartisan", "semeval": "hyperpartisan",
            "semeval2019": "hyperpartisan"}
#: the ``kind`` of a reference anchor row in :attr:`Evaluation.metrics` (every other row is an evaluated system)
ANCHOR_KIND = "reference LLM (zero-shot labels)"
_FLIPS = ("fn_rescued", "fp_added", "tp_lost", "fp_removed")
_USAGE = ("calls", "prompt_tokens", "completion_tokens", "latency_s")


def canonical(dataset: str) -> str:
    """The benchmark key (``babe`` / ``hyperpartisan``) for a name or alias (``hp``, ``semeval``, ...)."""
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
    from mabpd_kit import data

    name = canonical(dataset)
    if name == "babe":
        df = data.load_babe(split, data_dir=data_dir)
    else:
        df = data.load_hyperpartisan(split, data_dir=data_dir, truncate=truncate)
    if limit is not None and limit < len(df):
        if limit < 1:
            raise ValueError("limit must be at least 1")
        seed = Config().metrics.seed if seed is None else seed
        attrs = dict(df.attrs)
        df = df.sample(n=limit, random_state=seed).sort_index()
        df.attrs.update(attrs)
    return df.reset_index(drop=True)


def _is_binary(*label_arrays: Sequence[Any]) -> bool:
    values = set().union(*(set(np.asarray(a, dtype=object).tolist()) for a in label_arrays))
    return values <= {0, 1}


def score_system(gold: Sequence[Any], pred: Sequence[Any], *, n_resamples: int | None = None, seed: int | None = None) -> dict[str, float]:
    """Accuracy, precision, recall, F1, macro F1 and a bootstrap CI of macro F1 for one system.

    Binary labels (0/1, 1 = biased) get every measure; other labels (three-way verdicts) get
    ``n``, accuracy and macro F1, and NaN for the measures of a positive class.
    """
    if _is_binary(gold, pred):
        row: dict[str, float] = dict(metrics_.classification_report(gold, pred))
    else:
        row = {"n": len(gold), "accuracy": metrics_.accuracy(gold, pred), "precision": np.nan, "recall": np.nan,
               "f1": np.nan, "macro_f1": metrics_.macro_f1(gold, pred)}
    _, lo, hi = metrics_.metric_ci(gold, pred, metrics_.macro_f1, n_resamples=n_resamples, seed=seed)
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
    rows = [{"threshold": float(t), **metrics_.classification_report(gold, (s >= t).astype(int))} for t in ts]
    return pd.DataFrame(rows)


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
    metrics: pd.DataFrame  # one row per system (evaluated systems first, then anchors)
    comparisons: pd.DataFrame  # paired bootstrap of each system against the first
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
        for r in self.metrics[self.metrics["kind"] != ANCHOR_KIND].itertuples(index=False):
            lines.append(
                f"  {r.system:<24} macro F1 {r.macro_f1:.3f} [{r.macro_f1_lo:.3f}, {r.macro_f1_hi:.3f}]  "
                f"F1 {r.f1:.3f}  P {r.precision:.3f}  R {r.recall:.3f}  failed {r.n_failed}  ({self.run_s.get(r.system, 0):.1f} s)"
            )
        cmp = self.comparisons[self.comparisons["metric"] == "macro_f1"]
        for r in cmp.itertuples(index=False):
            line = (f"  {r.baseline} - {r.system}: macro F1 diff {r.diff:+.3f} [{r.lo:+.3f}, {r.hi:+.3f}], "
                    f"p = {r.p_value:.4f} (paired bootstrap, {r.n_resamples} resamples)")
            if not _missing(r.fn_rescued):  # flips exist for binary labels only
                line += (f"; versus {r.system}, {r.baseline} rescues {r.fn_rescued} false negatives and adds "
                         f"{r.fp_added} false positives (loses {r.tp_lost} true positives, removes {r.fp_removed} false positives)")
            lines.append(line)
        anchors = self.metrics[self.metrics["kind"] == ANCHOR_KIND]
        if len(anchors):
            best = anchors.sort_values("macro_f1", ascending=False).iloc[0]
            lines.append(f"  reference anchors: {len(anchors)} LLM label columns, best {best['system']} macro F1 {best['macro_f1']:.3f} (n={best['n']})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.closing_note()

    def markdown(self) -> str:
        """The report: metrics table, paired comparisons, anchors and how to read them."""
        cols = ["system", "n", "n_failed", "accuracy", "precision", "recall", "f1", "macro_f1", "macro_f1_lo", "macro_f1_hi"]
        pipe = self.metrics[self.metrics["kind"] != ANCHOR_KIND][cols]
        anchors = self.metrics[self.metrics["kind"] == ANCHOR_KIND][cols]
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




def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and np.isnan(v))


# --------------------------------------------------------------------------------------------
# generic: any method's results
# --------------------------------------------------------------------------------------------
def predictions(
    results: Results | pd.DataFrame,
    system: str,
    *,
    items: pd.DataFrame | None = None,
    failed_as: Any = 0,
) -> pd.DataFrame:
    """One system's rows for :attr:`Evaluation.predictions`: ``system, id, gold, pred, [score, route,]
    failed, calls, prompt_tokens, completion_tokens, latency_s, [metadata,] [text]``.

    ``results`` is any :class:`mabpd_kit.runs.Results` (its ``to_frame()`` has ``id``, ``pred``,
    ``failed`` and usually ``gold``; usage comes from each record's ``usage``) or such a frame.
    With ``items`` (columns ``id``, ``label`` and metadata) the rows follow the items' order, gold
    is the items' ``label`` and their ``outlet``/``type``/``topic``/``title`` and ``text`` are added.
    A failed item's prediction is ``failed_as`` (default 0, neutral).
    """
    import pandas as pd

    frame = results if isinstance(results, pd.DataFrame) else results.to_frame()
    records = None if isinstance(results, pd.DataFrame) else getattr(results, "records", None)
    missing = {"id", "pred"} - set(frame.columns)
    if missing:
        raise ValueError(f"the results of {system!r} lack columns {sorted(missing)}")
    frame = frame.assign(id=frame["id"].astype(str)).reset_index(drop=True)
    usage = _usage_columns(frame, records)
    if items is not None:
        ids = items["id"].astype(str)
        pos = pd.Series(range(len(frame)), index=frame["id"])
        absent = ids[~ids.isin(pos.index)]
        if len(absent):
            raise ValueError(f"the results of {system!r} lack {len(absent)} items, e.g. {absent.iloc[0]!r}")
        order = pos.loc[ids].to_numpy()
        frame, usage = frame.iloc[order].reset_index(drop=True), usage.iloc[order].reset_index(drop=True)
        gold = items["label"].to_numpy()
    else:
        if "gold" not in frame.columns:
            raise ValueError(f"the results of {system!r} have no gold column; pass items with a label column")
        gold = frame["gold"].to_numpy()
    failed = frame["failed"].fillna(False).astype(bool).to_numpy() if "failed" in frame.columns else np.zeros(len(frame), bool)
    if isinstance(failed_as, (int, np.integer)) and not isinstance(failed_as, bool):
        gold = gold.astype(int)
        pred = np.where(failed, failed_as, pd.to_numeric(frame["pred"], errors="coerce").fillna(failed_as).astype(int).to_numpy())
    else:
        pred = np.where(failed, failed_as, frame["pred"].astype(object).where(frame["pred"].notna(), failed_as).to_numpy())
    cols: dict[str, Any] = {"system": system, "id": frame["id"].to_numpy(), "gold": gold, "pred": pred}
    cols.update({c: frame[c].to_numpy() for c in ("score", "route") if c in frame.columns})
    cols["failed"] = failed
    cols.update({c: usage[c].to_numpy() for c in _USAGE})
    if items is not None:
        cols.update({c: items[c].to_numpy() for c in ("outlet", "type", "topic", "title") if c in items.columns})
        if "text" in items.columns:
            cols["text"] = items["text"].to_numpy()
    return pd.DataFrame(cols)


def _usage_columns(frame: pd.DataFrame, records: Sequence[Any] | None) -> pd.DataFrame:
    """Per-item usage: the frame's flat columns where it has them (``latency_s`` may also be
    ``call_latency_s``, as in :meth:`mabpd_kit.types.Usage.row`), else each record's ``usage``
    (:class:`mabpd_kit.types.Usage`), else 0."""
    import pandas as pd

    usage = None
    if records is not None and len(records) == len(frame) and all(hasattr(r, "usage") for r in records):
        usage = [r.usage for r in records]
    out: dict[str, Any] = {}
    for c in _USAGE:
        col = next((k for k in (c, "call_" + c if c == "latency_s" else c) if k in frame.columns), None)
        if col is not None:
            out[c] = frame[col].to_numpy()
        elif usage is not None:
            out[c] = [getattr(u, c) for u in usage]
        else:
            out[c] = np.zeros(len(frame), dtype=float if c == "latency_s" else int)
    return pd.DataFrame(out)


def compare(
    systems: Mapping[str, Results | pd.DataFrame],
    *,
    items: pd.DataFrame | None = None,
    dataset: str = "",
    split: str = "",
    mode: str = "",
    kind: str = "system",
    anchors: bool = True,
    failed_as: Any = 0,
    n_resamples: int | None = None,
    seed: int | None = None,
    run_s: Mapping[str, float] | None = None,
    wall_s: float | None = None,
) -> Evaluation:
    """Score each system and compare every one with the first, on the same items.

    ``systems`` maps a name to any method's results (a :class:`mabpd_kit.runs.Results` or its
    frame; see :func:`predictions`); the first is the baseline of the paired bootstraps. ``items``
    (the benchmark frame) fixes the item order and gold labels and supplies the reference anchor
    columns listed in ``items.attrs["llm_label_columns"]`` (scored where at least 10 items carry a
    label). ``kind`` labels the systems' rows in :attr:`Evaluation.metrics`.
    """
    import pandas as pd

    t0 = time.perf_counter()
    if not systems:
        raise ValueError("give at least one system")
    names = list(systems)
    n_resamples, seed = _bootstrap_settings(n_resamples, seed)
    run_s = dict(run_s) if run_s is not None else {n: float(getattr(r, "wall_s", 0.0) or 0.0) for n, r in systems.items()}
    frames = {n: predictions(r, n, items=items, failed_as=failed_as) for n, r in systems.items()}
    base = frames[names[0]]
    for n, f in frames.items():
        if not (len(f) == len(base) and (f["id"].to_numpy() == base["id"].to_numpy()).all()):
            raise ValueError(f"{n!r} and {names[0]!r} were not run on the same items in the same order (pass items=)")
    gold = base["gold"].to_numpy()
    rows = []
    for n, f in frames.items():
        rows.append({"system": n, "kind": kind, "n": len(f), "n_failed": int(f["failed"].sum()),
                     **score_system(gold, f["pred"].to_numpy(), n_resamples=n_resamples, seed=seed),
                     "calls": int(f["calls"].sum()), "tokens": int(f["prompt_tokens"].sum() + f["completion_tokens"].sum()),
                     "seconds": run_s.get(n, 0.0)})
    if anchors and items is not None:
        rows += _anchor_rows(items, gold, n_resamples=n_resamples, seed=seed)
    binary = _is_binary(gold, *(f["pred"] for f in frames.values()))
    comps = []
    for n in names[1:]:
        a, b = frames[names[0]]["pred"].to_numpy(), frames[n]["pred"].to_numpy()
        flips = flip_counts(gold, a, b) if binary else dict.fromkeys(_FLIPS, np.nan)
        for metric in (metrics_.macro_f1, metrics_.f1) if binary else (metrics_.macro_f1,):
            r = metrics_.paired_bootstrap(gold, a, b, metric=metric, n_resamples=n_resamples, seed=seed)
            comps.append({"baseline": names[0], "system": n, "metric": r.metric, "baseline_score": r.score_a,
                          "system_score": r.score_b, "diff": r.diff, "lo": r.lo, "hi": r.hi, "p_value": r.p_value,
                          "n_resamples": r.n_resamples, "n_items": r.n_items, **flips})
    comparisons = pd.DataFrame(comps, columns=["baseline", "system", "metric", "baseline_score", "system_score",
                                               "diff", "lo", "hi", "p_value", "n_resamples", "n_items", *_FLIPS])
    return Evaluation(
        dataset=dataset, split=split, configs=names, mode=mode, n_items=len(base),
        predictions=pd.concat(list(frames.values()), ignore_index=True), metrics=pd.DataFrame(rows),
        comparisons=comparisons, wall_s=time.perf_counter() - t0 if wall_s is None else wall_s,
        n_resamples=n_resamples, seed=seed, run_s=run_s,
    )


def _bootstrap_settings(n_resamples: int | None, seed: int | None, config: Config | None = None) -> tuple[int, int]:
    m = (config or Config()).metrics
    return (m.bootstrap_resamples if n_resamples is None else n_resamples), (m.seed if seed is None else seed)


def _anchor_rows(items: pd.DataFrame, gold: np.ndarray, *, n_resamples: int, seed: int) -> list[dict[str, Any]]:
    """Score the reference label columns that ship with the benchmark, on the items that carry one."""
    rows = []
    for col in items.attrs.get("llm_label_columns", []):
        if col not in items.columns:
            continue
        mask = items[col].notna().to_numpy()
        if mask.sum() < 10:
            continue
        apred = items.loc[mask, col].astype(int).to_numpy()
        rows.append({"system": col.removesuffix("_label"), "kind": ANCHOR_KIND, "n": int(mask.sum()),
                     "n_failed": 0, **score_system(gold[mask], apred, n_resamples=n_resamples, seed=seed),
                     "calls": 0, "tokens": 0, "seconds": 0.0})
    return rows


# --------------------------------------------------------------------------------------------
# MABPD: run pipeline configurations on a benchmark
# --------------------------------------------------------------------------------------------
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
    """Run each named MABPD configuration on the benchmark and score it with :func:`compare`.

    ``frame`` evaluates your own items instead (columns ``id``, ``text``, ``label``; e.g. one half
    of BABE train). ``out_dir=None`` keeps checkpoints and files out of the disk entirely.
    """
    from mabpd_kit.llm import online
    from mabpd_kit.mabpd import Pipeline
    from mabpd_kit.runs import fingerprint

    base = config or Config()
    n_resamples, seed = _bootstrap_settings(n_resamples, seed, base)
    configs = [c.strip() for c in configs if c.strip()]
    if not configs:
        raise ValueError("give at least one configuration name")
    cfgs = {name: base.ablation(name) for name in configs}  # unknown names fail here, before any work
    if frame is None:
        truncate = base.text.truncate_words if truncate is None else truncate  # config default: None (no cut)
        items = load_benchmark(dataset, split, data_dir=data_dir, limit=limit, seed=seed, truncate=truncate)
        ds_name = BENCHMARKS[canonical(dataset)]
    else:
        missing = {"id", "text", "label"} - set(frame.columns)
        if missing:
            raise ValueError(f"frame lacks columns {sorted(missing)}")
        items = frame.reset_index(drop=True)
        ds_name = dataset
    gold = items["label"].astype(int).tolist()
    live = online(llm)
    mode = "rule-based agents (offline)" if live is None else f"LLM {live.model} at {live.endpoint}"
    model = "rule" if live is None else f"{live.endpoint}|{live.model}"  # what else changes a decision
    if progress:
        print(f"mabpd evaluate: {ds_name} {split}, {len(items)} items, {mode}", file=sys.stderr)

    t0 = time.perf_counter()
    results, run_s = {}, {}
    for name, cfg in cfgs.items():
        ckpt = None if out_dir is None else Path(out_dir) / "checkpoints" / f"{name}-{fingerprint(cfg, model)[:10]}.jsonl"
        t1 = time.perf_counter()
        results[name] = Pipeline(cfg, llm).analyze_many(items["text"].tolist(), ids=items["id"].tolist(), gold=gold,
                                                        checkpoint=ckpt, progress=progress)
        run_s[name] = time.perf_counter() - t1
    ev = compare(results, items=items, dataset=ds_name, split=split, mode=mode, kind="pipeline", anchors=anchors,
                 n_resamples=n_resamples, seed=seed, run_s=run_s)
    ev.wall_s = time.perf_counter() - t0
    if out_dir is not None:
        ev.write(out_dir)
    return ev
