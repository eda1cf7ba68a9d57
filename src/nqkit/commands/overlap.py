"""``nqkit overlap ...``: how much of a score is test-train overlap (Lewis et al. 2021).

* ``score``: a system's scores on the overlap groups of a test set (total, question
  overlap, answer overlap, answer overlap only, ...), the groups computed against a
  training file (answer overlap exactly, question overlap by a named TF-IDF proxy) or read
  from an official annotation file, with bootstrap intervals and group differences;
* ``official``: the official QA-Overlap evaluation's numbers (EM and F1 per label, row
  order), exactly;
* ``labels``: the computed labels of every test question, in the official annotation
  format;
* ``leak``: what a test file shares with a training file, before a split is published.

The computation is :mod:`nqkit.analysis.overlap` and :mod:`nqkit.metrics.qa_overlap`.
"""

from __future__ import annotations

import argparse
from typing import Any

from nqkit.commands.base import Command, format_param
from nqkit.settings import Param, float_in, int_in, output_param

TEST = Param("test", "--test", "the test questions: NQ-open / EfficientQA .jsonl, DPR "
             ".qa.tsv/.qa.csv or AmbigNQ .json (paths, globs or registry names)",
             nargs="+", required=True, metavar="TEST")
TRAIN = Param("train", "--train", "the training questions the model saw (same formats; "
              "several files are one set), e.g. nq-open/train or dpr/nq-train.qa",
              nargs="+", metavar="TRAIN")
THRESHOLD = Param("threshold", "--threshold", "question-overlap proxy: the TF-IDF cosine at "
                  "or above which the nearest training question counts as a paraphrase "
                  "(default 0.5)", default=0.5, type=float_in(0.0, 1.0), metavar="COS")
SCOPE = Param("scope", "--scope", "question-overlap proxy: search the training questions "
              "that share a normalised answer (same-answer, default: the paper's protocol) "
              "or all of them", default="same-answer", choices=("same-answer", "all"))
ANSWER_NORM = Param("answer_norm", "--answer-norm", "answer normalisation of the answer "
                    "overlap: squad (default, as the QA-Overlap evaluation) or orqa (NFD "
                    "first)", default="squad", choices=("squad", "orqa"))


def _check_label_source(args: argparse.Namespace) -> None:
    """Exactly one source of labels: --train, or --annotations with --annotated-test."""
    from nqkit.errors import InputError

    annotations = getattr(args, "annotations", None)
    if (args.train is None) == (annotations is None):
        raise InputError(None, "give either --train (labels computed against the training "
                         "set) or --annotations with --annotated-test (the official labels)",
                         "e.g. --train nq-open/train, or --annotations nq-annotations.jsonl "
                         "--annotated-test dpr/nq-test.qa")
    if annotations is not None and args.annotated_test is None:
        raise InputError(None, "--annotations needs --annotated-test: the test file its ids "
                         "are rows of", "for NQ: --annotated-test dpr/nq-test.qa "
                         "(nq-test.qa.csv)")


def _analysis(args: argparse.Namespace, test: Any) -> Any:
    """The overlap labels of the test questions: computed, or read from annotations."""
    from nqkit.analysis.overlap import (
        compute_overlap,
        file_digest,
        load_qa_set,
        overlap_from_annotations,
    )
    from nqkit.formats.qa_overlap import read_overlap_annotations

    _check_label_source(args)
    annotations = getattr(args, "annotations", None)
    if annotations is not None:
        rows = load_qa_set(args.annotated_test, what="annotated test")
        from nqkit.io import expand_paths

        (path,) = expand_paths(annotations, what="annotations")[:1]
        return overlap_from_annotations(test, read_overlap_annotations(path), rows=rows,
                                        label=f"qa-overlap#{file_digest(path)}")
    train = load_qa_set(args.train, what="training")
    return compute_overlap(test, train, answer_norm=args.answer_norm,
                           threshold=args.threshold, scope=args.scope)


def _cell(score: float | None, low: float | None, high: float | None) -> str:
    if score is None:
        return "-"
    text = f"{100 * score:.2f}"
    return text if low is None or high is None else (
        f"{text} [{100 * low:.2f}, {100 * high:.2f}]")


