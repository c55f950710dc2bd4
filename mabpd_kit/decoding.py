"""Bytes -> text, one way everywhere: a byte-order mark decides first; else UTF-8; else Windows-1252 (its five
undefined bytes read as Latin-1, as browsers do), so every byte string decodes."""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from typing import IO, NamedTuple

__all__ = ["Decoded", "FALLBACK", "decode", "decode_bytes", "iter_lines", "looks_binary"]

#: The encoding tried when the bytes are not UTF-8 (and name of it in :attr:`Decoded.encoding`).
FALLBACK = "cp1252"

_BOMS = (  # longest first: a UTF-32 LE BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Windows-1252 for the bytes 0x80-0x9F that it defines (read as Latin-1 first, then mapped)
_CP1252_C1 = {b: bytes([b]).decode("cp1252") for b in range(0x80, 0xA0) if b not in b"\x81\x8d\x8f\x90\x9d"}


class Decoded(NamedTuple):
    """Decoded text and the encoding it was read in (``"cp1252"``: the UTF-8 fallback)."""

    text: str
    encoding: str

    @property
    def fallback(self) -> bool:
        """True when the bytes were not UTF-8 (nor marked by a BOM)."""
        return self.encoding == FALLBACK


def bom(raw: bytes) -> tuple[str | None, int]:
    """``(encoding, length of the mark)`` of a byte-order mark at the start of ``raw``, else ``(None, 0)``."""
    for mark, enc in _BOMS:
        if raw.startswith(mark):
            if enc == "utf-32-le" and len(raw) % 4:  # FF FE 00 00 ...: UTF-16 LE text starting with a NUL
                continue
            return enc, len(mark)
    return None, 0


def _cp1252(raw: bytes) -> str:
    return raw.decode("latin-1").translate(_CP1252_C1)


def decode_bytes(raw: bytes | bytearray | memoryview) -> Decoded:
    """Bytes -> :class:`Decoded` (never raises)."""
    data = bytes(raw)
    enc, skip = bom(data)
    if enc is not None and enc != "utf-8":
        return Decoded(data[skip:].decode(enc, errors="replace"), enc[:6])  # "utf-16" / "utf-32"
    body = data[skip:]
    try:
        return Decoded(body.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        return Decoded(_cp1252(body), FALLBACK)


def decode(raw: bytes) -> str:
    """Bytes of a text file -> str (:func:`decode_bytes`)."""
    return decode_bytes(raw).text


def iter_lines(fh: IO[bytes], max_line: int | None = None) -> Iterator[tuple[str | None, bool]]:
    """``(line, fallback)`` for every line of a binary file, ending kept, each decoded on its own (a UTF-16/32 BOM
    decides for all); a line over ``max_line`` is ``(None, False)``, never held."""
    head = fh.read(65536)
    enc, skip = bom(head)
    if enc is not None and enc != "utf-8":
        text = io.TextIOWrapper(_Prefixed(head[skip:], fh), encoding=enc, errors="replace", newline="")
        yield from _wide_lines(text, max_line)
        return
    sep = b"\r" if b"\r" in head and b"\n" not in head else b"\n"
    for line in _split(fh, head[skip:], sep, max_line):
        if line is None:
            yield None, False
        else:
            d = decode_bytes(line)
            yield d.text, d.fallback


def _split(fh: IO[bytes], first: bytes, sep: bytes, limit: int | None) -> Iterator[bytes | None]:
    """The lines of ``first`` and then the rest of ``fh`` (``sep`` kept); None for one over ``limit`` bytes."""
    rest, over, chunk = bytearray(), False, first
    while chunk:
        parts = chunk.split(sep)
        last = parts.pop()
        for part in parts:
            if over or (limit is not None and len(rest) + len(part) > limit):
                yield None  # the long line ends here
            else:
                rest += part
                yield bytes(rest) + sep
            rest, over = bytearray(), False
        if not over:
            rest += last
            if limit is not None and len(rest) > limit:
                rest, over = bytearray(), True  # not held: read past until the line ends
        chunk = fh.read(1 << 20)
    if over:
        yield None
    elif rest:
        yield bytes(rest)


def _wide_lines(text: IO[str], limit: int | None) -> Iterator[tuple[str | None, bool]]:
    size = -1 if limit is None else limit + 1
    while line := text.readline(size):
        if limit is not None and len(line) > limit:
            while (more := text.readline(size)) and not more.endswith(("\n", "\r")):
                pass
            yield None, False
        else:
            yield line, False


class _Prefixed(io.RawIOBase):
    def __init__(self, head: bytes, fh: IO[bytes]) -> None:
        self._head, self._fh = head, fh

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(b), len(self._head))
            b[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._fh.read(len(b))
        b[:len(data)] = data
        return len(data)


#: Control bytes that never occur in text files (tab, newlines, form feed and escape do).
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\x0b\x0c\x1b") + b"\x7f"


def looks_binary(raw: bytes, sample: int = 8192) -> bool:
    """True for bytes that are not text (NUL or control bytes, mostly high non-UTF-8 bytes; no BOM)."""
    head = bytes(raw[:sample])
    if not head or bom(head)[0] is not None:
        return False
    if b"\x00" in head or 100 * (len(head) - len(head.translate(None, _CONTROL))) > len(head):
        return True
    try:
        return head.decode("utf-8") is None
    except UnicodeDecodeError as exc:  # mostly high bytes, and not a character cut by the sample's end
        return exc.start < len(head) - 3 and 2 * len(head.translate(None, bytes(range(128)))) > len(head)
