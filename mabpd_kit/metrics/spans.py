"""Span agreement with annotated biased words: token overlap, micro-averaged over sentences.

BABE's annotators marked the words that make a sentence biased (``biased_words``: a list of single
words, some hyphenated, with no offsets). A system's spans are phrases with offsets. The two meet
at the level of word tokens, per sentence:

- **tokens** of a string (:func:`word_tokens`): lower-cased word tokens, a token being a run of
  letters/digits/underscore (``\\w``) that may contain inner hyphens or apostrophes
  (``so-called``, ``isn't``, ``anti-American`` are one token each; typographic apostrophes are
  read as ``'``). Punctuation is dropped; function words are *kept* (a span ``a so-called reform``
  has three tokens, and ``a`` and ``reform`` count against precision unless an annotator marked them);
- per sentence i: ``P_i`` = the *set* of tokens of all predicted spans of the sentence, ``G_i`` = the
  set of tokens of its annotated biased words; ``tp_i`` = ``|P_i & G_i|`` (a word repeated in the
  sentence counts once: the annotations have no positions);
- **micro average** over the sentences in scope: precision = sum tp_i / sum |P_i|, recall =
  sum tp_i / sum |G_i|, F1 = 2 sum tp_i / (sum |P_i| + sum |G_i|) (0 where a denominator is 0,
  as in :mod:`.classification`). Sentences with no spans and no biased words add nothing;
  a sentence with spans and no biased words adds false-positive tokens.

Which sentences are in scope is the caller's choice (``mask``); the evaluation reports two: the
sentences whose gold label is biased, and all sentences (a neutral sentence's annotated words, if any,
count as gold there too).

>>> pred = [["so-called reform"], [], ["radical"]]
>>> gold = [["so-called"], ["slammed"], ["radical", "mob"]]
>>> s = span_scores(pred, gold)
>>> (s.tp, s.n_pred, s.n_gold), round(s.precision, 3), round(s.recall, 3), round(s.f1, 3)
((2, 3, 4), 0.667, 0.5, 0.571)
"""

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
    """The set of lower-cased word tokens of a string, or of several strings together (see the module doc)."""
    if isinstance(texts, str):
        texts = (texts,)
    out: set[str] = set()
    for t in texts:
        out.update(_TOKEN.findall(str(t).translate(_APOSTROPHES).lower()))
    return out


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
    resample is one 1-D sum: several times faster than summing a 2-D array, the same resamples and sums.
    None when a total could overflow its 21 bits."""
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


def span_scores(
    pred: Sequence[Sequence[str]],
    gold: Sequence[Sequence[str]],
    mask: Any = None,
    *,
    ci: bool = False,
    n_resamples: int | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
) -> SpanScore:
    """Token overlap of predicted spans with annotated words, micro-averaged (module doc).

    ``pred[i]``: the span texts predicted for sentence i (empty for none); ``gold[i]``: its annotated
    biased words. ``mask``: which sentences are in scope (booleans; default all). ``ci=True`` adds a
    percentile bootstrap interval of F1, resampling sentences (:func:`mabpd_kit.metrics.bootstrap_ci`;
    ``n_resamples``/``seed`` default to ``Config().metrics``).
    """
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
