"""The readers behind :mod:`mabpd_kit.corpus.inputs`, keyed by suffix (:data:`READERS`): a :class:`Reader`
yields the column names, then one :class:`Row` per row; a new format is one subclass. A broken CSV row
is a bad row with its line number and the lines after its first are read again, so no row is lost or
shifted; a line over ``max_row_bytes`` is never held whole, a compressed file is read no further than
``max_decompressed_bytes``."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mabpd_kit.decoding import FALLBACK, decode_bytes, iter_lines

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CorpusError", "ENCODING_FLAG", "READERS", "Reader", "Row", "csv_rows", "reader", "frame_rows", "json_array_rows", "jsonl_rows",
           "COMPRESSED", "open_binary", "parquet_engine", "parquet_rows", "starts_with", "with_columns"]

_PARQUET_HINT = "reading Parquet needs pyarrow or fastparquet: pip install pyarrow"
#: The flag of a row that was not UTF-8 (decoded as Windows-1252).
ENCODING_FLAG = f"encoding:{FALLBACK}"


class CorpusError(ValueError):
    """The corpus as a whole cannot be read (bad *rows* never raise: they are docs with a ``reason``)."""


class Row(NamedTuple):
    """One row from a reader: ``values`` by column, or ``None`` and why it is malformed; ``tag``: where
    it is (``line12``), the made-up id if it needs one."""

    tag: str
    values: dict[str, Any] | None
    reason: str | None = None
    flags: tuple[str, ...] = ()


# -- CSV / TSV ----------------------------------------------------------------------------------------


class _Feed:
    """Physical lines for ``csv.reader``, remembering the row's (``buf``) so a broken row's lines after
    its first can be read again (``pending``)."""

    def __init__(self, lines: Iterable[tuple[int, tuple[str, bool]]]) -> None:
        self._src = iter(lines)
        self.pending: deque[tuple[int, tuple[str, bool]]] = deque()
        self.buf: list[tuple[int, tuple[str, bool]]] = []

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> str:
        item = self.pending.popleft() if self.pending else next(self._src)
        self.buf.append(item)
        if item[1][0] is None:
            raise _Overlong(item[0])
        return item[1][0]


class _Overlong(Exception):
    """A physical line over the row bound (its number)."""


def _header(fields: list[str]) -> list[str]:
    """Column names as pandas names them (``Unnamed: i``, ``name.1``)."""
    out: list[str] = []
    for i, name in enumerate(fields):
        name = name or f"Unnamed: {i}"
        base, k = name, 0
        while name in out:
            k += 1
            name = f"{base}.{k}"
        out.append(name)
    return out


def csv_rows(path: Any, sep: str, max_row: int | None = None, max_unpacked: int | None = None) -> Iterator[Any]:
    """The header, then every row of a CSV/TSV file; a line or quoted field over ``max_row`` is a bad row."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1) if max_row is None else max_row)
    with open_binary(path, max_unpacked) as fh:
        feed = _Feed(enumerate(iter_lines(fh, max_row), start=1))
        reader = csv.reader(feed, delimiter=sep, strict=True)
        header: list[str] | None = None
        while True:
            feed.buf = []
            try:
                fields = next(reader)
                error = None
            except StopIteration:
                return
            except _Overlong as exc:
                yield from _overlong(feed, header, path, exc.args[0], max_row)
                reader = csv.reader(feed, delimiter=sep, strict=True)
                continue
            except csv.Error as exc:
                if "field larger than field limit" in str(exc) and header is not None:
                    yield _skip_field(feed, max_row)  # a quoted field over the bound: read past its end
                    reader = csv.reader(feed, delimiter=sep, strict=True)
                    continue
                fields, error = None, str(exc)
            lines = feed.buf
            if not lines:
                return
            no = lines[0][0]
            flags = (ENCODING_FLAG,) if any(fb for _, (_, fb) in lines) else ()
            if fields is not None and (not fields or (len(fields) == 1 and not fields[0].strip())):
                continue  # a blank line is no row
            if error is not None:
                reader = csv.reader(feed, delimiter=sep, strict=True)  # a fresh parser after an error
            if error is not None and len(lines) == 1 and "end of data" not in error:
                fields = _lenient(lines[0][1][0], sep)  # '"a"b' on one line: read as pandas does, and say so
                if fields is not None:
                    flags += ("csv_quoting",)
            if header is None:
                if fields is None:
                    raise CorpusError(f"{path}: the header (line {no}) cannot be read: {error}")
                header = _header(fields)
                yield header
                continue
            why = _misfit(fields, len(header), len(lines), error)
            if why is not None:
                yield Row(f"line{no}", None, f"malformed line {no}: {why}", flags)
                if len(lines) > 1:
                    feed.pending.extendleft(reversed(lines[1:]))
                    reader = csv.reader(feed, delimiter=sep, strict=True)
                continue
            assert fields is not None
            if len(fields) > len(header):
                fields = fields[:len(header)]  # only empty fields past the header's (a trailing comma)
            values = {c: (v if v != "" else None) for c, v in zip(header, fields)}
            for c in header[len(fields):]:
                values[c] = None
            yield Row(f"line{no}", values, None, flags)


