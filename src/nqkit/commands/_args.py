"""Number arguments checked by argparse, shared by every command.

Each helper returns a ``type=`` callable: a value out of range becomes one line
``nqkit: error: argument --k1: must be >= 0, found -1`` and exit code 2 (see
:class:`nqkit.cli.NqkitArgumentParser`), before any file is read. Only ``argparse`` is
imported here, so ``nqkit --help`` stays instant.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _range_text(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f"in [{lo:g}, {hi:g}]"
    return f">= {lo:g}" if lo is not None else f"<= {hi:g}"


def int_in(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An integer in ``[lo, hi]`` (either bound may be open)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, found {text!r:.30}"
                                             ) from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {_range_text(lo, hi)}, found {value}")
        return value

    parse.__name__ = "integer"
    return parse


def float_in(lo: float | None = None, hi: float | None = None) -> Callable[[str], float]:
    """A finite number in ``[lo, hi]`` (either bound may be open)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, found {text!r:.30}"
                                             ) from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, found {text!r:.30}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {_range_text(lo, hi)}, found {value:g}")
        return value

    parse.__name__ = "number"
    return parse


positive_int = int_in(1)  # counts, sizes, thresholds of at least one
