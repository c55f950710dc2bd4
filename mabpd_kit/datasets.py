"""Benchmark loaders. Data is never shipped: local copies are read from a directory given by
argument or ``MABPD_DATA_DIR``; otherwise files are downloaded into a cache (pinned revision,
checksum) on the user's machine.

(Initial contract; the datasets issue fills in downloads, checksums and loaders.)
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir(data_dir: str | os.PathLike | None = None) -> Path | None:
    """The local benchmark directory: the argument, else ``MABPD_DATA_DIR``, else None."""
    d = data_dir or os.environ.get("MABPD_DATA_DIR")
    return Path(d).expanduser() if d else None


def locate(dataset: str, relpath: str, data_dir: str | os.PathLike | None = None, download: bool = True) -> Path:
    """Path of ``relpath`` inside ``dataset`` (a folder name as in ``../shared/data``)."""
    base = globals()["data_dir"](data_dir)
    if base is not None and (base / dataset / relpath).exists():
        return base / dataset / relpath
    raise FileNotFoundError(
        f"{dataset}/{relpath} not found; set MABPD_DATA_DIR to a folder holding {dataset}/ "
        "or run `mabpd data fetch` when online"
    )
