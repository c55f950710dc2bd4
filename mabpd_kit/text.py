"""The text layer: cleaning with an offset map back to the raw input, sentence splitting, span validation,
truncation. Bad input (wrong encoding, None, NaN, huge or empty) is a :class:`CleanText` with a flag."""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mabpd_kit.config import Config, TextConfig
from mabpd_kit.decoding import decode, decode_bytes, looks_binary
from mabpd_kit.language import detect_language

__all__ = ["CleanText", "clean", "split_sentences", "validate_span", "SpanCheck", "truncate_words", "Truncation",
           "normalise_quotes", "detect_language", "decode", "looks_binary"]

#: Typographic quotes and look-alikes -> ASCII. One character in, one character out (offsets stay put).
QUOTE_MAP: dict[str, str] = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'", "\u0060": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2039": "'", "\u203a": "'", "\uff02": '"', "\uff07": "'"}
_HAS_QUOTE = re.compile("[" + re.escape("".join(QUOTE_MAP)) + "]")
#: Characters dropped entirely: zero-width spaces/joiners, soft hyphen, byte-order mark.
_DROP = "\u200b\u200c\u200d\u2060\u00ad\ufeff"
#: Tags after which a line break is implied (so "<p>a</p><p>b</p>" does not become "ab").
_BLOCK_TAGS = {
    "p", "br", "div", "li", "ul", "ol", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
    "blockquote", "section", "article", "header", "footer", "table", "hr", "title", "pre", "figure"}

# Characters that can follow the first byte of UTF-8 text mis-read as Windows-1252 ("â€™", "Ã©").
_MOJIBAKE_TAIL = (r"[\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u2013\u2014"
                  r"\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]")
# An ordinary character: no markup, no special space, no control, no possible mojibake start.
_PLAIN_CHAR = r"[^<&\s\u00a0\u2000-\u200d\u202f\u205f\u3000\u2060\u00ad\ufeff\x00-\x1f\x7f\u00c2-\u00f4]"

# One master pattern; each alternative is a kind of "unit" the scanner handles.
_UNIT = re.compile(
    r"""
    (?P<skip><(?P<skiptag>script|style)\b[^>]*>.*?</(?P=skiptag)\s*>)        # script/style with content
  | (?P<comment><!--.*?-->)
  | (?P<tag></?(?P<tagname>[a-zA-Z][a-zA-Z0-9]*)\b(?:[^>"']|"[^"]*"|'[^']*')*>)  # an HTML tag
  | (?P<entity>&(?:amp;)*(?:\#[0-9]{1,7}|\#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});)  # &amp;quot; too
  | (?P<mojibake>[\u00c2-\u00f4]MOJIBAKE_TAIL{1,3})
  | (?P<space>[\s\u00a0\u2000-\u200a\u202f\u205f\u3000]+)
  | (?P<drop>[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\u200c\u200d\u2060\u00ad\ufeff])
  | (?P<plain>PLAIN+(?:\x20PLAIN+)*)                                        # words and single spaces
  | (?P<other>.)
    """.replace("MOJIBAKE_TAIL", _MOJIBAKE_TAIL).replace("PLAIN", _PLAIN_CHAR),
    re.VERBOSE | re.DOTALL | re.IGNORECASE,
)


#: Characters the full scanner must handle (a line break too); see :func:`_needs_work`.
_NEEDS_WORK_CHARS = re.compile(
    r"[<&\x00-\x1f\x7f\u00a0\u00ad\u00c2-\u00f4\u2000-\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff]"
)
_TWO_SPACES = re.compile(r"\s\s")


def _needs_work(s: str) -> bool:
    """Does ``s`` need the full scanner (markup, an entity, a control, a special, edge or doubled space, a line
    break, a possible mojibake start)? The class leaves out only the space, NEL and U+1680 of the whitespace."""
    return (_NEEDS_WORK_CHARS.search(s) is not None or "  " in s or s[:1].isspace() or s[-1:].isspace()
            or (("\x85" in s or "\u1680" in s) and _TWO_SPACES.search(s) is not None))


