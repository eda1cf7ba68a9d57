"""Baseline systems: each turns examples into predictions in its task's format.

Every system is in one registry, :data:`nqkit.baselines.systems.SYSTEMS`. An NQ baseline
is a class registered with :func:`~nqkit.baselines.systems.nq_baseline`; it is
constructed without arguments (or with keyword options), optionally ``fit`` on training
examples, and ``predict``-s one example at a time (original or simplified examples).
:func:`get_baseline` builds one by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from nqkit.baselines.systems import SYSTEMS, load_systems, nq_baseline
from nqkit.errors import InputError
from nqkit.formats.nq import NqExample, SimplifiedNqExample
from nqkit.formats.nq_predictions import NqPrediction

AnyNqExample = NqExample | SimplifiedNqExample
_F = TypeVar("_F", bound=Callable[..., Any])


class NqBaseline(Protocol):
    """What every NQ baseline offers."""

    name: str
    needs_train: bool  # True when fit() must see training data

    def fit(self, train: Iterable[AnyNqExample]) -> None: ...

    def predict(self, example: AnyNqExample) -> NqPrediction: ...


class _NqBaselines:
    """The NQ baselines among :data:`nqkit.baselines.systems.SYSTEMS` (the one registry),
    as the name -> class mapping that earlier versions kept apart: ``BASELINES.get(name)``
    and the ``@BASELINES.register(name)`` decorator (now
    :func:`nqkit.baselines.systems.nq_baseline`) keep working for one release."""

    def register(self, name: str) -> Callable[[_F], _F]:
        return nq_baseline(name)

    def get(self, name: str) -> Callable[..., NqBaseline]:
        system = SYSTEMS.get(name) if name in SYSTEMS else None
        if system is None or system.predictor is None:
            known = ", ".join(self.names()) or "none"
            raise InputError(None, f"unknown baseline {name!r}", f"choose one of: {known}")
        factory: Callable[..., NqBaseline] = system.predictor
        return factory

    def names(self) -> list[str]:
        return [n for n in SYSTEMS if SYSTEMS.get(n).predictor is not None]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


BASELINES = _NqBaselines()


def get_baseline(name: str, **options: object) -> NqBaseline:
    """Instantiate a registered NQ baseline by name."""
    load_systems()
    baseline: NqBaseline = BASELINES.get(name)(**options)
    return baseline


def baseline_names() -> list[str]:
    """Names of every registered NQ baseline (the systems ``nqkit predict`` can run)."""
    load_systems()
    return BASELINES.names()
