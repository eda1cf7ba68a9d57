"""Analyses beyond the official NQ script: breakdowns, and the rows bootstrap intervals use.

Both start from the per-example statistics of :func:`nqkit.metrics.nq.evaluate_nq`, so
they add no second implementation of the scoring rules.

* Breakdowns group examples by the gold long-answer type (paper §6.4) or by question word,
  and report precision/recall/F1 inside each group *at the overall best threshold* (the
  operating point the system would use), not a threshold re-tuned per group.
* :func:`stat_rows` and :func:`best_f1_stacks` give :mod:`nqkit.stats` the per-example
  rows and the vectorised official sweep, so bootstrap intervals and paired tests re-tune
  the threshold in each resample, as the metric is defined.

A group without gold answers has no recall and no F1 (``None``, printed ``-``), and a
group without predictions no precision: a 0 there would read as a measured failure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nqkit.metrics.nq import AnswerStat, NqResult
from nqkit.metrics.prf import f1_score

QUESTION_WORDS: tuple[str, ...] = ("who", "when", "where", "what", "how", "which")
_WORD_RE = re.compile(r"[a-z]+")


def question_word(question: str) -> str:
    """The first of who/when/where/what/how/which in the question, else ``other``.

    NQ questions are search queries and often do not start with their wh-word
    ("the song ... who sings it"), so the first occurrence anywhere is used.
    """
    for w in _WORD_RE.findall(question.lower()):
        if w in QUESTION_WORDS:
            return w
    return "other"


@dataclass(frozen=True, slots=True)
class GroupScore:
    """Precision/recall/F1 of one group of examples at a fixed threshold."""

    group: str
    examples: int  # examples in the group
    gold: int  # of which have a gold answer
    predicted: int  # non-null predictions scored at or above the threshold
    correct: int
    precision: float | None  # None without predictions
    recall: float | None  # None without gold answers
    f1: float | None  # None without gold answers


def score_at_threshold(stats: Sequence[AnswerStat], threshold: float, group: str) -> GroupScore:
    gold = sum(s.gold_has_answer for s in stats)
    kept = [s for s in stats if s.score >= threshold]
    predicted = sum(s.pred_has_answer for s in kept)
    correct = sum(s.is_correct for s in kept)
    p = correct / predicted if predicted else None
    r = correct / gold if gold else None
    f1: float | None = None
    if r is not None:
        f1 = f1_score(p or 0.0, r)
    return GroupScore(group, len(stats), gold, predicted, correct, p, r, f1)


def group_scores(result: NqResult, labels: Sequence[str], *, task: str = "long",
              order: Sequence[str] = ()) -> list[GroupScore]:
    """Scores per group; ``labels`` is aligned with ``result.example_ids``."""
    stats = result.long_stats if task == "long" else result.short_stats
    thr = (result.long if task == "long" else result.short).best_threshold
    groups: dict[str, list[AnswerStat]] = {}
    for label, s in zip(labels, stats, strict=True):
        groups.setdefault(label, []).append(s)
    names = [g for g in order if g in groups] + sorted(g for g in groups if g not in order)
    rows = [score_at_threshold(groups[g], thr, g) for g in names]
    rows.append(score_at_threshold(stats, thr, "all"))
    return rows


STAT_COLUMNS = ("score", "gold", "predicted", "correct")


def stat_rows(stats: Sequence[AnswerStat]) -> np.ndarray:
    """Per-example statistics as an n x 4 matrix (columns :data:`STAT_COLUMNS`)."""
    return np.array([(s.score, s.gold_has_answer, s.pred_has_answer, s.is_correct)
                     for s in stats], dtype=float).reshape(len(stats), 4)


def best_f1_stacks(stacks: np.ndarray) -> np.ndarray:
    """Best-threshold F1 of each of R stacks of example rows (R x n x 4), vectorised.

    The official sweep (:func:`nqkit.metrics.nq.sweep`): examples in descending score
    order, precision and recall evaluated after the last example of each run of equal
    scores (ties enter together), F1 maximised over those points. Paired tests
    (:mod:`nqkit.stats`) resample or exchange rows and re-tune the threshold this way.
    """
    scores = stacks[..., 0]
    order = np.argsort(-scores, axis=1, kind="stable")
    s = np.take_along_axis(stacks, order[..., None], axis=1)
    sc, gold, pred, corr = s[..., 0], s[..., 1], s[..., 2], s[..., 3]
    cum_c = np.cumsum(corr, axis=1)
    cum_p = np.cumsum(pred, axis=1)
    total_g = gold.sum(axis=1, keepdims=True)
    last = np.ones(sc.shape, dtype=bool)
    last[:, :-1] = sc[:, 1:] != sc[:, :-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(cum_p > 0, cum_c / cum_p, 0.0)
        rec = np.where(total_g > 0, cum_c / total_g, 0.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
    return np.asarray(np.where(last, f1, 0.0).max(axis=1, initial=0.0))
