"""Human upper bounds on NQ (paper §5.2): a single annotator and a "super-annotator".

From k-way annotated examples, each example's annotations are split into ``references``
annotations that play the gold (scored with the official rules of
:mod:`nqkit.metrics.nq`: the ``beta``-of-references rule and any-annotator span
matching) and the remaining ``pool`` annotations that play predictors:

* **single annotator**: every pool annotation is one prediction; precision and recall are
  pooled over all (example, split, pool annotation) triples, i.e. the expected score of one
  random annotator;
* **super-annotator**: predicts NULL when fewer than ``votes`` pool annotators gave a
  non-null long answer (paper: ``g(b) < 8`` of 20), else the long answer most of them gave
  (ties: the earliest in the document). The short answer is chosen the same way among the
  pool annotations with a short answer (a yes/no answer or a set of spans; ties: the first
  one in annotation order).

The paper used 25-way data (5 references, 20 in the pool). With k-way data, ``splits =
"first"`` uses the first ``references`` annotations as references; ``"all"`` averages over
every choice of ``references`` of the k annotations (for 5-way data with ``references=4``
this is leave-one-annotator-out, where the pool is a single annotator and the
super-annotator with ``votes=1`` coincides with the single annotator).
Humans give no scores, so there is no threshold sweep: P, R and F1 are at the one point.
A vote threshold above the pool size (the super-annotator would never answer) and
references without any answer are refused; a task whose references never have an answer
carries a warning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Literal

from nqkit.errors import InputError
from nqkit.errors import for_example as examples_of
from nqkit.formats.nq import NULL_SPAN, Annotation, Span
from nqkit.formats.nq_predictions import NqPrediction
from nqkit.metrics.nq import AnswerStat, score_long, score_short
from nqkit.metrics.prf import prf
from nqkit.signature import ResultWarning, make_signature

SplitMode = Literal["first", "all"]
MAX_SPLITS_PER_EXAMPLE = 10_000
PAPER_VOTE_FRACTION = 8 / 20  # the paper's super-annotator threshold, as a pool fraction


@dataclass(frozen=True, slots=True)
class Prf:
    """Precision, recall and F1 with the counts behind them."""

    precision: float
    recall: float
    f1: float
    correct: int  # non-null predictions that are correct
    predicted: int  # non-null predictions
    gold: int  # cases whose references have an answer (beta-of-references rule)

    @classmethod
    def from_counts(cls, correct: int, predicted: int, gold: int) -> Prf:
        return cls(*prf(correct, predicted, gold), correct, predicted, gold)

    @classmethod
    def from_stats(cls, stats: Sequence[AnswerStat]) -> Prf:
        return cls.from_counts(sum(s.is_correct for s in stats),
                               sum(s.pred_has_answer for s in stats),
                               sum(s.gold_has_answer for s in stats))


@dataclass(frozen=True)
class HumanBounds:
    """Single-annotator and super-annotator scores for long and short answers."""

    single_long: Prf
    single_short: Prf
    super_long: Prf
    super_short: Prf
    num_examples: int
    num_splits: int  # (example, split) pairs scored
    references: int
    beta: int
    votes: int | None  # None: PAPER_VOTE_FRACTION of each pool, rounded, at least 1
    splits: SplitMode
    signature: str
    warnings: tuple[ResultWarning, ...] = ()  # what limits the meaning of the numbers
    splits_per_example: tuple[int, ...] = ()  # the distinct numbers of splits of an example


def _span_key(s: Span) -> tuple[int, int, int, int]:
    return (s.start_byte, s.end_byte, s.start_token, s.end_token)


def _short_key(a: Annotation) -> Hashable:
    if a.yes_no_answer != "NONE":
        return ("yes_no", a.yes_no_answer)
    return ("spans", frozenset(_span_key(s) for s in a.short_answers if not s.is_null))


def pool_votes(pool_size: int, votes: int | None) -> int:
    """The vote threshold for a pool: ``votes``, or the paper's 8/20 of the pool."""
    if votes is not None:
        return votes
    return max(1, round(PAPER_VOTE_FRACTION * pool_size))


def super_annotator(example_id: int | str, pool: Sequence[Annotation], votes: int
                    ) -> NqPrediction:
    """The super-annotator's prediction from a pool of annotations (paper §5.2)."""
    longs = [a.long_answer for a in pool if a.has_long]
    long_span = NULL_SPAN
    if len(longs) >= votes and longs:
        counts = Counter(_span_key(s) for s in longs)
        long_span = min(longs, key=lambda s: (-counts[_span_key(s)], s.start_token,
                                              s.start_byte, -s.end_token))
    shorts = [a for a in pool if a.has_short]
    short_spans: tuple[Span, ...] = ()
    yes_no = "NONE"
    if len(shorts) >= votes and shorts:
        counts_s = Counter(_short_key(a) for a in shorts)
        best = max(counts_s.values())
        chosen = next(a for a in shorts if counts_s[_short_key(a)] == best)
        if chosen.yes_no_answer != "NONE":
            yes_no = chosen.yes_no_answer
        else:
            short_spans = tuple(s for s in chosen.short_answers if not s.is_null)
    return NqPrediction(example_id, long_span, float(len(longs)), short_spans,
                        float(len(shorts)), yes_no)


def annotation_as_prediction(example_id: int | str, a: Annotation) -> NqPrediction:
    """One annotator's answer, as a system prediction."""
    return NqPrediction(example_id, a.long_answer, 1.0,
                        tuple(s for s in a.short_answers if not s.is_null), 1.0,
                        a.yes_no_answer)


