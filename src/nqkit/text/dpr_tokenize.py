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

import itertools
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from nqkit.text.unicode_runs import code_point_ranges, regex_class

__all__ = ["AnswerCheck", "AnswerTokens", "TokenOffsets", "answer_char_spans", "fold",
           "has_answer", "simple_token_offsets", "simple_tokenize", "tokenize_answer"]

MEMO_LIMIT = 50_000  # passage texts whose tokens are kept (about 5.5 KB for 100 words)


def _ranges(predicate_categories: tuple[str, ...]) -> str:
    """The code points whose category starts with one of ``predicate_categories``, as a
    character class (:mod:`nqkit.text.unicode_runs`)."""
    return regex_class(code_point_ranges(lambda c: c[0] in predicate_categories))


@lru_cache(maxsize=1)
def _token_re() -> re.Pattern[str]:
    alnum = _ranges(("L", "N", "M"))
    not_token = _ranges(("Z", "C"))
    return re.compile(f"[{alnum}]+|[^{not_token}]")


# The same pattern for ASCII text, whose categories are fixed: letters and digits are L*
# and N* (no M*), the space is the only Z*, and C* is \x00-\x1f and \x7f. NFD leaves
# ASCII as it is and lower-casing it is per character, so the text is lower-cased once.
# About 8x faster than the full classes; 3 of 4 real passages are ASCII.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+|[^ \x00-\x1f\x7f]")


