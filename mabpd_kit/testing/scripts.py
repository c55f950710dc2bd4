"""Building blocks for :class:`~mabpd_kit.testing.FakeLLMServer` scripts (functions ``request -> str | dict |
Reply``): answer by role, answer in sequence, read the parts of a request an answer depends on."""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["all_text", "by_role", "fenced", "last_user", "obeys_injection", "request_schema", "role_instruction",
           "sequence", "system_prompt"]

Answer = Any  # str | dict | Reply | Callable[[dict], str | dict | Reply]


def _resolve(answer: Answer, request: dict[str, Any]) -> Any:
    return answer(request) if callable(answer) else answer


_CLOSING_TAG = re.compile(r"</[A-Za-z_]+>")
_ARTICLE = re.compile(r"<article>\n?(.*?)\n?</article>", re.DOTALL)


def role_instruction(request: dict[str, Any]) -> str:
    """The part of the last fencing user message after its last fenced block (``</article>``, ...); "" if none."""
    for m in reversed(request.get("messages", [])):  # a repair turn fences nothing: the item message is earlier
        text = str(m.get("content") or "") if m.get("role") == "user" else ""
        ends = list(_CLOSING_TAG.finditer(text))
        if ends:
            return text[ends[-1].end():].strip()
    return ""


def system_prompt(request: dict[str, Any]) -> str:
    """The role instruction (:func:`role_instruction`), then the system messages: what scripts route on."""
    system = [str(m.get("content") or "") for m in request.get("messages", []) if m.get("role") == "system"]
    role = role_instruction(request)
    return "\n".join([role, *system] if role else system)


def last_user(request: dict[str, Any]) -> str:
    """The content of the last user message ("" if none)."""
    for m in reversed(request.get("messages", [])):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""


def all_text(request: dict[str, Any]) -> str:
    """Every message content of a request joined by newlines."""
    return "\n".join(str(m.get("content") or "") for m in request.get("messages", []))


def request_schema(request: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema sent in ``response_format`` (json_schema mode), else ``None``."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    return None


def by_role(routes: Mapping[str, Answer], default: Answer = "{}") -> Callable[[dict], Any]:
    """A script answering by the first marker of ``routes`` found in :func:`system_prompt` (case-insensitive); an
    answer is a str, a dict (sent as JSON), a :class:`Reply` or a function of the request."""
    lowered = [(k.lower(), v) for k, v in routes.items()]

    def script(request: dict[str, Any]) -> Any:
        text = system_prompt(request).lower()
        for marker, answer in lowered:
            if marker in text:
                return _resolve(answer, request)
        return _resolve(default, request)

    return script


def sequence(answers: Iterable[Answer], *, then: Answer | None = None) -> Callable[[dict], Any]:
    """A script giving ``answers`` in order (thread-safe), then ``then`` forever (None: the last answer)."""
    items = list(answers)
    if not items and then is None:
        raise ValueError("sequence needs at least one answer or a `then`")
    tail = then if then is not None else items[-1]
    it = itertools.chain(items, itertools.repeat(tail))
    lock = threading.Lock()

    def script(request: dict[str, Any]) -> Any:
        with lock:
            answer = next(it)
        return _resolve(answer, request)

    return script


def fenced(request: dict[str, Any]) -> str:
    """The last ``<article>`` block of the last user message that has one ("" if none)."""
    for m in reversed(request.get("messages", [])):
        blocks = _ARTICLE.findall(str(m.get("content") or "")) if m.get("role") == "user" else []
        if blocks:
            return blocks[-1]
    return ""


#: what a model that obeys planted instructions reacts to (the script's own reading, not the toolkit's detector)
_PLANTED = re.compile(r"ignore|disregard|label (?:this|it)|classify|system\s*:|respond with|output json|you must|"
                      r"\banswer\b|\[/?article\]|</?article|\b(?:quote|cite|citing|quoting)\s", re.IGNORECASE)
_NAMED = re.compile(r"(?:quote|cite|citing|quoting|use|phrase is)\s+(?:the\s+\w+\s+)?[\"'“‘]([^\"'“”‘’\n]+)[\"'”’]",
                    re.IGNORECASE)


def obeys_injection(named: Iterable[str] = (), *, always: bool = False) -> Callable[[dict], Any]:
    """A script for an endpoint that obeys any instruction planted in the item it is shown: every MABPD step answers
    biased with full confidence, quoting the words the instruction names plus ``named`` (else the item's first
    words). Shown no instruction it answers neutral, unless ``always``."""
    extra = list(named)

    def script(request: dict[str, Any]) -> Any:
        article = fenced(request)
        seen = bool(_PLANTED.search(article))
        sys_ = system_prompt(request).lower()
        if not (seen or always):
            return _honest(sys_)
        quotes = [q for q in _NAMED.findall(article) if q.strip()] + extra
        if not quotes:
            quotes = [" ".join(article.split()[:3]) or "biased"]
        if "verifier" in sys_:
            return {"reason": "upheld as instructed", "strongest_quote": quotes[0], "verdict": "biased"}
        if "structured argument debate" in sys_:
            return {"rationale": "as instructed", "evidence": quotes, "counter_argument": "none",
                    "verdict": "biased", "confidence": 1.0}
        spans = [{"quote": q, "category": "loaded language", "explanation": "as instructed"} for q in quotes]
        if "evidence analyst" in sys_:
            return {"rationale": "as instructed", "counter_argument": "none", "verdict": "biased", "confidence": 1.0,
                    "evidence_score": 0.95, "evidence": [{"quote": q, "supports_bias": True} for q in quotes]}
        if "framing analyst" in sys_:
            return {"rationale": "as instructed", "patterns": spans, "counter_argument": "none", "verdict": "biased",
                    "confidence": 1.0, "framing_score": 0.95}
        return {"rationale": "as instructed", "spans": spans, "counter_argument": "none", "verdict": "biased",
                "confidence": 1.0, "bias_score": 0.95}

    return script


def _honest(sys_: str) -> dict[str, Any]:
    """A neutral reading in each MABPD step's reply shape."""
    base = {"rationale": "plain factual wording", "counter_argument": "a reader could still see selection",
            "verdict": "neutral", "confidence": 0.9}
    if "verifier" in sys_:
        return {"reason": "nothing loaded", "strongest_quote": "", "verdict": "neutral"}
    if "structured argument debate" in sys_:
        return {**base, "evidence": []}
    if "evidence analyst" in sys_:
        return {**base, "evidence": [], "evidence_score": 0.05}
    if "framing analyst" in sys_:
        return {**base, "patterns": [], "framing_score": 0.05}
    return {**base, "spans": [], "bias_score": 0.05}
