"""The records of a batch (:class:`Results`) and the progress bar every batch shows."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from mabpd_kit.types import Usage

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Results", "progress_bar"]

R = TypeVar("R", bound=BaseModel)


class Results(Generic[R]):
    """The records of a batch (pydantic models with ``id``, ``failed``, ``error``, ``usage``, ``row()``), in
    input order. Read back from a checkpoint they stay in the file until iterated (:meth:`frames` reads by
    chunk; ``records`` reads all). ``stopped``: why a batch-fatal error stopped the batch, else None."""

    stopped: str | None = None
    record_type: type[BaseModel] | None = None
    #: checkpoint lines whose record does not read back: counted in ``len()`` and as failed
    unreadable: int = 0

    def __init__(self, records: Sequence[R] | None, *, checkpoint: str | None = None, resumed: int = 0,
                 wall_s: float = 0.0, computed: int | None = None, record: type[R] | None = None) -> None:
        self._records: list[R] | None = list(records) if records is not None else None
        self.checkpoint = checkpoint
        self.resumed = resumed
        self.wall_s = wall_s
        self.computed = computed
        if record is not None:
            self.record_type = record
        self._counts: tuple[int, int] | None = None

    @classmethod
    def read(cls, path: str | Path, record: type[R], **kw: Any) -> Results[R]:
        """The records of a checkpoint, read lazily (the run's bookkeeping in ``kw``)."""
        return cls(None, checkpoint=str(path), record=record, **kw)

    @property
    def lazy(self) -> bool:
        """True while the records are in the checkpoint file only (the report streams them from it)."""
        return self._records is None

    @property
    def records(self) -> list[R]:
        if self._records is None:
            self._records = list(self)
        return self._records

    @records.setter
    def records(self, value: Sequence[R]) -> None:
        self._records = list(value)

    def __len__(self) -> int:
        if self._records is not None:
            return len(self._records) + self.unreadable
        return self._count()[0]

    def _count(self) -> tuple[int, int]:
        if self._counts is None:
            from mabpd_kit.runs.checkpoint import Checkpoint

            idx = Checkpoint(self.checkpoint).index() if self.checkpoint else None
            self._counts = (len(idx), int(idx.failed.sum())) if idx is not None else (0, 0)
        return self._counts

    def __iter__(self) -> Iterator[R]:
        if self._records is not None:
            return iter(self._records)
        from mabpd_kit.runs.checkpoint import Checkpoint

        assert self.record_type is not None, "a lazy Results needs its record type"
        return self._read(Checkpoint(self.checkpoint)) if self.checkpoint else iter(())

    def _read(self, ck: Any) -> Iterator[R]:
        yield from ck.records(self.record_type)
        n, first = ck.unreadable
        if n and n != self.unreadable:
            print(f"mabpd-kit: {n} record(s) in {self.checkpoint} could not be read back (first: {first}); "
                  f"they count as failed", file=sys.stderr)
        self.unreadable = n

    def __getitem__(self, i: int) -> R:
        return self.records[i]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.summary()})"

    @property
    def failed(self) -> list[R]:
        return [r for r in self if r.failed]  # type: ignore[attr-defined]

    @property
    def n_failed(self) -> int:
        read = self._count()[1] if self._records is None else sum(bool(r.failed) for r in self._records)  # type: ignore[attr-defined]
        return read + self.unreadable

    @property
    def usage(self) -> Usage:
        """The run's LLM usage, resumed records included."""
        return Usage.total(self)

    def frames(self, chunk: int = 50_000) -> Iterator[pd.DataFrame]:
        """``to_frame()`` by chunks of ``chunk`` records (a corpus too large for one frame)."""
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for r in self:
            rows.append(r.row())  # type: ignore[attr-defined]
            if len(rows) >= chunk:
                yield pd.DataFrame(rows)
                rows = []
        if rows:
            yield pd.DataFrame(rows)

    def to_frame(self) -> pd.DataFrame:
        """One row per record (``record.row()``)."""
        import pandas as pd

        return pd.DataFrame([r.row() for r in self])  # type: ignore[attr-defined]

    def metrics(self) -> dict[str, float]:
        """Counts and usage; methods add their measures."""
        u = self.usage
        return {"n": len(self), "failed": self.n_failed, "calls": u.calls,
                "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}

    def summary(self) -> str:
        """One line: items, resumed, failed, calls, wall time."""
        u = self.usage
        calls = f", {u.calls} calls, {u.prompt_tokens}+{u.completion_tokens} tokens" if u.calls else ""
        stopped = f"; stopped: {self.stopped}" if self.stopped else ""
        return (f"{len(self)} items ({self.resumed} from checkpoint), {self.n_failed} failed{calls}, "
                f"{self.wall_s:.1f} s{stopped}")


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class _KernelBar:
    """A text bar in a notebook redrawn in place (every 0.2 s at most): a saved notebook keeps its final state."""

    def __init__(self, total: int | None, desc: str, unit: str) -> None:
        from IPython.display import display
        from tqdm import tqdm

        self._format = tqdm.format_meter
        self.n, self.total, self.desc, self.unit = 0, total, desc, unit
        self.t0 = self._last = time.perf_counter()
        self.handle = display({"text/plain": self._line()}, raw=True, display_id=True)

    def _line(self) -> str:
        return self._format(self.n, self.total, time.perf_counter() - self.t0, prefix=self.desc, unit=self.unit)

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.perf_counter()
        if now - self._last >= 0.2:
            self._last = now
            self.handle.update({"text/plain": self._line()}, raw=True)

    def close(self) -> None:
        self.handle.update({"text/plain": self._line()}, raw=True)


def _in_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
    except Exception:  # noqa: BLE001 - no shell, no kernel
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def status(line: str) -> None:
    """A run's summary line: stdout in a Jupyter kernel (stderr is drawn as a warning there), else stderr."""
    print(line, file=sys.stdout if _in_kernel() else sys.stderr)


def progress_bar(total: int | None, *, desc: str = "items", unit: str = "item", disable: bool = False) -> Any:
    """A progress bar with ``update(n)`` and ``close()``: in place in a kernel, tqdm on stderr elsewhere."""
    if disable:
        return _NoBar()
    if _in_kernel():
        return _KernelBar(total, desc, unit)
    from tqdm import tqdm

    return tqdm(total=total, initial=0, file=sys.stderr, unit=unit, desc=desc)
