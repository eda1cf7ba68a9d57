"""Old command names, kept for one release: each runs the new command after a notice.

``nqkit human-bounds ...`` is now ``nqkit eval human-bounds ...``; ``nqkit baseline-open
SUB ...`` is ``nqkit baseline SUB ...``. Hidden from ``nqkit --help``.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, add_systems, add_task_options


def _add_human_bounds(p: argparse.ArgumentParser) -> None:
    from nqkit.tasks.base import get_task

    task = get_task("human-bounds")
    add_task_options(p, task)
    p.set_defaults(task_name=task.name)


def run_human_bounds(args: argparse.Namespace) -> int:
    from nqkit.report import note
    from nqkit.tasks.base import run_command

    note("`nqkit human-bounds` is deprecated and will be removed in the next release; "
         "use `nqkit eval human-bounds`")
    run_command(args.task_name, vars(args))
    return 0


def _add_open_systems(p: argparse.ArgumentParser) -> None:
    add_systems(p, run_open, tasks=("nq-open", "ambigqa"))


def run_open(args: argparse.Namespace) -> int:
    from nqkit.baselines.systems import run_command
    from nqkit.report import note

    note(f"`nqkit baseline-open {args.system_name}` is deprecated and will be removed "
         f"in the next release; use `nqkit baseline {args.system_name}`")
    run_command(args.system_name, vars(args))
    return 0


ORDER = 80  # where `nqkit --help` lists it
COMMANDS = (
    Command("human-bounds", None, "deprecated: use `nqkit eval human-bounds`",
            run_human_bounds, populate=_add_human_bounds),
    Command("baseline-open", None, "deprecated: use `nqkit baseline`", None,
            populate=_add_open_systems),
)
