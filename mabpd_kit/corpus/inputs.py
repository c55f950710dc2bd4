"""Reading a researcher's corpus: CSV, TSV, JSONL, Parquet, a folder of .txt/.html files, or a DataFrame.

:func:`read` returns a :class:`Corpus`: a lazy, re-iterable stream of :class:`Doc` records (the
file is read in chunks of ``settings.chunk_rows`` rows each time it is iterated, so memory does
not grow with the corpus). Every doc has an ``id`` (``id_col``, else the row number, or the file
name in a folder), its ``text`` and every other column as ``meta``. A bad row (empty, missing,
binary, undecodable, over ``settings.max_bytes``, a duplicate id, a malformed CSV/JSON line) comes
through as a doc with ``reason`` set: the batch goes on and the reason ends up in the output.

>>> import pandas as pd
>>> docs = list(read(pd.DataFrame({"text": ["A plain report.", ""], "outlet": ["a", "b"]})))
>>> [(d.id, d.ok, d.reason, d.meta) for d in docs]
[('0', True, None, {'outlet': 'a'}), ('1', False, 'empty text', {'outlet': 'b'})]

HTML (a ``.html`` file, or markup in a text column) is cleaned later by the text layer
(:func:`mabpd_kit.text.clean`), which keeps offsets back to the raw input.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mabpd_kit.corpus.settings import CorpusConfig, resolve

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Corpus", "CorpusError", "Doc", "read"]

_TEXT_FILES = (".txt", ".html", ".htm")
_PARQUET_HINT = "reading Parquet needs pyarrow or fastparquet: pip install pyarrow"


class CorpusError(ValueError):
    """The corpus as a whole cannot be read (missing file, unknown format, no text column...).

    Bad *rows* never raise: they come through as docs with a ``reason``."""


@dataclass
class Doc:
    """One article (or sentence) of the corpus. ``reason`` is set when the row is bad."""

    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None

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


def check_text(raw: Any, max_bytes: int) -> tuple[str, str | None]:
    """``(text, reason)``: the text of one row, or why it is a bad row."""
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return "", "missing text (empty cell, NaN or null)"
    if isinstance(raw, (bytes, bytearray, memoryview)):
        data = bytes(raw)
        if b"\x00" in data:
            return "", "binary content (NUL bytes)"
        if len(data) > max_bytes:
            return "", f"too large ({len(data) / 1e6:.1f} MB > {max_bytes / 1e6:g} MB limit)"
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError:
            try:
                raw = data.decode("cp1252")
            except UnicodeDecodeError as exc:
                return "", f"undecodable bytes (neither UTF-8 nor Windows-1252: {exc.reason} at byte {exc.start})"
    if not isinstance(raw, str):
        if isinstance(raw, (int, float)):
            return str(raw), "not text (a number)"
        return "", f"not text ({type(raw).__name__})"
    if "\x00" in raw:
        return "", "binary content (NUL characters)"
    try:
        size = len(raw.encode("utf-8"))
    except UnicodeEncodeError:  # lone surrogates: bytes that were not UTF-8 (surrogateescape)
        return "", "undecodable bytes (not valid UTF-8)"
    if size > max_bytes:
        return "", f"too large ({size / 1e6:.1f} MB > {max_bytes / 1e6:g} MB limit)"
    if not raw.strip():
        return raw, "empty text"
    return raw, None


class Corpus:
    """A lazy, re-iterable corpus. ``iter(corpus)`` yields :class:`Doc` s in order, reading in chunks."""

    def __init__(self, source: Any, text_col: str | None = None, id_col: str | None = None,
                 settings: CorpusConfig | None = None, format: str | None = None) -> None:
        self.settings = resolve(settings)
        self.source = source
        self.text_col, self.id_col = text_col, id_col
        self.format = format or _format_of(source)
        if self.format != "frame" and not Path(source).exists():
            raise CorpusError(f"no such file or folder: {source}")
        if self.format == "parquet":
            _parquet_engine()  # fail early, with the one-line install hint

    def __repr__(self) -> str:
        where = "a DataFrame" if self.format == "frame" else str(self.source)
        return f"Corpus({self.format}: {where}, text_col={self.text_col!r}, id_col={self.id_col!r})"

    def __iter__(self) -> Iterator[Doc]:
        seen: set[str] = set()
        rows = self._folder() if self.format == "folder" else self._rows()
        for doc in rows:
            if doc.id in seen:
                doc = Doc(id=f"{doc.id}#dup{len(seen)}", text="", meta=doc.meta,
                          reason=f"duplicate id {doc.id!r} (ids must be unique)")
            seen.add(doc.id)
            yield doc

    def to_frame(self) -> "pd.DataFrame":
        """The whole corpus as one frame: id, text, reason, then the metadata columns (small corpora)."""
        import pandas as pd

        return pd.DataFrame([{"id": d.id, "text": d.text, "reason": d.reason, **d.meta} for d in self])

    # -- tables ----------------------------------------------------------------------------------
    def _rows(self) -> Iterator[Doc]:
        row = 0
        text_col = None
        for chunk, bad in self._chunks():
            for line, why in bad:
                yield Doc(id=f"line{line}", text="", reason=why)
            if chunk is None or not len(chunk):
                continue
            if text_col is None:  # the first chunk decides; later rows without these keys get the defaults
                text_col = self._text_column(list(chunk.columns))
                if self.id_col is not None and self.id_col not in chunk.columns:
                    raise CorpusError(f"no id column {self.id_col!r}; columns are {list(chunk.columns)}")
            cols = list(chunk.columns)
            meta_cols = [c for c in cols if c not in (text_col, self.id_col)]
            for rec in chunk.itertuples(index=False, name=None):
                values = dict(zip(cols, rec))
                rid = values.get(self.id_col) if self.id_col is not None else None
                rid = str(row) if rid is None or (isinstance(rid, float) and math.isnan(rid)) else str(_jsonable(rid))
                text, reason = check_text(values.get(text_col), self.settings.max_bytes)
                if reason is None and self.format in ("csv", "tsv") and "\ufffd" in text:
                    reason = "undecodable bytes (not valid UTF-8; shown as U+FFFD)"
                yield Doc(id=rid, text=text if reason is None else text[:0],
                          meta={str(c): _jsonable(values[c]) for c in meta_cols}, reason=reason)
                row += 1

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

    def _chunks(self) -> Iterator[tuple["pd.DataFrame | None", list[tuple[int, str]]]]:
        n = self.settings.chunk_rows
        if self.format == "frame":
            df = self.source
            for i in range(0, len(df), n):
                yield df.iloc[i:i + n], []
        elif self.format in ("csv", "tsv"):
            yield from _csv_chunks(self.source, "\t" if self.format == "tsv" else ",", n)
        elif self.format == "jsonl":
            yield from _jsonl_chunks(self.source, n)
        elif self.format == "json":  # a JSON array of objects (read whole), else JSON Lines
            yield from (_json_array_chunks(self.source, n) if _starts_with(self.source, b"[")
                        else _jsonl_chunks(self.source, n))
        elif self.format == "parquet":
            yield from _parquet_chunks(self.source, n)
        else:
            raise CorpusError(f"unknown format {self.format!r}")

    # -- a folder of files -------------------------------------------------------------------------
    def _folder(self) -> Iterator[Doc]:
        root = Path(self.source)
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            meta = {"file": rel, "format": path.suffix.lower().lstrip(".")}
            if path.suffix.lower() not in _TEXT_FILES or path.name.startswith("."):
                yield Doc(id=rel, text="", meta=meta, reason=f"not a .txt/.html file ({path.suffix or 'no extension'}): skipped")
                continue
            try:
                size = path.stat().st_size
                if size > self.settings.max_bytes:
                    yield Doc(id=rel, text="", meta=meta,
                              reason=f"too large ({size / 1e6:.1f} MB > {self.settings.max_bytes / 1e6:g} MB limit)")
                    continue
                data = path.read_bytes()
            except OSError as exc:
                yield Doc(id=rel, text="", meta=meta, reason=f"unreadable file ({exc.strerror or exc})")
                continue
            text, reason = check_text(data, self.settings.max_bytes)
            yield Doc(id=rel, text=text if reason is None else "", meta=meta, reason=reason)


def _format_of(source: Any) -> str:
    if hasattr(source, "iloc") and hasattr(source, "columns"):
        return "frame"
    p = Path(source)
    if p.is_dir():
        return "folder"
    name = p.name.lower()
    for suffix, fmt in ((".csv", "csv"), (".tsv", "tsv"), (".tab", "tsv"), (".jsonl", "jsonl"), (".ndjson", "jsonl"),
                        (".json", "json"), (".parquet", "parquet"), (".pq", "parquet")):
        if name.endswith(suffix) or name.endswith(suffix + ".gz"):
            return fmt
    raise CorpusError(f"cannot tell the format of {source}: use .csv, .tsv, .jsonl, .parquet or a folder of .txt/.html "
                      "files (or pass format=)")


def _csv_chunks(path: Any, sep: str, n: int) -> Iterator[tuple["pd.DataFrame", list[tuple[int, str]]]]:
    """CSV/TSV in chunks; a malformed line (wrong number of fields) becomes a bad row, bytes that are
    not UTF-8 come through as U+FFFD (a text holding one is flagged 'undecodable')."""
    import pandas as pd

    reader = pd.read_csv(path, sep=sep, chunksize=n, on_bad_lines="warn", encoding="utf-8",
                         encoding_errors="replace", low_memory=False)
    with reader:
        while True:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    chunk = next(reader)
                except StopIteration:
                    chunk = None
            bad = [(int(line), f"malformed line {line}: {msg}") for w in caught
                   for line, msg in _bad_lines(str(w.message))]
            if chunk is None:
                if bad:
                    yield None, bad  # type: ignore[misc]
                return
            yield chunk, bad


def _bad_lines(message: str) -> list[tuple[int, str]]:
    import re

    return [(int(m.group(1)), m.group(2).strip()) for m in re.finditer(r"Skipping line (\d+): ([^\n]*)", message)]


def _jsonl_chunks(path: Any, n: int) -> Iterator[tuple["pd.DataFrame", list[tuple[int, str]]]]:
    """JSON Lines, decoded line by line: a line that is not UTF-8 or not a JSON object is a bad row."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    bad: list[tuple[int, str]] = []
    opener = _open_binary(path)
    with opener as fh:
        for k, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad.append((k, f"undecodable line {k} (not UTF-8: {exc.reason} at byte {exc.start})"))
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                bad.append((k, f"malformed line {k} (not JSON: {exc})"))
                continue
            if not isinstance(obj, dict):
                bad.append((k, f"malformed line {k} (a JSON {type(obj).__name__}, not an object)"))
                continue
            rows.append(obj)
            if len(rows) >= n:
                yield pd.DataFrame(rows), bad
                rows, bad = [], []
    if rows or bad:
        yield (pd.DataFrame(rows) if rows else None), bad  # type: ignore[misc]


