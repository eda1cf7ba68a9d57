"""Old command names, kept for one release: each runs the new command after a notice.

``nqkit human-bounds ...`` is now ``nqkit eval human-bounds ...``; ``nqkit baseline-open
SUB ...`` is ``nqkit baseline SUB ...``. Hidden from ``nqkit --help``.
"""

from __future__ import annotations

import argparse

GROUP = None
ORDER = 80  # where `nqkit --help` lists it

MOVED = {"human-bounds": "eval human-bounds"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from nqkit.commands.eval import run as run_eval
    from nqkit.tasks.base import get_task

    for old, new in MOVED.items():
        task = get_task(new.split()[-1])
        p = subparsers.add_parser(old, description=f"deprecated: use `nqkit {new}`")
        for param in task.all_params():
            param.add_to(p)

        def run(args: argparse.Namespace, _old: str = old, _new: str = new) -> int:
            from nqkit.report import note

            note(f"`nqkit {_old}` is deprecated and will be removed in the next release; "
                 f"use `nqkit {_new}`")
            return run_eval(args)

        p.set_defaults(func=run, task_name=task.name)

    p = subparsers.add_parser("baseline-open", description="deprecated: use `nqkit baseline`",
                              populate=_add_open_systems)


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
