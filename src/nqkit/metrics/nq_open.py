"""NQ-open exact match, as the official ORQA evaluation computes it.

Reproduces ``language/orqa/evaluation/evaluate_predictions.py``: references and
predictions are joined by the question string (a later duplicate replaces an earlier one,
as in a dict); a prediction is correct when it equals one gold answer after NFD
normalization (:func:`nqkit.text.normalize.normalize_answer_nfd`), or, for regex
references (CuratedTrec), when a gold pattern matches at the start of the prediction
(case-insensitive, multiline). A pattern that does not compile, which the official
script scores as never matching, is refused here, and so is one whose match runs longer
than a second (catastrophic backtracking). Accuracy is
``num_correct / num_total`` over every reference question; a missing prediction is wrong.

Beyond the official script the result counts gold answers that normalize to the empty
string (they make an empty prediction correct: 4 questions in NQ-open dev) and keeps one
record per question for error analysis. The signature names the split of the references
(``split:nq-open/dev``, :mod:`nqkit.splits`). Predictions of which no question is in the
references (another split, e.g. EfficientQA dev against NQ-open dev) are refused, naming
both splits, even with ``missing="wrong"``, where they would score 0; correct answers that
are empty predictions matching an empty-normalizing gold answer, and runs whose
predictions are all empty, carry warnings (:class:`nqkit.signature.ResultWarning`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import regex as rx  # the regex package: re's syntax plus a match timeout

from nqkit.conventions import get_convention
from nqkit.errors import InputError, examples, for_example
from nqkit.formats.harness import PLAIN
from nqkit.formats.nq_open import NqOpenExample, NqOpenPrediction
from nqkit.signature import ResultWarning, make_signature
from nqkit.splits import CUSTOM, check_split, describe
from nqkit.text.extract import get_extractor

__all__ = ["NqOpenItem", "NqOpenResult", "regex_match", "score_nq_open"]

MISSING_POLICIES = ("error", "wrong")


@dataclass(frozen=True, slots=True)
class NqOpenItem:
    """The score of one reference question."""

    question: str
    prediction: str | None  # None when the question has no prediction
    correct: bool
    matched_answer: str | None  # the first gold answer that matched, if any
    answers: tuple[str, ...]
    extracted: str | None = None  # the answer --extract took from the prediction (if any)


@dataclass(frozen=True)
class NqOpenResult:
    """Official numbers plus diagnostics."""

    accuracy: float
    num_correct: int
    num_total: int
    missing_predictions: int
    signature: str
    empty_gold_questions: int = 0  # questions with a gold answer normalizing to ""
    empty_gold_answers: int = 0  # gold answer strings normalizing to ""
    duplicate_references: int = 0  # reference lines whose question appeared before
    duplicate_predictions: int = 0
    unused_predictions: int = 0  # predictions for questions not in the gold
    # questions the rule credits with no gold answer given verbatim (its ceiling's gap;
    # EmConvention.creditable), in gold order
    uncreditable: tuple[str, ...] = ()
    convention: str = "orqa"  # the exact-match rule's name
    extract: str = "none"  # the answer extraction's name (nqkit.text.extract)
    items: list[NqOpenItem] = field(default_factory=list, repr=False)
    warnings: tuple[ResultWarning, ...] = ()  # what limits the meaning of the accuracy

    def official(self) -> dict[str, float | int]:
        """The four numbers the official script reports."""
        return {
            "accuracy": self.accuracy,
            "num_correct": self.num_correct,
            "num_total": self.num_total,
            "missing_predictions": self.missing_predictions,
        }


# A pattern that backtracks catastrophically (``(a+)+$``) would otherwise run for minutes
# on one prediction; the regex module stops a match after this many seconds.
REGEX_TIMEOUT = 1.0
_FLAGS = rx.IGNORECASE | rx.UNICODE | rx.MULTILINE | rx.VERSION0  # as re


@lru_cache(maxsize=65536)
def _compile(pattern: str) -> rx.Pattern[str] | None:
    try:
        return rx.compile(pattern, flags=_FLAGS)
    except rx.error:
        return None


def regex_match(prediction: str, pattern: str, *, timeout: float = REGEX_TIMEOUT) -> bool:
    """True when ``pattern`` matches at the start of ``prediction`` (ORQA regex scoring).

    A pattern that does not compile never matches, as in the official function
    (:func:`score_nq_open` refuses such references instead). Raises :class:`TimeoutError`
    when one match takes longer than ``timeout`` seconds.
    """
    compiled = _compile(pattern)
    return compiled is not None and compiled.match(prediction, timeout=timeout) is not None


def _first_matching(prediction: str, patterns: tuple[str, ...], where: str | None
                    ) -> str | None:
    """The first pattern matching ``prediction``; InputError at ``where`` for one whose
    match runs past :data:`REGEX_TIMEOUT`."""
    for pattern in patterns:
        try:
            if regex_match(prediction, pattern):
                return pattern
        except TimeoutError:
            raise InputError(where, f"the answer pattern {examples([pattern], quote=True)} "
                             f"took over {REGEX_TIMEOUT:g} s to match "
                             f"{examples([prediction], quote=True, width=30)} "
                             "(catastrophic backtracking)",
                             "avoid nested repetition such as (a|aa)+") from None
    return None


def check_patterns(references: Iterable[tuple[str | None, tuple[str, ...]]]) -> None:
    """Raise :class:`InputError` at the reference's ``file:line`` for a pattern that does
    not compile (the official script would silently score it as never matching)."""
    for where, patterns in references:
        for pattern in patterns:
            try:
                rx.compile(pattern, flags=_FLAGS)
            except rx.error as e:
                raise InputError(where, f"the answer pattern {pattern!r:.60} is not a valid "
                                 f"regular expression ({e})",
                                 "fix the pattern, or drop --regex if the answers are plain "
                                 "strings") from None


def nq_open_signature(*, answer_field: str, regex: bool, missing: str,
                      warnings: Iterable[ResultWarning] = (), convention: str = "orqa",
                      split: str = CUSTOM, extract: str = "none",
                      predictions_format: str = PLAIN, adjudicated: str | None = None) -> str:
    """``nq-open|split:<split>|answer-field:...|[extract:...|]match:...|missing:...|v...``;
    ``split`` is the label of the references' questions (:func:`nqkit.splits.identify`);
    ``extract`` (:mod:`nqkit.text.extract`) appears when it is not ``none``;
    ``preds:<format>`` follows when the predictions were read from another shape than
    nqkit's own (:mod:`nqkit.formats.harness`: ``preds:lm-eval-samples``, ...), so that a
    number says where its predictions came from; ``adjudicated:<fingerprint>`` last when
    the result also carries an adjudicated exact match (:mod:`nqkit.metrics.adjudicated`),
    naming the judgments file by the first 12 hex digits of its SHA-256."""
    # the official rule keeps its historical name, em-nfd; the others are em-<convention>
    match = "regex" if regex else "em-nfd" if convention == "orqa" else f"em-{convention}"
    settings = {"split": split, "answer-field": answer_field}
    if extract != "none":
        settings["extract"] = extract
    settings.update({"match": match, "missing": missing})
    if predictions_format != PLAIN:
        settings["preds"] = predictions_format
    if adjudicated is not None:
        settings["adjudicated"] = adjudicated
    return make_signature("nq-open", settings, warnings)


def score_nq_open(
    references: Iterable[NqOpenExample],
    predictions: Iterable[NqOpenPrediction],
    *,
    regex: bool = False,
    missing: str = "error",
    answer_field: str = "answer",
    where: str | None = None,
    convention: str = "orqa",
    extract: str = "none",
    predictions_format: str = PLAIN,
    adjudicated: str | None = None,
) -> NqOpenResult:
    """Score predictions against references.

    ``missing`` is ``"error"`` (raise :class:`InputError` counting the missing questions and
    listing a few) or ``"wrong"`` (score them as wrong, as the official script does).
    ``answer_field`` only enters the signature; ``where`` names the predictions in messages.
    ``convention`` names the exact-match rule (:mod:`nqkit.metrics.em_conventions`): the
    official ``orqa`` by default; the others are separately signed variants. ``extract``
    names the answer extraction applied to each prediction first
    (:mod:`nqkit.text.extract`; ``none``: scored as given). ``predictions_format``
    (:attr:`~nqkit.formats.nq_open.NqOpenPredictions.format`) and ``adjudicated`` (the
    judgments' fingerprint) only enter the signature.
    """
    rule = get_convention(convention)
    extractor = get_extractor(extract)
    if regex and rule.name != "orqa":
        raise InputError(None, f"regular-expression gold answers have no {rule.name!r} "
                         "exact-match rule", "score regex gold answers with --convention orqa")
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, not {missing!r}")
    refs: dict[str, tuple[str, ...]] = {}
    ref_where: dict[str, str | None] = {}
    dup_refs = 0
    for ex in references:
        if ex.question in refs:
            dup_refs += 1
        refs[ex.question] = ex.answers
        ref_where[ex.question] = ex.where
    if regex:
        check_patterns((ref_where[q], answers) for q, answers in refs.items())
    if not refs:
        raise InputError(None, "the gold holds no question", "give the NQ-open gold")
    preds: dict[str, str] = {}
    dup_preds = 0
    for p in predictions:
        if p.question in preds:
            dup_preds += 1
        preds[p.question] = p.prediction

    absent = [q for q in refs if q not in preds]
    # predictions made for another known split are refused, naming both splits
    split = check_split(refs, preds, where=where)
    unused = split.unused
    if absent and missing == "error":
        extra = (f"; {unused:,} predictions are for questions not in the gold "
                 "(another split?)" if unused else "")
        raise InputError(
            None,
            f"{len(absent):,} of {len(refs):,} gold questions have no prediction "
            f"({for_example(repr(q) for q in absent)}){extra}",
            "predict every question (questions must match exactly), or pass "
            "--allow-missing to score them as wrong",
        )

    items: list[NqOpenItem] = []
    uncreditable: list[str] = []
    fell_back = 0
    num_correct = 0
    empty_q = empty_a = 0
    empty_preds = empty_matches = 0
    for question, answers in refs.items():
        if not regex:
            n_empty = sum(1 for a in answers if rule.normalize(a) == "")
            empty_a += n_empty
            empty_q += n_empty > 0
            if not rule.creditable(answers):
                uncreditable.append(question)
        raw = preds.get(question)
        pred, extracted = raw, None
        if raw is not None and extractor.name != "none":
            pred, found = extractor.apply(raw)
            extracted = pred
            fell_back += not found
        matched: str | None = None
        if pred is not None:
            if regex:
                matched = _first_matching(pred, answers, ref_where[question])
            else:
                norm_pred = rule.normalize_prediction(pred)
                matched = rule.match(pred, answers)
                empty_preds += norm_pred == ""
                empty_matches += norm_pred == "" and matched is not None
        correct = matched is not None
        num_correct += correct
        items.append(NqOpenItem(question, raw, correct, matched, answers, extracted))

    total = len(refs)
    predicted = total - len(absent)
    warnings: list[ResultWarning] = []
    if predicted and empty_preds == predicted:
        warnings.append(ResultWarning(
            "all-empty", f"all {predicted:,} predictions are empty after normalization, so "
            "the only correct ones are questions with a gold answer that normalizes to the "
            "empty string — check that the system wrote its answers"))
    elif empty_matches:
        warnings.append(ResultWarning(
            "empty-match", f"{empty_matches:,} of the {num_correct:,} correct answers are "
            "empty predictions that equal a gold answer normalizing to the empty string "
            "(counted as correct, as the official script does)"))
    if fell_back:
        warnings.append(ResultWarning(
            "extract-fallback", f"--extract {extractor.name} found nothing to extract in "
            f"{fell_back:,} of the {predicted:,} predictions; their first line was scored "
            "(check the prompt's answer format)"))
    if absent and unused:
        other = split.unused_split
        which = (f" (they are {describe(other)})" if other is not None and other.known
                 else "")
        warnings.append(ResultWarning(
            "other-split", f"{unused:,} predictions are for questions not in the gold"
            f"{which} and {len(absent):,} gold questions have no prediction (scored "
            "wrong) — were the predictions made for another split?"))
    return NqOpenResult(
        accuracy=num_correct / float(total),
        num_correct=num_correct,
        num_total=total,
        missing_predictions=len(absent),
        signature=nq_open_signature(answer_field=answer_field, regex=regex, missing=missing,
                                    warnings=warnings, convention=rule.name,
                                    split=split.references.label, extract=extractor.name,
                                    predictions_format=predictions_format,
                                    adjudicated=adjudicated),
        empty_gold_questions=empty_q,
        empty_gold_answers=empty_a,
        duplicate_references=dup_refs,
        duplicate_predictions=dup_preds,
        unused_predictions=unused,
        uncreditable=tuple(uncreditable),
        convention=rule.name,
        extract=extractor.name,
        items=items,
        warnings=tuple(warnings),
    )
