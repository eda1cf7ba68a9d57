"""``nqkit eval nq``: the official Natural Questions evaluation, exact and fast."""

from __future__ import annotations

import argparse
import sys
from typing import Any

GROUP = "eval"

FORMAT_HELP = """\
predictions: {"predictions": [{"example_id": INT, "long_answer": {"start_byte", "end_byte",
"start_token", "end_token"}, "long_answer_score": NUM, "short_answers": [SPAN, ...],
"short_answers_score": NUM, "yes_no_answer": "YES"|"NO"|"NONE"}, ...]}
Offsets by bytes, by tokens, or both (-1 when absent)."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "nq", help="Natural Questions long/short answer F1 (official metrics)",
        description="Score NQ predictions with the official rules: >=2-of-5 gold, "
        "byte-or-token span match, best-threshold F1 and recall at precision.",
        epilog=FORMAT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gold", required=True, nargs="+", metavar="GLOB",
                   help="gold NQ files (original or simplified; .jsonl or .jsonl.gz; globs)")
    p.add_argument("--predictions", required=True, metavar="FILE", help="predictions JSON")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="table (default) or the official JSON keys (plus 'signature')")
    add_threshold_options(p)
    p.add_argument("--allow-missing", action="store_true",
                   help="score examples without a prediction as null (default: error)")
    p.add_argument("--allow-extra", action="store_true",
                   help="ignore predictions for ids not in the gold (default: error)")
    p.add_argument("--breakdown", action="store_true",
                   help="also score by gold long-answer type and by question word")
    p.add_argument("--bootstrap", type=int, default=0, metavar="N",
                   help="95%% confidence intervals of the F1s from N bootstrap resamples "
                   "(at most 100,000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed, a non-negative integer "
                   "(default 0)")
    p.add_argument("--pr-curve", metavar="FILE.png", help="draw the precision-recall curves")
    p.add_argument("--no-cache", action="store_true",
                   help="do not read or write the gold annotation cache")
    p.set_defaults(func=run)


def add_threshold_options(p: Any) -> None:
    """--long-threshold / --short-threshold, shared with ``nqkit baseline --eval``."""
    from nqkit.settings import positive_int

    p.add_argument("--long-threshold", type=positive_int, default=2, metavar="K",
                   help="gold has a long answer when >= K annotators gave one (default 2; "
                   "1 for 1-way train gold)")
    p.add_argument("--short-threshold", type=positive_int, default=2, metavar="K",
                   help="gold has a short answer when >= K annotators gave one (default 2; "
                   "1 for 1-way train gold)")


def run(args: argparse.Namespace) -> int:
    from nqkit.io import check_output, expand_paths
    from nqkit.report import print_warnings
    from nqkit.tasks.nq import run_nq_eval

    if args.pr_curve:
        check_output(args.pr_curve, [*expand_paths(args.gold, what="gold"), args.predictions],
                     option="--pr-curve")
    out = run_nq_eval(
        gold=args.gold, predictions=args.predictions,
        long_threshold=args.long_threshold, short_threshold=args.short_threshold,
        allow_missing=args.allow_missing, allow_extra=args.allow_extra,
        breakdown=args.breakdown, bootstrap=args.bootstrap, seed=args.seed,
        pr_curve=args.pr_curve, cache=not args.no_cache,
    )
    print_warnings(out.warnings)
    if args.format == "json":
        sys.stdout.write(out.to_json_text())
    else:
        print(out.to_table())
    if args.pr_curve:
        print(f"precision-recall curve written to {args.pr_curve}", file=sys.stderr)
    return 0
