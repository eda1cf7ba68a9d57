"""A command of the ``nqkit`` CLI, declared once: name, help, settings and what it runs.

A command module declares ``COMMANDS`` (a tuple of :class:`Command`), the way a task
declares a :class:`~nqkit.tasks.base.Task`: its settings are
:class:`~nqkit.settings.Param` records, so flags, types, range errors, deprecated
spellings and help come from one place, and the CLI (:mod:`nqkit.cli`) adds the parser.
Only ``argparse`` and :mod:`nqkit.settings` are imported here, so ``nqkit --help`` stays
instant; ``run`` imports its heavy work when it is called.

The settings every command spells the same way are declared once below
(:func:`format_param`, :func:`output_param`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nqkit.settings import Param

__all__ = ["Command", "format_param", "output_param"]


@dataclass(frozen=True)
class Command:
    """One subcommand: ``nqkit NAME`` or, with a group, ``nqkit GROUP NAME``."""

    name: str
    help: str  # the line in the group's listing
    description: str  # the paragraph of ``--help``
    run: Callable[[argparse.Namespace], int | None]  # parsed settings -> exit code
    params: tuple[Param, ...] = ()
    group: str | None = None  # None: a top-level command
    # settings that come from a registry (retrievers, systems): added on first parse or
    # help of this command only, so they cost nothing at ``nqkit --help``
    populate: Callable[[argparse.ArgumentParser], None] | None = None

    def add_to(self, subparsers: Any) -> argparse.ArgumentParser:
        """Add this command's parser to ``subparsers``; returns it."""
        extra = {"populate": self.populate} if self.populate is not None else {}
        p: argparse.ArgumentParser = subparsers.add_parser(
            self.name, help=self.help, description=self.description, **extra)
        for param in self.params:
            param.add_to(p)
        p.set_defaults(func=self.run)
        return p


def format_param(*choices: str, default: str | None = "table", help: str | None = None
                 ) -> Param:
    """``--format``, with the same spelling and help wherever a command prints results:
    ``table`` (aligned text), ``json`` (one document), ``jsonl`` (one line per record)."""
    text = help or f"{' or '.join(choices)} (default {default})"
    return Param("format", "--format", text, default=default, choices=tuple(choices))


def output_param(help: str, *, metavar: str | None = "FILE", required: bool = True,
                 dest: str = "output", deprecated: Sequence[str] = ()) -> Param:
    """``-o/--output``: the file (or directory) a command writes."""
    return Param(dest, "--output", help, required=required, metavar=metavar, short="-o",
                 output=True, deprecated=tuple(deprecated))
