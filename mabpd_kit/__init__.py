"""mabpd-kit: multi-agent LLM debate for media bias, as a teaching and analysis toolkit.

Importing the package is cheap: submodules (and altair, scipy) load on first use.

>>> import mabpd_kit as mk
>>> cfg = mk.Config()                 # every default of ../shared/SPEC.md
>>> llm = mk.connect()                # offline rule-based agents unless an endpoint is configured
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Config": ("mabpd_kit.config", "Config"),
    "connect": ("mabpd_kit.llm", "connect"),
    "Pipeline": ("mabpd_kit.pipeline", "Pipeline"),
    "Decision": ("mabpd_kit.pipeline", "Decision"),
    "Lexicon": ("mabpd_kit.lexicon", "Lexicon"),
    "Span": ("mabpd_kit.types", "Span"),
}
_SUBMODULES = {
    "llm", "lexicon", "text", "agents", "scoring", "consensus", "debate", "verify", "pipeline",
    "halftruth", "stopping", "identity", "metrics", "datasets", "viz", "widgets", "cli", "config",
    "types", "testing", "evaluate", "demo",
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"mabpd_kit.{name}")
    raise AttributeError(f"module 'mabpd_kit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
