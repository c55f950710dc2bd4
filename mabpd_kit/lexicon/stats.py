"""Was a lexicon built independently of a labelled corpus's labels? (SPEC 2, the paper's appendix E.)

Pearson r between band and bias rate over the terms present, against its critical value: the check can
reveal fitting, never prove its absence (at large n real knowledge fails it too); provenance does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mabpd_kit.lexicon.match import Lexicon

__all__ = ["IndependenceResult", "critical_r", "independence"]


def independence(lex: Lexicon, texts: Sequence[str], labels: Sequence[Any], *, alpha: float = 0.05) -> IndependenceResult:
    """Terms absent from every record, and Pearson r (band vs bias rate) with its two-sided ``alpha`` critical
    value. ``labels``: 1/0, True/False or "biased"/"neutral"."""
    import numpy as np
    import pandas as pd

    if len(texts) != len(labels):
        raise ValueError(f"{len(texts)} texts but {len(labels)} labels")
    y = np.array([_as_binary(v) for v in labels], dtype=float)
    records: dict[str, set[int]] = {t.term: set() for t in lex.terms}
    for i, text in enumerate(texts):
        for m in lex.occurrences(text if isinstance(text, str) else ""):
            records[m.term].add(i)
    rows = []
    for t in lex.terms:
        idx = sorted(records[t.term])
        n_b = int(y[idx].sum()) if idx else 0
        rows.append({"term": t.term, "category": t.category, "band": t.band, "n_records": len(idx),
                     "n_biased": n_b, "bias_rate": n_b / len(idx) if idx else float("nan")})
    frame = pd.DataFrame(rows, columns=["term", "category", "band", "n_records", "n_biased", "bias_rate"])
    present = frame[frame["n_records"] > 0]
    n = len(present)
    r, p, r_crit = _pearson_with_critical(present["band"].to_numpy(float), present["bias_rate"].to_numpy(float),
                                          alpha)
    if np.isnan(r):
        verdict, independent = f"undetermined: r is not defined for {n} present term(s) or constant values", None
    elif abs(r) < r_crit:
        verdict = (f"independent: |r| = {abs(r):.3f} < {r_crit:.3f}, the two-sided {alpha:.0%} critical value "
                   f"for n = {n}; term scores do not track this corpus's labels")
        independent = True
    else:
        verdict = (f"not independent: |r| = {abs(r):.3f} >= {r_crit:.3f}, the two-sided {alpha:.0%} critical value "
                   f"for n = {n}; term scores track this corpus's labels. Fitting to the labels produces this, "
                   "but so does a lexicon that encodes real bias knowledge when n is large: the test cannot "
                   "tell them apart, provenance (seeds written without labels) must")
        independent = False
    n_terms = len(frame)
    return IndependenceResult(n_records=len(texts), bias_rate=float(y.mean()) if len(y) else float("nan"),
                              n_terms=n_terms, n_absent=n_terms - n,
                              share_absent=(n_terms - n) / n_terms if n_terms else float("nan"), n=n, r=r,
                              p_value=p, r_critical=r_crit, alpha=alpha, independent=independent, verdict=verdict,
                              frame=frame)


@dataclass(frozen=True)
class IndependenceResult:
    """Outcome of :meth:`Lexicon.independence`; ``frame`` has one row per term."""

    n_records: int
    bias_rate: float
    n_terms: int
    n_absent: int
    share_absent: float
    n: int
    r: float
    p_value: float
    r_critical: float
    alpha: float
    independent: bool | None
    verdict: str
    frame: pd.DataFrame

    def summary(self) -> dict[str, Any]:
        """The figures without the per-term table (for printing and reports)."""
        return {k: getattr(self, k) for k in ("n_records", "bias_rate", "n_terms", "n_absent", "share_absent", "n",
                                              "r", "p_value", "r_critical", "alpha", "independent", "verdict")}

    def __repr__(self) -> str:
        return (f"IndependenceResult(terms absent {self.n_absent}/{self.n_terms} = {self.share_absent:.1%}, "
                f"r = {self.r:+.3f}, critical {self.r_critical:.3f} at n = {self.n}: {self.verdict.split(':')[0]})")


def critical_r(n: int, alpha: float = 0.05) -> float:
    """Two-sided critical value of Pearson r for ``n`` pairs: ``t* / sqrt(n - 2 + t*^2)``."""
    if n < 3:
        return float("nan")
    from scipy import stats

    t = float(stats.t.ppf(1 - alpha / 2, n - 2))
    return t / (n - 2 + t * t) ** 0.5


def _pearson_with_critical(x: Any, y: Any, alpha: float) -> tuple[float, float, float]:
    """(r, two-sided p-value, critical r); NaNs when r is undefined."""
    import numpy as np

    n = len(x)
    r_crit = critical_r(n, alpha)
    if n < 3 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan"), float("nan"), r_crit
    from scipy import stats

    r = float(np.corrcoef(x, y)[0, 1])
    r = max(-1.0, min(1.0, r))
    if abs(r) == 1.0:
        return r, 0.0, r_crit
    t = r * ((n - 2) / (1 - r * r)) ** 0.5
    return r, float(2 * stats.t.sf(abs(t), n - 2)), r_crit


def _as_binary(v: Any) -> int:
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("biased", "bias", "1", "true", "yes"):
            return 1
        if low in ("neutral", "unbiased", "non-biased", "0", "false", "no"):
            return 0
        raise ValueError(f"label {v!r} is not biased/neutral or 1/0")
    return int(bool(v))
