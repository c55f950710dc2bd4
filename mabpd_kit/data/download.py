"""Where benchmark files come from (your copy, the download folder, or the pinned URL of
``resources/datasets.json``), how they are checked (the manifest's sha256 on download and every read; without
one, the first download's checksum, kept beside the file) and where they are kept."""

from __future__ import annotations

import functools
import hashlib
import http.client
import json
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas loads inside status()
    import pandas as pd

__all__ = [
    "ChecksumError", "DataMissingError", "FileEntry", "data_dir", "download_dir", "fetch", "locate", "manifest",
    "sha256_file", "status"
]

USER_AGENT = "mabpd-kit benchmark downloader"



class DataMissingError(FileNotFoundError):
    """A benchmark file is neither local nor cached and cannot be downloaded now."""


class ChecksumError(ValueError):
    """A downloaded or cached file does not match its expected sha256 or size."""


@dataclass(frozen=True)
class FileEntry:
    """One file of the manifest: where it comes from and how to recognise it."""

    dataset: str
    relpath: str
    url: str | None
    revision: str | None = None
    sha256: str | None = None
    size: int | None = None
    licence: str = ""
    archive_member: str | None = None
    reference_sha256: str | None = None
    repository: str | None = None
    path_in_repository: str | None = None
    note: str = ""


@functools.lru_cache(maxsize=4)
def _manifest_at(path: str) -> dict[tuple[str, str], FileEntry]:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    fields = set(FileEntry.__dataclass_fields__)
    return {(dataset, relpath): FileEntry(dataset, relpath, **{k: v for k, v in e.items() if k in fields})
            for dataset, info in raw["datasets"].items() for relpath, e in info["files"].items()}


def manifest() -> dict[tuple[str, str], FileEntry]:
    """All known files, keyed by ``(dataset, relpath)``."""
    return _manifest_at(str(resources.files("mabpd_kit") / "resources" / "datasets.json"))  # works from a wheel too


def data_dir(data_dir: str | os.PathLike | None = None) -> Path | None:
    """The local benchmark directory: the argument, else ``MABPD_DATA_DIR``, else None."""
    d = data_dir or os.environ.get("MABPD_DATA_DIR")
    return Path(d).expanduser() if d else None


