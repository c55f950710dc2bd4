"""Debate questions and reading an agent's answer (:func:`parse_answer`) or an endpoint fault
(:func:`reply_fault`) out of a reply."""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import Field, field_validator

from mabpd_kit.types import FrozenModel

__all__ = [
    "LETTERS", "Parsed", "Question", "is_correct", "load_questions", "normalise_number", "parse_answer",
    "parse_choice", "parse_number", "questions_from_frame", "reply_fault", "usable"
]

LETTERS = string.ascii_uppercase


class Question(FrozenModel):
    """One debate question: ``kind="mc"`` (``options`` by letter, ``answer`` a letter) or ``"numeric"``."""

    id: str
    question: str
    answer: str
    kind: Literal["mc", "numeric"] = "mc"
    options: dict[str, str] = Field(default_factory=dict)

    @field_validator("answer")
    @classmethod
    def _strip(cls, v: str) -> str:
        return str(v).strip()

    @property
    def letters(self) -> str:
        """The option letters in order (``"ABCD"``); empty for numeric questions."""
        return "".join(self.options)

    def block(self) -> str:
        """The question as shown to an agent: the stem, then ``(A) ...`` lines."""
        if self.kind == "numeric":
            return self.question.strip()
        opts = "\n".join(f"({k}) {v}" for k, v in self.options.items())
        return f"{self.question.strip()}\n\n{opts}"

    def answer_format(self) -> str:
        """How the final line must name the answer (goes into the prompt)."""
        if self.kind == "numeric":
            return "a single number (no units)"
        return "one letter among " + ", ".join(self.letters)


def questions_from_frame(df: pd.DataFrame, kind: Literal["mc", "numeric"], prefix: str = "q") -> list[Question]:
    """Questions from an MMLU-style (``question, A, B, C, D, answer``) or GSM8K-style frame."""
    out: list[Question] = []
    letter_cols = [c for c in LETTERS if c in df.columns] if kind == "mc" else []
    for k, row in enumerate(df.itertuples(index=False)):
        rec = row._asdict()
        qid = str(rec.get("id", f"{prefix}-{k:04d}"))
        opts = {c: str(rec[c]) for c in letter_cols}
        out.append(Question(id=qid, question=str(rec["question"]), answer=str(rec["answer"]), kind=kind, options=opts))
    return out


def load_questions(dataset: Literal["mmlu", "gsm8k"], n: int | None = None, *, data_dir: str | Path | None = None,
                   seed: int = 0, download: bool = True) -> list[Question]:
    """``n`` seeded questions (all when None) of MMLU professional medicine or GSM8K, from the local copies."""
    from mabpd_kit import data

    if dataset == "mmlu":
        df = data.load_mmlu(split="test", data_dir=data_dir, download=download)
    elif dataset == "gsm8k":
        df = data.load_gsm8k(split="test", data_dir=data_dir, download=download)
    else:
        raise ValueError(f"unknown dataset {dataset!r}; choose mmlu or gsm8k")
    if n is not None and n < len(df):
        df = df.sample(n=n, random_state=seed).sort_index()
    return questions_from_frame(df, "mc" if dataset == "mmlu" else "numeric", prefix=dataset)


@dataclass(frozen=True)
class Parsed:
    """A parsed reply: ``answer`` (None: unparsed) and ``method``, the rule that matched."""

    answer: str | None
    method: str

    @property
    def ok(self) -> bool:
        return self.answer is not None


_END = r"(?=\s*$|\s*[\)\]\.,:;!*]|\s+(?:is|because|as|since)\b)"  # what may follow an answer letter


def parse_choice(text: str | None, letters: str = "ABCD") -> Parsed:
    """The chosen option letter, most explicit form first (``Answer: X``, ``**X**``, ``(X)``, a lone letter)."""
    if text is None or not str(text).strip():
        return Parsed(None, "empty")
    t = str(text)
    L = re.escape(letters)
    Ll = L + re.escape(letters.lower())
    explicit = re.compile(
        rf"answer\s*(?:is|:|=|-)?\s*(?:option|choice)?\s*[:\s]*[\(\[\*]*\s*([{Ll}])\s*[\)\]\*]*{_END}", re.IGNORECASE
    )
    hits = explicit.findall(t)
    if hits:
        return Parsed(hits[-1].upper(), "answer-line")
    bold = re.findall(rf"\*\*\s*\(?([{L}])\)?\s*\*\*", t)
    if bold:
        return Parsed(bold[-1], "bold")
    paren = re.findall(rf"\(([{Ll}])\)", t)
    if paren:
        return Parsed(paren[-1].upper(), "parenthesised")
    only = re.fullmatch(rf"\s*\(?([{Ll}])\)?[\.:]?\s*", t)
    if only:
        return Parsed(only.group(1).upper(), "bare-letter")
    last = [ln for ln in t.strip().splitlines() if ln.strip()][-1]
    lead = re.match(rf"\s*([{L}])[\)\.:]\s", last + " ")
    if lead:
        return Parsed(lead.group(1), "leading-letter")
    return Parsed(None, "no-letter")


