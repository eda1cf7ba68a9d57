"""``nqkit data stats``: statistics of Natural Questions files (the NQ paper's Figures 2
and 4, long-answer types, lengths), streaming, with an optional picture.

The numbers are :class:`nqkit.analysis.nq_data_stats.NqDataStats`; files are read one
example at a time with :func:`nqkit.formats.nq.read_nq` (original or simplified format,
detected per line), several shards in parallel with ``-j``.
"""

from __future__ import annotations

import argparse
from typing import Any

from nqkit.commands.base import Command, format_param
from nqkit.settings import Param, positive_int


def _file_stats(path: str) -> Any:
    """The statistics of one file (a worker's job)."""
    from nqkit.analysis.nq_data_stats import nq_data_stats
    from nqkit.formats.nq import read_nq

    return nq_data_stats(read_nq(path, unique=False))


def run(args: argparse.Namespace) -> int:
    import json

    from nqkit.analysis.nq_data_stats import NqDataStats
    from nqkit.formats.nq import read_nq
    from nqkit.io import atomic_output, check_output, expand_paths
    from nqkit.report import format_table, progress, say

    files = expand_paths(args.inputs, what="NQ")
    if args.plot:
        check_output(args.plot, files, option="--plot")
    stats = NqDataStats()
    if args.jobs > 1 and len(files) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(args.jobs, len(files))) as pool:
            for part in progress(pool.map(_file_stats, [str(f) for f in files]),
                                 desc="stats", total=len(files), unit="file"):
                stats.merge(part)
    else:
        # Repeats are counted as read, in both paths alike: the -j workers read a file
        # each and could not see one repeated across files (refusing them is open).
        for ex in progress(read_nq(files, unique=False), desc="stats", unit="ex"):
            stats.add(ex)
    if args.plot:
        png = stats.plot_png(title=files[0].name if len(files) == 1
                             else f"{files[0].name} (+{len(files) - 1} files)")
        with atomic_output(args.plot, "wb") as f:
            f.write(png)
        say(f"picture written to {args.plot}")
    if args.format == "json":
        print(json.dumps({"files": [str(f) for f in files], **stats.to_json()}, indent=1))
        return 0
    for title, headers, rows in stats.tables():
        print(format_table(headers, rows, title=title))
        print()
    print("paper train: Kwiatkowski et al. 2019, Figure 2 ('null' = bad question 14% + no "
          "answer 37%) and §3.3")
    print(f"signature: {stats.signature}")
    return 0


ORDER = 140  # where `nqkit --help` lists it
COMMANDS = (Command(
    "stats", "statistics of NQ files: Figure 2 decision paths, Figure 4 agreement, "
    "long-answer types, lengths",
    "Count, over NQ files (original or simplified; 1-way train or 5-way dev annotations), "
    "the annotation decision paths of the NQ paper's Figure 2 (null, long answer only, "
    "yes/no, short answer) with the long-answer types of §3.3, the gold paths by the "
    "evaluation's 2-of-5 rule and the annotator agreement of Figure 4 on 5-way data, and "
    "lengths in words. Streams with bounded memory; the paper's train figures are shown "
    "beside.",
    run, group="data", params=(
        Param("inputs", "inputs", "NQ .jsonl or .jsonl.gz files (globs allowed)", nargs="+",
              metavar="PATH"),
        format_param("table", "json"),
        Param("plot", "--plot", "also draw the statistics (PNG)", metavar="FILE.png"),
        Param("jobs", "--jobs", "shards read in parallel (processes; default 1)", default=1,
              type=positive_int, metavar="N", short="-j"),
    )),)
