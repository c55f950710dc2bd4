"""The one checkpoint contract: a JSONL file, one line per finished item, and what is read from it.

A line is ``{"id", "digest", "fingerprint", "failed", "retry", "size", "record"}``, written whole or not at
all; the last line of an id wins for every reader; a torn line is skipped and cut off.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from mabpd_kit.runs.encoding import dumps, loads

__all__ = ["Busy", "Checkpoint", "Index", "WriteFailed", "digest", "fingerprint", "line", "read_checkpoint", "split"]

R = TypeVar("R", bound=BaseModel)

#: where a line of the writer's own layout turns from its keys to its record
_RECORD = b', "record": '


def digest(value: Any) -> str:
    """A stable hash of any JSON-able input (text as UTF-8; other values as sorted JSON)."""
    raw = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha1(raw.encode("utf-8", "replace")).hexdigest()


def fingerprint(*parts: Any) -> str:
    """What a checkpoint is valid for (a configuration, a model name...): records of another are not reused."""
    norm = [p.model_dump(mode="json") if isinstance(p, BaseModel) else p for p in parts]
    return digest(norm)[:16]


def line(id: str, dg: str, fp: str, rec: BaseModel) -> str:
    """One checkpoint line (with its newline)."""
    body = dumps(rec)  # NaN and +-inf kept (JSON constants), so every record reads back
    failed = bool(getattr(rec, "failed", False))
    head = json.dumps({"id": id, "digest": dg, "fingerprint": fp, "failed": failed,
                       "retry": failed or bool(getattr(rec, "incomplete", False)), "size": len(body.encode("utf-8"))},
                      ensure_ascii=False)
    return f'{head[:-1]}, "record": {body}}}\n'


def _key(id: str, dg: str, fp: str) -> int:
    return hash((id, dg, fp))


#: lock files this process holds; a forked worker closes its copies, so it never keeps a checkpoint locked
_HELD: list[Any] = []
_AT_FORK: list[bool] = []


def _close_in_child() -> None:
    for fh in _HELD:
        try:
            fh.close()
        except OSError:
            pass
    _HELD.clear()


class Busy(RuntimeError):
    """Another process holds the checkpoint."""


class WriteFailed(OSError):
    """The results file cannot be written (a full disk, a quota): the batch stops; a rerun resumes."""

    batch_fatal = True

    @classmethod
    def of(cls, path: Path, exc: OSError) -> WriteFailed:
        why = exc.strerror or str(exc)
        err = cls(exc.errno, f"cannot write the results file {path}: {why}; every finished item is kept in it, "
                             "so run the same command again once there is room")
        err.filename = None  # the message names it already
        return err

    def __str__(self) -> str:
        return str(self.strerror)


class Index:
    """The keys of a checkpoint's lines (last line of an id wins)."""

    def __init__(self, ids: Any, keys: Any, failed: Any, offsets: Any, retry: Any) -> None:
        import numpy as np

        order = np.lexsort((offsets, ids))          # by id, then file position
        by_id = ids[order]
        last = np.ones(len(by_id), dtype=bool)
        if len(by_id):
            last[:-1] = by_id[1:] != by_id[:-1]      # the last line of each id
        self.ids = by_id[last]
        del by_id
        pick = order[last]                           # only the kept lines are copied: peak memory ~2/3 of sorting all
        del order, last
        self.keys, self.failed, self.offsets, self.retry = keys[pick], failed[pick], offsets[pick], retry[pick]
        self.lines = len(ids)

    def __len__(self) -> int:
        return len(self.ids)

    def reusable(self, id: str, dg: str, fp: str, retry_failed: bool = True) -> bool:
        import numpy as np

        h = hash(id)
        i = int(np.searchsorted(self.ids, h))
        if i >= len(self.ids) or self.ids[i] != h or self.keys[i] != _key(id, dg, fp):
            return False
        return not (self.retry[i] and retry_failed)


