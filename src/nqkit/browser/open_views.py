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

from nqkit.browser.open_model import Column, Filter, OpenRow, OpenView, summary_of
from nqkit.errors import InputError
from nqkit.io import PathsLike, expand_paths

__all__ = ["LOADERS", "TASKS", "load_view", "run_task", "sniff_gold"]

# What `nqkit browse --task` accepts: nq (the NQ browser, browser/app.py) and these.
TASKS = ("nq", "nq-open", "ambigqa", "retrieval")
_KIND_NAMES = {"nq": "Natural Questions (original or simplified)", "nq-open": "NQ-open",
               "ambigqa": "AmbigNQ"}


def sniff_gold(gold: PathsLike) -> str | None:
    """What the first gold file looks like: ``nq``, ``nq-open``, ``ambigqa``, or None when
    it is none of them clearly (then the task's own reader decides and explains)."""
    import orjson

    from nqkit.io import open_binary

    try:
        first = expand_paths(gold, what="gold")[0]
        with open_binary(first) as f:
            head = f.read(1 << 16)
    except (InputError, OSError, EOFError):
        return None
    text = head.lstrip()
    if text.startswith(b"["):
        if b'"singleAnswer"' in head or b'"multipleQAs"' in head:
            return "ambigqa"
        return None
    if not text.startswith(b"{"):
        return None
    if any(k in head for k in (b'"document_html"', b'"document_text"',
                               b'"long_answer_candidates"')):
        return "nq"
    line = text.split(b"\n", 1)[0]
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("question"), str) and "annotations" \
            not in obj and isinstance(obj.get("answer", obj.get("answers")), list):
        return "nq-open"
    return None


def check_gold_kind(task: str, gold: PathsLike) -> None:
    """One clear error when the gold is clearly another task's (with the flag that fits)."""
    kind = sniff_gold(gold)
    if kind is None or kind == task or (task == "retrieval" and kind == "nq-open"):
        return
    first = expand_paths(gold, what="gold")[0]
    fix = "drop --task (nq is the default)" if kind == "nq" else f"add --task {kind}"
    raise InputError(first, f"this looks like {_KIND_NAMES[kind]} gold, not "
                     f"{_KIND_NAMES.get(task, task)}", fix)


def run_task(task_name: str, allow_missing: bool | None = None, **settings: Any
             ) -> tuple[Any, bool]:
    """Score with ``nqkit eval TASK``'s code: the result, and whether it took
    ``--allow-missing`` (gold items without a prediction scored as the task scores them
    then). ``allow_missing=None``: without the flag first, so that when every item has a
    prediction the policy, and so the signature, is the command's default."""
    from nqkit.tasks.base import get_task

    task = get_task(task_name)
    if allow_missing is not None:
        return task.run(**settings, allow_missing=allow_missing), allow_missing
    try:
        return task.run(**settings, allow_missing=False), False
    except InputError as first:
        try:
            return task.run(**settings, allow_missing=True), True
        except InputError:
            raise first from None


# ---------------------------------------------------------------------------- NQ-open

def _rule_text(name: str) -> str:
    """The rule of one exact-match convention, in words, from its declaration."""
    from nqkit.metrics.em_conventions import get_convention
    from nqkit.text.normalize import normalize_answer_nfd

    c = get_convention(name)
    norm = ("NFD, lower-case, punctuation and articles removed" if c.normalize is
            normalize_answer_nfd else "lower-case, punctuation and articles removed (no NFD)")
    how = ("a gold answer is contained in the prediction" if c.contains
           else "the prediction equals a gold answer")
    return f"{how}, both normalized: {norm}"


