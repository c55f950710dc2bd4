"""Scoring any method's results: one system's measures, flips between two systems, and :func:`compare`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit import metrics as metrics_
from mabpd_kit.config import Config
from mabpd_kit.evaluate.report import ANCHOR_KIND, FLIPS, Evaluation

if TYPE_CHECKING:
    import pandas as pd

    from mabpd_kit.runs import Results

__all__ = ["compare", "flip_counts", "predictions", "score_system", "threshold_sweep"]

_USAGE = ("calls", "prompt_tokens", "completion_tokens", "latency_s")
_ITEM_COLUMNS = ("outlet", "type", "topic", "title", "text")  # metadata copied into the predictions


def _is_binary(*label_arrays: Sequence[Any]) -> bool:
    values = set().union(*(set(np.asarray(a, dtype=object).tolist()) for a in label_arrays))
    return values <= {0, 1}


def score_system(gold: Sequence[Any], pred: Sequence[Any], *, n_resamples: int | None = None,
                 seed: int | None = None) -> dict[str, float]:
    """Accuracy, precision, recall, F1, macro F1 and its bootstrap CI for one system; labels other than 0/1 get
    ``n``, accuracy and macro F1 only."""
    if _is_binary(gold, pred):
        row: dict[str, float] = dict(metrics_.classification_report(gold, pred))
    else:
        row = {"n": len(gold), "accuracy": metrics_.accuracy(gold, pred), "precision": np.nan, "recall": np.nan,
               "f1": np.nan, "macro_f1": metrics_.macro_f1(gold, pred)}
    _, lo, hi = metrics_.metric_ci(gold, pred, metrics_.macro_f1, n_resamples=n_resamples, seed=seed)
    row.update(macro_f1_lo=lo, macro_f1_hi=hi)
    return row


def threshold_sweep(gold: Sequence[Any], score: Sequence[float], thresholds: Sequence[float] | None = None) -> pd.DataFrame:
    """Metrics of ``biased iff score >= t`` for each threshold (default 0.20-0.80 step 0.01): pick ``t`` on one half."""
    import pandas as pd
    ts = np.round(np.arange(0.20, 0.8001, 0.01), 2) if thresholds is None else np.asarray(thresholds, dtype=float)
    s = np.asarray(score, dtype=float)
    rows = [{"threshold": float(t), **metrics_.classification_report(gold, (s >= t).astype(int))} for t in ts]
    return pd.DataFrame(rows)


def flip_counts(gold: Sequence[Any], baseline: Sequence[int], system: Sequence[int]) -> dict[str, int]:
    """Where two systems disagree, who was right, from the baseline's side: ``fn_rescued``, ``fp_added``, ``tp_lost``,
    ``fp_removed``."""
    g, b, s = (np.asarray(v, dtype=int) for v in (gold, baseline, system))
    only_b, only_s = (b == 1) & (s == 0), (b == 0) & (s == 1)
    return {"fn_rescued": int((only_b & (g == 1)).sum()), "fp_added": int((only_b & (g == 0)).sum()),
            "tp_lost": int((only_s & (g == 1)).sum()), "fp_removed": int((only_s & (g == 0)).sum())}


def predictions(results: Results | pd.DataFrame, system: str, *, items: pd.DataFrame | None = None,
                failed_as: Any = 0) -> pd.DataFrame:
    """One system's rows for :attr:`Evaluation.predictions` from any ``runs.Results`` or its frame, in the order
    of ``items`` (gold their ``label``, their metadata added); a failed item's prediction is ``failed_as``."""
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
    failed = (frame["failed"].fillna(False).astype(bool).to_numpy() if "failed" in frame.columns
              else np.zeros(len(frame), bool))
    if isinstance(failed_as, (int, np.integer)) and not isinstance(failed_as, bool):
        gold = gold.astype(int)
        values = pd.to_numeric(frame["pred"], errors="coerce").fillna(failed_as).astype(int).to_numpy()
    else:
        values = frame["pred"].astype(object).where(frame["pred"].notna(), failed_as).to_numpy()
    pred = np.where(failed, failed_as, values)
    cols: dict[str, Any] = {"system": system, "id": frame["id"].to_numpy(), "gold": gold, "pred": pred}
    cols.update({c: frame[c].to_numpy() for c in ("score", "route") if c in frame.columns})
    cols["failed"] = failed
    cols.update({c: usage[c].to_numpy() for c in _USAGE})
    if items is not None:
        cols.update({c: items[c].to_numpy() for c in _ITEM_COLUMNS if c in items.columns})
    return pd.DataFrame(cols)


