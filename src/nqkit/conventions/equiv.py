"""``equiv``: nqkit's own answer-equivalence rule, deterministic and explained, no model.

Exact match disagrees with human judges on about a third of the answers of LLM-era
systems (Kamalloo et al., ACL 2023, "Evaluating Open-Domain Question Answering in the Era
of Large Language Models", §4): a right answer is spelled another way, says less or more
than the gold, or is a sentence around it. ``equiv`` is not a rule of any harness; it is
nqkit's documented extension (docs/nq-open-ambigqa.md, "An answer-equivalence rule"),
built on the judgments of the development half of the 150 released questions
(:func:`nqkit.metrics.judge_audit.judged_half`) and measured on the other half.

Both sides are compared as canonical words (:func:`nqkit.text.answer_forms.
canonical_tokens`: accents, mis-decoded text, numbers, dates, units, initials), and any
gold answer of the question may be met. :func:`explain` says which rule decided; its rule
names are a fixed vocabulary (:data:`RULES`). A prediction is accepted by, in this order:

``equal``
    its SQuAD-normalized text equals a gold answer's (the ``squad`` rule);
``canonical``
    its canonical words equal a gold answer's (``"2,579"`` / ``"2579"``, ``"two"`` /
    ``"2"``, ``"March 30, 2006"`` / ``"30 March 2006"``, ``"Dáin"`` / ``"DÃ¡in"``);
``initials``
    the same name with initials for some words (``"Bhimrao Ramji Ambedkar"`` /
    ``"B. R. Ambedkar"``): as many words, each equal or one the initial of the other, one
    full word equal;
``part-of-gold``
    its words are a run of a gold answer's that holds at least half of the gold's content
    words (``"foreign exchange"`` / ``"foreign exchange market"``): it says less, not
    something else;
``contains``
    a gold answer's words are a run of its words (whole words: ``"1"`` is not in
    ``"1990"``), unless a guard below holds;
``gold-part``
    it equals or contains a part of a gold answer (unless a guard holds): the gold without
    a parenthesis (``"subdural hematoma (SDH)"``) or the parenthesis' words, without a
    leading qualifier (``"at about 3.99 degrees"``, ``"in the s-block"``, ``"typically,
    no"``), the place before a comma (``"Madison, Wisconsin"``, ``"Orangeville, Ontario,
    Canada"``; not in a gold with a digit: ``"September 27, 2017"`` is one date), an item
    of a gold that lists several with *and* / *or* (``"X, Y and Z"``, ``"X or Y"``);
``coarser-date``
    a gold answer is a date and the prediction gives its year, or month and year, with no
    other month or day for it (``"1965"`` / ``"1 August 1965"``), unless a guard holds.

Guards, for the rules that credit a prediction saying more than a gold answer (``contains``,
``gold-part``, ``coarser-date``): the gold then names the rejection,

``hedged``
    the prediction offers alternatives (``"X or Y"``, ``either``), a gold answer on one side;
``many-candidates``
    the prediction lists four or more short items, more than the question has gold
    answers: a net cast over candidates, not an answer;
``too-long``
    more than 40 words: a paragraph that mentions the gold among much else.

A rejection is ``empty`` (no words), one of the guards, or ``no-match``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from nqkit.conventions.base import EmConvention, register
from nqkit.text.answer_forms import canonical_tokens, dates
from nqkit.text.normalize import normalize_answer

__all__ = ["EQUIV", "RULES", "EquivVerdict", "explain"]

# every rule name a verdict gives: the accepting rules in the order they are tried, then
# the rejections
ACCEPTING = ("equal", "canonical", "initials", "part-of-gold", "contains", "gold-part",
             "coarser-date")
REJECTING = ("empty", "hedged", "many-candidates", "too-long", "no-match")
RULES = ACCEPTING + REJECTING

MAX_WORDS = 40  # longer predictions are paragraphs (too-long)
MIN_LIST = 4  # a list of this many items or more may be a net cast over candidates

# words that say nothing of an answer's content: its share of a gold's content words
# (part-of-gold) and what a gold may start with that a prediction need not repeat
_FUNCTION = frozenset({
    "of", "in", "at", "on", "by", "from", "for", "to", "with", "and", "or", "as", "into",
    "during", "its", "his", "her", "their"})
# leading words of a gold answer that qualify it (gold-part drops them)
_QUALIFIERS = frozenset({
    "in", "at", "on", "by", "from", "during", "around", "about", "approximately",
    "roughly", "nearly", "almost", "over", "circa", "ca", "c", "some", "typically",
    "usually", "generally", "mostly", "mainly", "primarily", "probably", "likely", "up",
    "to", "more", "less", "than", "least", "most", "late", "early", "mid", "officially"})
_LIST_SEP = re.compile(r"\s*(?:[,;/]|\band\b|\bor\b|&)\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class EquivVerdict:
    """The ``equiv`` rule's verdict on one prediction and why."""

    accepted: bool
    rule: str  # one of RULES: the rule that accepted, or why none did
    gold: str | None  # the gold answer met (as given), None when rejected


