"""``nqkit eval TASK``: one command per registered task, built from its declarations.

Every task in :data:`nqkit.tasks.base.TASKS` gets ``nqkit eval TASK`` with the same
vocabulary: ``--gold``, ``--predictions``, ``--allow-missing``/``--allow-extra``,
``--format table|json|jsonl``, ``--per-item FILE``, ``--resamples N``/``--seed``, and the
task's own settings. Old spellings (``--references``, ``--bootstrap``, ``--per-question``,
``--no-cache``, ...) still work for one release, with a one-line notice. The command runs
:func:`nqkit.tasks.base.run_command`.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, add_task_options


def add_tasks(parser: argparse.ArgumentParser) -> None:
    """``nqkit eval TASK`` for every registered task, from its declarations."""
    from nqkit.tasks.base import get_task, task_names

    subparsers = parser.add_subparsers(dest="eval_command", metavar="TASK")
    for name in task_names():
        task = get_task(name)
        p = subparsers.add_parser(name, help=task.help, description=task.description,
                                  epilog=task.epilog or None,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        add_task_options(p, task)
        p.set_defaults(func=run, task_name=name)


def run(args: argparse.Namespace) -> int:
    from nqkit.tasks.base import run_command

    run_command(args.task_name, vars(args))
    return 0


ORDER = 20  # where `nqkit --help` lists it (in the place of the group `eval`)
COMMANDS = (Command(
    "eval", "score predictions with the official metrics of a task",
    "score predictions with the official metrics of a task", None, populate=add_tasks),)
