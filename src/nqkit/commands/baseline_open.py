"""``nqkit baseline-open``: NQ-open and AmbigQA baselines that write predictions and score.

Subcommands:

* ``nearest-question`` — TF-IDF nearest question for NQ-open (answer of the most similar
  memory question); prints exact match when the questions carry answers.
* ``ambigqa-answers`` — multiple answers from the nearest AmbigNQ training questions,
  ``k``/``tau`` tuned on a slice of train; prints F1_ans.
* ``ambigqa-questions`` — question disambiguation given the gold answers: ``prompt``
  (always the prompt question) or ``nearest-edit``; prints F1_BLEU and F1_EDIT-F1.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nqkit.signature import ResultWarning

from nqkit.settings import float_in, positive_int

GROUP = None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "baseline-open",
        help="NQ-open / AmbigQA baselines: write predictions and a results row",
        description="Baselines for NQ-open and AmbigQA. Each writes a predictions file in "
        "the task's format and prints its scores.",
    )
    sub = p.add_subparsers(dest="baseline", metavar="BASELINE")
    p.set_defaults(func=lambda _a, _p=p: _help(_p))

    nq = sub.add_parser("nearest-question", help="NQ-open: TF-IDF nearest question",
                        description="Answer each question with the first answer of the most "
                        "similar memory question (TF-IDF cosine of word unigrams+bigrams).")
    nq.add_argument("--memory", nargs="+", required=True,
                    help="question-answer files: NQ-open .jsonl, DPR .qa.tsv, AmbigNQ .json")
    nq.add_argument("--questions", required=True, help="NQ-open JSONL to answer (and score)")
    nq.add_argument("--answer-field", default="answer")
    nq.add_argument("-o", "--output", required=True, help='predictions JSONL {"question", '
                    '"prediction"}')
    nq.add_argument("--format", choices=("table", "json"), default="table")
    nq.set_defaults(func=run_nearest_question)

    aa = sub.add_parser("ambigqa-answers", help="AmbigQA: answers of the nearest train questions",
                        description="Predict the answer set of the nearest AmbigNQ training "
                        "question, plus first answers of up to k-1 further neighbours within "
                        "tau of the best similarity; k and tau are tuned on the first "
                        "--tune-slice training questions (answered from the rest of train) "
                        "unless given.")
    aa.add_argument("--train", required=True, help="AmbigNQ train (train_light.json)")
    aa.add_argument("--questions", required=True, help="AmbigNQ file to answer (and score)")
    aa.add_argument("-o", "--output", required=True, help="predictions JSON {id: [answers]}")
    aa.add_argument("--k", type=positive_int, help="neighbours (default: tuned)")
    aa.add_argument("--tau", type=float_in(0, 1),
                    help="relative similarity threshold (default: tuned)")
    aa.add_argument("--tune-slice", type=positive_int, default=1000,
                    help="training questions used for tuning (default: 1000)")
    aa.add_argument("--format", choices=("table", "json"), default="table")
    aa.set_defaults(func=run_ambigqa_answers)

    aq = sub.add_parser("ambigqa-questions",
                        help="AmbigQA: question disambiguation given gold answers",
                        description="Write one question-answer pair per gold answer (first "
                        "annotation): 'prompt' asks the prompt question unchanged; "
                        "'nearest-edit' inserts the words that the nearest multi-answer "
                        "training question's rewrite added to its prompt.")
    aq.add_argument("--method", choices=("prompt", "nearest-edit"), required=True)
    aq.add_argument("--questions", required=True, help="AmbigNQ file (gold answers are used)")
    aq.add_argument("--train", help="AmbigNQ train (needed by nearest-edit)")
    aq.add_argument("-o", "--output", required=True,
                    help="predictions JSON {id: [{question, answer}]}")
    aq.add_argument("--format", choices=("table", "json"), default="table")
    aq.set_defaults(func=run_ambigqa_questions)


def _help(parser: argparse.ArgumentParser) -> int:
    import sys

    parser.print_help(sys.stderr)
    return 2


def _emit(fmt: str, title: str, rows: list[tuple[object, ...]], headers: tuple[str, ...],
          signature: str, extra: dict[str, object], warnings: Sequence[ResultWarning] = (),
          ) -> None:
    import sys

    import orjson

    from nqkit.report import format_table, print_warnings

    print_warnings(warnings)
    if fmt == "json":
        out = {**({"warnings": [w.to_json() for w in warnings]} if warnings else {}),
               "baseline": title, **extra, "signature": signature}
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(format_table(headers, rows, title=title))
        print(f"signature: {signature}")


def run_nearest_question(args: argparse.Namespace) -> int:
    import sys

    from nqkit.baselines.nearest_question import TfidfIndex, load_qa_memory
    from nqkit.formats.nq_open import NqOpenPrediction, read_nq_open
    from nqkit.io import check_output, write_jsonl
    from nqkit.metrics.nq_open import score_nq_open
    from nqkit.report import progress

    check_output(args.output, [*args.memory, args.questions], option="-o")
    memory = load_qa_memory(args.memory)
    questions = list(read_nq_open(args.questions, answer_field=args.answer_field))
    index = TfidfIndex(memory.questions)
    memory_set = set(memory.questions)
    overlap = sum(1 for ex in questions if ex.question in memory_set)
    if overlap:
        print(f"nqkit: warning: {overlap:,} question(s) also occur in the memory; their "
              "answers are copied (the memory should be disjoint from the questions)",
              file=sys.stderr)
    preds = []
    for ex in progress(questions, desc="nearest question", unit="q"):
        (i, _), = index.nearest(ex.question, 1)
        preds.append(NqOpenPrediction(ex.question, memory.answers[i][0]))
    write_jsonl(args.output, ({"question": p.question, "prediction": p.prediction}
                              for p in preds))
    r = score_nq_open(questions, preds, answer_field=args.answer_field)
    title = (f"TF-IDF nearest question: memory {len(memory.questions):,} questions, "
             f"{len(questions):,} questions answered")
    _emit(args.format, title, [("exact match", r.accuracy),
                                ("correct", f"{r.num_correct:,}/{r.num_total:,}")],
          ("metric", "value"), r.signature,
          {"memory_size": len(memory.questions), **r.official()}, r.warnings)
    return 0


def _pairs_to_predictions(pairs):
    from nqkit.formats.ambignq import AmbigQaPrediction

    return {k: AmbigQaPrediction(tuple(p["answer"] for p in v), tuple(p["question"] for p in v))
            for k, v in pairs.items()}


def _ambigqa_rows(result, names):
    return [(n, result.metrics[n]["all"], result.metrics[n]["multi"]) for n in names]


def run_ambigqa_answers(args: argparse.Namespace) -> int:
    import sys

    from nqkit.baselines.ambigqa_baselines import (
        NearestAnswersParams,
        nearest_answers,
        tune_nearest_answers,
    )
    from nqkit.baselines.nearest_question import TfidfIndex
    from nqkit.errors import InputError
    from nqkit.formats.ambignq import read_ambignq
    from nqkit.io import check_output, write_json
    from nqkit.metrics.ambigqa import score_ambigqa

    check_output(args.output, [args.train, args.questions], option="-o")
    train = list(read_ambignq(args.train))
    questions = list(read_ambignq(args.questions))
    if (args.k is None) != (args.tau is None):
        raise InputError(None, "give both --k and --tau, or neither (then both are tuned)",
                         "e.g. --k 2 --tau 0.8")
    if args.k is not None:
        if args.k < 1 or not 0 <= args.tau <= 1:
            raise InputError(None, f"--k must be >= 1 and --tau in [0, 1], found "
                             f"{args.k}, {args.tau}", "e.g. --k 2 --tau 0.8")
        params, how = NearestAnswersParams(args.k, args.tau), "given"
    else:
        if not 0 < args.tune_slice < len(train):
            raise InputError(None, f"--tune-slice must be in 1..{len(train) - 1}",
                             "use about a tenth of the training questions")
        params, grid = tune_nearest_answers(train, slice_size=args.tune_slice)
        how = f"tuned on the first {args.tune_slice:,} training questions"
        for p, f1 in grid:
            print(f"nqkit: tuning k={p.k} tau={p.tau}: F1_ans {f1:.4f}", file=sys.stderr)
    index = TfidfIndex([ex.question for ex in train])
    preds = nearest_answers(questions, train, index, params)
    write_json(args.output, {k: list(v.answers) for k, v in preds.items()})
    r = score_ambigqa(questions, preds)
    title = f"nearest AmbigNQ train questions: k={params.k}, tau={params.tau} ({how})"
    _emit(args.format, title, _ambigqa_rows(r, ["F1 answer"]),
          ("metric", f"all ({r.num_examples:,})", f"multi ({r.num_multi:,})"), r.signature,
          {"k": params.k, "tau": params.tau, "metrics": r.metrics}, r.warnings)
    return 0


def run_ambigqa_questions(args: argparse.Namespace) -> int:
    from nqkit.baselines.ambigqa_baselines import nearest_edit_questions, prompt_copy_questions
    from nqkit.errors import InputError
    from nqkit.formats.ambignq import read_ambignq
    from nqkit.io import check_output, write_json
    from nqkit.metrics.ambigqa import QUESTION_METRICS, score_ambigqa

    inputs = [args.questions] + ([args.train] if args.train else [])
    check_output(args.output, inputs, option="-o")
    questions = list(read_ambignq(args.questions))
    if args.method == "prompt":
        pairs = prompt_copy_questions(questions)
    else:
        if not args.train:
            raise InputError(None, "--method nearest-edit needs --train",
                             "give AmbigNQ train, e.g. --train train_light.json")
        pairs = nearest_edit_questions(questions, list(read_ambignq(args.train)))
    write_json(args.output, pairs)
    r = score_ambigqa(questions, _pairs_to_predictions(pairs))
    title = f"question disambiguation, gold answers given: {args.method}"
    _emit(args.format, title, _ambigqa_rows(r, ["F1 answer", *QUESTION_METRICS]),
          ("metric", f"all ({r.num_examples:,})", f"multi ({r.num_multi:,})"), r.signature,
          {"method": args.method, "metrics": r.metrics}, r.warnings)
    return 0
