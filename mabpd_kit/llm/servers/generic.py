"""Servers with no behaviour of their own: any server that says nothing about itself, and the presets of
hosted or local OpenAI-compatible services that behave like it."""

from __future__ import annotations

from .base import ServerKind

__all__ = ["GENERIC", "GROQ", "LMSTUDIO", "OPENROUTER", "TOGETHER"]

#: what an unknown server (and the scripted test server) gets
GENERIC = ServerKind(name="openai-compatible")
LMSTUDIO = ServerKind(name="lmstudio", base_url="http://localhost:1234/v1", key_vars=("LMSTUDIO_API_KEY",))
OPENROUTER = ServerKind(name="openrouter", base_url="https://openrouter.ai/api/v1", key_vars=("OPENROUTER_API_KEY",),
                        default_model="openai/gpt-4o-mini", needs_key=True)
GROQ = ServerKind(name="groq", base_url="https://api.groq.com/openai/v1", key_vars=("GROQ_API_KEY",),
                  default_model="llama-3.1-8b-instant", needs_key=True)
TOGETHER = ServerKind(name="together", base_url="https://api.together.xyz/v1", key_vars=("TOGETHER_API_KEY",),
                      default_model="meta-llama/Llama-3.3-70B-Instruct-Turbo", needs_key=True)
