"""``nqkit eval retrieval``: top-k answer recall of DPR-style retrieval results."""

from __future__ import annotations

import argparse

from nqkit.settings import positive_int

GROUP = "eval"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "retrieval",
        help="top-k answer recall of retrieval results (DPR has_answer)",
        description="Top-k answer recall of DPR-style results [{question, answers, ctxs: "
        "[{id, title, text, score}]}]: a question counts at k when one of its first k "
        "passages contains an answer's token sequence (DPR simple tokenizer, NFD, "
        "lower-cased). Contexts are taken in file order.",
    )
    p.add_argument("results", help="retrieval results JSON (DPR dense_retriever output)")
    p.add_argument("--topk", type=positive_int, nargs="+", default=[1, 5, 20, 100], metavar="K",
                   help="cut-offs (default: 1 5 20 100)")
    p.add_argument("--per-question", metavar="FILE",
                   help="also write one JSON line per question with the rank of its first "
                   "answer-bearing passage (null if none)")
    p.add_argument("--format", choices=("table", "json", "jsonl"), default="table",
                   help="table, json, or jsonl (one line per question with the rank of its "
                   "first answer-bearing passage; the signature goes to stderr)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    import orjson

    from nqkit.errors import InputError
    from nqkit.formats.dpr import read_dpr_results
    from nqkit.io import check_output, write_jsonl
    from nqkit.metrics.answer_recall import score_answer_recall
    from nqkit.report import format_table

    if any(k < 1 for k in args.topk):
        raise InputError(None, f"--topk must be positive, found {args.topk}",
                         "give cut-offs such as --topk 1 5 20 100")
    if args.per_question:
        check_output(args.per_question, [args.results], option="--per-question")
    results = list(read_dpr_results(args.results))
    r = score_answer_recall(results, args.topk, where=args.results)
    from nqkit.tasks.retrieval import warning_lines

    for line in warning_lines(r):
        print(f"nqkit: warning: {line}", file=sys.stderr)
    if args.per_question:
        write_jsonl(args.per_question, ({"question": res.question, "first_hit": hit}
                                        for res, hit in zip(results, r.first_hit, strict=True)))
    if args.format == "jsonl":
        for res, hit in zip(results, r.first_hit, strict=True):
            sys.stdout.write(orjson.dumps({"question": res.question, "first_hit": hit})
                             .decode() + "\n")
        print(f"signature: {r.signature}", file=sys.stderr)
    elif args.format == "json":
        out = {**({"warnings": [w.to_json() for w in r.warnings]} if r.warnings else {}),
               "recall": {str(k): v for k, v in r.recall.items()},
               "num_questions": r.num_questions, "signature": r.signature}
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(format_table(("top-k", "answer recall"),
                           [(f"top-{k}", v) for k, v in r.recall.items()]))
        print(f"questions: {r.num_questions:,}")
        print(f"signature: {r.signature}")
    return 0
