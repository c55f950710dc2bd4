"""What ships inside the package (the teaching samples) and what is present locally (benchmarks, :func:`have`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DATASET_ALIASES", "LessonData", "describe", "dev_sample", "hard_samples", "have", "interval_text", "lesson_data",
           "load_samples", "metric_text", "samples", "samples_path"]

# short names a notebook uses -> the dataset folder of the manifest (and of ../shared/data)
DATASET_ALIASES: dict[str, str] = {
    "babe": "BABE", "hyperpartisan": "SemEval2019-Task4-Hyperpartisan",
    "semeval2019-task4-hyperpartisan": "SemEval2019-Task4-Hyperpartisan", "politifact": "PolitiFact-Hidden",
    "politifact-hidden": "PolitiFact-Hidden", "radar": "RADAR", "liar": "LIAR", "liar-plus": "LIAR-PLUS",
    "liar_plus": "LIAR-PLUS", "mmlu": "MMLU-professional_medicine",
    "mmlu-professional_medicine": "MMLU-professional_medicine", "gsm8k": "GSM8K"}


def samples_path() -> Path:
    """The shipped ``samples.jsonl`` (inside the installed package; also ``data/samples/`` in a checkout)."""
    return Path(str(resources.files("mabpd_kit") / "resources" / "samples" / "samples.jsonl"))


def load_samples(path: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """The sample items as dicts: id, text, label (1 biased / 0 neutral), taxonomy, rationale."""
    p = Path(path) if path else samples_path()
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def hard_samples() -> pd.DataFrame:
    """12 hard sentences shipped beside the samples (written by the authors, labelled before the pipeline ran):
    literal uses of loaded-looking words and biased sentences with no loaded word, so a score on the teaching
    data does not flatter the method. Same columns as :func:`samples`."""
    import pandas as pd
    df = pd.DataFrame(load_samples(samples_path().with_name("hard.jsonl")))
    df.attrs["source"] = f"mabpd-kit hard sentences ({len(df)} written for the course, several beyond the rules)"
    return df


def samples() -> pd.DataFrame:
    """The 28 teaching sentences shipped with the package: ``id``, ``text``, ``label``, ``taxonomy``, ``rationale``.
    A stand-in when no benchmark is present, never a measure of quality."""
    import pandas as pd
    df = pd.DataFrame(load_samples())
    df.attrs["source"] = "mabpd-kit teaching samples (28 sentences written for the course)"
    return df


def _dataset(name: str) -> str:
    from mabpd_kit.data.download import manifest
    return name if name in {d for d, _ in manifest()} else DATASET_ALIASES.get(name.strip().lower(), name)


def have(name: str, split: str | None = None, data_dir: str | os.PathLike | None = None) -> bool:
    """Is benchmark ``name`` (a manifest name or an alias: "babe", "radar", ...) on this machine, in your copy or
    the download folder, for ``split`` if given? Never downloads or reads the data."""
    from mabpd_kit.data.download import data_dir as _data_dir
    from mabpd_kit.data.download import download_dir, manifest
    dataset = _dataset(name)
    files = [rel for d, rel in manifest() if d == dataset]
    if split is not None:
        files = [rel for rel in files if split in Path(rel).name]
    roots = [r for r in (_data_dir(data_dir), download_dir()) if r is not None]
    return any((root / dataset / rel).is_file() for root in roots for rel in files)


def describe(data_dir: str | os.PathLike | None = None) -> str:
    """One line for a notebook's setup cell: which data this run will use, and why."""
    from mabpd_kit.data.download import data_dir as _data_dir
    from mabpd_kit.data.download import manifest
    present = sorted({d for d, _ in manifest() if have(d, data_dir=data_dir)})
    if present:
        where = _data_dir(data_dir)
        origin = "MABPD_DATA_DIR" if where is not None and data_dir is None else (str(where) if where else "download folder")
        return f"data: benchmark copies found ({origin}): {', '.join(present)}"
    n_hard = len(load_samples(samples_path().with_name("hard.jsonl")))
    return ("data: no benchmark copy on this machine (MABPD_DATA_DIR not set): the lessons use the "
            f"{len(load_samples())} teaching sentences shipped with mabpd-kit (mk.data.samples()), and where they score, "
            f"those plus {n_hard} hard ones (mk.data.lesson_data()): too few to conclude anything from a score")


