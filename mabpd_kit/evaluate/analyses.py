"""The MABPD paper's own analyses (appendices O and P), as pure functions over decision traces.

Each figure is counted from :class:`mabpd_kit.mabpd.Decision` traces with a percentile bootstrap interval over
items; failed decisions are left out of every base, items without gold out of the figures that need it.
Definitions: docs/evaluation.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit.metrics import bootstrap_ci, fleiss_kappa, point_biserial
from mabpd_kit.metrics.classification import _to_binary_value as _bin  # one home for label spellings

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PAPER", "Agreement", "FailureModes", "Independence", "PaperAnalyses", "Rate", "agent_independence",
           "annotator_uncertainty", "failure_modes", "human_agreement", "paper_analyses", "trace_flags"]

#: the paper's figures (MABPD appendices O and P; the kappa of its human comparison)
PAPER = {"disagreement": 0.38, "r_uncertainty": 0.62, "echo_chamber": 0.04, "sycophancy": 0.11, "kappa": 0.66}

DEFINITIONS = {
    "disagreement": "share of decided items whose agents' round-1 verdicts are not all equal",
    "kappa_agents": "Fleiss' kappa of the agents' round-1 verdicts (agents as raters)",
    "r_uncertainty": "point-biserial r of disagreement with the minority share of annotator labels",
    "convergence": "debated items whose round-1 verdicts were split and whose last (later) round is unanimous",
    "echo_chamber": "debated items that converged to a unanimous verdict the gold label contradicts",
    "wrong_uphold": "verified biased decisions the verifier upheld although gold says neutral",
    "sycophancy": "verified biased decisions wrongly upheld (gold neutral) where the BiasAgent's round-1 verdict was biased",
    "ungrounded_uphold": "upheld biased decisions without a valid span (SPEC 1.7: must be 0)",
    "kappa": "Fleiss' kappa of two raters: the system's label and the gold (human majority) label",
}


@dataclass(frozen=True)
class Rate:
    """``events`` of ``base`` items, their share ``rate`` and its bootstrap interval (NaN when base is 0)."""

    name: str
    events: int
    base: int
    rate: float
    lo: float
    hi: float
    paper: float | None = None
    definition: str = ""

    def __str__(self) -> str:
        if not self.base:
            return f"{self.name}: no items in the base"
        paper = "" if self.paper is None else f" (paper {self.paper:.0%})"
        return f"{self.name}: {self.events} of {self.base} = {self.rate:.1%} [{self.lo:.1%}, {self.hi:.1%}]{paper}"


def _rate(name: str, flags: Any, *, n_resamples: int | None, seed: int | None) -> Rate:
    x = np.asarray(flags, dtype=float)
    if len(x) == 0:
        return Rate(name, 0, 0, float("nan"), float("nan"), float("nan"), PAPER.get(name), DEFINITIONS[name])
    est, lo, hi = bootstrap_ci(x, np.mean, n_resamples=n_resamples, seed=seed)
    return Rate(name, int(x.sum()), len(x), est, lo, hi, PAPER.get(name), DEFINITIONS[name])


def _safe(fn: Any) -> Any:
    """A statistic that gives NaN where it is undefined on a resample (one group or category only)."""
    def stat(a: Any) -> float:
        try:
            return fn(a)
        except ValueError:
            return float("nan")
    return stat


def trace_flags(decisions: Sequence[Any]) -> pd.DataFrame:
    """One row per decision with the trace facts every figure is counted from (nullable booleans, <NA> where a
    flag does not apply)."""
    import pandas as pd
    rows = []
    for d in decisions:
        gold = _bin(d.gold)
        ok = not d.failed
        reports = (d.reports or {}) if ok else {}
        verdicts = [r.verdict for r in reports.values()]
        rounds = d.debate.rounds if ok and d.debate is not None else []
        split = bool(rounds) and not rounds[0].agreed
        unanimous = len(rounds) > 1 and rounds[-1].agreed
        final = rounds[-1].arguments[0].verdict if unanimous and rounds[-1].arguments else None
        converged = split and unanimous
        v = d.verifier if ok else None
        verified = v is not None and v.check != "not_run"
        upheld = verified and not v.overturned
        wrong = upheld and gold == 0
        bias_rep = reports.get("bias")
        rows.append({
            "id": str(d.id), "gold": gold, "pred": d.pred, "failed": bool(d.failed), "n_agents": len(verdicts),
            "disagree": (len(set(verdicts)) > 1) if len(verdicts) >= 2 else None,
            "debated": bool(rounds) if ok else None, "rounds": len(rounds),
            "split_start": split if rounds else None, "unanimous_end": unanimous if rounds else None,
            "converged": converged if rounds else None,
            "echo_chamber": (converged and _bin(final) != gold) if rounds and gold is not None else None,
            "verified": verified if ok else None, "upheld": upheld if verified else None,
            "wrong_uphold": wrong if verified and gold is not None else None,
            "sycophancy": (wrong and bias_rep is not None and bias_rep.verdict == "biased")
            if verified and gold is not None else None,
            "ungrounded_uphold": (v.span is None or not v.span.valid) if upheld else None,
        })
    columns = ["id", "gold", "pred", "failed", "n_agents", "disagree", "debated", "rounds", "split_start",
               "unanimous_end", "converged", "echo_chamber", "verified", "upheld", "wrong_uphold", "sycophancy",
               "ungrounded_uphold"]
    flags = {c: "boolean" for c in columns[5:] if c != "rounds"}
    return pd.DataFrame(rows, columns=columns).astype({**flags, "gold": "Int64"})


def _present(col: pd.Series) -> np.ndarray:
    return col.dropna().astype(bool).to_numpy()


def _labels(annotation: Any) -> list[int]:
    """An item's usable annotator labels as 0/1 (none for a missing or a one-string annotation)."""
    if annotation is None or isinstance(annotation, (str, float)):
        return []
    return [x for x in (_bin(v) for v in annotation) if x is not None]


