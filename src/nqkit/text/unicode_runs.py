"""Unicode general categories as runs of code points, read once from :mod:`unicodedata`.

Several rules are written with character classes the standard ``re`` module does not
have (DPR's tokenizer: letters, digits and marks; the ``regex`` module's ``\\w``;
qa-metrics' every punctuation character): each is built from the categories of all
1,114,112 code points. Reading them costs about 0.25 s, so they ship as a generated table
of runs for the Unicode version it was made with, read from :mod:`unicodedata` once per
process under another version (:func:`category_runs`); each class is then a few
thousand runs (:func:`code_point_ranges`). The Python runtime's Unicode version decides, as it does
for the code these rules reproduce.
"""

from __future__ import annotations

import itertools
import sys
import unicodedata
from collections.abc import Callable
from functools import lru_cache

__all__ = ["category_runs", "code_point_ranges", "read_category_runs", "regex_class"]


@lru_cache(maxsize=1)
def category_runs() -> tuple[tuple[int, str], ...]:
    """``(first code point, category)`` of each maximal run of one category, in order:
    from the table shipped with nqkit when it was generated for the runtime's Unicode
    version (``scripts/gen_unicode_runs.py``), else read from :mod:`unicodedata`."""
    from nqkit.text import _unicode_runs as shipped

    if unicodedata.unidata_version == shipped.VERSION:
        cats = "".join(shipped.CATEGORIES)
        return tuple((start, cats[2 * i:2 * i + 2]) for i, start in enumerate(shipped.STARTS))
    return read_category_runs()


def read_category_runs() -> tuple[tuple[int, str], ...]:
    """:func:`category_runs` read from :mod:`unicodedata` (about 0.25 s)."""
    categories = map(unicodedata.category, map(chr, range(sys.maxunicode + 1)))
    runs: list[tuple[int, str]] = []
    start = 0
    for category, group in itertools.groupby(categories):
        runs.append((start, category))
        start += sum(1 for _ in group)
    return tuple(runs)


def code_point_ranges(keep: Callable[[str], bool]) -> list[tuple[int, int]]:
    """The inclusive ranges of code points whose category ``keep`` accepts, merged."""
    runs = category_runs()
    out: list[tuple[int, int]] = []
    for i, (start, category) in enumerate(runs):
        if not keep(category):
            continue
        stop = runs[i + 1][0] - 1 if i + 1 < len(runs) else sys.maxunicode
        if out and out[-1][1] == start - 1:
            out[-1] = (out[-1][0], stop)
        else:
            out.append((start, stop))
    return out


def regex_class(ranges: list[tuple[int, int]]) -> str:
    """The ranges as the inside of a ``re`` character class."""
    import re

    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                   for a, b in ranges)
