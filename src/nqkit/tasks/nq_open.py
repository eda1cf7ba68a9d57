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
from nqkit.vocabulary import ANSWER_FIELD, CONVENTION, EXTRACT

PARAMS: tuple[Param, ...] = (
    ANSWER_FIELD,
    CONVENTION,
    EXTRACT,
    Param("regex", "--regex", "gold answers are regular expressions (CuratedTrec): a pattern "
          "must match at the start of the prediction, case-insensitively",
          action="store_true", default=False),
    Param("explain", "--explain", "also score the predictions under every convention and "
          "list the questions where they disagree", action="store_true", default=False,
          report=True),
    Param("published", "--published", "a published exact match to reproduce, as the paper "
          "prints it (44.1 or 0.441): the verdict (equal, within noise, differs) and the "
          "conventions and extractions that meet it", metavar="NUMBER", report=True),
    Param("released", "--released", "a released run of the same system to reproduce (a "
          "predictions file of any shape nqkit reads, its own gold lists used where it "
          "carries them): the verdict (reproduced, within noise, differs by a gap with its "
          "interval) and the parts of the gap (questions, predictions, answer version)",
          metavar="PREDICTIONS", input=True, report=True),
    Param("adjudicated", "--adjudicated", "also score with human judgments of answers "
          "(oqaeval's annotation TSV: Question, Model answer, Acceptable?) added to or "
          "removed from the gold: the adjudicated exact match of Kamalloo et al. 2023 "
          "over the questions they cover", metavar="JUDGMENTS", input=True, report=True),
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
    if r.uncreditable:
        from nqkit.errors import for_example

        n, rule = len(r.uncreditable), r.convention
        lines.append(ResultWarning(
            "ceiling", f"under {rule}, {n:,} of the {r.num_total:,} questions are credited "
            f"by none of their gold answers given verbatim "
            f"({for_example(repr(q) for q in r.uncreditable)}): a system answering every "
            f"question with a gold answer scores at most {(r.num_total - n) / r.num_total:.4f}"))
    if r.unused_predictions and "other-split" not in codes:
        lines.append(ResultWarning("extra", f"{r.unused_predictions} prediction(s) for "
                                   "questions not in the gold were ignored"))
    return lines


@dataclass(frozen=True, kw_only=True)
class NqOpenSettings(Settings):
    """The settings of ``nqkit eval nq-open`` (declared in :data:`PARAMS`)."""

    answer_field: str  # the gold field holding the answers
    convention: str  # the exact-match rule, by name (orqa: the official one)
    extract: str  # the answer extraction applied to each prediction (none: as given)
    regex: bool  # gold answers are regular expressions (CuratedTrec)
    explain: bool  # also score under every convention and list where they disagree
    published: str | None  # a published exact match to judge the run against
    released: str | None  # a released run (predictions file) to judge the run against
    adjudicated: str | None  # human judgments of answers (oqaeval TSV): adjudicated EM too


def score(s: NqOpenSettings) -> Result:
    from nqkit.formats.nq_open import read_nq_open, read_predictions
    from nqkit.metrics.nq_open import score_nq_open

    gold, path = s.inputs()
    references = list(read_nq_open(gold, answer_field=s.answer_field))
    # predictions may also be one JSON object {question: answer}, or a harness's output
    read = read_predictions(path)
    predictions = list(read.predictions)
    judgments = None
    if s.adjudicated is not None:
        from nqkit.formats.judgments import read_judgments

        if s.regex:
            from nqkit.errors import InputError

            raise InputError("--adjudicated", "judgments amend answer strings, and "
                             "regular-expression gold has none",
                             "drop --adjudicated or --regex")
        judgments = read_judgments(s.adjudicated)
    r = score_nq_open(references, predictions, regex=s.regex,
                      missing="wrong" if s.allow_missing else "error",
                      answer_field=s.answer_field, convention=s.convention, where=path,
                      extract=s.extract, predictions_format=read.format,
                      adjudicated=None if judgments is None else judgments.sha256[:12])
    if r.unused_predictions and not s.allow_extra:
        refuse_extra(path, r.unused_predictions, references, predictions)
    result = nq_open_result(r, explain=s.explain, published=s.published, regex=s.regex)
    if judgments is not None:
        add_adjudicated(result, r, judgments, s.adjudicated or "")
    carried = {p.question: p.answers for p in predictions if p.answers is not None}
    if carried and not s.regex:
        own_gold(result, r, references, predictions, carried)
    if s.released is not None:
        add_released(result, r, s.released, regex=s.regex)
    return result


def add_released(result: Result, r: Any, path: str, *, regex: bool) -> None:
    """The ``--released`` verdict (:func:`nqkit.analysis.reproduction.reproduce_run`):
    ``released`` in JSON, its table and sentence in the notes."""
    from nqkit.analysis.reproduction import reproduce_run
    from nqkit.formats.nq_open import read_predictions
    from nqkit.report import format_table
    from nqkit.splits import describe, match_split

    if regex:
        from nqkit.errors import InputError

        raise InputError("--released", "regular-expression gold answers have no released "
                         "run's answer versions to compare", "drop --released or --regex")
    theirs = read_predictions(path)
    # the run's predictions as given: reproduce_run applies the extraction itself
    rep = reproduce_run([(it.question, it.prediction, it.correct) for it in r.items],
                        [(p.question, p.prediction, p.answers) for p in theirs.predictions],
                        {it.question: it.answers for it in r.items},
                        convention=r.convention, extract=r.extract)
    lo, hi = rep.interval()
    _, plo, phi = rep.paired
    summary = rep.summary()
    if rep.shared < len(r.items) or rep.released_total > rep.shared or rep.unscorable:
        held = describe(match_split(p.question for p in theirs.predictions))
        summary += f" (the released run holds {held})"
    result.official["released"] = {
        "verdict": rep.verdict, "accuracy": rep.released_accuracy,
        "num_total": rep.released_total, "delta": rep.delta, "interval": [lo, hi],
        "shared": rep.shared, "same_predictions": rep.same_predictions,
        "only_run_right": rep.only_run_right,
        "only_released_right": rep.only_released_right, "unscorable": rep.unscorable,
        "predictions_interval": [plo, phi], "format": theirs.format,
        "parts": {p.cause: {"delta": p.delta, "questions": p.questions} for p in rep.parts},
        "summary": summary}
    if rep.unscorable:
        result.warnings.append(ResultWarning(
            "released-unscored", f"{rep.unscorable:,} of the released run's questions are "
            "not in --gold and carry no gold answers of their own: left out of its number "
            f"({100 * rep.released_accuracy:.2f} over the other {rep.released_total:,})"))
    rows = [(p.cause, f"{100 * p.delta:+.2f}", f"{p.questions:,}") for p in rep.parts]
    rows.append(("gap", f"{100 * rep.delta:+.2f}", ""))
    title = (f"reproducing the released run {path} ({100 * rep.released_accuracy:.2f} on "
             f"{rep.released_total:,} questions; the run {100 * rep.accuracy:.2f} on "
             f"{rep.num_total:,}), under {r.convention}: the gap in points, in parts that "
             f"add up to it; {rep.same_predictions:,} of the {rep.shared:,} shared questions "
             "have the same prediction")
    result.notes.append("\n".join(["", format_table(("part", "points", "questions"), rows,
                                                    title=title, right=(1, 2)), summary]))


def add_adjudicated(result: Result, r: Any, judgments: Any, where: str) -> None:
    """The adjudicated exact match (:mod:`nqkit.metrics.adjudicated`) as rows of its own
    beside the official ones, ``adjudicated`` in JSON and per item, and notices of what
    the judgments did not cover."""
    from nqkit.errors import for_example
    from nqkit.metrics.adjudicated import score_adjudicated

    a = score_adjudicated([(it.question, it.answers, scored(it)) for it in r.items],
                          judgments.judgments, where=where)
    result.rows.extend([
        ("adjudicated exact match", a.accuracy),
        ("adjudicated correct", f"{a.num_correct:,}/{a.num_total:,}"),
        ("adjudicated questions", f"{a.covered:,}/{a.num_gold:,}"),
    ])
    result.official["adjudicated"] = {
        "accuracy": a.accuracy, "num_correct": a.num_correct, "num_total": a.num_total,
        "accuracy_before": a.accuracy_before, "num_correct_before": a.num_correct_before,
        "covered": a.covered, "unscorable": len(a.unscorable),
        "judged_questions": a.judged_questions, "not_in_gold": len(a.not_in_gold),
        "judgments": a.judgments, "sha256": judgments.sha256, "rule": "squad"}
    for item in result.item_list():
        got = a.items.get(item["question"])
        if got is not None:
            item["adjudicated"] = got.correct
    result.notes.append(
        f"adjudicated exact match: {a.accuracy:.4f} ({a.num_correct:,}/{a.num_total:,}) "
        f"on the {a.num_total:,} gold questions the judgments cover, where the gold as "
        f"given scores {a.accuracy_before:.4f} (squad rule, as oqaeval's AnnotatedEM and "
        "EM); the official exact match above is over every gold question")
    if a.unscorable:
        result.warnings.append(ResultWarning(
            "adjudicated-unscored", f"the judgments remove every gold answer of "
            f"{len(a.unscorable):,} question(s) and do not judge their prediction "
            f"({for_example(repr(q) for q in a.unscorable)}): left out of the adjudicated "
            "exact match, as oqaeval leaves them out"))
    if a.not_in_gold:
        result.notes.append(
            f"{len(a.not_in_gold):,} of the {a.judged_questions:,} judged questions are "
            f"not in the gold ({for_example(repr(q) for q in a.not_in_gold)})")


def own_gold(result: Result, r: Any, references: Any, predictions: Any,
             carried: dict[str, Any]) -> None:
    """When the predictions file carries its own gold lists and they are another version
    than the gold scored against (:mod:`nqkit.formats.answer_versions`): say how they
    differ and what the predictions score against them (``answer_versions`` in JSON, a
    warning when the two numbers differ)."""
    from nqkit.formats.answer_versions import compare_versions
    from nqkit.formats.nq_open import NqOpenExample
    from nqkit.metrics.nq_open import score_nq_open

    gold = {ref.question: ref.answers for ref in references}
    versions = compare_versions(carried, gold)
    if versions.same:
        return
    own = score_nq_open([NqOpenExample(q, tuple(carried.get(q) or answers), None)
                         for q, answers in gold.items()], predictions, missing="wrong",
                        convention=r.convention, extract=r.extract)
    shown = next((e for k in ("mojibake", "different", "reordered")
                  for e in versions.examples.get(k, [])), None)
    example = "" if shown is None else (f" (e.g. {list(shown[1])!r:.60} for "
                                        f"{list(shown[2])!r:.60})")
    result.official["answer_versions"] = {
        **versions.counts, "only_in_predictions": versions.only_carried,
        "only_in_gold": versions.only_reference, "accuracy_own_gold": own.accuracy,
        "num_correct_own_gold": own.num_correct,
        "verdicts_changed": sum(a.correct != b.correct
                                for a, b in zip(r.items, own.items, strict=True))}
    text = (f"the predictions file carries its own gold answers, another version than "
            f"--gold: {versions.describe()}{example}; against them the predictions score "
            f"{own.accuracy:.4f} ({own.num_correct:,}/{own.num_total:,}), against --gold "
            f"{r.accuracy:.4f} (give the file as --gold to score with its own answers)")
    if own.num_correct != r.num_correct:
        result.warnings.append(ResultWarning("answer-version", text))
    else:
        result.notes.append(text)


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
                   published: str | None = None, regex: bool = False) -> Result:
    """An NQ-open score (:class:`~nqkit.metrics.nq_open.NqOpenResult`) as a Result;
    ``published`` adds the reproduction verdict (:mod:`nqkit.analysis.reproduction`)."""
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
         "matched_answer": it.matched_answer, "answers": list(it.answers),
         **({} if it.extracted is None else {"extracted": it.extracted})} for it in r.items]
    official: dict[str, Any] = dict(r.official())
    notes: list[str] = []
    if explain:
        from nqkit.conventions import convention_names, get_convention

        # the published rules, and the one scored with when it is nqkit's own (equiv)
        names = [*convention_names(published=True)]
        if get_convention(r.convention).name not in names:
            names.append(get_convention(r.convention).name)
        table = explain_conventions([(it.question, scored(it), it.answers)
                                     for it in r.items], names)
        for i, item in enumerate(items):
            item["conventions"] = {n: table.verdicts[n][i] for n in table.names}
        official["conventions"] = {n: {"accuracy": table.accuracy(n),
                                       "num_correct": table.num_correct[n],
                                       "ceiling": table.ceiling(n)}
                                   for n in table.names}
        official["disagreements"] = len(table.disagreements)
        causes = explain_causes(r, table)
        official["gap_causes"] = {c.other: {"net": c.net, "gained": c.gained, "lost": c.lost,
                                            "examples": c.examples} for c in causes}
        notes.append(explain_text(table))
        notes.append(causes_text(r.convention, causes))
    if published is not None:
        from nqkit.analysis.reproduction import parse_published, reproduce

        if regex:
            from nqkit.errors import InputError

            raise InputError("--published", "regular-expression gold has one rule only, "
                             "so there is nothing to explain a gap with",
                             "drop --published, or compare the numbers by hand")
        rep = reproduce([(it.prediction, it.answers) for it in r.items],
                        parse_published(published), convention=r.convention,
                        extract=r.extract)
        official["reproduction"] = reproduction_json(rep)
        notes.append(reproduction_text(rep))

    def headline() -> dict[str, ItemStats]:
        return {"exact match": ItemStats.of(np.array([it.correct for it in r.items],
                                                     dtype=float))}

    return Result(
        task="nq-open", title=title, headers=("metric", "value"), rows=rows,
        signature=r.signature, official=official, items=items, item_key="question",
        coverage=Coverage(predicted, r.num_total), show_coverage=False,
        headline=headline, warnings=warnings, notes=notes)


