"""The corpus settings (``Config.corpus``, :class:`mabpd_kit.config.CorpusConfig`) and how a call resolves them."""

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
