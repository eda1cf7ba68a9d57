"""The official Natural Questions metrics (NQ paper §5; the competition's evaluation).

Per example, each task (long answer, short answer) gives one
:class:`AnswerStat`: does the gold have an answer, does the prediction have one, is it
correct, and the prediction's score. Then one sweep over the unique scores, from high to
low, gives precision/recall at every threshold: the best-threshold F1 and the best recall
at precision >= 0.5 / 0.75 / 0.9.

The rules, as the official evaluation applies them:

* A span is null only when all four offsets are negative. Two spans are equal when both
  have byte offsets and these are equal, **or** both have token offsets and these are equal.
* The gold has a long answer when at least ``long_threshold`` (2) of the annotators gave
  a non-null long answer; a short answer when at least ``short_threshold`` (2) gave
  non-null short spans or a yes/no answer.
* A long prediction is correct when the gold has a long answer and the predicted span
  equals the long answer of *any* non-null annotator.
* A short prediction is correct when the gold has a short answer and either its yes/no
  answer equals *any* annotator's yes/no answer, or its span set equals *any* annotator's
  span set (set equality: every predicted span matches a gold span and vice versa, so
  duplicates do not matter).
* Precision = correct / predicted-non-null, recall = correct / gold-non-null, over the
  examples whose score is >= the threshold; ties are decided together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from nqkit.errors import InputError, examples
from nqkit.formats.nq import NULL_SPAN, Annotation, Span
from nqkit.formats.nq_gold import GoldExample
from nqkit.formats.nq_predictions import NqPrediction
from nqkit.signature import make_signature

PRECISION_TARGETS: tuple[float, ...] = (0.5, 0.75, 0.9)
MissingPolicy = Literal["error", "null"]


# ------------------------------------------------------------------------- span rules

def span_equal(a: Span, b: Span) -> bool:
    """Non-null spans equal by bytes, or else by tokens (official rule)."""
    if a.is_null or b.is_null:
        return False
    if a.has_bytes and b.has_bytes and a.start_byte == b.start_byte and a.end_byte == b.end_byte:
        return True
    return (a.has_tokens and b.has_tokens
            and a.start_token == b.start_token and a.end_token == b.end_token)


def span_set_equal(gold: Sequence[Span], pred: Sequence[Span]) -> bool:
    """Every non-null predicted span equals some gold span and vice versa."""
    gold = [s for s in gold if not s.is_null]
    pred = [s for s in pred if not s.is_null]
    return (all(any(span_equal(p, g) for g in gold) for p in pred)
            and all(any(span_equal(p, g) for p in pred) for g in gold))


def gold_has_long(annotations: Sequence[Annotation], threshold: int = 2) -> bool:
    """At least ``threshold`` annotators gave a non-null long answer."""
    return sum(a.has_long for a in annotations) >= threshold


def gold_has_short(annotations: Sequence[Annotation], threshold: int = 2) -> bool:
    """At least ``threshold`` annotators gave short spans or a yes/no answer."""
    return sum(a.has_short for a in annotations) >= threshold


# --------------------------------------------------------------------- per example

@dataclass(frozen=True, slots=True)
class AnswerStat:
    """One example's outcome for one task (long or short)."""

    gold_has_answer: bool  # by the >= threshold rule
    pred_has_answer: bool  # the prediction is not null
    is_correct: bool  # non-null prediction matching a non-null gold
    score: float  # the prediction's score for this task


def _pred_has_short(pred: NqPrediction) -> bool:
    return any(not s.is_null for s in pred.short_answers) or pred.yes_no_answer != "NONE"


def score_long(annotations: Sequence[Annotation], pred: NqPrediction,
               threshold: int = 2) -> AnswerStat:
    """Score one long-answer prediction against the annotations of one example."""
    gold_has = gold_has_long(annotations, threshold)
    pred_has = not pred.long_answer.is_null
    correct = gold_has and pred_has and any(
        a.has_long and span_equal(a.long_answer, pred.long_answer) for a in annotations)
    return AnswerStat(gold_has, pred_has, correct, pred.long_answer_score)


def score_short(annotations: Sequence[Annotation], pred: NqPrediction,
                threshold: int = 2) -> AnswerStat:
    """Score one short-answer prediction against the annotations of one example."""
    gold_has = gold_has_short(annotations, threshold)
    pred_has = _pred_has_short(pred)
    correct = False
    if gold_has and pred_has:
        if pred.yes_no_answer != "NONE":
            correct = any(pred.yes_no_answer == a.yes_no_answer for a in annotations)
        else:
            correct = any(span_set_equal(a.short_answers, pred.short_answers)
                          for a in annotations)
    return AnswerStat(gold_has, pred_has, correct, pred.short_answers_score)


# ---------------------------------------------------------------------- the sweep

@dataclass(frozen=True)
class Sweep:
    """Precision/recall at every unique score, from the highest score down."""

    thresholds: tuple[float, ...]  # unique scores, descending
    precision: tuple[float, ...]  # precision when predicting at scores >= threshold
    recall: tuple[float, ...]  # recall at that threshold
    best_f1: float
    best_precision: float
    best_recall: float
    best_threshold: float
    # target -> (recall, precision, threshold) at the best recall with precision >= target
    at_precision: dict[float, tuple[float, float, float | None]] = field(default_factory=dict)


def _div(x: float, y: float) -> float:
    return x / y if y else 0.0


