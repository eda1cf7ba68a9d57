"""``nqkit simplify``: original NQ files to the simplified format, byte for byte official."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from nqkit.settings import positive_int

GROUP = None


def register(sub: Any) -> None:
    p = sub.add_parser(
        "simplify", help="convert original NQ files to the simplified format",
        description="Write the simplified NQ format (document_text of space-joined tokens, "
        "no HTML, no byte offsets), byte-identical to the official simplification. "
        "Several shards are simplified in parallel; the output keeps the input order.")
    p.add_argument("inputs", nargs="+", metavar="IN",
                   help="original-format NQ files (.jsonl or .jsonl.gz; globs allowed)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file (.jsonl, or .jsonl.gz to compress); written atomically")
    p.add_argument("-j", "--jobs", type=positive_int, default=None, metavar="N",
                   help="processes, one shard each (default: one per core)")
    p.set_defaults(func=run)


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
