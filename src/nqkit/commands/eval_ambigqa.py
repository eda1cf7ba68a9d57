"""``nqkit eval ambigqa``: AmbigQA F1_ans, F1_BLEU and F1_EDIT-F1 without Java."""

from __future__ import annotations

import argparse

GROUP = "eval"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "ambigqa",
        help="AmbigQA / AmbigNQ metrics (official ambigqa_evaluate_script, no Java)",
        description="Score AmbigQA predictions, {id: [answer, ...]} or {id: [{question, "
        "answer}, ...]}, against an AmbigNQ light or full file. Reports F1_ans (all and "
        "multi-answer questions) and, for question-answer pairs, F1_BLEU-1..4 and "
        "F1_EDIT-F1 (the paper reports these on multi only). Numbers equal the official "
        "script's; questions are PTB-tokenized in pure Python.",
    )
    p.add_argument("--references", required=True, help="AmbigNQ JSON (e.g. dev_light.json)")
    p.add_argument("--predictions", required=True, help="predictions JSON object")
    p.add_argument("--matching", choices=("greedy", "optimal"), default="greedy",
                   help="greedy: the official one-to-one matching (default); optimal: "
                   "maximum-weight bipartite matching, reported as different metrics "
                   "('... [optimal]')")
    p.add_argument("--allow-missing", action="store_true",
                   help="score ids without a prediction as 0 instead of stopping")
    p.add_argument("--per-example", metavar="FILE",
                   help="also write one JSON line per id with its scores and is_multi")
    p.add_argument("--format", choices=("table", "json", "jsonl"), default="table",
                   help="table, json (means), or jsonl (one line per id on stdout; the "
                   "signature goes to stderr)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    import orjson

    from nqkit.formats.ambignq import read_ambignq, read_ambigqa_predictions
    from nqkit.io import check_output, write_jsonl
    from nqkit.metrics.ambigqa import score_ambigqa
    from nqkit.report import format_table

    if args.per_example:
        check_output(args.per_example, [args.references, args.predictions],
                     option="--per-example")
    references = list(read_ambignq(args.references))
    predictions = read_ambigqa_predictions(args.predictions)
    result = score_ambigqa(references, predictions, matching=args.matching,
                           missing="empty" if args.allow_missing else "error")
    from nqkit.tasks.ambigqa import warning_lines

    for line in warning_lines(result):
        print(f"nqkit: warning: {line}", file=sys.stderr)
    if args.per_example:
        write_jsonl(args.per_example, (
            {"id": k, "is_multi": result.is_multi[k], **v}
            for k, v in result.per_example.items()))
    if args.format == "jsonl":
        for k, v in result.per_example.items():
            sys.stdout.write(orjson.dumps({"id": k, "is_multi": result.is_multi[k], **v})
                             .decode() + "\n")
        print(f"signature: {result.signature}", file=sys.stderr)
    elif args.format == "json":
        out = {**({"warnings": [w.to_json() for w in result.warnings]}
                  if result.warnings else {}),
               "metrics": result.metrics, "num_examples": result.num_examples,
               "num_multi": result.num_multi, "signature": result.signature}
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
                         .decode() + "\n")
    else:
        rows = [(name, v["all"], v["multi"]) for name, v in result.metrics.items()]
        print(format_table(("metric", f"all ({result.num_examples:,})",
                            f"multi ({result.num_multi:,})"), rows))
        print("(the paper reports F1_BLEU = F1 bleu4 and F1_EDIT-F1 on multi only)")
        print(f"signature: {result.signature}")
    return 0
