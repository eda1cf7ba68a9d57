"""Scoring the same predictions under every exact-match convention (``--explain``).

The conventions themselves are modules of :mod:`nqkit.conventions` (one each: ``orqa``,
the official rule and the default; ``squad`` (= ``dpr``); ``containment``); their names,
rules and aliases are re-exported here for the callers of earlier versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nqkit.conventions.base import (
    ALIASES,
    CONVENTIONS,
    EmConvention,
    convention_names,
    get_convention,
)

__all__ = ["ALIASES", "CONVENTIONS", "EmConvention", "convention_names", "explain_conventions",
           "get_convention"]


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
    """
    conventions = [get_convention(n) for n in (names or convention_names())]
    labels = tuple(c.name for c in conventions)
    correct = dict.fromkeys(labels, 0)
    can = dict.fromkeys(labels, 0)
    rows: list[Disagreement] = []
    for question, prediction, answers in items:
        for c in conventions:
            can[c.name] += c.creditable(answers)
        if prediction is None:
            continue
        marks = {c.name: c.match(prediction, answers) is not None for c in conventions}
        for name, ok in marks.items():
            correct[name] += ok
        if len(set(marks.values())) > 1:
            rows.append(Disagreement(question, prediction, tuple(answers), marks))
    return ConventionTable(labels, len(items), correct, rows, can)