_NUM = r"-?\$?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"


def normalise_number(s: str | None) -> str | None:
    """``"$1,234.50"`` -> ``"1234.5"``, ``"18.00"`` -> ``"18"``; ``None`` if it is not a number."""
    if s is None:
        return None
    raw = str(s).replace("$", "").replace(",", "").replace(" ", "").strip().rstrip(".")
    try:
        d = Decimal(raw)
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    if d == d.to_integral_value():
        return str(int(d))
    return format(d.normalize(), "f")


def parse_number(text: str | None) -> Parsed:
    """The final number (``#### 18``, ``the answer is ...``, ``\\boxed{...}``, else the last number)."""
    if text is None or not str(text).strip():
        return Parsed(None, "empty")
    t = str(text)
    for method, pattern in (
        ("gsm8k-marker", rf"####\s*({_NUM})"),
        ("answer-line", rf"answer\s*(?:is|:|=)\s*[^\d\-\$\n]{{0,20}}?({_NUM})"),
        ("boxed", rf"\\boxed\{{\s*({_NUM})\s*\}}"),
    ):
        hits = re.findall(pattern, t, flags=re.IGNORECASE)
        if hits:
            value = normalise_number(hits[-1])
            if value is not None:
                return Parsed(value, method)
    nums = re.findall(_NUM, t)
    if nums:
        value = normalise_number(nums[-1])
        if value is not None:
            return Parsed(value, "last-number")
    return Parsed(None, "no-number")


def parse_answer(text: str | None, question: Question) -> Parsed:
    """Letter for multiple-choice questions, normalised number for numeric ones."""
    if question.kind == "numeric":
        return parse_number(text)
    return parse_choice(text, question.letters or "ABCD")


def _garbled(text: str) -> bool:
    """Not readable text: undecodable bytes (U+FFFD) or control characters, or not one letter or digit."""
    if "\ufffd" in text or any(unicodedata.category(ch) == "Cc" and ch not in "\t\n\r" for ch in text):
        return True
    return not any(ch.isalnum() for ch in text)


def reply_fault(reply: Any, question: Question, *, max_tokens: int | None = None) -> str | None:
    """Why ``reply`` is an endpoint fault (a refusal, a filter, empty, cut, garbled, declining, a body) and
    not an answer, or None; a reply naming an option or number is an answer however worded."""
    text = str(getattr(reply, "text", "") or "")
    finish = getattr(reply, "finish_reason", None)
    if getattr(reply, "refusal", None):
        return f"refused: {str(reply.refusal)[:80]!r}"
    if finish == "content_filter":
        return "refused: cut by the server's content filter"
    if not text.strip():
        return "empty reply"
    if parse_answer(text, question).ok:
        return None
    if finish == "length":
        budget = f" ({max_tokens}; raise identity.max_tokens if the model needs more)" if max_tokens else ""
        return f"cut at max_tokens{budget} before naming an answer"
    if _garbled(text):
        return f"garbled reply {text[:40]!r}"
    from mabpd_kit.radar.replies import reply_note  # the one refusal detector (RADAR's debaters and Judge use it)

    if reply_note(text) == "refusal":
        return f"refused: {text.strip()[:80]!r}"
    if text.lstrip()[:1] in ("{", "[", "<"):
        return f"not an answer but a JSON or markup body {text.strip()[:40]!r}"
    return None


def usable(reply: Any, question: Question, *, max_tokens: int | None = None) -> bool:
    """Worth caching: no fault and a parsed answer (a rerun asks an abstention again)."""
    return reply_fault(reply, question, max_tokens=max_tokens) is None and parse_answer(reply.text, question).ok


def is_correct(answer: str | None, question: Question) -> bool:
    """Whether a parsed answer matches the gold one (numbers compared by value)."""
    if answer is None:
        return False
    if question.kind == "numeric":
        gold = normalise_number(question.answer)
        return gold is not None and normalise_number(answer) == gold
    return answer.strip().upper() == question.answer.strip().upper()

