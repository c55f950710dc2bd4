"""Errors of the LLM layer. Every message is safe to print: it never contains an API key."""

from __future__ import annotations

import re

__all__ = ["EndpointError", "LLMError", "OfflineError", "ReplayMissError", "SetupError", "StructuredOutputError", "redact"]

#: HTTP statuses after which no other call of the batch can succeed: the key (401) or the access (403) was refused.
AUTH_REFUSED = (401, 403)


class LLMError(RuntimeError):
    """Base class of every error raised by :mod:`mabpd_kit.llm`."""


class OfflineError(LLMError):
    """A chat call on the offline LLM. Components check ``llm is None or llm.offline`` first
    and use their rule-based implementation instead."""


class EndpointError(LLMError):
    """The endpoint failed after the SDK's own retries: dead server, time-out, HTTP error,
    unreadable body, missing key or model. ``.status`` is the HTTP status when there was one,
    ``.detail`` the server's own error message (key-free), and ``.batch_fatal`` is True for 401/403:
    every other call of the batch would be refused too, so :func:`mabpd_kit.runs.run` stops sending them."""

    def __init__(self, message: str, *, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail
        self.batch_fatal = status in AUTH_REFUSED


class SetupError(EndpointError):
    """:func:`~mabpd_kit.llm.connect` cannot build an endpoint: no model, no key for a remote URL, or
    a malformed URL. The one-line message names what to set (argument or environment variable)."""


class StructuredOutputError(LLMError):
    """The model's reply could not be turned into the requested schema, even after the repair
    retry. ``.raw`` holds the last reply text, ``.errors`` the last validation message."""

    def __init__(self, message: str, *, raw: str = "", errors: str = "") -> None:
        super().__init__(message)
        self.raw = raw
        self.errors = errors


class ReplayMissError(LLMError):
    """Replay mode met a request that was never recorded (the message names the request)."""


# Anything that looks like a bearer token or a provider key, even partly masked by the provider.
_KEYLIKE = re.compile(r"\b(sk|gsk|pk|rk|or|xai|key)[-_][A-Za-z0-9_\-*.]{6,}", re.IGNORECASE)
_BEARER = re.compile(r"(Bearer\s+)\S+", re.IGNORECASE)


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every given secret and anything key-shaped replaced by ``***``."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    text = _BEARER.sub(r"\1***", text)
    return _KEYLIKE.sub("***", text)
