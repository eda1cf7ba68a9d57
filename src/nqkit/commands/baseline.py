"""``nqkit baseline``: run one of the NQ paper's baselines and write official predictions."""

from __future__ import annotations

import argparse
import sys
from typing import Any

GROUP = None

EPILOG = """\
baselines (NQ paper §6.1 and candidate ranking):
  first_paragraph    the page's first <P> candidate
  most_frequent      the long answer most often annotated on the same page in training
                     (pages matched by URL or title); NULL on unseen pages      [--train]
  closest_question   the answer of the training question on the same page with the
                     largest IDF-weighted word overlap                          [--train]
  bm25_candidates    the top-level candidate with the best BM25 score (nqkit[bm25])
  dense_candidates   the top-level candidate closest to the question by all-MiniLM-L6-v2
                     embeddings (nqkit[dense])
Scores go into long_answer_score, so `nqkit eval nq` picks the best NULL threshold."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "baseline", help="run an NQ baseline and write official-format predictions",
        description="Run an NQ baseline on original or simplified NQ files and write "
        "predictions in the official format (byte and token offsets, scores).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", metavar="NAME", help="baseline name (see below)")
    p.add_argument("--train", nargs="+", metavar="GLOB",
                   help="training files (original or simplified), for baselines that need them")
    p.add_argument("--gold-or-input", required=True, nargs="+", metavar="GLOB", dest="inputs",
                   help="examples to predict (with or without annotations; globs of shards)")
    p.add_argument("-o", "--output", required=True, metavar="FILE.json",
                   help="where to write the predictions")
    p.add_argument("--eval", action="store_true",
                   help="then score the predictions against the input's annotations "
                   "(as `nqkit eval nq` does)")
    from nqkit.commands.eval_nq import add_threshold_options

    add_threshold_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nqkit.baselines.run import run_system
    from nqkit.io import check_output, expand_paths, staged_path

    inputs = expand_paths(args.inputs, what="input")
    train = expand_paths(args.train, what="training") if args.train else []
    check_output(args.output, [*inputs, *train], option="-o")
    gold = None
    if args.eval:
        from nqkit.tasks.nq import load_gold_for_eval

        # Refuse a gold the scores cannot mean anything on before predicting anything.
        gold = load_gold_for_eval(args.inputs, long_threshold=args.long_threshold,
                                  short_threshold=args.short_threshold, cache=False)
    baseline, summary = run_system(args.name, args.train, args.inputs, args.output)
    trained = f", trained on {summary.num_train:,} examples" if baseline.needs_train else ""
    print(f"{summary.system}: {summary.num_examples:,} predictions "
          f"({summary.num_answered:,} with a long answer{trained}) written to {args.output}",
          file=sys.stderr)
    if args.eval:
        from nqkit.report import print_warnings
        from nqkit.tasks.nq import run_nq_eval

        out = run_nq_eval(gold=args.inputs, predictions=str(staged_path(args.output)),
                          cache=False, long_threshold=args.long_threshold,
                          short_threshold=args.short_threshold, gold_examples=gold)
        print_warnings(out.warnings)
        print(out.to_table())
    return 0
