"""MABPD's Structured Argument Debate measured as an identity-bias debate (SAD transcripts -> identity logs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from mabpd_kit.config import Config
from mabpd_kit.identity.measures import IdentityReport, identity_report

if TYPE_CHECKING:  # pragma: no cover
    from mabpd_kit.llm import LLM
    from mabpd_kit.mabpd import Decision

__all__ = ["SAD_LOG_COLUMNS", "debate_log", "sad_debate_logs", "sad_identity_report"]

SAD_LOG_COLUMNS = ["question", "agent", "round", "answer", "correct"]
"""The columns of :func:`debate_log`: what the identity measures read."""


def debate_log(decision: Decision) -> pd.DataFrame:
    """One row per (agent, SAD round) of a decision; a decision not debated gives an empty frame."""
    rows: list[dict[str, Any]] = []
    if decision.debate:
        gold = None if decision.gold is None else ("biased" if decision.gold == 1 else "neutral")
        for rnd in decision.debate.rounds:
            for w in rnd.arguments:
                rows.append({"question": decision.id, "agent": w.agent, "round": rnd.index, "answer": w.verdict,
                             "correct": None if gold is None else w.verdict == gold})
    return pd.DataFrame(rows, columns=SAD_LOG_COLUMNS)


def sad_debate_logs(texts: Sequence[str], gold: Sequence[int] | None = None, *, config: Config | None = None,
                    llm: LLM | None = None, ids: Sequence[str] | None = None) -> pd.DataFrame:
    """Both debate logs of a pipeline run, SAD labelled and anonymised, with a ``condition`` column."""
    from mabpd_kit.mabpd import Pipeline

    cfg = config or Config()
    parts = []
    for cond, anon in (("vanilla", False), ("anonymised", True)):
        p = Pipeline(config=cfg.replace(**{"sad.anonymise": anon}), llm=llm)
        res = p.analyze_many(list(texts), ids=ids, gold=gold, progress=False)
        logs = [debate_log(d) for d in res.decisions if d.debate]
        frame = pd.concat(logs, ignore_index=True) if logs else pd.DataFrame(columns=SAD_LOG_COLUMNS)
        parts.append(frame.assign(condition=cond))
    return pd.concat(parts, ignore_index=True)


def sad_identity_report(vanilla: pd.DataFrame, anonymised: pd.DataFrame | None = None, *, ci: bool = True,
                        config: Config | None = None) -> IdentityReport:
    """Is SAD itself sycophantic? The identity report of both conditions' debate logs."""
    parts = [vanilla.assign(condition="vanilla")]
    if anonymised is not None:
        parts.append(anonymised.assign(condition="anonymised"))
    logs = pd.concat(parts, ignore_index=True)
    return identity_report(logs, ci=ci, config=config)
