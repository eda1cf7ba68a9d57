"""``nqkit baseline NAME``: run a baseline system, write its predictions, print its scores.

One subcommand per system of :data:`nqkit.baselines.systems.SYSTEMS`: the NQ paper's
baselines and candidate rankers (official NQ predictions) and the NQ-open / AmbigQA
baselines. ``nqkit baseline-open SUB`` is the old name of the open-domain ones.
"""

from __future__ import annotations

import argparse
from typing import Any

GROUP = None
ORDER = 60  # where `nqkit --help` lists it

EPILOG = """\
NQ baselines (NQ paper §6.1 and candidate ranking) write official NQ predictions; scores
go into long_answer_score, so `nqkit eval nq` picks the best NULL threshold. The NQ-open
and AmbigQA baselines write the predictions of those tasks and print their scores.
`nqkit baseline NAME --help` lists the settings of each."""


def register(sub: Any) -> None:
    # the systems (and the modules behind them) load only when `baseline` is used
    p = sub.add_parser(
        "baseline", help="run a baseline system: write predictions and print scores",
        description="Run a baseline system and write its predictions in its task's format.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        populate=add_systems)
    p.set_defaults(func=lambda _a, _p=p: _help(_p))


def add_systems(p: Any, tasks: tuple[str, ...] = ()) -> None:
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


def _help(parser: argparse.ArgumentParser) -> int:
    import sys

    parser.print_help(sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from nqkit.baselines.systems import get_system
    from nqkit.io import check_output, expand_paths
    from nqkit.report import emit_result

    system = get_system(args.system_name)
    settings = {p.name: getattr(args, p.name) for p in system.params}
    for p in system.params:  # an old spelling may stand in for a required option
        if p.required and settings[p.name] is None:
            from nqkit.errors import InputError

            raise InputError(None, f"{p.flag} is required",
                             f"see `nqkit baseline {system.name} --help`")
    inputs = [v for name in system.inputs
              for v in ([settings[name]] if isinstance(settings[name], str)
                        else settings[name] or [])]
    check_output(settings["output"], expand_paths(inputs, what="input"), option="-o")
    result = system.run(settings)
    if result is not None:
        emit_result(result, format=settings.get("format", "table"))
    return 0
