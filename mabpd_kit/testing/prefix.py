"""Prefix-cache emulation: how much of a request's prompt an earlier request already started with.

OpenAI, vLLM (automatic prefix caching), SGLang (RadixAttention) and llama.cpp (``cache_prompt``)
reuse the computation of the longest *prefix* a new prompt shares with prompts they saw before,
in blocks (OpenAI: from 1,024 tokens on, in steps of 128; vLLM: blocks of 16). Only a prefix
counts: one changed word early in the prompt makes everything after it new.

:class:`PrefixCache` keeps every prompt seen (as a token tuple) in sorted order; the longest
common prefix with *any* earlier prompt is the longer one with its two sorted neighbours, so each
lookup costs ``O(log n)`` comparisons. Tokens are pieces of the serialised prompt (words and
punctuation by default), a stand-in for a real tokenizer that is good enough for shares and costs.

>>> pc = PrefixCache(block=2)
>>> pc.add(prompt_tokens([{"role": "user", "content": "a b c d"}]))
(0, 0)
>>> pc.add(prompt_tokens([{"role": "user", "content": "a b c e"}]))  # 5 shared tokens: "user", ":", a, b, c
(5, 4)
"""

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
    """The prompt as a server sees it: ``role: content`` per message, in order. With
    ``schema_first`` the json_schema of ``response_format`` comes first (OpenAI adds a structured
    output schema before the system message, so requests with different schemas share no prefix)."""
    if isinstance(request_or_messages, dict):
        messages = request_or_messages.get("messages") or []
        fmt = request_or_messages.get("response_format") or {}
    else:
        messages, fmt = request_or_messages, {}
    head = ""
    if schema_first and fmt.get("type") == "json_schema":
        head = "schema: " + json.dumps(fmt.get("json_schema"), sort_keys=True) + "\n"
    return head + "\n".join(f"{m.get('role')}: {m.get('content') or ''}" for m in messages)


def prompt_tokens(request_or_messages: Any, *, pattern: str = TOKEN, schema_first: bool = False) -> tuple[str, ...]:
    """The serialised prompt cut into tokens by ``pattern``."""
    return tuple(re.findall(pattern, serialise(request_or_messages, schema_first=schema_first)))


def common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class PrefixCache:
    """The prompts seen so far; :meth:`add` returns ``(shared, cached)`` for a new prompt.

    ``shared``: tokens in the longest prefix shared with an earlier prompt (exact);
    ``cached``: what a block-based server reports as cached: ``shared`` rounded down to
    ``block`` tokens, and 0 below ``min_tokens`` (OpenAI: block 128, min 1,024)."""

    def __init__(self, *, block: int = 128, min_tokens: int = 0) -> None:
        if block < 1:
            raise ValueError("block must be >= 1")
        self.block = block
        self.min_tokens = min_tokens
        self._seen: list[tuple[str, ...]] = []
        self._lock = threading.Lock()

    def lookup(self, tokens: tuple[str, ...]) -> int:
        """The longest prefix ``tokens`` shares with a prompt seen before (nothing is added)."""
        with self._lock:
            i = bisect.bisect_left(self._seen, tokens)
            best = 0
            for j in (i - 1, i):
                if 0 <= j < len(self._seen):
                    best = max(best, common_prefix(tokens, self._seen[j]))
            return best

    def add(self, tokens: tuple[str, ...]) -> tuple[int, int]:
        shared = self.lookup(tokens)
        with self._lock:
            bisect.insort(self._seen, tokens)
        if len(tokens) and shared >= len(tokens):
            shared = len(tokens) - 1  # a server always computes the last token again
        shared = max(shared, 0)
        cached = 0 if shared < self.min_tokens else (shared // self.block) * self.block
        return shared, cached

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
