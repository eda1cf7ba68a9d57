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

Beyond the official script, inputs that can only give a zero are refused with the reason
(no predicted id in the gold; a threshold above the number of annotations; predicted spans
whose only offsets are of a kind the gold lacks, such as byte-only predictions against the
token-only simplified gold; gold without any answer), and numbers that are right but
say little carry warnings (:class:`nqkit.signature.ResultWarning`) that mark the signature.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from nqkit.errors import InputError, for_example
from nqkit.formats.nq import NULL_SPAN, Annotation, Span
from nqkit.formats.nq_gold import GoldExample
from nqkit.formats.nq_predictions import NqPrediction
from nqkit.metrics.prf import f1_score, safe_divide
from nqkit.signature import ResultWarning, make_signature

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
    return sum([a.has_long for a in annotations]) >= threshold


def gold_has_short(annotations: Sequence[Annotation], threshold: int = 2) -> bool:
    """At least ``threshold`` annotators gave short spans or a yes/no answer."""
    return sum([a.has_short for a in annotations]) >= threshold


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
    p = pred.long_answer
    pred_has = not p.is_null
    votes = 0  # the rule of gold_has_long and the match in one pass over the annotators
    match = False
    for a in annotations:
        if not a.long_answer.is_null:
            votes += 1
            match = match or (pred_has and span_equal(a.long_answer, p))
    gold_has = votes >= threshold
    return AnswerStat(gold_has, pred_has, gold_has and match, pred.long_answer_score)


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
    # answers predicted at scores >= threshold; at 0 the precision is 0/0, which the
    # official sweep reports as 0 (a point of no curve: plots leave it out)
    predicted: tuple[int, ...] = ()




