"""Answer normalization for exact match (SQuAD v1.1 and ORQA / NQ-open flavours).

Both flavours lower-case, drop ASCII punctuation (``string.punctuation``), remove the
articles *a*, *an*, *the* as whole words and collapse whitespace. The ORQA flavour, used by
the NQ-open evaluation (``language/orqa/utils/eval_utils.py``), first applies Unicode NFD,
so that an accented letter and its decomposed spelling compare equal; the SQuAD flavour,
used by the AmbigQA evaluation, does not.
"""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache

__all__ = ["exact_match", "normalize_answer", "normalize_answer_nfd",
           "normalize_answer_unicode_words"]

_PUNCT_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


@lru_cache(maxsize=1 << 18)
def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalization: lower, strip punctuation, drop articles, collapse spaces.

    The order (lower-case, then punctuation, then articles) matters: ``"A.B"`` becomes
    ``"ab"`` and keeps no article. Remembered (a pure function of its text): on ASCII
    text it is also the ORQA rule's and the ``regex``-module rules' normalization
    (:func:`normalize_answer_nfd`, :func:`normalize_answer_unicode_words`), so scoring
    under every convention (``--explain``) computes it once per string, not once per rule.
    """
    text = text.lower().translate(_PUNCT_TABLE)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def normalize_answer_nfd(text: str) -> str:
    """ORQA / NQ-open normalization: Unicode NFD, then :func:`normalize_answer`."""
    if text.isascii():  # NFD leaves ASCII as it is
        return normalize_answer(text)
    return normalize_answer(unicodedata.normalize("NFD", text))


# The word characters of the third-party ``regex`` module's ``\\w`` (Unicode's "word"
# property of UTS #18: Alphabetic, marks, decimal digits, connector punctuation,
# Join_Control), which DPR, lost-in-the-middle and qa-metrics write their article pattern
# with. Python's ``re`` counts ``str.isalnum()`` characters instead: combining marks are not
# word characters there, superscript digits (No) are. Alphabetic beyond the letters and Nl
# is read from the categories: the circled and squared Latin letters (So) below.
_OTHER_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169),
                             (0x1F170, 0x1F189))
_WORD_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl",
                              "Pc"})


def is_unicode_word_char(ch: str) -> bool:
    """Whether ``ch`` is a word character of the ``regex`` module's ``\\w``."""
    cp = ord(ch)
    return (unicodedata.category(ch) in _WORD_CATEGORIES or cp in (0x200C, 0x200D)
            or any(a <= cp <= b for a, b in _OTHER_ALPHABETIC_SYMBOLS))


@lru_cache(maxsize=1)
def _unicode_word_articles() -> re.Pattern[str]:
    from nqkit.text.unicode_runs import code_point_ranges, regex_class

    ranges = code_point_ranges(lambda c: c in _WORD_CATEGORIES)
    ranges += [(0x200C, 0x200D), *_OTHER_ALPHABETIC_SYMBOLS]
    merged: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    word = regex_class(merged)
    # \b(a|an|the)\b with the regex module's word characters on either side
    return re.compile(f"(?<![{word}])(?:a|an|the)(?![{word}])")


def normalize_answer_unicode_words(text: str) -> str:
    """:func:`normalize_answer` as written with the ``regex`` module (``import regex``:
    DPR's ``qa_validation.py``, lost-in-the-middle's ``metrics.py``, qa-metrics): the
    articles are removed where they stand between Unicode word boundaries, so an article
    followed by a combining mark (``"the\u0301"``) or preceded by a circled letter stays,
    and one beside a superscript digit (``"the\u00b2"``) goes. On ASCII text the two word
    boundaries are the same ([A-Za-z0-9_] on either side), so it is
    :func:`normalize_answer`, which is faster."""
    if text.isascii():
        return normalize_answer(text)
    text = text.lower().translate(_PUNCT_TABLE)
    text = _unicode_word_articles().sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str, *, nfd: bool = True) -> bool:
    """True when both strings normalize to the same text (NFD first when ``nfd``)."""
    norm = normalize_answer_nfd if nfd else normalize_answer
    return norm(prediction) == norm(gold)
