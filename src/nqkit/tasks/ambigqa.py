"""The AmbigQA task: F1_ans, F1_BLEU and F1_EDIT-F1 (Min et al. 2020, §3.2), without Java.

``nqkit eval ambigqa --gold dev_light.json --predictions preds.json``; the scoring is
:func:`nqkit.metrics.ambigqa.score_ambigqa`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nqkit.settings import Param
from nqkit.signature import ResultWarning
from nqkit.tasks.base import TASKS, Coverage, Result, Settings, Task

PARAMS: tuple[Param, ...] = (
    Param("matching", "--matching", "greedy: the official one-to-one matching (default); "
          "optimal: maximum-weight bipartite matching, reported as different metrics "
          "('... [optimal]')", default="greedy", choices=("greedy", "optimal")),
)


def result_warnings(r: Any) -> list[ResultWarning]:
    """Every warning of an AmbigQA result: the metric's and the coverage notices."""
    lines = list(r.warnings)
    if r.missing:
        lines.append(ResultWarning("missing", f"{len(r.missing):,} id(s) without a "
                                   "prediction scored as 0 ("
                                   f"{r.num_examples - len(r.missing):,}/{r.num_examples:,} "
                                   "predicted)"))
    if r.extra_predictions:
        lines.append(ResultWarning("extra", f"{r.extra_predictions:,} predicted id(s) not in "
                                   "the gold were ignored"))
    empty = r.empty_predictions - len(r.missing)
    if empty and not any(w.code == "all-empty" for w in r.warnings):
        lines.append(ResultWarning("empty", f"{empty:,} empty prediction list(s) scored "
                                   "as 0"))
    return lines


@dataclass(frozen=True, kw_only=True)
class AmbigQaSettings(Settings):
    """The settings of ``nqkit eval ambigqa`` (declared in :data:`PARAMS`)."""

    matching: str  # greedy (the official one-to-one matching) or optimal


def score(s: AmbigQaSettings) -> Result:
    from nqkit.formats.ambignq import read_ambignq, read_ambigqa_predictions
    from nqkit.io import expand_paths
    from nqkit.metrics.ambigqa import score_ambigqa

    gold, path = s.inputs()
    references = [ex for gold_file in expand_paths(gold, what="gold")
                  for ex in read_ambignq(gold_file)]
    predictions = read_ambigqa_predictions(path)
    r = score_ambigqa(references, predictions, matching=s.matching,
                      missing="empty" if s.allow_missing else "error",
                      extra="ignore" if s.allow_extra else "error")
    return ambigqa_result(r)


def ambigqa_result(r: Any, *, title: str = "AmbigQA", metrics: list[str] | None = None,
                   ) -> Result:
    """An AmbigQA score (:class:`~nqkit.metrics.ambigqa.AmbigQaResult`) as a Result;
    ``metrics`` limits the table's rows (JSON keeps every metric)."""
    import numpy as np

    from nqkit.stats import ItemStats

    warnings = result_warnings(r)
    rows = [(name, v["all"], v["multi"]) for name, v in r.metrics.items()
            if metrics is None or name in metrics]
    items = [{"id": k, "is_multi": r.is_multi[k], **v} for k, v in r.per_example.items()]

    def headline() -> dict[str, ItemStats]:
        multi = np.array([r.is_multi[k] for k in r.per_example], dtype=float)
        out: dict[str, ItemStats] = {}
        for name in r.metrics:
            scores = np.array([v[name] for v in r.per_example.values()], dtype=float)
            out[f"{name} (all)"] = ItemStats.of(scores)
            if multi.any():
                # the mean over multi-answer questions: rows [score * multi, multi]
                out[f"{name} (multi)"] = ItemStats(np.stack([scores * multi, multi], axis=1))
        return out

    official = {"metrics": r.metrics, "num_examples": r.num_examples, "num_multi": r.num_multi}
    return Result(
        task="ambigqa", title=title, rows=rows,
        headers=("metric", f"all ({r.num_examples:,})", f"multi ({r.num_multi:,})"),
        signature=r.signature, official=official, items=items, item_key="id",
        coverage=Coverage(r.num_examples - len(r.missing), r.num_examples),
        show_coverage=False, headline=headline, warnings=warnings,
        notes=["(the paper reports F1_BLEU = F1 bleu4 and F1_EDIT-F1 on multi only)"])


TASK = TASKS.add("ambigqa", Task(
    name="ambigqa", help="AmbigQA / AmbigNQ metrics (official ambigqa_evaluate_script, no Java)",
    description="Score AmbigQA predictions, {id: [answer, ...]} or {id: [{question, "
    "answer}, ...]}, against an AmbigNQ light or full file. Reports F1_ans (all and "
    "multi-answer questions) and, for question-answer pairs, F1_BLEU-1..4 and F1_EDIT-F1 "
    "(the paper reports these on multi only). Numbers equal the official script's; "
    "questions are PTB-tokenized in pure Python.",
    score=score, params=PARAMS, settings_type=AmbigQaSettings,
    gold_help="AmbigNQ JSON (e.g. dev_light.json)", predictions_help="predictions JSON object",
    headline=("F1 answer (all)", "F1 answer (multi)", "F1 bleu4 (multi)",
              "F1 edit-f1 (multi)"),
    gold_kind="ambigqa"))
