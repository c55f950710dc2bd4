"""The offline rule-based stand-in for RADAR's three agents (a teaching prop, not an LLM)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mabpd_kit.radar.evidence import Evidence, Turn
from mabpd_kit.radar.stopping import ROUND_NAMES

__all__ = ["HEDGE_CUES", "NEGATION_CUES", "OFFLINE_TAG", "RuleBasedRadar"]

OFFLINE_TAG = "[offline rule-based stand-in]"

_WORD = re.compile(r"[a-z0-9][a-z0-9'%$.-]*[a-z0-9%]|[a-z0-9]")
_STOP = frozenset(["a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "but", "is", "are", "was", "were", "be", "been", "has", "have", "had", "it", "its", "this", "that", "these", "those", "with", "as", "by", "at", "from", "than", "then", "so", "said", "says", "say", "he", "she", "they", "we", "you", "i", "his", "her", "their", "our", "not", "no"])
NEGATION_CUES = ("not", "no", "never", "false", "incorrect", "wrong", "didn't", "did not", "isn't", "wasn't",
                 "no evidence", "contrary", "debunked", "misleading", "inaccurate", "actually")
HEDGE_CUES = ("but", "however", "although", "though", "only", "partly", "partially", "some", "excluding",
              "context", "omits", "leaves out", "while", "despite", "except", "adjusted", "compared", "earlier")


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w.strip(".") for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2)


def _cue_regex(cues: Sequence[str]) -> re.Pattern[str]:
    alts = "|".join(re.escape(c) for c in sorted(cues, key=len, reverse=True))
    return re.compile(rf"(?<![a-z'])(?:{alts})(?![a-z'])")


_NEGATION_RE = _cue_regex(NEGATION_CUES)
_HEDGE_RE = _cue_regex(HEDGE_CUES)


def _sentence_cues(text: str) -> tuple[frozenset[str], int, int]:
    """(content words, negation cue count, hedge cue count) of one sentence."""
    low = text.lower()
    return _content_words(text), len(_NEGATION_RE.findall(low)), len(_HEDGE_RE.findall(low))


@dataclass
class _Cues:
    overlap: float
    negation: int
    hedge: int


class RuleBasedRadar:
    """Deterministic stand-in: the Politician cites supportive sentences, the Scientist hedges and
    negations; the Judge turns support, contradiction and omission into label logits."""

    def __init__(self, labels: Sequence[str] = ("TRUE", "HALF-TRUE", "FALSE")) -> None:
        self.labels = tuple(labels)

    def cues(self, claim: str, evidence: Sequence[Evidence]) -> dict[int, _Cues]:
        cw = _content_words(claim) or {""}
        out = {}
        for e in evidence:
            words, neg, hedge = _sentence_cues(e.text)
            out[e.number] = _Cues(len(cw & words) / len(cw), neg, hedge)
        return out

    def turn(self, role: str, claim: str, evidence: Sequence[Evidence], used: set[int], stage: str) -> Turn:
        cues = self.cues(claim, evidence)
        by_num = {e.number: e for e in evidence}
        if role in ("politician", "pro"):
            pick = sorted((n for n, c in cues.items() if n not in used and c.negation == 0),
                          key=lambda n: (cues[n].hedge > 0, -cues[n].overlap, n))[:2]
            lead = "The evidence supports the claim"
        elif role == "scientist":  # omission first: hedges, then negations
            pick = sorted((n for n, c in cues.items() if n not in used and (c.hedge or c.negation)),
                          key=lambda n: (-cues[n].hedge, -cues[n].negation, -cues[n].overlap, n))[:2]
            lead = "The claim leaves out context"
        else:  # con: contradiction first
            pick = sorted((n for n, c in cues.items() if n not in used and (c.hedge or c.negation)),
                          key=lambda n: (-cues[n].negation, -cues[n].hedge, -cues[n].overlap, n))[:2]
            lead = "The evidence contradicts the claim"
        if pick:
            quotes = " ".join(f'[E{n}] "{_short(by_num[n].text)}"' for n in pick)
            body = f"{lead}: {quotes}"
        else:
            body = f"{lead}; no new evidence to add."
        return Turn(round=ROUND_NAMES.index(stage) + 1 if stage in ROUND_NAMES else 1, stage=stage, agent=role,
                    text=f"{OFFLINE_TAG} {role.title()} ({stage}): {body}", cited=pick)

    def judge(self, claim: str, evidence: Sequence[Evidence], cited: Sequence[int], round: int,
              new_omissions: int) -> tuple[dict[str, float], float]:
        """(label probabilities, p(STOP)) from the evidence cited so far (all evidence if none cited)."""
        cues = self.cues(claim, evidence)
        nums = [n for n in dict.fromkeys(cited) if n in cues] or list(cues)
        support = sum(cues[n].overlap for n in nums if cues[n].negation == 0)
        contra = sum(min(cues[n].negation, 2) * (0.5 + cues[n].overlap) for n in nums)
        omission = sum(min(cues[n].hedge, 2) * (0.3 + cues[n].overlap) for n in nums)
        logits = {"TRUE": 2.0 * support - contra - 0.6 * omission,
                  "HALF-TRUE": 1.2 * omission + 0.5 * min(support, contra) + 0.3,
                  "FALSE": 1.5 * contra - 0.5 * support}
        sharp = 1.0 + 0.35 * (round - 1)
        z = np.array([logits.get(lab, 0.0) for lab in self.labels]) * sharp
        p = np.exp(z - z.max())
        p /= p.sum()
        c = float(p.max())
        p_stop = float(1 / (1 + math.exp(-(6.0 * (c - 0.65) - 0.8 * new_omissions))))
        return {lab: float(v) for lab, v in zip(self.labels, p)}, p_stop


def _short(text: str, n: int = 18) -> str:
    words = text.split()
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")