def annotator_uncertainty(annotations: Sequence[Any]) -> np.ndarray:
    """Per item, the minority share of its annotator-level labels: min(#biased, #neutral) / #labels
    (NaN for an item with fewer than two usable labels)."""
    out = np.full(len(annotations), np.nan)
    for i, b in enumerate(map(_labels, annotations)):
        if len(b) >= 2:
            out[i] = min(sum(b), len(b) - sum(b)) / len(b)
    return out


@dataclass(frozen=True)
class Independence:
    """Appendix O: disagreement before debate, the agents' kappa and, with annotator labels, its
    point-biserial r with annotator uncertainty (``r`` None and ``note`` saying why when not computable)."""

    disagreement: Rate
    agents: tuple[str, ...]
    kappa_agents: float
    r: float | None = None
    r_lo: float = float("nan")
    r_hi: float = float("nan")
    n_r: int = 0
    note: str = ""


def _agents_table(decisions: Sequence[Any]) -> tuple[tuple[str, ...], np.ndarray]:
    """The round-1 verdicts as a Fleiss count table (#neutral, #biased), items with the most common agents."""
    sets = [tuple(d.reports) for d in decisions if not d.failed and len(d.reports or {}) >= 2]
    if not sets:
        return (), np.zeros((0, 2), dtype=int)
    common = max(set(sets), key=sets.count)
    rows = [[sum(d.reports[a].verdict == "neutral" for a in common), sum(d.reports[a].verdict == "biased" for a in common)]
            for d in decisions if not d.failed and tuple(d.reports or {}) == common]
    return common, np.asarray(rows, dtype=int)


