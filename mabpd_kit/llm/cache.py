"""Record/replay cache of LLM answers: a SQLite file (WAL, safe for concurrent writers) keyed by the SHA-256 of the
canonical request, never the key. Modes: ``off``, ``record``, ``replay`` (a request not recorded raises
:class:`ReplayMissError`), ``auto`` (answer from the cache, else call and store). A failed write is said once and
never raises; :meth:`ResponseCache.claim` makes one process send an uncached request while the others wait."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from .errors import ReplayMissError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, claims are granted at once
    fcntl = None  # type: ignore[assignment]

__all__ = ["MODES", "CacheMode", "ResponseCache", "cache_dir", "replay_miss", "request_key", "resolve_mode"]

CacheMode = Literal["off", "record", "replay", "auto"]
MODES: tuple[str, ...] = ("off", "record", "replay", "auto")
DB_NAME = "llm-cache.sqlite3"
#: the request fields a cache key is computed from (with the base URL and the sample index)
_KEYED = ("model", "messages", "response_format", "temperature", "seed", "n", "max_tokens", "logprobs", "top_logprobs")


def cache_dir() -> Path:
    """``MABPD_CACHE_DIR`` or the user cache directory of mabpd-kit."""
    env = os.environ.get("MABPD_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("mabpd-kit", appauthor=False))


def resolve_mode(configured: str, override: str | None = None) -> CacheMode:
    """The effective mode: the argument, then ``MABPD_CACHE_MODE``, then the configuration."""
    mode = (override or os.environ.get("MABPD_CACHE_MODE", "").strip() or configured).lower()
    if mode not in MODES:
        raise ValueError(f"cache mode {mode!r} unknown; choose from {', '.join(MODES)}")
    return mode  # type: ignore[return-value]


def request_key(base_url: str, request: dict[str, Any], sample_index: int) -> str:
    """SHA-256 over the canonical JSON of what determines the answer (never the API key)."""
    canonical = {"base_url": base_url.rstrip("/"), **{k: request.get(k) for k in _KEYED}, "sample_index": sample_index}
    blob = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def replay_miss(tag: str, described: str, sample_index: int, key: str, where: str) -> ReplayMissError:
    """The error of replay mode for a request never recorded."""
    return ReplayMissError(
        f"replay mode: no recorded answer for {tag or 'a request'} ({described}, sample {sample_index}, "
        f"request {key[:12]}) in {where}; record it first (cache_mode='record' or 'auto', or `mabpd pack record`)"
    )


def _enable_wal(conn: sqlite3.Connection, tries: int = 100) -> None:
    """Switch to WAL, trying again while another process switches the same new file."""
    for attempt in range(tries):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError:
            if attempt == tries - 1:
                raise
            time.sleep(0.05)


class ResponseCache:
    """SQLite-backed store of completions (dicts) and probe results, one connection per thread."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else cache_dir()
        self.path = self.directory / DB_NAME
        self._local = threading.local()
        self.write_error: str | None = None  # the first failed write (a full disk), said once on stderr

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)  # autocommit
            conn.execute("PRAGMA busy_timeout=30000")
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                         "model TEXT, preview TEXT, created REAL)")
            conn.execute("CREATE TABLE IF NOT EXISTS capabilities (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._read("SELECT value FROM responses WHERE key = ?", (key,))
        return None if row is None else json.loads(row[0])

    def _read(self, sql: str, args: tuple[Any, ...]) -> Any:
        """The first row of a query, or None; a cache that cannot be opened is a miss (said once)."""
        try:
            return self._conn().execute(sql, args).fetchone()
        except (sqlite3.OperationalError, sqlite3.DatabaseError, OSError) as exc:
            self._said(exc)
            return None

    def delete(self, key: str) -> None:
        """Remove one answer."""
        self._write("DELETE FROM responses WHERE key = ?", (key,))

    def put(self, key: str, value: dict[str, Any], *, model: str = "", preview: str = "") -> bool:
        """Store one answer; False when the write failed."""
        return self._write("INSERT OR REPLACE INTO responses (key, value, model, preview, created) VALUES (?, ?, ?, ?, ?)",
                           (key, json.dumps(value, ensure_ascii=False), model, preview[:200], time.time()))

    def _write(self, sql: str, args: tuple[Any, ...]) -> bool:
        """One write statement; a failure (a full disk) is said once and never raises: the run goes on uncached."""
        try:
            self._conn().execute(sql, args)
            return True
        except (sqlite3.OperationalError, sqlite3.DatabaseError, OSError) as exc:
            self._said(exc)
            return False

    def _said(self, exc: BaseException) -> None:
        if self.write_error is None:
            self.write_error = f"{type(exc).__name__}: {exc}"
            print(f"mabpd-kit: the LLM cache {self.path} cannot be written ({self.write_error}); answers are "
                  "used but not stored, so a rerun pays for them again: free disk space or set MABPD_CACHE_DIR",
                  file=sys.stderr)

    @contextlib.asynccontextmanager
    async def claim(self, key: str, timeout_s: float) -> AsyncIterator[bool]:
        """Hold ``locks/<key>.lock`` while the caller sends and stores the request of ``key``: yields True once held,
        False after ``timeout_s`` (the caller sends anyway). Never two holders: the file is removed before unlocking."""
        if fcntl is None:
            yield False
            return
        path = self.directory / "locks" / f"{key}.lock"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = _try_lock(path)
        except OSError:  # no room for a lock file (a full disk): send without a claim
            yield False
            return
        deadline, pause = time.monotonic() + timeout_s, 0.005
        while fd is None and time.monotonic() < deadline:
            await asyncio.sleep(pause)
            pause = min(0.1, pause * 2)
            try:
                fd = _try_lock(path)
            except OSError:
                break
        try:
            yield fd is not None
        finally:
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.unlink(path)
                _HELD.discard(fd)
                os.close(fd)

    def get_capabilities(self, key: str, *, max_age_s: float | None = None) -> dict[str, Any] | None:
        """The stored probe result, or None (none, or older than ``max_age_s``)."""
        row = self._read("SELECT value, created FROM capabilities WHERE key = ?", (key,))
        if row is None or (max_age_s is not None and time.time() - float(row[1] or 0.0) > max_age_s):
            return None
        return json.loads(row[0])

    def delete_capabilities(self, key: str) -> None:
        self._write("DELETE FROM capabilities WHERE key = ?", (key,))

    def put_capabilities(self, key: str, value: dict[str, Any]) -> None:
        self._write("INSERT OR REPLACE INTO capabilities (key, value, created) VALUES (?, ?, ?)",
                    (key, json.dumps(value), time.time()))

    def note_failure(self, key: str, tag: str, exc: BaseException, secret: str | None = None) -> BaseException:
        """Note (key-redacted) that the request of ``key`` failed, for a course pack; returns ``exc``, never raises."""
        from .errors import redact

        try:
            conn = self._conn()
            conn.execute("CREATE TABLE IF NOT EXISTS failures (key TEXT PRIMARY KEY, tag TEXT, error TEXT NOT NULL, "
                         "message TEXT NOT NULL, created REAL)")
            conn.execute("INSERT OR REPLACE INTO failures (key, tag, error, message, created) VALUES (?, ?, ?, ?, ?)",
                         (key, tag, type(exc).__name__, redact(str(exc), secret), time.time()))
        except sqlite3.Error:  # a note about a failure must not hide the failure itself
            pass
        return exc

    def stats(self) -> dict[str, Any]:
        """Location, number of stored answers and size on disk."""
        n = 0
        if self.path.exists():
            n = int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        size = sum(p.stat().st_size for p in self.directory.glob(DB_NAME + "*") if p.is_file())
        return {"path": str(self.path), "entries": n, "bytes": size}

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


_HELD: set[int] = set()  # the claims' descriptors this process holds
_AT_FORK: list[bool] = []  # the fork hook is registered once, on the first claim (nothing on import)


def _close_held_in_child() -> None:
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


def _try_lock(path: Path) -> int | None:
    """A descriptor holding the ``flock`` of ``path``, or None (held elsewhere, or removed since opened)."""
    if not _AT_FORK and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_close_held_in_child)
        _AT_FORK.append(True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path).st_ino == os.fstat(fd).st_ino:
            _HELD.add(fd)
            return fd
    except OSError:  # held elsewhere (EWOULDBLOCK), or removed since it was opened (FileNotFoundError)
        pass
    os.close(fd)
    return None