def _split_indices(k: int, references: int, splits: SplitMode) -> list[tuple[int, ...]]:
    if splits == "first":
        return [tuple(range(references))]
    return list(combinations(range(k), references))


def human_bounds(examples: Sequence[tuple[int | str, Sequence[Annotation]]], *,
                 references: int = 5, beta: int = 2, votes: int | None = None,
                 splits: SplitMode = "first") -> HumanBounds:
    """Estimate human precision/recall/F1 from k-way annotated examples (paper §5.2).

    ``examples`` are ``(example_id, annotations)`` pairs with at least ``references + 1``
    annotations each. See the module docstring for the procedure.
    """
    if references < 1:
        raise InputError(None, f"references must be at least 1, got {references}",
                         "the paper uses 5 references")
    if not 1 <= beta <= references:
        raise InputError(None, f"beta must be between 1 and references ({references}), "
                         f"got {beta}", "the official rule is beta=2")
    if votes is not None and votes < 1:
        raise InputError(None, f"votes must be at least 1, got {votes}",
                         "the paper's super-annotator used 8 votes of a pool of 20")
    if splits not in ("first", "all"):
        raise InputError(None, f"unknown split mode {splits!r}", "use 'first' or 'all'")
    if not examples:
        raise InputError(None, "no examples given", "give k-way annotated examples")
    single_long: list[AnswerStat] = []
    single_short: list[AnswerStat] = []
    super_long: list[AnswerStat] = []
    super_short: list[AnswerStat] = []
    n_splits = 0
    per_example: set[int] = set()
    auto_votes: set[tuple[int, int]] = set()  # (votes, pool size) used when votes is None
    out_of_reach: list[int | str] = []  # examples whose pool is smaller than the vote threshold
    for ex_id, anns in examples:
        k = len(anns)
        if k < references + 1:
            raise InputError(str(ex_id), f"the example has {k} annotations, fewer than "
                             f"references + 1 = {references + 1}",
                             "use fewer references (e.g. --num-references 4 --splits all on "
                             "5-way data: leave one annotator out)")
        if splits == "all" and comb(k, references) > MAX_SPLITS_PER_EXAMPLE:
            raise InputError(str(ex_id), f"{comb(k, references):,} ways to choose "
                             f"{references} of {k} references, too many to enumerate",
                             "use --splits first")
        split_indices = _split_indices(k, references, splits)
        per_example.add(len(split_indices))
        if votes is None:
            auto_votes.add((pool_votes(k - references, None), k - references))
        for ref_idx in split_indices:
            refs = [anns[i] for i in ref_idx]
            pool = [a for i, a in enumerate(anns) if i not in ref_idx]
            n_splits += 1
            for a in pool:
                pred = annotation_as_prediction(ex_id, a)
                single_long.append(score_long(refs, pred, beta))
                single_short.append(score_short(refs, pred, beta))
            if votes is not None and votes > len(pool) and ex_id not in out_of_reach:
                out_of_reach.append(ex_id)
            sup = super_annotator(ex_id, pool, pool_votes(len(pool), votes))
            super_long.append(score_long(refs, sup, beta))
            super_short.append(score_short(refs, sup, beta))
    warnings: list[ResultWarning] = []
    if out_of_reach:
        pools = sorted({len(a) - references for _, a in examples})
        if len(out_of_reach) == len(examples):
            raise InputError(None, f"--votes {votes} is more than the pool of "
                             f"{'/'.join(map(str, pools))} annotation(s) per example, so the "
                             "super-annotator would never answer and score 0",
                             f"pass --votes {pools[0]} or less, or leave --votes out "
                             "(8/20 of the pool)")
        warnings.append(ResultWarning(
            "votes-out-of-reach", f"{len(out_of_reach):,} of {len(examples):,} examples have "
            f"fewer than {votes} pool annotations ({examples_of(out_of_reach)}); there the "
            "super-annotator never answers — lower --votes"))
    gold = {"long": sum(s.gold_has_answer for s in super_long),
            "short": sum(s.gold_has_answer for s in super_short)}
    if not any(gold.values()):
        raise InputError(None, f"in none of the {n_splits:,} reference sets do >= {beta} "
                         "references give an answer, so every recall and F1 would be 0",
                         "use gold with answered examples, or a lower --beta")
    for task, count in gold.items():
        if not count:
            warnings.append(ResultWarning(
                f"no-gold-{task}", f"in none of the {n_splits:,} reference sets do >= {beta} "
                f"references give a {task} answer, so {task}-answer recall and F1 are 0 — "
                "score more examples"))
    # the paper's 8/20 rule, with the threshold it gave for each pool size (8/20 for a pool
    # of 20; 1/1 for a pool of one, where the super-annotator is the single annotator)
    auto = "auto(" + ",".join(f"{v}/{n}" for v, n in sorted(auto_votes, key=lambda t: t[1])) + ")"
    sig = make_signature("nq-human", {
        "refs": references, "beta": beta,
        "votes": votes if votes is not None else auto, "splits": splits}, warnings)
    return HumanBounds(
        single_long=Prf.from_stats(single_long), single_short=Prf.from_stats(single_short),
        super_long=Prf.from_stats(super_long), super_short=Prf.from_stats(super_short),
        num_examples=len(examples), num_splits=n_splits, references=references, beta=beta,
        votes=votes, splits=splits, signature=sig, warnings=tuple(warnings),
        splits_per_example=tuple(sorted(per_example)))