def simple_tokenize(text: str) -> list[str]:
    """NFD, then lower-cased DPR simple tokens of ``text``."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    return [t.lower() for t in _token_re().findall(unicodedata.normalize("NFD", text))]


TokenOffsets = tuple[list[str], list[int], list[int]]


def simple_token_offsets(text: str) -> TokenOffsets:
    """:func:`simple_tokenize` of ``text`` (the list ``words``), with the character
    offsets ``starts[i]``, ``ends[i]`` of what token ``i`` was made from in ``text``
    itself (not in its NFD form).

    The tokens are exactly those of :func:`simple_tokenize` (the same pattern over the
    same normalized text). NFD may turn one character into several (``é`` into ``e`` and
    a combining accent, one token) and reorder combining marks; each character of the
    normalized text is traced back to the character of ``text`` it came from, or, where
    marks were reordered, to the run of a base character and its marks. So
    ``text[starts[i]:ends[i]]`` always covers every character token ``i`` came from.
    """
    if text.isascii():
        matches = list(_ASCII_TOKEN.finditer(text.lower()))
        return ([m.group() for m in matches], [m.start() for m in matches],
                [m.end() for m in matches])
    nfd, origin_start, origin_end = _nfd_origins(text)
    matches = list(_token_re().finditer(nfd))
    return ([m.group().lower() for m in matches], [origin_start[m.start()] for m in matches],
            [origin_end[m.end() - 1] for m in matches])


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _nfd_origins(text: str) -> tuple[str, Sequence[int], Sequence[int]]:
    """NFD of ``text``, and for each of its characters the start and end offsets in
    ``text`` of what it came from.

    ASCII characters are their own normal form and starters (combining class 0): no mark
    moves across them, so each run of other characters is normalized on its own. Within
    such a run, canonical reordering moves marks only after a character whose
    decomposition starts with a starter; each stretch from one such character to the
    next is traced character by character when its characters normalize one by one to
    the stretch's normal form, and as a whole otherwise.
    """
    nfd = unicodedata.normalize("NFD", text)
    if nfd == text:
        return nfd, range(len(text)), range(1, len(text) + 1)
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for m in _NON_ASCII.finditer(text):
        a, b = m.span()
        parts.append(text[pos:a])
        starts.extend(range(pos, a))
        ends.extend(range(pos + 1, a + 1))
        bounds = [i for i in range(a, b) if i == a or (
            unicodedata.combining(text[i]) == 0
            and unicodedata.combining(unicodedata.normalize("NFD", text[i])[0]) == 0)]
        bounds.append(b)
        for c, d in itertools.pairwise(bounds):
            run = unicodedata.normalize("NFD", text[c:d])
            parts.append(run)
            pieces = [unicodedata.normalize("NFD", ch) for ch in text[c:d]]
            if "".join(pieces) == run:
                for i, piece in enumerate(pieces, c):
                    starts.extend([i] * len(piece))
                    ends.extend([i + 1] * len(piece))
            else:
                starts.extend([c] * len(run))
                ends.extend([d] * len(run))
        pos = b
    parts.append(text[pos:])
    starts.extend(range(pos, len(text)))
    ends.extend(range(pos + 1, len(text) + 1))
    if "".join(parts) != nfd:  # cannot happen by the rule above; never a wrong offset
        return nfd, [0] * len(nfd), [len(text)] * len(nfd)
    return nfd, starts, ends


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


def answer_char_spans(answer_tokens: Iterable[Sequence[str]], text: str, *,
                      offsets: TokenOffsets | None = None,
                      ) -> list[tuple[int, int]]:
    """Where the (tokenized) answers occur in ``text``, as :func:`has_answer` finds them:
    the character spans ``(start, end)`` of ``text`` covered by every contiguous token run
    equal to an answer, sorted, overlapping spans merged.

    Empty exactly when ``has_answer(answer_tokens, simple_tokenize(text))`` is False: the
    tokens are the same (:func:`simple_token_offsets`), and every occurrence is listed.
    ``offsets``: ``simple_token_offsets(text)``, when the caller has it already.
    """
    words, starts, ends = simple_token_offsets(text) if offsets is None else offsets
    found: list[tuple[int, int]] = []
    for ans in answer_tokens:
        run = list(ans)
        k = len(run)
        if k == 0:
            continue
        last = len(words) - k  # the last position where the run could start
        i = -1
        while True:
            try:
                i = words.index(run[0], i + 1, last + 1)
            except ValueError:
                break
            if words[i:i + k] == run:
                found.append((starts[i], ends[i + k - 1]))
    merged: list[tuple[int, int]] = []
    for a, b in sorted(found):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def fold(text: str) -> str:
    """``text`` as the has-answer prefilter compares it: NFD, lower-cased, final sigma as
    sigma.

    Every token of ``simple_tokenize(text)`` is, after :func:`fold`, a substring of
    ``fold(text)``: ``str.lower`` maps each character on its own except the capital sigma,
    which becomes final or medial by its neighbours, and folding the final sigma away
    removes that one context (lower-casing is idempotent on every code point, which a
    test checks for this Python's Unicode). So when some token of an answer, folded, is
    not a substring of the folded text, that answer cannot occur in the text, and a text
    that no answer passes this test for need not be tokenized at all.
    """
    return unicodedata.normalize("NFD", text).lower().replace("\u03c2", "\u03c3")


@dataclass(frozen=True, slots=True)
class AnswerTokens:
    """A question's answers as :class:`AnswerCheck` looks for them."""

    runs: tuple[tuple[str, ...], ...]  # the answers with a token (compared to slices)
    words: tuple[frozenset[str], ...]  # each run's tokens: a text lacking one has not the run
    firsts: frozenset[str]  # their first tokens: a passage without any has no answer
    folded: tuple[tuple[str, ...], ...]  # each run's tokens as fold() gives them


class AnswerCheck:
    """:func:`has_answer` of answers in passage texts, as ``has_answer([tokenize_answer(a)
    for a in answers], simple_tokenize(text))`` gives it, for many questions over
    passages that repeat.

    A retrieval run lists the same passage for many questions (3,610 x 100 contexts over
    a 3,349-passage corpus: each passage about 100 times), and the tokenizer's pattern
    costs about 0.1 ms a passage, nine tenths of a naive scoring. So each distinct text
    is tokenized once, and its set of tokens kept: a passage whose set holds no answer's
    first token cannot hold an answer, nor can it hold an answer one of whose tokens it
    lacks (two set operations in C); otherwise the answer is looked for only where its
    first token is (``tuple.index``), not at every position. The cache is emptied when it
    holds ``limit`` texts, which bounds memory on corpora whose passages rarely repeat.
    """

    def __init__(self, limit: int = MEMO_LIMIT) -> None:
        self._limit = limit
        self._tokens: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}

    @staticmethod
    def answers(answers: Iterable[str]) -> AnswerTokens:
        """The tokenized answers of a question (computed once per question)."""
        runs = tuple(t for t in map(tokenize_answer, answers) if t)
        return AnswerTokens(runs, tuple(map(frozenset, runs)),
                            frozenset(r[0] for r in runs),
                            tuple(tuple(fold(t) for t in run) for run in runs))

    @staticmethod
    def may_hold(answers: AnswerTokens, folded: str) -> bool:
        """False only when no answer can occur in the text whose :func:`fold` is
        ``folded``: some token of every answer is not even a substring of it. A test in C
        over the text, so most passages are never tokenized (see :func:`fold`)."""
        return any(all(t in folded for t in run) for run in answers.folded)

    def tokens(self, text: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """:func:`simple_tokenize` of ``text`` and the set of those tokens, from the cache
        when the text was seen (for :meth:`match`). Tokens are interned: passages share
        their words, and a cached text costs half the memory (5.5 KB, not 10 KB, for a
        100-word passage)."""
        entry = self._tokens.get(text)
        if entry is None:
            if len(self._tokens) >= self._limit:
                self._tokens.clear()
            tokens = tuple(map(sys.intern, simple_tokenize(text)))
            entry = self._tokens[text] = (tokens, frozenset(tokens))
        return entry

    def __call__(self, answers: AnswerTokens, text: str, folded: str | None = None) -> bool:
        """Whether one of ``answers`` (from :meth:`answers`) occurs in ``text``
        (``folded``: ``fold(text)``, when the caller keeps it)."""
        entry = self._tokens.get(text)
        if entry is None:
            if not self.may_hold(answers, fold(text) if folded is None else folded):
                return False
            entry = self.tokens(text)
        return self.match(answers, *entry)

    @staticmethod
    def match(answers: AnswerTokens, tokens: tuple[str, ...], vocab: frozenset[str]) -> bool:
        """Whether one of ``answers`` occurs in a text of these tokens (:meth:`tokens`)."""
        if answers.firsts.isdisjoint(vocab):
            return False
        for run, words in zip(answers.runs, answers.words, strict=True):
            if not words <= vocab:  # "the united states" passes the first test everywhere
                continue
            first = run[0]
            k = len(run)
            last = len(tokens) - k  # the last position where the run could start
            i = tokens.index(first)
            while i <= last:
                if tokens[i:i + k] == run:
                    return True
                try:
                    i = tokens.index(first, i + 1, last + 1)
                except ValueError:
                    break
        return False
