"""Benchmark loaders: one DataFrame per benchmark, from your copy, the download folder or a pinned, checked
download (:mod:`.download`); offline and missing, a :class:`DataMissingError` says what to get and where.
:mod:`.shipped`: the teaching samples inside the package. Licences and counts: ``data/SOURCES.md``."""

from __future__ import annotations

from mabpd_kit.data.babe import BABE, LLM_LABEL_MODELS, load_babe
from mabpd_kit.data.claims import (
    LABELS3,
    LIAR_TO_3,
    load_liar,
    load_liar_plus,
    load_politifact_hidden,
    load_radar_claims,
)
from mabpd_kit.data.download import (
    ChecksumError,
    DataMissingError,
    FileEntry,
    data_dir,
    download_dir,
    fetch,
    locate,
    manifest,
    sha256_file,
    status,
)
from mabpd_kit.data.hyperpartisan import HYPERPARTISAN, load_hyperpartisan
from mabpd_kit.data.qa import MMLU, load_gsm8k, load_mmlu
from mabpd_kit.data.shipped import (
    DATASET_ALIASES,
    LessonData,
    describe,
    dev_sample,
    hard_samples,
    have,
    interval_text,
    lesson_data,
    load_samples,
    metric_text,
    samples,
    samples_path,
)

__all__ = [
    "BABE", "DATASET_ALIASES", "HYPERPARTISAN", "LessonData", "LABELS3", "LIAR_TO_3", "LLM_LABEL_MODELS", "MMLU",
    "ChecksumError", "DataMissingError", "FileEntry", "data_dir", "describe", "dev_sample", "hard_samples",
    "download_dir", "fetch", "have", "interval_text", "lesson_data", "load_babe", "load_gsm8k", "load_hyperpartisan",
    "load_liar", "load_liar_plus", "load_mmlu", "load_politifact_hidden", "load_radar_claims", "load_samples", "locate",
    "manifest", "metric_text", "samples", "samples_path", "sha256_file", "status"
]
