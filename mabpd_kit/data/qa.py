"""Question sets for the identity-bias debates: MMLU professional medicine and GSM8K.

``load_mmlu(split)``: id, question, A, B, C, D, answer (A-D); ``load_gsm8k(split)``: id, question,
answer (number as a string), solution."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING

from mabpd_kit.data.download import _on_disk, locate

if TYPE_CHECKING:  # pandas loads inside the loaders
    import pandas as pd

__all__ = ["MMLU", "load_gsm8k", "load_mmlu"]

MMLU = "MMLU-professional_medicine"


def load_mmlu(split: str = "test", data_dir: str | os.PathLike | None = None, download: bool = True,
              download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """MMLU professional medicine, 4 options (test 272 rows: answers A 50 / B 55 / C 45 / D 122,
    so "always D" already scores 44.9%; validation 31; dev 5)."""
    import pandas as pd
    if split not in ("test", "validation", "dev"):
        raise ValueError(f"MMLU split must be test, validation or dev, not {split!r}")
    path = _on_disk(MMLU, "professional_medicine_test.csv", data_dir, download_dir) if split == "test" else None
    if path is not None:
        df = pd.read_csv(path, header=None, names=["question", "A", "B", "C", "D", "answer"], dtype=str)
    else:
        path = locate(MMLU, f"professional_medicine/{split}-00000-of-00001.parquet", data_dir,
                      download=download, download_dir=download_dir)
        raw = pd.read_parquet(path)  # Hugging Face cais/mmlu: question, subject, choices (4), answer (0-3)
        choices = pd.DataFrame([list(c) for c in raw["choices"]], columns=["A", "B", "C", "D"])
        df = pd.concat([raw[["question"]].reset_index(drop=True), choices], axis=1)
        df["answer"] = [("A", "B", "C", "D")[int(a)] for a in raw["answer"]]
    df["answer"] = df["answer"].str.strip().str.upper()
    if not df["answer"].isin(["A", "B", "C", "D"]).all():
        raise ValueError(f"{path.name}: answers outside A-D")
    df.insert(0, "id", [f"mmlu-pm-{split}-{i:03d}" for i in range(len(df))])
    df.attrs.update(source=[str(path)], dataset=f"MMLU-professional_medicine/{split}")
    return df


_GSM_FINAL = re.compile(r"####\s*(.+?)\s*$", re.DOTALL)


def load_gsm8k(split: str = "test", data_dir: str | os.PathLike | None = None, download: bool = True,
               download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """GSM8K maths word problems (test 1,319, train 7,473). ``answer`` is the gold number after
    ``####`` with thousands separators removed (a string, e.g. ``"18"``); ``solution`` the worked text."""
    import pandas as pd
    if split not in ("test", "train"):
        raise ValueError(f"GSM8K split must be test or train, not {split!r}")
    path = locate("GSM8K", f"{split}.jsonl", data_dir, download=download, download_dir=download_dir)
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        rec = json.loads(line)
        m = _GSM_FINAL.search(rec["answer"])
        if m is None:
            raise ValueError(f"{path.name} line {i + 1}: no '#### <answer>' marker")
        rows.append({"id": f"gsm8k-{split}-{len(rows):04d}", "question": rec["question"],
                     "answer": m.group(1).replace(",", "").strip(), "solution": rec["answer"]})
    df = pd.DataFrame(rows)
    df.attrs.update(source=[str(path)], dataset=f"GSM8K/{split}")
    return df