def explain_causes(r: Any, table: Any) -> list[Any]:
    """Every other convention's gap to the one scored with, put down to its steps (the
    verdicts of ``table``, the ``--explain`` table, reused)."""
    from nqkit.conventions import get_convention
    from nqkit.metrics.em_conventions import gap_causes

    mine = get_convention(r.convention)
    items = [(it.question, scored(it), it.answers) for it in r.items]
    return [gap_causes(mine, get_convention(n), items,
                       verdicts=(table.verdicts[mine.name], table.verdicts[n]))
            for n in table.names if n != mine.name]


def causes_text(reference: str, causes: Any) -> str:
    """The table of where each convention's gap to ``reference`` comes from."""
    from nqkit.metrics.em_conventions import STEPS
    from nqkit.report import format_table

    def cell(c: Any, step: str) -> str:
        g, lost = c.gained[step], c.lost[step]
        return "0" if not g and not lost else " ".join(
            x for x in (f"+{g:,}" if g else "", f"-{lost:,}" if lost else "") if x)

    rows = [(c.other, f"{c.net:+,}", *(cell(c, s) for s in STEPS)) for c in causes]
    return "\n".join(["", format_table(
        ("convention", "questions", *STEPS), rows,
        title=f"where each convention's gap to {reference} comes from (questions gained + "
        f"and lost -, put down to the step of the rule that changes the verdict: "
        f"{reference}'s normalization, matching, extraction swapped for the other's in "
        "turn)")])


