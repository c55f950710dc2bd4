"""Benchmark loaders: where each file comes from, how it is checked, and one DataFrame per benchmark.

Data is never shipped with mabpd-kit. :func:`locate` finds a file in your local copy
(``MABPD_DATA_DIR``), then in the download folder (:func:`download_dir`), then downloads it from the
pinned URL of the manifest and verifies it (:mod:`mabpd_kit.data.download` explains the order and
the checksum policy). Offline and not found: a :class:`DataMissingError` says what to get and where
to put it.

Loaders and their columns (``data/SOURCES.md`` has licences and counts), one module per family:
:mod:`.babe`, :mod:`.hyperpartisan`, :mod:`.claims` (the half-truth claims) and :mod:`.qa` (the
identity-bias question sets).

=============================  =================================================================
``load_babe(split)``           id, text, label (1 biased / 0 neutral), outlet, topic, type
                               (left/center/right/None), biased_words (list), label_opinion,
                               news_link, and ten ``<model>_label`` columns (0/1/NA) when the
                               annomatic file is available
``load_hyperpartisan(split)``  id, title, published_at, url, text, label (1 hyperpartisan), n_words,
                               truncated; ``df.attrs["n_truncated"]``
``load_politifact_hidden()``   id, claim, label (TRUE / HALF-TRUE / FALSE)
``load_radar_claims(kind)``    id, claim, label, evidence (list of sentences)
``load_liar(split)``           id, label (6-way), label3, statement, subjects, speaker, ..., context
``load_liar_plus(split)``      as LIAR plus justification and evidence (list of sentences)
``load_mmlu(split)``           id, question, A, B, C, D, answer (A-D)
``load_gsm8k(split)``          id, question, answer (number as a string), solution
``samples()``                  id, text, label, taxonomy, rationale: the 28 teaching sentences
                               shipped *inside* the package (no download; works from a wheel)
``hard_samples()``             the same columns: 12 hard sentences shipped beside them, several of
                               which the rule-based agents get wrong (``dev_sample`` adds them)
=============================  =================================================================

``have(name)`` says whether a benchmark is on this machine (never downloads): a notebook picks the
benchmark when it is there and the shipped samples otherwise; ``dev_sample(n)`` does exactly that for
BABE train (balanced, seeded) and ``describe()`` is the one line a notebook's setup cell prints.

Every loader takes ``data_dir`` (your copy), ``download`` (False: never go online) and
``download_dir`` (where downloads are kept).

>>> import mabpd_kit as mk
>>> df = mk.data.load_babe("train")          # doctest: +SKIP
"""

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
    "BABE",
    "DATASET_ALIASES",
    "HYPERPARTISAN",
    "LessonData",
    "LABELS3",
    "LIAR_TO_3",
    "LLM_LABEL_MODELS",
    "MMLU",
    "ChecksumError",
    "DataMissingError",
    "FileEntry",
    "data_dir",
    "describe",
    "dev_sample",
    "hard_samples",
    "download_dir",
    "fetch",
    "have",
    "interval_text",
    "lesson_data",
    "load_babe",
    "load_gsm8k",
    "load_hyperpartisan",
    "load_liar",
    "load_liar_plus",
    "load_mmlu",
    "load_politifact_hidden",
    "load_radar_claims",
    "load_samples",
    "locate",
    "manifest",
    "metric_text",
    "samples",
    "samples_path",
    "sha256_file",
    "status",
]
