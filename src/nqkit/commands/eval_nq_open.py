"""``nqkit eval nq-open``: NQ-open exact match, identical to the official ORQA script."""

from __future__ import annotations

import argparse

GROUP = "eval"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "nq-open",
        help="NQ-open / EfficientQA exact match (official ORQA evaluation)",
        description="Score {question, prediction} JSON lines against NQ-open references "
        "{question, answer: [...]} by exact match after NFD, lower-casing, punctuation and "
        "article removal (max over gold answers). Numbers equal the official "
        "evaluate_predictions.py.",
    )
    p.add_argument("--references", required=True, help="NQ-open JSONL (plain or .gz)")
    p.add_argument("--predictions", required=True,
                   help='JSONL {"question", "prediction"}, or a JSON object {question: answer}')
    p.add_argument("--answer-field", default="answer",
                   help="reference field holding the answers (default: answer; EfficientQA "
                   "test: answer_and_def_correct_predictions)")
    p.add_argument("--regex", action="store_true",
                   help="references are regular expressions (CuratedTrec): a pattern must "
                   "match at the start of the prediction, case-insensitively")
    p.add_argument("--allow-missing", action="store_true",
                   help="score questions without a prediction as wrong (the official "
                   "behaviour) instead of stopping with an error")
    p.add_argument("--per-question", metavar="FILE",
                   help="also write one JSON line per question (question, prediction, "
                   "correct, matched_answer, answers) for error analysis")
    p.add_argument("--format", choices=("table", "json", "jsonl"), default="table",
                   help="table, json (the official numbers), or jsonl (one line per question "
                   "on stdout; the summary goes to stderr)")
    p.add_argument("--convention", default="orqa", metavar="NAME",
                   help="exact-match rule: orqa (the official NQ-open rule, default), squad "
                   "(SQuAD v1.1 normalization without NFD; also DPR's reader EM, alias dpr), "
                   "containment (FlashRAG's 'acc': a normalized gold answer is a substring "
                   "of the normalized prediction); named in the signature")
    p.add_argument("--explain", action="store_true",
                   help="also score the same predictions under every convention and list "
                   "the questions where they disagree")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    import orjson

    from nqkit.formats.nq_open import read_nq_open, read_nq_open_predictions
    from nqkit.io import check_output, write_jsonl
    from nqkit.metrics.nq_open import score_nq_open
    from nqkit.report import format_table

    if args.per_question:
        check_output(args.per_question, [args.references, args.predictions],
                     option="--per-question")
    result = score_nq_open(
        read_nq_open(args.references, answer_field=args.answer_field),
        read_nq_open_predictions(args.predictions),
        regex=args.regex,
        missing="wrong" if args.allow_missing else "error",
        answer_field=args.answer_field,
        where=args.predictions,
        convention=args.convention,
    )
    from nqkit.tasks.nq_open import warning_lines

    for line in warning_lines(result):
        print(f"nqkit: warning: {line}", file=sys.stderr)
    def item(it):
        return {"question": it.question, "prediction": it.prediction, "correct": it.correct,
                "matched_answer": it.matched_answer, "answers": list(it.answers)}

    if args.per_question:
        write_jsonl(args.per_question, (item(it) for it in result.items))
    if args.format == "jsonl":
        for it in result.items:
            sys.stdout.write(orjson.dumps(item(it)).decode() + "\n")
        print(f"exact match {result.accuracy:.4f} ({result.num_correct:,}/{result.num_total:,})"
              f"; signature: {result.signature}", file=sys.stderr)
    elif args.format == "json":
        out = {**({"warnings": [w.to_json() for w in result.warnings]}
                  if result.warnings else {}),
               **result.official(), "signature": result.signature}
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        predicted = result.num_total - result.missing_predictions
        rows = [
            ("exact match", result.accuracy),
            ("correct", f"{result.num_correct:,}/{result.num_total:,}"),
            ("predicted", f"{predicted:,}/{result.num_total:,}"),
        ]
        print(format_table(("metric", "value"), rows))
        print(f"signature: {result.signature}")
    if args.explain:
        from nqkit.metrics.em_conventions import explain_conventions
        from nqkit.tasks.nq_open import explain_text

        text = explain_text(explain_conventions(
            [(it.question, it.prediction, it.answers) for it in result.items]))
        print(text, file=sys.stderr if args.format != "table" else sys.stdout)
    return 0