def _overlong(feed: _Feed, header: Any, path: Any, no: int, limit: Any) -> Iterator[Row]:
    if header is None:
        raise CorpusError(f"{path}: the header (line {no}) is over {limit / 1e6:g} MB (Config.corpus.max_row_bytes)")
    yield _too_large(feed.buf[0][0], no, limit)


def _too_large(first: int, no: int, limit: Any) -> Row:
    return Row(f"line{first}", None, f"too large (line {no} is over {limit / 1e6:g} MB: not read; "
                                     "Config.corpus.max_row_bytes)")


def _skip_field(feed: _Feed, limit: Any) -> Row:
    """The bad row of a quoted field over ``limit``: read past (never held) to the line closing the quote."""
    first, last = feed.buf[0][0], feed.buf[-1][0]
    inside = sum(t.count('"') for _, (t, _) in feed.buf if t is not None) % 2 == 1
    while inside:
        try:
            last, (text, _) = feed.pending.popleft() if feed.pending else next(feed._src)
        except StopIteration:
            return Row(f"line{first}", None, f"too large (a quoted field from line {first} runs over "
                                             f"{limit / 1e6:g} MB and its quote never closes: lines {first}-{last} "
                                             "not read; Config.corpus.max_row_bytes)")
        inside = not (text is not None and text.count('"') % 2 == 1)
    return Row(f"line{first}", None, f"too large (a quoted field over {limit / 1e6:g} MB, lines {first}-{last}: "
                                     "not read; Config.corpus.max_row_bytes)")


def _misfit(fields: list[str] | None, n_header: int, n_lines: int, error: str | None) -> str | None:
    if fields is None:
        if error and "end of data" in error:
            return "a quote opened here is never closed (unterminated quote)"
        return f"broken quoting ({error})"
    n = len(fields)
    if n > n_header and any(f != "" for f in fields[n_header:]):
        where = f" (the row runs over {n_lines} lines: a stray quote?)" if n_lines > 1 else ""
        return f"{n} fields, the header has {n_header}{where}"
    if n < n_header and n_lines > 1:
        return f"{n} fields over {n_lines} lines, the header has {n_header} (a stray quote?)"
    return None


def _lenient(line: str, sep: str) -> list[str] | None:
    """One line parsed as pandas would (a quote closed mid-field goes on), or None."""
    try:
        got = list(csv.reader([line], delimiter=sep, strict=False))
    except csv.Error:
        return None
    return got[0] if len(got) == 1 else None


# -- JSON Lines, JSON, frames, Parquet -------------------------------------------------------------


def with_columns(rows: Iterator[Row], n: int) -> Iterator[Any]:
    """The columns (keys of the first ``n`` rows), then the rows."""
    head: list[Row] = []
    cols: dict[str, None] = {}
    for r in rows:
        head.append(r)
        if r.values is not None:
            cols.update(dict.fromkeys(r.values))
        if len(head) >= n:
            break
    if not head:
        return
    yield list(cols)
    yield from head
    yield from rows


