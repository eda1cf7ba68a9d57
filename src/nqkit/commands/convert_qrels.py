"""``nqkit convert qrels``: gold passages (NQ-open oracle, DPR positive_ctxs) -> TREC qrels."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, output_param
from nqkit.settings import Param, int_in


def run(args: argparse.Namespace) -> int:
    from nqkit.errors import InputError, examples, for_example
    from nqkit.formats.dpr import read_dpr_biencoder, read_dpr_passages
    from nqkit.formats.gold_qrels import (
        qrels_from_biencoder,
        qrels_from_oracle,
        question_numbers,
        read_nq_open_oracle,
    )
    from nqkit.formats.trec import read_questions_answers, write_trec_qrels
    from nqkit.io import check_output, expand_paths
    from nqkit.report import progress, say, warn
    from nqkit.retrieval.corpus import CorpusFingerprint, Passage
    from nqkit.signature import make_signature

    if (args.oracle is None) == (args.biencoder is None):
        raise InputError(None, "give one source of gold passages",
                         "--oracle nq-open-oracle.jsonl.gz or --biencoder biencoder-nq-dev.json")
    source = args.oracle if args.oracle is not None else args.biencoder
    inputs = [*expand_paths(source, what="gold passages"),
              *expand_paths(args.questions, what="questions"),
              *expand_paths(args.passages, what="passages TSV")]
    check_output(args.output, inputs, option="-o")
    questions = [q for q, _ in read_questions_answers(args.questions)]
    where = examples(expand_paths(args.questions, what="questions"), width=None)
    qids = question_numbers(questions, where, args.first_qid)
    fingerprint = CorpusFingerprint()

    def passages():
        for c in progress(read_dpr_passages(args.passages), desc="reading the passages",
                          unit="passage"):
            fingerprint.update(Passage(c.id, c.text, c.title))
            yield c

    if args.oracle is not None:
        kind = "nq-open-oracle"
        d = qrels_from_oracle(read_nq_open_oracle(args.oracle), qids, passages(),
                              where=str(args.oracle))
    else:
        kind = "dpr-biencoder"
        d = qrels_from_biencoder(read_dpr_biencoder(args.biencoder), qids, passages(),
                                 where=str(args.biencoder))
    if d.not_in_questions:
        warn(f"{len(d.not_in_questions):,} of {d.source_questions:,} questions of {source} "
             f"are not in {args.questions} and get no qrels "
             f"({for_example(map(repr, d.not_in_questions))})")
    if d.unmatched:
        warn(f"{len(d.unmatched):,} of {d.gold_passages:,} gold passages are not in the "
             f"corpus (match:{d.match}); a question none of whose gold passages is there is "
             f"gold unknown ({for_example(map(repr, d.unmatched))})")
    write_trec_qrels(args.output, d.qrels)
    say(f"{len(d.qrels):,} qrels for {d.questions_with_gold:,} of {len(questions):,} "
        f"questions ({d.source_questions:,} in the source, {d.without_gold:,} without a gold "
        f"passage); wrote {args.output}")
    print(make_signature("qrels", {"source": kind, "match": d.match,
                                   "corpus": fingerprint.hexdigest()[:12],
                                   "passages": fingerprint.count,
                                   "first-qid": args.first_qid}))
    return 0


ORDER = 51  # where `nqkit --help` lists it
COMMANDS = (Command(
    "qrels", "gold passages (NQ-open oracle, DPR positive_ctxs) -> TREC qrels",
    "Write TREC qrels (qid 0 docid 1) of the gold passages of questions, for `nqkit eval "
    "retrieval --qrels`: qid = --first-qid + the question's 0-based line in --questions "
    "(as a TREC run of those questions is numbered), docid = a passage id of --passages. "
    "--oracle: the NQ-open oracle file's contexts marked isgold, which carry no passage id, "
    "matched by content (a corpus passage whose title and text equal the gold passage's "
    "with whitespace collapsed; rule match:title+text-ws). --biencoder: DPR's "
    "positive_ctxs by passage_id (rule match:id). Gold passages not in the corpus and "
    "questions not in --questions are dropped and counted (a warning); a question without "
    "a qrels line is 'gold unknown' to eval retrieval. The signature printed names the "
    "source, the rule and the corpus.",
    run, group="convert", params=(
        Param("oracle", "--oracle", "NQ-open oracle JSONL (nq-open-oracle.jsonl.gz)",
              metavar="FILE"),
        Param("biencoder", "--biencoder", "DPR bi-encoder JSON (biencoder-nq-dev.json)",
              metavar="FILE"),
        Param("questions", "--questions", "the questions the qrels number (DPR .qa.tsv or "
              "NQ-open JSONL; NQ-open dev: nq-test.qa.tsv)", required=True, metavar="FILE"),
        Param("passages", "--passages", "the passage corpus (DPR psgs_w100.tsv format)",
              required=True, metavar="TSV"),
        Param("first_qid", "--first-qid", "the qid of the first question (default 0, as "
              "Pyserini numbers DPR topics)", default=0, type=int_in(0)),
        output_param("output qrels file (.gz to compress)"),
    )),)
