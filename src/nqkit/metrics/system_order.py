"""Does a judge reorder the systems? Scores of several systems under the humans and under
a judge, and Kendall's tau-b between the two orders.

Kamalloo et al. (ACL 2023, §4, Table 2) rank twelve open-domain QA systems by exact
match and by their human judgments and find that exact match reorders them. Here, for
any judge: each system is scored on the questions the human judgments cover

* under the humans: the adjudicated exact match (:mod:`nqkit.metrics.adjudicated`,
  oqaeval's ``AnnotatedEM``) with the human judgments;
* under the judge: the same adjudication with the judge's verdicts in the humans' place
  (:func:`nqkit.metrics.judge_audit.judge_judgments`; a covered question the judge
  judges no answer of is scored against its gold as given), or, for a judge that is a
  function (an exact-match convention, a lab's own judge), the judge's verdict on the
  system's prediction itself (an abstention leaves the question out of that system's
  judge score; a missing prediction is wrong).

Every system must answer the same judged questions. Ranks are competition ranks (1 is
the best score; tied systems share the best of their ranks). Kendall's tau-b (Kendall
1945; the tie-corrected form scipy's ``kendalltau`` computes by default) is
``(concordant - discordant) / sqrt((n0 - ties_x) * (n0 - ties_y))`` over the ``n0``
pairs of systems, undefined (nan) when one side ties every system. Its 95% interval is
the percentile bootstrap over the covered questions (each resample rescored for every
system, under both sides).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nqkit.errors import InputError, for_example
from nqkit.formats.judgments import Judgment
from nqkit.metrics.adjudicated import adjudications, score_adjudicated
from nqkit.metrics.judge_audit import Judge
from nqkit.stats import Interval, ItemStats, bootstrap_interval
from nqkit.text.question_key import question_key

__all__ = ["SystemOrder", "SystemScore", "kendall_tau_b", "order_systems", "ranks"]

# one system's rows: (question, gold answers, the prediction as scored or None if missing)
Rows = Sequence[tuple[str, Sequence[str], "str | None"]]


@dataclass(frozen=True, slots=True)
class SystemScore:
    """One system's score under the humans and under the judge."""

    name: str
    human: float  # adjudicated EM with the human judgments (oqaeval's AnnotatedEM)
    judge: float  # the same with the judge in the humans' place; nan if none scored
    human_rank: int  # 1 = best
    judge_rank: int
    human_questions: int  # questions in the human score
    judge_questions: int  # questions in the judge score (fewer when it abstains)


@dataclass(frozen=True)
class SystemOrder:
    """The systems' scores and how much the judge reorders them."""

    systems: tuple[SystemScore, ...]  # in the order given
    tau: float  # Kendall's tau-b between the human and the judge scores
    interval: Interval | None  # percentile bootstrap over the questions
    questions: int  # judged questions every system answers