def jsonl_rows(path: Any, max_row: int | None = None, max_unpacked: int | None = None) -> Iterator[Row]:
    """JSON Lines: a line that is not a JSON object, or over ``max_row`` bytes, is a bad row."""
    with open_binary(path, max_unpacked) as fh:
        for k, (line, fallback) in enumerate(iter_lines(fh, max_row), start=1):
            if line is None:
                yield _too_large(k, k, max_row)
                continue
            if not line.strip():
                continue
            flags = (ENCODING_FLAG,) if fallback else ()
            try:
                obj = json.loads(line)
            except ValueError as exc:
                yield Row(f"line{k}", None, f"malformed line {k} (not JSON: {exc})", flags)
                continue
            if not isinstance(obj, dict):
                yield Row(f"line{k}", None, f"malformed line {k} (a JSON {type(obj).__name__}, not an object)", flags)
                continue
            yield Row(f"line{k}", {str(key): v for key, v in obj.items()}, None, flags)


def starts_with(path: Any, prefix: str) -> bool:
    with open_binary(path) as fh:
        return decode_bytes(fh.read(4096)).text.lstrip().startswith(prefix)


def json_array_rows(path: Any, max_unpacked: int | None = None) -> Iterator[Row]:
    """A ``.json`` array of objects, read whole (at most ``max_unpacked`` bytes)."""
    with open_binary(path, max_unpacked, always=True) as fh:
        d = decode_bytes(fh.read())
    try:
        data = json.loads(d.text)
    except ValueError as exc:
        raise CorpusError(f"{path}: not a JSON array of objects ({exc})") from exc
    if not isinstance(data, list):
        raise CorpusError(f"{path}: not a JSON array of objects (a JSON {type(data).__name__})")
    flags = (ENCODING_FLAG,) if d.fallback else ()
    for k, o in enumerate(data, start=1):
        if isinstance(o, dict):
            yield Row(f"item{k}", {str(key): v for key, v in o.items()}, None, flags)
        else:
            yield Row(f"item{k}", None, f"malformed item {k} (a JSON {type(o).__name__}, not an object)", flags)


def frame_rows(df: pd.DataFrame, n: int) -> Iterator[Any]:
    cols = [str(c) for c in df.columns]
    yield cols
    for i in range(0, len(df), n):
        for k, rec in enumerate(df.iloc[i:i + n].itertuples(index=False, name=None), start=i):
            yield Row(f"row{k}", dict(zip(cols, rec)))


#: compressed files read as they are decompressed (a .zip must hold one file)
COMPRESSED = (".gz", ".bz2", ".xz", ".zip")
_OPENERS = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}


def open_binary(path: Any, max_unpacked: int | None = None, *, always: bool = False) -> Any:
    """The file's bytes, decompressed as read (:data:`COMPRESSED`); past ``max_unpacked`` bytes of a
    compressed file (any file with ``always``) a :class:`CorpusError`."""
    import importlib

    name = str(path).lower()
    opener = next((m for z, m in _OPENERS.items() if name.endswith(z)), None)
    if opener is not None:
        fh: Any = importlib.import_module(opener).open(path, "rb")
    elif name.endswith(".zip"):
        fh = _zip_member(path)
    else:
        fh = open(path, "rb")
        if not always:
            return fh
    return fh if max_unpacked is None else _Capped(fh, max_unpacked, path)


def _zip_member(path: Any) -> Any:
    import zipfile

    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise CorpusError(f"{path}: not a readable .zip file ({exc})") from None
    names = [i.filename for i in zf.infolist() if not i.is_dir()]
    if len(names) != 1:
        zf.close()
        raise CorpusError(f"{path}: a .zip corpus must hold exactly one file, it holds {len(names)}")
    return zf.open(names[0])


