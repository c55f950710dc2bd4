"""mabpd-kit: multi-agent LLM debate for media bias, as a teaching and analysis toolkit.

Importing the package is cheap: submodules load on first use (``mk.Config()``, ``mk.connect()``,
``mk.Pipeline(cfg, llm)``; ``mk.radar``, ``mk.identity``, ``mk.data``, ``mk.viz``...).
"""

from __future__ import annotations

import importlib as _importlib

__version__ = "0.1.0"

# the curated face: name -> (module, attribute)
_FACE = {"Config": ("mabpd_kit.config", "Config"), "connect": ("mabpd_kit.llm", "connect"),
         "Pipeline": ("mabpd_kit.mabpd", "Pipeline"), "Decision": ("mabpd_kit.mabpd", "Decision"),
         "Lexicon": ("mabpd_kit.lexicon", "Lexicon"), "Span": ("mabpd_kit.types", "Span")}
# namespaces, imported on first use: one per method, plus the shared layers
_NAMESPACES = ("mabpd", "radar", "identity", "bridges", "data", "metrics", "evaluate", "viz", "widgets", "llm",
               "lexicon", "text", "runs", "prompts", "config", "types", "testing", "cli", "demo", "corpus", "language",
               "roster", "exercises")

__all__ = sorted(_FACE) + list(_NAMESPACES) + ["__version__"]


def __getattr__(name: str) -> object:
    if name in _FACE:
        module, attr = _FACE[name]
        value = getattr(_importlib.import_module(module), attr)
        globals()[name] = value
        return value
    if name in _NAMESPACES:
        return _importlib.import_module(f"mabpd_kit.{name}")
    raise AttributeError(f"module 'mabpd_kit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
