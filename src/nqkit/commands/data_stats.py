"""``nqkit data stats``: statistics of Natural Questions files (the NQ paper's Figures 2
and 4, long-answer types, lengths), streaming, with an optional picture.

The numbers are :class:`nqkit.analysis.nq_data_stats.NqDataStats`; files are read one
example at a time with :func:`nqkit.formats.nq.read_nq` (original or simplified format,
detected per line), several shards in parallel with ``-j``
(:func:`nqkit.analysis.nq_data_stats.emit_data_stats`).
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, format_param
from nqkit.settings import Param
from nqkit.vocabulary import INPUTS, JOBS


def run(args: argparse.Namespace) -> int:
    from nqkit.analysis.nq_data_stats import emit_data_stats

    emit_data_stats(args.inputs, format=args.format, plot=args.plot, jobs=args.jobs)
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
        INPUTS.but(help="NQ .jsonl or .jsonl.gz files (globs allowed)", metavar="PATH"),
        format_param("table", "json"),
        Param("plot", "--plot", "also draw the statistics (PNG)", metavar="FILE.png",
              output=True),
        JOBS.but(help="shards read in parallel (processes; default 1)", default=1),
    )),)