def agent_independence(decisions: Sequence[Any], uncertainty: Sequence[float] | None = None, *,
                       annotations: Sequence[Any] | None = None, n_resamples: int | None = None,
                       seed: int | None = None) -> Independence:
    """Appendix O from the round-1 reports (:class:`Independence`). ``uncertainty[i]`` (NaN = unknown) or
    ``annotations[i]`` (annotator-level labels of item i, read by :func:`annotator_uncertainty`), aligned
    with ``decisions``, give the point-biserial r; without either, r is None."""
    decisions = list(decisions)
    flags = trace_flags(decisions)
    disagreement = _rate("disagreement", _present(flags["disagree"]), n_resamples=n_resamples, seed=seed)
    agents, table = _agents_table(decisions)
    kappa = _safe(fleiss_kappa)(table) if len(table) else float("nan")
    if uncertainty is None and annotations is not None:
        uncertainty = annotator_uncertainty(annotations)
    if uncertainty is None:
        return Independence(disagreement, agents, kappa, note="the items carry no annotator-level labels")
    u = np.asarray(uncertainty, dtype=float)
    if len(u) != len(decisions):
        raise ValueError(f"uncertainty has {len(u)} entries for {len(decisions)} decisions")
    keep = flags["disagree"].notna().to_numpy() & np.isfinite(u)
    x = flags["disagree"].to_numpy(dtype=float, na_value=np.nan)[keep]
    pair = np.column_stack([x, u[keep]])
    stat = _safe(lambda a: point_biserial(a[:, 0], a[:, 1]))
    if len(pair) < 3 or np.isnan(stat(pair)):
        return Independence(disagreement, agents, kappa, n_r=len(pair),
                            note="r undefined: too few items, one group only, or constant uncertainty")
    r, lo, hi = bootstrap_ci(pair, stat, n_resamples=n_resamples, seed=seed)
    return Independence(disagreement, agents, kappa, r=r, r_lo=lo, r_hi=hi, n_r=len(pair))


@dataclass(frozen=True)
class FailureModes:
    """Appendix P: convergence and echo-chamber convergence over debates, wrong upholds and verifier
    sycophancy over verified decisions, and the count of upholds without a valid span (must be 0)."""

    convergence: Rate
    echo_chamber: Rate
    wrong_uphold: Rate
    sycophancy: Rate
    ungrounded_uphold: int
    n_debates: int
    n_verified: int
    n_upheld: int = 0


def failure_modes(decisions: Sequence[Any], *, n_resamples: int | None = None, seed: int | None = None) -> FailureModes:
    """Appendix P from the SAD rounds and the verifier's report of each decision (:class:`FailureModes`)."""
    f = trace_flags(list(decisions))
    kw = {"n_resamples": n_resamples, "seed": seed}
    debated = f["debated"].fillna(False)
    rates = [_rate(name, _present(f[name]), **kw) for name in ("echo_chamber", "wrong_uphold", "sycophancy")]
    return FailureModes(_rate("convergence", _present(f.loc[debated, "converged"]), **kw), *rates,
                        ungrounded_uphold=int(_present(f["ungrounded_uphold"]).sum()), n_debates=int(debated.sum()),
                        n_verified=int(f["verified"].fillna(False).sum()),
                        n_upheld=int(f["upheld"].fillna(False).sum()))


@dataclass(frozen=True)
class Agreement:
    """Fleiss' kappa of the system with the human majority (two raters), with its interval; with
    annotator-level labels, the annotators' kappa and the kappa with the system as one more rater."""

    kappa: float
    lo: float
    hi: float
    n: int
    kappa_annotators: float | None = None
    kappa_with_system: float | None = None
    n_annotated: int = 0
    raters: int = 0
    note: str = ""


def _two_col(a: np.ndarray) -> np.ndarray:
    """0/1 labels, items x raters -> the Fleiss count table (#0, #1)."""
    k = a.sum(axis=1)
    return np.column_stack([a.shape[1] - k, k])


def _kappa_of_counts(m: int) -> Any:
    """Fleiss' kappa of binary labels from each item's count ``k`` of raters (of ``m``) saying 1."""
    j = np.arange(m + 1)
    agree = (j**2 + (m - j) ** 2 - m) / (m * (m - 1))  # P_i of an item with j ratings of 1

    def kappa(k: np.ndarray) -> float:
        h = np.bincount(k, minlength=m + 1)
        n = h.sum()
        p1 = float((h * j).sum()) / (n * m)
        pe = p1**2 + (1 - p1) ** 2
        return float("nan") if np.isclose(pe, 1.0) else float(((h * agree).sum() / n - pe) / (1 - pe))
    return kappa


def _kappa_ci(a: np.ndarray, *, n_resamples: int | None, seed: int | None) -> tuple[float, float, float]:
    """Fleiss' kappa of 0/1 labels (items x raters) with its bootstrap interval over items."""
    est = _safe(fleiss_kappa)(_two_col(a))
    if np.isnan(est):
        return est, float("nan"), float("nan")
    _, lo, hi = bootstrap_ci(a.sum(axis=1), _kappa_of_counts(a.shape[1]), n_resamples=n_resamples, seed=seed)
    return est, lo, hi


