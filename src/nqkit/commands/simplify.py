"""``nqkit simplify``: original NQ files to the simplified format, byte for byte official."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from nqkit.commands.base import Command, output_param
from nqkit.settings import Param, positive_int


def run(args: argparse.Namespace) -> int:
    from nqkit.errors import InputError
    from nqkit.formats.simplify import SimplifyResult, iter_simplify, tune_malloc
    from nqkit.io import check_output, expand_paths
    from nqkit.report import progress

    tune_malloc()

    if args.jobs is not None and args.jobs < 1:
        raise InputError("--jobs", f"must be at least 1, found {args.jobs}", "give -j 1 or more")
    check_output(args.output, expand_paths(args.inputs, what="NQ"), option="-o")
    gen = iter_simplify(args.inputs, args.output, jobs=args.jobs)
    result: SimplifyResult | None = None

    def drive() -> Iterator[int]:
        nonlocal result
        result = yield from gen

    try:
        for _ in progress(drive(), desc="simplify", unit="ex"):
            pass
    finally:
        gen.close()  # on an error or a signal: stop the workers, remove temp files now
    assert result is not None  # set when the generator finishes
    n_files = len(result.inputs)
    print(f"simplified {result.examples:,} examples from {n_files:,} "
          f"file{'s' if n_files != 1 else ''} into {result.output}", file=sys.stdout)
    return 0


ORDER = 40  # where `nqkit --help` lists it
COMMANDS = (Command(
    "simplify", "convert original NQ files to the simplified format",
    "Write the simplified NQ format (document_text of space-joined tokens, no HTML, no byte "
    "offsets), byte-identical to the official simplification. Several shards are "
    "simplified in parallel; the output keeps the input order.",
    run, params=(
        Param("inputs", "inputs", "original-format NQ files (.jsonl or .jsonl.gz; globs "
              "allowed)", nargs="+", metavar="IN"),
        output_param("output file (.jsonl, or .jsonl.gz to compress); written atomically",
                     metavar="OUT"),
        Param("jobs", "--jobs", "processes, one shard each (default: one per core)",
              type=positive_int, metavar="N", short="-j"),
    )),)
