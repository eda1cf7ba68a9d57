"""``nqkit baseline NAME``: run a baseline system, write its predictions, print its scores.

One subcommand per system of :data:`nqkit.baselines.systems.SYSTEMS`: the NQ paper's
baselines and candidate rankers (official NQ predictions) and the NQ-open / AmbigQA
baselines. ``nqkit baseline-open SUB`` is the old name of the open-domain ones.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command

EPILOG = """\
NQ baselines (NQ paper §6.1 and candidate ranking) write official NQ predictions; scores
go into long_answer_score, so `nqkit eval nq` picks the best NULL threshold. The NQ-open
and AmbigQA baselines write the predictions of those tasks and print their scores.
`nqkit baseline NAME --help` lists the settings of each."""


def add_systems(p: argparse.ArgumentParser, tasks: tuple[str, ...] = ()) -> None:
    """One subcommand per registered system (of ``tasks`` only, when given)."""
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


def run(args: argparse.Namespace) -> int:
    from nqkit.baselines.systems import get_system
    from nqkit.io import check_output, expand_paths
    from nqkit.report import emit_result

    system = get_system(args.system_name)
    # an old spelling may stand in for a required option: checked here, not by argparse
    settings = system.settings(**{p.name: getattr(args, p.name) for p in system.params})
    given = settings if isinstance(settings, dict) else vars(settings)  # dict: earlier form
    inputs = [v for name in system.inputs
              for v in ([given[name]] if isinstance(given[name], str) else given[name] or [])]
    # several options' files at once: one file may serve two of them (memory and questions)
    check_output(given["output"], expand_paths(inputs, what="input", unique=False),
                 option="-o")
    result = system.run(settings)
    if result is not None:
        emit_result(result, format=given.get("format") or "table")
    return 0


ORDER = 60  # where `nqkit --help` lists it
COMMANDS = (Command(
    "baseline", "run a baseline system: write predictions and print scores",
    "Run a baseline system and write its predictions in its task's format.", None,
    populate=add_systems, epilog=EPILOG),)
