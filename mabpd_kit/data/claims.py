"""Half-truth claims: ``load_politifact_hidden()`` (id, claim, label: TRUE / HALF-TRUE / FALSE),
``load_radar_claims(kind)`` (id, claim, label, evidence: a list of sentences), ``load_liar(split)`` (id, label
(6-way), label3, statement, subjects, speaker, ..., context), ``load_liar_plus(split)`` (LIAR's columns plus
justification and evidence)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from mabpd_kit.data.download import locate

if TYPE_CHECKING:  # pandas loads inside the loaders
    import pandas as pd

__all__ = ["LABELS3", "LIAR_TO_3", "load_liar", "load_liar_plus", "load_politifact_hidden", "load_radar_claims"]

LABELS3 = ("TRUE", "HALF-TRUE", "FALSE")

#: LIAR's six PolitiFact ratings folded into the three half-truth labels used here (PolitiFact-Hidden folds
#: differently: Mostly True joins HALF-TRUE there; "barely-true" is PolitiFact's old name for mostly false).
LIAR_TO_3 = {"true": "TRUE", "mostly-true": "TRUE", "half-true": "HALF-TRUE", "barely-true": "FALSE", "false": "FALSE",
             "pants-fire": "FALSE"}
LIAR_COLUMNS = ["id", "label", "statement", "subjects", "speaker", "speaker_job", "state", "party",
                "barely_true_counts", "false_counts", "half_true_counts", "mostly_true_counts",
                "pants_on_fire_counts", "context"]


def _politifact_labels(data_dir, download, download_dir) -> dict[str, str]:
    path = locate("PolitiFact-Hidden", "GT_test_all.json", data_dir, download=download, download_dir=download_dir)
    return {str(k): str(v).upper() for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def load_politifact_hidden(data_dir: str | os.PathLike | None = None, download: bool = True,
                           download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """PolitiFact-Hidden test split: 2,000 claims (ids 12994-14993), labels FALSE 1,501 / HALF-TRUE 406 / TRUE 93."""
    import pandas as pd
    labels = _politifact_labels(data_dir, download, download_dir)
    path = locate("PolitiFact-Hidden", "example_to_claim.json", data_dir, download=download, download_dir=download_dir)
    claims = json.loads(path.read_text(encoding="utf-8"))
    missing = set(labels) ^ {str(k) for k in claims}
    if missing:
        raise ValueError(f"claims and labels disagree on {len(missing)} ids, e.g. {sorted(missing)[:3]}")
    df = pd.DataFrame({"id": list(labels), "claim": [claims[k] for k in labels], "label": list(labels.values())})
    df = df.sort_values("id", key=lambda s: s.astype(int), ignore_index=True)
    df.attrs.update(source=[str(path)], dataset="PolitiFact-Hidden/test")
    return df


_RADAR_KINDS = {
    "gold": "matching_evidence_full.json",
    "retrieved": "retrieved_evidence_bgebase_20_veracity150.json",
    "matching": "matching_evidence.json",
    "400": "intent_enhanced_con_pro_bge_large_400_top20_by_score_with_evi.json",
}


def load_radar_claims(kind: str = "gold", data_dir: str | os.PathLike | None = None, download: bool = True,
                      download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """RADAR claims with evidence sentences and PolitiFact-Hidden labels. ``kind``: ``"gold"`` (150 claims, the
    fact-check's sentences), ``"retrieved"`` and ``"matching"`` (the same 150, top-20 retrieved sentences),
    ``"400"`` (400 claims, 20 sentences each from pro/con retrieval)."""
    import pandas as pd
    if kind not in _RADAR_KINDS:
        raise ValueError(f"kind must be one of {sorted(_RADAR_KINDS)}, not {kind!r}")
    path = locate("RADAR", _RADAR_KINDS[kind], data_dir, download=download, download_dir=download_dir)
    data = json.loads(path.read_text(encoding="utf-8"))
    labels = _politifact_labels(data_dir, download, download_dir)
    rows = [{"id": str(k), "claim": v["claim"], "label": labels.get(str(k)), "evidence": list(v.get("evidence_full_text", []))}
            for k, v in data.items()]
    df = pd.DataFrame(rows)
    if df["label"].isna().any():
        raise ValueError(f"{int(df['label'].isna().sum())} RADAR claims have no PolitiFact-Hidden label")
    df.attrs.update(source=[str(path)], dataset=f"RADAR/{kind}")
    return df


def _liar_records(path: Path, n_fields: int, has_index: bool) -> list[list[str]]:
    """Split a LIAR/LIAR-PLUS TSV into records: a record starts with ``[index<TAB>]NNNN.json<TAB>``, so a line
    that does not continues the previous one (the files hold raw newlines and stray quotes)."""
    start = re.compile(r"^\d+\t\d+\.json\t" if has_index else r"^\d+\.json\t")
    records: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if start.match(line):
            records.append(line)
        elif records and line:
            records[-1] += "\n" + line
    out = []
    for r in records:
        fields = r.rstrip("\r").split("\t")
        if len(fields) < n_fields:
            fields += [""] * (n_fields - len(fields))
        elif len(fields) > n_fields:  # stray tabs inside the last free-text field
            fields = fields[: n_fields - 1] + ["\t".join(fields[n_fields - 1 :])]
        out.append(fields)
    return out


def _liar_frame(records: list[list[str]], columns: list[str]) -> pd.DataFrame:
    import pandas as pd
    df = pd.DataFrame(records, columns=columns)
    df["id"] = df["id"].str.replace(".json", "", regex=False)
    unknown = set(df["label"]) - set(LIAR_TO_3)
    if unknown:
        raise ValueError(f"unknown LIAR labels {sorted(unknown)}")
    df.insert(2, "label3", df["label"].map(LIAR_TO_3))
    for c in columns:
        if c.endswith("_counts"):
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    return df


def load_liar(split: str = "train", data_dir: str | os.PathLike | None = None, download: bool = True,
              download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """LIAR statements (train 10,269 / valid 1,284 / test 1,283) with the 6-way ``label`` and the 3-way ``label3`` (:data:`LIAR_TO_3`)."""
    if split not in ("train", "valid", "test"):
        raise ValueError(f"LIAR split must be train, valid or test, not {split!r}")
    path = locate("LIAR", f"{split}.tsv", data_dir, download=download, download_dir=download_dir)
    df = _liar_frame(_liar_records(path, len(LIAR_COLUMNS), has_index=False), LIAR_COLUMNS)
    df.attrs.update(source=[str(path)], dataset=f"LIAR/{split}")
    return df


def load_liar_plus(split: str = "val", data_dir: str | os.PathLike | None = None, download: bool = True,
                   download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """LIAR-PLUS: LIAR's columns plus ``justification`` (the article's ruling without the verdict sentence) and
    ``evidence`` (it split into sentences)."""
    from mabpd_kit.text import split_sentences
    names = {"train": "train2.tsv", "val": "val2.tsv", "valid": "val2.tsv", "test": "test2.tsv"}
    if split not in names:
        raise ValueError(f"LIAR-PLUS split must be train, val or test, not {split!r}")
    path = locate("LIAR-PLUS", names[split], data_dir, download=download, download_dir=download_dir)
    cols = ["row"] + LIAR_COLUMNS + ["justification"]
    df = _liar_frame(_liar_records(path, len(cols), has_index=True), cols).drop(columns="row")
    df["evidence"] = [[j[s:e].strip() for s, e in split_sentences(j) if j[s:e].strip()] for j in df["justification"]]
    df.attrs.update(source=[str(path)], dataset=f"LIAR-PLUS/{split}")
    return df

