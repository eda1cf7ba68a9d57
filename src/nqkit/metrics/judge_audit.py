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

Any judge can be audited: a file of its verdicts (:mod:`nqkit.formats.verdicts`: an
oqaeval judge TSV, or JSON lines ``{question, answer, verdict}`` — the way an external
LLM's verdicts come in), or a Python callable ``judge(question, answer, gold_answers)``
returning True, False or None to abstain (:func:`audit_judge`), which is how an
exact-match convention is audited too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from nqkit.errors import InputError, for_example
from nqkit.formats.judgments import Judgment
from nqkit.formats.verdicts import Verdict
from nqkit.stats import Interval, ItemStats, bootstrap_interval
from nqkit.text.question_key import question_key, without_question_mark

__all__ = ["AuditResult", "JoinedVerdicts", "Judge", "JudgeRun", "PairVerdicts", "audit_judge",
           "audit_verdicts", "cohen_kappa", "join_verdicts", "judge_judgments", "judged_half",
           "pair_key", "run_judge"]


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
    abstained: int = 0  # pairs the judge gave no verdict on (counted in only_human)
    # the pairs in common with both verdicts, in the human judgments' order
    compared: tuple[PairVerdicts, ...] = field(default=(), repr=False, compare=False)

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


@dataclass(frozen=True, slots=True)
class PairVerdicts:
    """One judged pair on which the humans and the judge both give a verdict."""

    question: str  # as the human judgments write it
    answer: str  # the model answer, as written
    human: bool
    judge: bool


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


def judge_judgments(human: Sequence[Judgment], judge: Sequence[Verdict]) -> list[Judgment]:
    """The judge's verdicts as judgments of the human-judged pairs they join (question
    and answer spelled as the human judgments spell them; a fused row made whole), so
    that the adjudicated exact match (:mod:`nqkit.metrics.adjudicated`) can take the
    judge in the humans' place."""
    joined = join_verdicts(human, judge)
    truth = joined.human
    return [Judgment(truth[p].question, truth[p].answer, v, where=truth[p].where)
            for p, v in joined.judge.items()]


def audit_verdicts(human: Sequence[Judgment], judge: Sequence[Verdict], *,
                   resamples: int = 1000, seed: int = 0, abstained: int = 0,
                   where: str | None = None) -> AuditResult:
    """Compare ``judge``'s verdicts with the ``human`` ones on the pairs both cover;
    intervals from ``resamples`` bootstrap resamples of the pairs (0: none);
    ``abstained``, the judge's abstentions, is carried into the result.

    Raises :class:`InputError` at ``where`` when no pair is in common.
    """
    joined = join_verdicts(human, judge)
    truth, said, unmatched = joined.human, joined.judge, list(joined.unmatched)
    common = [p for p in truth if p in said]
    if not common:
        raise InputError(where, f"no (question, answer) pair of the verdicts is one of the "
                         f"{len(truth):,} judged pairs "
                         f"({for_example(repr(u) for u in unmatched)})",
                         "give the verdicts on the answers the human judgments judge (joined "
                         "by question text, case and spacing aside, and the answer as written)")
    hv = [truth[p].acceptable for p in common]
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
        accuracy_interval=acc_i, kappa_interval=kappa_i, abstained=abstained,
        compared=tuple(PairVerdicts(truth[p].question, truth[p].answer, truth[p].acceptable,
                                    said[p]) for p in common))


# A judge of one answer: (the question, the model answer as written, the question's gold
# answers) -> yes (True), no (False) or abstain (None). An LLM call, a classifier, a rule.
Judge = Callable[[str, str, Sequence[str]], "bool | None"]


@dataclass(frozen=True)
class JudgeRun:
    """A judge's verdicts on the judged pairs, and the pairs it gave none."""

    verdicts: tuple[Verdict, ...]  # one per distinct judged pair it decided, human order
    abstained: int  # pairs the judge returned None for
    no_gold: int  # judged pairs of questions ``gold`` does not hold (not asked)


def run_judge(human: Sequence[Judgment], judge: Judge,
              gold: Mapping[str, Sequence[str]]) -> JudgeRun:
    """Ask ``judge`` about every distinct judged pair whose question ``gold`` (question
    text -> gold answers; joined by :func:`pair_key`) holds, once per pair.

    Raises :class:`InputError` when the judge returns anything but True, False or None.
    """
    answers = {pair_key(q): tuple(a) for q, a in gold.items()}
    seen: set[tuple[str, str]] = set()
    out: list[Verdict] = []
    abstained = no_gold = 0
    for h in human:
        key = (pair_key(h.question), h.answer)
        if key in seen:
            continue
        seen.add(key)
        if key[0] not in answers:
            no_gold += 1
            continue
        verdict = judge(h.question, h.answer, answers[key[0]])
        if verdict is None:
            abstained += 1
            continue
        if not isinstance(verdict, bool | np.bool_):
            raise InputError(h.where, f"the judge returned {verdict!r:.40} for the answer "
                             f"{h.answer!r:.40}, not True, False or None",
                             "make the judge return a bool, or None to abstain")
        out.append(Verdict(h.question, h.answer, bool(verdict), False, h.where))
    return JudgeRun(tuple(out), abstained, no_gold)


def audit_judge(human: Sequence[Judgment], judge: Judge,
                gold: Mapping[str, Sequence[str]], *, resamples: int = 1000, seed: int = 0,
                where: str | None = None) -> AuditResult:
    """Audit any judge — a callable ``judge(question, answer, gold_answers)`` returning
    True, False or None (abstain) — against the ``human`` judgments: the judge is asked
    about each distinct judged pair whose question ``gold`` holds (question text -> gold
    answers), and its verdicts go through :func:`audit_verdicts`. Its abstentions are in
    ``abstained``; pairs it was not asked about (no gold) and abstained on are counted
    in ``only_human``.

    An exact-match convention as a judge gives what ``nqkit judge audit --convention``
    gives: ``lambda q, a, g: rule.match(a.strip(), g) is not None``.
    """
    run = run_judge(human, judge, gold)
    return audit_verdicts(human, run.verdicts, resamples=resamples, seed=seed,
                          abstained=run.abstained, where=where)
