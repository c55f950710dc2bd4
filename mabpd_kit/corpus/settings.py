"""The corpus settings live in the one :class:`mabpd_kit.config.Config`, as ``Config.corpus``
(:class:`mabpd_kit.config.CorpusConfig`); this module re-exports the class and resolves them.

>>> from mabpd_kit.corpus.settings import CorpusConfig
>>> CorpusConfig().article_threshold   # from resources/fits/count_threshold.json
8.5
"""

from __future__ import annotations

from typing import Any

from mabpd_kit.config import CorpusConfig

__all__ = ["CorpusConfig", "resolve"]


def resolve(settings: CorpusConfig | None = None, config: Any = None) -> CorpusConfig:
    """``settings``, else ``config.corpus``, else the defaults."""
    if settings is not None:
        return settings
    found = getattr(config, "corpus", None)
    return found if isinstance(found, CorpusConfig) else CorpusConfig()
