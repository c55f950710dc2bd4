"""Known OpenAI-compatible providers and local servers: base URL, key variable, default model.

``connect("ollama")`` needs nothing else when Ollama runs on this machine. Local servers need
no key; the SDK still wants a string, so they get the placeholder :data:`NO_KEY`.

Environment (read by :func:`mabpd_kit.llm.connect`): ``MABPD_BASE_URL``, ``MABPD_MODEL``,
``MABPD_API_KEY`` (used when the preset's own key variable is unset, and for custom URLs),
``MABPD_OFFLINE=1`` (forces offline).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlparse

__all__ = ["NO_KEY", "PRESETS", "Preset", "is_local", "preset_for_url", "resolve_key"]

NO_KEY = "not-needed"  # placeholder for servers that ignore the Authorization header


@dataclass(frozen=True)
class Preset:
    """One provider: where it listens, which env var holds its key, a sensible default model."""

    name: str
    base_url: str
    key_env: str | None
    default_model: str | None
    needs_key: bool

    def describe(self) -> str:
        key = f"key from ${self.key_env}" if self.needs_key else "no key needed"
        return f"{self.name}: {self.base_url} ({key}; default model {self.default_model or 'none: pass model='})"


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini", True),
        Preset("ollama", "http://localhost:11434/v1", "OLLAMA_API_KEY", "llama3.1", False),
        Preset("vllm", "http://localhost:8000/v1", "VLLM_API_KEY", None, False),
        Preset("llamacpp", "http://localhost:8080/v1", "LLAMACPP_API_KEY", "default", False),
        Preset("lmstudio", "http://localhost:1234/v1", "LMSTUDIO_API_KEY", None, False),
        Preset("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "openai/gpt-4o-mini", True),
        Preset("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", "llama-3.1-8b-instant", True),
        Preset("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY", "meta-llama/Llama-3.3-70B-Instruct-Turbo", True),
    ]
}


def is_local(base_url: str) -> bool:
    """True for servers on this machine (no key needed)."""
    host = (urlparse(base_url).hostname or "").lower()
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.endswith(".local")


def preset_for_url(base_url: str) -> Preset | None:
    """The preset whose base URL this is (so ``MABPD_BASE_URL=https://api.openai.com/v1``
    finds ``OPENAI_API_KEY``), else None."""
    url = base_url.rstrip("/")
    return next((p for p in PRESETS.values() if p.base_url == url), None)


def resolve_key(preset: Preset | None, base_url: str) -> str | None:
    """The API key from the environment, or None.

    Order: the preset's own variable (``OPENAI_API_KEY``, ``GROQ_API_KEY``, ...), then
    ``MABPD_API_KEY``; :data:`NO_KEY` for local servers and key-less presets. A provider's
    key is only ever sent to that provider's URL: an unknown remote URL gets ``MABPD_API_KEY``
    or nothing, never, say, your ``OPENAI_API_KEY``.
    """
    names = ([preset.key_env] if preset is not None and preset.key_env else []) + ["MABPD_API_KEY"]
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    if is_local(base_url) or (preset is not None and not preset.needs_key):
        return NO_KEY
    return None