@lru_cache(maxsize=1)
def _text_config() -> TextConfig:
    """The default text settings, built once (a Config costs more than cleaning a sentence)."""
    return Config().text


def normalise_quotes(s: str) -> str:
    """Typographic quotes to ASCII, one character for one (offsets unchanged)."""
    # ASCII text (most news) can hold one of them only, the grave accent: no character-class search
    if s.isascii():
        return s.replace("`", "'") if "`" in s else s
    if not _HAS_QUOTE.search(s):
        return s
    for fancy, plain in QUOTE_MAP.items():
        if fancy in s:
            s = s.replace(fancy, plain)
    return s


def _unescape_fully(entity: str) -> str:
    for _ in range(5):
        nxt = html.unescape(entity)
        if nxt == entity:
            break
        entity = nxt
    return entity


def _fix_mojibake(chunk: str) -> str | None:
    """'â€™' (UTF-8 read as Windows-1252) -> '’'; None if the chunk is not mojibake (or repairs to CJK)."""
    try:
        fixed = chunk.encode("cp1252").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None
    if len(fixed) >= len(chunk) or any(ord(c) >= 0x3000 and c != "\ufeff" for c in fixed):
        return None
    return fixed


@dataclass
class CleanText:
    """Cleaned text and, for each cleaned character ``i``, the raw stretch ``src_start[i]:src_end[i]`` it came from."""

    text: str
    raw: str
    flags: list[str] = field(default_factory=list)
    src_start: Sequence[int] = field(default_factory=list, repr=False)
    src_end: Sequence[int] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.text)

    def __str__(self) -> str:
        return self.text

    def to_orig(self, start: int, end: int) -> tuple[int, int]:
        """Map a cleaned ``[start, end)`` to the raw input's ``[orig_start, orig_end)``."""
        n = len(self.text)
        if not (0 <= start <= end <= n):
            raise ValueError(f"span ({start}, {end}) outside the cleaned text of length {n}")
        if start == end:  # an empty span maps to a point
            pos = self.src_start[start] if start < n else len(self.raw)
            return pos, pos
        return self.src_start[start], self.src_end[end - 1]


def _coerce(raw: object) -> tuple[str, list[str]]:
    if raw is None:
        return "", ["not_text"]
    if isinstance(raw, float) and math.isnan(raw):
        return "", ["not_text"]
    if isinstance(raw, (bytes, bytearray, memoryview)):
        d = decode_bytes(raw)
        return d.text, (["encoding"] if d.fallback else [])
    if isinstance(raw, str):
        return raw, []
    return str(raw), ["not_text"]


def clean(raw: object, *, max_chars: int | None = None) -> CleanText:
    """Strip HTML and entities, normalise quotes and whitespace, and keep an offset map (block tags become a
    line break; whitespace runs one space or newline; zero-width and control characters go). Flags:
    ``html``, ``encoding``, ``too_long`` (cut at ``max_chars``, default ``config.text.max_chars``), ``empty``."""
    text_in, flags = _coerce(raw)
    if max_chars is None:
        max_chars = _text_config().max_chars
    if len(text_in) > max_chars:
        flags.append("too_long")
        text_in = text_in[:max_chars]
    if (fast := _one_for_one(text_in, flags)) is not None:
        return fast
    out = _Builder()
    saw_html = False
    for m in _UNIT.finditer(text_in):
        saw_html |= _scan_unit(m, text_in, out, flags)
    text = "".join(out.chars)
    if "\ufffd" in text and "encoding" not in flags:
        flags.append("encoding")
    if saw_html:
        flags.insert(0, "html")
    if not text:
        flags.append("empty")
    return CleanText(text=text, raw=text_in, flags=flags, src_start=out.starts, src_end=out.ends)