def _tau_b(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Tau-b along the last axis of ``x`` and ``y`` (any leading shape)."""
    n = x.shape[-1]
    i, j = np.triu_indices(n, 1)
    dx = np.sign(x[..., i] - x[..., j])
    dy = np.sign(y[..., i] - y[..., j])
    with np.errstate(divide="ignore", invalid="ignore"):
        den = np.sqrt(np.count_nonzero(dx, axis=-1) * np.count_nonzero(dy, axis=-1)
                      .astype(np.float64))
        out: NDArray[np.float64] = np.where(den > 0, (dx * dy).sum(axis=-1) / den, np.nan)
    return out


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b of two equally long score vectors (nan when either is constant)."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"two vectors of one length, not {a.shape} and {b.shape}")
    return float(_tau_b(a, b))


def ranks(scores: Sequence[float]) -> list[int]:
    """Competition ranks, best (highest) first: 1 + the number of higher scores."""
    return [1 + sum(bool(t > s) for t in scores) for s in scores]


def _covered(name: str, rows: Rows, judged: set[str]) -> dict[str, tuple[str, Sequence[str],
                                                                         str | None]]:
    out: dict[str, tuple[str, Sequence[str], str | None]] = {}
    for row in rows:
        key = question_key(row[0])
        if key in judged:
            out.setdefault(key, row)
    if not out:
        raise InputError(name, f"the system answers none of the {len(judged):,} judged "
                         f"questions ({for_example(repr(r[0]) for r in rows)})",
                         "give the system's predictions on the questions the judgments "
                         "judge (joined by question text, case and spacing aside)")
    return out


def order_systems(systems: Sequence[tuple[str, Rows]], human: Sequence[Judgment], *,
                  judge_judgments: Sequence[Judgment] | None = None,
                  judge: Judge | None = None, resamples: int = 1000, seed: int = 0,
                  where: str | None = None,
                  files: Sequence[str] | None = None) -> SystemOrder:
    """Score each of ``systems`` — (name, rows of (question, gold answers, prediction or
    None)) — under the ``human`` judgments and under the judge: its verdicts as
    ``judge_judgments``, or a ``judge(question, answer, gold)`` callable; Kendall's
    tau-b between the two, with a bootstrap interval from ``resamples`` (0: none).

    Raises :class:`InputError` for fewer than two systems, a system that answers none of
    the judged questions or not all those the others answer (at its file, from ``files``,
    or its name); ``where`` (the judgments file) is where the adjudication's refusals
    point.
    """
    if (judge_judgments is None) == (judge is None):
        raise ValueError("give the judge's verdicts (judge_judgments) or a judge, not both")
    if len(systems) < 2:
        raise InputError("--systems", f"{len(systems)} system given: an order needs two or "
                         "more", "give the predictions files of two systems or more")
    places = list(files) if files is not None else [name for name, _ in systems]
    table, _, _ = adjudications(human)
    covered = [(name, _covered(place, rows, set(table)))
               for (name, rows), place in zip(systems, places, strict=True)]
    keys = list(dict.fromkeys(k for _, c in covered for k in c))
    for (_, c), place in zip(covered, places, strict=True):
        lacking = [k for k in keys if k not in c]
        if lacking:
            raise InputError(place, f"the system lacks {len(lacking):,} of the {len(keys):,} "
                             "judged questions the other systems answer "
                             f"({for_example(repr(k) for k in lacking)})",
                             "give every system's predictions on the same questions")
    judge_table = set(adjudications(judge_judgments)[0]) if judge_judgments else set()
    n, q = len(systems), len(keys)
    stats = np.zeros((q, 4 * n))  # per question: human correct, counted, judge correct, counted
    for s, (_, c) in enumerate(covered):
        rows = [c[k] for k in keys]
        h = score_adjudicated(rows, human, where=where).items
        j = None
        if judge_judgments is not None and judge_table.intersection(c):
            j = score_adjudicated(rows, judge_judgments, where=where).items
        for i, (question, gold, prediction) in enumerate(rows):
            hv = h[question].correct
            jv: bool | None
            if judge is not None:
                jv = False if prediction is None else judge(question, prediction, tuple(gold))
            elif j is not None and question in j:
                jv = j[question].correct
            else:
                jv = h[question].correct_before
            stats[i, [s, n + s, 2 * n + s, 3 * n + s]] = (
                bool(hv), hv is not None, bool(jv), jv is not None)

    def taus(sums: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            return _tau_b(sums[..., :n] / sums[..., n:2 * n],
                          sums[..., 2 * n:3 * n] / sums[..., 3 * n:])

    sums = stats.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        hs, js = sums[:n] / sums[n:2 * n], sums[2 * n:3 * n] / sums[3 * n:]
    hr, jr = ranks([float(v) for v in hs]), ranks([float(v) for v in js])
    scores = tuple(SystemScore(name, float(hs[s]), float(js[s]), hr[s], jr[s],
                               int(sums[n + s]), int(sums[3 * n + s]))
                   for s, (name, _) in enumerate(systems))
    interval = None
    if resamples:
        interval = bootstrap_interval(ItemStats(stats, taus), resamples=resamples, seed=seed)
    return SystemOrder(scores, float(taus(sums)), interval, q)
