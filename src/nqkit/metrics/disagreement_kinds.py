"""What kind of answer a judge and the humans disagree on: a small vocabulary of kinds.

Kamalloo et al. (ACL 2023, §5 and Table 4) sort the answers exact match misses into
kinds (semantic equivalence, verbose answers, granularity, list answers, number and date
formats, ...) by hand. Here a kind is given by rules, so that the disagreements of any
judge with the humans (:mod:`nqkit.metrics.judge_audit`) can be counted the same way
on every run. The rules look only at the model answer (the *prediction*) and the
question's gold answers; each gold answer is tried in turn, and the first rule, in the
order below, that holds for some gold answer gives the kind:

1. ``verbose answer`` — the prediction holds a gold answer among much more text: the
   gold answer's tokens occur as a contiguous run of the prediction's tokens, and the
   prediction has at least :data:`VERBOSE_EXTRA` tokens more.
2. ``partial list`` — the prediction or the gold answer is a list (its text splits on
   ``;``, ``&``, the word ``and``, or, with two commas or more, on commas, into two
   items or more), and the items of one are a proper subset of the items of the other
   (a list that names part of the gold list, or a gold answer among other names).
3. ``number or date format`` — both hold a number or a date (digits, an ordinal such as
   ``24th``, a number word — ``zero`` to ``billion``, ``first`` to ``tenth`` — or a
   month name or its abbreviation; ``may`` and ``second`` count too), and neither's
   token set is a proper subset of the other's: the same number or date written
   differently (``ten`` / ``10``, ``24 June 1983`` / ``June 24, 1983``) or numbers and
   dates that differ (``1983`` / ``1984``).
4. ``granularity`` — one names a broader or narrower thing: the token set of one is a
   proper subset of the other's (``1983`` / ``June 24, 1983``, ``Paris`` /
   ``Paris France``).
5. ``other`` — none of the above (a synonym, another name, a wrong answer, ...).

Tokens are the text lower-cased, a comma between digits dropped (``1,000`` is
``1000``), split into runs of letters and digits, the articles ``a``, ``an`` and ``the``
left out (as SQuAD's normalization leaves them out). A prediction or gold answer
without a token matches no rule but ``other``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["KINDS", "VERBOSE_EXTRA", "disagreement_kind", "tokens"]

KINDS = ("verbose answer", "partial list", "number or date format", "granularity", "other")
# tokens a prediction must have beyond a gold answer it holds to be a verbose answer: a
# short phrase around a name ("in 1983", "Paris, France") is granularity, a sentence is not
VERBOSE_EXTRA = 4

_ARTICLES = frozenset(("a", "an", "the"))
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"[^\W_]+")
_LIST_SPLIT = re.compile(r";|&|\band\b", re.IGNORECASE)
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_NUMBER_WORDS = frozenset((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
    "eighty", "ninety", "hundred", "thousand", "million", "billion", "first", "second",
    "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"))
_MONTHS = frozenset((
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec"))


def tokens(text: str) -> tuple[str, ...]:
    """The tokens the rules compare (see the module docstring)."""
    text = _DIGIT_COMMA.sub("", text.lower())
    return tuple(t for t in _TOKEN.findall(text) if t not in _ARTICLES)


def _items(text: str) -> frozenset[tuple[str, ...]]:
    """The items of a list answer (one item when it is not a list)."""
    parts = _LIST_SPLIT.split(text)
    if text.count(",") >= 2:
        parts = [q for p in parts for q in p.split(",")]
    return frozenset(t for t in (tokens(p) for p in parts) if t)


def _has_number(toks: Sequence[str]) -> bool:
    return any(t.isdigit() or _ORDINAL.fullmatch(t) or t in _NUMBER_WORDS or t in _MONTHS
               for t in toks)


def _contains(long: Sequence[str], short: Sequence[str]) -> bool:
    n = len(short)
    return any(tuple(long[i:i + n]) == tuple(short) for i in range(len(long) - n + 1))


def _verbose(p: tuple[str, ...], g: tuple[str, ...], prediction: str, gold: str) -> bool:
    return len(p) >= len(g) + VERBOSE_EXTRA and _contains(p, g)


def _partial_list(p: tuple[str, ...], g: tuple[str, ...], prediction: str, gold: str) -> bool:
    a, b = _items(prediction), _items(gold)
    return max(len(a), len(b)) >= 2 and (a < b or b < a)


def _number(p: tuple[str, ...], g: tuple[str, ...], prediction: str, gold: str) -> bool:
    sp, sg = set(p), set(g)
    return _has_number(p) and _has_number(g) and not (sp < sg or sg < sp)


def _granularity(p: tuple[str, ...], g: tuple[str, ...], prediction: str, gold: str) -> bool:
    sp, sg = set(p), set(g)
    return sp < sg or sg < sp


_RULES = (("verbose answer", _verbose), ("partial list", _partial_list),
          ("number or date format", _number), ("granularity", _granularity))


def disagreement_kind(prediction: str, gold: Sequence[str]) -> str:
    """The kind (one of :data:`KINDS`) of a prediction against its question's gold
    answers: the first rule of the module docstring that holds for some gold answer."""
    p = tokens(prediction)
    pairs = [(g, tokens(g)) for g in gold]
    if p:
        for kind, rule in _RULES:
            if any(t and rule(p, t, prediction, g) for g, t in pairs):
                return kind
    return "other"
