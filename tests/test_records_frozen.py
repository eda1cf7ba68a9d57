"""Records and results are frozen dataclasses (house style): a score or a parsed example
cannot be changed after the fact by the code that reads it. Records that exist once per
example, token or span also have ``__slots__`` (no per-instance ``__dict__``): a dev split
holds millions of tokens and spans."""

from __future__ import annotations

import dataclasses
import functools
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


def _needs_dict(cls: type) -> bool:
    # functools.cached_property stores its value in the instance __dict__
    return any(isinstance(v, functools.cached_property) for v in vars(cls).values())


# per-item records of metrics/ (one per example or question); results are one per run
PER_ITEM_METRICS = {"nqkit.metrics.nq": ["AnswerStat"], "nqkit.metrics.nq_open": ["NqOpenItem"],
                    "nqkit.metrics.em_conventions": ["Disagreement"]}


@pytest.mark.parametrize("name", [m for m in MODULES if m.startswith("nqkit.formats.")])
def test_format_records_have_slots(name):
    for cls in _own_dataclasses(name):
        if _needs_dict(cls):
            assert "__slots__" not in vars(cls)
            continue
        assert "__slots__" in vars(cls), f"{name}.{cls.__name__} has no __slots__"
        fields = [f.name for f in dataclasses.fields(cls)]
        assert not hasattr(cls.__new__(cls), "__dict__"), f"{name}.{cls.__name__}"
        assert tuple(cls.__slots__) == tuple(fields)


def test_per_item_metric_records_have_slots():
    for name, classes in PER_ITEM_METRICS.items():
        mod = importlib.import_module(name)
        for cls_name in classes:
            assert "__slots__" in vars(getattr(mod, cls_name)), f"{name}.{cls_name}"


def test_the_records_with_cached_properties_are_the_examples():
    # the only records without slots: their cached properties (page bytes, tokens, parents)
    found = {cls.__name__ for name in MODULES for cls in _own_dataclasses(name)
             if name.startswith("nqkit.formats.") and _needs_dict(cls)}
    assert found == {"NqExample", "SimplifiedNqExample"}
