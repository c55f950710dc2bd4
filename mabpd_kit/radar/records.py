"""RADAR's records: one claim's debate (:class:`RadarResult`, which the debate and the Judge write) and a batch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mabpd_kit import runs
from mabpd_kit.radar.evidence import Evidence, Turn
from mabpd_kit.radar.replies import ReplyNote
from mabpd_kit.radar.stopping import RoundState, StopDecision, Trajectory
from mabpd_kit.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["RadarResult", "RadarResults"]


class RadarResult(BaseModel):
    """Everything about one claim's debate: turns, Judge states, stopping decisions and usage."""

    id: str
    claim: str
    gold: str | None = None
    system: str = "radar"
    label: str | None = None
    rounds_run: int = 0
    source: str = Field("rule", description="the rounds' probability sources, joined by '+' (e.g. logprobs+one_hot); "
                        "'unknown' before the first round")
    offline: bool = True
    evidence_mode: str = Field("gold", description="retrieved (shared BM25 pool) or gold (the claim's own sentences)")
    evidence: list[Evidence] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    states: list[RoundState] = Field(default_factory=list)
    decisions: list[StopDecision] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    judge_notes: list[ReplyNote] = Field(default_factory=list, description="empty or refusing Judge replies")
    usage: Usage = Field(default_factory=Usage, description="LLM calls and tokens of this debate (zero offline)")
    failed: bool = False
    error: str | None = None

    @property
    def correct(self) -> bool | None:
        return None if self.gold is None or self.label is None else self.label == self.gold

    @property
    def stop(self) -> StopDecision | None:
        """The decision that ended the debate."""
        return self.decisions[-1] if self.decisions else None

    def trajectory(self, max_rounds: int = 3) -> Trajectory:
        """The Judge's states as a :class:`~mabpd_kit.radar.stopping.Trajectory` (for offline replay)."""
        return Trajectory(id=self.id, rounds=tuple(self.states), gold=self.gold, max_rounds=max_rounds,
                          meta={"system": self.system})

    def transcript(self) -> str:
        """The debate as readable text (with each round's probability source)."""
        out = []
        for t in self.turns:
            note = f" [{t.note}]" if t.note else ""
            out.append(f"Round {t.round} · {t.stage} · {t.agent.title()}{note}:\n{t.text}\n")
        for st, d in zip(self.states, self.decisions):
            probs = ", ".join(f"{k} {v:.2f}" for k, v in st.label_probs.items())
            s = "n/a" if math.isnan(d.s) else f"{d.s:+.2f}"
            out.append(f"Judge after round {d.round} ({st.source}): {probs}; s = {s}, c = {d.c:.2f} -> "
                       f"{'STOP' if d.stop else 'CONTINUE'} ({d.reason})")
        for n in self.judge_notes:
            out.append(f"Judge reply ({n.question}, round {n.round}) was {n.note}: {n.text[:80]!r}")
        return "\n".join(out)

    def counts(self) -> dict[str, int]:
        """one_hot_rounds, empty_turns, refusal_turns (debaters), judge_empty, judge_refusals (Judge replies)."""
        return dict(one_hot_rounds=sum(st.one_hot for st in self.states),
                    empty_turns=sum(t.note == "empty" for t in self.turns),
                    refusal_turns=sum(t.note == "refusal" for t in self.turns),
                    judge_empty=sum(n.note == "empty" for n in self.judge_notes),
                    judge_refusals=sum(n.note == "refusal" for n in self.judge_notes))

    def row(self) -> dict[str, Any]:
        """One frame row: id, system, gold, label, pred, correct, rounds, stop, s, c, source, counts, usage."""
        d = self.stop
        return dict(id=self.id, system=self.system, gold=self.gold, label=self.label, pred=self.label,
                    correct=self.correct, rounds=self.rounds_run, stop_reason=d.reason if d else None,
                    s=d.s if d else None, c=d.c if d else None, source=self.source, evidence_mode=self.evidence_mode,
                    **self.counts(), **self.usage.row(), failed=self.failed, error=self.error)


class RadarResults(runs.Results[RadarResult]):
    """The debates of a batch, in input order: a row per claim (``to_frame``) or per Judge state."""

    def __init__(self, records: Sequence[RadarResult], *, labels: Sequence[str] = ("TRUE", "HALF-TRUE", "FALSE"),
                 **kwargs: Any) -> None:
        super().__init__(records, **kwargs)
        self.labels = tuple(labels)

    def metrics(self) -> dict[str, float]:
        """n, failed, accuracy, macro F1, HALF-TRUE F1, mean rounds, reply notes, calls and tokens."""
        from mabpd_kit import metrics

        base = super().metrics()
        out: dict[str, float] = dict(n=base["n"], failed=base["failed"])
        ok = [r for r in self.records if not r.failed and r.gold is not None and r.label is not None]
        if ok:
            y, p, labels = [r.gold for r in ok], [r.label for r in ok], list(self.labels)
            out.update(accuracy=metrics.accuracy(y, p), macro_f1=metrics.macro_f1(y, p, labels=labels),
                       half_true_f1=metrics.per_class_f1(y, p, labels=labels).get("HALF-TRUE", float("nan")))
        rounds = [r.rounds_run for r in self.records]
        out["mean_rounds"] = float(sum(rounds) / len(rounds)) if rounds else float("nan")
        counts = [r.counts() for r in self.records]
        for key in ("one_hot_rounds", "empty_turns", "refusal_turns", "judge_empty", "judge_refusals"):
            out[key] = sum(c[key] for c in counts)
        out.update({k: base[k] for k in ("calls", "prompt_tokens", "completion_tokens")})
        return out

    def rounds_frame(self) -> pd.DataFrame:
        """One row per (claim, round): id, gold, round, sources, s, c, label, stop, reason, one_hot."""
        import pandas as pd

        rows = []
        for r in self.records:
            for st, d in zip(r.states, r.decisions):
                rows.append(dict(id=r.id, gold=r.gold, round=st.round, source=st.source,
                                 verdict_source=st.sources.get("verdict"), continue_source=st.sources.get("continue"),
                                 s=d.s, c=d.c, label=d.label, stop=d.stop, reason=d.reason, one_hot=st.one_hot))
        return pd.DataFrame(rows, columns=["id", "gold", "round", "source", "verdict_source", "continue_source",
                                           "s", "c", "label", "stop", "reason", "one_hot"])
