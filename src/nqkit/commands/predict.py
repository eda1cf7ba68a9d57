"""``nqkit predict NAME --gold GLOB -o OUT``: the competition's contract — examples in, one
predictions file out (:func:`nqkit.baselines.predict_files.predict`).

The input and output are options, spelled as in ``nqkit baseline NAME``. The earlier forms,
``nqkit predict NAME INPUT OUTPUT``, ``nqkit predict --system NAME INPUT OUTPUT`` and
``--input``, keep working for one release, each with one notice.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, output_param
from nqkit.settings import Param
from nqkit.vocabulary import GOLD, TRAIN


def run(args: argparse.Namespace) -> int:
    from nqkit.baselines.predict_files import predict

    predict(args.name, args.gold, args.output, train=args.train, legacy=args.legacy or (),
            system=args.system)
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
        GOLD.but(help="the examples to predict: input shards, e.g. 'nq-test-*.jsonl.gz' "
                 "(quote the pattern); no annotations needed", required=False,
                 metavar="GLOB", deprecated=("--input",)),
        output_param("the predictions file to write", metavar="OUTPUT.json", required=False),
        Param("system", "--system", argparse.SUPPRESS),  # the oldest form, hidden
        # one value a use: the earlier positional INPUT OUTPUT may follow it
        TRAIN.but(help="training files, for systems that need them (repeatable)",
                  metavar="GLOB", nargs=None, action="append"),
    ), intermixed=True),)