class Checkpoint:
    """A checkpoint file: its index, its writer and lock, its parts and its reconciliation."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fh: Any = None
        self._lock: Any = None
        self.unreadable: tuple[int, str] = (0, "")  # whole lines whose record does not read: (count, first why)

    def _lines(self) -> Iterator[tuple[int, tuple[dict[str, Any], bytes]]]:
        """``(offset, split(line))`` of every readable line."""
        if not self.path.exists():
            return
        with self.path.open("rb") as fh:
            pos = 0
            for raw in fh:
                start, pos = pos, pos + len(raw)
                got = split(raw)
                if got is not None:
                    yield start, got

    def index(self) -> Index:
        import numpy as np

        ids, keys, flags, offsets = array("q"), array("q"), array("b"), array("q")
        for off, (h, _) in self._lines():
            ids.append(hash(h["id"]))
            keys.append(_key(h["id"], h["digest"], h["fingerprint"]))
            flags.append(h["failed"] | (h["retry"] << 1))
            offsets.append(off)
        f = np.frombuffer(flags, dtype=np.int8)
        return Index(np.frombuffer(ids, dtype=np.int64), np.frombuffer(keys, dtype=np.int64), (f & 1).astype(bool),
                     np.frombuffer(offsets, dtype=np.int64), (f & 2).astype(bool))

    def entries(self, record: type[R]) -> Iterator[tuple[int, dict[str, Any], R]]:
        """``(offset, keys, record)`` of every readable line; one whose record does not read is counted."""
        self.unreadable = (0, "")
        for start, (head, body) in self._lines():
            try:
                rec = loads(body, record)
            except (ValueError, KeyError, TypeError) as exc:
                why = f"{head['id']}: {str(exc).splitlines()[0][:200]}"
                self.unreadable = (self.unreadable[0] + 1, self.unreadable[1] or why)
                continue
            yield start, head, rec

    def records(self, record: type[R]) -> Iterator[R]:
        """The last record of each id, in file order."""
        return (rec for _, _, rec in self.latest(record))

    def latest(self, record: type[R]) -> Iterator[tuple[int, dict[str, Any], R]]:
        """:meth:`entries` of the last line of each id only."""
        idx = self.index()
        keep = set(idx.offsets.tolist()) if idx.lines != len(idx) else None  # None: no id repeated
        yield from (e for e in self.entries(record) if keep is None or e[0] in keep)

    def lock(self) -> None:
        """Hold ``FILE.lock`` for this process, or raise :class:`Busy` naming its holder."""
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; one process per file is then up to the user
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        real = self.path.resolve()  # two paths to one file (a symbolic link) share one lock
        fh = open(real.with_name(real.name + ".lock"), "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            who = fh.read().strip() or "another process"
            fh.close()
            raise Busy(f"{self.path} is being written by {who}; wait for that run to end, or use another "
                       f"results file") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"process {os.getpid()} ({' '.join(sys.argv[:1])[-60:]})")
        fh.flush()
        self._lock = fh
        if not _AT_FORK and hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_close_in_child)
            _AT_FORK.append(True)
        _HELD.append(fh)

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("ab", buffering=0)
        with self.path.open("rb") as src:
            end = os.fstat(src.fileno()).st_size
            whole = _whole_lines(src.fileno(), end)
        if whole < end:  # a killed run (or a full disk) left half a line: it holds no record, cut it off
            os.ftruncate(self._fh.fileno(), whole)

    def write(self, text: str) -> None:
        """Append whole lines; a failed write cuts the file back and raises :class:`WriteFailed`."""
        fd = self._fh.fileno()
        data = memoryview(text.encode("utf-8"))
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            while data:
                data = data[os.write(fd, data):]
        except OSError as exc:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass
            raise WriteFailed.of(self.path, exc) from None

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._lock is not None:
            if self._lock in _HELD:
                _HELD.remove(self._lock)
            self._lock.close()
            self._lock = None

    @property
    def parts_dir(self) -> Path:
        return self.path.with_name(self.path.name + ".parts")

    def fold(self, part: Path) -> None:
        """Append a committed part file to the checkpoint and remove it."""
        with part.open(encoding="utf-8") as fh:
            for text in fh:
                if text.endswith("\n"):
                    self.write(text)
        os.fsync(self._fh.fileno())
        part.unlink()

    def fold_all(self) -> None:
        """Fold every committed part a killed run left behind; drop uncommitted temporary files."""
        if self.parts_dir.is_dir():
            for p in sorted(self.parts_dir.iterdir()):
                if p.suffix == ".jsonl":
                    self.fold(p)
                else:
                    p.unlink(missing_ok=True)

    def reconcile(self, order: array) -> None:
        """Rewrite the file (atomically) to hold the run's items (``order``: ``hash(id)`` of each) once each, in
        that order; stale lines go to ``FILE.stale.jsonl``, superseded ones are dropped."""
        import numpy as np

        want = np.asarray(order, dtype=np.int64)
        if self._in_order(order):  # the usual case: checked line by line
            return
        idx = self.index()
        pos = np.searchsorted(idx.ids, want) if len(idx) else np.zeros(len(want), dtype=np.int64)
        pos = np.minimum(pos, max(len(idx) - 1, 0))
        have = (idx.ids[pos] == want) if len(idx) else np.zeros(len(want), dtype=bool)
        offsets = idx.offsets[pos][have]
        in_run = np.zeros(len(idx), dtype=bool)
        in_run[pos[have]] = True
        stale = int((~in_run).sum())
        if not stale and idx.lines == len(idx) and bool(np.all(np.diff(offsets) > 0)):
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            self._rewrite(tmp, offsets, idx.offsets[~in_run] if stale else None)
        except OSError as exc:  # a full disk: the file stays as it was (every record in it), no partial copy
            tmp.unlink(missing_ok=True)
            raise WriteFailed.of(self.path, exc) from None
        reopen = self._fh is not None
        if reopen:
            self._fh.close()
        os.replace(tmp, self.path)
        if reopen:
            self._fh = self.path.open("ab", buffering=0)

    def _rewrite(self, tmp: Path, offsets: Any, stale: Any) -> None:
        """Copy the lines at ``offsets`` to ``tmp`` (synced); append those at ``stale`` to ``FILE.stale.jsonl``."""
        with self.path.open("rb") as src, tmp.open("wb") as dst:
            for off in offsets.tolist():
                src.seek(off)
                dst.write(src.readline())
            if stale is not None:
                with self.path.with_name(self.path.stem + ".stale.jsonl").open("ab") as old:
                    for off in stale.tolist():
                        src.seek(off)
                        old.write(src.readline())
            dst.flush()
            os.fsync(dst.fileno())

    def _in_order(self, want: Any) -> bool:
        """Are the readable lines exactly ``want``'s ids, in order? One pass, no index."""
        n = len(want)
        k = 0
        for _, (head, _) in self._lines():
            if k >= n or hash(head["id"]) != want[k]:
                return False
            k += 1
        return k == n


