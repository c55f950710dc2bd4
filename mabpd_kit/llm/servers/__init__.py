"""The registry of server kinds, read whenever it is needed (``connect()``'s presets, detection, a pack's key check,
``mabpd doctor``, the test server's emulations): a new kind is a :class:`ServerKind` in its own file and its line
in :data:`KINDS` (or :func:`register`)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlparse

from . import generic, llama_cpp_python, llama_server, ollama, openai, vllm
from .base import ServerKind

__all__ = ["GENERIC", "KINDS", "PRESETS", "ServerKind", "detect", "find", "key_vars", "probe_server", "register"]

GENERIC = generic.GENERIC
#: every kind by name; detection asks them in this order (llama-server's /props before anyone's owned_by)
KINDS: dict[str, ServerKind] = {k.name: k for k in (
    llama_server.KIND, openai.KIND, llama_cpp_python.KIND, vllm.KIND, ollama.KIND,
    generic.LMSTUDIO, generic.OPENROUTER, generic.GROQ, generic.TOGETHER, GENERIC,
)}


def register(kind: ServerKind) -> ServerKind:
    """Add (or replace) a kind."""
    KINDS[kind.name] = kind
    return kind


def find(name: str) -> ServerKind | None:
    """The kind called ``name`` or one of its aliases (case-insensitive), else None."""
    name = name.lower()
    return next((k for k in KINDS.values() if name == k.name or name in k.aliases), None)


class _Presets(Mapping[str, ServerKind]):
    """The kinds ``connect(NAME)`` reaches without a URL, by name and alias."""

    def _all(self) -> dict[str, ServerKind]:
        return {n: k for k in KINDS.values() if k.base_url for n in (k.name, *k.aliases)}

    def __getitem__(self, name: str) -> ServerKind:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


PRESETS: Mapping[str, ServerKind] = _Presets()


def key_vars() -> tuple[str, ...]:
    """Every environment variable that may hold a key: ``MABPD_API_KEY`` and each kind's own."""
    return tuple(dict.fromkeys(["MABPD_API_KEY", *(v for k in KINDS.values() for v in k.key_vars)]))


def _get_json(url: str, timeout_s: float) -> Any:
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # noqa: S310 - the user's own endpoint
        return json.loads(resp.read(1_000_000))


def probe_server(endpoint: str, timeout_s: float = 10.0) -> dict[str, Any]:
    """What the server says about itself: ``{"models": ..., "props": ...}`` (each absent when it does not answer); two
    tiny GETs, each tried twice, no key sent; a host a kind names is not asked. Never raises."""
    info: dict[str, Any] = {}
    parsed = urlparse(endpoint)
    if parsed.hostname is None or any(parsed.hostname in k.hosts for k in KINDS.values()):
        return info
    for key, url in (("models", endpoint.rstrip("/") + "/models"), ("props", f"{parsed.scheme}://{parsed.netloc}/props")):
        for _ in range(2):
            try:
                info[key] = _get_json(url, timeout_s)
                break
            except urllib.error.HTTPError:
                break  # it answered: no such route
            except Exception:  # noqa: BLE001 - a server that does not answer says nothing about itself
                continue
    return info


def detect(endpoint: str, info: dict[str, Any], forced: str = "auto") -> ServerKind:
    """The kind of ``endpoint``: ``forced`` unless ``"auto"``, else the first kind that recognises it, else GENERIC."""
    if forced and forced != "auto":
        kind = find(forced)
        if kind is None:
            raise ValueError(f"config.llm.server={forced!r}: choose auto or one of {', '.join(KINDS)}")
        return kind
    host = urlparse(endpoint).hostname or ""
    return next((k for k in KINDS.values() if k.recognises(host, info)), GENERIC)
