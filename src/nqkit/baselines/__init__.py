"""Baseline systems: each turns NQ examples into official-format predictions.

A baseline is a class registered in :data:`BASELINES` under its name; it is constructed
without arguments (or with keyword options), optionally ``fit`` on training examples, and
``predict``-s one example at a time. Inputs may be original or simplified examples.
"""

from __future__ import annotations

from collections.abc import Iterable
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


BASELINES: Registry[type] = Registry("baseline")


def get_baseline(name: str, **options: object) -> NqBaseline:
    """Instantiate a registered baseline by name."""
    _load_all()
    cls = BASELINES.get(name)
    baseline: NqBaseline = cls(**options)
    return baseline


def _load_all() -> None:
    # Importing the modules fills the registry; heavy dependencies stay inside them.
    from nqkit.baselines import first_paragraph  # noqa: F401
