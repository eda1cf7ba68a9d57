"""``nqkit eval TASK``: one command per registered task, built from its declarations.

Every task in :data:`nqkit.tasks.base.TASKS` gets ``nqkit eval TASK`` with the same
vocabulary: ``--gold``, ``--predictions``, ``--allow-missing``/``--allow-extra``,
``--format table|json|jsonl``, ``--per-item FILE``, ``--bootstrap N``/``--seed``, and the
task's own settings. Old spellings (``--references``, ``--per-question``, ``--no-cache``,
...) still work for one release, with a one-line notice.
"""

from __future__ import annotations

import argparse
from typing import Any

from nqkit.commands.base import Command


def add_tasks(parser: argparse.ArgumentParser) -> None:
    """``nqkit eval TASK`` for every registered task, from its declarations."""
    from nqkit.tasks.base import get_task, task_names

    subparsers = parser.add_subparsers(dest="eval_command", metavar="TASK")
    for name in task_names():
        task = get_task(name)
        p = subparsers.add_parser(name, help=task.help, description=task.description,
                                  epilog=task.epilog or None,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        for param in task.all_params():
            # required settings are checked after parsing, in declared order (--gold
            # first), so an old spelling can stand in for them; the usage shows them
            param.add_to(p, enforce=False)
        if task.deprecated_positional:
            p.add_argument("legacy_positional", nargs="?", help=argparse.SUPPRESS)
        p.set_defaults(func=run, task_name=name)


def task_settings(task: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The task's settings from parsed arguments (old spellings resolved)."""
    from nqkit.report import note

    settings = {p.name: getattr(args, p.name) for p in task.all_params()
                if hasattr(args, p.name)}
    legacy = getattr(args, "legacy_positional", None)
    if legacy is not None and task.deprecated_positional:
        new = next(p.flag for p in task.all_params() if p.name == task.deprecated_positional)
        note(f"a positional {task.deprecated_positional} is deprecated and will be removed "
             f"in the next release; use {new} {legacy}")
        settings[task.deprecated_positional] = legacy
    return settings


def check_outputs(task: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """Refuse output files that are inputs, before any work; returns the settings to score
    with.

    The gold files expanded for this check are passed on as
    :class:`~nqkit.io.ExpandedPaths` (which keep the paths as given for messages), so the
    task reads exactly these files without expanding its globs or registry names again. A
    directory given as gold (a ReQA task) stands for the files in it and is passed on as
    given; so is the predictions file (one file, named as given in messages).
    """
    import os
    from pathlib import Path

    from nqkit.io import ExpandedPaths, check_output, expand_paths

    outputs = [p for p in task.all_params() if p.output and settings.get(p.name)]
    if not outputs:
        return settings
    settings = dict(settings)
    files: list[Path] = []
    for name in ("gold", "predictions"):
        given = settings.get(name)
        if not given:
            continue
        items = [given] if isinstance(given, str | os.PathLike) else list(given)
        dirs = [Path(g) for g in items if name == "gold" and os.path.isdir(g)]
        files += [f for d in dirs for f in d.iterdir() if f.is_file()]
        rest = [g for g in items if Path(g) not in dirs]
        if rest:
            expanded = expand_paths(rest, what=name)
            files += expanded
            if name == "gold" and not dirs:
                settings[name] = ExpandedPaths(expanded, items)
    for p in outputs:
        check_output(settings[p.name], files, option=p.flag)
    return settings


def run(args: argparse.Namespace) -> int:
    from nqkit.report import emit_result
    from nqkit.tasks.base import get_task

    task = get_task(args.task_name)
    settings = task_settings(task, args)
    result = task.run(**check_outputs(task, settings))
    emit_result(result, format=settings.get("format", "table"),
                per_item=settings.get("per_item"))
    return 0


ORDER = 20  # where `nqkit --help` lists it (in the place of the group `eval`)
COMMANDS = (Command(
    "eval", "score predictions with the official metrics of a task",
    "score predictions with the official metrics of a task", None, populate=add_tasks),)
