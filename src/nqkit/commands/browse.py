"""``nqkit browse``: a local web browser for NQ examples, annotations and predictions, and
for open-domain predictions (``--task nq-open``, ``ambigqa``, ``retrieval``): one system,
or two side by side with the paired test of ``nqkit compare``. This module declares the
command; :mod:`nqkit.browser.serve` loads and serves."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command


def _add_params(p: argparse.ArgumentParser) -> None:
    """browse's settings: its own and those of every task with a view (from the task
    registry, loaded on first use of ``browse``)."""
    from nqkit.browser.serve import browse_params

    for param in browse_params():
        param.add_to(p)


def run(args: argparse.Namespace) -> int:
    from nqkit.browser.serve import serve

    serve(vars(args))
    return 0


ORDER = 120  # where `nqkit --help` lists it
COMMANDS = (Command(
    "browse", "browse NQ examples, annotations and predictions in a web browser",
    "Start a local web app over NQ files (original or simplified format): an index with "
    "search, filters and the official metrics, one page per example with its five "
    "annotations, candidate tree and prediction, and the full page with gold and predicted "
    "spans highlighted. The first run over a file builds an on-disk index (once, with a "
    "progress bar); later runs start in seconds. With --task nq-open or ambigqa: "
    "open-domain predictions against their gold, per question, with the numbers of nqkit "
    "eval; two prediction files side by side with the paired test of nqkit compare. With "
    "--task retrieval: a retrieval run (DPR results JSON, or a TREC run with --passages) "
    "over the questions of --gold, the ranked passages with the answers highlighted where "
    "has_answer finds them, and the recall of nqkit eval retrieval.",
    run, populate=_add_params),)
