"""vLLM's OpenAI-compatible server: ``owned_by: "vllm"``, no ``/props``; every ``response_format`` accepted
(``strict`` ignored); it batches requests without a limit of its own."""

from __future__ import annotations

from .base import ServerKind

__all__ = ["KIND"]

KIND = ServerKind(name="vllm", base_url="http://localhost:8000/v1", key_vars=("VLLM_API_KEY",), owned_by=("vllm",))
