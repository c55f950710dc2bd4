"""Reading a corpus (a file of :data:`mabpd_kit.corpus.rows.READERS`, a folder of .txt/.html files, a
DataFrame) as a lazy stream of :class:`Doc` records: every row once, cells as written, made-up ids never
one of the file's real ids, a bad row a doc with its ``reason`` (the batch goes on)."""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mabpd_kit.corpus.rows import ENCODING_FLAG, CorpusError, Reader, reader
from mabpd_kit.corpus.settings import CorpusConfig, resolve
from mabpd_kit.decoding import bom, decode_bytes

__all__ = ["Corpus", "CorpusError", "Doc", "read"]

_TEXT_FILES = (".txt", ".html", ".htm")
_FOLLOW_HINT = "--follow-symlinks, or read(..., follow_symlinks=True), reads it"


@dataclass
class Doc:
    """One article of the corpus; ``reason`` is set when the row is bad, ``flags`` say how it was read."""

    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    flags: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.reason is None


def _jsonable(v: Any) -> Any:
    """Metadata values as plain JSON types (numpy scalars, timestamps, NaN -> None)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return None if math.isnan(v) else v
    if hasattr(v, "item") and not hasattr(v, "__len__"):  # numpy scalar
        return _jsonable(v.item())
    if hasattr(v, "isoformat"):
        try:
            return None if v != v else v.isoformat()  # NaT != NaT
        except (TypeError, ValueError):
            return str(v)
    if isinstance(v, (list, tuple, dict)):
        return json.loads(json.dumps(v, default=str))
    try:
        return None if v != v else str(v)
    except (TypeError, ValueError):
        return str(v)


def _id_text(v: Any) -> str | None:
    """An id cell as text, as written (``None`` for a missing one)."""
    v = _jsonable(v)
    if v is None or v == "":
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, int, float)):
        return json.dumps(v)  # 645, 6.5, true
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


def _check(raw: Any, max_bytes: int) -> tuple[str, str | None, list[str]]:
    """``(text, reason, flags)`` of one row's text cell (or one file's bytes)."""
    flags: list[str] = []
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return "", "missing text (empty cell, NaN or null)", flags
    if isinstance(raw, (bytes, bytearray, memoryview)):
        data = bytes(raw)
        if b"\x00" in data and bom(data)[0] in (None, "utf-8"):
            return "", "binary content (NUL bytes)", flags
        if len(data) > max_bytes:
            return "", f"too large ({len(data) / 1e6:.1f} MB > {max_bytes / 1e6:g} MB limit)", flags
        d = decode_bytes(data)  # the one decoder: BOM, else UTF-8, else Windows-1252 (flagged)
        raw = d.text
        if d.fallback:
            flags.append(ENCODING_FLAG)
    if not isinstance(raw, str):
        if isinstance(raw, (int, float)):
            return str(raw), "not text (a number)", flags
        return "", f"not text ({type(raw).__name__})", flags
    if "\x00" in raw:
        return "", "binary content (NUL characters)", flags
    try:
        size = len(raw.encode("utf-8"))
    except UnicodeEncodeError:  # lone surrogates: bytes that were not UTF-8 (surrogateescape)
        return "", "undecodable bytes (not valid UTF-8)", flags
    if size > max_bytes:
        return "", f"too large ({size / 1e6:.1f} MB > {max_bytes / 1e6:g} MB limit)", flags
    if not raw.strip():
        return raw, "empty text", flags
    return raw, None, flags


class _Ids:
    """The ids handed out so far, and made-up ids that are none of the source's real ids."""

    def __init__(self, real: Any) -> None:
        self.seen: set[str] = set()
        self.count: dict[str, int] = {}
        self._real_of = real
        self._real: set[str] | None = None

    def made_up(self, base: str) -> str:
        if self._real is None:
            self._real = self._real_of()  # every real id of the source: read once, when first needed
        cand, n = base, 1
        while cand in self._real or cand in self.seen:
            n += 1
            cand = f"{base}~{n}"
        return cand


