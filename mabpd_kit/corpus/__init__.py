"""Corpus analysis for journalism researchers: read a corpus, analyse it article by
article on every core (or through an LLM), aggregate by outlet, topic or month with bootstrap
intervals and effect sizes, and write one offline HTML report.

>>> import mabpd_kit as mk
>>> corpus = mk.corpus.read("articles.csv", text_col="body", id_col="url")   # CSV/TSV/JSONL/Parquet/folder/DataFrame
>>> res = mk.corpus.analyze(corpus, "run.jsonl")      # resumable; every core on the rule-based path
>>> df = res.to_frame()                                # one row per article; to_frame("sentence"), ("span")
>>> mk.corpus.aggregate(res, by="outlet")              # per outlet: corrected share of biased sentences, densities per word, 95% CIs
>>> mk.corpus.rate_ratios(df, by="outlet")             # outlet to outlet, length as the exposure
>>> mk.corpus.compare(df, by="outlet")                 # Cohen's h and Cliff's delta, outlet to outlet
>>> mk.corpus.report(res, "report.html", by="outlet")  # one self-contained offline HTML file
>>> mk.corpus.score_coefficients()                     # the calibrated article score's coefficients, with CIs
>>> mk.corpus.adapt_score(res, gold="label")           # refit the score on your labelled sample (nested CV)
>>> mk.corpus.adapt(res, gold="label")                 # or the legacy count rule's threshold

Importing this package loads none of its modules.
"""

from __future__ import annotations

import importlib as _importlib
from typing import Any

_FACE = {
    "CorpusConfig": ("mabpd_kit.corpus.settings", "CorpusConfig"),
    "read": ("mabpd_kit.corpus.inputs", "read"),
    "Corpus": ("mabpd_kit.corpus.inputs", "Corpus"),
    "CorpusError": ("mabpd_kit.corpus.inputs", "CorpusError"),
    "Doc": ("mabpd_kit.corpus.inputs", "Doc"),
    "ArticleResult": ("mabpd_kit.corpus.articles", "ArticleResult"),
    "analyze_doc": ("mabpd_kit.corpus.articles", "analyze_doc"),
    "decide": ("mabpd_kit.corpus.articles", "decide"),
    "analyze": ("mabpd_kit.corpus.parallel", "analyze"),
    "make_pipeline": ("mabpd_kit.corpus.parallel", "make_pipeline"),
    "CorpusResults": ("mabpd_kit.corpus.store", "CorpusResults"),
    "load": ("mabpd_kit.corpus.store", "load"),
    "export": ("mabpd_kit.corpus.store", "export"),
    "aggregate": ("mabpd_kit.corpus.groups", "aggregate"),
    "compare": ("mabpd_kit.corpus.groups", "compare"),
    "category_mix": ("mabpd_kit.corpus.groups", "category_mix"),
    "trend": ("mabpd_kit.corpus.groups", "trend"),
    "bootstrap_mean": ("mabpd_kit.corpus.groups", "bootstrap_mean"),
    "cohens_h": ("mabpd_kit.corpus.groups", "cohens_h"),
    "cliffs_delta": ("mabpd_kit.corpus.groups", "cliffs_delta"),
    "prevalence": ("mabpd_kit.corpus.prevalence", "prevalence"),
    "error_rates": ("mabpd_kit.corpus.prevalence", "error_rates"),
    "ErrorRates": ("mabpd_kit.corpus.prevalence", "ErrorRates"),
    "densities": ("mabpd_kit.corpus.density", "densities"),
    "rate_ratios": ("mabpd_kit.corpus.density", "rate_ratios"),
    "adapt": ("mabpd_kit.corpus.threshold", "adapt"),
    "adapt_rates": ("mabpd_kit.corpus.threshold", "adapt_rates"),
    "Adaptation": ("mabpd_kit.corpus.threshold", "Adaptation"),
    "compare_rules": ("mabpd_kit.corpus.threshold", "compare_rules"),
    "adapt_score": ("mabpd_kit.corpus.scorefit", "adapt_score"),
    "ScoreFit": ("mabpd_kit.corpus.scorefit", "ScoreFit"),
    "score_coefficients": ("mabpd_kit.corpus.score", "coefficients"),
    "explain": ("mabpd_kit.corpus.score", "explain"),
    "prior_adjusted": ("mabpd_kit.corpus.score", "prior_adjusted"),
    "report": ("mabpd_kit.corpus.reporting", "report"),
    "report_html": ("mabpd_kit.corpus.reporting", "report_html"),
}

__all__ = sorted(_FACE)


def __getattr__(name: str) -> Any:
    if name in _FACE:
        module, attr = _FACE[name]
        value = getattr(_importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mabpd_kit.corpus' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
