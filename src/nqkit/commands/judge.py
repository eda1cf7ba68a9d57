"""``nqkit judge audit``: a judge's verdicts against human judgments of the same answers
(:func:`nqkit.analysis.judge_audit.judge_audit`)."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, format_param
from nqkit.vocabulary import CONVENTION, GOLD, JUDGMENTS, RESAMPLES, SEED, VERDICTS


def run_audit(args: argparse.Namespace) -> int:
    from nqkit.analysis.judge_audit import judge_audit

    return judge_audit(vars(args))


ORDER = 77  # where `nqkit --help` lists it
COMMANDS = (Command(
    "audit", "agreement of a judge's verdicts with human judgments (accuracy, kappa)",
    "Compare a judge's per-answer verdicts (an LLM judge's TSV as oqaeval releases them, "
    "JSON lines of {question, answer, verdict}, or an exact-match convention) with human "
    "judgments (oqaeval's annotation TSV) on the (question, answer) pairs both cover: "
    "accuracy, Cohen's kappa, missed and false yes, with bootstrap 95% intervals.",
    run_audit, group="judge", params=(
        JUDGMENTS.but(required=True),
        VERDICTS,
        CONVENTION.but(default=None),
        GOLD.but(required=False, help="NQ-open gold of the judged questions (for "
                 "--convention)"),
        format_param("table", "json"),
        RESAMPLES.but(default=1000, help="bootstrap resamples of the pairs (default 1000; "
                      "0: no intervals)"),
        SEED,
    )),)
