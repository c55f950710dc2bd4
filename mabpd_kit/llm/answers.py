"""The answer cache policy of one :class:`~mabpd_kit.llm.LLM`: answer from the store when the mode allows, store only
usable answers, remove one that proved unusable, note a failed call (a course pack replays it), claim an uncached
request in ``auto`` mode so two callers sharing a cache send it once."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from .cache import request_key
from .errors import Secret
from .results import Completion

__all__ = ["Answers"]


class Answers:
    """The store (``ResponseCache``, a ``PackCache`` or None) and the mode, for one endpoint."""

    def __init__(self, store: Any, mode: str, endpoint: str, secret: Secret) -> None:
        self.store = store
        self.mode = mode
        self.endpoint = endpoint
        self._secret = secret

    @property
    def recording(self) -> bool:
        return self.store is not None and self.mode in ("auto", "record")

    def key(self, request: dict[str, Any], sample_index: int) -> str:
        return request_key(self.endpoint, request, sample_index)

    def hit(self, key: str, tag: str, accept: Callable[[Completion], bool] | None) -> Completion | None:
        """The recorded answer of ``key``; one ``accept`` rejects is removed."""
        hit = self.store.get(key) if self.store is not None else None
        comp = None if hit is None else Completion.model_validate({**hit, "cached": True, "tag": tag})
        if comp is not None and accept is not None and self.mode != "replay" and not accept(comp):
            self.store.delete(key)
            return None
        return comp

    def store_answer(self, request: dict[str, Any], sample_index: int, comp: Completion) -> None:
        """Record a usable answer; never an empty reply or a refusal."""
        if self.recording and not comp.cached and comp.usable:
            self.store.put(self.key(request, sample_index), comp.model_dump(exclude={"cached", "tag"}),
                           model=comp.model, preview=str(request["messages"][-1].get("content") or "")[:200])

    def forget(self, request: dict[str, Any], sample_index: int) -> None:
        """Remove a recorded answer that proved unusable."""
        if self.recording:
            self.store.delete(self.key(request, sample_index))

    def note(self, request: dict[str, Any], sample_index: int, tag: str, exc: BaseException) -> BaseException:
        """Note a call that failed while recording; returns ``exc``."""
        if self.recording:
            self.store.note_failure(self.key(request, sample_index), tag, exc, self._secret.get())
        return exc

    def claim(self, request: dict[str, Any], sample_index: int, wait_s: float) -> Any:
        """``auto`` mode: the claim of the request's key (:meth:`.cache.ResponseCache.claim`)."""
        if self.store is None or self.mode != "auto":
            return contextlib.nullcontext(False)
        return self.store.claim(self.key(request, sample_index), wait_s)
