"""The NQ task: gold + predictions -> official metrics, analyses and their presentation.

This is what ``nqkit eval nq`` and the browser call; the scoring itself is in
:mod:`nqkit.metrics.nq`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nqkit.errors import InputError
from nqkit.formats.gold_cache import load_nq_gold
from nqkit.formats.nq_gold import GoldExample
from nqkit.formats.nq_predictions import check_id_types, read_nq_predictions
from nqkit.io import PathsLike, check_output, expand_paths
from nqkit.metrics.nq import NqResult, check_gold, evaluate_nq
from nqkit.report import format_table
from nqkit.signature import ResultWarning, mark_signature

if TYPE_CHECKING:
    from nqkit.metrics.nq_analysis import GroupScore, Interval

# The most bootstrap resamples accepted: far more than a 95% interval needs (1,000 to
# 10,000 is usual), and a bound on the work and time a mistyped count can cause.
MAX_BOOTSTRAP = 100_000

TYPE_ORDER = ("paragraph", "table", "table row", "list", "list item", "other", "null")
WORD_ORDER = ("who", "when", "where", "what", "how", "which", "other")


@dataclass
class NqEvalOutput:
    """A finished evaluation with its optional analyses."""

    result: NqResult
    gold: dict[int | str, GoldExample]
    by_type: dict[str, list[GroupScore]] = field(default_factory=dict)
    by_word: dict[str, list[GroupScore]] = field(default_factory=dict)
    intervals: dict[str, Interval] = field(default_factory=dict)
    bootstrap: int = 0
    seed: int = 0
    extra_warnings: list[ResultWarning] = field(default_factory=list)  # of the analyses

    @property
    def warnings(self) -> list[ResultWarning]:
        return [*self.result.warnings, *self.extra_warnings]

    @property
    def signature(self) -> str:
        return mark_signature(self.result.signature, self.extra_warnings)

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        d: dict[str, Any] = {}
        if self.warnings:
            d["warnings"] = [w.to_json() for w in self.warnings]
        d.update(sorted(r.metrics.items()))
        d["signature"] = self.signature
        if r.num_predicted != r.num_examples:
            d["coverage"] = {"predicted": r.num_predicted, "examples": r.num_examples}
        if self.intervals:
            d["bootstrap"] = {"samples": self.bootstrap, "seed": self.seed, **{
                f"{t}-best-threshold-f1": [iv.low, iv.high] for t, iv in self.intervals.items()}}
        if self.by_type or self.by_word:
            d["breakdown"] = {
                "by_long_answer_type": {t: [_g(g) for g in rows]
                                        for t, rows in self.by_type.items()},
                "by_question_word": {t: [_g(g) for g in rows] for t, rows in self.by_word.items()},
            }
        return d

    def to_json_text(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    def to_table(self) -> str:
        r = self.result
        cov = f"{r.num_predicted:,}/{r.num_examples:,} predicted"
        headers = ["task", "F1", "precision", "recall", "threshold",
                   "R@P>=.5", "R@P>=.75", "R@P>=.9"]
        if self.intervals:
            headers.insert(2, "F1 95% CI")
        rows = []
        for name, s in (("long answer", r.long), ("short answer", r.short)):
            row: list[Any] = [name, s.best_f1, s.best_precision, s.best_recall, s.best_threshold]
            row += [s.at_precision[t][0] for t in sorted(s.at_precision)]
            if self.intervals:
                iv = self.intervals[name.split()[0]]
                row.insert(2, f"{iv.low:.4f}-{iv.high:.4f}")
            rows.append(row)
        parts = [format_table(headers, rows,
                              title=f"Natural Questions, official metrics ({cov})")]
        for title, table in (("gold long-answer type", self.by_type),
                             ("question word", self.by_word)):
            for task, groups in table.items():
                parts.append(format_table(
                    [title, "examples", "gold", "predicted", "correct", "P", "R", "F1"],
                    [[g.group, g.examples, g.gold, g.predicted, g.correct, g.precision,
                      g.recall, g.f1] for g in groups],
                    title=f"\n{task} answer by {title} (at the overall best threshold)"))
        parts.append(f"\nsignature: {self.signature}")
        if self.intervals:
            parts.append(f"confidence intervals: {self.bootstrap} bootstrap resamples, "
                         f"seed {self.seed}")
        return "\n".join(parts)


def _g(g: GroupScore) -> dict[str, Any]:
    return {"group": g.group, "examples": g.examples, "gold": g.gold,
            "predicted": g.predicted, "correct": g.correct, "precision": g.precision,
            "recall": g.recall, "f1": g.f1}


def check_thresholds(long_threshold: int, short_threshold: int) -> None:
    if long_threshold < 1 or short_threshold < 1:
        raise InputError(None, f"--long-threshold and --short-threshold must be at least 1, "
                         f"found {long_threshold} and {short_threshold}",
                         "the official value is 2")


def gold_label(gold: PathsLike) -> str:
    """How messages name the gold: the paths or globs as given."""
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


def run_nq_eval(gold: PathsLike, predictions: str, *, long_threshold: int = 2,
                short_threshold: int = 2, allow_missing: bool = False,
                allow_extra: bool = False, breakdown: bool = False, bootstrap: int = 0,
                seed: int = 0, pr_curve: str | None = None, cache: bool = True,
                gold_examples: dict[int | str, GoldExample] | None = None,
                ) -> NqEvalOutput:
    """Run the whole NQ evaluation from files, as ``nqkit eval nq`` does.

    ``gold_examples``, when given, are the already loaded annotations of ``gold``.
    """
    check_thresholds(long_threshold, short_threshold)
    if not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise InputError(None, f"--bootstrap must be between 0 and {MAX_BOOTSTRAP:,}, found "
                         f"{bootstrap:,}", "1,000 to 10,000 resamples are the usual choice")
    if seed < 0:
        raise InputError(None, f"--seed must be a non-negative integer, found {seed}",
                         "give a seed such as 0 or 12345")
    gold_files = expand_paths(gold, what="gold")
    if pr_curve:
        check_output(pr_curve, [*gold_files, predictions])
    preds = read_nq_predictions(predictions)
    gold_ex = gold_examples if gold_examples is not None else load_nq_gold(
        gold_files, with_types=breakdown, cache=cache)
    check_id_types(gold_ex, preds, predictions)
    result = evaluate_nq(gold_ex, preds, long_threshold=long_threshold,
                         short_threshold=short_threshold,
                         missing="null" if allow_missing else "error",
                         allow_extra=allow_extra, where=predictions,
                         gold_where=gold_label(gold))
    out = NqEvalOutput(result, gold_ex, bootstrap=bootstrap, seed=seed)
    # numpy (analysis) and matplotlib (plots) are imported only when asked for.
    from nqkit.metrics.nq_analysis import bootstrap_f1, group_scores, question_word

    if breakdown:
        types = [gold_ex[i].long_type(long_threshold) or "null" for i in result.example_ids]
        words = [question_word(gold_ex[i].question_text) for i in result.example_ids]
        out.by_type = {t: group_scores(result, types, task=t, order=TYPE_ORDER)
                       for t in ("long", "short")}
        out.by_word = {t: group_scores(result, words, task=t, order=WORD_ORDER)
                       for t in ("long", "short")}
    if bootstrap:
        out.intervals = bootstrap_f1(result, bootstrap, seed)
        codes = {w.code for w in result.warnings}
        for task, iv in out.intervals.items():
            if iv.no_gold and f"no-gold-{task}" not in codes:
                out.extra_warnings.append(ResultWarning(
                    "bootstrap-no-gold",
                    f"{iv.no_gold:,} of {bootstrap:,} bootstrap resamples have no gold {task} "
                    f"answer and count as F1 0, which pulls the {task}-answer interval down "
                    "— too few gold answers for an interval; score more examples"))
    if pr_curve:
        from nqkit.metrics.plots import write_pr_curve

        write_pr_curve(pr_curve, {"long": result.long, "short": result.short})
    return out


# --------------------------------------------------------------------------- the task

def _task_result(out: NqEvalOutput) -> Any:
    """An evaluation in the shape every task returns (:class:`nqkit.tasks.base.Result`)."""
    from nqkit.metrics.nq_analysis import best_f1_stacks, stat_rows
    from nqkit.stats import ItemStats
    from nqkit.tasks.base import Coverage, Result

    r = out.result
    rows = [(name, s.best_f1, s.best_precision, s.best_recall, s.best_threshold)
            for name, s in (("long answer", r.long), ("short answer", r.short))]
    items = [{"example_id": i, "long_correct": ls.is_correct, "short_correct": ss.is_correct}
             for i, ls, ss in zip(r.example_ids, r.long_stats, r.short_stats, strict=True)]
    headline = {f"{t}-best-threshold-f1": ItemStats(stat_rows(st), best_f1_stacks,
                                                    decomposable=False)
                for t, st in (("long", r.long_stats), ("short", r.short_stats))}
    return Result(task="nq", title="Natural Questions, official metrics",
                  headers=("task", "F1", "precision", "recall", "threshold"), rows=rows,
                  signature=out.signature, official=dict(sorted(r.metrics.items())),
                  items=items, item_key="example_id",
                  coverage=Coverage(r.num_predicted, r.num_examples), headline=headline,
                  warnings=[w.message for w in out.warnings])


def _score_task(s: dict[str, Any]) -> Any:
    return _task_result(run_nq_eval(
        gold=s["gold"], predictions=s["predictions"], long_threshold=s["long_threshold"],
        short_threshold=s["short_threshold"], allow_missing=s["allow_missing"],
        allow_extra=s["allow_extra"], cache=s["gold_cache"]))


def _register() -> None:
    from nqkit.settings import Param
    from nqkit.tasks.base import TASKS, Task

    TASKS.add("nq", Task(
        name="nq", help="Natural Questions long/short answer F1 (official metrics)",
        description="Score NQ predictions with the official rules: >=2-of-5 gold, "
        "byte-or-token span match, best-threshold F1 (the threshold re-tuned in every "
        "resample).",
        score=_score_task,
        params=(
            Param("long_threshold", "--long-threshold", "gold has a long answer when >= K "
                  "annotators gave one (default 2)", default=2, type=int, metavar="K"),
            Param("short_threshold", "--short-threshold", "gold has a short answer when >= "
                  "K annotators gave one (default 2)", default=2, type=int, metavar="K"),
            Param("gold_cache", "--gold-cache", "read and write the gold annotation cache "
                  "(default; --no-gold-cache to skip it)", action="boolean", default=True),
        ),
        gold_help="gold NQ files (original or simplified; globs)",
        predictions_help="predictions JSON (official format)",
        headline=("long-best-threshold-f1", "short-best-threshold-f1"),
    ))


_register()