def reproduction_json(rep: Any) -> dict[str, Any]:
    return {"published": rep.published.value, "published_text": rep.published.text,
            "verdict": rep.chosen.verdict, "delta": rep.chosen.delta,
            "interval": list(rep.interval()), "noise_band": rep.band,
            "summary": rep.summary(),
            "rows": [{"convention": x.convention, "extract": x.extract,
                      "accuracy": x.accuracy, "num_correct": x.num_correct,
                      "delta": x.delta, "verdict": x.verdict} for x in rep.rows]}


def reproduction_text(rep: Any) -> str:
    """The ``--published`` block: the closest conventions × extractions and the verdict."""
    from nqkit.report import format_table

    p = rep.published
    unit, digits = (100, 2) if p.percent else (1, 4)
    shown = [rep.chosen, *[x for x in rep.rows if x is not rep.chosen][:7]]
    rows = [(x.convention, x.extract, f"{unit * x.accuracy:.{digits}f}",
             f"{unit * x.delta:+.{digits}f}", x.verdict + (" (yours)" if x is rep.chosen
                                                           else "")) for x in shown]
    title = (f"reproducing the published {p.text} on {rep.num_total:,} questions (noise "
             f"band ±{unit * rep.band:.{digits}f}: two runs of one system, 95%, with the "
             "number's rounding; the closest of every convention × extraction)")
    return "\n".join(["", format_table(("convention", "extract", "exact match", "gap",
                                        "verdict"), rows, title=title,
                                       right=(2, 3)), rep.summary()])


def scored(item: Any) -> str | None:
    """What the rules compare of an item: the extracted answer (--extract), else the
    prediction."""
    return item.prediction if item.extracted is None else item.extracted


def explain_text(table: Any) -> str:
    """The conventions table of ``--explain`` and the questions where they disagree."""
    from nqkit.report import format_table

    rows = [(n, table.accuracy(n), f"{table.num_correct[n]:,}/{table.num_total:,}",
             table.ceiling(n)) for n in table.names]
    parts = ["", format_table(("convention", "exact match", "correct", "ceiling"), rows,
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
