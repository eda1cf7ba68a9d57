"""A plain name -> object registry per kind (baselines, encoders, retrievers, ...), and
the discovery that fills one: every module of a package registers what it declares when
it is imported, so adding a member is adding a module (no list to edit)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Container, Iterator
from types import ModuleType
from typing import Generic, TypeVar

from nqkit.errors import InputError

T = TypeVar("T")


class Registry(Generic[T]):
    """A dict filled at import time that refuses duplicate names."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def deco(item: T) -> T:
            return self.add(name, item)

        return deco

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise InputError(None, f"unknown {self.kind} {name!r}",
                             f"choose one of: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))


def discover(package: str, *, skip: Container[str] = ()) -> list[ModuleType]:
    """Import every module of ``package`` (its members register themselves) and return
    them in name order.

    Modules whose name starts with ``_`` and those named in ``skip`` are left alone (not
    imported): helpers that declare nothing. A module that fails to import is a bug and
    raises; it is never silently skipped. The package's directory is listed with
    :mod:`pkgutil`, which costs microseconds, and each module is imported once.
    """
    pkg = importlib.import_module(package)
    names = sorted(info.name for info in pkgutil.iter_modules(pkg.__path__)
                   if not info.name.startswith("_") and info.name not in skip)
    return [importlib.import_module(f"{package}.{name}") for name in names]
