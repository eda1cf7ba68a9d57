"""Declared settings: a flag, a type, a default, a help text and a signature key.

A metric or task declares its settings once as :class:`Param` records; the command line
(argparse options, deprecated spellings with a notice) and the signature
(:func:`settings_signature`) are both built from those declarations, as sacrebleu builds
its signatures from a metric's declared settings.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nqkit.signature import make_signature

__all__ = ["Param", "settings_signature"]


@dataclass(frozen=True, slots=True)
class Param:
    """One declared setting: its command-line flag, type, default and signature key."""

    name: str  # keyword of score() and attribute of the parsed arguments
    flag: str  # e.g. "--long-threshold"
    help: str
    default: Any = None
    type: Callable[[str], Any] | None = None
    choices: tuple[Any, ...] | None = None
    action: str | None = None  # "store_true", or "boolean" for --FLAG / --no-FLAG
    nargs: str | int | None = None
    metavar: str | None = None
    required: bool = False
    short: str | None = None  # e.g. "-o"
    sig: str | None = None  # key in the signature; None keeps it out
    sig_value: Callable[[Any], object] | None = None  # how the value is written there
    old: tuple[str, ...] = ()  # deprecated spellings, accepted with a notice

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        if not self.flag.startswith("-"):  # a positional argument
            parser.add_argument(self.name, nargs=self.nargs, help=self.help,
                                metavar=self.metavar)
            return
        kwargs: dict[str, Any] = {"dest": self.name, "help": self.help}
        if self.action == "boolean":
            kwargs.update(action=argparse.BooleanOptionalAction, default=self.default)
        elif self.action:
            kwargs["action"] = self.action
        else:
            kwargs.update(default=self.default, type=self.type, choices=self.choices,
                          nargs=self.nargs, metavar=self.metavar)
            kwargs = {k: v for k, v in kwargs.items() if v is not None or k == "default"}
        if self.required and not self.old:  # with old spellings, checked after parsing
            kwargs["required"] = True
        flags = [self.short, self.flag] if self.short else [self.flag]
        parser.add_argument(*flags, **kwargs)
        for old in self.old:
            hidden = {**kwargs, "help": argparse.SUPPRESS, "required": False}
            hidden.pop("default", None)
            new = self.flag
            if self.action == "boolean":  # an old --no-X switch turns the setting off
                hidden["action"] = "store_false" if old.startswith("--no-") else "store_true"
                if old.startswith("--no-"):
                    new = "--no-" + self.flag[2:]
            hidden.update(_deprecated(old, new, hidden))
            parser.add_argument(old, **hidden)

    def signature_value(self, value: Any) -> object:
        return self.sig_value(value) if self.sig_value else value


def _deprecated(old: str, new: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """An argparse action for an old spelling: a one-line notice, then the new behaviour."""
    base: type[argparse.Action]
    if kwargs.get("action") == "store_true":
        base = argparse._StoreTrueAction
    elif kwargs.get("action") == "store_false":
        base = argparse._StoreFalseAction
    else:
        base = argparse._StoreAction

    class Deprecated(base):  # type: ignore[valid-type, misc]
        def __call__(self, parser: Any, namespace: Any, values: Any,
                     option_string: str | None = None) -> None:
            print(f"nqkit: warning: {old} is deprecated and will be removed; use {new}",
                  file=sys.stderr)
            super().__call__(parser, namespace, values, option_string)

    return {"action": Deprecated}


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value



def settings_signature(task: str, params: Iterable[Param], settings: Mapping[str, Any],
                       extra: Mapping[str, object] | None = None) -> str:
    """The signature of a result: each declared setting with a key, in declaration order."""
    items: dict[str, object] = {}
    for p in params:
        if p.sig is not None:
            items[p.sig] = p.signature_value(settings.get(p.name, p.default))
    items.update(extra or {})
    return make_signature(task, items)


