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

__all__ = ["exact_match", "normalize_answer", "normalize_answer_nfd"]

_PUNCT_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalization: lower, strip punctuation, drop articles, collapse spaces.

    The order (lower-case, then punctuation, then articles) matters: ``"A.B"`` becomes
    ``"ab"`` and keeps no article.
    """
    text = text.lower().translate(_PUNCT_TABLE)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def normalize_answer_nfd(text: str) -> str:
    """ORQA / NQ-open normalization: Unicode NFD, then :func:`normalize_answer`."""
    return normalize_answer(unicodedata.normalize("NFD", text))


def exact_match(prediction: str, gold: str, *, nfd: bool = True) -> bool:
    """True when both strings normalize to the same text (NFD first when ``nfd``)."""
    norm = normalize_answer_nfd if nfd else normalize_answer
    return norm(prediction) == norm(gold)
