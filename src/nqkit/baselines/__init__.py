"""Baseline systems: each turns NQ examples into official-format predictions.

A baseline is a class registered in :data:`BASELINES` under its name; it is constructed
without arguments (or with keyword options), optionally ``fit`` on training examples, and
``predict``-s one example at a time. Inputs may be original or simplified examples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from nqkit.formats.nq import NqExample, SimplifiedNqExample
from nqkit.formats.nq_predictions import NqPrediction
from nqkit.registry import Registry

AnyNqExample = NqExample | SimplifiedNqExample


class NqBaseline(Protocol):
    """What every NQ baseline offers."""

    name: str
    needs_train: bool  # True when fit() must see training data

    def fit(self, train: Iterable[AnyNqExample]) -> None: ...

    def predict(self, example: AnyNqExample) -> NqPrediction: ...


# name -> a class or factory called with keyword options that returns an NqBaseline
BASELINES: Registry[Callable[..., NqBaseline]] = Registry("baseline")


def get_baseline(name: str, **options: object) -> NqBaseline:
    """Instantiate a registered baseline by name."""
    _load_all()
    factory = BASELINES.get(name)
    baseline: NqBaseline = factory(**options)
    return baseline


def baseline_names() -> list[str]:
    """Names of every registered baseline."""
    _load_all()
    return BASELINES.names()


def _load_all() -> None:
    # Importing the modules fills the registry; heavy dependencies stay inside them.
    from nqkit.baselines import (  # noqa: F401
        candidate_ranking,
        closest_question,
        first_paragraph,
        most_frequent,
    )
