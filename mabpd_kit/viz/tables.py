"""A table a student reads: no pandas index, a fixed number of decimals, words for labels, text wrapped; shown
as a small HTML table in a notebook and as plain text anywhere else. It formats, never computes.

>>> import pandas as pd
>>> print(table(pd.DataFrame({"id": ["s1"], "gold": [1], "score": [0.123456], "spans": [["a", "b"]]}),
...             labels=("gold",)))
id   gold score spans
s1 biased 0.123  a, b
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["Table", "table", "LABEL_WORDS"]

#: How a 0/1 gold or predicted label reads in a table (the course's two verdicts).
LABEL_WORDS: Mapping[int, str] = {1: "biased", 0: "neutral"}  # True and False read as 1 and 0
_CELL = "padding:2px 8px;border-bottom:1px solid #e6e6e6;vertical-align:top;"


@dataclass(frozen=True)
class Table:
    """A formatted copy of a frame (every cell a string) and how to show it."""
    frame: pd.DataFrame
    numeric: tuple[str, ...]
    caption: str = ""

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='{_CELL}text-align:{self._align(c)}'>{html.escape(str(c))}</th>"
                       for c in self.frame.columns)
        rows = "".join("<tr>" + "".join(self._td(c, v) for c, v in row.items()) + "</tr>"
                       for _, row in self.frame.iterrows())
        cap = f"<caption style='caption-side:bottom;text-align:left;color:#555'>{html.escape(self.caption)}</caption>"
        return (f"<table class='mabpd-table' style='border-collapse:collapse;font-size:13px'>"
                f"{cap if self.caption else ''}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")

    def _align(self, column: Any) -> str:
        return "right" if column in self.numeric else "left"

    def _td(self, column: Any, value: str) -> str:
        wrap = "" if column in self.numeric else "white-space:normal;max-width:42em;"
        return f"<td style='{_CELL}text-align:{self._align(column)};{wrap}'>{html.escape(value)}</td>"

    def __repr__(self) -> str:
        text = self.frame.to_string(index=False) if len(self.frame.columns) else "(no columns)"
        return f"{text}\n{self.caption}" if self.caption else text

    def __len__(self) -> int:
        return len(self.frame)


def table(frame: pd.DataFrame, *, decimals: int | Mapping[str, int] = 3, labels: Iterable[str] = (), columns: Sequence[str] | None = None,
          rename: Mapping[str, str] | None = None, caption: str = "") -> Table:
    """``frame`` as a student reads it. ``labels``: the 0/1 label columns shown as biased/neutral; ``columns`` picks
    and orders columns; ``rename`` renames them after formatting; floats get ``decimals`` places, or per column with a
    mapping (``{"share": 1}``; others 3), a float column of whole numbers prints as integers."""
    data = frame if columns is None else frame.loc[:, list(columns)]
    label_cols = set(labels)
    numeric = tuple(c for c in data.columns if c not in label_cols and pd.api.types.is_numeric_dtype(data[c])
                    and not pd.api.types.is_bool_dtype(data[c]))
    fixed = dict(decimals) if isinstance(decimals, Mapping) else {}
    default = 3 if isinstance(decimals, Mapping) else decimals
    places = {c: fixed[c] if c in fixed else _places(data[c], default) for c in data.columns}
    shown = pd.DataFrame({c: [_cell(v, places[c], c in label_cols) for v in data[c]] for c in data.columns})
    if rename:
        shown = shown.rename(columns=dict(rename))
        numeric = tuple(rename.get(c, c) for c in numeric)
    return Table(shown, numeric, caption)


def _places(column: pd.Series, decimals: int) -> int:
    """Decimals for a column: none when every value is a whole number (counts stored as floats)."""
    if not pd.api.types.is_float_dtype(column):
        return decimals
    finite = column[column.notna()]
    return 0 if len(finite) and bool((finite == finite.round()).all()) and bool((finite.abs() < 1e15).all()) else decimals


def _cell(value: Any, decimals: int, label: bool) -> str:
    if hasattr(value, "item") and not isinstance(value, str):  # a numpy scalar
        value = value.item()
    if label and isinstance(value, int | float) and value in (0, 1):
        return LABEL_WORDS[int(value)]
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(str(v) for v in value)
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    return str(value)