def human_agreement(pred: Sequence[Any], gold: Sequence[Any] | None = None, annotations: Sequence[Any] | None = None, *,
                    n_resamples: int | None = None, seed: int | None = None) -> Agreement:
    """Fleiss' kappa of ``pred`` with the human majority ``gold`` (two raters). Without ``gold`` the majority
    is the annotators' majority vote (ties left out). Items with a missing label are left out."""
    if gold is None and annotations is None:
        raise ValueError("give gold labels or annotator-level annotations")
    p = [_bin(v) for v in pred]
    if gold is not None:
        g = [_bin(v) for v in gold]
    else:
        u = annotator_uncertainty(annotations)  # type: ignore[arg-type]
        g = [None if not np.isfinite(x) or x == 0.5 else int(np.mean(_labels(a)) > 0.5)
             for x, a in zip(u, annotations)]  # type: ignore[arg-type]
    if len(g) != len(p):
        raise ValueError(f"pred has {len(p)} items, gold {len(g)}")
    keep = [i for i in range(len(p)) if p[i] is not None and g[i] is not None]
    pairs = np.array([[g[i], p[i]] for i in keep], dtype=int).reshape(-1, 2)
    stat = _safe(fleiss_kappa)
    k, lo, hi = _kappa_ci(pairs, n_resamples=n_resamples, seed=seed) if len(pairs) >= 2 else (float("nan"),) * 3
    out = Agreement(k, lo, hi, len(pairs), note="" if np.isfinite(k) else "kappa undefined on these items")
    if annotations is None:
        return out
    labelled = [_labels(a) for a in annotations]
    sizes = [len(a) for a in labelled if len(a) >= 2]
    if not sizes:
        return Agreement(**{**out.__dict__, "note": "no item has two or more annotator labels"})
    m = max(set(sizes), key=sizes.count)
    idx = [i for i, a in enumerate(labelled) if len(a) == m and p[i] is not None]
    ann = np.array([labelled[i] for i in idx], dtype=int).reshape(-1, m)
    with_sys = np.column_stack([ann, [p[i] for i in idx]]) if len(idx) else ann
    return Agreement(**{**out.__dict__, "kappa_annotators": stat(_two_col(ann)), "n_annotated": len(idx), "raters": m,
                        "kappa_with_system": stat(_two_col(with_sys))})


