"""``--convention dpr-tokens``: DPR's ``has_answer`` (``dpr/data/qa_validation.py``,
``match_type="string"``) with the prediction as the text.

The oracle is DPR's check as its code writes it, restated here with the same library
calls: NFD (``unicodedata.normalize``), its ``SimpleTokenizer`` pattern
(``dpr/utils/tokenizers.py``: ``regex.compile("([\\p{L}\\p{N}\\p{M}]+)|([^\\p{Z}\\p{C}])",
IGNORECASE | UNICODE | MULTILINE)``), tokens lower-cased (``words(uncased=True)``), and
the loop over the text's positions that compares each slice with the answer's tokens
(so an answer without tokens is found at once). It is compared on every pair of
``em_strings.every_pair`` and on hand cases.
"""

from __future__ import annotations

import unicodedata

import pytest

from nqkit.conventions import get_convention

from conftest import require
from em_strings import every_pair

regex = require("regex")
_TOKEN = regex.compile(r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])",
                       flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE)


def _words(text: str) -> list[str]:
    return [m.group().lower() for m in _TOKEN.finditer(unicodedata.normalize("NFD", text))]


def _has_answer(answers: list[str], text: str) -> bool:
    tokens = _words(text)
    for answer in answers:
        single = _words(answer)
        for i in range(0, len(tokens) - len(single) + 1):
            if single == tokens[i:i + len(single)]:
                return True
    return False


def test_every_verdict_equals_dprs_has_answer():
    ours = get_convention("dpr-tokens")
    cases = every_pair()
    unique = list(dict.fromkeys((s, tuple(gold)) for s, gold in cases))
    theirs = {pair: _has_answer(list(pair[1]), pair[0]) for pair in unique}
    differ = [(s, gold) for (s, gold), v in theirs.items()
              if (ours.match(s, list(gold)) is not None) != v]
    assert not differ, f"{len(differ)} of {len(unique)} differ, e.g. {differ[:3]}"
    assert 0.2 * len(unique) < sum(theirs.values()) < 0.9 * len(unique)


@pytest.mark.parametrize(("prediction", "gold", "expected"), [
    ("the beatles band", ["Beatles"], True),
    ("in 1990", ["1"], False),  # whole tokens only
    ("Washington, D.C.", ["Washington, D.C."], True),
    ("Washington DC", ["Washington, D.C."], False),  # punctuation marks are tokens
    ("Pele\u0301", ["Pel\u00e9"], True),  # NFD
    ("anything", [" "], True),  # an answer without tokens is found
    ("", ["x"], False),
])
def test_the_rule_by_hand(prediction, gold, expected):
    assert (get_convention("dpr-tokens").match(prediction, gold) is not None) is expected
    assert _has_answer(gold, prediction) is expected
