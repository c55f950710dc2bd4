"""The LLM layer: one way to talk to any OpenAI-compatible endpoint, or to none (offline).

>>> from mabpd_kit.llm import connect
>>> llm = connect()                 # offline unless MABPD_BASE_URL / a preset is configured
>>> llm.offline
True

Components take ``llm: LLM | None`` and call :func:`online` (``None`` for no LLM or an
offline one) to choose their rule-based implementation. One file per concern:
:mod:`.connection` chooses the endpoint, :mod:`.client` makes the call, :mod:`.cache`
records and replays, :mod:`.structured` validates structured output, :mod:`.probe` finds
capabilities, :mod:`.registry` remembers limits and capabilities per endpoint, :mod:`.usage`
keeps the run's call log (``llm.usage``; per-item usage is :class:`mabpd_kit.types.Usage`),
:mod:`.batch` runs a method through the Batch API (:func:`run_batched`), :mod:`.pack` writes and
replays course packs (``MABPD_PACK``).
The ``openai`` SDK is imported only on the first real call, so importing this is cheap.
"""

from __future__ import annotations

from .batch import Deferred, run_batched
from .cache import ResponseCache, cache_dir
from .client import LLM, online
from .connection import connect
from .errors import EndpointError, LLMError, OfflineError, ReplayMissError, SetupError, StructuredOutputError
from .presets import PRESETS, Preset
from .results import Capabilities, Completion, Structured, TokenLogprob, TopLogprob
from .runtime import gather_limited, run_sync
from .usage import CallLog, collect

__all__ = [
    "LLM",
    "CallLog",
    "Deferred",
    "PRESETS",
    "Capabilities",
    "Completion",
    "EndpointError",
    "LLMError",
    "OfflineError",
    "Preset",
    "ReplayMissError",
    "ResponseCache",
    "SetupError",
    "Structured",
    "StructuredOutputError",
    "TokenLogprob",
    "TopLogprob",
    "cache_dir",
    "connect",
    "online",
    "gather_limited",
    "run_sync",
    "run_batched",
    "collect",
]