class Corpus:
    """A lazy, re-iterable corpus of :class:`Doc` s, read as it is iterated."""

    def __init__(self, source: Any, text_col: str | None = None, id_col: str | None = None,
                 settings: CorpusConfig | None = None, format: str | None = None,
                 follow_symlinks: bool = False) -> None:
        self.settings = resolve(settings)
        self.source = source
        self.text_col, self.id_col = text_col, id_col
        self.follow_symlinks = bool(follow_symlinks)
        frame = hasattr(source, "iloc") and hasattr(source, "columns")
        self.reader = reader(format or ("frame" if frame else None), source)
        self.format = self.reader.name
        if not frame and not Path(source).exists():
            raise CorpusError(f"no such file or folder: {source}")
        self.reader.check(source)

    def __repr__(self) -> str:
        where = "a DataFrame" if self.format == "frame" else str(self.source)
        return f"Corpus({self.format}: {where}, text_col={self.text_col!r}, id_col={self.id_col!r})"

    def __iter__(self) -> Iterator[Doc]:
        return self.reader.docs(self)

    # -- tables ----------------------------------------------------------------------------------
    def table(self, rows: Iterator[Any]) -> Iterator[Doc]:
        """The docs of a reader's rows (the column names first)."""
        cols = next(rows, None)
        if cols is None:
            return
        text_col = self._text_column(cols)
        if self.id_col is not None and self.id_col not in cols:
            raise CorpusError(f"no id column {self.id_col!r}; columns are {cols}")
        ids = _Ids(self._real_ids)
        for k, row in enumerate(rows):
            flags = list(row.flags)
            if row.values is None:  # malformed: no cell can be trusted, its id neither
                rid = str(k) if self.id_col is None else ids.made_up(row.tag)
                ids.seen.add(rid)
                yield Doc(id=rid, text="", reason=row.reason, flags=flags)
                continue
            values = row.values
            text, reason, more = _check(values.get(text_col), self.settings.max_bytes)
            flags += [f for f in more if f not in flags]
            meta = {str(c): _jsonable(v) for c, v in values.items() if c not in (text_col, self.id_col)}
            if self.id_col is None:
                rid = str(k)
            else:
                rid = _id_text(values.get(self.id_col))
                if rid is None:
                    rid = ids.made_up(row.tag)
                    flags.append("no_id")
                elif rid in ids.seen:
                    n = ids.count[rid] = ids.count.get(rid, 1) + 1
                    reason = f"duplicate id {rid!r} (ids must be unique)"
                    rid = ids.made_up(f"{rid}#dup{n}")
            ids.seen.add(rid)
            yield Doc(id=rid, text=text if reason is None else "", meta=meta, reason=reason, flags=flags)

    def _real_ids(self) -> set[str]:
        rows = self.reader.rows(self.source, self.settings)
        next(rows, None)
        out = set()
        for r in rows:
            if r.values is not None and (rid := _id_text(r.values.get(self.id_col))) is not None:
                out.add(rid)
        return out

    def _text_column(self, cols: list[str]) -> str:
        if self.text_col is not None:
            if self.text_col not in cols:
                raise CorpusError(f"no text column {self.text_col!r}; columns are {cols}")
            return self.text_col
        lower = {str(c).lower(): c for c in cols}
        for name in self.settings.text_columns:
            if name in lower:
                return lower[name]
        raise CorpusError(f"which column holds the text? none of {list(self.settings.text_columns)} is present; "
                          f"pass text_col= (columns: {cols})")

    # -- a folder of files -------------------------------------------------------------------------
    def _folder(self) -> Iterator[Doc]:
        """Every entry, depth first in name order, walked with a stack (no recursion limit)."""
        root = Path(self.source)
        real_root = root.resolve()
        stack = [self._walk(root, "", real_root, frozenset({real_root}), 1)]
        while stack:
            got = next(stack[-1], None)
            if got is None:
                stack.pop()
            elif isinstance(got, Doc):
                yield got
            else:  # a subfolder: its entries come next, then the rest of this folder's
                stack.append(self._walk(*got))

    def _walk(self, here: Path, prefix: str, real_root: Path, ancestors: frozenset[Path],
              depth: int) -> Iterator[Any]:
        """The docs of ``here``'s entries, and for a subfolder the arguments of its own walk."""
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield Doc(id=prefix.rstrip("/") or ".", text="", meta={"file": prefix, "format": ""},
                      reason=f"unreadable folder ({exc.strerror or exc})")
            return
        for e in entries:
            rel = prefix + e.name
            meta = {"file": rel, "format": Path(e.name).suffix.lower().lstrip(".")}
            path = Path(e.path)

            def bad(reason: str) -> Doc:
                return Doc(id=rel, text="", meta=meta, reason=reason)  # noqa: B023 (called in this iteration)

            real: Path | None = None
            try:
                if e.is_symlink():
                    target = os.readlink(path)
                    try:
                        real = path.resolve(strict=True)
                    except (OSError, RuntimeError):
                        yield bad(f"broken symbolic link (to {target}): skipped")
                        continue
                    if not self.follow_symlinks and real != real_root and real_root not in real.parents:
                        yield bad(f"symbolic link to {target}, outside the folder: not read ({_FOLLOW_HINT})")
                        continue
                    st = os.stat(real)
                else:
                    st = e.stat(follow_symlinks=False)
            except OSError as exc:
                yield bad(f"unreadable entry ({exc.strerror or exc})")
                continue
            if stat.S_ISDIR(st.st_mode):
                key = real or path.resolve()
                if e.name.startswith("."):
                    yield bad("hidden folder (its name starts with '.'): skipped")
                elif real is not None and not self.follow_symlinks:
                    yield bad(f"symbolic link to a folder: not followed ({_FOLLOW_HINT})")
                elif key in ancestors:
                    yield bad("symbolic link back into a folder being read (a loop): skipped")
                elif depth >= self.settings.max_depth:
                    yield bad(f"folder nested more than {self.settings.max_depth} deep (Config.corpus.max_depth): "
                              "its files are not read")
                else:
                    yield (path, rel + "/", real_root, ancestors | {key}, depth + 1)
                continue
            if not stat.S_ISREG(st.st_mode):
                yield bad(f"not a regular file ({_kind(st.st_mode)}): skipped, never opened")
            elif e.name.startswith("."):
                yield bad("hidden file (its name starts with '.'): skipped")
            elif path.suffix.lower() not in _TEXT_FILES:
                yield bad(f"not a .txt/.html file ({path.suffix or 'no extension'}): skipped")
            else:
                yield self._file(real or path, rel, meta)

    def _file(self, path: Path, rel: str, meta: dict[str, Any]) -> Doc:
        """One regular file, opened without following a link and without blocking (it may have been
        swapped for a link or a FIFO since the folder was listed)."""
        flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        limit = self.settings.max_bytes
        try:
            fd = os.open(path, flags)
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fh.fileno())
                if not stat.S_ISREG(st.st_mode):
                    return Doc(id=rel, text="", meta=meta, reason=f"not a regular file ({_kind(st.st_mode)}): skipped")
                if st.st_size > limit:
                    return Doc(id=rel, text="", meta=meta,
                               reason=f"too large ({st.st_size / 1e6:.1f} MB > {limit / 1e6:g} MB limit)")
                data = fh.read(limit + 1)
        except OSError as exc:
            return Doc(id=rel, text="", meta=meta, reason=f"unreadable file ({exc.strerror or exc})")
        text, reason, more = _check(data, limit)
        return Doc(id=rel, text=text if reason is None else "", meta=meta, reason=reason, flags=more)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a file"


class Folder(Reader):
    """A folder of .txt/.html files (:meth:`Corpus._folder`)."""

    name = "folder"

    def docs(self, corpus: Any) -> Iterator[Doc]:
        return corpus._folder()


def read(source: Any, text_col: str | None = None, id_col: str | None = None, *,
         settings: CorpusConfig | None = None, format: str | None = None, follow_symlinks: bool = False) -> Corpus:
    """A corpus from a CSV/TSV/JSONL/Parquet file, a folder of .txt/.html files, or a DataFrame.

    ``text_col``: default the first of ``settings.text_columns`` present; ``id_col``: default the row
    number (a folder: the file's relative path); other columns are metadata, as written.
    ``follow_symlinks``: read a folder's links that lead out of it. Raises :class:`CorpusError` only
    when the source as a whole cannot be read."""
    return Corpus(source, text_col=text_col, id_col=id_col, settings=settings, format=format,
                  follow_symlinks=follow_symlinks)