def _whole_lines(fd: int, end: int, block: int = 1 << 16) -> int:
    """The length of the file's whole lines (up to its last newline), read backwards a block at a time."""
    pos = end
    while pos > 0:
        start = max(0, pos - block)
        chunk = os.pread(fd, pos - start, start)
        if pos == end and chunk.endswith(b"\n"):
            return end
        k = chunk.rfind(b"\n")
        if k >= 0:
            return start + k + 1
        pos = start
    return 0


def split(raw: bytes) -> tuple[dict[str, Any], bytes] | None:
    """``(keys, record JSON)`` of a whole checkpoint line (the record not parsed), None for a torn one."""
    if not raw.endswith(b"\n"):
        return None  # torn: a run killed mid-write
    k = raw.find(_RECORD)
    head: Any = None
    if k > 0 and raw.endswith(b"}\n"):
        try:
            head = json.loads(raw[:k] + b"}")
        except ValueError:
            head = None
        rec = raw[k + len(_RECORD):-2]
        if isinstance(head, dict) and "size" in head and head["size"] != len(rec):
            return None  # shorter than written: torn
    if not isinstance(head, dict) or "id" not in head:
        try:
            obj = json.loads(raw)
            if not isinstance(obj, dict) or "record" not in obj or "id" not in obj:
                return None
            head, rec = obj, json.dumps(obj.pop("record")).encode("utf-8")
        except (ValueError, TypeError):
            return None
    bad = bool(head.get("failed", False))
    return ({"id": str(head["id"]), "digest": str(head.get("digest", "")), "fingerprint": str(head.get("fingerprint", "")),
             "failed": bad, "retry": bool(head.get("retry", bad))}, rec)


def read_checkpoint(path: str | Path, record: type[R]) -> dict[str, tuple[str, str, R]]:
    """``id -> (digest, fingerprint, record)`` of a small checkpoint, the last line of an id winning."""
    found: dict[str, tuple[str, str, R]] = {}
    for _, head, rec in Checkpoint(path).entries(record):
        found[head["id"]] = (head["digest"], head["fingerprint"], rec)
    return found
