"""Records and results are frozen dataclasses (house style): a score or a parsed example
cannot be changed after the fact by the code that reads it."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import pytest

import nqkit.formats
import nqkit.metrics

MODULES = sorted(f"{pkg.__name__}.{m.name}" for pkg in (nqkit.formats, nqkit.metrics)
                 for m in pkgutil.iter_modules(pkg.__path__))


def _own_dataclasses(name: str) -> list[type]:
    mod = importlib.import_module(name)
    return [obj for obj in vars(mod).values()
            if isinstance(obj, type) and dataclasses.is_dataclass(obj)
            and obj.__module__ == name]


@pytest.mark.parametrize("name", MODULES)
def test_every_dataclass_is_frozen(name):
    for cls in _own_dataclasses(name):
        assert cls.__dataclass_params__.frozen, f"{name}.{cls.__name__} is not frozen"  # type: ignore[attr-defined]


def test_the_modules_hold_records():
    found = {cls.__name__ for name in MODULES for cls in _own_dataclasses(name)}
    assert {"NqExample", "Span", "Annotation", "NqOpenExample", "AmbigQaResult",
            "NqOpenResult", "HumanBounds", "RankTargets"} <= found
