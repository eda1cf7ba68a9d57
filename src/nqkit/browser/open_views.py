"""The open-domain views: NQ-open / EfficientQA and AmbigQA, and how a task finds its view.

Every number a view shows per question is an output of the task's own scoring
(``get_task(TASK).run(...)``, the code behind ``nqkit eval TASK``): the per-item records
of its :class:`~nqkit.tasks.base.Result` and, for the exact-match conventions, the rules
of :mod:`nqkit.metrics.em_conventions` themselves. Nothing here scores.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nqkit.browser.open_model import (
    Column,
    Filter,
    JudgedPair,
    OpenRow,
    OpenView,
    summary_of,
)
from nqkit.errors import InputError
from nqkit.formats.sniff import check_gold_kind, sniff_gold
from nqkit.io import PathsLike, expand_paths

__all__ = ["LOADERS", "TASKS", "add_judgments", "check_gold_kind", "load_view", "run_task",
           "sniff_gold"]

# What `nqkit browse --task` accepts: nq (the NQ browser, browser/app.py) and these.
TASKS = ("nq", "nq-open", "ambigqa", "retrieval")
def run_task(task_name: str, allow_missing: bool | None = None, **settings: Any
             ) -> tuple[Any, bool]:
    """Score with ``nqkit eval TASK``'s code: the result, and whether it took
    ``--allow-missing`` (gold items without a prediction scored as the task scores them
    then). ``allow_missing=None``: without the flag first, so that when every item has a
    prediction the policy, and so the signature, is the command's default. Predictions
    for items not in the gold are left out, as ``--allow-extra`` leaves them out (a view
    shows the gold's items; :func:`took_extra` says whether it did)."""
    from nqkit.tasks.base import get_task

    task = get_task(task_name)
    settings = {**settings, "allow_extra": True}
    if allow_missing is not None:
        return task.run(**settings, allow_missing=allow_missing), allow_missing
    try:
        return task.run(**settings, allow_missing=False), False
    except InputError as first:
        try:
            return task.run(**settings, allow_missing=True), True
        except InputError:
            raise first from None


def took_extra(result: Any) -> bool:
    """The result left out predictions for items not in the gold (its command then needs
    ``--allow-extra``)."""
    return any(w.code in ("extra", "other-split") for w in result.warnings)


def policy_flags(allowed: bool, result: Any) -> str:
    """The command-line flags of the policies a view's result was scored with."""
    return (" --allow-missing" if allowed else "") + (
        " --allow-extra" if took_extra(result) else "")


# ---------------------------------------------------------------------------- NQ-open

def _rule_text(name: str) -> str:
    """The rule of one exact-match convention, in words, from its declaration."""
    from nqkit.conventions import get_convention
    from nqkit.text.normalize import normalize_answer_nfd

    c = get_convention(name)
    norm = ("NFD, lower-case, punctuation and articles removed" if c.normalize is
            normalize_answer_nfd else "lower-case, punctuation and articles removed (no NFD)")
    how = ("a gold answer is contained in the prediction" if c.contains
           else "the prediction equals a gold answer")
    return f"{how}, both normalized: {norm}"


def _disagreement(prediction: str, answers: tuple[str, ...],
                  verdicts: dict[str, bool]) -> str:
    """Which rule makes the conventions disagree on one question, in words: for each
    convention that accepts, the gold answer it met and how; then the ones that reject."""
    from nqkit.conventions import get_convention

    yes = [n for n, ok in verdicts.items() if ok]
    no = [n for n, ok in verdicts.items() if not ok]
    if not yes or not no:
        return ""
    parts = []
    for n in yes:
        c = get_convention(n)
        gold = c.match(prediction, answers) or ""
        how = "is contained in" if c.contains else "equals"
        parts.append(f"{n} accepts: the gold answer “{gold}”, normalized “{c.normalize(gold)}”, "
                     f"{how} the prediction normalized by its rule, "
                     f"“{c.normalize_prediction(prediction)}”")
    rejects = []
    for n in no:
        c = get_convention(n)
        how = "is contained in" if c.contains else "equals"
        rejects.append(f"{n} rejects: no gold answer, normalized by its rule, {how} "
                       f"“{c.normalize_prediction(prediction)}”")
    return "; ".join(parts + rejects)


NQ_OPEN_VERDICTS = (("correct", "correct"), ("wrong", "wrong"),
                    ("no prediction", "no prediction"))


def load_nq_open_view(gold: PathsLike, predictions: str, *, answer_field: str = "answer",
                      allow_missing: bool | None = None) -> OpenView:
    """NQ-open / EfficientQA predictions against their gold: per question the gold
    answers, the prediction, the verdict of ``nqkit eval nq-open`` and under every named
    convention (``--explain``), and which rule makes the conventions disagree."""
    from nqkit.conventions import convention_names, get_convention
    from nqkit.report import fmt_value

    result, allowed = run_task("nq-open", allow_missing, gold=gold, predictions=predictions,
                               answer_field=answer_field, explain=True)
    items = result.item_list()
    names = tuple(convention_names(published=True))
    flags = (f" --answer-field {answer_field}" if answer_field != "answer" else "") + \
        policy_flags(allowed, result)
    summary = summary_of(result, f"nqkit eval nq-open --explain{flags}")
    conv = result.official["conventions"]
    total = result.official["num_total"]
    summary.tables.append((
        "the same predictions under each exact-match convention",
        ("convention", "exact match", "correct", "ceiling"),
        [(n, fmt_value(conv[n]["accuracy"], 4), f"{conv[n]['num_correct']:,}/{total:,}",
          fmt_value(conv[n]["ceiling"], 4)) for n in names]))
    rows: list[OpenRow] = []
    patterns: set[str] = set()
    for i, it in enumerate(items):
        pred = it["prediction"]
        verdicts: dict[str, bool] = it["conventions"]
        verdict = "no prediction" if pred is None else "correct" if it["correct"] else "wrong"
        accepting = [n for n in names if verdicts[n]]
        disagree = 0 < len(accepting) < len(names)
        pattern = " + ".join(accepting) + " only" if disagree else ""
        if pattern:
            patterns.add(pattern)
        answers = it["answers"]
        rows.append(OpenRow(
            key=str(i), position=i, question=it["question"],
            values={"em": 1.0 if it["correct"] else 0.0},
            tags={"verdict": verdict, "conventions": "disagree" if disagree else "agree",
                  "accepted": pattern},
            search="\n".join([it["question"], pred or "", *answers]).lower(),
            cells={"prediction": "" if pred is None else pred,
                   "gold": " | ".join(answers)}))

    def detail(row: OpenRow) -> dict[str, Any]:
        it = items[row.position]
        pred = it["prediction"]
        table = []
        for n in names:
            c = get_convention(n)
            matched = None if pred is None else c.match(pred, it["answers"])
            table.append({"name": n, "correct": it["conventions"][n], "rule": _rule_text(n),
                          "source": c.source, "matched": matched,
                          "norm_prediction": None if pred is None
                          else c.normalize_prediction(pred)})
        return {"answers": list(it["answers"]), "prediction": pred,
                "matched": it["matched_answer"], "verdict": row.tags["verdict"],
                "conventions": table,
                "why": "" if pred is None else _disagreement(pred, tuple(it["answers"]),
                                                             it["conventions"]),
                "signature": result.signature}

    return OpenView(
        task="nq-open", title="EfficientQA" if "|split:efficientqa/" in result.signature
        else "NQ-open", name=Path(predictions).name, rows=rows, summary=summary,
        detail=detail, template="open_nq_open.html",
        filters=(Filter("verdict", "verdict", NQ_OPEN_VERDICTS),
                 Filter("conventions", "conventions", (("disagree", "disagree"),
                                                       ("agree", "agree"))),
                 Filter("accepted", "accepted by", tuple((p, p) for p in sorted(patterns)))),
        columns=(Column("prediction", "prediction", "cell"),
                 Column("gold", "gold answers", "cell", sortable=False),
                 Column("verdict", "verdict", "verdict")),
        headline="em", metric="exact match", headline_stats=result.headline_stats,
        result=result,
        allow_missing=allowed, allow_extra=took_extra(result))


# ---------------------------------------------------------------------------- overlap

OVERLAP_GROUPS = (("question_overlap", "question overlap"),
                  ("answer_overlap_only", "answer overlap only"),
                  ("no_overlap", "no overlap"), ("unlabelled", "not labelled"))


def is_overlap_annotations(path: str | os.PathLike[str]) -> bool:
    """The file is an annotation file in the official QA-Overlap format (its first line
    an object with an integer ``id`` and a list of ``labels``), not a training set."""
    import orjson

    from nqkit.io import open_binary
    from nqkit.io.paths import is_regular_file

    try:
        first = expand_paths(path, what="overlap")[0]
        if not is_regular_file(first):
            return False
        with open_binary(first) as f:
            line = f.readline(1 << 16)
        obj = orjson.loads(line)
    except (InputError, OSError, EOFError, orjson.JSONDecodeError):
        return False
    return isinstance(obj, dict) and isinstance(obj.get("id"), int) and \
        isinstance(obj.get("labels"), list)


def add_overlap(view: OpenView, analysis: Any, table: tuple[str, tuple[str, ...],
                                                           list[tuple[str, ...]]],
                signature: str, command: str) -> None:
    """Each question's test-train overlap labels (an
    :class:`~nqkit.analysis.overlap.OverlapAnalysis` of the gold, joined by question) as a
    filter, a cell and a card of its page; the scores by group (``table``, as ``nqkit
    overlap score`` prints it, with its ``signature`` and ``command``) in the summary."""
    by_question = {it.question: it for it in analysis.items}
    items: dict[str, Any] = {}
    for row in view.rows:
        it = by_question.get(row.question)
        items[row.key] = it
        labels = it.labels if it is not None else ()
        group = ("question_overlap" if "question_overlap" in labels else
                 "answer_overlap_only" if "answer_overlap_only" in labels else
                 "no_overlap" if "no_overlap" in labels else "unlabelled")
        row.tags["overlap"] = group
        row.cells["overlap"] = dict(OVERLAP_GROUPS)[group]
    view.filters = (*view.filters, Filter("overlap", "overlap group", OVERLAP_GROUPS))
    view.columns = (*view.columns, Column("overlap", "overlap", "cell"))
    title, headers, rows = table
    view.summary.tables.append((title, headers, rows))
    view.summary.notes.append(f"Overlap groups from the code of {command}: {signature}")
    detail = view.detail
    source = ", ".join(f"{k}:{v}" for k, v in analysis.source.items())

    def with_overlap(row: OpenRow) -> dict[str, Any]:
        it = items[row.key]
        info = None if it is None else {
            "labels": [x for x in it.labels if x != "total"],
            "shared": list(it.shared_answers), "nearest": it.nearest_question,
            "similarity": it.similarity, "source": source}
        return {**detail(row), "overlap": info}

    view.detail = with_overlap


# ---------------------------------------------------------------------- human judgments

JUDGED = (("judged", "judged"), ("not judged", "not judged"))
HUMAN = (("acceptable", "acceptable"), ("not acceptable", "not acceptable"),
         ("not judged", "not judged"))
AGREE = (("disagree", "disagree"), ("agree", "agree"))
NO_VERDICT = "no verdict"  # a judged pair the judge gave no verdict on (or abstained)


def _said(v: bool | None) -> str:
    return NO_VERDICT if v is None else "acceptable" if v else "not acceptable"


def _em_settings(signature: str) -> dict[str, str]:
    """The settings of the view's exact match (its signature's split, answer field, rule
    and extraction): what the human-vs-EM counts depend on besides the files."""
    parts = dict(p.split(":", 1) for p in signature.split("|")[1:] if ":" in p)
    return {k: parts[k] for k in ("split", "answer-field", "match", "extract") if k in parts}


def add_judgments(view: OpenView, judgments: str | os.PathLike[str],
                  verdicts: str | os.PathLike[str] | None = None) -> None:
    """Each question's human judgment of its prediction, when people judged that
    (question, prediction) pair, beside the exact match the view shows and a judge's
    verdict (``verdicts``): filters, columns, a card on the question page, the counts in
    the summary with their signature and the files' fingerprints.

    Pairs are joined as ``nqkit judge audit`` joins them
    (:func:`nqkit.metrics.judge_audit.join_verdicts`: the question by oqaeval's key, the
    answer as written; here the prediction as the predictions file writes it), the
    judge's verdicts to the human-judged pairs. ``view.judged`` maps the row keys of the
    judged pairs to their :class:`~nqkit.browser.open_model.JudgedPair`; every other row
    is "not judged". Judgments, or verdicts, that meet no question's prediction are
    refused in one line (a misspelled join would otherwise show "not judged" everywhere).
    """
    from nqkit.errors import for_example
    from nqkit.formats.judgments import read_judgments
    from nqkit.formats.verdicts import read_verdicts
    from nqkit.metrics.judge_audit import join_verdicts, pair_key
    from nqkit.signature import make_signature

    human = read_judgments(judgments)
    judge = read_verdicts(verdicts) if verdicts is not None else None
    joined = join_verdicts(human.judgments, judge.verdicts if judge else ())
    items = view.result.item_list()
    judged: dict[str, JudgedPair] = {}
    for row in view.rows:
        it = items[row.position]
        pred = it["prediction"]
        j = None if pred is None else joined.human.get((pair_key(row.question), pred))
        if j is None:
            row.tags.update(judged="not judged", human="not judged")
            continue
        p = JudgedPair(answer=pred, human=j.acceptable, votes=j.votes,
                       exact_match=bool(it["correct"]), where=j.where,
                       judge=joined.judge.get((pair_key(j.question), j.answer)))
        judged[row.key] = p
        row.tags.update(judged="judged", human=_said(p.human),
                        human_em="disagree" if p.em_disagrees else "agree")
        marks = ["≠ EM"] if p.em_disagrees else []
        if judge is not None:
            row.tags["judge"] = _said(p.judge)
            row.tags["human_judge"] = (NO_VERDICT if p.judge is None else
                                       "disagree" if p.judge_disagrees else "agree")
            marks += ["≠ judge"] if p.judge_disagrees else []
        row.cells["disagree"] = " ".join(marks)
    name = os.path.basename(os.fspath(judgments))
    if not judged:
        some = for_example(repr(f"{j.question} / {j.answer}") for j in joined.human.values())
        raise InputError(name, f"none of the {len(joined.human):,} judged (question, answer) "
                         f"pairs is a question of the gold with that prediction ({some})",
                         "give the judgments of these predictions (joined by question text, "
                         "case and spacing aside, and the prediction as written)")
    settings: dict[str, object] = {"judgments": human.sha256[:12]}
    source = f"human judgments {name} (sha256 {human.sha256[:12]})"
    judge_name = None
    if judge is not None:
        judge_name = os.path.basename(os.fspath(verdicts or ""))
        if not any(p.judge is not None for p in judged.values()):
            raise InputError(judge_name, "the judge gives no verdict on any judged pair "
                             "of these predictions", "give the verdicts on the answers "
                             "the human judgments judge")
        settings["verdicts"] = judge.sha256[:12]
        source += f", judge's verdicts {judge_name} (sha256 {judge.sha256[:12]})"
    settings.update(_em_settings(view.result.signature))
    signature = make_signature("browse-judged", settings)
    pairs = list(judged.values())
    n = len(pairs)
    table: list[tuple[str, ...]] = [("judged pairs", f"{n:,}/{len(view.rows):,}"),
             ("human: acceptable", f"{sum(p.human for p in pairs):,}/{n:,}"),
             ("human ≠ exact match", f"{sum(p.em_disagrees for p in pairs):,}/{n:,}"),
             ("human yes, exact match wrong",
              f"{sum(p.human and not p.exact_match for p in pairs):,}"),
             ("human no, exact match correct",
              f"{sum(p.exact_match and not p.human for p in pairs):,}")]
    if judge is not None:
        said = [p for p in pairs if p.judge is not None]
        table += [("human ≠ judge", f"{sum(p.judge_disagrees for p in said):,}/{len(said):,}"),
                  ("judge: no verdict", f"{n - len(said):,}")]
    headers: tuple[str, ...] = ("pairs", "count")
    view.summary.tables.append(("human judgments of these predictions", headers, table))
    view.summary.notes.append(
        f"Judged pairs: {source}, joined to each question's prediction as nqkit judge "
        f"audit joins pairs (question key, the answer as written): {signature}")
    view.judged = judged
    view.filters = (*view.filters, Filter("judged", "human judgment", JUDGED),
                    Filter("human", "human verdict", HUMAN),
                    Filter("human_em", "human vs exact match", AGREE),
                    *((Filter("human_judge", "human vs judge",
                              (*AGREE, (NO_VERDICT, "judge gave none"))),)
                      if judge is not None else ()))
    view.columns = (*view.columns, Column("human", "human", "verdict"),
                    *((Column("judge", "judge", "verdict"),) if judge is not None else ()),
                    Column("disagree", "≠ human", "cell"))
    detail = view.detail
    info = {"source": source, "signature": signature, "judge": judge_name}

    def with_judgment(row: OpenRow) -> dict[str, Any]:
        return {**detail(row), "judgment": {**info, "pair": judged.get(row.key)}}

    view.detail = with_judgment


# ---------------------------------------------------------------------------- AmbigQA

AMBIG_KINDS = (("multi", "multiple answers"), ("single", "single answer"))
AMBIG_F1 = (("1", "F1 answer = 1"), ("partial", "0 < F1 answer < 1"), ("0", "F1 answer = 0"))
AMBIG_PREDICTED = (("answers", "answers"), ("empty", "empty list"),
                   ("missing", "no prediction"))


def load_ambigqa_view(gold: PathsLike, predictions: str, *,
                      allow_missing: bool | None = None) -> OpenView:
    """AmbigQA predictions against AmbigNQ: per question the gold annotations (one answer,
    or question-answer pairs), the predicted answers aligned to them as the metric aligns
    them, F1_ans, and for question-answer predictions the BLEU / EDIT-F1 contributions.
    Scores come from ``nqkit eval ambigqa``'s code; a question page re-traces its one
    question through the same code (:func:`nqkit.metrics.ambigqa.explain_example`) and
    checks it gets the same scores."""
    from nqkit.formats.ambignq import (
        AmbigQaPrediction,
        SingleAnswer,
        read_ambignq,
        read_ambigqa_predictions,
    )
    from nqkit.metrics.ambigqa import AnnotationTrace, explain_example

    result, allowed = run_task("ambigqa", allow_missing, gold=gold, predictions=predictions)
    references = [ex for f in expand_paths(gold, what="gold") for ex in read_ambignq(f)]
    preds = read_ambigqa_predictions(predictions)
    per_item = {it["id"]: it for it in result.item_list()}
    with_questions = any(p.questions is not None for p in preds.values())
    metrics = ["F1 answer", *(("F1 bleu4", "F1 edit-f1") if with_questions else ())]
    flags = policy_flags(allowed, result)
    summary = summary_of(result, f"nqkit eval ambigqa{flags}")
    rows: list[OpenRow] = []
    by_id = {}
    for i, ex in enumerate(references):
        by_id[ex.id] = ex
        it = per_item[ex.id]
        pred = preds.get(ex.id)
        f1 = it["F1 answer"]
        golds = [a for ann in ex.annotations
                 for a in (ann.answers if isinstance(ann, SingleAnswer) else
                           [x for qa in ann.qa_pairs for x in qa.answers])]
        rows.append(OpenRow(
            key=ex.id, position=i, question=ex.question,
            values={m: it[m] for m in metrics},
            tags={"kind": "multi" if it["is_multi"] else "single",
                  "f1": "1" if f1 == 1 else "0" if f1 == 0 else "partial",
                  "predicted": "missing" if pred is None else "answers" if pred.answers
                  else "empty"},
            search="\n".join([ex.question, *golds, *(pred.answers if pred else ()),
                              *((pred.questions or ()) if pred else ())]).lower(),
            cells={"prediction": " | ".join(pred.answers) if pred else "",
                   "kind": "multiple answers" if it["is_multi"] else "single answer"}))

    def detail(row: OpenRow) -> dict[str, Any]:
        ex = by_id[row.key]
        pred = preds.get(ex.id) or AmbigQaPrediction((), () if with_questions else None)
        scores, traces = explain_example(ex, pred, with_questions=with_questions)
        for m in metrics:  # the trace is the scoring's own code: the same numbers
            if scores[m] != per_item[ex.id][m]:
                raise InputError(f"id {ex.id}", f"the trace of {m} gives {scores[m]!r}, the "
                                 f"scoring {per_item[ex.id][m]!r}", "report this")
        anns: list[dict[str, Any]] = []
        ann_scores: list[dict[str, float]] = []
        none: list[AnnotationTrace | None] = [None] * len(ex.annotations)
        for ann, tr in zip(ex.annotations, traces or none, strict=True):
            single = isinstance(ann, SingleAnswer)
            golds = ([{"question": "", "answers": list(ann.answers)}]
                     if isinstance(ann, SingleAnswer) else
                     [{"question": qa.question, "answers": list(qa.answers)}
                      for qa in ann.qa_pairs])
            gold_of_pred: dict[int, int] = {}
            pairs = []
            if tr is not None:
                gold_of_pred = {j: i for i, j in tr.answer_matches}
                chosen = {m: {(i, j) for i, j, _ in tr.chosen.get(m, ())} for m in
                          ("F1 bleu4", "F1 edit-f1")}
                for i, j, qs in tr.pair_scores:
                    pairs.append({"gold": i + 1, "pred": j + 1,
                                  "gold_question": golds[i]["question"],
                                  "pred_question": (pred.questions or ("",))[j],
                                  "bleu": qs[:4], "edit": qs[4],
                                  "bleu4_chosen": (i, j) in chosen["F1 bleu4"],
                                  "edit_chosen": (i, j) in chosen["F1 edit-f1"]})
            matched_golds = set(gold_of_pred.values())
            ann_scores.append(tr.scores if tr is not None else {})
            anns.append({"single": single, "golds": golds, "matched_golds": matched_golds,
                         "gold_of_pred": gold_of_pred, "pairs": pairs,
                         "scores": ann_scores[-1]})
        # the annotation that gives each metric its maximum (the first of equal ones)
        best: dict[str, int] = {}
        for m in metrics if traces else ():
            values = [sc.get(m, 0.0) for sc in ann_scores]
            best[m] = values.index(max(values))
        return {"annotations": anns, "answers": list(pred.answers),
                "questions": list(pred.questions) if pred.questions is not None else None,
                "missing": ex.id not in preds, "scores": {m: scores[m] for m in metrics},
                "metrics": metrics, "best": best, "is_multi": ex.is_multi,
                "with_questions": with_questions}

    return OpenView(
        task="ambigqa", title="AmbigNQ", name=Path(predictions).name, rows=rows,
        summary=summary, detail=detail, template="open_ambigqa.html",
        filters=(Filter("kind", "gold", AMBIG_KINDS), Filter("f1", "F1 answer", AMBIG_F1),
                 Filter("predicted", "prediction", AMBIG_PREDICTED)),
        columns=(Column("prediction", "predicted answers", "cell", sortable=False),
                 Column("kind", "gold", "cell"),
                 *(Column(m, m) for m in metrics)),
        headline="F1 answer", metric="F1 answer (all)", headline_stats=result.headline_stats,
        result=result, allow_missing=allowed, allow_extra=took_extra(result),
        key_label="id", search_hint="Search questions, answers or an id")


# ---------------------------------------------------------------------------- dispatch

def _load_retrieval_view(gold: PathsLike, predictions: str, *, passages: str | None = None,
                         qrels: str | None = None, first_qid: int = 0,
                         topk: list[int] | None = None, allow_missing: bool | None = None,
                         ) -> OpenView:
    # the keywords are the view's settings (nqkit.browser.serve.view_settings): the same
    # as load_retrieval_view's, which is imported only when a retrieval view is loaded
    from nqkit.browser.run_view import load_retrieval_view

    return load_retrieval_view(gold, predictions, passages=passages, qrels=qrels,
                               first_qid=first_qid, topk=topk, allow_missing=allow_missing)


LOADERS: dict[str, Callable[..., OpenView]] = {
    "nq-open": load_nq_open_view,
    "ambigqa": load_ambigqa_view,
    "retrieval": _load_retrieval_view,
}


def load_view(task: str, gold: PathsLike, predictions: str | os.PathLike[str],
              **options: Any) -> OpenView:
    """The view of ``task`` over the gold and one predictions file (``options``: the
    loader's own, e.g. ``answer_field``)."""
    loader = LOADERS.get(task)
    if loader is None:
        raise InputError(None, f"nqkit browse has no view for --task {task}",
                         f"choose one of: {', '.join(TASKS)}")
    return loader(gold, os.fspath(predictions), **options)

