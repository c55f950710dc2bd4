"""The LLM layer: one way to talk to any OpenAI-compatible endpoint, or to none (offline).

Components take ``llm: LLM | None`` and call :func:`online` (``None`` for no LLM or an offline one) to choose their
rule-based path. The ``openai`` SDK is imported only on the first real call."""

from __future__ import annotations

from .batch import run_batched
from .cache import ResponseCache, cache_dir
from .client import LLM, online
from .connection import connect
from .errors import (
                     Deferred,
                     EndpointError,
                     Failure,
                     LLMError,
                     OfflineError,
                     ReplayMissError,
                     SetupError,
                     StructuredOutputError,
)
from .results import Capabilities, Completion, Structured, TokenLogprob, TopLogprob
from .runtime import gather_limited, run_sync
from .servers import KINDS, PRESETS, ServerKind
from .usage import CallLog, collect

__all__ = ["KINDS", "LLM", "PRESETS", "CallLog", "Capabilities", "Completion", "Deferred", "EndpointError", "Failure",
           "LLMError", "OfflineError", "ReplayMissError", "ResponseCache", "ServerKind", "SetupError", "Structured",
           "StructuredOutputError", "TokenLogprob", "TopLogprob", "cache_dir", "collect", "connect", "gather_limited",
           "online", "run_batched", "run_sync"]