def _run_in(needle: tuple[str, ...], hay: tuple[str, ...]) -> bool:
    """Whether ``needle`` is a non-empty contiguous run of ``hay``."""
    n = len(needle)
    return 0 < n <= len(hay) and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def _content(words: Sequence[str]) -> list[str]:
    return [w for w in words if w not in _FUNCTION]


def _initials_match(pred: tuple[str, ...], gold: tuple[str, ...]) -> bool:
    """As many words, each equal or a one-letter initial of the other, one full word
    equal and at least one initial."""
    if len(pred) != len(gold) or len(pred) < 2:
        return False
    full = initial = 0
    for p, g in zip(pred, gold, strict=True):
        if p == g:
            full += len(p) > 1
        elif (len(g) == 1 and g.isalpha() and p.startswith(g) and len(p) > 1) \
                or (len(p) == 1 and p.isalpha() and g.startswith(p) and len(g) > 1):
            initial += 1
        else:
            return False
    return full >= 1 and initial >= 1


def _part_of(pred: tuple[str, ...], gold: tuple[str, ...], *, name: bool = False) -> bool:
    """``pred`` is a run of ``gold`` holding at least half of its content words and all
    of its numbers (``"group"`` says nothing of ``"group 1"``); of a ``name`` (a gold
    written in capitals), a half must end the name (``"Harrison"`` of ``"Aaron
    Harrison"``, not ``"Aaron"``)."""
    content, whole = _content(pred), _content(gold)
    if not content or pred == gold or not _run_in(pred, gold):
        return False
    if any(w[0].isdigit() for w in whole) and not any(w[0].isdigit() for w in content):
        return False
    if 2 * len(content) > len(whole):
        return True
    return 2 * len(content) == len(whole) and (not name or gold[-len(pred):] == pred)


def _is_name(text: str) -> bool:
    """Whether every word of ``text`` that is not a function word starts with a capital."""
    words = [w for w in re.findall(r"[^\W\d_]+", text) if w.lower() not in _FUNCTION]
    return bool(words) and all(w[0].isupper() for w in words)


@lru_cache(maxsize=1 << 14)
def _gold_parts(gold: str) -> tuple[tuple[str, ...], ...]:
    """The parts of a gold answer a prediction may meet alone (``gold-part``)."""
    texts: list[str] = []
    bare = re.sub(r"\s*\([^)]*\)", " ", gold).strip()
    if bare != gold.strip():
        texts.append(bare)
        texts += [m for m in re.findall(r"\(([^)]*)\)", gold) if re.search(r"[^\W\d_]", m)]
    items = [x for x in _LIST_SEP.split(bare) if x.strip()]
    if len(items) >= 2 and not re.search(r"\d", bare):  # "September 27, 2017" is one
        listing = re.search(r"\b(?:and|or)\b|&", bare, re.IGNORECASE)
        # "X, Y and Z", "X or Y": every item; "Madison, Wisconsin" and "Orangeville,
        # Ontario, Canada": the place before the first comma
        texts += items if listing else items[:1]
    parts = []
    for text in texts:
        words = canonical_tokens(text)
        if words:
            parts.append(words)
    words = canonical_tokens(gold)
    k = 0
    while k < len(words) - 1 and words[k] in _QUALIFIERS:
        k += 1
    if k:
        parts.append(words[k:])
    for p in list(parts):  # a part that itself starts with a qualifier
        j = 0
        while j < len(p) - 1 and p[j] in _QUALIFIERS:
            j += 1
        if j:
            parts.append(p[j:])
    whole = canonical_tokens(gold)
    return tuple(dict.fromkeys(p for p in parts if p and p != whole))


