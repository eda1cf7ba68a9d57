"""The NQ-open task: exact match of one answer string per question (ORQA's official rule).

``nqkit eval nq-open --gold NQ-open.dev.jsonl --predictions preds.jsonl``; the scoring is
:func:`nqkit.metrics.nq_open.score_nq_open`, the conventions are
:mod:`nqkit.metrics.em_conventions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nqkit.settings import Param
from nqkit.signature import ResultWarning
from nqkit.tasks.base import TASKS, Coverage, Result, Settings, Task
from nqkit.vocabulary import ANSWER_FIELD, CONVENTION

PARAMS: tuple[Param, ...] = (
    ANSWER_FIELD,
    CONVENTION,
    Param("regex", "--regex", "gold answers are regular expressions (CuratedTrec): a pattern "
          "must match at the start of the prediction, case-insensitively",
          action="store_true", default=False),
    Param("explain", "--explain", "also score the predictions under every convention and "
          "list the questions where they disagree", action="store_true", default=False,
          report=True),
)


def result_warnings(r: Any) -> list[ResultWarning]:
    """Every warning of an NQ-open result: the metric's (also in its signature) and
    notices that do not change what the number means (duplicates, ignored predictions)."""
    codes = {w.code for w in r.warnings}
    lines = list(r.warnings)
    if r.empty_gold_answers and not codes & {"empty-match", "all-empty"}:
        lines.append(ResultWarning(
            "empty-gold", f"{r.empty_gold_answers} gold answer(s) of "
            f"{r.empty_gold_questions} question(s) normalize to the empty string; an empty "
            "prediction counts as correct for them (as in the official script)"))
    for count, what in ((r.duplicate_references, "gold questions"),
                        (r.duplicate_predictions, "predicted questions")):
        if count:
            lines.append(ResultWarning("duplicates", f"{count} duplicate {what}; the last "
                                       "one is used (as in the official script)"))
    if r.unused_predictions and "other-split" not in codes:
        lines.append(ResultWarning("extra", f"{r.unused_predictions} prediction(s) for "
                                   "questions not in the gold were ignored"))
    return lines


@dataclass(frozen=True, kw_only=True)
class NqOpenSettings(Settings):
    """The settings of ``nqkit eval nq-open`` (declared in :data:`PARAMS`)."""

    answer_field: str  # the gold field holding the answers
    convention: str  # the exact-match rule, by name (orqa: the official one)
    regex: bool  # gold answers are regular expressions (CuratedTrec)
    explain: bool  # also score under every convention and list where they disagree


def score(s: NqOpenSettings) -> Result:
    from nqkit.formats.nq_open import read_nq_open, read_predictions
    from nqkit.metrics.nq_open import score_nq_open

    gold, path = s.inputs()
    references = list(read_nq_open(gold, answer_field=s.answer_field))
    # predictions may also be one JSON object {question: answer}, or a harness's output
    read = read_predictions(path)
    predictions = list(read.predictions)
    r = score_nq_open(references, predictions, regex=s.regex,
                      missing="wrong" if s.allow_missing else "error",
                      answer_field=s.answer_field, convention=s.convention, where=path,
                      predictions_format=read.format)
    if r.unused_predictions and not s.allow_extra:
        refuse_extra(path, r.unused_predictions, references, predictions)
    return nq_open_result(r, explain=s.explain)


def refuse_extra(path: str, n: int, references: Any, predictions: Any) -> None:
    """Predictions for questions not in the gold, without --allow-extra: one line (the
    official script ignores them; nqkit asks, as for every task)."""
    from nqkit.errors import InputError, for_example

    gold = {r.question for r in references}
    extra = [p.question for p in predictions if p.question not in gold]
    raise InputError(path, f"{n:,} prediction(s) are for questions not in the gold "
                     f"({for_example(repr(q) for q in extra)})",
                     "check the split, or pass --allow-extra to ignore them")


def nq_open_result(r: Any, *, explain: bool = False, title: str = "NQ-open exact match",
                   ) -> Result:
    """An NQ-open score (:class:`~nqkit.metrics.nq_open.NqOpenResult`) as a Result."""
    import numpy as np

    from nqkit.metrics.em_conventions import explain_conventions
    from nqkit.stats import ItemStats

    warnings = result_warnings(r)
    predicted = r.num_total - r.missing_predictions
    rows: list[tuple[Any, ...]] = [
        ("exact match", r.accuracy),
        ("correct", f"{r.num_correct:,}/{r.num_total:,}"),
        ("predicted", f"{predicted:,}/{r.num_total:,}"),
    ]
    items: list[dict[str, Any]] = [
        {"question": it.question, "prediction": it.prediction, "correct": it.correct,
         "matched_answer": it.matched_answer, "answers": list(it.answers)} for it in r.items]
    if explain:
        from nqkit.conventions import convention_names, get_convention

        rules = [get_convention(n) for n in convention_names()]
        for item, it in zip(items, r.items, strict=True):
            item["conventions"] = {c.name: it.prediction is not None
                                   and c.match(it.prediction, it.answers) is not None
                                   for c in rules}
    official: dict[str, Any] = dict(r.official())
    notes: list[str] = []
    if explain:
        table = explain_conventions([(it.question, it.prediction, it.answers)
                                     for it in r.items])
        official["conventions"] = {n: {"accuracy": table.accuracy(n),
                                       "num_correct": table.num_correct[n]}
                                   for n in table.names}
        official["disagreements"] = len(table.disagreements)
        notes.append(explain_text(table))
    def headline() -> dict[str, ItemStats]:
        return {"exact match": ItemStats.of(np.array([it.correct for it in r.items],
                                                     dtype=float))}

    return Result(
        task="nq-open", title=title, headers=("metric", "value"), rows=rows,
        signature=r.signature, official=official, items=items, item_key="question",
        coverage=Coverage(predicted, r.num_total), show_coverage=False,
        headline=headline, warnings=warnings, notes=notes)


def explain_text(table: Any) -> str:
    """The conventions table of ``--explain`` and the questions where they disagree."""
    from nqkit.report import format_table

    rows = [(n, table.accuracy(n), f"{table.num_correct[n]:,}/{table.num_total:,}")
            for n in table.names]
    parts = ["", format_table(("convention", "exact match", "correct"), rows,
                              title="the same predictions under each exact-match convention")]
    if table.disagreements:
        shown = table.disagreements[:10]
        parts.append("")
        parts.append(format_table(
            ("question", "prediction", "gold", *table.names),
            [(d.question[:50], d.prediction[:30], " | ".join(d.answers)[:40],
              *("yes" if d.correct[n] else "no" for n in table.names)) for d in shown],
            title=f"questions where the conventions disagree ({len(table.disagreements):,}; "
            f"the first {len(shown)} shown)"))
    else:
        parts.append("the conventions agree on every question")
    return "\n".join(parts)


TASK = TASKS.add("nq-open", Task(
    name="nq-open",
    help="NQ-open / EfficientQA exact match (official ORQA evaluation)",
    description="Score {question, prediction} JSON lines against NQ-open gold {question, "
    "answer: [...]} by exact match after NFD, lower-casing, punctuation and article "
    "removal (max over gold answers). Numbers equal the official evaluate_predictions.py; "
    "other published conventions by name with --convention, all of them with --explain.",
    score=score, params=PARAMS, settings_type=NqOpenSettings,
    gold_help="NQ-open JSONL gold (plain or .gz)",
    predictions_help='predictions JSONL {"question", "prediction"} or a harness output file '
    "(lm-eval --log_samples, FlashRAG intermediate_data.json, oqaeval lines)",
    headline=("exact match",),
    gold_kind="nq-open"))
