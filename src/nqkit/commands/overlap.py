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

This module declares the commands; the evaluation is :mod:`nqkit.tasks.overlap`, the
labels :mod:`nqkit.analysis.overlap`.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command
from nqkit.tasks.overlap import LABELS_PARAMS, LEAK_PARAMS, OFFICIAL_PARAMS, SCORE_PARAMS


def run_score(args: argparse.Namespace) -> int:
    from nqkit.tasks.overlap import emit_scores, score_predictions

    emit_scores(score_predictions(vars(args)), format=args.format, per_item=args.per_item)
    return 0


def run_official(args: argparse.Namespace) -> int:
    from nqkit.tasks.overlap import emit_official

    emit_official(args.annotations, args.gold, args.predictions, format=args.format)
    return 0


def run_labels(args: argparse.Namespace) -> int:
    from nqkit.tasks.overlap import write_labels

    write_labels(args.gold, args.train, args.output, answer_norm=args.answer_norm,
                 threshold=args.threshold, scope=args.scope)
    return 0


def run_leak(args: argparse.Namespace) -> int:
    from nqkit.tasks.overlap import emit_leak, leak_files

    gold, train = leak_files(args.gold, args.train, args.legacy)
    emit_leak(gold, train, threshold=args.threshold, answer_norm=args.answer_norm,
              examples=args.examples, format=args.format)
    return 0


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
        run_official, group="overlap", params=OFFICIAL_PARAMS),
    Command(
        "labels", "write each test question's overlap labels in the official format",
        "Compute answer overlap and the question-overlap proxy of every test question "
        "against the training set and write them as an annotation file of the official "
        "format ({id: row, labels: [...]}, one line per test row), for `nqkit overlap "
        "official` or any tool that reads QA-Overlap annotations.",
        run_labels, group="overlap", params=LABELS_PARAMS),
    Command(
        "leak", "what a test file shares with a training file: duplicates, answers, "
        "near-duplicates",
        "Check a split before publishing it: test questions that occur in the training "
        "file (after NFKC, case folding and a trailing '?'), test questions whose answer is "
        "a training answer, and near-duplicate questions (nearest training question of "
        "any answer with TF-IDF cosine >= --threshold); counts and examples.",
        run_leak, group="overlap", params=LEAK_PARAMS),
)