def _coarser_date(pred: tuple[str, ...], gold: tuple[str, ...]) -> bool:
    """The prediction names the year of a gold date that gives a month, with no other
    month or day for that year."""
    for _, g_month, g_day in dates(gold):
        if g_month is None:
            continue
        year = next(gold[i] for i, m, d in dates(gold) if (m, d) == (g_month, g_day))
        for i, month, day in dates(pred):
            if pred[i] != year:
                continue
            if month is None or (month == g_month and (day is None or day == g_day)):
                return True
    return False


def _guard(prediction: str, words: tuple[str, ...],
           golds: Sequence[tuple[str, ...]]) -> str | None:
    """The guard that holds for a prediction (for rules crediting a longer prediction):
    too long, hedged (alternatives, one of which meets no gold answer: "biotic or
    abiotic" is not hedged when both are gold answers), or a list of more candidates
    than gold answers."""
    if len(prediction.split()) > MAX_WORDS:
        return "too-long"
    sides = [canonical_tokens(s) for s in re.split(r"\bor\b", prediction, flags=re.I)]
    alternatives = "either" in words or (len(sides) > 1 and all(_content(s) for s in sides))
    if alternatives and not all(any(_run_in(g, s) for g in golds) for s in sides):
        return "hedged"
    items = [x for x in _LIST_SEP.split(prediction.strip().rstrip(".")) if x.strip()]
    if (len(items) >= MIN_LIST and all(len(x.split()) <= 5 for x in items)
            and len(items) > len(golds)):
        return "many-candidates"
    return None


def _guarded(gold: tuple[str, ...], guard: str | None) -> bool:
    """Whether a guard bars a credit: a gold answer that itself says "or" is not hedged."""
    return guard is not None and not (guard == "hedged" and ("or" in gold or
                                                             "either" in gold))


def explain(prediction: str, answers: Sequence[str]) -> EquivVerdict:
    """The ``equiv`` verdict on ``prediction`` against the gold ``answers`` (any may be
    met), with the rule that decided (module docstring)."""
    words = canonical_tokens(prediction)
    if not words:
        return EquivVerdict(False, "empty", None)
    golds = [(a, canonical_tokens(a)) for a in answers]
    squad = normalize_answer(prediction)
    for a, _ in golds:
        if normalize_answer(a) == squad:
            return EquivVerdict(True, "equal", a)
    for a, g in golds:
        if g and g == words:
            return EquivVerdict(True, "canonical", a)
    for a, _ in golds:
        if _initials_match(canonical_tokens(prediction, initials=False),
                           canonical_tokens(a, initials=False)):
            return EquivVerdict(True, "initials", a)
    for a, g in golds:
        name = _is_name(a)
        if (_part_of(words, g, name=name)
                or any(_part_of(words, p, name=name) for p in _gold_parts(a))):
            return EquivVerdict(True, "part-of-gold", a)
    guard = _guard(prediction, words, [g for _, g in golds])
    barred: str | None = None
    for rule, met in (
            ("contains", lambda a, g: _run_in(g, words)),
            ("gold-part", lambda a, g: any(_run_in(p, words) for p in _gold_parts(a))),
            ("coarser-date", lambda a, g: _coarser_date(words, g))):
        for a, g in golds:
            if not met(a, g):
                continue
            if _guarded(g, guard):
                barred = barred or guard
                continue
            return EquivVerdict(True, rule, a)
    return EquivVerdict(False, barred or "no-match", None)


def _judge(prediction: str, answers: Sequence[str]) -> str | None:
    return explain(prediction, answers).gold


def _as_given(text: str) -> str:
    """The prediction as given: :func:`explain` reads its own canonical words."""
    return text


EQUIV = register(EmConvention(
    "equiv", "nqkit's own answer-equivalence rule (nqkit/conventions/equiv.py; not a "
    "harness's): canonical words, containment with guards, gold parts, coarser dates",
    _as_given, contains=True, judge=_judge, published=False))
