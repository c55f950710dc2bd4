"""Text from outside (an endpoint's error message, a reply) made safe to print on a terminal: control sequences
(``ESC[2J``, OSC, ``\\r``, C1 such as ``\\x9b``, bidi overrides) are written as visible escapes, so what was sent
stays readable but nothing acts on the terminal.

>>> printable("HTTP 500: \\x1b[2Jgone\\r\\x9b31m")
'HTTP 500: \\\\x1b[2Jgone\\\\x0d\\\\x9b31m'
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Printable", "printable"]

_BIDI = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: Any) -> str:
    """``text`` with every control character but newline and tab written as a visible escape."""
    return _CONTROL.sub(_escape, str(text))


class Printable:
    """A text stream whose writes go through :func:`printable`, but for a write's leading ``\\r`` (a progress bar)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        cr = "\r" if text.startswith("\r") else ""
        self._stream.write(cr + printable(text[len(cr):]))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding...
        return getattr(self._stream, name)
