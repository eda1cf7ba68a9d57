"""Agreement of a judge's verdicts with human judgments of the same answers.

A pair is a (question, model answer); pairs are joined as the adjudicated EM joins
judgments to questions (:mod:`nqkit.metrics.adjudicated`): the question by oqaeval's
key (:func:`nqkit.text.question_key.question_key`, a final ``?`` aside), the answer
exactly as written. A verdict row that lost the tab between its question and answer
(:mod:`nqkit.formats.verdicts`) is joined to the judged pair whose question and answer,
run together, are its text. A pair judged twice keeps its first verdict.

On the pairs both sides cover: accuracy (agreement), Cohen's kappa (Cohen 1960:
``(p_o - p_e) / (1 - p_e)``, ``p_e`` from the two sides' yes rates), the missed yes
(human yes, judge no; rate over human yes) and false yes (human no, judge yes; rate over
human no), and percentile bootstrap intervals of accuracy and kappa over the pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from nqkit.errors import InputError, for_example
from nqkit.formats.judgments import Judgment
from nqkit.formats.verdicts import Verdict
from nqkit.stats import Interval, ItemStats, bootstrap_interval
from nqkit.text.question_key import question_key, without_question_mark

__all__ = ["AuditResult", "JoinedVerdicts", "audit_verdicts", "cohen_kappa", "join_verdicts",
           "judged_half", "pair_key"]


@dataclass(frozen=True)
class AuditResult:
    """How a judge's verdicts agree with the human ones on the pairs both cover."""

    pairs: int  # pairs in common
    accuracy: float
    kappa: float  # nan when both sides give one same verdict to every pair
    missed_yes: int  # human yes, judge no
    false_yes: int  # human no, judge yes
    human_yes: int
    human_no: int
    only_human: int  # judged pairs the judge has no verdict on
    only_judge: int  # verdicts on pairs no human judged
    accuracy_interval: Interval | None
    kappa_interval: Interval | None

    @property
    def missed_yes_rate(self) -> float:
        return self.missed_yes / self.human_yes if self.human_yes else float("nan")

    @property
    def false_yes_rate(self) -> float:
        return self.false_yes / self.human_no if self.human_no else float("nan")


def _kappa(sums: NDArray[np.float64]) -> NDArray[np.float64]:
    """Kappa from sums of per-pair rows ``[agree, human yes, judge yes, 1]``."""
    n = sums[..., 3]
    po, ph, pj = sums[..., 0] / n, sums[..., 1] / n, sums[..., 2] / n
    pe = ph * pj + (1 - ph) * (1 - pj)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: NDArray[np.float64] = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
    return out


def _accuracy(sums: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = sums[..., 0] / sums[..., 3]
    return out


def cohen_kappa(human: Sequence[bool], judge: Sequence[bool]) -> float:
    """Cohen's kappa of two yes/no raters over the same items."""
    return float(_kappa(_rows(human, judge).sum(axis=0)))


def _rows(human: Sequence[bool], judge: Sequence[bool]) -> NDArray[np.float64]:
    h = np.asarray(human, dtype=np.float64)
    j = np.asarray(judge, dtype=np.float64)
    return np.stack([(h == j).astype(np.float64), h, j, np.ones_like(h)], axis=1)


def pair_key(question: str) -> str:
    """The question's part of a judged pair's join key: oqaeval's key, a final ``?``
    aside."""
    return without_question_mark(question_key(question))


def judged_half(question: str) -> str:
    """``"dev"`` or ``"held-out"``: the half of the judged questions ``question`` is in.

    A rule built from human judgments (the ``equiv`` convention) is developed by reading
    the disagreements of the ``dev`` half only and measured on the ``held-out`` half, so
    its agreement there is not fitted. The half is the parity of the first byte of the
    SHA-256 of the question's join key (:func:`pair_key`, UTF-8): fixed per question,
    whatever other questions a judgments file holds, and about half of any set. Fixed
    before any judgment was read; never to be re-drawn to flatter a rule.
    """
    import hashlib

    digest = hashlib.sha256(pair_key(question).encode("utf-8")).digest()
    return "dev" if digest[0] % 2 == 0 else "held-out"


@dataclass(frozen=True)
class JoinedVerdicts:
    """Human judgments and a judge's verdicts joined by pair: ``(pair_key(question),
    answer as written)``."""

    human: dict[tuple[str, str], Judgment]  # each judged pair's first judgment, file order
    judge: dict[tuple[str, str], bool]  # the judge's first verdict on a judged pair
    unmatched: tuple[str, ...]  # the judge's verdicts on no judged pair, as text


def join_verdicts(human: Sequence[Judgment], judge: Sequence[Verdict] = ()
                  ) -> JoinedVerdicts:
    """The join of the audit (see the module doc), for it and for the browser
    (``nqkit browse --judgments``), so that both find the same pairs."""
    truth: dict[tuple[str, str], Judgment] = {}
    fused: dict[str, tuple[str, str]] = {}
    for h in human:
        pair = (pair_key(h.question), h.answer)
        truth.setdefault(pair, h)
        fused.setdefault(h.question + h.answer, pair)
    said: dict[tuple[str, str], bool] = {}
    unmatched: list[str] = []
    for v in judge:
        found = fused.get(v.question) if v.answer is None else (pair_key(v.question), v.answer)
        if found is None or found not in truth:
            unmatched.append(v.question if v.answer is None else f"{v.question} / {v.answer}")
            continue
        said.setdefault(found, v.acceptable)
    return JoinedVerdicts(truth, said, tuple(unmatched))


def audit_verdicts(human: Sequence[Judgment], judge: Sequence[Verdict], *,
                   resamples: int = 1000, seed: int = 0,
                   where: str | None = None) -> AuditResult:
    """Compare ``judge``'s verdicts with the ``human`` ones on the pairs both cover;
    intervals from ``resamples`` bootstrap resamples of the pairs (0: none).

    Raises :class:`InputError` at ``where`` when no pair is in common.
    """
    joined = join_verdicts(human, judge)
    truth = {p: j.acceptable for p, j in joined.human.items()}
    said, unmatched = joined.judge, joined.unmatched
    common = [p for p in truth if p in said]
    if not common:
        raise InputError(where, f"no (question, answer) pair of the verdicts is one of the "
                         f"{len(truth):,} judged pairs "
                         f"({for_example(repr(u) for u in unmatched)})",
                         "give the verdicts on the answers the human judgments judge (joined "
                         "by question text, case and spacing aside, and the answer as written)")
    hv = [truth[p] for p in common]
    jv = [said[p] for p in common]
    rows = _rows(hv, jv)
    sums = rows.sum(axis=0)
    acc_i = kappa_i = None
    if resamples:
        acc_i = bootstrap_interval(ItemStats(rows, _accuracy), resamples=resamples, seed=seed)
        kappa_i = bootstrap_interval(ItemStats(rows, _kappa), resamples=resamples, seed=seed)
    human_yes = sum(hv)
    return AuditResult(
        pairs=len(common), accuracy=float(_accuracy(sums)), kappa=float(_kappa(sums)),
        missed_yes=sum(h and not j for h, j in zip(hv, jv, strict=True)),
        false_yes=sum(j and not h for h, j in zip(hv, jv, strict=True)),
        human_yes=human_yes, human_no=len(common) - human_yes,
        only_human=len(truth) - len(common), only_judge=len(unmatched) + len(said) - len(common),
        accuracy_interval=acc_i, kappa_interval=kappa_i)
