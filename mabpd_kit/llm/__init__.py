"""The LLM layer: one way to talk to any OpenAI-compatible endpoint, or to none (offline).

>>> from mabpd_kit.llm import connect
>>> llm = connect()                 # offline unless MABPD_BASE_URL / a preset is configured
>>> llm.offline
True

Components take ``llm: LLM | None`` and call :func:`online` (``None`` for no LLM or an
offline one) to choose their rule-based implementation. See :mod:`mabpd_kit.llm.client` for
what a call does, :mod:`.cache` for record/replay, :mod:`.structured` for structured output,
:mod:`.probe` for capabilities, :mod:`.registry` for what the process remembers per endpoint,
:mod:`.usage` for the run's call log (``llm.usage``; per-item usage is
:class:`mabpd_kit.types.Usage`).
The ``openai`` SDK is imported only on the first real call, so importing this is cheap.
"""

from __future__ import annotations

from .cache import ResponseCache, cache_dir
from .client import LLM, connect, online
from .errors import EndpointError, LLMError, OfflineError, ReplayMissError, StructuredOutputError
from .presets import PRESETS, Preset
from .results import Capabilities, Completion, Structured, TokenLogprob, TopLogprob
from .runtime import gather_limited, run_sync
from .usage import CallLog, collect

__all__ = [
    "LLM",
    "CallLog",
    "PRESETS",
    "Capabilities",
    "Completion",
    "EndpointError",
    "LLMError",
    "OfflineError",
    "Preset",
    "ReplayMissError",
    "ResponseCache",
    "Structured",
    "StructuredOutputError",
    "TokenLogprob",
    "TopLogprob",
    "cache_dir",
    "connect",
    "online",
    "gather_limited",
    "run_sync",
    "collect",
]
