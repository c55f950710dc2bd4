"""Empty and refusal replies of RADAR's agents (:func:`reply_note`), and fencing the item as data."""

from __future__ import annotations

import re
from typing import Literal

from mabpd_kit.types import FrozenModel

__all__ = ["REFUSAL_PATTERNS", "NoteKind", "ReplyNote", "reply_note"]

NoteKind = Literal["empty", "refusal"]

#: Openings of a refusal, after an optional "I'm sorry,"; a reply naming an option is no refusal (callers check).
REFUSAL_PATTERNS: tuple[str, ...] = (
    r"i\s*(?:can(?:no|')t|cannot|can not|won't|will not|am not able to|'m not able to|am unable to|'m unable to)"
    r"\s+(?:help|assist|comply|do that|provide|answer|engage|participate|take part|fulfil|continue|judge|say)",
    r"i\s*(?:must|have to)\s+(?:decline|refuse)",
    r"(?:as an ai|as a language model)\b.{0,60}\b(?:cannot|can't|unable|not able)",
    r"(?:this|that|your)\s+request\s+(?:violates|goes against|is against)",
)
_SORRY = (r"^\W*(?:(?:i'?m|i am)\s+(?:very\s+|really\s+|so\s+)?sorry|sorry|apologies|unfortunately)?"
          r"[\s,.!:-]*(?:but\s+)?")
_REFUSAL_RE = re.compile(_SORRY + r"(?:" + "|".join(REFUSAL_PATTERNS) + r")", re.IGNORECASE)


class ReplyNote(FrozenModel):
    """A Judge reply that was empty or a refusal (the debate's ``judge_notes``)."""

    round: int
    question: str  # verdict | continue | probabilities
    note: NoteKind
    text: str = ""


def reply_note(text: str | None) -> NoteKind | None:
    """``"empty"`` for a blank reply, ``"refusal"`` for one that opens by declining, else None."""
    t = (text or "").replace("\u2019", "'").strip()
    if not t:
        return "empty"
    return "refusal" if _REFUSAL_RE.match(t) else None