def dev_sample(n: int | None = None, seed: int = 0, data_dir: str | os.PathLike | None = None,
               quiet: bool = False) -> pd.DataFrame:
    """A development sample: ``n`` balanced, seeded BABE train sentences (None: all) when present, else the 28
    teaching samples plus the 12 :func:`hard_samples`. ``df.attrs["source"]`` names it (printed unless ``quiet``)."""
    import pandas as pd

    from mabpd_kit.data.babe import load_babe
    why, df = "no BABE copy on this machine (MABPD_DATA_DIR)", None
    if have("BABE", "train", data_dir=data_dir):
        try:
            babe = load_babe("train", data_dir=data_dir, download=False, llm_labels=False)
        except (FileNotFoundError, ValueError) as exc:  # DataMissingError is a FileNotFoundError
            why = f"BABE train could not be read ({exc})"
        else:
            if n is not None and n < len(babe):
                halves = [g.sample(min(n // 2, len(g)), random_state=seed) for _, g in babe.groupby("label")]
                babe = pd.concat(halves).sample(frac=1, random_state=seed)
            df = babe.reset_index(drop=True)[["id", "text", "label"]].copy()
            df.attrs["source"] = (f"BABE train: {len(df)} sentences" + (", a balanced seeded sample" if n else "")
                                  + " (a development set: never the test split)")
            df.attrs["name"] = f"BABE train ({len(df):,} sentences" + (", seeded sample)" if n else ")")
    if df is None:
        easy, hard = samples()[["id", "text", "label"]], hard_samples()[["id", "text", "label"]]
        df = pd.concat([easy, hard], ignore_index=True)
        df.attrs["source"] = (f"{why}: the {len(easy)} teaching sentences shipped with mabpd-kit plus {len(hard)} hard "
                              "ones the rule-based agents partly get wrong (ids h01...; not a benchmark)")
        df.attrs["name"] = (f"the {len(easy)} teaching sentences shipped with the kit plus {len(hard)} hard ones "
                            f"({len(df)} sentences)")
    if not quiet:
        print(df.attrs["source"])
    return df


@dataclass(frozen=True)
class LessonData:
    """The data a lesson runs on with its ``name``, ``n`` and ``benchmark``, so a lesson cannot misname it;
    :meth:`score` states a metric on it with its interval."""

    frame: pd.DataFrame
    name: str
    n: int
    benchmark: bool

    def score(self, pred: Any, metric: str = "macro_f1", n_resamples: int | None = None) -> str:
        """``metric`` of ``pred`` against this data's labels, as :func:`metric_text` states it."""
        return metric_text(self.frame["label"], pred, metric=metric, n_resamples=n_resamples)

    def __str__(self) -> str:
        return self.name


def lesson_data(n: int | None = None, seed: int = 0, data_dir: str | os.PathLike | None = None) -> LessonData:
    """What a lesson scores on: :func:`dev_sample` with its name; prints nothing."""
    df = dev_sample(n, seed=seed, data_dir=data_dir, quiet=True)
    return LessonData(df, df.attrs["name"], len(df), df.attrs["name"].startswith("BABE"))


_METRIC_NAMES = {"macro_f1": "macro F1", "f1": "F1 (biased)", "accuracy": "accuracy", "precision": "precision",
                 "recall": "recall"}


def interval_text(estimate: float, lo: float, hi: float, n: int, label: str = "macro F1") -> str:
    """One metric as a lesson may print it: with its interval and n, marked as too few to conclude under
    ``Config().metrics.min_items`` items."""
    from mabpd_kit.config import Config
    text = f"{label} {estimate:.3f} [{lo:.3f}, {hi:.3f}] (n = {n:,}"
    return text + (": too few items to conclude anything)" if n < Config().metrics.min_items else ")")


def metric_text(y_true: Any, y_pred: Any, metric: str = "macro_f1", n_resamples: int | None = None,
                seed: int | None = None) -> str:
    """``metric`` ("macro_f1", "f1", "accuracy", "precision", "recall") with its 95% bootstrap interval, the only way
    the lessons print a score; an unknown name is a one-line ``ValueError``."""
    from mabpd_kit import metrics
    if metric not in _METRIC_NAMES:
        raise ValueError(f"metric must be one of {sorted(_METRIC_NAMES)}, not {metric!r}")
    est, lo, hi = metrics.metric_ci(y_true, y_pred, metric=getattr(metrics, metric), n_resamples=n_resamples, seed=seed)
    return interval_text(est, lo, hi, len(y_pred), _METRIC_NAMES[metric])
