"""Adjudicated exact match: EM against the gold amended by human judgments of answers.

Reproduces oqaeval's ``AnnotatedEM`` (Kamalloo et al., "Evaluating Open-Domain Question
Answering in the Era of Large Language Models", ACL 2023, §4; ``ehsk/OpenQA-eval``
``eval._evaluate`` with an annotation file):

* judgments (:mod:`nqkit.formats.judgments`) are keyed by oqaeval's question key
  (:func:`nqkit.text.question_key.question_key`: its tokens, lower-cased); a judged
  question whose key ends in ``?`` is also filed under the key without it, so a gold
  question without its question mark finds the judgments of one with it (not the other
  way round). Every verdict on a question gathers into two sets of answer strings:
  acceptable and unacceptable (an answer judged both ways is in both);
* only gold questions whose key has judgments are scored ("covered"); the others are
  left out of the average, as oqaeval leaves them out;
* a covered question's amended gold is its gold answers plus the acceptable answers,
  less each unacceptable answer given verbatim, or else its lower-cased spelling
  (``Question.gold_answers``): an unacceptable answer is removed as a string, so a gold
  answer that normalizes to the same text still credits it;
* the prediction, stripped, is correct when it equals an amended gold answer under SQuAD
  normalization (the ``squad`` convention, which is oqaeval's ``em_eval``);
* when the judgments remove every gold answer, the question is scored 0 if the
  prediction is one of its unacceptable answers (verbatim or case-insensitively), and
  is otherwise left out of the average (oqaeval cannot score it); the result counts
  those questions.

oqaeval also drops a covered question without a prediction; here it follows the
missing-prediction policy of the official number (refused, or wrong with
``--allow-missing``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from nqkit.conventions import get_convention
from nqkit.errors import InputError, for_example
from nqkit.formats.judgments import Judgment
from nqkit.text.question_key import question_key, without_question_mark

__all__ = [
    "AdjudicatedItem",
    "AdjudicatedResult",
    "Adjudication",
    "adjudications",
    "amended_gold",
    "score_adjudicated",
]


@dataclass(frozen=True, slots=True)
class Adjudication:
    """The human verdicts on the answers to one question."""

    acceptable: frozenset[str]  # answers judged acceptable, as written
    unacceptable: frozenset[str]  # answers judged unacceptable, as written


@dataclass(frozen=True, slots=True)
class AdjudicatedItem:
    """The adjudicated verdict of one covered gold question."""

    question: str
    correct: bool | None  # None: every gold answer judged unacceptable, so not scored
    correct_before: bool  # the verdict against the gold as given (same rule)
    answers: tuple[str, ...]  # the amended gold, sorted


@dataclass(frozen=True)
class AdjudicatedResult:
    """Adjudicated EM over the covered questions, and what the judgments covered."""

    accuracy: float  # num_correct / num_total
    num_correct: int
    num_total: int  # covered questions scored
    accuracy_before: float  # EM of the same questions against the gold as given
    num_correct_before: int
    covered: int  # gold questions with judgments (scored or not)
    num_gold: int  # gold questions
    judgments: int  # judgment rows read (rows with an empty verdict are not judgments)
    judged_questions: int  # distinct judged questions
    # judged questions that are no question of the gold, and covered questions that
    # could not be scored, in file and gold order
    not_in_gold: tuple[str, ...] = ()
    unscorable: tuple[str, ...] = ()
    items: dict[str, AdjudicatedItem] = field(default_factory=dict, repr=False)


def adjudications(judgments: Iterable[Judgment]) -> tuple[dict[str, Adjudication],
                                                          dict[str, str], int]:
    """The verdicts by question key (with oqaeval's second key for a trailing ``?``),
    each judged question's own key mapped to its text (first spelling), and the number
    of judgments."""
    yes: dict[str, set[str]] = {}
    no: dict[str, set[str]] = {}
    judged: dict[str, str] = {}
    n = 0
    for j in judgments:
        n += 1
        key = question_key(j.question)
        judged.setdefault(key, j.question)
        for k in _keys(key):
            yes.setdefault(k, set())
            no.setdefault(k, set())
            (yes if j.acceptable else no)[k].add(j.answer)
    table = {k: Adjudication(frozenset(yes[k]), frozenset(no[k])) for k in yes}
    return table, judged, n


def _keys(key: str) -> tuple[str, ...]:
    """The keys a judged question is filed under: its own, and without a final ``?``."""
    bare = without_question_mark(key)
    return (key, bare) if bare != key else (key,)


def amended_gold(answers: Iterable[str], adjudication: Adjudication) -> set[str]:
    """The gold answers with the acceptable answers added and the unacceptable ones
    removed: verbatim, or else their lower-cased spelling (oqaeval's
    ``Question.gold_answers``; the order of removal does not change the set)."""
    gold = set(answers) | adjudication.acceptable
    for a in sorted(adjudication.unacceptable):
        if a in gold:
            gold.remove(a)
        elif a.lower() in gold:
            gold.remove(a.lower())
    return gold


def score_adjudicated(
    scored: Sequence[tuple[str, Sequence[str], str | None]],
    judgments: Iterable[Judgment],
    *,
    where: str | None = None,
) -> AdjudicatedResult:
    """Adjudicated EM of ``scored`` — (question, gold answers, the prediction as scored
    or None when missing), one per gold question — amended by ``judgments``.

    Raises :class:`InputError` at ``where`` (the judgments file) when the judgments cover
    no gold question, or when every covered question lost all its gold answers.
    """
    rule = get_convention("squad")
    table, judged, n_judgments = adjudications(judgments)
    if not n_judgments:
        raise InputError(where, "the judgments file holds no judgment (every "
                         "'Acceptable?' is empty)", "give Yes or No for the judged answers")
    items: dict[str, AdjudicatedItem] = {}
    unscorable: list[str] = []
    gold_keys: set[str] = set()
    correct = correct_before = 0
    for question, answers, prediction in scored:
        key = question_key(question)
        gold_keys.add(key)
        adjudication = table.get(key)
        if adjudication is None:
            continue
        gold = amended_gold(answers, adjudication)
        candidate = None if prediction is None else prediction.strip()
        before = candidate is not None and rule.match(candidate, tuple(answers)) is not None
        verdict: bool | None
        if candidate is None:
            verdict = False
        elif gold:
            verdict = rule.match(candidate, tuple(sorted(gold))) is not None
        elif any(candidate == a or candidate.lower() == a.lower()
                 for a in adjudication.unacceptable):
            verdict = False
        else:
            verdict = None
            unscorable.append(question)
        items[question] = AdjudicatedItem(question, verdict, before, tuple(sorted(gold)))
        if verdict is not None:
            correct += verdict
            correct_before += before
    not_in_gold = tuple(q for k, q in judged.items()
                        if not gold_keys.intersection(_keys(k)))
    if not items:
        raise InputError(where, f"none of the {len(judged):,} judged question(s) is a "
                         f"question of the gold ({for_example(repr(q) for q in judged.values())})",
                         "give the judgments of this gold's questions (they are joined by "
                         "question text, case and spacing aside)")
    total = len(items) - len(unscorable)
    if not total:
        raise InputError(where, f"the judgments remove every gold answer of all "
                         f"{len(items):,} questions they cover, and judge none of their "
                         "predictions", "judge the predictions, or give another gold")
    return AdjudicatedResult(
        accuracy=correct / total, num_correct=correct, num_total=total,
        accuracy_before=correct_before / total, num_correct_before=correct_before,
        covered=len(items), num_gold=len(scored), judgments=n_judgments,
        judged_questions=len(judged), not_in_gold=not_in_gold,
        unscorable=tuple(unscorable), items=items)
