"""``nqkit baseline NAME``: run a baseline system, write its predictions, print its scores.

One subcommand per system of :data:`nqkit.baselines.systems.SYSTEMS`: the NQ paper's
baselines and candidate rankers (official NQ predictions) and the NQ-open / AmbigQA
baselines. ``nqkit baseline-open SUB`` is the old name of the open-domain ones.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, add_systems

EPILOG = """\
NQ baselines (NQ paper §6.1 and candidate ranking) write official NQ predictions; scores
go into long_answer_score, so `nqkit eval nq` picks the best NULL threshold. The NQ-open
and AmbigQA baselines write the predictions of those tasks and print their scores.
`nqkit baseline NAME --help` lists the settings of each."""


def _add_systems(p: argparse.ArgumentParser) -> None:
    add_systems(p, run)


def run(args: argparse.Namespace) -> int:
    from nqkit.baselines.systems import run_command

    run_command(args.system_name, vars(args))
    return 0


ORDER = 60  # where `nqkit --help` lists it
COMMANDS = (Command(
    "baseline", "run a baseline system: write predictions and print scores",
    "Run a baseline system and write its predictions in its task's format.", None,
    populate=_add_systems, epilog=EPILOG),)
