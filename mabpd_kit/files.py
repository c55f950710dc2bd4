"""Files the kit writes for the user (reports, exports): all or nothing."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic", "write_text"]


@contextlib.contextmanager
def atomic(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """A file object whose content replaces ``path`` when the block ends without an error (else nothing)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic() writes whole files: mode 'w' or 'wb', not {mode!r}")
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would have made it (mkstemp makes 0600)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """``Path.write_text``, all or nothing (see :func:`atomic`)."""
    with atomic(path, "w", encoding=encoding) as fh:
        fh.write(text)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
