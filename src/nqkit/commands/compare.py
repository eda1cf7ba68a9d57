"""``nqkit compare TASK --gold G A B [C ...]``: is system B better than system A, and by
how much? One command per registered task with headline metrics, with the task's own
settings (as in ``nqkit eval TASK``) and those of a comparison; the engine is
:mod:`nqkit.comparison`."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command


def add_tasks(parser: argparse.ArgumentParser) -> None:
    """``nqkit compare TASK`` for every registered task with headline metrics."""
    from nqkit.comparison import COMPARISON, OWN, SYSTEMS
    from nqkit.tasks.base import get_task, task_names

    subparsers = parser.add_subparsers(dest="compare_command", metavar="TASK")
    for name in task_names():
        task = get_task(name)
        if not task.headline or "predictions" not in task.common:
            continue
        p = subparsers.add_parser(
            name, help=f"paired significance tests for {name}",
            description=f"Compare two systems on {name}: {task.help}. For each headline "
            "metric, the difference B - A with its 95% paired-bootstrap interval and the "
            "p-values of the paired bootstrap and approximate randomization tests. With "
            "three or more systems: every pair (or each against --baseline), the p-values "
            "adjusted for multiple testing (--correction).")
        for param in task.all_params():
            if param.name in OWN or param.report or param.output:
                continue
            if param.name == "gold":  # one value per --gold, so that A and B stay positional
                param = param.but(action="append", nargs=None, deprecated=(),
                                  help=param.help + " (repeat for several)")
            param.add_to(p)
        for param in (*SYSTEMS, *COMPARISON):
            param.add_to(p)
        p.set_defaults(func=run, task_name=name)


def run(args: argparse.Namespace) -> int:
    from nqkit.comparison import OWN, compare_systems, emit_comparison
    from nqkit.tasks.base import get_task

    task = get_task(args.task_name)
    settings = {p.name: getattr(args, p.name) for p in task.all_params()
                if p.name not in OWN and hasattr(args, p.name)}
    emit_comparison(compare_systems(
        args.task_name, settings, [args.system_a, args.system_b, *(args.more or ())],
        names=args.names, baseline=args.baseline, correction=args.correction,
        test=args.test, resamples=args.resamples, trials=args.trials), format=args.format)
    return 0


ORDER = 30  # where `nqkit --help` lists it (in the place of the group `compare`)
COMMANDS = (Command(
    "compare", "paired significance tests of two systems on a task",
    "paired significance tests of two systems on a task", None, populate=add_tasks),)