def download_dir(download_dir: str | os.PathLike | None = None) -> Path:
    """Where downloads are kept: the argument, else ``$MABPD_CACHE_DIR/data``, else the user cache (platformdirs)."""
    if download_dir:
        return Path(download_dir).expanduser()
    env = os.environ.get("MABPD_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser() / "data"
    import platformdirs
    return Path(platformdirs.user_cache_dir("mabpd-kit", appauthor=False)) / "data"


# The loaders take arguments named ``data_dir`` / ``download_dir``, which hide the two functions
# above inside their bodies; these aliases keep the functions reachable there.
_resolve_data_dir = data_dir
_resolve_download_dir = download_dir


def _offline() -> bool:
    return os.environ.get("MABPD_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _tofu_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _verify(entry: FileEntry, path: Path) -> None:
    """Raise :class:`ChecksumError` unless ``path`` matches the manifest (or its trust-on-first-use record)."""
    if entry.size is not None and path.stat().st_size != entry.size:
        raise ChecksumError(f"{entry.dataset}/{entry.relpath}: size {path.stat().st_size} bytes, expected {entry.size} "
                            "(truncated or altered download)")
    expected = entry.sha256
    if expected is None and _tofu_path(path).exists():
        expected = _tofu_path(path).read_text().split()[0]
    if expected is not None:
        got = sha256_file(path)
        if got != expected:
            raise ChecksumError(f"{entry.dataset}/{entry.relpath}: sha256 {got} does not match the expected {expected}")


def _missing_message(entry: FileEntry | None, dataset: str, relpath: str, base: Path | None, cache: Path,
                     why: str) -> str:
    where_local = f"{base / dataset / relpath}" if base else f"<MABPD_DATA_DIR>/{dataset}/{relpath}"
    lines = [f"{dataset}/{relpath} is not available ({why})."]
    if entry is not None and entry.url:
        lines.append(f"Get it from {entry.url}" + (f" (a zip: extract {entry.archive_member})." if entry.archive_member else "."))
    elif entry is not None and entry.repository:
        lines.append(f"Get it from the repository {entry.repository} at commit {entry.revision}.")
    elif entry is None:
        lines.append("It is not in mabpd-kit's dataset manifest (check the name; see data/SOURCES.md).")
    lines.append(f"Put it at {where_local} (or in the cache: {cache / dataset / relpath}).")
    if entry is not None and entry.url:
        lines.append("When online, `mabpd data fetch " + dataset + "` downloads it for you.")
    return " ".join(lines)


def locate(dataset: str, relpath: str, data_dir: str | os.PathLike | None = None, download: bool = True,
           download_dir: str | os.PathLike | None = None) -> Path:
    """Path of ``relpath`` inside ``dataset``: the local copy, the verified download folder, or a verified
    download; else :class:`DataMissingError`."""
    base = _resolve_data_dir(data_dir)
    if base is not None and (base / dataset / relpath).is_file():
        return base / dataset / relpath
    cache = _resolve_download_dir(download_dir)
    entry = manifest().get((dataset, relpath))
    cached = cache / dataset / relpath
    if cached.is_file():
        if entry is None:
            return cached
        try:
            _verify(entry, cached)
            return cached
        except ChecksumError as exc:
            cached.unlink()
            _tofu_path(cached).unlink(missing_ok=True)
            if not download or _offline() or not entry.url:
                raise ChecksumError(f"{exc}; the cached copy was deleted, download it again") from None
            print(f"mabpd data: {exc}; cached copy deleted, downloading again", file=sys.stderr)
    if entry is None or not entry.url:
        why = "not in the manifest" if entry is None else "no download URL: it must be placed by hand"
        raise DataMissingError(_missing_message(entry, dataset, relpath, base, cache, why))
    if not download or _offline():
        why = "offline: MABPD_OFFLINE=1" if _offline() else "download=False"
        raise DataMissingError(_missing_message(entry, dataset, relpath, base, cache, why))
    return fetch(entry, download_dir=cache)


def _on_disk(dataset: str, relpath: str, data_dir: str | os.PathLike | None,
             download_dir: str | os.PathLike | None) -> Path | None:
    """:func:`locate` without downloading: the path, or None when the file is not on disk."""
    try:
        return locate(dataset, relpath, data_dir, download=False, download_dir=download_dir)
    except FileNotFoundError:
        return None


def fetch(entry: FileEntry, download_dir: str | os.PathLike | None = None, timeout: float = 60.0,
          quiet: bool = False) -> Path:
    """Download ``entry`` into a temporary file beside its place, extract a zip member, check size and sha256 (or
    record it on first use), then rename it into place."""
    if not entry.url:
        raise DataMissingError(f"{entry.dataset}/{entry.relpath} has no download URL")
    cache = _resolve_download_dir(download_dir)
    dest = cache / entry.dataset / entry.relpath
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".part-", dir=dest.parent)
    tmp = Path(tmp_name)
    parts = [tmp]  # temporary files to remove whatever happens (a moved file is gone already)
    try:
        request = urllib.request.Request(entry.url, headers={"User-Agent": USER_AGENT})
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as resp:
            expected_len = resp.headers.get("Content-Length")
            try:
                shutil.copyfileobj(resp, out, length=1 << 20)
            except http.client.IncompleteRead as exc:
                raise ChecksumError(f"{entry.dataset}/{entry.relpath}: connection closed early (truncated download: {exc})") from None
        if expected_len is not None and tmp.stat().st_size != int(expected_len):
            raise ChecksumError(f"{entry.dataset}/{entry.relpath}: received {tmp.stat().st_size} of {expected_len} "
                                "bytes (truncated download)")
        if entry.archive_member:
            tmp = _extract_member(tmp, entry)
            parts.append(tmp)
        _verify(entry, tmp)
        os.replace(tmp, dest)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise DataMissingError(f"could not download {entry.dataset}/{entry.relpath} from {entry.url}: {exc}. "
                               f"Download it yourself and put it at {dest}") from exc
    finally:
        for p in parts:
            p.unlink(missing_ok=True)
    if entry.sha256 is None:
        digest = sha256_file(dest)
        _tofu_path(dest).write_text(f"{digest}  {entry.url}\n")
        if not quiet:
            print(f"mabpd data: {entry.dataset}/{entry.relpath}: no published checksum, trusting this first download; "
                  f"recorded sha256 {digest}", file=sys.stderr)
            if entry.reference_sha256 and entry.reference_sha256 != digest:
                print(f"mabpd data: note: the course's reference copy has sha256 {entry.reference_sha256} "
                      "(a mirror; the bytes differ, the content may not)", file=sys.stderr)
    elif not quiet:
        print(f"mabpd data: {entry.dataset}/{entry.relpath}: downloaded, sha256 verified", file=sys.stderr)
    return dest


def _extract_member(archive: Path, entry: FileEntry) -> Path:
    """Pull ``entry.archive_member`` (matched by file name) out of a downloaded zip into a temporary file."""
    try:
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if Path(n).name == entry.archive_member]
            if not names:
                raise ChecksumError(f"{entry.url} does not contain {entry.archive_member}")
            fd, out_name = tempfile.mkstemp(prefix=".part-", dir=archive.parent)
            try:
                with os.fdopen(fd, "wb") as out, zf.open(names[0]) as src:
                    shutil.copyfileobj(src, out, length=1 << 20)
            except Exception:
                Path(out_name).unlink(missing_ok=True)
                raise
    except zipfile.BadZipFile as exc:
        raise ChecksumError(f"{entry.dataset}/{entry.relpath}: the download is not a valid zip ({exc})") from None
    return Path(out_name)


def status(data_dir: str | os.PathLike | None = None, download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """One row per manifest file: where it is found (local / cache / missing) and whether it verifies."""
    import pandas as pd
    base, cache = _resolve_data_dir(data_dir), _resolve_download_dir(download_dir)
    rows = []
    for (dataset, relpath), e in manifest().items():
        where, path, check = "missing", None, ""
        if base is not None and (base / dataset / relpath).is_file():
            where, path = "local", base / dataset / relpath
        elif (cache / dataset / relpath).is_file():
            where, path = "cache", cache / dataset / relpath
        if path is not None:
            try:
                _verify(e, path)
                if e.sha256 or _tofu_path(path).exists():
                    check = "ok"
                elif e.reference_sha256:
                    same = sha256_file(path) == e.reference_sha256
                    check = "ok (same as the reference copy)" if same else "differs from the reference copy (no sha256 published)"
                else:
                    check = "unchecked (no sha256 published)"
            except ChecksumError as exc:
                check = f"MISMATCH: {exc}"
        rows.append({"dataset": dataset, "file": relpath, "where": where, "check": check,
                     "downloadable": bool(e.url), "licence": e.licence})
    return pd.DataFrame(rows)

