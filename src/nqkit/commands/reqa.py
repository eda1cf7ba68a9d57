"""``nqkit reqa build`` and ``nqkit reqa run``: ReQA tasks from SQuAD or NQ, and retrieval.

``build`` writes a task directory (index, queries, paragraphs, params.json); ``run``
indexes the task with a retriever, ranks every query's answer at sentence and paragraph
level, prints the ReQA table (MRR, R@1, R@5, R@10) and writes per-question ranks. The
pipeline is :mod:`nqkit.tasks.reqa`'s; this module declares the two commands.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command
from nqkit.tasks.reqa import BUILD_PARAMS, RUN_TASK

ORDER = 90  # where `nqkit --help` lists it


def _add_run_params(p: argparse.ArgumentParser) -> None:
    from nqkit.tasks.reqa import run_params

    for param in run_params():
        param.add_to(p)


def run_build(args: argparse.Namespace) -> int:
    from nqkit.tasks.reqa import build_reqa, emit_build

    emit_build(build_reqa(args.source, args.inputs, args.output,
                          nq_annotations=args.nq_annotations),
               args.source, args.output, format=args.format)
    return 0


def run_run(args: argparse.Namespace) -> int:
    from nqkit.tasks.reqa import emit_run, run_reqa

    emit_run(run_reqa(vars(args)), format=args.format)
    return 0


COMMANDS = (
    Command("build", "build a ReQA task directory from SQuAD JSON or NQ original shards",
            "Build a ReQA task (answer index + queries) from SQuAD 1.1 JSON (--from squad "
            "FILE) or Natural Questions original-format shards (--from nq GLOB).",
            run_build, params=BUILD_PARAMS, group="reqa"),
    Command("run", "run a retriever on a ReQA task and print MRR and R@k",
            "Index a ReQA task with a retriever, rank every query's target at sentence and "
            "paragraph level, print MRR/R@1/R@5/R@10 and write per-question ranks.",
            run_run, params=RUN_TASK, group="reqa",
            # the retrievers load only when `reqa run` is used
            populate=_add_run_params),
)