def sweep(stats: Iterable[AnswerStat], targets: Sequence[float] = PRECISION_TARGETS) -> Sweep:
    """The official threshold sweep over unique scores (best F1 and recall at precision)."""
    ordered = sorted(stats, key=lambda s: s.score, reverse=True)
    total_gold = sum(s.gold_has_answer for s in ordered)
    correct = predicted = 0
    points: dict[float, tuple[float, float]] = {}
    for s in ordered:
        correct += s.is_correct
        predicted += s.pred_has_answer
        # Later entries with the same score overwrite earlier ones: ties count together.
        points[s.score] = (_div(correct, predicted), _div(correct, total_gold))
    best = (0.0, 0.0, 0.0, 0.0)
    at_p: dict[float, tuple[float, float, float | None]] = {t: (0.0, 0.0, None) for t in targets}
    for thr, (p, r) in points.items():
        for t in targets:
            if p >= t and r > at_p[t][0]:
                at_p[t] = (r, p, thr)
        f1 = _div(2 * p * r, p + r)
        if f1 > best[0]:
            best = (f1, p, r, thr)
    return Sweep(
        thresholds=tuple(points), precision=tuple(v[0] for v in points.values()),
        recall=tuple(v[1] for v in points.values()),
        best_f1=best[0], best_precision=best[1], best_recall=best[2], best_threshold=best[3],
        at_precision=at_p,
    )


def official_keys(s: Sweep, prefix: str) -> dict[str, float]:
    """The official output keys of one task (``long-`` or ``short-``)."""
    out = {
        f"{prefix}best-threshold-f1": s.best_f1,
        f"{prefix}best-threshold-precision": s.best_precision,
        f"{prefix}best-threshold-recall": s.best_recall,
        f"{prefix}best-threshold": s.best_threshold,
    }
    for t, (r, p, _) in s.at_precision.items():
        out[f"{prefix}recall-at-precision>={t:.2}"] = r
        out[f"{prefix}precision-at-precision>={t:.2}"] = p
    return out


# ---------------------------------------------------------------------- the whole run

@dataclass(frozen=True)
class NqResult:
    """Everything one evaluation produced."""

    metrics: dict[str, float]  # the 20 official keys
    long: Sweep
    short: Sweep
    example_ids: tuple[int | str, ...]  # in gold order, aligned with the stats below
    long_stats: tuple[AnswerStat, ...]
    short_stats: tuple[AnswerStat, ...]
    signature: str
    num_predicted: int  # examples that had a prediction
    num_examples: int  # examples in the gold


def check_ids(gold_ids: Iterable[int | str], pred_ids: Iterable[int | str], *,
              missing: MissingPolicy = "error", allow_extra: bool = False,
              where: str | None = None) -> None:
    """Raise InputError on missing (unless allowed) or extra prediction ids."""
    gold_set, pred_set = set(gold_ids), set(pred_ids)
    extra = pred_set - gold_set
    if extra and not allow_extra:
        few = examples(sorted(extra, key=str))
        raise InputError(where, f"{len(extra):,} predicted example ids are not in the gold data "
                         f"(e.g. {few})",
                         "check that the gold files match the predictions, or pass --allow-extra")
    missing_ids = gold_set - pred_set
    if missing_ids and missing == "error":
        few = examples(sorted(missing_ids, key=str))
        raise InputError(where, f"{len(missing_ids):,} of {len(gold_set):,} gold examples have no "
                         f"prediction (e.g. {few})",
                         "predict every example, or pass --allow-missing to score them as null")


def evaluate_nq(gold: Mapping[int | str, GoldExample | Sequence[Annotation]],
                predictions: Mapping[int | str, NqPrediction], *,
                long_threshold: int = 2, short_threshold: int = 2,
                missing: MissingPolicy = "error", allow_extra: bool = False,
                where: str | None = None) -> NqResult:
    """Evaluate NQ predictions against gold annotations with the official rules.

    ``gold`` maps example ids to annotations (or :class:`GoldExample`); ``predictions`` maps
    example ids to predictions. With ``missing="null"`` an example without prediction is
    scored as a null prediction (it can only lower recall); the default raises.
    """
    check_ids(gold, predictions, missing=missing, allow_extra=allow_extra, where=where)
    ids = tuple(gold)
    long_stats: list[AnswerStat] = []
    short_stats: list[AnswerStat] = []
    for ex_id in ids:
        g = gold[ex_id]
        anns = g.annotations if isinstance(g, GoldExample) else g
        pred = predictions.get(ex_id) or null_prediction(ex_id)
        long_stats.append(score_long(anns, pred, long_threshold))
        short_stats.append(score_short(anns, pred, short_threshold))
    long_sweep, short_sweep = sweep(long_stats), sweep(short_stats)
    metrics = {**official_keys(long_sweep, "long-"), **official_keys(short_sweep, "short-")}
    n_pred = sum(1 for i in ids if i in predictions)
    return NqResult(
        metrics=metrics, long=long_sweep, short=short_sweep, example_ids=ids,
        long_stats=tuple(long_stats), short_stats=tuple(short_stats),
        signature=nq_signature(long_threshold, short_threshold, missing),
        num_predicted=n_pred, num_examples=len(ids),
    )


def null_prediction(example_id: int | str) -> NqPrediction:
    """A prediction of no answer, with the lowest possible scores."""
    return NqPrediction(example_id, NULL_SPAN, float("-inf"), (), float("-inf"), "NONE")


def nq_signature(long_threshold: int, short_threshold: int, missing: MissingPolicy) -> str:
    return make_signature("nq", {"long-thr": long_threshold, "short-thr": short_threshold,
                                 "missing": missing})
