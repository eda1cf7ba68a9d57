"""Scoring the same predictions under every exact-match convention (``--explain``).

The conventions themselves are modules of :mod:`nqkit.conventions` (one each: ``orqa``,
the official rule and the default; ``squad`` (= ``dpr``); ``containment``); their names,
rules and aliases are re-exported here for the callers of earlier versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nqkit.conventions.base import (
    ALIASES,
    CONVENTIONS,
    EmConvention,
    convention_names,
    get_convention,
)

__all__ = ["ALIASES", "CONVENTIONS", "EmConvention", "GapCauses", "convention_names",
           "explain_conventions", "gap_causes", "get_convention"]


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
    # questions each convention credits when answered with a gold answer verbatim
    num_creditable: dict[str, int]
    # each convention's verdict on each item, in input order (False: no prediction)
    verdicts: dict[str, list[bool]] = field(default_factory=dict, repr=False)

    def accuracy(self, name: str) -> float:
        return self.num_correct[name] / self.num_total if self.num_total else 0.0

    def ceiling(self, name: str) -> float:
        """The exact match of a system that answers every question with a gold answer,
        verbatim, under convention ``name`` (:meth:`EmConvention.creditable`)."""
        return self.num_creditable[name] / self.num_total if self.num_total else 0.0


def explain_conventions(
    items: Sequence[tuple[str, str | None, Sequence[str]]],
    names: Sequence[str] | None = None,
) -> ConventionTable:
    """Score ``(question, prediction, answers)`` items under each convention.

    A missing prediction (None) is wrong under every convention, so it never disagrees.
    ``names``: the conventions to score under; by default the published ones.
    """
    conventions = [get_convention(n) for n in (names or convention_names(published=True))]
    labels = tuple(c.name for c in conventions)
    correct = dict.fromkeys(labels, 0)
    can = dict.fromkeys(labels, 0)
    verdicts: dict[str, list[bool]] = {name: [] for name in labels}
    rows: list[Disagreement] = []
    for question, prediction, answers in items:
        marks: dict[str, bool] = {}
        for c in conventions:
            creditable, marks[c.name] = c.verdicts(prediction, answers)
            can[c.name] += creditable
        if prediction is None:
            for name in labels:
                verdicts[name].append(False)
            continue
        for name, ok in marks.items():
            correct[name] += ok
            verdicts[name].append(ok)
        if len(set(marks.values())) > 1:
            rows.append(Disagreement(question, prediction, tuple(answers), marks))
    return ConventionTable(labels, len(items), correct, rows, can, verdicts)


# the steps that turn one convention into another, in the order they are swapped in
STEPS = ("normalization", "matching", "extraction")


@dataclass(frozen=True)
class GapCauses:
    """Why ``other`` scores the same predictions differently from ``reference``: each
    question whose verdict differs, put down to the step that changes it.

    ``other`` is reached from ``reference`` one step at a time (:data:`STEPS`: its
    normalization, then its matching — equality, containment or its own ``meets`` —, then
    its extraction of the prediction); a question is put down to the last step that
    changed its verdict, so the counts add up to the gap. ``gained[step]``: questions
    ``other`` credits and ``reference`` does not; ``lost[step]``: the reverse.
    """

    reference: str
    other: str
    gained: dict[str, int]
    lost: dict[str, int]
    examples: dict[str, list[str]]  # the first questions of each step, in input order

    @property
    def net(self) -> int:
        return sum(self.gained.values()) - sum(self.lost.values())


def gap_causes(reference: EmConvention, other: EmConvention,
               items: Sequence[tuple[str, str | None, Sequence[str]]],
               *, keep: int = 3, verdicts: tuple[Sequence[bool], Sequence[bool]] | None = None
               ) -> GapCauses:
    """The verdicts of ``other`` against ``reference`` on ``(question, prediction,
    answers)`` items, question by question, each difference put down to one step
    (:class:`GapCauses`). ``verdicts``: the two rules' verdicts on the items when known
    already (:attr:`ConventionTable.verdicts`); then only the questions where they differ
    are scored again, under the steps between them."""
    from dataclasses import replace

    chain = [reference,
             replace(reference, normalize=other.normalize,
                     normalize_answers=other.normalize_answers),
             replace(reference, normalize=other.normalize,
                     normalize_answers=other.normalize_answers, contains=other.contains,
                     meets=other.meets, judge=other.judge),
             other]
    gained = dict.fromkeys(STEPS, 0)
    lost = dict.fromkeys(STEPS, 0)
    examples: dict[str, list[str]] = {step: [] for step in STEPS}
    for i, (question, prediction, answers) in enumerate(items):
        if prediction is None:
            continue
        if verdicts is not None:
            first, last = verdicts[0][i], verdicts[1][i]
            if first == last:
                continue
            marks = [first, *(rule.match(prediction, answers) is not None
                              for rule in chain[1:3]), last]
        else:
            marks = [rule.match(prediction, answers) is not None for rule in chain]
            if marks[0] == marks[-1]:
                continue
        # the last step whose verdict differs from the one before it
        step = max(k for k in range(1, 4) if marks[k] != marks[k - 1])
        name = STEPS[step - 1]
        (gained if marks[-1] else lost)[name] += 1
        if len(examples[name]) < keep:
            examples[name].append(question)
    return GapCauses(reference.name, other.name, gained, lost, examples)
