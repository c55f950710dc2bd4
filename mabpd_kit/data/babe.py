"""BABE (Bias Annotations By Experts): news sentences labelled biased / neutral by experts.

``load_babe(split)`` columns: id, text, label (1 biased / 0 neutral), outlet, topic, type
(left/center/right/None), biased_words (list), label_opinion, news_link, and ten
``<model>_label`` columns (0/1/NA) when the annomatic file is available."""

from __future__ import annotations

import ast
import hashlib
import os
from typing import TYPE_CHECKING, Any

from mabpd_kit.data.download import _on_disk, locate

if TYPE_CHECKING:  # pandas loads inside the loader
    import pandas as pd

__all__ = ["BABE", "LLM_LABEL_MODELS", "load_babe"]

BABE = "BABE"
LLM_LABEL_MODELS = ("falcon_7b", "flan_ul2", "gpt_3_5", "gpt_4", "llama_7b", "llama_13b", "mistral_7b",
                    "mixtral_8x7b", "openchat", "zephyr")


def _parse_list(value: Any) -> list[str]:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if not isinstance(value, str) or not value.strip():
        return []
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return [value]
    return [str(v) for v in parsed] if isinstance(parsed, (list, tuple)) else [str(parsed)]


def _stable_id(prefix: str, text: str) -> str:
    return f"{prefix}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:12]}"



def load_babe(split: str = "train", data_dir: str | os.PathLike | None = None, llm_labels: bool = True,
              download: bool = True, download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """BABE sentences with expert labels (1 = biased, 0 = neutral): ``"train"`` (3,121 rows) or ``"test"`` (1,000,
    held out: evaluate on it once at the end, never tune on it). ``llm_labels``: the ten LLMs' zero-shot labels
    from the annomatic file when available: anchors, never training signal."""
    import pandas as pd
    if split not in ("train", "test"):
        raise ValueError(f"BABE split must be 'train' or 'test', not {split!r}")
    csv = "derived/babe_hf_train3121_reconstructed.csv"
    path = _on_disk(BABE, csv, data_dir, download_dir) if split == "train" else None
    if path is None:
        path = locate(BABE, f"data/{split}-00000-of-00001.parquet", data_dir,
                      download=download, download_dir=download_dir)
    raw = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, dtype={"uuid": "string"})
    if "label" not in raw.columns and "label_bias" in raw.columns:  # some BABE releases name it label_bias
        raw = raw.assign(label=raw["label_bias"].map(lambda v: 1 if str(v).lower().startswith("biased") else 0))
    df = pd.DataFrame({
        "id": [u if isinstance(u, str) and u else _stable_id("babe", t) for u, t in zip(raw.get("uuid", [None] * len(raw)), raw["text"])],
        "text": raw["text"].astype(str),
        "label": raw["label"].astype(int),
    })
    for col in ("outlet", "topic", "type", "label_opinion", "news_link"):
        df[col] = raw[col].where(raw[col].notna(), None) if col in raw.columns else None
    df["biased_words"] = [_parse_list(v) for v in raw["biased_words"]] if "biased_words" in raw.columns else [[] for _ in range(len(raw))]
    sources = [str(path)]
    if llm_labels and split == "train":
        anno_path = _on_disk(BABE, "annomatic_hf_split/babe_train_dev_annomatic.csv", data_dir, download_dir)
        if anno_path is not None:
            anno = pd.read_csv(anno_path, dtype=str)
            label_cols = [c for c in anno.columns if c.endswith("_label")]
            keyed = anno.drop_duplicates("uuid").set_index("uuid")[label_cols]
            for c in label_cols:
                vals = pd.to_numeric(keyed[c].str.strip(), errors="coerce")  # '?' / empty -> NaN
                vals = vals.where(vals.isin([0, 1]))
                df[c] = df["id"].map(vals).astype("Int64")
            df.attrs["llm_label_columns"] = label_cols
            sources.append(str(anno_path))
    df.attrs["source"] = sources
    df.attrs["dataset"] = f"BABE/{split}"
    return df

