"""The corpus part of :class:`mabpd_kit.config.Config` (``Config().corpus``, re-exported by ``config``); a fitted
default is read from its fit artefact (``resources/fits``, :mod:`mabpd_kit.fits`) when first built, never on import."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from mabpd_kit.types import FrozenModel as _Frozen

__all__ = ["ArticleScoreConfig", "CorpusConfig"]


@functools.cache
def _fit_values(name: str) -> dict[str, Any]:
    """The ``values`` of the fit artefact ``resources/fits/NAME.json``."""
    p = Path(__file__).parent / "resources" / "fits" / f"{name}.json"
    try:
        return {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(p.read_text("utf-8"))["values"].items()}
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"fit artefact {p.name} unreadable ({type(exc).__name__}): run `mabpd fit {name}`") from None


def _fitted(name: str, key: str, **kw: Any) -> Any:  # a default read from a fit artefact when built, never on import
    return Field(default_factory=lambda: _fit_values(name)[key], **kw)


class ArticleScoreConfig(_Frozen):
    """The hyperpartisan-style article score (:mod:`mabpd_kit.corpus.score`), fitted on SemEval-2019
    HyperPartisan: coefficients per standardised feature ((x - center) / scale), from ``mabpd fit article_score``."""

    features: tuple[str, ...] = Field(
        ("share_biased", "log_biased", "spans_per_100w", "top_score", "mix_biased_language", "mix_framing_bias",
         "mix_unsupported_claims", "mix_selective_presentation", "log_words"),
        description="article features, in coefficient order (mix_*: the share of the article's evidence spans of "
                    "that meta-category; top_score: mean of the top_k sentence scores; log_biased: ln(1 + biased "
                    "sentences); log_words: ln(1 + words))")
    top_k: int = Field(3, ge=1, description="sentences in the top_score feature (the strongest k sentence scores)")
    intercept: float = _fitted("article_score", "intercept")
    coef: tuple[float, ...] = _fitted("article_score", "coef")
    coef_lo: tuple[float, ...] = _fitted("article_score", "coef_lo")
    coef_hi: tuple[float, ...] = _fitted("article_score", "coef_hi")
    center: tuple[float, ...] = _fitted("article_score", "center")
    scale: tuple[float, ...] = _fitted("article_score", "scale")
    l2: float = _fitted("article_score", "l2", ge=0, description="the L2 penalty of the fitted coefficients (by CV)")
    base_rate: float = _fitted("article_score", "base_rate", gt=0, lt=1, description="training share of positives")
    em_tol: float = Field(1e-6, gt=0, description="EM prior estimate: stop when the base rate moves less than this")
    em_max_iter: int = Field(1_000, gt=0, description="EM prior estimate: most iterations")
    l2_grid: tuple[float, ...] = Field((0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
                                       description="L2 penalties tried by the inner cross-validation (log-loss decides)")
    inner_folds: int = Field(5, ge=2, description="folds of the inner CV that picks the penalty")
    resamples: int = Field(1_000, gt=0, description="bootstrap resamples for the coefficient intervals")
    curve_sizes: tuple[int, ...] = Field((25, 50, 100, 200, 400), description="learning-curve sizes (and all)")
    curve_repeats: int = Field(20, gt=0, description="repeats (seeded draws) per learning-curve size")
    n_train: int = _fitted("article_score", "n_train", ge=0, description="articles the coefficients were fitted on")

    @model_validator(mode="after")
    def _lengths(self) -> ArticleScoreConfig:
        k = len(self.features)
        if any(len(v) != k for v in (self.coef, self.coef_lo, self.coef_hi, self.center, self.scale)):
            raise ValueError(f"coef, coef_lo, coef_hi, center and scale need one value per feature ({k})")
        return self


class CorpusConfig(_Frozen):
    """Reading a corpus, article mode, aggregation, the report, the parallel runner."""

    # -- reading
    max_bytes: int = Field(1_000_000, gt=0, description="a text longer than this (UTF-8 bytes) is a bad row, flagged 'too large'")
    max_row_bytes: int = Field(4_000_000, gt=0, description="a CSV/TSV/JSONL line (or a quoted field over lines) longer than this is a bad row, 'too large', never held whole")
    max_decompressed_bytes: int = Field(4_000_000_000, gt=0, description="a .gz/.bz2/.xz/.zip corpus (or a .json array) is read no further than this once decompressed: one error (a compression bomb)")
    max_depth: int = Field(64, ge=1, description="folders nested deeper than this in a corpus folder are flagged, not read")
    chunk_rows: int = Field(2_000, gt=0, description="rows read at a time from CSV/TSV/JSONL/Parquet (memory does not grow with the corpus)")
    text_columns: tuple[str, ...] = Field(
        ("text", "content", "body", "article", "sentence", "full_text"),
        description="the text column when text_col is not given: the first of these present (case-insensitive)")
    # -- article mode
    mode: Literal["article", "direct"] = Field("article", description="article: sentence by sentence; direct: the paper's whole-article mode (cut to config.text.article_words)")
    article_stat: Literal["n_biased", "share_biased", "spans_per_100w", "n_spans"] = Field(
        "n_biased", description="the article statistic the decision rule thresholds: biased sentences (count), their "
                                "share, evidence spans per 100 words, evidence spans (count)")
    article_threshold: float = _fitted(
        "count_threshold", "article_threshold", ge=0,
        description="an article is biased iff article_stat >= this; fitted on HyperPartisan train (resources/fits/"
                    "count_threshold.json, `mabpd fit`). A count grows with length: adapt it on your own labelled sample")
    min_sentence_words: int = Field(3, ge=1, description="shorter 'sentences' (datelines, captions) are kept but not analysed")
    min_analysed_share: float = Field(
        0.5, ge=0, le=1,
        description="an article fails when fewer than this share of its sentences long enough to analyse could be "
                    "analysed (the others failed): its evidence is kept in the record, its decision is not made")
    language_min_chars: int = Field(
        100, ge=0,
        description="the language is decided once per article (its sentences take it); an article with fewer "
                    "characters than this (whitespace not counted) is too short to tell and is taken to be in "
                    "text.languages[0]")
    top_spans: int = Field(5, ge=0, description="strongest spans kept per article")
    # -- the article decision
    article_decision: Literal["score", "count"] = Field(
        "score", description="score: biased iff the hyperpartisan-style article score p_biased >= score_threshold; "
                             "count: the legacy rule article_stat >= article_threshold")
    score_threshold: float = Field(0.5, ge=0, le=1, description="an article is biased iff p_biased >= this (score decision)")
    score: ArticleScoreConfig = Field(default_factory=lambda: ArticleScoreConfig())
    # -- threshold adaptation
    adapt_folds: int = Field(5, ge=2, description="k of the k-fold cross-validation that adapts the article threshold")
    adapt_objective: Literal["accuracy", "macro_f1"] = Field("accuracy", description="what the adapted threshold maximises")
    adapt_resamples: int = Field(1_000, gt=0, description="bootstrap resamples for the interval of the adapted threshold")
    # -- aggregation
    bootstrap_resamples: int = Field(2_000, gt=0, description="bootstrap resamples over articles per group")
    confidence: float = Field(0.95, gt=0, lt=1, description="confidence level of the intervals")
    seed: int = Field(0, description="seed of the bootstrap and of the CV folds")
    min_group: int = Field(10, ge=1, description="groups with fewer articles are flagged 'too small' (wide CIs)")
    prevalence_bins: tuple[float, ...] = Field((0.5, 0.7, 0.8, 0.9), description="score cuts of the sentences the kit calls biased: the bins of the corrected share (corpus.prevalence; chosen by leave-one-outlet-out coverage on BABE train)")
    prevalence_draws: int = Field(2_000, gt=0, description="error-rate draws of the corrected share's posterior (corpus.prevalence)")
    prevalence_max_width: float = Field(0.5, gt=0, le=1, description="a corrected share whose interval is wider than this is flagged 'wide': too uncertain to compare groups")
    prevalence_min_class: int = Field(20, ge=1, description="outlets with fewer validation sentences of a class do not count towards how much its error rates vary")
    # -- parallel runner and report
    workers: int | None = Field(None, description="processes for the rule-based path (None = all cores)")
    chunk_articles: int = Field(64, gt=0, description="articles per task sent to a worker process")
    dask_partition_articles: int = Field(
        256, gt=0, description="articles per Dask partition (one task, one committed part file): each partition pays "
                               "a round trip through the scheduler, so it is a few seconds of work, not a local chunk")
    report_articles: int = Field(500, gt=0, description="articles with a drill-down in the HTML report (the most biased first)")
    report_groups: int = Field(30, gt=0, description="groups drawn in the report's charts (the largest first)")
    report_max_rows: int = Field(1_000, gt=0, description="rows of the report's article table (the most biased "
                                 "first when the corpus has more; every row: export)")
    report_max_bytes: int = Field(4_000_000, gt=0, description="size budget of the report's drill-downs (UTF-8 "
                                  "bytes): the file stays a few MB whatever the corpus and its articles' length")

    @property
    def rule(self) -> tuple[str, float]:
        """The article decision as ``(statistic, threshold)``."""
        if self.article_decision == "score":
            return "p_biased", self.score_threshold
        return self.article_stat, self.article_threshold
