"""Ollama's OpenAI-compatible endpoint: ``owned_by: "library"``, no ``/props``; local. It computes
``OLLAMA_NUM_PARALLEL`` requests at once (4 by default), which it does not report."""

from __future__ import annotations

from .base import ServerKind

__all__ = ["KIND"]

KIND = ServerKind(name="ollama", base_url="http://localhost:11434/v1", key_vars=("OLLAMA_API_KEY",),
                  default_model="llama3.1", owned_by=("library", "ollama"), local_compute=True, emulated_slots=4)
