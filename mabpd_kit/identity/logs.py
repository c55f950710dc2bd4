"""Debate logs (:data:`LOG_COLUMNS`, one row per condition, question, agent, round): the format every
measure reads."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd
from pydantic import BaseModel, Field, ValidationError

from mabpd_kit.types import Usage

if TYPE_CHECKING:  # pragma: no cover
    from mabpd_kit.runs import Results

__all__ = ["CONDITIONS", "KEY", "LOG_COLUMNS", "Condition", "DebateRecord", "LogRow", "log_frame", "read_logs",
           "write_logs"]

Condition = Literal["vanilla", "anonymised"]
CONDITIONS: tuple[Condition, Condition] = ("vanilla", "anonymised")

LOG_COLUMNS: tuple[str, ...] = (
    "condition", "question", "agent", "round", "answer", "correct", "parsed", "parse_method",
    "gold", "raw", "error", "source", "model", "prompt_tokens", "completion_tokens", "latency_s", "cached",
)
"""Columns of a debate log; one row per (condition, question, agent, round)."""

KEY = ["condition", "question", "agent", "round"]
"""What identifies a log row."""


class LogRow(BaseModel):
    """One agent's answer in one round: ``answer`` None when unparsed (``raw`` keeps it) or failed (``error``)."""

    condition: str
    question: str
    agent: int
    round: int
    answer: str | None
    correct: bool
    parsed: bool
    parse_method: str = ""
    gold: str = ""
    raw: str = ""
    error: str | None = None
    source: Literal["llm", "simulator"] = "llm"
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False


class DebateRecord(BaseModel):
    """One question debated under one condition (one checkpoint line); ``failed`` when a call failed."""

    id: str
    condition: str = ""
    question: str = ""
    failed: bool = False
    error: str | None = None
    usage: Usage = Usage()
    rows: list[LogRow] = Field(default_factory=list)

    def row(self) -> dict[str, Any]:
        """One flat row per question: answers, unparsed, failed calls, last-round accuracy, usage."""
        last = max((r.round for r in self.rows), default=None)
        final = [r.correct for r in self.rows if r.round == last]
        return {
            "id": self.id, "condition": self.condition, "question": self.question, "failed": self.failed,
            "error": self.error, "n_answers": len(self.rows), "n_unparsed": sum(not r.parsed and r.error is None for r in self.rows),
            "n_failed_calls": sum(r.error is not None for r in self.rows),
            "final_accuracy": sum(final) / len(final) if final else float("nan"),
        } | self.usage.row()


def log_frame(rows: Iterable[LogRow | dict[str, Any]]) -> pd.DataFrame:
    """Log rows as a frame with :data:`LOG_COLUMNS`, sorted by condition, question, agent, round."""
    recs = [dict(r.__dict__) if isinstance(r, LogRow) else r.model_dump() if isinstance(r, BaseModel) else r
            for r in rows]  # a LogRow's fields are flat: its __dict__ is its dump, without the cost
    df = pd.DataFrame.from_records(recs, columns=list(LOG_COLUMNS))
    if len(df):
        df = df.sort_values(KEY, kind="stable").reset_index(drop=True)
    return df


def _rows_of_line(line: str) -> list[LogRow]:
    """The rows of one JSONL line: a runner checkpoint line or a single :class:`LogRow`, else ValueError."""
    obj = json.loads(line)
    if isinstance(obj, dict) and "record" in obj:
        return DebateRecord.model_validate(obj["record"]).rows
    return [LogRow.model_validate(obj)]


def read_logs(path: str | Path) -> pd.DataFrame:
    """A log file or a run's checkpoint as a DataFrame (torn lines skipped with a warning; last row wins)."""
    rows: dict[tuple, dict[str, Any]] = {}
    bad = 0
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            found = _rows_of_line(line)
        except (ValueError, TypeError, ValidationError):
            bad += 1
            continue
        for r in found:
            rec = r.model_dump()
            rows[tuple(rec[k] for k in KEY)] = rec
    if bad:
        print(f"identity: skipped {bad} unreadable line(s) in {path}", file=sys.stderr)
    return log_frame(rows.values())


def write_logs(logs: pd.DataFrame | Results, path: str | Path) -> Path:
    """Write a log (a frame with :data:`LOG_COLUMNS`, or a run's results) as JSONL, one :class:`LogRow` a line."""
    frame = logs if isinstance(logs, pd.DataFrame) else logs.to_frame()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for rec in frame.loc[:, [c for c in LOG_COLUMNS if c in frame.columns]].to_dict("records"):
            # a missing value is None where a row may hold None (answer, error), else the default
            clean = {k: (None if _missing(v) else v) for k, v in rec.items() if not _missing(v) or k in ("answer", "error")}
            fh.write(LogRow.model_validate(clean).model_dump_json() + "\n")
    return p


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)
