"""Small typed records shared by every method: :class:`FrozenModel`, :class:`Usage`, :class:`Span`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FrozenModel", "Mode", "Span", "Usage", "Verdict"]

Verdict = Literal["biased", "neutral"]
Mode = Literal["rule", "llm"]


class FrozenModel(BaseModel):
    """Immutable, strict (unknown fields are an error) and validated on construction."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    def _repr_html_(self) -> str:
        """In a notebook: a table of field, value and meaning (``repr()`` is unchanged)."""
        import html

        rows = []
        fields = type(self).model_fields
        meaning = any(info.description for info in fields.values())
        for name, info in fields.items():
            value = getattr(self, name)
            shown = f"{type(value).__name__}(…)" if isinstance(value, BaseModel) else repr(value)
            if len(shown) > 80:
                shown = shown[:77] + "…"
            rows.append(f"<tr><td style='text-align:left'><code>{html.escape(name)}</code></td>"
                        f"<td style='text-align:left'>{html.escape(shown)}</td>"
                        + (f"<td style='text-align:left'>{html.escape(info.description or '')}</td>" if meaning else "")
                        + "</tr>")
        return (f"<table><caption style='text-align:left'><b>{html.escape(type(self).__name__)}</b></caption>"
                "<tr><th>field</th><th>value</th>" + ("<th>meaning</th>" if meaning else "") + "</tr>"
                + "".join(rows) + "</table>")


class Usage(FrozenModel):
    """LLM usage of a step, an item or a run (zero for rule-based work): ``a + b``, ``Usage.total(...)``."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    repaired_calls: int = Field(0, description="structured calls that needed the repair retry")
    cached_tokens: int = Field(0, description="prompt tokens the server served from its prefix cache")

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})

    def __radd__(self, other: Any) -> Usage:  # sum() starts from 0
        return self if other == 0 else self.__add__(other)

    @classmethod
    def total(cls, items: Iterable[Usage | Any]) -> Usage:
        """The sum over usage records, or over objects that carry one as ``.usage``."""
        out = cls()
        for u in items:
            out = out + (u if isinstance(u, Usage) else u.usage)
        return out

    @classmethod
    def of(cls, completions: Iterable[Any], *, repaired: bool = False) -> Usage:
        """The usage of LLM completions; ``repaired`` marks a structured call that needed its repair retry."""
        cs = list(completions)
        return cls(calls=len(cs), prompt_tokens=sum(c.prompt_tokens or 0 for c in cs),
                   completion_tokens=sum(c.completion_tokens or 0 for c in cs),
                   latency_s=sum(c.latency_s or 0.0 for c in cs), repaired_calls=int(bool(repaired and cs)),
                   cached_tokens=sum(getattr(c, "cached_tokens", 0) or 0 for c in cs))

    def row(self) -> dict[str, float]:
        """Flat columns for a results frame."""
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "call_latency_s": self.latency_s, "repaired_calls": self.repaired_calls,
                "cached_tokens": self.cached_tokens}


class Span(BaseModel):
    """A highlighted stretch: ``start``/``end`` in the cleaned text, ``orig_*`` in the raw input."""

    model_config = ConfigDict(frozen=True)

    text: str
    start: int | None = None
    end: int | None = None
    orig_start: int | None = None
    orig_end: int | None = None
    category: str = "other"
    taxonomy: str | None = None
    meta_category: str | None = None
    agent: str = "bias"
    score: float = Field(0.0, ge=0.0, le=1.0)
    valid: bool = True
    reason: str = ""
    note: str = ""
