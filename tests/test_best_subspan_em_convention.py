"""``--convention best-subspan-em``: lost-in-the-middle's ``best_subspan_em``
(nelson-liu/lost-in-the-middle, commit 04cbd0d, ``src/lost_in_the_middle/metrics.py``).

The project is not on PyPI and nothing of it is vendored, so the oracle is its rule as that
file writes it, restated here with the same library calls: ``regex.sub(r"\\b(a|an|the)\\b",
" ", ...)`` after lower-casing and deleting ``string.punctuation``, whitespace collapsed, and
the normalized gold answer, lower-cased, looked for in the normalized prediction,
lower-cased; correct when one gold answer is found. It is compared on every pair of
``em_strings.every_pair``, with hand-derived cases, and with ``containment``, whose rule is
the same but for the article pattern's word boundaries (Python's ``re``).
"""

from __future__ import annotations

import functools
import string
import sys
import unicodedata

import pytest

from nqkit.conventions import get_convention
from nqkit.text.normalize import is_unicode_word_char

from conftest import require
from em_strings import every_pair

regex = require("regex")


@functools.cache
def _normalize(s: str) -> str:
    exclude = set(string.punctuation)
    s = "".join(ch for ch in s.lower() if ch not in exclude)
    return " ".join(regex.sub(r"\b(a|an|the)\b", " ", s).split())


def _best_subspan_em(prediction: str, ground_truths: list[str]) -> float:
    pred = _normalize(prediction)
    return float(any(_normalize(g).lower() in pred.lower() for g in ground_truths))


def test_every_verdict_equals_the_published_rule():
    ours = get_convention("best-subspan-em")
    containment = get_convention("containment")
    cases = every_pair()
    unique = list(dict.fromkeys((s, tuple(gold)) for s, gold in cases))
    differ = [(s, gold) for s, gold in unique
              if (ours.match(s, list(gold)) is not None) != (_best_subspan_em(s, list(gold))
                                                             == 1.0)]
    assert not differ, f"{len(differ)} of {len(unique)} differ, e.g. {differ[:3]}"
    # the same verdicts as containment except beside combining marks and their kin
    apart = [(s, gold) for s, gold in unique
             if (ours.match(s, list(gold)) is None) != (containment.match(s, list(gold)) is None)]
    assert apart
    assert all(any(is_unicode_word_char(c) != (c.isalnum() or c == "_")
                   for c in s + "".join(gold)) for s, gold in apart)


@pytest.mark.parametrize(("prediction", "gold", "expected"), [
    ("The Beatles were a band", ["beatles"], True),  # from metrics.py: gold in prediction
    ("beatles", ["the beatles band"], False),
    ("in 1990", ["1"], True),
    ("the\u0301 end", ["end"], True),
    # "the" + combining acute is one word for the regex module: kept, so the gold
    # "thé end" (normalized "the\u0301 end") is found; Python's re removes "the"
    ("the\u0301 end", ["the\u0301 end"], True),
    ("x the\u00b2", ["x \u00b2"], True),  # "²" is no word character there: "the" goes
])
def test_the_rule_by_hand(prediction, gold, expected):
    assert (get_convention("best-subspan-em").match(prediction, gold) is not None) is expected
    assert (_best_subspan_em(prediction, gold) == 1.0) is expected


def test_word_characters_are_the_regex_modules():
    """Every assigned code point is a word character for ``regex``'s ``\\w`` exactly when
    :func:`is_unicode_word_char` says so (unassigned ones differ with the Unicode
    versions of the two tables)."""
    differ = [hex(cp) for cp in range(sys.maxunicode + 1)
              if unicodedata.category(chr(cp)) != "Cn"
              and bool(regex.match(r"\w", chr(cp))) != is_unicode_word_char(chr(cp))]
    assert not differ
