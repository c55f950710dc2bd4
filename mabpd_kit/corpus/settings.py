"""The corpus settings: every threshold and limit of :mod:`mabpd_kit.corpus` in one frozen model.

Until the lead moves it into the one :class:`mabpd_kit.config.Config` (as ``Config.corpus``), the
corpus functions take it as ``settings=`` and otherwise read ``config.corpus`` when a Config has
one, else the defaults here.

>>> from mabpd_kit.corpus.settings import CorpusConfig
>>> CorpusConfig().article_threshold
10.5
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mabpd_kit.types import FrozenModel

__all__ = ["CorpusConfig", "resolve"]


class CorpusConfig(FrozenModel):
    """Issue 12: reading a corpus, article mode, aggregation, the report, the parallel runner."""

    # -- reading
    max_bytes: int = Field(1_000_000, gt=0, description="a text longer than this (UTF-8 bytes) is a bad row, flagged 'too large'")
    chunk_rows: int = Field(2_000, gt=0, description="rows read at a time from CSV/TSV/JSONL/Parquet (memory does not grow with the corpus)")
    text_columns: tuple[str, ...] = Field(
        ("text", "content", "body", "article", "sentence", "full_text"),
        description="the text column when text_col is not given: the first of these present (case-insensitive)")
    # -- article mode
    mode: Literal["article", "direct"] = Field("article", description="article: sentence by sentence; direct: the paper's whole-article mode (cut to config.text.article_words)")
    article_stat: Literal["n_biased", "share_biased", "spans_per_100w", "n_spans"] = Field(
        "n_biased", description="the article statistic the decision rule thresholds: biased sentences (count), their "
                                "share, evidence spans per 100 words, evidence spans (count)")
    article_threshold: float = Field(
        10.5, ge=0,
        description="an article is biased iff article_stat >= this. Adapted on HyperPartisan train (5-fold CV, seed 0; "
                    "mabpd_kit.corpus.adapt): with the default stat, 11 or more biased sentences. A count grows with "
                    "length (HyperPartisan's biased articles are longer): adapt it on your own labelled sample. "
                    "Sentence-level defaults stay zero-shot")
    min_sentence_words: int = Field(3, ge=1, description="shorter 'sentences' (datelines, captions) are kept but not analysed")
    top_spans: int = Field(5, ge=0, description="strongest spans kept per article")
    # -- threshold adaptation
    adapt_folds: int = Field(5, ge=2, description="k of the k-fold cross-validation that adapts the article threshold")
    adapt_objective: Literal["accuracy", "macro_f1"] = Field("accuracy", description="what the adapted threshold maximises")
    adapt_resamples: int = Field(1_000, gt=0, description="bootstrap resamples for the interval of the adapted threshold")
    # -- aggregation
    bootstrap_resamples: int = Field(2_000, gt=0, description="bootstrap resamples over articles per group")
    confidence: float = Field(0.95, gt=0, lt=1, description="confidence level of the intervals")
    seed: int = Field(0, description="seed of the bootstrap and of the CV folds")
    min_group: int = Field(10, ge=1, description="groups with fewer articles are flagged 'too small' (wide CIs)")
    # -- parallel runner and report
    workers: int | None = Field(None, description="processes for the rule-based path (None = all cores)")
    chunk_articles: int = Field(64, gt=0, description="articles per task sent to a worker process")
    report_articles: int = Field(500, gt=0, description="articles with a drill-down in the HTML report (the most biased first)")
    report_groups: int = Field(30, gt=0, description="groups drawn in the report's charts (the largest first)")


def resolve(settings: CorpusConfig | None = None, config: Any = None) -> CorpusConfig:
    """``settings``, else ``config.corpus`` (once the lead adds it), else the defaults."""
    if settings is not None:
        return settings
    found = getattr(config, "corpus", None)
    return found if isinstance(found, CorpusConfig) else CorpusConfig()
