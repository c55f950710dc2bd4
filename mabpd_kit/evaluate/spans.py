"""Span scores of MABPD decisions against annotated biased words (BABE's ``biased_words``), by token overlap
(:mod:`mabpd_kit.metrics.spans`, docs/evaluation.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit.metrics.spans import span_scores

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SCOPES", "agent_spans", "decision_spans", "span_table"]

#: the scopes of :func:`span_table`: the sentences labelled biased, and every sentence
SCOPES = ("biased-gold", "all")


def agent_spans(decision: Any, agent: str) -> list[str]:
    """The texts of the valid bias spans of ``agent``'s round-1 report, whatever its verdict (none if it did not
    report)."""
    rep = (getattr(decision, "reports", None) or {}).get(agent)
    return [] if rep is None else [s.text for s in rep.spans if s.valid]


def decision_spans(decision: Any) -> list[str]:
    """The texts of the valid spans behind the final label: the biased evidence of a biased decision
    (:func:`mabpd_kit.mabpd.evidence.decision_evidence`, as the verifier gets them), none otherwise."""
    from mabpd_kit.mabpd.evidence import decision_evidence
    if getattr(decision, "failed", False) or decision.label != "biased":
        return []
    return [s.text for s in decision_evidence(decision) if s.valid]


def _aligned(decisions: Sequence[Any], ids: Sequence[Any] | None) -> list[Any]:
    """The decisions in the order of ``ids`` (by id), or as given."""
    decisions = list(decisions)
    if ids is None:
        return decisions
    by_id = {str(d.id): d for d in decisions}
    missing = [i for i in ids if str(i) not in by_id]
    if missing:
        raise ValueError(f"{len(missing)} items have no decision, e.g. {missing[0]!r}")
    return [by_id[str(i)] for i in ids]


def _agents(decisions: Sequence[Any]) -> list[str]:
    """The agents that reported on any item, in roster order (then any others, in order of appearance)."""
    from mabpd_kit import roster
    seen: dict[str, None] = {}
    for d in decisions:
        for a in getattr(d, "reports", None) or {}:
            seen.setdefault(a, None)
    order = list(roster.names())
    return [a for a in order if a in seen] + [a for a in seen if a not in order]


def span_table(systems: Mapping[str, Sequence[Any]], gold_words: Sequence[Sequence[str]], labels: Sequence[Any], *,
               ids: Sequence[Any] | None = None, ci: bool = True, n_resamples: int | None = None,
               seed: int | None = None) -> pd.DataFrame:
    """Token precision / recall / F1 of the spans against ``gold_words``, per agent (of the first system) and per
    system's decisions, for each scope (``biased-gold``, ``all``), with a bootstrap interval of F1 over sentences
    (``ci=False``: NaN). ``ids`` aligns the decisions by id."""
    import pandas as pd
    if not systems:
        raise ValueError("give at least one system")
    y = np.array([1 if v in (1, True, "biased", "1") else 0 for v in labels], dtype=int)
    gold = [list(g) if g is not None and not isinstance(g, str) else ([g] if g else []) for g in gold_words]
    if len(gold) != len(y):
        raise ValueError(f"gold_words has {len(gold)} items, labels {len(y)}")
    masks = {"biased-gold": y == 1, "all": np.ones(len(y), dtype=bool)}
    aligned = {name: _aligned(ds, ids) for name, ds in systems.items()}
    for name, ds in aligned.items():
        if len(ds) != len(y):
            raise ValueError(f"{name!r} has {len(ds)} decisions for {len(y)} items")
    first = next(iter(aligned))
    rows: list[dict[str, Any]] = []

    def add(system: str, what: str, pred: list[list[str]]) -> None:
        for scope in SCOPES:
            s = span_scores(pred, gold, masks[scope], ci=ci, n_resamples=n_resamples, seed=seed)
            rows.append({"system": system, "spans": what, "scope": scope, "n_sentences": s.n_sentences, "tp": s.tp,
                         "n_pred": s.n_pred, "n_gold": s.n_gold, "precision": s.precision, "recall": s.recall,
                         "f1": s.f1, "f1_lo": s.f1_lo, "f1_hi": s.f1_hi})

    for a in _agents(aligned[first]):
        add(first, f"{a} agent", [agent_spans(d, a) for d in aligned[first]])
    for name, ds in aligned.items():
        add(name, "decision", [decision_spans(d) for d in ds])
    return pd.DataFrame(rows, columns=["system", "spans", "scope", "n_sentences", "tp", "n_pred", "n_gold",
                                       "precision", "recall", "f1", "f1_lo", "f1_hi"])
