"""The LLM layer: one way to talk to any OpenAI-compatible endpoint, or to none (offline).

>>> from mabpd_kit.llm import connect
>>> llm = connect()                 # offline unless MABPD_BASE_URL / a preset is configured
>>> llm.offline
True

Components take ``llm: LLM | None`` and call :func:`online` (``None`` for no LLM or an offline one) to choose
their rule-based path. One home per concern: :mod:`.servers` (one object per server kind, and the registry),
:mod:`.connection` (``connect()``), :mod:`.client` (the endpoint and its transport), :mod:`.answers` and
:mod:`.cache` (record/replay), :mod:`.structured` (validated output and its fallback chain), :mod:`.probe` and
:mod:`.registry` (capabilities and limits per endpoint), :mod:`.usage` (``llm.usage``), :mod:`.batch` (the
Batch API), :mod:`.pack` (course packs, ``MABPD_PACK``), :mod:`.local` (``connect("local")``).
The ``openai`` SDK is imported only on the first real call.
"""

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

Preset = ServerKind  # a preset is a server kind with a base URL

__all__ = [
    "KINDS", "LLM", "PRESETS", "CallLog", "Capabilities", "Completion", "Deferred", "EndpointError", "Failure",
    "LLMError", "OfflineError", "Preset", "ReplayMissError", "ResponseCache", "ServerKind", "SetupError",
    "Structured", "StructuredOutputError", "TokenLogprob", "TopLogprob", "cache_dir", "collect", "connect",
    "gather_limited", "online", "run_batched", "run_sync",
]
