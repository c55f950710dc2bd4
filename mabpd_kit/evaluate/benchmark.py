"""MABPD on a benchmark: load BABE / HyperPartisan items, run pipeline configurations, compare them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mabpd_kit.config import Config
from mabpd_kit.evaluate.report import Evaluation
from mabpd_kit.evaluate.scores import _bootstrap_settings, compare

if TYPE_CHECKING:
    import pandas as pd

    from mabpd_kit.evaluate.analyses import PaperAnalyses
    from mabpd_kit.llm import LLM

__all__ = ["BENCHMARKS", "canonical", "evaluate", "load_benchmark", "trace_figures"]

#: benchmark name -> display name (binary benchmarks the pipeline can be evaluated on)
BENCHMARKS = {"babe": "BABE", "hyperpartisan": "HyperPartisan (by article)"}
_ALIASES = {"babe": "babe", "hyperpartisan": "hyperpartisan", "hp": "hyperpartisan", "semeval": "hyperpartisan",
            "semeval2019": "hyperpartisan"}


def canonical(dataset: str) -> str:
    """The benchmark key (``babe`` / ``hyperpartisan``) for a name or alias (``hp``, ``semeval``, ...)."""
    key = dataset.strip().lower().replace("_", "-")
    if key not in _ALIASES:
        raise KeyError(f"unknown benchmark {dataset!r}; choose from {', '.join(BENCHMARKS)}")
    return _ALIASES[key]


def load_benchmark(dataset: str = "babe", split: str = "train", *, data_dir: str | Path | None = None,
                   limit: int | None = None, seed: int | None = None) -> pd.DataFrame:
    """The items of a binary benchmark: ``id, text, label`` plus metadata. ``limit=N``: a seeded sample of N items
    in file order."""
    from mabpd_kit import data
    load = data.load_babe if canonical(dataset) == "babe" else data.load_hyperpartisan
    df = load(split, data_dir=data_dir)
    if limit is not None and limit < len(df):
        if limit < 1:
            raise ValueError("limit must be at least 1")
        seed = Config().metrics.seed if seed is None else seed
        attrs = dict(df.attrs)
        df = df.sample(n=limit, random_state=seed).sort_index()
        df.attrs.update(attrs)
    return df.reset_index(drop=True)


def evaluate(dataset: str = "babe", split: str = "train",
             configs: Sequence[str] = ("full", "no-debate", "single-agent"), *, frame: pd.DataFrame | None = None,
             limit: int | None = None, llm: LLM | None = None, config: Config | None = None,
             data_dir: str | Path | None = None, out_dir: str | Path | None = None, truncate: int | None = None,
             anchors: bool = True, n_resamples: int | None = None, seed: int | None = None, progress: bool = True,
             batch: str | Path | None = None) -> Evaluation:
    """Run each named MABPD configuration on the benchmark (or ``frame``: ``id``, ``text``, ``label``) and score it
    with :func:`compare`. ``out_dir=None`` writes nothing; ``truncate``: words per text (0 = no cut; default
    ``config.text.article_words`` for HyperPartisan, else ``config.text.truncate_words``); ``batch``: a state
    file for the Batch API (:func:`mabpd_kit.llm.batch.run_batched`)."""
    from mabpd_kit.llm import online
    from mabpd_kit.mabpd import Pipeline
    from mabpd_kit.runs import fingerprint
    base = config or Config()
    n_resamples, seed = _bootstrap_settings(n_resamples, seed, base)
    base, truncate = _truncated(base, dataset, frame, truncate)
    configs = [c.strip() for c in configs if c.strip()]
    if not configs:
        raise ValueError("give at least one configuration name")
    cfgs = {name: base.ablation(name) for name in configs}  # unknown names fail here, before any work
    items, ds_name = _items(dataset, split, frame, data_dir, limit, seed)
    gold = items["label"].astype(int).tolist()
    live = online(llm)
    mode = "rule-based agents (offline)" if live is None else f"LLM {live.model} at {live.endpoint}"
    model = "rule" if live is None else f"{live.endpoint}|{live.model}"  # what else changes a decision
    if progress:
        from mabpd_kit.runs.results import status
        status(f"mabpd evaluate: {ds_name} {split}, {len(items)} items, {mode}")

    t0 = time.perf_counter()
    results, run_s = {}, {}

    def one_pass() -> dict:
        for name, cfg in cfgs.items():  # one checkpoint per configuration and model: never a stale one
            ckpt = (None if out_dir is None
                    else Path(out_dir) / "checkpoints" / f"{name}-{fingerprint(cfg, model)[:10]}.jsonl")
            t1 = time.perf_counter()
            results[name] = Pipeline(cfg, llm).analyze_many(items["text"].tolist(), ids=items["id"].tolist(),
                                                            gold=gold, checkpoint=ckpt, progress=progress)
            run_s[name] = time.perf_counter() - t1
        return results

    if batch is not None:
        if live is None:
            raise ValueError("batch mode needs an LLM endpoint (--endpoint)")
        from mabpd_kit.llm.batch import run_batched
        run_batched(one_pass, live, state=batch, quiet=not progress)  # every configuration's calls in one batch per pass
    else:
        one_pass()
    ev = compare(results, items=items, dataset=ds_name, split=split, mode=mode, kind="pipeline", anchors=anchors,
                 n_resamples=n_resamples, seed=seed, run_s=run_s)
    ev.truncate_words = truncate
    ev.n_truncated = {name: sum("truncated" in d.flags for d in r.decisions) for name, r in results.items()}
    ev.metrics["n_truncated"] = ev.metrics["system"].map(ev.n_truncated)  # NaN for reference anchors
    decisions = {name: r.decisions for name, r in results.items()}  # the traces, read once
    ev.spans, ev.analyses = trace_figures(decisions, items, n_resamples=n_resamples, seed=seed)
    ev.wall_s = time.perf_counter() - t0
    if out_dir is not None:
        ev.write(out_dir)
    return ev


def _truncated(base: Config, dataset: str, frame: pd.DataFrame | None, truncate: int | None) -> tuple[Config, int | None]:
    """The words per text to keep (HyperPartisan: the paper's cut, ``text.article_words``; else
    ``text.truncate_words``; 0 = no cut), set on the config: the pipeline cuts, so every cut decision is flagged."""
    if truncate is None:
        hp = frame is None and canonical(dataset) == "hyperpartisan"
        truncate = base.text.article_words if hp else base.text.truncate_words
    if truncate is not None and truncate < 0:
        raise ValueError(f"truncate must be a number of words >= 0 (0 = no cut), not {truncate}")
    truncate = truncate or None
    return base.replace(**{"text.truncate_words": truncate}), truncate


def _items(dataset: str, split: str, frame: pd.DataFrame | None, data_dir: str | Path | None, limit: int | None,
           seed: int) -> tuple[pd.DataFrame, str]:
    """The benchmark's rows (or ``frame``'s: ``id``, ``text``, ``label``) and the dataset's name."""
    if frame is None:
        return load_benchmark(dataset, split, data_dir=data_dir, limit=limit, seed=seed), BENCHMARKS[canonical(dataset)]
    missing = {"id", "text", "label"} - set(frame.columns)
    if missing:
        raise ValueError(f"frame lacks columns {sorted(missing)}")
    return frame.reset_index(drop=True), dataset


def trace_figures(decisions: dict[str, Sequence[Any]], items: pd.DataFrame, *, n_resamples: int | None = None,
                  seed: int | None = None) -> tuple[pd.DataFrame | None, PaperAnalyses]:
    """The figures read from the traces: span scores against ``biased_words`` (None without that column) per agent
    of the first configuration and per configuration (:func:`.spans.span_table`), and the paper's analyses of
    the first configuration (:func:`.analyses.paper_analyses`; an ``annotations`` column adds r and kappa)."""
    from mabpd_kit.evaluate.analyses import paper_analyses
    from mabpd_kit.evaluate.spans import span_table
    ids = items["id"].astype(str).tolist()
    ordered = {}
    for name, ds in decisions.items():  # in the items' order, whatever the runner returned
        by_id = {str(d.id): d for d in ds}
        ordered[name] = [by_id[i] for i in ids]
    spans = None
    if "biased_words" in items.columns:
        spans = span_table(ordered, items["biased_words"].tolist(), items["label"].tolist(),
                           n_resamples=n_resamples, seed=seed)
    annotations = items["annotations"].tolist() if "annotations" in items.columns else None
    return spans, paper_analyses(ordered, annotations=annotations, n_resamples=n_resamples, seed=seed)
