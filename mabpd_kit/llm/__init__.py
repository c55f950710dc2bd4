"""The LLM layer: one way to talk to any OpenAI-compatible endpoint, or to none (offline).

>>> from mabpd_kit.llm import connect
>>> llm = connect()                 # offline unless MABPD_BASE_URL / a preset is configured
>>> llm.offline
True

Components take ``llm: LLM | None``; ``None`` or ``llm.offline`` means "use the rule-based
implementation". See :mod:`mabpd_kit.llm.client` for what a call does, :mod:`.cache` for
record/replay, :mod:`.structured` for structured output, :mod:`.probe` for capabilities.
The ``openai`` SDK is imported only on the first real call, so importing this is cheap.
"""

from __future__ import annotations

from .cache import ResponseCache, cache_dir
from .client import LLM, connect, online
from .errors import EndpointError, LLMError, OfflineError, ReplayMissError, StructuredOutputError
from .presets import PRESETS, Preset
from .results import Capabilities, Completion, Structured, TokenLogprob, TopLogprob
from .runtime import gather_limited, run_sync
from .usage import Usage, collect, summarize

__all__ = [
    "LLM",
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
    "Usage",
    "cache_dir",
    "connect",
    "online",
    "gather_limited",
    "run_sync",
    "summarize",
    "collect",
]