def _one_for_one(text_in: str, flags: list[str]) -> CleanText | None:
    """The clean text when every character maps to one (plain text, or no-break spaces between words), else None."""
    plain = not _needs_work(text_in)
    spaced = text_in if plain else text_in.replace("\xa0", " ")
    if not plain and ("\xa0" not in text_in or _needs_work(spaced) or "\x85" in spaced or "\u1680" in spaced):
        return None
    text = normalise_quotes(spaced)
    if plain and not text:
        flags.append("empty")
    if not plain and "\ufffd" in text and "encoding" not in flags:
        flags.append("encoding")
    return CleanText(text=text, raw=text_in, flags=flags, src_start=range(len(text)), src_end=range(1, len(text) + 1))


class _Builder:
    """The clean text as it is built, with raw offsets; whitespace waits, so runs merge and none leads."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.pending: tuple[str, int, int] | None = None  # (" " or "\n", raw start, raw end)

    def emit(self, chars: str, a: int, b: int, one_to_one: bool) -> None:
        """``chars`` from raw ``a:b``: one raw character each (``one_to_one``), else each from all of ``a:b``."""
        if self.pending is not None and self.chars:  # a waiting space, never at the start
            self.chars.append(self.pending[0])
            self.starts.append(self.pending[1])
            self.ends.append(self.pending[2])
        self.pending = None
        self.chars.append(chars)
        self.starts.extend(range(a, b) if one_to_one else [a] * len(chars))
        self.ends.extend(range(a + 1, b + 1) if one_to_one else [b] * len(chars))

    def space(self, kind: str, a: int, b: int) -> None:
        if self.pending is not None:  # a run goes on: a newline wins over a space
            kind, a = ("\n" if "\n" in (kind, self.pending[0]) else " "), self.pending[1]
        self.pending = (kind, a, b)


def _scan_unit(m: re.Match[str], text_in: str, out: _Builder, flags: list[str]) -> bool:
    a, b = m.span()
    kind = m.lastgroup
    if kind == "plain":
        out.emit(normalise_quotes(m.group()), a, b, True)
    elif kind == "space":
        out.space("\n" if "\n" in m.group() else " ", a, b)
    elif kind == "entity":
        ent = m.group()
        decoded = _unescape_fully(ent)
        if decoded == ent:  # unknown entity: keep as written
            out.emit(ent, a, b, True)
        elif decoded.isspace():
            out.space(" ", a, b)
        else:
            decoded = normalise_quotes("".join(c for c in decoded if c not in _DROP))
            if decoded:
                out.emit(decoded, a, b, False)
        return True
    elif kind in ("tag", "skip", "comment"):
        name = (m.group("tagname") or "").lower()
        out.space("\n" if name in _BLOCK_TAGS else " ", a, b)
        return True
    elif kind == "mojibake":
        _scan_mojibake(m.group(), a, b, text_in, out, flags)
    elif kind != "drop":  # a lone '<' or '&' that is not markup, or an accented letter
        out.emit(normalise_quotes(m.group()), a, b, True)
    return False


def _scan_mojibake(found: str, a: int, b: int, text_in: str, out: _Builder, flags: list[str]) -> None:
    fixed = _fix_mojibake(found)
    if fixed is None:  # an accented letter and what follows it, one character at a time
        for k in range(a, b):
            ch = text_in[k]
            if ch.isspace():  # e.g. a no-break space after the letter
                out.space(" ", k, k + 1)
            elif ch not in _DROP:  # e.g. a soft hyphen
                out.emit(normalise_quotes(ch), k, k + 1, True)
        return
    if "encoding" not in flags:
        flags.append("encoding")
    if fixed.isspace():
        out.space(" ", a, b)
    else:
        out.emit(normalise_quotes(fixed), a, b, False)


#: Abbreviations that end with a period but rarely end a sentence in news prose.
ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sen rep gov gen col lt sgt capt cmdr adm maj st mt ft jr sr rev hon pres
    vs v etc e.g i.e al no nos vol fig approx dept est inc corp co ltd llc bros jan feb mar apr jun
    jul aug sep sept oct nov dec mon tue tues wed thu thurs fri sat sun a.m p.m u.s u.k u.n e.u d.c
    ph.d m.d b.a m.a u.s.a n.y l.a""".split()
)
_SENT_END = re.compile(r"""[.!?]+["')\]]*(?=\s+["'(\[]?[A-Z0-9])|\n\s*\n""")
_PREV_WORD = re.compile(r"(\S+)$")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence ``(start, end)`` offsets for news prose (not after an abbreviation or an initial)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENT_END.finditer(text):
        if m.group().startswith((".",)) and not m.group().startswith("\n"):
            w = _PREV_WORD.search(text, 0, m.start())
            word = (w.group(1) if w else "").lstrip("\"'([").lower()
            if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                continue
        _add_span(text, start, m.end(), spans)
        start = m.end()
    _add_span(text, start, len(text), spans)
    return spans


