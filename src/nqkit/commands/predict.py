"""``nqkit predict NAME --input GLOB -o OUT``: the competition's contract — examples in, one
predictions file out.

The input and output are options, spelled as in ``nqkit baseline NAME``. The earlier forms,
``nqkit predict NAME INPUT OUTPUT`` and ``nqkit predict --system NAME INPUT OUTPUT``, keep
working for one release, each with one notice.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, output_param
from nqkit.settings import Param

USE = "NAME --input INPUT_PATTERN -o OUTPUT.json"


def run(args: argparse.Namespace) -> int:
    from nqkit.baselines.predict_files import run_system
    from nqkit.errors import InputError
    from nqkit.io import check_output, expand_paths
    from nqkit.report import note, say

    name, positionals = args.name, list(args.legacy or [])
    if args.system is not None:  # the oldest form: --system NAME INPUT OUTPUT
        name, positionals = args.system, [p for p in (args.name, *positionals) if p]
    if positionals and (args.input is not None or args.output is not None):
        raise InputError(None, "give the input and output either as --input/-o or as "
                         "positional arguments, not both", f"nqkit predict {USE}")
    if len(positionals) > 2:
        raise InputError(None, f"unexpected argument(s) {' '.join(positionals[2:])}",
                         f"nqkit predict {USE}")
    inputs, output = (args.input, args.output) if not positionals else (
        positionals[0], positionals[1] if len(positionals) == 2 else None)
    if name is None or inputs is None or output is None:
        raise InputError(None, f"expected {USE}",
                         "nqkit predict first_paragraph --input 'nq-test-*.jsonl.gz' "
                         "-o preds.json")
    # the old forms: one notice, once the command line is known to be complete
    if args.system is not None:
        note(f"--system is deprecated and will be removed in the next release; use {USE}")
    elif positionals:
        note("positional INPUT_PATTERN OUTPUT.json are deprecated and will be removed in "
             f"the next release; use {USE}")
    files = expand_paths(inputs, what="input")
    train = expand_paths(args.train, what="training") if args.train else []
    check_output(output, [*files, *train], option="-o" if not positionals else "OUTPUT")
    _, summary = run_system(name, args.train, inputs, output)
    say(f"{summary.system}: {summary.num_examples:,} predictions written to {output}")
    return 0


ORDER = 70  # where `nqkit --help` lists it
COMMANDS = (Command(
    "predict", "predict NQ examples without annotations (competition style)",
    "Read NQ examples (the competition's input: a pattern of .jsonl.gz shards in the "
    "original format, no annotations needed) and write one predictions file that "
    "`nqkit eval nq` accepts.",
    run, params=(
        Param("name", "name", "the system to run: an NQ baseline (see `nqkit baseline "
              "--help`)", metavar="NAME"),
        # the earlier positional INPUT_PATTERN OUTPUT.json, hidden
        Param("legacy", "legacy", argparse.SUPPRESS, nargs="*"),
        Param("input", "--input", "input shards, e.g. 'nq-test-*.jsonl.gz' (quote the "
              "pattern)", nargs="+", metavar="GLOB"),
        output_param("the predictions file to write", metavar="OUTPUT.json", required=False),
        Param("system", "--system", argparse.SUPPRESS),  # the oldest form, hidden
        Param("train", "--train", "training files, for systems that need them "
              "(repeatable)", action="append", metavar="GLOB"),
    ), intermixed=True),)
