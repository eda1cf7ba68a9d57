"""The shipped table of Unicode category runs is what :mod:`unicodedata` says, for the
version it names, and the classes built from it are the per-character categories."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from nqkit.text import _unicode_runs as shipped
from nqkit.text.unicode_runs import category_runs, code_point_ranges, read_category_runs


def test_the_shipped_table_is_unicodedatas_own() -> None:
    if unicodedata.unidata_version != shipped.VERSION:
        pytest.skip(f"the table is for Unicode {shipped.VERSION}, this Python has "
                    f"{unicodedata.unidata_version} (read from unicodedata instead)")
    assert category_runs() == read_category_runs()


def test_every_code_point_is_in_the_class_of_its_category() -> None:
    punctuation = code_point_ranges(lambda c: c.startswith("P"))
    inside = {cp for a, b in punctuation for cp in range(a, b + 1)}
    every = {cp for cp in range(sys.maxunicode + 1)
             if unicodedata.category(chr(cp)).startswith("P")}
    assert inside == every and len(every) > 700
    assert [b for _, b in punctuation] == sorted(b for _, b in punctuation)
