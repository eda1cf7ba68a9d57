"""``nqkit retrieve``: top-k passages per question from an index (or two, fused). The
pipeline is :mod:`nqkit.tasks.retrieve`'s."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command
from nqkit.tasks.retrieve import RETRIEVE_PARAMS

ORDER = 110  # where `nqkit --help` lists it


def _add_params(p: argparse.ArgumentParser) -> None:
    """retrieve's options after its own: the search settings every retriever declares, then
    the cluster and --format."""
    from nqkit.tasks.retrieve import retrieve_params

    for param in retrieve_params():
        param.add_to(p)


def run(args: argparse.Namespace) -> int:
    from nqkit.tasks.retrieve import retrieve

    retrieve(vars(args))
    return 0


COMMANDS = (Command(
    "retrieve", "retrieve passages for questions from an index (DPR results format)",
    "Retrieve the top-k passages of every question from an index built by `nqkit index "
    "build` and write DPR's results format (question, answers, ctxs with id, title, text, "
    "score, has_answer). Two --index directories (BM25 and dense over the same corpus) give "
    "a hybrid run.",
    run, params=RETRIEVE_PARAMS,
    populate=_add_params),)  # the retrievers load only when `retrieve` is used
