"""Case-insensitive regular expressions that run fast on ASCII text.

Python's regex engine folds the case of every character it compares under ``re.IGNORECASE``, which
makes a pattern of words two to three times slower. An ASCII text's lower case has the same length
(so the same offsets), and on it the pattern without ``IGNORECASE`` finds exactly what the
case-insensitive one finds in the text, provided the pattern writes its letters in lower case (checked
when it is built). Other texts use the case-insensitive pattern. A match over the lower case gives the
text's offsets, but its groups hold lower-case text: read the text at the offsets.

>>> rx = Caseless(r"\\bso[- ]called\\b")
>>> [m.span() for m in rx.finditer("The So-Called plan")], bool(rx.search("Ein sogenannter Plan"))
([(4, 13)], False)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["Caseless"]

#: a letter of the pattern itself, outside a backslash escape (``\\b``, ``\\S``, ``\\W`` are not letters)
_PATTERN_LETTER = re.compile(r"\\.|([A-Z])", re.DOTALL)


class Caseless:
    """A pattern matched case-insensitively; ``low``: the text's lower case, when the caller has it."""

    __slots__ = ("folded", "plain", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        if any(m.group(1) for m in _PATTERN_LETTER.finditer(pattern)):
            raise ValueError(f"write a Caseless pattern in lower case: {pattern[:60]!r}")
        self.pattern = pattern
        self.folded = re.compile(pattern, flags | re.IGNORECASE)
        self.plain = re.compile(pattern, flags & ~re.IGNORECASE)

    def finditer(self, text: str, low: str | None = None) -> Iterator[re.Match[str]]:
        if text.isascii():
            return self.plain.finditer(text.lower() if low is None else low)
        return self.folded.finditer(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.plain.search(text.lower()) if text.isascii() else self.folded.search(text)

    def __repr__(self) -> str:
        return f"Caseless({self.pattern[:40]!r}...)"
