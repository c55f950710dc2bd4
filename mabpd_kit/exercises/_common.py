"""Shared parts of the exercise checks: the student's seed, candidate seeds, plain metrics (no kit code)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

TOL = 1e-9


def student_seed(student_id: str | int | None = None) -> int:
    """The student's seed: ``student_id`` if given, else ``MABPD_STUDENT``; 0 when neither is set."""
    sid = (os.environ.get("MABPD_STUDENT", "") if student_id is None else str(student_id)).strip()
    return 0 if not sid else int.from_bytes(hashlib.sha256(sid.encode("utf-8")).digest()[:4], "big")


def _candidates(seed: int, tries: int = 60):
    for k in range(tries):
        yield (int(seed) + 7919 * k) % (2**32)


def _counts(y: Sequence[int], p: Sequence[int]) -> tuple[int, int, int, int]:
    tp = fp = fn = tn = 0
    for g, q in zip(y, p):
        g, q = int(g), int(q)
        tp += g == 1 and q == 1
        fp += g == 0 and q == 1
        fn += g == 1 and q == 0
        tn += g == 0 and q == 0
    return tp, fp, fn, tn


def _prec(y, p) -> float:
    tp, fp, _, _ = _counts(y, p)
    return tp / (tp + fp) if tp + fp else 0.0


def _rec(y, p) -> float:
    tp, _, fn, _ = _counts(y, p)
    return tp / (tp + fn) if tp + fn else 0.0


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def _macro_f1(y, p) -> float:
    tp, fp, fn, tn = _counts(y, p)
    present = [c for c, n in ((1, tp + fp + fn), (0, tn + fn + fp)) if n]
    f = {1: _f1(tp, fp, fn), 0: _f1(tn, fn, fp)}
    return sum(f[c] for c in present) / len(present) if present else 0.0


def _acc(y, p) -> float:
    y, p = list(y), list(p)
    return sum(int(a) == int(b) for a, b in zip(y, p)) / len(y) if y else 0.0


def _close(a: Any, b: float) -> bool:
    try:
        return abs(float(a) - b) < TOL
    except (TypeError, ValueError):
        return False
