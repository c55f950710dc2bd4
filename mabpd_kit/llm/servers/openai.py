"""OpenAI's own API: recognised by its host (not asked) or by the owners its ``/v1/models`` lists."""

from __future__ import annotations

from .base import ServerKind

__all__ = ["KIND"]

KIND = ServerKind(name="openai", base_url="https://api.openai.com/v1", key_vars=("OPENAI_API_KEY",),
                  default_model="gpt-4o-mini", needs_key=True, owned_by=("openai", "system", "openai-internal"),
                  hosts=("api.openai.com",))
