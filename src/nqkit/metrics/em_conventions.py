"""Named exact-match conventions for open-domain QA, each a published rule.

End-to-end NQ-open numbers differ across codebases because each normalizes answers its own
way. nqkit scores with the official ORQA rule by default and offers the other published
rules under their own names, so that a number always says which rule produced it:

``orqa`` (default)
    The official NQ-open evaluation (``language/orqa/utils/eval_utils.py``): Unicode NFD,
    lower-case, ASCII punctuation removed, the articles *a*/*an*/*the* removed as words,
    whitespace collapsed; the prediction must equal one normalized gold answer.
``squad``
    The SQuAD v1.1 evaluation script: the same steps without NFD, so a composed letter and
    its decomposed spelling differ. DPR's reader exact match
    (``dpr/data/qa_validation.py``, ``exact_match_score``) applies exactly this rule, so
    ``dpr`` is accepted as another name for it (the signature says ``squad``).
``containment``
    The "accuracy" of FlashRAG (its ``acc`` metric, ``Sub_ExactMatch``): correct when a
    SQuAD-normalized gold answer is a *substring* of the SQuAD-normalized prediction. It
    rewards long answers and matches inside words ("1" is contained in "1990").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nqkit.errors import InputError
from nqkit.registry import Registry
from nqkit.text.normalize import normalize_answer, normalize_answer_nfd

__all__ = ["ALIASES", "CONVENTIONS", "EmConvention", "get_convention"]


@dataclass(frozen=True, slots=True)
class EmConvention:
    """One exact-match rule: a normalization and how a prediction meets a gold answer."""

    name: str  # the name in the signature (em:NAME)
    source: str  # the public code that defines it
    normalize: Callable[[str], str]
    contains: bool  # gold answer is a substring of the prediction (else: equal)

    def match(self, prediction: str, answers: Sequence[str]) -> str | None:
        """The first gold answer the prediction meets under this rule, else None."""
        pred = self.normalize(prediction)
        for answer in answers:
            gold = self.normalize(answer)
            if (gold in pred) if self.contains else (gold == pred):
                return answer
        return None


CONVENTIONS: Registry[EmConvention] = Registry("exact-match convention")
CONVENTIONS.add("orqa", EmConvention(
    "orqa", "language/orqa/utils/eval_utils.py (official NQ-open)", normalize_answer_nfd,
    contains=False))
CONVENTIONS.add("squad", EmConvention(
    "squad", "SQuAD v1.1 evaluate-v1.1.py; DPR dpr/data/qa_validation.py exact_match_score",
    normalize_answer, contains=False))
CONVENTIONS.add("containment", EmConvention(
    "containment", "FlashRAG flashrag/evaluator/metrics.py Sub_ExactMatch ('acc')",
    normalize_answer, contains=True))

ALIASES: dict[str, str] = {"dpr": "squad", "official": "orqa"}


def get_convention(name: str) -> EmConvention:
    """The convention called ``name`` (or one of its aliases)."""
    canonical = ALIASES.get(name, name)
    if canonical not in CONVENTIONS:
        known = ", ".join([*CONVENTIONS.names(), *sorted(ALIASES)])
        raise InputError(None, f"unknown exact-match convention {name!r}",
                         f"choose one of: {known}")
    return CONVENTIONS.get(canonical)


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A question that the conventions score differently."""

    question: str
    prediction: str
    answers: tuple[str, ...]
    correct: dict[str, bool]  # convention name -> correct


@dataclass(frozen=True)
class ConventionTable:
    """The same predictions scored under several conventions (``--explain``)."""

    names: tuple[str, ...]
    num_total: int
    num_correct: dict[str, int]
    disagreements: list[Disagreement]

    def accuracy(self, name: str) -> float:
        return self.num_correct[name] / self.num_total if self.num_total else 0.0


def explain_conventions(
    items: Sequence[tuple[str, str | None, Sequence[str]]],
    names: Sequence[str] | None = None,
) -> ConventionTable:
    """Score ``(question, prediction, answers)`` items under each convention.

    A missing prediction (None) is wrong under every convention, so it never disagrees.
    """
    conventions = [get_convention(n) for n in (names or CONVENTIONS.names())]
    labels = tuple(c.name for c in conventions)
    correct = dict.fromkeys(labels, 0)
    rows: list[Disagreement] = []
    for question, prediction, answers in items:
        if prediction is None:
            continue
        marks = {c.name: c.match(prediction, answers) is not None for c in conventions}
        for name, ok in marks.items():
            correct[name] += ok
        if len(set(marks.values())) > 1:
            rows.append(Disagreement(question, prediction, tuple(answers), marks))
    return ConventionTable(labels, len(items), correct, rows)
