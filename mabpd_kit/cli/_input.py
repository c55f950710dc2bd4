"""Reading a user's text file for the CLI: one decoder with the API, clear refusals for what is not text."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["TABULAR", "read_text", "text_items"]

#: Suffixes of tabular files: refused (analysing their header as a sentence helps nobody).
TABULAR = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet", ".xlsx", ".xls", ".feather")


def read_text(name: str, *, lines_option: str = "--lines") -> str:
    """The text of file ``name`` (``-`` = stdin), decoded as :func:`mabpd_kit.text.decode` does; a directory, a
    tabular, binary or missing file is a one-line ``ValueError`` / ``FileNotFoundError`` saying what to do.
    ``lines_option``: how the command takes one text per line (named in the messages; "" when it always does)."""
    from mabpd_kit.text import decode, looks_binary
    if name == "-":
        stream = getattr(sys.stdin, "buffer", None)
        raw = stream.read() if stream is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
        where = "stdin"
    else:
        path = Path(name)
        if path.is_dir():
            per_line = f" (one text per line with {lines_option})" if lines_option else " (one text per line)"
            raise ValueError(f"{path} is a directory, which is not supported yet: pass a file{per_line}")
        if not path.exists():
            raise FileNotFoundError(f"no such file: {path}")
        if path.suffix.lower() in TABULAR:
            then = (f" and pass {lines_option} (or, in Python, Pipeline().analyze_many(df['text']))"
                    if lines_option else "")
            raise ValueError(f"{path.name}: tabular input ({path.suffix}) is not supported yet: save the text "
                             f"column as a .txt file, one text per line{then}")
        raw, where = path.read_bytes(), str(path)
    if looks_binary(raw):
        raise ValueError(f"{where} looks like a binary file, not text: pass a plain-text file (UTF-8 or Latin-1)")
    return decode(raw)


def text_items(name: str, lines: bool) -> list[str]:
    """The items of file ``name``: every non-blank line with ``lines``, else the whole text.
    A file with no text at all raises ``ValueError("no text in FILE")``."""
    raw = read_text(name)
    if not raw.strip():
        raise ValueError(f"no text in {'stdin' if name == '-' else name}")
    return [ln for ln in raw.splitlines() if ln.strip()] if lines else [raw]
