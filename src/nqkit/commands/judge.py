"""``nqkit judge audit``: a judge's verdicts against human judgments of the same answers
(:func:`nqkit.analysis.judge_audit.judge_audit`)."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, format_param
from nqkit.settings import Param
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
    "accuracy, Cohen's kappa, missed and false yes, with bootstrap 95% intervals; the "
    "disagreements by kind (verbose answer, partial list, number or date format, "
    "granularity, other) when the gold answers are known (--gold, or a 'Gold answers' "
    "column); with --systems, each system's score under the humans (adjudicated EM) and "
    "under the judge, and Kendall's tau-b between the two orders.",
    run_audit, group="judge", params=(
        JUDGMENTS.but(required=True),
        VERDICTS,
        CONVENTION.but(default=None),
        GOLD.but(required=False, help="gold answers of the judged questions: NQ-open, or "
                 "a .tsv with Question and 'Gold answers' (joined by ' | ') columns; for "
                 "--convention and the kinds of disagreement (default: the judgments' or "
                 "verdicts' own Gold answers column, or the gold the systems carry)"),
        Param("systems", "--systems", "predictions files of systems on the judged "
              "questions: their scores under the humans and the judge, and Kendall's tau "
              "between the two orders", nargs="+", metavar="FILE", input=True),
        format_param("table", "json"),
        RESAMPLES.but(default=1000, help="bootstrap resamples of the pairs, and of the "
                      "questions for Kendall's tau (default 1000; 0: no intervals)"),
        SEED,
    )),)
