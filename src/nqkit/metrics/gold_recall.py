"""Answer recall beside gold-passage recall: how many answer-recall hits are the gold passage.

Top-k answer recall (:mod:`nqkit.metrics.answer_recall`, DPR's ``has_answer``) counts a
question at k when one of its first k passages contains an answer string. Karpukhin et al.
(2020, §5.1) note that this check gives false positives: a passage may contain the string
without answering the question. Where the gold passages of the questions are known (TREC
qrels, for instance derived from the NQ-open oracle file or DPR's ``positive_ctxs`` by
``nqkit convert qrels``), every question falls in one of three groups:

* **gold unknown**: no gold passage of the question is known (no relevant qrels line);
* otherwise, its *first answer-bearing passage* (the passage at rank ``first_hit``, the
  rank answer recall counts it at) is either a **gold** passage or not — a **coincidence**
  (the answer string occurs in a passage that is not a gold one).

A question's group does not depend on k, so for every k the answer-recall hits split
exactly: ``hits(k) = gold(k) + coincidence(k) + gold_unknown(k)``, where each term counts
the questions of that group whose ``first_hit <= k``.

**Gold-passage recall** at k (``recall:gold-passage``, a named extension) is the fraction
of the questions *with a known gold passage* that have one in their first k passages;
questions whose gold is unknown are left out of its denominator (never counted as misses)
and reported by count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["COINCIDENCE", "GOLD", "GOLD_UNKNOWN", "GoldSplitResult", "score_gold_split"]

GOLD = "gold"  # the first answer-bearing passage is a gold passage
COINCIDENCE = "coincidence"  # it holds an answer string but is not a gold passage
GOLD_UNKNOWN = "gold-unknown"  # the question has no known gold passage


@dataclass(frozen=True)
class GoldSplitResult:
    gold_recall: dict[int, float]  # k -> fraction of gold-known questions with gold in top k
    hits: dict[int, dict[str, int]]  # k -> {gold, coincidence, gold-unknown}: answer hits
    num_questions: int
    gold_known: int  # questions with at least one known gold passage
    first_gold: list[int | None] = field(repr=False)  # per question: 1-based rank or None
    kind: list[str | None] = field(repr=False)  # per question: the group of its first hit


def score_gold_split(first_hit: Sequence[int | None],
                     gold_ranks: Sequence[Sequence[int] | None],
                     ks: Sequence[int]) -> GoldSplitResult:
    """The gold/coincidence split of answer-recall hits and gold-passage recall.

    ``first_hit``: per question, the 1-based rank of its first answer-bearing passage
    (``AnswerRecallResult.first_hit``), or None. ``gold_ranks``: per question, the
    1-based ranks (within the largest k at least) of its retrieved passages that are gold
    passages, or None when no gold passage of the question is known. ``ks``: positive
    cut-offs. Raises ``ValueError`` when the two lists differ in length or no question has
    a known gold passage (gold-passage recall would mean nothing).
    """
    ks = sorted(set(ks))
    if not ks or ks[0] < 1:
        raise ValueError("ks must be positive integers")
    if len(first_hit) != len(gold_ranks):
        raise ValueError(f"{len(first_hit)} first hits for {len(gold_ranks)} gold lists")
    first_gold: list[int | None] = []
    kind: list[str | None] = []
    for hit, ranks in zip(first_hit, gold_ranks, strict=True):
        first_gold.append(min(ranks) if ranks else None)
        if hit is None:
            kind.append(None)
        elif ranks is None:
            kind.append(GOLD_UNKNOWN)
        else:
            kind.append(GOLD if hit in ranks else COINCIDENCE)
    known = sum(1 for r in gold_ranks if r is not None)
    if not known:
        raise ValueError("no question has a known gold passage")
    gold_recall = {k: sum(1 for g in first_gold if g is not None and g <= k) / known
                   for k in ks}
    hits = {k: {name: sum(1 for h, c in zip(first_hit, kind, strict=True)
                          if c == name and h is not None and h <= k)
                for name in (GOLD, COINCIDENCE, GOLD_UNKNOWN)} for k in ks}
    return GoldSplitResult(gold_recall, hits, len(first_hit), known, first_gold, kind)
