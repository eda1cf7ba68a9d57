"""``qa-metrics``: the "exact match" of the qa-metrics package (0.2.42, ``em_match``).

``qa_metrics.em.em_match(reference, candidate)`` with the gold answers as ``reference``:
correct when one normalized gold answer is a *substring* of the normalized prediction,
like ``containment``, with its own normalization, applied as its code chains it
(``qa_metrics/utils/tools.py``): lower-case, delete every Unicode punctuation character
(categories P*), collapse whitespace; then the SQuAD steps (lower-case, ASCII punctuation
deleted, articles *a*/*an*/*the* removed as words, whitespace collapsed) twice, the
article pattern written with the ``regex`` module (Unicode word boundaries:
:func:`nqkit.text.normalize.normalize_answer_unicode_words`). An empty prediction meets
nothing, not even a gold answer that normalizes to the empty string (which any other
prediction contains).
"""

from __future__ import annotations

from functools import lru_cache

from nqkit.conventions.base import EmConvention, register
from nqkit.text.normalize import normalize_answer_unicode_words


@lru_cache(maxsize=1)
def _unicode_punctuation() -> dict[int, None]:
    """A ``str.translate`` table deleting every character of categories P*."""
    from nqkit.text.unicode_runs import code_point_ranges

    return dict.fromkeys(cp for a, b in code_point_ranges(lambda c: c.startswith("P"))
                         for cp in range(a, b + 1))


def normalize(text: str) -> str:
    """qa-metrics' ``remove_punctuation(normalize_answer(text))``."""
    text = text.lower().translate(_unicode_punctuation())
    text = normalize_answer_unicode_words(" ".join(text.split()))
    text = text.strip().replace("\u2019", "'").lower()  # its preprocess()
    return normalize_answer_unicode_words(text)


def extract(prediction: str) -> str | None:
    """``em_match`` returns False for an empty candidate before normalizing anything."""
    return prediction or None


QA_METRICS = register(EmConvention(
    "qa-metrics", "qa-metrics 0.2.42 qa_metrics/em.py em_match (utils/tools.py "
    "normalize_answer, remove_punctuation)", normalize, contains=True, extract=extract))
