"""Errors of the LLM layer, typed by :class:`Failure`. Every message is safe to print: it never holds an API key."""

from __future__ import annotations

import re
from enum import Enum

__all__ = ["Deferred", "EndpointError", "Failure", "LLMError", "OfflineError", "ReplayMissError", "ReplyTooLarge",
           "Secret", "SetupError", "StructuredOutputError", "endpoint_error", "redact"]


class Failure(str, Enum):
    """What went wrong with a call, decided where it happened: callers branch on it, never on a message."""

    UNREACHABLE = "unreachable"      # no connection
    DROPPED = "dropped"              # the connection was closed mid-answer
    TIMEOUT = "timeout"              # no answer in time
    RATE_LIMITED = "rate_limited"    # still 429 after the retries
    KEY_REFUSED = "key_refused"      # 401: no later call of the batch can succeed
    ACCESS_DENIED = "access_denied"  # 403: the same
    REFUSED_FIELD = "refused_field"  # the server refused a request field (its kind's refuses_mode says so)
    HTTP = "http"                    # any other HTTP error
    GARBLED = "garbled"              # a body that is not a chat completion (a caller may send it again)
    TOO_LARGE = "too_large"          # a body over config.llm.max_reply_bytes (not sent again)
    SETUP = "setup"                  # connect() cannot build an endpoint
    DEFERRED = "deferred"            # batch mode: the call waits for the next Batch API pass


_BY_STATUS = {401: Failure.KEY_REFUSED, 403: Failure.ACCESS_DENIED}


class LLMError(RuntimeError):
    """Base class of every error raised by :mod:`mabpd_kit.llm`."""


class OfflineError(LLMError):
    """A chat call on the offline LLM (components check ``online(llm)`` first and use their rule-based path)."""


class EndpointError(LLMError):
    """A call failed after its retries: ``.kind`` (:class:`Failure`), ``.status`` (HTTP, when there was one),
    ``.detail`` (the server's own message, key-free)."""

    def __init__(self, message: str, *, status: int | None = None, detail: str = "", kind: Failure | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail
        self.kind = kind or _BY_STATUS.get(status or 0) or (Failure.HTTP if status else Failure.SETUP)

    @property
    def batch_fatal(self) -> bool:
        """Every other call of the batch would be refused too (401/403)."""
        return self.kind in (Failure.KEY_REFUSED, Failure.ACCESS_DENIED)

    @property
    def unreachable(self) -> bool:
        """No connection, or no answer in time."""
        return self.kind in (Failure.UNREACHABLE, Failure.DROPPED, Failure.TIMEOUT)

    @property
    def garbled(self) -> bool:
        return self.kind is Failure.GARBLED


class ReplyTooLarge(EndpointError):
    """A reply body longer than ``config.llm.max_reply_bytes``: not read further nor asked again; the item fails."""

    def __init__(self, where: str, limit: int, declared: int | None) -> None:
        said = f" (it declares {declared / 1e6:.1f} MB)" if declared is not None else ""
        super().__init__(redact(f"the reply to {where} is larger than config.llm.max_reply_bytes = {limit / 1e6:g} MB"
                                f"{said}: stopped reading it; this item fails, the batch goes on"), kind=Failure.TOO_LARGE)


class SetupError(EndpointError):
    """:func:`~mabpd_kit.llm.connect` cannot build an endpoint; the one-line message names what to set."""


class StructuredOutputError(LLMError):
    """No valid instance of the schema after the repair retry: ``.raw`` the last reply, ``.errors`` its validation."""

    def __init__(self, message: str, *, raw: str = "", errors: str = "") -> None:
        super().__init__(message)
        self.raw = raw
        self.errors = errors


class ReplayMissError(LLMError):
    """Replay mode met a request that was never recorded (the message names the request)."""


class Deferred(Exception):  # noqa: N818 - not an error: the item waits for the batch
    """Raised inside an item whose call waits for the next Batch API pass (not an LLMError: nothing falls back)."""

    kind = Failure.DEFERRED


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


#: the types of a transport error that mean the server closed the connection mid-answer
_DROPPED = frozenset({"RemoteProtocolError", "ReadError", "WriteError", "ConnectionResetError", "BrokenPipeError",
                      "ConnectionAbortedError"})


def _kind_and_message(exc: BaseException, where: str, after: str, key_env: str, model: str, timeout_s: float,
                      concurrency: int | None) -> tuple[Failure, str]:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return Failure.TIMEOUT, f"no answer from {where} within {timeout_s:g} s{after}"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        if cause is not None and _DROPPED & {c.__name__ for c in type(cause).__mro__}:
            return Failure.DROPPED, f"the connection to {where} was dropped mid-answer{after}: the server closed or reset it"
        return Failure.UNREACHABLE, f"cannot reach {where}{after}: is the server running?"
    if isinstance(exc, openai.RateLimitError):
        return Failure.RATE_LIMITED, (f"{where} is still rate-limiting (HTTP 429){after}: lower config.llm.concurrency "
                                      f"(now {concurrency if concurrency is not None else 'auto'}) or wait")
    if isinstance(exc, openai.AuthenticationError):
        return Failure.KEY_REFUSED, f"{where} refused the API key (HTTP 401): set {key_env} to a valid key and connect() again"
    if isinstance(exc, openai.PermissionDeniedError):
        return Failure.ACCESS_DENIED, (f"{where} denied access (HTTP 403): check that the key in {key_env} may use "
                                       f"model {model!r}, then connect() again")
    if isinstance(exc, openai.APIStatusError):
        detail = getattr(exc, "message", "") or str(exc)
        return Failure.HTTP, f"{where} answered HTTP {exc.status_code}: {detail[:300]}"
    return Failure.GARBLED, f"unreadable answer from {where}: {type(exc).__name__}: {str(exc)[:200]}"


def endpoint_error(exc: BaseException, *, where: str, key: str, key_env: str, model: str, timeout_s: float,
                   retries: int, concurrency: int | None) -> EndpointError:
    """A key-free one-line :class:`EndpointError` for a final failure of the ``openai`` SDK."""
    from mabpd_kit.printable import printable  # the server's text: no control sequence reaches a terminal or log

    after = f" after {retries} retries" if retries else " (not sent again)"
    kind, msg = _kind_and_message(exc, where, after, key_env, model, timeout_s, concurrency)
    detail = printable(redact(str(getattr(exc, "message", "") or ""), key)[:300])
    return EndpointError(printable(redact(msg, key)), status=getattr(exc, "status_code", None), detail=detail, kind=kind)
