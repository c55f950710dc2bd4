"""Span agreement with annotated biased words (marked without offsets): the sets of lower-cased word tokens of
spans and words per sentence, micro-averaged over the sentences in scope (definitions: docs/evaluation.md)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SpanScore", "overlap_counts", "span_scores", "word_tokens"]

_TOKEN = re.compile(r"\w+(?:['-]\w+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2010": "-", "\u2011": "-"})


def word_tokens(texts: str | Iterable[str]) -> set[str]:
    """The set of lower-cased word tokens of a string, or of several strings together (inner hyphens and
    apostrophes kept, punctuation dropped, function words kept)."""
    if isinstance(texts, str):
        texts = (texts,)
    return {tok for t in texts for tok in _TOKEN.findall(str(t).translate(_APOSTROPHES).lower())}


def overlap_counts(pred_spans: Iterable[str], gold_words: Iterable[str]) -> tuple[int, int, int]:
    """One sentence: ``(tp, n_pred, n_gold)`` = ``(|P & G|, |P|, |G|)`` of the token sets."""
    p, g = word_tokens(pred_spans), word_tokens(gold_words)
    return len(p & g), len(p), len(g)


@dataclass(frozen=True)
class SpanScore:
    """Micro-averaged token precision, recall and F1 over ``n_sentences`` sentences, with the sums they
    come from; ``f1_lo``/``f1_hi`` a percentile bootstrap interval over sentences (NaN when not asked)."""

    precision: float
    recall: float
    f1: float
    tp: int
    n_pred: int
    n_gold: int
    n_sentences: int
    f1_lo: float = float("nan")
    f1_hi: float = float("nan")

    def __str__(self) -> str:
        ci = "" if np.isnan(self.f1_lo) else f" [{self.f1_lo:.3f}, {self.f1_hi:.3f}]"
        return (f"token P {self.precision:.3f} R {self.recall:.3f} F1 {self.f1:.3f}{ci} "
                f"({self.tp} of {self.n_pred} predicted / {self.n_gold} annotated tokens, {self.n_sentences} sentences)")


def _div(a: float, b: float) -> float:
    return float(a / b) if b else 0.0


_BITS = 21  # each of a sentence's three counts gets 21 bits of one int64 (sums up to 2,097,151 tokens)
_MASK = (1 << _BITS) - 1


def _pack(counts: np.ndarray) -> np.ndarray | None:
    """The three counts of each sentence in one integer (tp + n_pred * 2^21 + n_gold * 2^42), so a bootstrap
    resample is a 1-D sum instead of a 2-D one; None when a total could overflow 21 bits."""
    if len(counts) and counts.sum(axis=0).max() > _MASK:
        return None
    c = counts.astype(np.int64)
    return c[:, 0] | (c[:, 1] << _BITS) | (c[:, 2] << (2 * _BITS))


def _packed_f1(packed: np.ndarray) -> float:
    total = int(packed.sum())
    tp, n_pred, n_gold = total & _MASK, (total >> _BITS) & _MASK, total >> (2 * _BITS)
    return _div(2 * tp, n_pred + n_gold)


def _micro_f1(counts: np.ndarray) -> float:
    tp, n_pred, n_gold = counts.sum(axis=0)
    return _div(2 * tp, n_pred + n_gold)


def span_scores(pred: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], mask: Any = None, *, ci: bool = False,
                n_resamples: int | None = None, seed: int | None = None, confidence: float = 0.95) -> SpanScore:
    """Token overlap of ``pred[i]`` (span texts) with ``gold[i]`` (annotated words), micro-averaged over the sentences
    in ``mask``; ``ci=True`` adds a bootstrap interval of F1 over sentences (defaults ``Config().metrics``)."""
    if len(pred) != len(gold):
        raise ValueError(f"pred has {len(pred)} sentences, gold {len(gold)}")
    keep = np.ones(len(pred), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if keep.shape != (len(pred),):
        raise ValueError("mask must have one entry per sentence")
    counts = np.array([overlap_counts(p, g) for p, g, k in zip(pred, gold, keep) if k], dtype=np.int64).reshape(-1, 3)
    tp, n_pred, n_gold = (int(v) for v in counts.sum(axis=0))
    lo = hi = float("nan")
    if ci and len(counts):
        from mabpd_kit.metrics.bootstrap import bootstrap_ci
        packed = _pack(counts)
        data, stat = (counts, _micro_f1) if packed is None else (packed, _packed_f1)
        _, lo, hi = bootstrap_ci(data, stat, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return SpanScore(precision=_div(tp, n_pred), recall=_div(tp, n_gold), f1=_div(2 * tp, n_pred + n_gold), tp=tp,
                     n_pred=n_pred, n_gold=n_gold, n_sentences=len(counts), f1_lo=lo, f1_hi=hi)
