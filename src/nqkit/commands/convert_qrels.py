"""``nqkit convert qrels``: gold passages (NQ-open oracle, DPR positive_ctxs) -> TREC qrels
(:func:`nqkit.tasks.retrieve.write_qrels`)."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command
from nqkit.tasks.retrieve import QRELS_PARAMS


def run(args: argparse.Namespace) -> int:
    from nqkit.tasks.retrieve import write_qrels

    write_qrels(args.gold, args.passages, args.output, oracle=args.oracle,
                biencoder=args.biencoder, first_qid=args.first_qid)
    return 0


ORDER = 51  # where `nqkit --help` lists it
COMMANDS = (Command(
    "qrels", "gold passages (NQ-open oracle, DPR positive_ctxs) -> TREC qrels",
    "Write TREC qrels (qid 0 docid 1) of the gold passages of questions, for `nqkit eval "
    "retrieval --qrels`: qid = --first-qid + the question's 0-based line in --gold "
    "(as a TREC run of those questions is numbered), docid = a passage id of --passages. "
    "--oracle: the NQ-open oracle file's contexts marked isgold, which carry no passage id, "
    "matched by content (a corpus passage whose title and text equal the gold passage's "
    "with whitespace collapsed; rule match:title+text-ws). --biencoder: DPR's "
    "positive_ctxs by passage_id (rule match:id). Gold passages not in the corpus and "
    "questions not in --gold are dropped and counted (a warning); a question without "
    "a qrels line is 'gold unknown' to eval retrieval. The signature printed names the "
    "source, the rule and the corpus.",
    run, group="convert", params=QRELS_PARAMS),)