def _starts_with(path: Any, prefix: bytes) -> bool:
    with _open_binary(path) as fh:
        return fh.read(4096).lstrip().startswith(prefix)


def _json_array_chunks(path: Any, n: int) -> Iterator[tuple["pd.DataFrame | None", list[tuple[int, str]]]]:
    """A ``.json`` file holding one array of objects: it is read whole (JSON Lines streams; prefer it)."""
    import pandas as pd

    try:
        with _open_binary(path) as fh:
            data = json.loads(fh.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: not a JSON array of objects ({exc})") from exc
    bad = [(k + 1, f"malformed item {k + 1} (a JSON {type(o).__name__}, not an object)")
           for k, o in enumerate(data) if not isinstance(o, dict)]
    objs = [o for o in data if isinstance(o, dict)]
    if bad:
        yield None, bad
    for i in range(0, len(objs), n):
        yield pd.DataFrame(objs[i:i + n]), []


def _open_binary(path: Any) -> Any:
    if str(path).endswith(".gz"):
        import gzip

        return gzip.open(path, "rb")
    return open(path, "rb")


def _parquet_engine() -> str:
    import importlib.util

    for engine in ("pyarrow", "fastparquet"):
        if importlib.util.find_spec(engine) is not None:
            return engine
    raise CorpusError(_PARQUET_HINT)


def _parquet_chunks(path: Any, n: int) -> Iterator[tuple["pd.DataFrame", list[tuple[int, str]]]]:
    engine = _parquet_engine()
    if engine == "pyarrow":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=n):
            yield batch.to_pandas(), []
    else:  # pragma: no cover - fastparquet is not installed in the course venv
        import fastparquet

        for df in fastparquet.ParquetFile(str(path)).iter_row_groups():
            for i in range(0, len(df), n):
                yield df.iloc[i:i + n], []


def read(source: Any, text_col: str | None = None, id_col: str | None = None, *,
         settings: CorpusConfig | None = None, format: str | None = None) -> Corpus:
    """A corpus from a CSV/TSV/JSONL/Parquet file, a folder of .txt/.html files, or a DataFrame.

    ``text_col``: the text column (default: the first of ``settings.text_columns`` present);
    ``id_col``: the id column (default: the row number; a folder uses the file's relative path).
    Every other column is kept as metadata. Raises :class:`CorpusError` only when the source as a
    whole cannot be read; bad rows come through with a ``reason``.
    """
    return Corpus(source, text_col=text_col, id_col=id_col, settings=settings, format=format)