def sweep(stats: Iterable[AnswerStat], targets: Sequence[float] = PRECISION_TARGETS) -> Sweep:
    """The official threshold sweep over unique scores (best F1 and recall at precision)."""
    ordered = sorted(stats, key=lambda s: s.score, reverse=True)
    total_gold = sum(s.gold_has_answer for s in ordered)
    correct = predicted = 0
    points: dict[float, tuple[float, float]] = {}
    num_predicted: dict[float, int] = {}
    for s in ordered:
        correct += s.is_correct
        predicted += s.pred_has_answer
        # Later entries with the same score overwrite earlier ones: ties count together.
        points[s.score] = (safe_divide(correct, predicted), safe_divide(correct, total_gold))
        num_predicted[s.score] = predicted
    best = (0.0, 0.0, 0.0, 0.0)
    at_p: dict[float, tuple[float, float, float | None]] = {t: (0.0, 0.0, None) for t in targets}
    for thr, (p, r) in points.items():
        for t in targets:
            if p >= t and r > at_p[t][0]:
                at_p[t] = (r, p, thr)
        f1 = f1_score(p, r)
        if f1 > best[0]:
            best = (f1, p, r, thr)
    return Sweep(
        thresholds=tuple(points), precision=tuple(v[0] for v in points.values()),
        recall=tuple(v[1] for v in points.values()),
        best_f1=best[0], best_precision=best[1], best_recall=best[2], best_threshold=best[3],
        at_precision=at_p, predicted=tuple(num_predicted.values()),
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
    warnings: tuple[ResultWarning, ...] = ()  # what limits the meaning of the numbers


def check_ids(gold_ids: Iterable[int | str], pred_ids: Iterable[int | str], *,
              missing: MissingPolicy = "error", allow_extra: bool = False,
              where: str | None = None) -> None:
    """Raise InputError on missing (unless allowed) or extra prediction ids, and always when
    no predicted id is in the gold (every example would be scored as null)."""
    gold_set, pred_set = set(gold_ids), set(pred_ids)
    if pred_set and not pred_set & gold_set:
        raise InputError(where, f"none of the {len(pred_set):,} predicted example ids is in "
                         f"the gold data ({for_example(sorted(pred_set, key=str))}), so every "
                         "example would be scored as null",
                         "score the predictions against the gold of the split they were "
                         "made for")
    extra = pred_set - gold_set
    if extra and not allow_extra:
        raise InputError(where, f"{len(extra):,} predicted example ids are not in the gold data "
                         f"({for_example(sorted(extra, key=str))})",
                         "check that the gold files match the predictions, or pass --allow-extra")
    missing_ids = gold_set - pred_set
    if missing_ids and missing == "error":
        raise InputError(where, f"{len(missing_ids):,} of {len(gold_set):,} gold examples have no "
                         f"prediction ({for_example(sorted(missing_ids, key=str))})",
                         "predict every example, or pass --allow-missing to score them as null")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def check_gold(annotations: Mapping[int | str, Sequence[Annotation]], *,
               long_threshold: int = 2, short_threshold: int = 2,
               where: str | None = None) -> list[ResultWarning]:
    """Refuse thresholds the gold's annotation count cannot reach; warn when only some
    examples have too few annotations.

    With ``k`` annotations an example can have a gold answer only when the threshold is at
    most ``k``: NQ train has 1 annotation per example, so the official threshold 2 makes
    every F1 0 there; ``--long-threshold 6`` does the same on 5-way dev.
    """
    counts = Counter(len(a) for a in annotations.values())
    most = max(counts)
    per = (f"{_plural(most, 'annotation')} per example" if len(counts) == 1
           else f"at most {_plural(most, 'annotation')} per example")
    if most == 0:
        raise InputError(where, "the gold has no annotations (0 per example), so there is "
                         "nothing to score against",
                         "score against annotated NQ files (dev or train), not unannotated input")
    too_high = [f"--{name}-threshold {thr}" for name, thr in
                (("long", long_threshold), ("short", short_threshold)) if thr > most]
    if too_high:
        fix = ("pass --long-threshold 1 --short-threshold 1" if most == 1 else
               f"pass thresholds of at most {most} (the official value is 2, for 5-way gold)")
        raise InputError(where, f"this gold has {per}, so {' and '.join(too_high)} can never "
                         "be reached and every F1 would be 0", fix)
    need = max(long_threshold, short_threshold)
    few = [i for i, a in annotations.items() if len(a) < need]
    if not few:
        return []
    return [ResultWarning(
        "few-annotations",
        f"{len(few):,} of {len(annotations):,} gold examples have fewer than {need} "
        f"annotations ({for_example(few)}), so they can never have a gold answer under "
        f"--long-threshold {long_threshold} --short-threshold {short_threshold}; they lower "
        "recall whatever the predictions — score them separately with thresholds they can "
        "reach")]


_BYTES, _TOKENS = 1, 2
_KIND_NAMES = {_BYTES: "byte", _TOKENS: "token"}


def _kinds(s: Span) -> int:
    """The offsets a span has, as bits: 1 bytes, 2 tokens (0 for a null span)."""
    return (_BYTES if s.has_bytes else 0) | (_TOKENS if s.has_tokens else 0)


def _both_kinds(s: Span) -> bool:
    """Null, or with both byte and token offsets (``is_null or has_bytes and has_tokens``,
    written out: this runs for every predicted span)."""
    sb, eb, st, et = s.start_byte, s.end_byte, s.start_token, s.end_token
    return (sb < 0 and eb < 0 and st < 0 and et < 0) or (
        sb >= 0 and eb >= 0 and st >= 0 and et >= 0)


def check_span_kinds(annotations: Mapping[int | str, Sequence[Annotation]],
                     predictions: Mapping[int | str, NqPrediction],
                     where: str | None = None) -> None:
    """Refuse predicted spans whose only offsets are of a kind the gold spans lack.

    Spans match by bytes or by tokens; a byte-only prediction can never equal a span of the
    simplified format (tokens only), nor a token-only prediction a byte-only gold span, so
    a right answer would be scored as wrong.
    """
    found: dict[tuple[str, str], dict[str, list[int | str]]] = {}
    for ex_id, anns in annotations.items():
        pred = predictions.get(ex_id)
        if pred is None:
            continue
        # spans with both offsets (the usual case) match any gold kind: nothing to check
        if _both_kinds(pred.long_answer) and all([_both_kinds(sp)
                                                  for sp in pred.short_answers]):
            continue
        gold_long = gold_short = 0
        for a in anns:
            gold_long |= _kinds(a.long_answer)
            for sp in a.short_answers:
                gold_short |= _kinds(sp)
        for task, gold_kinds, spans in (("long", gold_long, (pred.long_answer,)),
                                        ("short", gold_short, pred.short_answers)):
            if not gold_kinds:
                continue
            for sp in spans:
                kinds = _kinds(sp)
                if kinds and not kinds & gold_kinds:
                    # one kind each: a span with both would share one with any gold
                    key = (_KIND_NAMES[kinds], _KIND_NAMES[gold_kinds])
                    found.setdefault(key, {"long": [], "short": []})[task].append(ex_id)
                    break
    for (pred_kind, gold_kind), ids in sorted(found.items()):
        parts = [f"{len(v):,} {task}-answer" for task, v in ids.items() if v]
        n = sum(len(v) for v in ids.values())
        what = " and ".join(parts) + (" prediction" if n == 1 else " predictions")
        fix = ("use the original-format gold nq-dev-*.jsonl.gz, which has byte offsets, or "
               "give token offsets in the predictions" if pred_kind == "byte" else
               "give byte offsets in the predictions, or use gold with token offsets (the "
               "original or simplified NQ files)")
        gold_what = ("token offsets only (the simplified format)" if gold_kind == "token"
                     else "byte offsets only")
        raise InputError(where, f"{what} {'has' if n == 1 else 'have'} only {pred_kind} "
                         "offsets, but the gold has "
                         f"{gold_what}, so they could never match "
                         f"({for_example(ids['long'] + ids['short'])})", fix)


def _result_warnings(long_stats: Sequence[AnswerStat], short_stats: Sequence[AnswerStat],
                     predictions: Iterable[NqPrediction], long_threshold: int,
                     short_threshold: int, where: str | None) -> list[ResultWarning]:
    """Refuse gold without any answer; warn on tasks without gold or without predictions."""
    n = len(long_stats)
    gold_long = sum(s.gold_has_answer for s in long_stats)
    gold_short = sum(s.gold_has_answer for s in short_stats)
    if not gold_long and not gold_short:
        raise InputError(where, f"none of the {n:,} gold examples has a long answer (>= "
                         f"{long_threshold} annotators) or a short answer (>= {short_threshold}), "
                         "so every recall and F1 would be 0 whatever the predictions",
                         "score on gold examples that have answers (e.g. a whole NQ dev shard)")
    out: list[ResultWarning] = []
    for task, gold, thr in (("long", gold_long, long_threshold),
                            ("short", gold_short, short_threshold)):
        if not gold:
            out.append(ResultWarning(
                f"no-gold-{task}",
                f"none of the {n:,} gold examples has a {task} answer (>= {thr} annotators), "
                f"so {task}-answer recall and F1 are 0 whatever the predictions — score on "
                f"more examples to measure {task} answers"))
    preds = list(predictions)
    has_long = any(not p.long_answer.is_null for p in preds)
    has_short = any(_pred_has_short(p) for p in preds)
    if preds and not has_long and not has_short:
        out.append(ResultWarning(
            "all-null", f"all {len(preds):,} predictions are null (no long answer, no short "
            "answer, no yes/no answer), so every F1 is 0 — check that the system wrote its "
            "answers"))
    else:
        for task, has in (("long", has_long), ("short", has_short)):
            if preds and not has:
                out.append(ResultWarning(
                    f"null-{task}", f"none of the {len(preds):,} predictions has a {task} "
                    f"answer, so {task}-answer F1 is 0"))
    return out


def evaluate_nq(gold: Mapping[int | str, GoldExample | Sequence[Annotation]],
                predictions: Mapping[int | str, NqPrediction], *,
                long_threshold: int = 2, short_threshold: int = 2,
                missing: MissingPolicy = "error", allow_extra: bool = False,
                where: str | None = None, gold_where: str | None = None) -> NqResult:
    """Evaluate NQ predictions against gold annotations with the official rules.

    ``gold`` maps example ids to annotations (or :class:`GoldExample`); ``predictions`` maps
    example ids to predictions. With ``missing="null"`` an example without prediction is
    scored as a null prediction (it can only lower recall); the default raises.
    ``where``/``gold_where`` name the predictions and the gold in messages. Inputs that can
    only give zeros raise :class:`InputError`; see :func:`check_gold`,
    :func:`check_span_kinds` and the warnings in :attr:`NqResult.warnings`.
    """
    check_ids(gold, predictions, missing=missing, allow_extra=allow_extra, where=where)
    ids = tuple(gold)
    anns_by_id: dict[int | str, Sequence[Annotation]] = {}
    for ex_id in ids:
        g = gold[ex_id]
        anns_by_id[ex_id] = g.annotations if isinstance(g, GoldExample) else g
    warnings = check_gold(anns_by_id, long_threshold=long_threshold,
                          short_threshold=short_threshold, where=gold_where)
    check_span_kinds(anns_by_id, predictions, where=where)
    long_stats: list[AnswerStat] = []
    short_stats: list[AnswerStat] = []
    for ex_id in ids:
        anns = anns_by_id[ex_id]
        pred = predictions.get(ex_id) or null_prediction(ex_id)
        long_stats.append(score_long(anns, pred, long_threshold))
        short_stats.append(score_short(anns, pred, short_threshold))
    warnings += _result_warnings(long_stats, short_stats,
                                 (p for i, p in predictions.items() if i in anns_by_id),
                                 long_threshold, short_threshold, gold_where)
    long_sweep, short_sweep = sweep(long_stats), sweep(short_stats)
    metrics = {**official_keys(long_sweep, "long-"), **official_keys(short_sweep, "short-")}
    n_pred = sum(1 for i in ids if i in predictions)
    return NqResult(
        metrics=metrics, long=long_sweep, short=short_sweep, example_ids=ids,
        long_stats=tuple(long_stats), short_stats=tuple(short_stats),
        signature=nq_signature(long_threshold, short_threshold, missing, warnings),
        num_predicted=n_pred, num_examples=len(ids), warnings=tuple(warnings),
    )


def null_prediction(example_id: int | str) -> NqPrediction:
    """A prediction of no answer, with the lowest possible scores."""
    return NqPrediction(example_id, NULL_SPAN, float("-inf"), (), float("-inf"), "NONE")


def nq_signature(long_threshold: int, short_threshold: int, missing: MissingPolicy,
                 warnings: Iterable[ResultWarning] = ()) -> str:
    return make_signature("nq", {"long-thr": long_threshold, "short-thr": short_threshold,
                                 "missing": missing}, warnings)
