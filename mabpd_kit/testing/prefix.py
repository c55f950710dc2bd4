"""Prefix-cache emulation: how much of a prompt's start an earlier prompt shared, counted in blocks as OpenAI,
vLLM, SGLang and llama.cpp count it. Prompts are kept sorted, so the longest shared prefix with any earlier one is
found among two neighbours; tokens are words and punctuation, a stand-in for a real tokenizer."""

from __future__ import annotations

import bisect
import json
import re
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["TOKEN", "PrefixCache", "common_prefix", "prompt_tokens", "serialise"]

#: the default token pattern: a word or one punctuation character (close to BPE counts for English)
TOKEN = r"\w+|[^\w\s]"


def serialise(request_or_messages: Any, *, schema_first: bool = False) -> str:
    """The prompt as a server sees it: ``role: content`` per message (``schema_first``: the schema first, as OpenAI)."""
    if isinstance(request_or_messages, dict):
        messages = request_or_messages.get("messages") or []
        fmt = request_or_messages.get("response_format") or {}
    else:
        messages, fmt = request_or_messages, {}
    head = ""
    if schema_first and fmt.get("type") == "json_schema":
        head = "schema: " + json.dumps(fmt.get("json_schema"), sort_keys=True) + "\n"
    return head + "\n".join(f"{m.get('role')}: {m.get('content') or ''}" for m in messages)


def prompt_tokens(request_or_messages: Any, *, schema_first: bool = False) -> tuple[str, ...]:
    return tuple(re.findall(TOKEN, serialise(request_or_messages, schema_first=schema_first)))


def common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class PrefixCache:
    """The prompts seen so far; :meth:`add` returns ``(shared, cached)``: the exact shared prefix, and what a
    server reports as cached (rounded down to ``block`` tokens, 0 below ``min_tokens``)."""

    def __init__(self, *, block: int = 128, min_tokens: int = 0) -> None:
        if block < 1:
            raise ValueError("block must be >= 1")
        self.block = block
        self.min_tokens = min_tokens
        self._seen: list[tuple[str, ...]] = []
        self._lock = threading.Lock()

    def add(self, tokens: tuple[str, ...]) -> tuple[int, int]:
        with self._lock:
            i = bisect.bisect_left(self._seen, tokens)
            shared = max((common_prefix(tokens, self._seen[j]) for j in (i - 1, i) if 0 <= j < len(self._seen)),
                         default=0)
            self._seen.insert(i, tokens)
        if len(tokens) and shared >= len(tokens):
            shared = len(tokens) - 1  # a server always computes the last token again
        shared = max(shared, 0)
        cached = 0 if shared < self.min_tokens else (shared // self.block) * self.block
        return shared, cached