def scores_rows(r: Any) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The headers and rows of the groups table of an
    :class:`~nqkit.analysis.overlap.OverlapScores`, as ``nqkit overlap score`` prints it."""
    from nqkit.analysis.overlap import GROUPS

    total = r.score("total", r.metrics[0]).n
    rows = []
    for g in GROUPS:
        n = r.score(g, r.metrics[0]).n
        rows.append((g, f"{n:,}", f"{100 * n / total:.1f}",
                     *(_cell(s.score, s.low, s.high)
                       for s in (r.score(g, m) for m in r.metrics))))
    ci = " [95% CI]" if r.resamples else ""
    return ("group", "n", "% of test", *(f"{m}{ci}" for m in r.metrics)), rows


def scores_table(r: Any) -> str:
    """The groups table, the differences table and the signature of an
    :class:`~nqkit.analysis.overlap.OverlapScores`."""
    from nqkit.report import format_table

    headers, rows = scores_rows(r)
    ci = " [95% CI]" if r.resamples else ""
    parts = [format_table(headers, rows, title="scores (%) by test-train overlap group")]
    if r.differences:
        drows = [(f"{d.group} - {d.minus}", d.metric, _cell(d.difference, d.low, d.high))
                 for d in r.differences]
        parts += ["", format_table(("difference", "metric", f"points{ci}"), drows)]
    if r.resamples:
        parts.append(f"bootstrap: {r.resamples:,} resamples, seed {r.seed}")
    parts.append(f"signature: {r.signature}")
    return "\n".join(parts)


def run_score(args: argparse.Namespace) -> int:
    import json

    from nqkit.analysis.overlap import (
        ambigqa_item_scores,
        load_qa_set,
        nq_open_item_scores,
        score_groups,
    )
    from nqkit.errors import InputError
    from nqkit.io import check_output, write_jsonl
    from nqkit.report import print_warnings

    _check_label_source(args)
    if args.per_item:
        check_output(args.per_item, [*args.test, args.predictions], option="--per-item")
    test = load_qa_set(args.test, what="test")
    task = args.task
    if task == "auto":
        task = "ambigqa" if all(f.lower().endswith((".json", ".json.gz"))
                                for f in test.files) else "nq-open"
    if task == "ambigqa" and args.convention:
        raise InputError(None, "--convention names an exact-match rule of NQ-open; AmbigQA "
                         "is scored with F1_ans (its own normalization)",
                         "leave out --convention for AmbigQA predictions")
    if task == "ambigqa":
        per_item, settings, warnings = ambigqa_item_scores(
            args.test, test, args.predictions, allow_missing=args.allow_missing)
    else:
        per_item, settings, warnings = nq_open_item_scores(
            test, args.predictions, allow_missing=args.allow_missing,
            conventions=args.convention)
    analysis = _analysis(args, test)
    r = score_groups(analysis, per_item, bootstrap=args.bootstrap, seed=args.seed,
                     settings=settings, warnings=warnings)
    print_warnings(r.warnings)
    if args.per_item:
        write_jsonl(args.per_item, r.item_records())
    if args.format == "json":
        print(json.dumps(r.to_json(), indent=1, ensure_ascii=False))
    else:
        print(scores_table(r))
    return 0


def run_official(args: argparse.Namespace) -> int:
    import json

    from nqkit.analysis.overlap import file_digest, load_qa_set, row_order_warnings
    from nqkit.formats.qa_overlap import read_overlap_annotations, read_row_predictions
    from nqkit.io import expand_paths
    from nqkit.metrics.qa_overlap import score_overlap_official
    from nqkit.report import format_table, print_warnings

    refs = load_qa_set(args.references, what="references")
    (path,) = expand_paths(args.annotations, what="annotations")[:1]
    r = score_overlap_official([(x.question, x.answers) for x in refs.records],
                               read_row_predictions(args.predictions),
                               read_overlap_annotations(path),
                               annotations_label=f"qa-overlap#{file_digest(path)}",
                               where=args.predictions, warnings=row_order_warnings(refs))
    print_warnings(r.warnings)
    if args.format == "official":
        print(r.official_text())
    elif args.format == "json":
        print(json.dumps({**r.official(), "signature": r.signature}, indent=1))
    else:
        rows = [(s.label, f"{s.n_examples:,}", "-" if s.exact_match is None
                 else repr(s.exact_match), "-" if s.f1_score is None else repr(s.f1_score))
                for s in r.labels]
        print(format_table(("label", "n", "exact match", "F1"), rows,
                           title="QA-Overlap evaluation (SQuAD EM and F1 x 100, row order)"))
        print(f"signature: {r.signature}")
    return 0


def run_labels(args: argparse.Namespace) -> int:
    from nqkit.analysis.overlap import load_qa_set
    from nqkit.io import check_output, write_jsonl
    from nqkit.report import print_warnings, say

    check_output(args.output, [*args.test, *args.train], option="--output")
    test = load_qa_set(args.test, what="test")
    analysis = _analysis(args, test)
    print_warnings(analysis.warnings)
    n = write_jsonl(args.output, analysis.to_annotations())
    counts = analysis.counts()
    say(f"{n:,} test questions labelled: " + ", ".join(
        f"{g} {c:,}" for g, c in counts.items() if g != "total"))
    say(f"signature: {analysis.signature()}")
    return 0


def run_leak(args: argparse.Namespace) -> int:
    import json

    from nqkit.analysis.overlap import leak_report, load_qa_set
    from nqkit.report import format_table

    test = load_qa_set(args.test, what="test")
    train = load_qa_set(args.train, what="training")
    r = leak_report(test, train, threshold=args.threshold, answer_norm=args.answer_norm)
    if args.format == "json":
        print(json.dumps(r.to_json(limit=args.examples), indent=1, ensure_ascii=False))
        return 0
    n = len(test)
    counts = r.counts()
    rows = [(what, f"{counts[key]:,}", f"{100 * counts[key] / n:.1f}")
            for what, key in (("exact duplicate questions", "exact_question_duplicates"),
                              ("answer overlap", "answer_overlap"),
                              (f"near-duplicate questions (cos >= {r.threshold:g})",
                               "near_duplicate_questions"))]
    parts = [format_table(("test questions that ...", "count", "% of test"), rows,
                          title=f"leak report: {n:,} test questions ({test.split}) against "
                          f"{len(train):,} training questions ({train.split})")]
    for title, leaks, detail in (("exact duplicate questions", r.exact_questions, None),
                                 ("answer overlap", r.answer_overlap, "shared answer"),
                                 ("near-duplicate questions", r.near_questions, "cosine")):
        if not leaks or not args.examples:
            continue
        shown = leaks[:args.examples]
        headers = ("test row", "test question", "train row", "train question",
                   *((detail,) if detail else ()))
        parts += ["", format_table(
            headers, [(x.test_row, x.test_question[:60], x.train_row,
                       (x.train_question or "")[:60], *((x.detail[:30],) if detail else ()))
                      for x in shown], right=(0, 2),
            title=f"{title}: the first {len(shown)} of {len(leaks):,}")]
    parts.append(f"signature: {r.signature}")
    print("\n".join(parts))
    return 0


SCORE_PARAMS = (
    TEST,
    Param("predictions", "--predictions", "predictions: NQ-open / EfficientQA JSON lines "
          '{"question", "prediction"} or AmbigQA {id: [answers]}', required=True,
          metavar="FILE"),
    TRAIN,
    Param("annotations", "--annotations", "official annotation file (nq-annotations.jsonl, "
          "registry name qa-overlap/nq-annotations) instead of --train", metavar="FILE"),
    Param("annotated_test", "--annotated-test", "the test file whose rows the annotation ids "
          "are (NQ: dpr/nq-test.qa)", nargs="+", metavar="ROWS"),
    Param("task", "--task", "prediction format: nq-open (also EfficientQA), ambigqa, or auto "
          "(default: ambigqa for AmbigNQ .json test files)", default="auto",
          choices=("auto", "nq-open", "ambigqa")),
    Param("convention", "--convention", "NQ-open exact-match convention (repeatable; default: "
          "every named one: orqa, squad, containment); not for AmbigQA, scored by F1_ans",
          action="append", metavar="NAME"),
    THRESHOLD, SCOPE, ANSWER_NORM,
    Param("allow_missing", "--allow-missing", "score test questions without a prediction as "
          "wrong (default: error)", action="store_true", default=False),
    Param("bootstrap", "--bootstrap", "95%% intervals from N bootstrap resamples (0: none)",
          default=0, type=int_in(0, 100_000), metavar="N"),
    Param("seed", "--seed", "seed of the resampling (default 0)", default=0, type=int_in(0)),
    format_param("table", "json"),
    Param("per_item", "--per-item", "also write one JSON line per test question (labels, "
          "shared answers, nearest training question, scores)", metavar="FILE"),
)

ORDER = 75  # where `nqkit --help` lists it
COMMANDS = (
    Command(
        "score", "a system's scores on the test-train overlap groups (Lewis et al. 2021)",
        "Score predictions on the groups of Lewis et al. (2021): every test question, "
        "those whose question paraphrases a training question (question overlap), those "
        "whose answer is a training answer (answer overlap), answer overlap only, and their "
        "complements. With --train the groups are computed: answer overlap exactly "
        "(a normalised gold answer equals a normalised training answer), question overlap "
        "by a PROXY (TF-IDF cosine of the nearest training question >= --threshold), "
        "named in the signature with the training set's split fingerprint. With "
        "--annotations the official human labels are used. Scores: exact match under every "
        "named convention and SQuAD F1 (NQ-open, EfficientQA) or F1_ans (AmbigQA), with "
        "bootstrap intervals and group differences.",
        run_score, group="overlap", params=SCORE_PARAMS),
    Command(
        "official", "the official QA-Overlap evaluation: EM and F1 per label, row order",
        "Reproduce facebookresearch/QA-Overlap's evaluate.py exactly: predictions (one "
        "answer per line, or JSON lines {id, prediction} for a name ending in json or "
        ".jsonl) and annotations joined to the references by row; SQuAD exact match and F1 "
        "(max over gold answers) x 100 per label, unrounded. --format official prints what "
        "the official script prints.",
        run_official, group="overlap", params=(
            Param("annotations", "--annotations", "annotation file in the official format",
                  required=True, metavar="FILE"),
            Param("references", "--references", "the test file the ids are rows of (NQ: "
                  "nq-test.qa.csv, registry name dpr/nq-test.qa)", nargs="+", required=True,
                  metavar="FILE"),
            Param("predictions", "--predictions", "row-ordered predictions", required=True,
                  metavar="FILE"),
            format_param("table", "json", "official"),
        )),
    Command(
        "labels", "write each test question's overlap labels in the official format",
        "Compute answer overlap and the question-overlap proxy of every test question "
        "against the training set and write them as an annotation file of the official "
        "format ({id: row, labels: [...]}, one line per test row), for `nqkit overlap "
        "official` or any tool that reads QA-Overlap annotations.",
        run_labels, group="overlap", params=(
            TEST, Param("train", "--train", TRAIN.help, nargs="+", required=True,
                        metavar="TRAIN"),
            THRESHOLD, SCOPE, ANSWER_NORM, output_param("annotation file to write (.jsonl)"),
        )),
    Command(
        "leak", "what a test file shares with a training file: duplicates, answers, "
        "near-duplicates",
        "Check a split before publishing it: test questions that occur in the training "
        "file (after NFKC, case folding and a trailing '?'), test questions whose answer is "
        "a training answer, and near-duplicate questions (nearest training question of "
        "any answer with TF-IDF cosine >= --threshold); counts and examples.",
        run_leak, group="overlap", params=(
            Param("test", "test", "test file(s) (any supported format, or a registry name)",
                  metavar="TEST"),
            Param("train", "train", "training file(s)", nargs="+", metavar="TRAIN"),
            Param("threshold", "--threshold", "near-duplicate TF-IDF cosine (default 0.8)",
                  default=0.8, type=float_in(0.0, 1.0), metavar="COS"),
            ANSWER_NORM,
            Param("examples", "--examples", "examples shown per kind (default 5)", default=5,
                  type=int_in(0), metavar="N"),
            format_param("table", "json"),
        )),
)