@dataclass
class PaperAnalyses:
    """Appendix O and P figures of one system (``system``), every system's kappa with the human majority, and
    ``flags``: that system's :func:`trace_flags` (one row per item: which figure counted it)."""

    system: str
    independence: Independence
    failures: FailureModes
    agreement: dict[str, Agreement] = field(default_factory=dict)
    flags: pd.DataFrame | None = None

    def table(self) -> pd.DataFrame:
        """One row per figure: ``system, analysis, measure, value, lo, hi, events, base, paper, definition``."""
        import pandas as pd
        ind, fm = self.independence, self.failures

        def row(measure: str, value: float, *, system: str = self.system, analysis: str = "agent independence",
                lo: float = float("nan"), hi: float = float("nan"), events: int | None = None, base: int | None = None,
                paper: float | None = None, definition: str | None = None) -> dict[str, Any]:
            return {"system": system, "analysis": analysis, "measure": measure, "value": value, "lo": lo, "hi": hi,
                    "events": events, "base": base, "paper": paper, "definition": definition or DEFINITIONS[measure]}

        def rate_row(analysis: str, r: Rate) -> dict[str, Any]:
            return row(r.name, r.rate, analysis=analysis, lo=r.lo, hi=r.hi, events=r.events, base=r.base,
                       paper=r.paper, definition=r.definition)

        rows = [rate_row("agent independence", ind.disagreement),
                row("kappa_agents", ind.kappa_agents, base=ind.disagreement.base),
                row("r_uncertainty", float("nan") if ind.r is None else ind.r, lo=ind.r_lo, hi=ind.r_hi, base=ind.n_r,
                    paper=PAPER["r_uncertainty"],
                    definition=DEFINITIONS["r_uncertainty"] + (f" ({ind.note})" if ind.note else ""))]
        rows += [rate_row("failure modes", r) for r in (fm.convergence, fm.echo_chamber, fm.wrong_uphold, fm.sycophancy)]
        rows.append(row("ungrounded_uphold", float(fm.ungrounded_uphold), analysis="failure modes",
                        events=fm.ungrounded_uphold, base=fm.n_upheld))
        for name, a in self.agreement.items():
            rows.append(row("kappa", a.kappa, system=name, analysis="human agreement", lo=a.lo, hi=a.hi, base=a.n,
                            paper=PAPER["kappa"]))
            if a.kappa_annotators is not None:
                for measure, value, who in (("kappa_annotators", a.kappa_annotators, ""),
                                            ("kappa_with_system", a.kappa_with_system, " and the system")):
                    rows.append(row(measure, value, system=name, analysis="human agreement", base=a.n_annotated,
                                    definition=f"Fleiss' kappa of {a.raters} annotators{who}"))
        out = pd.DataFrame(rows)
        out[["events", "base"]] = out[["events", "base"]].astype("Int64")
        return out

    def lines(self) -> list[str]:
        """The closing note's lines for these figures."""
        ind, fm = self.independence, self.failures
        out = [f"  paper analyses ({self.system}; 95% bootstrap intervals over items):"]
        if ind.disagreement.base:
            out.append(f"    agents disagree before debate: {_rate_text(ind.disagreement)}; "
                       f"Fleiss kappa of their verdicts {ind.kappa_agents:.3f}")
        else:
            out.append("    agents disagree before debate: not applicable (fewer than two agents reported)")
        if ind.r is not None:
            out.append(f"    point-biserial r with annotator uncertainty {ind.r:+.3f} [{ind.r_lo:+.3f}, {ind.r_hi:+.3f}] "
                       f"(n={ind.n_r}; paper {PAPER['r_uncertainty']:+.2f})")
        else:
            out.append(f"    point-biserial r with annotator uncertainty: not computable, {ind.note} "
                       f"(paper {PAPER['r_uncertainty']:+.2f})")
        out.append(f"    debates {fm.n_debates}: convergence {_rate_text(fm.convergence)}; "
                   f"echo-chamber convergence {_rate_text(fm.echo_chamber)}")
        out.append(f"    verified {fm.n_verified}: wrong upholds {_rate_text(fm.wrong_uphold)}; "
                   f"verifier sycophancy {_rate_text(fm.sycophancy)}; upheld without a valid span: "
                   f"{fm.ungrounded_uphold} of {fm.n_upheld}")
        for name, a in self.agreement.items():
            line = (f"    Fleiss kappa {name} vs human majority {a.kappa:.3f} [{a.lo:.3f}, {a.hi:.3f}] (n={a.n}; paper {PAPER['kappa']:.2f})"
                    if np.isfinite(a.kappa) else f"    Fleiss kappa {name} vs human majority: {a.note}")
            if a.kappa_annotators is not None:
                line += (f"; {a.raters} annotators {a.kappa_annotators:.3f}, with the system "
                         f"{a.kappa_with_system:.3f} (n={a.n_annotated})")
            out.append(line)
        return out


def _rate_text(r: Rate) -> str:
    if not r.base:
        return "no items in the base"
    paper = "" if r.paper is None else f", paper {r.paper:.0%}"
    return f"{r.events}/{r.base} = {r.rate:.1%} [{r.lo:.1%}, {r.hi:.1%}]{paper}"


def paper_analyses(systems: Mapping[str, Sequence[Any]], *, annotations: Sequence[Any] | None = None,
                   n_resamples: int | None = None, seed: int | None = None) -> PaperAnalyses:
    """Appendix O and P figures of the *first* system's decisions, and every system's kappa with the human
    majority (each decision's ``gold``). ``annotations`` (annotator-level labels per item, aligned with the
    first system's decisions) adds the point-biserial r and the annotators' kappa."""
    if not systems:
        raise ValueError("give at least one system")
    name, first = next(iter(systems.items()))
    first = list(first)
    kw = {"n_resamples": n_resamples, "seed": seed}
    agreement = {}
    for n, ds in systems.items():
        ds = list(ds)
        ann = annotations if n == name else None
        agreement[n] = human_agreement([d.pred if not d.failed else 0 for d in ds], [d.gold for d in ds], ann, **kw)
    return PaperAnalyses(system=name, independence=agent_independence(first, annotations=annotations, **kw),
                         failures=failure_modes(first, **kw), agreement=agreement, flags=trace_flags(first))