def _usage_columns(frame: pd.DataFrame, records: Sequence[Any] | None) -> pd.DataFrame:
    """Per-item usage: the frame's flat columns, else each record's ``usage``, else 0."""
    import pandas as pd
    usable = records is not None and len(records) == len(frame) and all(hasattr(r, "usage") for r in records)
    usage = [r.usage for r in records] if usable else None
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


def compare(systems: Mapping[str, Results | pd.DataFrame], *, items: pd.DataFrame | None = None, dataset: str = "",
            split: str = "", mode: str = "", kind: str = "system", anchors: bool = True, failed_as: Any = 0,
            n_resamples: int | None = None, seed: int | None = None, run_s: Mapping[str, float] | None = None,
            wall_s: float | None = None) -> Evaluation:
    """Score each system and compare every one with the first (paired bootstraps) on the same items. ``items`` fixes
    order and gold and supplies the reference columns in ``items.attrs["llm_label_columns"]`` (scored on >= 10 labels)."""
    import pandas as pd
    t0 = time.perf_counter()
    if not systems:
        raise ValueError("give at least one system")
    names = list(systems)
    n_resamples, seed = _bootstrap_settings(n_resamples, seed)
    if run_s is None:  # a Results knows its own run time
        run_s = {n: float(getattr(r, "wall_s", 0.0) or 0.0) for n, r in systems.items()}
    run_s = dict(run_s)
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
                     "calls": int(f["calls"].sum()),
                     "tokens": int(f["prompt_tokens"].sum() + f["completion_tokens"].sum()),
                     "seconds": run_s.get(n, 0.0)})
    if anchors and items is not None:
        rows += _anchor_rows(items, gold, n_resamples=n_resamples, seed=seed)
    binary = _is_binary(gold, *(f["pred"] for f in frames.values()))
    comps = []
    for n in names[1:]:
        a, b = frames[names[0]]["pred"].to_numpy(), frames[n]["pred"].to_numpy()
        flips = flip_counts(gold, a, b) if binary else dict.fromkeys(FLIPS, np.nan)
        for metric in (metrics_.macro_f1, metrics_.f1) if binary else (metrics_.macro_f1,):
            r = metrics_.paired_bootstrap(gold, a, b, metric=metric, n_resamples=n_resamples, seed=seed)
            comps.append({"baseline": names[0], "system": n, "metric": r.metric, "baseline_score": r.score_a,
                          "system_score": r.score_b, "diff": r.diff, "lo": r.lo, "hi": r.hi, "p_value": r.p_value,
                          "n_resamples": r.n_resamples, "n_items": r.n_items, **flips})
    comparisons = pd.DataFrame(comps, columns=["baseline", "system", "metric", "baseline_score", "system_score",
                                               "diff", "lo", "hi", "p_value", "n_resamples", "n_items", *FLIPS])
    return Evaluation(dataset=dataset, split=split, configs=names, mode=mode, n_items=len(base),
                      predictions=pd.concat(list(frames.values()), ignore_index=True), metrics=pd.DataFrame(rows),
                      comparisons=comparisons, wall_s=time.perf_counter() - t0 if wall_s is None else wall_s,
                      n_resamples=n_resamples, seed=seed, run_s=run_s)


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

