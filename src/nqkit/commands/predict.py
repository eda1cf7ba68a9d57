"""``nqkit predict``: the competition's contract — examples in, one predictions file out."""

from __future__ import annotations

import argparse
import sys
from typing import Any

GROUP = None
ORDER = 70  # where `nqkit --help` lists it


def register(sub: Any) -> None:
    p = sub.add_parser(
        "predict", help="predict NQ examples without annotations (competition style)",
        description="Read NQ examples (the competition's input: a pattern of .jsonl.gz "
        "shards in the original format, no annotations needed) and write one predictions "
        "file that `nqkit eval nq` accepts.")
    from nqkit.settings import add_deprecated

    p.add_argument("name", metavar="NAME",
                   help="the system to run: an NQ baseline (see `nqkit baseline --help`)")
    p.add_argument("input", metavar="INPUT_PATTERN",
                   help="input shards, e.g. 'nq-test-*.jsonl.gz' (quote the pattern)")
    p.add_argument("output", nargs="?", metavar="OUTPUT.json",
                   help="the predictions file to write")
    add_deprecated(p, "--system", "a positional NAME", "system")
    p.add_argument("--train", action="append", metavar="GLOB",
                   help="training files, for systems that need them (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nqkit.baselines.run import run_system
    from nqkit.errors import InputError
    from nqkit.io import check_output, expand_paths

    if getattr(args, "system", None) is not None:  # old form: --system NAME INPUT OUTPUT
        args.name, args.input, args.output = args.system, args.name, args.input
    if args.output is None:
        raise InputError(None, "expected NAME INPUT_PATTERN OUTPUT.json",
                         "nqkit predict first_paragraph 'nq-test-*.jsonl.gz' preds.json")
    args.system = args.name
    inputs = expand_paths(args.input, what="input")
    train = expand_paths(args.train, what="training") if args.train else []
    check_output(args.output, [*inputs, *train], option="OUTPUT")
    _, summary = run_system(args.system, args.train, args.input, args.output)
    print(f"{summary.system}: {summary.num_examples:,} predictions written to {args.output}",
          file=sys.stderr)
    return 0
