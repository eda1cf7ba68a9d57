"""Old command names, kept for one release: each runs the new command after a notice.

``nqkit human-bounds ...`` is now ``nqkit eval human-bounds ...``; ``nqkit baseline-open
SUB ...`` is ``nqkit baseline SUB ...``. Hidden from ``nqkit --help``.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command


def _add_human_bounds(p: argparse.ArgumentParser) -> None:
    from nqkit.tasks.base import get_task

    task = get_task("human-bounds")
    for param in task.all_params():
        param.add_to(p)
    p.set_defaults(task_name=task.name)


def run_human_bounds(args: argparse.Namespace) -> int:
    from nqkit.commands.eval import run as run_eval
    from nqkit.report import note

    note("`nqkit human-bounds` is deprecated and will be removed in the next release; "
         "use `nqkit eval human-bounds`")
    return run_eval(args)


def _add_open_systems(p: argparse.ArgumentParser) -> None:
    from nqkit.commands.baseline import add_systems
    from nqkit.commands.baseline import run as run_baseline

    def run_open(args: argparse.Namespace) -> int:
        from nqkit.report import note

        note(f"`nqkit baseline-open {args.system_name}` is deprecated and will be removed "
             f"in the next release; use `nqkit baseline {args.system_name}`")
        return run_baseline(args)

    add_systems(p, tasks=("nq-open", "ambigqa"))
    for action in p._subparsers._group_actions if p._subparsers else []:
        for q in getattr(action, "choices", {}).values():
            q.set_defaults(func=run_open)


ORDER = 80  # where `nqkit --help` lists it
COMMANDS = (
    Command("human-bounds", None, "deprecated: use `nqkit eval human-bounds`",
            run_human_bounds, populate=_add_human_bounds),
    Command("baseline-open", None, "deprecated: use `nqkit baseline`", None,
            populate=_add_open_systems),
)