class _Capped(io.RawIOBase):
    """A binary stream raising :class:`CorpusError` past ``limit`` bytes."""

    def __init__(self, fh: Any, limit: int, path: Any) -> None:
        self._fh, self._left, self._limit, self._path = fh, limit, limit, path

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._fh.read(min(len(b), self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise CorpusError(f"{self._path}: more than {self._limit / 1e6:g} MB once decompressed "
                              "(Config.corpus.max_decompressed_bytes): not read further (a compression bomb?)")
        b[:len(data)] = data
        return len(data)

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:  # read all: in blocks, so the bound holds before anything is held whole
            out = bytearray()
            while chunk := self.read(1 << 20):
                out += chunk
            return bytes(out)
        return super().read(size)

    def close(self) -> None:
        self._fh.close()
        super().close()


def parquet_engine() -> str:
    import importlib.util

    for engine in ("pyarrow", "fastparquet"):
        if importlib.util.find_spec(engine) is not None:
            return engine
    raise CorpusError(_PARQUET_HINT)


def parquet_rows(path: Any, n: int) -> Iterator[Any]:
    engine = parquet_engine()
    k = 0
    if engine == "pyarrow":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        cols = [str(c) for c in pf.schema_arrow.names]
        yield cols
        for batch in pf.iter_batches(batch_size=n):
            for rec in batch.to_pandas().itertuples(index=False, name=None):
                yield Row(f"row{k}", dict(zip(cols, rec)))
                k += 1
    else:  # pragma: no cover - fastparquet is not installed in the course venv
        import fastparquet

        pf = fastparquet.ParquetFile(str(path))
        cols = [str(c) for c in pf.columns]
        yield cols
        for df in pf.iter_row_groups():
            for rec in df[cols].itertuples(index=False, name=None):
                yield Row(f"row{k}", dict(zip(cols, rec)))
                k += 1


# -- the table -----------------------------------------------------------------------------------

#: suffix -> its reader (every :class:`Reader` subclass with suffixes is in it once it is defined)
READERS: dict[str, Reader] = {}


class Reader:
    """One input format: ``name`` (``read(..., format=name)``) and ``suffixes``; :meth:`rows` yields the
    column names, then one :class:`Row` per row; :meth:`docs` turns them into docs."""

    name = ""
    suffixes: tuple[str, ...] = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.name:
            it = cls()
            READERS.update({s: it for s in cls.suffixes} or {f"<{cls.name}>": it})

    def check(self, source: Any) -> None:
        """Fail here, in one line, when nothing of ``source`` can be read (a missing engine)."""

    def rows(self, source: Any, settings: Any) -> Iterator[Any]:
        raise NotImplementedError

    def docs(self, corpus: Any) -> Iterator[Any]:
        return corpus.table(self.rows(corpus.source, corpus.settings))


def reader(format: str | None, source: Any) -> Reader:
    """The reader of ``format`` (a reader's name), else the one ``source``'s suffix names."""
    if format is None:
        p = Path(source)
        name = p.name.lower()
        for z in COMPRESSED:
            name = name.removesuffix(z)
        format = "folder" if p.is_dir() else next((r.name for s, r in sorted(READERS.items(), key=lambda x: -len(x[0]))
                                                   if s.startswith(".") and name.endswith(s)), None)
    found = next((r for r in READERS.values() if r.name == format), None)
    if found is None:
        known = ", ".join(sorted({s for s in READERS if s.startswith(".")}))
        raise CorpusError(f"cannot tell the format of {source}: use a {known} file or a folder of .txt/.html files "
                          "(or pass format=)" if format is None else f"unknown format {format!r}")
    return found


class Csv(Reader):
    name, suffixes, sep = "csv", (".csv",), ","

    def rows(self, source: Any, settings: Any) -> Iterator[Any]:
        return csv_rows(source, self.sep, settings.max_row_bytes, settings.max_decompressed_bytes)


class Tsv(Csv):
    name, suffixes, sep = "tsv", (".tsv", ".tab"), "\t"


class JsonLines(Reader):
    name, suffixes = "jsonl", (".jsonl", ".ndjson")

    def rows(self, source: Any, settings: Any) -> Iterator[Any]:
        return with_columns(jsonl_rows(source, settings.max_row_bytes, settings.max_decompressed_bytes),
                            settings.chunk_rows)


class Json(Reader):
    """A JSON array of objects (read whole), else JSON Lines."""

    name, suffixes = "json", (".json",)

    def rows(self, source: Any, settings: Any) -> Iterator[Any]:
        unpacked = settings.max_decompressed_bytes
        rows = json_array_rows(source, unpacked) if starts_with(source, "[") else \
            jsonl_rows(source, settings.max_row_bytes, unpacked)
        return with_columns(rows, settings.chunk_rows)


class Parquet(Reader):
    name, suffixes = "parquet", (".parquet", ".pq")

    def check(self, source: Any) -> None:
        parquet_engine()

    def rows(self, source: Any, settings: Any) -> Iterator[Any]:
        return parquet_rows(source, settings.chunk_rows)


class Frame(Reader):
    """A pandas DataFrame."""

    name = "frame"

    def rows(self, source: Any, settings: Any) -> Iterator[Any]:
        return frame_rows(source, settings.chunk_rows)
