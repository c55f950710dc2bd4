"""Which language is a text in? ISO 639-1 codes, ``"und"`` when too short or undetermined.

Latin-script text with almost no accented letters and enough English function words is ``"en"`` without a
model; otherwise py3langid decides (loaded on first use), and an answer below :data:`MIN_CONFIDENCE` is
``"und"`` for Latin text or the script's usual language for another script.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["detect_language", "document_language", "MIN_LETTERS", "MIN_CONFIDENCE"]

#: Fewer letters than this (a CJK, kana or hangul character counts as 3): "und".
MIN_LETTERS = 10
#: py3langid's normalised probability below which its answer is not trusted.
MIN_CONFIDENCE = 0.50
#: At most this share of the Latin letters may be accented for the English fast path.
MAX_ACCENTED = 0.08
#: Only the first this many characters are looked at (an article's language shows early).
SAMPLE_CHARS = 2_000

#: English function words that are not common words in other Latin-script languages
_EN_WORDS = frozenset(
    """the and that with this they their them from have has been were would which about after said
    says who what when where there she not but are into than its our your you should could can just
    because while against his her him these those being does did don't it's isn't doesn't won't
    can't didn't we us my""".split()
)
#: Words that count only beside an unambiguous one above (they are words in other languages too).
_EN_WEAK = frozenset("for to by or be it at as is of on in will was an a".split())
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
#: Every byte but the ASCII letters: ``raw.translate(None, _NOT_LETTER)`` keeps the letters (C speed).
_NOT_LETTER = bytes(b for b in range(256) if not (65 <= b <= 90 or 97 <= b <= 122))
#: :func:`_looks_english` reads about this many first characters first (nine BABE sentences in ten decide there)
_PREFIX_CHARS = 80

#: Unicode script (first word of the character's name) -> its usual language, when the model hesitates.
_SCRIPT_LANG = {
    "CJK": "zh", "HIRAGANA": "ja", "KATAKANA": "ja", "HANGUL": "ko", "ARABIC": "ar", "CYRILLIC": "ru",
    "GREEK": "el", "HEBREW": "he", "DEVANAGARI": "hi", "THAI": "th", "BENGALI": "bn", "TAMIL": "ta",
    "GEORGIAN": "ka", "ARMENIAN": "hy", "ETHIOPIC": "am", "GUJARATI": "gu", "GURMUKHI": "pa"}
_WIDE = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HANGUL"})


@lru_cache(maxsize=1)
def _identifier():
    """py3langid's model with normalised probabilities, loaded once (~0.5 s)."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ImportError("language detection needs py3langid: pip install py3langid "
                          "(or set Config(text={'detect_language': False}))") from exc
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _looks_english(text: str) -> bool:
    """Two English function words (weak ones beside a strong one), or one in at most five words?"""
    cut = text.rfind(" ", 0, _PREFIX_CHARS) if len(text) > _PREFIX_CHARS else -1
    if cut > 0 and _english_hits(text[:cut].lower().split()) is None:
        return True
    words = text.lower().split()
    hits = _english_hits(words)
    return hits is None or (hits > 0 and 5 * hits >= len(words))


def _english_hits(words: list[str]) -> int | None:
    """The English function words among ``words``, or None as soon as there are two with a strong one."""
    strong = weak = 0
    for w in words:
        if w in _EN_WORDS:
            strong += 1
        elif w in _EN_WEAK:
            weak += 1
        else:
            continue
        if strong and strong + weak >= 2:
            return None
    return strong + weak if strong else 0


#: The ASCII characters ``str.split()`` splits at (``str.isspace``: \x1c-\x1f too).
_ASCII_SPACE = bytes(b for b in range(128) if chr(b).isspace())


def _non_space(text: str) -> int:
    """``sum(map(len, text.split()))`` without building the word list (ASCII text: its bytes less spaces)."""
    if text.isascii():
        return len(text.encode("ascii").translate(None, _ASCII_SPACE))
    return sum(map(len, text.split()))


def _ascii_letters(text: str) -> int:
    return len(text.encode("ascii", "ignore").translate(None, _NOT_LETTER))


def _scripts(text: str) -> tuple[int, int, dict[str, int]]:
    """(ASCII letters, accented Latin letters, {other script: letters}) of ``text``."""
    ascii_letters = _ascii_letters(text)
    accented = 0
    other: dict[str, int] = {}
    for ch in _NON_ASCII.findall(text):
        if not ch.isalpha():
            continue
        script = unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]
        if script == "LATIN":
            accented += 1
        else:
            other[script] = other.get(script, 0) + 1
    return ascii_letters, accented, other


def detect_language(text: str) -> str:
    """ISO 639-1 code of ``text``'s language (module doc); anything not a string is ``"und"``."""
    if not isinstance(text, str):
        return "und"
    sample = text[:SAMPLE_CHARS]
    if sample.isascii():  # the rules below with no accented or other-script letter
        if _ascii_letters(sample) < MIN_LETTERS:
            return "und"
        if _looks_english(sample):
            return "en"
        lang, conf = _identifier().classify(sample)
        return lang if lang == "en" or conf >= MIN_CONFIDENCE else "und"
    ascii_letters, accented, other = _scripts(sample)
    latin = ascii_letters + accented
    n_other = sum(other.values())
    weighted = latin + sum(n * (3 if s in _WIDE else 1) for s, n in other.items())
    if weighted < MIN_LETTERS:
        return "und"
    if latin >= n_other:
        if accented <= MAX_ACCENTED * latin:
            if _looks_english(sample):
                return "en"
        lang, conf = _identifier().classify(sample)
        return lang if lang == "en" or conf >= MIN_CONFIDENCE else "und"
    lang, conf = _identifier().classify(sample)
    if conf >= MIN_CONFIDENCE and lang != "en":
        return lang
    return _SCRIPT_LANG.get(max(other, key=other.__getitem__), "und")


def document_language(text: str, *, min_chars: int = 0, assume: str = "en") -> str:
    """:func:`detect_language` of a whole document; a Latin-script one with fewer than ``min_chars`` characters
    other than whitespace is taken to be ``assume`` (py3langid calls "Rennie wrote:" Polish)."""
    if isinstance(text, str) and min_chars > 0 and _non_space(text[:min_chars * 4]) < min_chars:
        if text.isascii():  # no other script in it
            return assume
        ascii_letters, accented, other = _scripts(text)
        if sum(other.values()) <= ascii_letters + accented:  # Latin script (or no letters): too short to tell
            return assume
    return detect_language(text)