def _disagreement(prediction: str, answers: tuple[str, ...],
                  verdicts: dict[str, bool]) -> str:
    """Which rule makes the conventions disagree on one question, in words."""
    from nqkit.metrics.em_conventions import get_convention

    yes = [n for n, ok in verdicts.items() if ok]
    no = [n for n, ok in verdicts.items() if not ok]
    if not yes or not no:
        return ""
    parts = []
    for n in yes:
        c = get_convention(n)
        gold = c.match(prediction, answers) or ""
        if c.contains and all(not get_convention(m).contains for m in no):
            parts.append(f"{n} accepts because the gold answer “{gold}” (normalized "
                         f"“{c.normalize(gold)}”) is contained in the prediction "
                         f"(normalized “{c.normalize(prediction)}”); "
                         f"{', '.join(no)} require equality")
        else:
            parts.append(f"{n} accepts: normalized by its rule the prediction "
                         f"“{c.normalize(prediction)}” meets the gold answer “{gold}” "
                         f"(“{c.normalize(gold)}”)")
    for n in no:
        c = get_convention(n)
        parts.append(f"{n} rejects: its normalized prediction is “{c.normalize(prediction)}”")
    return "; ".join(parts)


NQ_OPEN_VERDICTS = (("correct", "correct"), ("wrong", "wrong"),
                    ("no prediction", "no prediction"))


def load_nq_open_view(gold: PathsLike, predictions: str, *, answer_field: str = "answer",
                      allow_missing: bool | None = None) -> OpenView:
    """NQ-open / EfficientQA predictions against their gold: per question the gold
    answers, the prediction, the verdict of ``nqkit eval nq-open`` and under every named
    convention (``--explain``), and which rule makes the conventions disagree."""
    from nqkit.metrics.em_conventions import CONVENTIONS, get_convention
    from nqkit.report import fmt_value

    result, allowed = run_task("nq-open", allow_missing, gold=gold, predictions=predictions,
                               answer_field=answer_field, explain=True)
    items = result.item_list()
    names = tuple(CONVENTIONS.names())
    flags = (f" --answer-field {answer_field}" if answer_field != "answer" else "") + \
        (" --allow-missing" if allowed else "")
    summary = summary_of(result, f"nqkit eval nq-open --explain{flags}")
    conv = result.official["conventions"]
    total = result.official["num_total"]
    summary.tables.append((
        "the same predictions under each exact-match convention",
        ("convention", "exact match", "correct"),
        [(n, fmt_value(conv[n]["accuracy"], 4), f"{conv[n]['num_correct']:,}/{total:,}")
         for n in names]))
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
            key=str(i + 1), position=i, question=it["question"],
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
                          "norm_prediction": None if pred is None else c.normalize(pred)})
        return {"answers": list(it["answers"]), "prediction": pred,
                "matched": it["matched_answer"], "verdict": row.tags["verdict"],
                "conventions": table,
                "why": "" if pred is None else _disagreement(pred, tuple(it["answers"]),
                                                             it["conventions"]),
                "signature": result.signature}

    def headline_stats() -> Any:
        return result.headline_stats()["exact match"]

    return OpenView(
        task="nq-open", title="EfficientQA" if "efficientqa" in str(gold).lower()
        else "NQ-open", name=Path(predictions).name, rows=rows, summary=summary,
        detail=detail, template="open_nq_open.html",
        filters=(Filter("verdict", "verdict", NQ_OPEN_VERDICTS),
                 Filter("conventions", "conventions", (("disagree", "disagree"),
                                                       ("agree", "agree"))),
                 Filter("accepted", "accepted by", tuple((p, p) for p in sorted(patterns)))),
        columns=(Column("prediction", "prediction", "cell"),
                 Column("gold", "gold answers", "cell", sortable=False),
                 Column("verdict", "verdict", "verdict")),
        headline="em", metric="exact match", headline_stats=headline_stats, result=result,
        allow_missing=allowed)


# ---------------------------------------------------------------------------- dispatch

def _not_yet(task: str) -> Callable[..., OpenView]:
    def load(*args: Any, **kwargs: Any) -> OpenView:
        raise InputError(None, f"nqkit browse --task {task} is not available yet",
                         "evaluate with nqkit eval " + task + " meanwhile")
    return load


def _load_retrieval_view(*args: Any, **kwargs: Any) -> OpenView:
    from nqkit.browser.run_view import load_retrieval_view

    return load_retrieval_view(*args, **kwargs)


LOADERS: dict[str, Callable[..., OpenView]] = {
    "nq-open": load_nq_open_view,
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

