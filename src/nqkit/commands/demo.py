"""``nqkit demo``: the whole loop on the project's own toy data, in a second
(:func:`nqkit.demo.run_demo`)."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, output_param


def run(args: argparse.Namespace) -> int:
    from nqkit.demo import run_demo

    run_demo(args.output)
    return 0


ORDER = 10  # where `nqkit --help` lists it
COMMANDS = (Command(
    "demo", "run two baselines on the built-in toy NQ data and score them",
    "Run two baselines of the NQ paper on nqkit's toy NQ examples, score them with the "
    "official NQ metrics, and set them beside a single human annotator.",
    run, params=(
        output_param("also write the toy gold and the predictions here, to try the CLI on",
                     metavar="DIR", required=False, deprecated=("--out",)),
    )),)
