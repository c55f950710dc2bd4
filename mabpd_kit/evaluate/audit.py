"""The bias of the bias detector: false-positive and false-negative rates by a grouping column (BABE's outlet
leaning) with Wilson intervals, and the gap between two groups with Newcombe's interval."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["leaning_audit", "leaning_gaps", "wilson"]

LEANINGS = ("left", "center", "right")


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of ``k`` successes in ``n`` trials (NaN, NaN when ``n`` is 0)."""
    if n <= 0:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, mid - half), min(1.0, mid + half)


def _systems(frame: pd.DataFrame, systems: Sequence[str] | None) -> list[str]:
    if systems is None:
        return [c for c in ("pred", *sorted(c for c in frame.columns if str(c).endswith("_label"))) if c in frame]
    missing = [s for s in systems if s not in frame]
    if missing:
        raise ValueError(f"no prediction columns {missing} (columns: {list(frame.columns)})")
    return list(systems)


def leaning_audit(frame: pd.DataFrame, *, group: str = "type", gold: str = "label",
                  systems: Sequence[str] | None = None, groups: Sequence[str] | None = LEANINGS,
                  confidence: float | None = None) -> pd.DataFrame:
    """Error rates by group, one row per (system, group): ``n_neutral``, ``fp``, ``fpr`` [``_lo``, ``_hi``],
    ``n_biased``, ``fn``, ``fnr`` [``_lo``, ``_hi``], ``n_missing`` (a missing prediction counts there only).
    ``systems``: 0/1 columns, default ``pred`` and every ``*_label`` column; ``groups=None``: every value."""
    import pandas as pd

    from mabpd_kit.config import MetricsConfig
    conf = MetricsConfig().confidence if confidence is None else confidence
    for col in (group, gold):
        if col not in frame:
            raise ValueError(f"no column {col!r} to audit by (columns: {list(frame.columns)})")
    cols = _systems(frame, systems)
    if not cols:
        raise ValueError("no prediction column to audit: pass systems=[...] (0/1 columns)")
    y = pd.to_numeric(frame[gold], errors="coerce")
    order = list(groups) if groups is not None else sorted(frame[group].dropna().astype(str).unique())
    rows = []
    for s in cols:
        pred = pd.to_numeric(frame[s], errors="coerce")
        for g in order:
            inside = (frame[group].astype(str) == g) & y.notna()
            ok = inside & pred.isin([0, 1])
            neg, pos = ok & (y == 0), ok & (y == 1)
            fp, fn = int((pred[neg] == 1).sum()), int((pred[pos] == 0).sum())
            n0, n1 = int(neg.sum()), int(pos.sum())
            (f_lo, f_hi), (m_lo, m_hi) = wilson(fp, n0, conf), wilson(fn, n1, conf)
            rows.append({"system": "kit" if s == "pred" else s.removesuffix("_label"), "group": g, "n_neutral": n0,
                         "fp": fp, "fpr": fp / n0 if n0 else math.nan, "fpr_lo": f_lo, "fpr_hi": f_hi,
                         "n_biased": n1, "fn": fn, "fnr": fn / n1 if n1 else math.nan, "fnr_lo": m_lo, "fnr_hi": m_hi,
                         "n_missing": int((inside & ~pred.isin([0, 1])).sum())})
    out = pd.DataFrame(rows)
    out.attrs.update(confidence=conf, group=group, interval="Wilson")
    return out


def _newcombe(k1: int, n1: int, k2: int, n2: int, conf: float) -> tuple[float, float, float]:
    """Difference p1 - p2 with Newcombe's hybrid Wilson interval."""
    if not n1 or not n2:
        return math.nan, math.nan, math.nan
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson(k1, n1, conf), wilson(k2, n2, conf)
    d = p1 - p2
    return d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def leaning_gaps(audit: pd.DataFrame, a: str = "right", b: str = "left") -> pd.DataFrame:
    """Per system, group ``a``'s rates minus group ``b``'s (``fpr_diff``, ``fnr_diff``) with Newcombe intervals."""
    import pandas as pd
    conf = audit.attrs.get("confidence", 0.95)
    rows = []
    for s, t in audit.groupby("system", sort=False):
        ra, rb = t[t["group"] == a], t[t["group"] == b]
        if ra.empty or rb.empty:
            continue
        ra, rb = ra.iloc[0], rb.iloc[0]
        f = _newcombe(ra.fp, ra.n_neutral, rb.fp, rb.n_neutral, conf)
        m = _newcombe(ra.fn, ra.n_biased, rb.fn, rb.n_biased, conf)
        rows.append({"system": s, "fpr_diff": f[0], "fpr_diff_lo": f[1], "fpr_diff_hi": f[2],
                     "fnr_diff": m[0], "fnr_diff_lo": m[1], "fnr_diff_hi": m[2]})
    out = pd.DataFrame(rows)
    out.attrs.update(a=a, b=b, confidence=conf)
    return out
