"""``nqkit explain bm25 --index A --index B --gold Q``: why two BM25 runs of the same
questions differ, each differing list put down to one named cause
(:func:`nqkit.tasks.retrieve.explain_bm25_runs`)."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, format_param
from nqkit.vocabulary import CLUSTER, GOLD, HITS, INDEX, WORKERS


def run(args: argparse.Namespace) -> int:
    from nqkit.tasks.retrieve import explain_bm25_runs

    explain_bm25_runs(vars(args))
    return 0


ORDER = 115  # where `nqkit --help` lists it (after retrieve)
COMMANDS = (Command(
    "bm25", "why two BM25 runs differ: each differing top-k list put down to one cause",
    "Search two BM25 index directories (e.g. --bm25-method lucene and lucene-exact) with "
    "the same questions and put each question whose top-k list differs down to one named "
    "cause: a chain of setups goes from run A's to run B's swapping one component at a "
    "time (passages, analyzer, k1/b, scoring, fields, tie order), and a list is put down to "
    "the last step that changes it; 'missing passages' when a listed passage is not in the "
    "other corpus. The chain's first and last stages are checked against the two runs.",
    run, group="explain", params=(
        INDEX.but(help="a BM25 index directory made by `nqkit index build`: give two, run A "
                  "then run B", required=True),
        GOLD.but(help="the questions (DPR .qa.tsv/.qa.csv, NQ-open .jsonl or AmbigNQ .json)",
                 nargs=None, metavar="FILE", deprecated=()),
        HITS.but(help="the depth of the two runs compared (default 100)"),
        CLUSTER.but(help="where the two runs' shard jobs run: none, local or an address "
                    "(default: none; the explanation itself runs in this process)",
                    default="none"),
        WORKERS,
        format_param("table", "json"),
    )),)
