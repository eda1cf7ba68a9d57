"""``nqkit human-bounds``: single-annotator and super-annotator scores (NQ paper §5.2)."""

from __future__ import annotations

import argparse
from typing import Any

from nqkit.settings import positive_int

GROUP = None

EPILOG = """\
The paper splits 25-way annotations into 5 references and a pool of 20 (super-annotator:
NULL unless >= 8 of the 20 gave a long answer). On the 5-way dev data, use leave one
annotator out:  nqkit human-bounds --gold 'nq-dev-*.jsonl.gz' --references 4 --splits all"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "human-bounds", help="human upper bounds on NQ from k-way annotations (paper §5.2)",
        description="Estimate single-annotator and super-annotator precision/recall/F1 by "
        "splitting each example's annotations into references and a predictor pool.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gold", required=True, nargs="+", metavar="GLOB",
                   help="k-way annotated NQ files (original or simplified)")
    p.add_argument("--references", type=positive_int, default=5, metavar="N",
                   help="annotations per example used as references (default 5)")
    p.add_argument("--beta", type=positive_int, default=2, metavar="K",
                   help="references have an answer when >= K of them gave one (default 2)")
    p.add_argument("--votes", type=positive_int, default=None, metavar="V",
                   help="super-annotator answers when >= V pool annotators did "
                   "(default: 8/20 of the pool, rounded, at least 1)")
    p.add_argument("--splits", choices=("first", "all"), default="first",
                   help="first: the first N annotations are the references; all: average "
                   "over every choice of N references (default first)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--no-cache", action="store_true", help="do not use the gold cache")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    from nqkit.formats.gold_cache import load_nq_gold
    from nqkit.metrics.human import human_bounds
    from nqkit.report import format_table, print_warnings

    gold = load_nq_gold(args.gold, cache=not args.no_cache)
    hb = human_bounds([(i, g.annotations) for i, g in gold.items()],
                      references=args.references, beta=args.beta, votes=args.votes,
                      splits=args.splits)
    print_warnings(hb.warnings)
    rows = [("single annotator", "long", hb.single_long), ("single annotator", "short",
                                                            hb.single_short),
            ("super-annotator", "long", hb.super_long), ("super-annotator", "short",
                                                         hb.super_short)]
    if args.format == "json":
        out = {**({"warnings": [w.to_json() for w in hb.warnings]} if hb.warnings else {}),
               "signature": hb.signature, "examples": hb.num_examples, "splits": hb.num_splits,
               **{f"{who.split()[0].replace('-annotator', '')}-{task}": {
                   "precision": s.precision, "recall": s.recall, "f1": s.f1,
                   "correct": s.correct, "predicted": s.predicted, "gold": s.gold}
                  for who, task, s in rows}}
        print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
        return 0
    title = (f"NQ human upper bounds: {hb.num_examples:,} examples, {hb.num_splits:,} "
             f"reference/pool splits ({hb.references} references, splits={hb.splits})")
    print(format_table(("predictor", "task", "F1", "precision", "recall", "correct",
                        "predicted", "gold"),
                       [(who, task, s.f1, s.precision, s.recall, s.correct, s.predicted, s.gold)
                        for who, task, s in rows], title=title))
    print(f"\nsignature: {hb.signature}")
    return 0
