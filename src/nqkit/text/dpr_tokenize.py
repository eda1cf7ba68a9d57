"""The simple tokenizer of DPR's answer check (Karpukhin et al. 2020, ``has_answer``).

Tokens are maximal runs of letters, digits and combining marks (Unicode categories L*,
N*, M*), or single characters that are neither separators (Z*) nor control/other (C*).
Text is NFD-normalized first and tokens are lower-cased, so "Röntgen" and "Ro\u0308ntgen"
give the same tokens. A passage *has the answer* when the token sequence of one answer
occurs contiguously in the passage's tokens; this is the "top-k answer recall" of DPR
and of the retrieval papers that followed it.

The character classes are built once from :mod:`unicodedata` (the Python runtime's
Unicode version), so no third-party ``regex`` module is needed.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

__all__ = ["has_answer", "simple_tokenize", "tokenize_answer"]


def _ranges(predicate_categories: tuple[str, ...]) -> str:
    out: list[str] = []
    start = prev = -2
    for cp in range(sys.maxunicode + 1):
        if unicodedata.category(chr(cp))[0] in predicate_categories:
            if cp == prev + 1:
                prev = cp
                continue
            if start >= 0:
                out.append(_range(start, prev))
            start = prev = cp
    if start >= 0:
        out.append(_range(start, prev))
    return "".join(out)


def _range(a: int, b: int) -> str:
    return re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"


@lru_cache(maxsize=1)
def _token_re() -> re.Pattern[str]:
    alnum = _ranges(("L", "N", "M"))
    not_token = _ranges(("Z", "C"))
    return re.compile(f"[{alnum}]+|[^{not_token}]")


def simple_tokenize(text: str) -> list[str]:
    """NFD, then lower-cased DPR simple tokens of ``text``."""
    return [t.lower() for t in _token_re().findall(unicodedata.normalize("NFD", text))]


def tokenize_answer(answer: str) -> tuple[str, ...]:
    return tuple(simple_tokenize(answer))


def has_answer(answer_tokens: Iterable[Sequence[str]], text_tokens: Sequence[str]) -> bool:
    """True when one of the (tokenized) answers occurs as a contiguous token run.

    An answer with no token never matches.
    """
    n = len(text_tokens)
    for ans in answer_tokens:
        k = len(ans)
        if k == 0 or k > n:
            continue
        first = ans[0]
        for i in range(n - k + 1):
            if text_tokens[i] == first and tuple(text_tokens[i:i + k]) == tuple(ans):
                return True
    return False
