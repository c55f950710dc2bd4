"""argparse types that check a number where it is read: ``--threshold nan`` is one line naming the range."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["number", "integer"]


def _range(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f"from {lo:g} to {hi:g}"
    if lo is not None:
        return f"of at least {lo:g}"
    return f"of at most {hi:g}" if hi is not None else ""


def number(lo: float | None = None, hi: float | None = None) -> Callable[[str], float]:
    """A finite float within ``[lo, hi]`` (either bound may be None)."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        if not math.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number {_range(lo, hi)}".rstrip())
        return v

    parse.__name__ = "number"
    return parse


def integer(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """A whole number within ``[lo, hi]`` (either bound may be None)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number {_range(lo, hi)}".rstrip()) from None
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number {_range(lo, hi)}".rstrip())
        return v

    parse.__name__ = "integer"
    return parse
