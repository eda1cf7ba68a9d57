"""The NQ task: gold + predictions -> official metrics, analyses and their presentation.

``nqkit eval nq --gold 'nq-dev-*.jsonl.gz' --predictions preds.json`` and the browser call
this; the scoring itself is :func:`nqkit.metrics.nq.evaluate_nq`, the breakdowns and the
PR curve are :mod:`nqkit.analysis.nq_breakdown` and :mod:`nqkit.analysis.plots`, the
intervals :mod:`nqkit.stats` (the threshold re-tuned in every resample).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nqkit.errors import InputError
from nqkit.formats.gold_cache import load_nq_gold, start_nq_gold
from nqkit.formats.nq_gold import GoldExample
from nqkit.formats.nq_predictions import NqPrediction, check_id_types, read_nq_predictions
from nqkit.io import ExpandedPaths, PathsLike, expand_paths, gc_paused
from nqkit.metrics.nq import NqResult, check_gold, evaluate_nq
from nqkit.report import progress
from nqkit.settings import Param
from nqkit.tasks.base import TASKS, Coverage, Result, Settings, Task
from nqkit.vocabulary import GOLD_CACHE, LONG_THRESHOLD, SHORT_THRESHOLD

if TYPE_CHECKING:
    from nqkit.analysis.nq_breakdown import GroupScore

TYPE_ORDER = ("paragraph", "table", "table row", "list", "list item", "other", "null")
WORD_ORDER = ("who", "when", "where", "what", "how", "which", "other")


def check_thresholds(long_threshold: int, short_threshold: int) -> None:
    if long_threshold < 1 or short_threshold < 1:
        raise InputError(None, f"--long-threshold and --short-threshold must be at least 1, "
                         f"found {long_threshold} and {short_threshold}",
                         "the official value is 2")


def gold_label(gold: PathsLike) -> str:
    """How messages name the gold: the paths or globs as given."""
    if isinstance(gold, ExpandedPaths):
        return " ".join(gold.given)
    if isinstance(gold, str | os.PathLike):
        return os.fspath(gold)
    return " ".join(os.fspath(g) for g in gold)


def load_gold_for_eval(gold: PathsLike, *, long_threshold: int = 2, short_threshold: int = 2,
                       with_types: bool = False, cache: bool = True,
                       ) -> dict[int | str, GoldExample]:
    """Load gold annotations and refuse thresholds they cannot reach, before any work."""
    check_thresholds(long_threshold, short_threshold)
    gold_ex = load_nq_gold(expand_paths(gold, what="gold"), with_types=with_types, cache=cache)
    check_gold({i: g.annotations for i, g in gold_ex.items()}, long_threshold=long_threshold,
               short_threshold=short_threshold, where=gold_label(gold))
    return gold_ex


def evaluate_files(gold: PathsLike, predictions: str, *, long_threshold: int = 2,
                   short_threshold: int = 2, allow_missing: bool = False,
                   allow_extra: bool = False, with_types: bool = False, cache: bool = True,
                   gold_examples: dict[int | str, GoldExample] | None = None,
                   ) -> tuple[NqResult, dict[int | str, GoldExample]]:
    """Read the gold and a predictions file and score them with the official rules.

    ``gold_examples``, when given, are the already loaded annotations of ``gold``.
    """
    check_thresholds(long_threshold, short_threshold)
    gold_files = expand_paths(gold, what="gold")
    with gc_paused():  # tens of thousands of records, no cycles among them
        if gold_examples is not None:
            preds = read_nq_predictions(predictions)
            gold_ex = gold_examples
        else:
            # the predictions are read while worker processes read the gold; an error in
            # them still comes first, as before, and stops the workers
            with start_nq_gold(gold_files, with_types=with_types, cache=cache) as pending:
                preds = read_nq_predictions(predictions)
                gold_ex = pending.result(progress=progress)
        result = score_predictions(gold_ex, preds, predictions, long_threshold=long_threshold,
                                   short_threshold=short_threshold, allow_missing=allow_missing,
                                   allow_extra=allow_extra, gold_where=gold_label(gold))
    return result, gold_ex


def score_predictions(gold: dict[int | str, GoldExample],
                      predictions: dict[int | str, NqPrediction], where: str, *,
                      long_threshold: int = 2, short_threshold: int = 2,
                      allow_missing: bool = False, allow_extra: bool = False,
                      gold_where: str | None = None) -> NqResult:
    """Score read predictions (from the file ``where``) as ``nqkit eval nq`` does, with
    its ``--allow-missing`` / ``--allow-extra`` policy: the same checks, the same numbers,
    the same signature."""
    check_id_types(gold, predictions, where)
    return evaluate_nq(gold, predictions, long_threshold=long_threshold,
                       short_threshold=short_threshold,
                       missing="null" if allow_missing else "error",
                       allow_extra=allow_extra, where=where, gold_where=gold_where)


def nq_result(r: NqResult, gold: dict[int | str, GoldExample] | None = None, *,
              breakdown: bool = False, long_threshold: int = 2) -> Result:
    """An NQ evaluation as the :class:`~nqkit.tasks.base.Result` every task returns:
    the official keys in JSON, F1/P/R/threshold and recall at precision in the table,
    and (with ``breakdown``) the scores by gold long-answer type and question word."""
    headers = ("task", "F1", "precision", "recall", "threshold",
               *(f"R@P>={t:g}".replace("0.", ".") for t in sorted(r.long.at_precision)))
    rows = []
    for name, s in (("long answer", r.long), ("short answer", r.short)):
        rows.append((name, s.best_f1, s.best_precision, s.best_recall, s.best_threshold,
                     *(s.at_precision[t][0] for t in sorted(s.at_precision))))
    official: dict[str, Any] = dict(sorted(r.metrics.items()))
    notes: list[str] = []
    if breakdown:
        if gold is None:
            raise ValueError("a breakdown needs the gold examples")
        official["breakdown"], notes = _breakdown(r, gold, long_threshold)

    def items() -> list[dict[str, Any]]:
        return [{"example_id": i, "long_correct": ls.is_correct,
                 "long_score": ls.score, "short_correct": ss.is_correct,
                 "short_score": ss.score}
                for i, ls, ss in zip(r.example_ids, r.long_stats, r.short_stats, strict=True)]

    def headline() -> dict[str, Any]:
        from nqkit.analysis.nq_breakdown import best_f1_stacks, stat_rows
        from nqkit.stats import ItemStats

        # column 1 of the rows is "gold has an answer": a resample without any counts as 0
        return {f"{t}-best-threshold-f1": ItemStats(stat_rows(st), best_f1_stacks,
                                                    decomposable=False, empty_column=1)
                for t, st in (("long", r.long_stats), ("short", r.short_stats))}

    return Result(task="nq", title="Natural Questions, official metrics", headers=headers,
                  rows=rows, signature=r.signature, official=official, items=items,
                  item_key="example_id", coverage=Coverage(r.num_predicted, r.num_examples),
                  headline=headline, warnings=list(r.warnings), notes=notes)


def _breakdown(r: NqResult, gold: dict[int | str, GoldExample], long_threshold: int,
               ) -> tuple[dict[str, Any], list[str]]:
    from nqkit.analysis.nq_breakdown import group_scores, question_word
    from nqkit.report import format_table

    types = [gold[i].long_type(long_threshold) or "null" for i in r.example_ids]
    words = [question_word(gold[i].question_text) for i in r.example_ids]
    by_type = {t: group_scores(r, types, task=t, order=TYPE_ORDER) for t in ("long", "short")}
    by_word = {t: group_scores(r, words, task=t, order=WORD_ORDER) for t in ("long", "short")}
    data = {"by_long_answer_type": {t: [_g(g) for g in rows] for t, rows in by_type.items()},
            "by_question_word": {t: [_g(g) for g in rows] for t, rows in by_word.items()}}
    notes = []
    for title, table in (("gold long-answer type", by_type), ("question word", by_word)):
        for task, groups in table.items():
            notes.append(format_table(
                [title, "examples", "gold", "predicted", "correct", "P", "R", "F1"],
                [[g.group, g.examples, g.gold, g.predicted, g.correct, g.precision,
                  g.recall, g.f1] for g in groups],
                title=f"\n{task} answer by {title} (at the overall best threshold)"))
    return data, notes


def _g(g: GroupScore) -> dict[str, Any]:
    return {"group": g.group, "examples": g.examples, "gold": g.gold,
            "predicted": g.predicted, "correct": g.correct, "precision": g.precision,
            "recall": g.recall, "f1": g.f1}


@dataclass(frozen=True, kw_only=True)
class NqSettings(Settings):
    """The settings of ``nqkit eval nq`` (declared below, with their defaults)."""

    long_threshold: int  # gold has a long answer when at least this many annotators gave one
    short_threshold: int  # the same for short answers
    breakdown: bool  # also score by gold long-answer type and by question word
    pr_curve: str | None  # where to draw the precision-recall curves
    gold_cache: bool  # read and write the gold annotation cache


def score(s: NqSettings) -> Result:
    gold_files, predictions = s.inputs()
    r, gold = evaluate_files(
        gold_files, predictions, long_threshold=s.long_threshold,
        short_threshold=s.short_threshold, allow_missing=s.allow_missing,
        allow_extra=s.allow_extra, with_types=s.breakdown, cache=s.gold_cache)
    result = nq_result(r, gold, breakdown=s.breakdown, long_threshold=s.long_threshold)
    if s.pr_curve:
        from nqkit.analysis.plots import write_pr_curve

        write_pr_curve(s.pr_curve, {"long": r.long, "short": r.short})
        result.notes.append(f"precision-recall curve written to {s.pr_curve}")
    return result


THRESHOLDS: tuple[Param, ...] = (LONG_THRESHOLD, SHORT_THRESHOLD)

FORMAT_HELP = """\
predictions: {"predictions": [{"example_id": INT, "long_answer": {"start_byte", "end_byte",
"start_token", "end_token"}, "long_answer_score": NUM, "short_answers": [SPAN, ...],
"short_answers_score": NUM, "yes_no_answer": "YES"|"NO"|"NONE"}, ...]}
Offsets by bytes, by tokens, or both (-1 when absent)."""

TASK = TASKS.add("nq", Task(
    name="nq", help="Natural Questions long/short answer F1 (official metrics)",
    description="Score NQ predictions with the official rules: >=2-of-5 gold, "
    "byte-or-token span match, best-threshold F1 and recall at precision; intervals "
    "re-tune the threshold in every resample.",
    score=score,
    params=(
        *THRESHOLDS,
        Param("breakdown", "--breakdown", "also score by gold long-answer type and by "
              "question word", action="store_true", default=False, report=True),
        Param("pr_curve", "--pr-curve", "draw the precision-recall curves", metavar="FILE.png",
              output=True, report=True),
        GOLD_CACHE,
    ),
    gold_help="gold NQ files (original or simplified; .jsonl or .jsonl.gz; globs)",
    predictions_help="predictions JSON (official format)",
    allow_missing_help="score gold examples without a prediction as null predictions (no "
    "long or short answer: they lower recall; default: error)",
    headline=("long-best-threshold-f1", "short-best-threshold-f1"),
    epilog=FORMAT_HELP, settings_type=NqSettings,
    gold_kind="nq"))