def _add_span(text: str, a: int, b: int, spans: list[tuple[int, int]]) -> None:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    if b > a:
        spans.append((a, b))


class SpanCheck(BaseModel):
    """Is a quoted span in the text? ``start``/``end`` are offsets in the text searched."""

    model_config = ConfigDict(frozen=True)

    valid: bool
    start: int | None = None
    end: int | None = None
    method: Literal["exact", "fuzzy", "none"] = "none"
    score: float = 0.0
    reason: str = ""


def _normalised(s: str) -> str:
    """Lower case (a character that lowercases to two, as 'İ', kept), ASCII quotes, whitespace runs as one space."""
    return " ".join("".join(c if len(c.lower()) != 1 else c.lower() for c in normalise_quotes(s)).split())


_KEY_WORD = re.compile(r"[^\W_]+")


def _words(s: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The words of ``s`` up to typography (compatibility forms, accents and case folded), with their offsets."""
    folded: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(s):
        for c in unicodedata.normalize("NFKD", ch):
            if not unicodedata.combining(c):
                folded.append(c.casefold() if len(c.casefold()) == 1 else c)
                where.append(i)
    f = "".join(folded)
    found = list(_KEY_WORD.finditer(f))
    return [m.group() for m in found], [(where[m.start()], where[m.end() - 1] + 1) for m in found]


def validate_span(quote: str, text: str) -> SpanCheck:
    """Find ``quote`` in ``text`` as whole words (the first occurrence): ``exact`` (up to case, quotes and
    whitespace), ``fuzzy`` (the same words up to typography, never a changed word), else ``valid=False``."""
    if not isinstance(quote, str) or not isinstance(text, str):
        return SpanCheck(valid=False, reason="quote and text must be strings")
    qw, _ = _words(quote)
    tw, tpos = _words(text)
    if not quote.strip().strip("\"'").strip():
        return SpanCheck(valid=False, reason="empty quote")
    if not text.strip():
        return SpanCheck(valid=False, reason="empty text")
    if not qw:
        return SpanCheck(valid=False, reason=f"{quote[:40]!r} has no word to find")
    n = len(qw)
    for i in range(len(tw) - n + 1):
        if tw[i] == qw[0] and tw[i:i + n] == qw:
            a, b = tpos[i][0], tpos[i + n - 1][1]
            same = _normalised(text[a:b]) == _normalised(quote.strip().strip("\"'").strip())
            return SpanCheck(valid=True, start=a, end=b, method="exact" if same else "fuzzy", score=1.0 if same else 0.99,
                             reason="exact match after normalisation" if same else "same words up to typography")
    return SpanCheck(valid=False, method="none", score=0.0,
                     reason=f"not found: the text does not have the words {quote[:60]!r} (a changed word is not the text's)")


class Truncation(BaseModel):
    """Result of cutting a text to N words."""

    model_config = ConfigDict(frozen=True)

    text: str
    truncated: bool
    n_words_in: int
    n_words_out: int


_WORD = re.compile(r"\S+")


def truncate_words(text: str, n: int) -> Truncation:
    """Keep the first ``n`` whitespace-separated words, original spacing preserved inside them."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    words = list(_WORD.finditer(text))
    if len(words) <= n:
        return Truncation(text=text, truncated=False, n_words_in=len(words), n_words_out=len(words))
    cut = words[n - 1].end() if n > 0 else 0
    return Truncation(text=text[:cut], truncated=True, n_words_in=len(words), n_words_out=n)
