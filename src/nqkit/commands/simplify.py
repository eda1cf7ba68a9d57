"""``nqkit simplify``: original NQ files to the simplified format, byte for byte official
(:func:`nqkit.formats.simplify.simplify_command`)."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, output_param
from nqkit.vocabulary import INPUTS, JOBS


def run(args: argparse.Namespace) -> int:
    from nqkit.formats.simplify import simplify_command

    simplify_command(args.inputs, args.output, jobs=args.jobs)
    return 0


ORDER = 40  # where `nqkit --help` lists it
COMMANDS = (Command(
    "simplify", "convert original NQ files to the simplified format",
    "Write the simplified NQ format (document_text of space-joined tokens, no HTML, no byte "
    "offsets), byte-identical to the official simplification. Several shards are "
    "simplified in parallel; the output keeps the input order.",
    run, params=(
        INPUTS.but(help="original-format NQ files (.jsonl or .jsonl.gz; globs allowed)"),
        output_param("output file (.jsonl, or .jsonl.gz to compress); written atomically",
                     metavar="OUT"),
        JOBS.but(help="processes, one shard each (default: one per core)"),
    )),)
