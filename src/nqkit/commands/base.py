"""A command of the ``nqkit`` CLI, declared once: name, help, settings and what it runs.

A command module declares ``COMMANDS`` (a tuple of :class:`Command`), the way a task
declares a :class:`~nqkit.tasks.base.Task`: its settings are
:class:`~nqkit.settings.Param` records, so flags, types, range errors, deprecated
spellings and help come from one place, and the CLI (:mod:`nqkit.cli`) adds the parser.
Only ``argparse`` and :mod:`nqkit.settings` are imported here, so ``nqkit --help`` stays
instant; ``run`` imports its heavy work when it is called.

A command whose subcommands come from a registry (``nqkit eval TASK``, ``nqkit baseline
NAME``) declares no ``run`` and a ``populate`` that adds them: without a subcommand it
prints its help. A command named like a group of :data:`nqkit.cli.GROUPS` takes that
group's place in ``nqkit --help``.

The settings every command spells the same way are declared once
(:func:`~nqkit.settings.format_param`, :func:`~nqkit.settings.output_param`, in
:mod:`nqkit.settings` so that tasks and systems below the commands use them too).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nqkit.settings import Param, format_param, output_param

__all__ = ["Command", "add_systems", "add_task_options", "format_param", "output_param",
           "print_help"]


@dataclass(frozen=True)
class Command:
    """One subcommand: ``nqkit NAME`` or, with a group, ``nqkit GROUP NAME``."""

    name: str
    help: str | None  # the line in the group's listing; None: hidden (an old name)
    description: str  # the paragraph of ``--help``
    # parsed settings -> exit code; None: a command of subcommands, which prints its help
    run: Callable[[argparse.Namespace], int | None] | None
    params: tuple[Param, ...] = ()
    group: str | None = None  # None: a top-level command
    # settings or subcommands that come from a registry (tasks, retrievers, systems):
    # added on first parse or help of this command only, so they cost nothing at
    # ``nqkit --help``
    populate: Callable[[argparse.ArgumentParser], None] | None = None
    epilog: str = ""  # printed after the options, as written (line breaks kept)
    # positionals may come before and after options: `NAME --train T IN OUT`
    intermixed: bool = False

    def add_to(self, subparsers: Any) -> None:
        """Add this command's parser to ``subparsers``, made on first use where they
        allow it (``add_lazy_parser`` of :mod:`nqkit.cli`'s subcommand maps)."""
        extra: dict[str, Any] = {}
        if self.populate is not None:
            extra["populate"] = self.populate
        if self.help is not None:
            extra["help"] = self.help
        if self.intermixed:
            extra["intermixed"] = True
        if self.epilog:
            extra.update(epilog=self.epilog,
                         formatter_class=argparse.RawDescriptionHelpFormatter)

        def build(p: argparse.ArgumentParser) -> None:
            for param in self.params:
                param.add_to(p)
            p.set_defaults(func=self.run or (lambda _args: print_help(p)))

        lazy = getattr(subparsers, "add_lazy_parser", None)
        if lazy is not None:
            lazy(self.name, build, description=self.description, **extra)
        else:
            build(subparsers.add_parser(self.name, description=self.description, **extra))


def add_task_options(p: argparse.ArgumentParser, task: Any) -> None:
    """A task's settings as a command's options (``nqkit eval TASK`` and its old name):
    required settings are checked after parsing, in declared order (--gold first), so an
    old spelling can stand in for them; the usage shows them."""
    for param in task.all_params():
        param.add_to(p, enforce=False)
    if task.deprecated_positional:
        p.add_argument("legacy_positional", nargs="?", help=argparse.SUPPRESS)


def add_systems(p: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int],
                tasks: tuple[str, ...] = ()) -> None:
    """One subcommand per registered baseline system (of ``tasks`` only, when given), each
    running ``run``: ``nqkit baseline NAME`` and its old name."""
    from nqkit.baselines.systems import get_system, system_names

    systems = p.add_subparsers(dest="system_name", metavar="NAME")
    for name in system_names():
        system = get_system(name)
        if tasks and system.task not in tasks:
            continue
        q = systems.add_parser(system.name, help=system.help,
                               description=system.description or system.help)
        for param in system.params:
            param.add_to(q)
        q.set_defaults(func=run, system_name=system.name)


def print_help(parser: argparse.ArgumentParser) -> int:
    """A command of subcommands given none: its help on stderr, exit code 2."""
    parser.print_help(sys.stderr)
    return 2
