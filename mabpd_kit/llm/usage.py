"""Token, latency and cost accounting for one LLM object: the :class:`CallLog` (``llm.usage``). Replayed answers are
recorded but cost nothing and are not ``calls``; cost is estimated from ``config.llm.prices_per_mtok``."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from mabpd_kit.types import Usage

if TYPE_CHECKING:
    import pandas as pd

    from .results import Completion

__all__ = ["CallLog", "UsageRecord", "collect", "estimate_cost"]

# The Completions made inside the innermost ``collect()`` block of this context (asyncio tasks
# and the shared I/O loop inherit the caller's context, so concurrent calls land here too).
_COLLECTOR: contextvars.ContextVar[list[Completion] | None] = contextvars.ContextVar("mabpd_collect", default=None)


@contextlib.contextmanager
def collect() -> Iterator[list[Completion]]:
    """Gather every Completion made in this block, whatever component made it (even those a failure would hide)."""
    made: list[Completion] = []
    token = _COLLECTOR.set(made)
    try:
        yield made
    finally:
        _COLLECTOR.reset(token)


def estimate_cost(model: str, prompt_tokens: int, completion_tokens: int, prices: Mapping[str, tuple[float, ...]],
                  *, cached_tokens: int = 0, batch_discount: float = 0.0) -> float:
    """USD for one call from a price table per million tokens (0 when unknown; a dated model name falls back to the
    longest entry prefixing it). ``cached_tokens`` cost the third price when there is one; ``batch_discount`` comes
    off the whole call."""
    price = prices.get(model)
    if price is None:
        prefixes = [k for k in prices if model.startswith(k)]
        if not prefixes:
            return 0.0
        price = prices[max(prefixes, key=len)]
    cached = min(max(cached_tokens, 0), prompt_tokens)
    cached_price = price[2] if len(price) > 2 else price[0]
    usd = ((prompt_tokens - cached) * price[0] + cached * cached_price + completion_tokens * price[1]) / 1_000_000
    return usd * (1.0 - batch_discount)


@dataclass(frozen=True)
class UsageRecord:
    tag: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    cost_usd: float
    cached_tokens: int = 0
    batch: bool = False


@dataclass
class CallLog:
    """The run's ledger of calls, thread-safe: totals, ``to_frame()`` (one row a call), ``by_tag()``."""

    prices_per_mtok: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    records: list[UsageRecord] = field(default_factory=list)
    batch_discount: float = 0.5

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, completion: Completion) -> None:
        batch = bool(getattr(completion, "batch", False))
        cost = 0.0 if completion.cached else estimate_cost(
            completion.model, completion.prompt_tokens, completion.completion_tokens, self.prices_per_mtok,
            cached_tokens=completion.cached_tokens, batch_discount=self.batch_discount if batch else 0.0)
        rec = UsageRecord(completion.tag, completion.model, completion.prompt_tokens, completion.completion_tokens,
                          0.0 if completion.cached else completion.latency_s, completion.cached, cost,
                          completion.cached_tokens, batch)
        with self._lock:
            self.records.append(rec)
        made = _COLLECTOR.get()
        if made is not None:
            made.append(completion)

    def _live(self) -> list[UsageRecord]:
        with self._lock:
            return [r for r in self.records if not r.cached]

    def total(self) -> Usage:
        """The run's usage (replayed answers cost nothing)."""
        return Usage.of(self._live())

    @property
    def calls(self) -> int:
        return self.total().calls

    @property
    def cached_tokens(self) -> int:
        """Prompt tokens the server served from its prefix cache."""
        return self.total().cached_tokens

    @property
    def cached_calls(self) -> int:
        with self._lock:
            return sum(r.cached for r in self.records)

    @property
    def prompt_tokens(self) -> int:
        return self.total().prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self.total().completion_tokens

    @property
    def latency_s(self) -> float:
        return self.total().latency_s

    @property
    def cost_usd(self) -> float:
        return sum(r.cost_usd for r in self._live())

    def reset(self) -> None:
        with self._lock:
            self.records.clear()

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        with self._lock:
            rows = [r.__dict__ for r in self.records]
        return pd.DataFrame(rows, columns=[f.name for f in fields(UsageRecord)])

    def by_tag(self) -> pd.DataFrame:
        df = self.to_frame()
        df["calls"] = ~df["cached"]
        cols = ["calls", "prompt_tokens", "completion_tokens", "cached_tokens", "latency_s", "cost_usd"]
        return df.groupby("tag", as_index=False)[cols].sum()

    def __repr__(self) -> str:
        return (f"CallLog(calls={self.calls}, cached={self.cached_calls}, prompt_tokens={self.prompt_tokens}, "
                f"completion_tokens={self.completion_tokens}, cached_tokens={self.cached_tokens}, "
                f"latency_s={self.latency_s:.2f}, cost_usd={self.cost_usd:.4f})")
