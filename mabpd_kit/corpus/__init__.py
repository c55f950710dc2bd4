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

#: module -> the names it gives this package (``score_coefficients`` is ``score.coefficients``)
_MODULES = {
    "settings": ("CorpusConfig",),
    "inputs": ("read", "Corpus", "CorpusError", "Doc"),
    "articles": ("ArticleResult", "analyze_doc", "decide"),
    "parallel": ("analyze", "make_pipeline"),
    "store": ("CorpusResults", "load", "export"),
    "groups": ("aggregate", "compare", "category_mix", "trend", "bootstrap_mean", "cohens_h", "cliffs_delta"),
    "prevalence": ("prevalence", "error_rates", "ErrorRates"),
    "density": ("densities", "rate_ratios"),
    "threshold": ("adapt", "adapt_rates", "Adaptation", "compare_rules"),
    "scorefit": ("adapt_score", "ScoreFit"),
    "score": ("score_coefficients", "explain", "prior_adjusted"),
    "reporting": ("report", "report_html"),
}
_FACE = {name: (f"mabpd_kit.corpus.{m}", "coefficients" if name == "score_coefficients" else name)
         for m, names in _MODULES.items() for name in names}

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
