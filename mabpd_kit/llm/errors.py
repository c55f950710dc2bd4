"""Errors of the LLM layer. Every message is safe to print: it never contains an API key."""

from __future__ import annotations

import re

__all__ = ["EndpointError", "LLMError", "OfflineError", "ReplayMissError", "ReplyTooLarge", "Secret", "SetupError", "StructuredOutputError",
           "endpoint_error", "redact"]

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
        self.unreachable = False  # no connection, or no answer in time (set by endpoint_error)


class ReplyTooLarge(EndpointError):
    """A reply body longer than ``config.llm.max_reply_bytes``: read no further than that, never held
    whole, and not asked again (the same request would bring the same reply); the item fails with it."""

    def __init__(self, where: str, limit: int, declared: int | None) -> None:
        said = f" (it declares {declared / 1e6:.1f} MB)" if declared is not None else ""
        super().__init__(redact(f"the reply to {where} is larger than config.llm.max_reply_bytes = {limit / 1e6:g} MB"
                                f"{said}: stopped reading it; this item fails, the batch goes on"))
        self.garbled = False


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


class Secret:
    """Holds the API key; prints as ``***`` so it never leaks through repr, vars() or logs."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "***"

    __str__ = __repr__


def endpoint_error(exc: BaseException, *, where: str, key: str, key_env: str, model: str, timeout_s: float,
                   retries: int, concurrency: int | None) -> EndpointError:
    """A key-free :class:`EndpointError` for a final failure of the ``openai`` SDK (one line, naming what
    to do). ``where``: the endpoint and the request, as the message should name them."""
    import openai

    status = getattr(exc, "status_code", None)
    after = f" after {retries} retries" if retries else " (not sent again)"
    if isinstance(exc, openai.APITimeoutError):
        msg = f"no answer from {where} within {timeout_s:g} s{after}"
    elif isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        text = f"{type(cause).__name__}: {cause}".lower() if cause is not None else ""
        if any(w in text for w in ("reset", "remoteprotocol", "disconnected", "broken pipe", "incomplete")):
            msg = f"the connection to {where} was dropped mid-answer{after}: the server closed or reset it"
        else:
            msg = f"cannot reach {where}{after}: is the server running?"
    elif isinstance(exc, openai.RateLimitError):
        msg = (f"{where} is still rate-limiting (HTTP 429){after}: lower config.llm.concurrency "
               f"(now {concurrency if concurrency is not None else 'auto'}) or wait")
    elif isinstance(exc, openai.AuthenticationError):
        msg = f"{where} refused the API key (HTTP 401): set {key_env} to a valid key and connect() again"
    elif isinstance(exc, openai.PermissionDeniedError):
        msg = (f"{where} denied access (HTTP 403): check that the key in {key_env} may use model "
               f"{model!r}, then connect() again")
    elif isinstance(exc, openai.APIStatusError):
        detail = getattr(exc, "message", "") or str(exc)
        msg = f"{where} answered HTTP {status}: {detail[:300]}"
    else:
        msg = f"unreadable answer from {where}: {type(exc).__name__}: {str(exc)[:200]}"
    from mabpd_kit.printable import printable  # the server's text: no control sequence reaches a terminal or log

    detail = printable(redact(str(getattr(exc, "message", "") or ""), key)[:300])
    err = EndpointError(printable(redact(msg, key)), status=status, detail=detail)
    err.unreachable = isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError))
    return err
