"""A retrieval run as the browser shows it: per question its ranked passages, where the
answers occur in them, the gold passages, the rank of the first hit; and the recall summary.

Everything is read and scored by the code of ``nqkit eval retrieval``
(:func:`nqkit.tasks.retrieval.score`, with the same settings and readers: DPR results
JSON, or a TREC run with ``--passages`` and ``--gold``; ``--qrels``, ``--first-qid``,
``--topk``, ``--recall``), which hands each scored question over as it streams by. So the
summary, the signature, the first-hit ranks and the gold/coincidence kinds are the
command's own numbers, never recomputed here.

Memory: a run of 3,610 questions x 100 passages lists about 361,000 passages, but a corpus
repeats them (a DPR results file writes each passage's text again for every question
that retrieved it). Each distinct passage is kept once, in :attr:`RetrievalRun.passages`;
a question keeps the indexes of its passages and their scores in two compact arrays.

Where the answers occur (:meth:`RetrievalRun.passages_of`) is computed when a question is
shown, by :func:`nqkit.text.dpr_tokenize.answer_char_spans`: the tokens of DPR's
``has_answer`` with their character offsets, so a passage has highlighted spans exactly
when ``has_answer`` holds for it.
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nqkit.formats.dpr import DprResult
from nqkit.metrics.gold_recall import COINCIDENCE, GOLD, GOLD_UNKNOWN
from nqkit.report import fmt_value
from nqkit.tasks.base import Result
from nqkit.text.dpr_tokenize import AnswerCheck, answer_char_spans
from nqkit.vocabulary import DEFAULT_CUTOFFS

__all__ = ["PassageView", "RetrievalRun", "RunPassage", "RunQuestion", "load_run",
           "rank_buckets"]

HIT_KINDS = {GOLD: "gold passage", COINCIDENCE: "coincidence", GOLD_UNKNOWN: "gold unknown"}


@dataclass(frozen=True, slots=True)
class RunPassage:
    """One distinct passage of the run (shared by every question that retrieved it)."""

    id: str  # passage id ("" when the results give none)
    title: str
    text: str


@dataclass(slots=True)
class RunQuestion:
    """One scored question: its ranked passages and the command's per-item values."""

    position: int  # 0-based, in the order ``eval retrieval --per-item`` lists it
    question: str
    qid: str  # its TREC query id: --first-qid + its 0-based line in --gold (see load_run)
    answers: tuple[str, ...]  # the gold answers it was scored with
    passages: array[int]  # indexes into RetrievalRun.passages, in rank order
    scores: array[float]  # the retriever's scores (nan: none given)
    first_hit: int | None  # 1-based rank of the first passage with an answer, within k_max
    gold: frozenset[str] | None = None  # gold passage ids (qrels); None: unknown / no qrels
    first_gold: int | None = None  # 1-based rank of the first gold passage, within k_max
    hit_kind: str | None = None  # the first hit's group (GOLD, COINCIDENCE, GOLD_UNKNOWN)
    search_text: str = ""  # question and answers, lower-cased, for the index's search

    def hit_within(self, k: int) -> bool:
        return self.first_hit is not None and self.first_hit <= k


@dataclass(frozen=True, slots=True)
class PassageView:
    """One ranked passage of a question, as the question page shows it."""

    rank: int  # 1-based
    passage: RunPassage
    score: float | None
    spans: tuple[tuple[int, int], ...]  # character spans of the answers in the text
    is_gold: bool | None  # None: no gold passage known for the question
    counted: bool  # within the largest k (ranks beyond it do not count for the recall)

    @property
    def has_answer(self) -> bool:
        return bool(self.spans)


@dataclass
class RetrievalRun:
    """A scored retrieval run (see the module docstring)."""

    name: str  # the results file's name
    result: Result  # ``nqkit eval retrieval``'s result for the same inputs
    questions: list[RunQuestion]
    passages: list[RunPassage]
    ks: tuple[int, ...]  # the cut-offs, ascending
    has_qrels: bool
    eval_args: tuple[str, ...]  # the arguments of ``nqkit eval retrieval`` it equals
    by_key: dict[str, RunQuestion] = field(default_factory=dict)
    # the has-answer check of the metric, its token cache shared by the pages shown
    check: AnswerCheck = field(default_factory=AnswerCheck, repr=False)

    def __post_init__(self) -> None:
        self.by_key = {q.question: q for q in self.questions}

    @property
    def depth(self) -> int:
        return self.ks[-1]

    @property
    def signature(self) -> str:
        return self.result.signature

    @property
    def eval_command(self) -> str:
        """The command line whose numbers the summary shows (file names as given)."""
        import shlex

        return "nqkit eval retrieval " + " ".join(map(shlex.quote, self.eval_args))

    def summary_table(self) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
        """The headers and rows of ``nqkit eval retrieval``'s table, formatted as it
        prints them."""
        r = self.result
        return r.headers, [tuple(fmt_value(v, r.digits) for v in row) for row in r.rows]

    def passages_of(self, q: RunQuestion) -> list[PassageView]:
        """The question's ranked passages with the answer spans and gold marks.

        The metric's own check (:class:`~nqkit.text.dpr_tokenize.AnswerCheck`) says which
        passages have an answer (most are ruled out without tokenizing); the spans are
        then looked for in those only.
        """
        answers = self.check.answers(q.answers)
        out = []
        for rank, (i, s) in enumerate(zip(q.passages, q.scores, strict=True), 1):
            p = self.passages[i]
            spans = answer_char_spans(answers.runs, p.text) if self.check(answers, p.text) \
                else []
            out.append(PassageView(rank, p, None if math.isnan(s) else s, tuple(spans),
                                   None if q.gold is None else p.id in q.gold,
                                   rank <= self.depth))
        return out


def rank_buckets(ks: Sequence[int]) -> list[tuple[str, int, int]]:
    """The first-hit rank buckets of the cut-offs: ``(label, low, high)``, e.g. for
    1 5 20 100: ``1``, ``2-5``, ``6-20``, ``21-100``."""
    out = []
    low = 1
    for k in sorted(set(ks)):
        out.append((str(k) if k == low else f"{low}-{k}", low, k))
        low = k + 1
    return out


class _Collector:
    """Keeps each scored question, every distinct passage once."""

    def __init__(self) -> None:
        self.passages: list[RunPassage] = []
        self.index: dict[tuple[str, str, str], int] = {}
        self.questions: list[RunQuestion] = []

    def __call__(self, r: DprResult, gold: frozenset[str] | None) -> None:
        ids = array("I")
        scores = array("d")
        for c in r.ctxs:
            key = (c.id, c.title, c.text)
            i = self.index.get(key)
            if i is None:
                i = self.index[key] = len(self.passages)
                self.passages.append(RunPassage(c.id, c.title, c.text))
            ids.append(i)
            scores.append(math.nan if c.score is None else c.score)
        self.questions.append(RunQuestion(
            len(self.questions), r.question, "", tuple(r.answers), ids, scores, None, gold,
            search_text="\n".join((r.question, *r.answers)).lower()))


def question_qids(questions: Sequence[RunQuestion], gold: Any, first_qid: int) -> list[str]:
    """Each scored question's TREC query id, the number a TREC run of these questions and
    the qrels of ``nqkit convert qrels`` give it (and ``eval retrieval --qrels`` reads
    them by): ``first_qid`` + its 0-based line in ``gold``; without ``gold``, + its
    position in the results. A question asked twice takes its lines in order."""
    if gold is None:
        return [str(first_qid + q.position) for q in questions]
    from nqkit.formats.trec import read_questions_answers

    lines: dict[str, list[int]] = {}
    for i, (question, _) in enumerate(read_questions_answers(gold)):
        lines.setdefault(question, []).append(i)
    out = []
    for q in questions:
        free = lines.get(q.question)
        if not free:  # the command scores gold questions only
            raise AssertionError(f"question {q.question!r} is not a line of the gold")
        out.append(str(first_qid + free.pop(0)))
    return out


def load_run(predictions: str | os.PathLike[str], *, gold: Any = None,
             passages: str | None = None, first_qid: int = 0, qrels: str | None = None,
             topk: Sequence[int] = DEFAULT_CUTOFFS, recall: str = "answer",
             allow_missing: bool = False, allow_extra: bool = False) -> RetrievalRun:
    """Read and score a retrieval run as ``nqkit eval retrieval`` does with the same
    options (its errors, its numbers, its signature), keeping what the browser shows."""
    from nqkit.tasks.base import get_task
    from nqkit.tasks.retrieval import score

    task = get_task("retrieval")
    given: dict[str, Any] = {"predictions": os.fspath(predictions), "gold": gold,
                             "passages": passages, "first_qid": first_qid, "qrels": qrels,
                             "topk": list(topk), "recall": recall,
                             "allow_missing": allow_missing, "allow_extra": allow_extra}
    keep = _Collector()
    result = score(task.settings(**given), keep=keep)
    items = result.item_list()
    questions = keep.questions
    if len(items) != len(questions):  # the command's items are the questions kept
        raise AssertionError(f"{len(items)} scored items for {len(questions)} questions")
    for q, qid in zip(questions, question_qids(questions, gold, first_qid), strict=True):
        q.qid = qid
    for q, item in zip(questions, items, strict=True):
        if item["question"] != q.question:
            raise AssertionError(f"item {q.position} is {item['question']!r}, "
                                 f"not {q.question!r}")
        q.first_hit = item["first_hit"]
        q.first_gold = item.get("first_gold")
        q.hit_kind = item.get("first_hit_kind")
        if qrels is not None and not item.get("gold_known"):
            q.gold = None
    args: list[str] = []
    if gold is not None:
        args += ["--gold", *([os.fspath(gold)] if isinstance(gold, str | os.PathLike)
                             else map(os.fspath, gold))]
    args += ["--predictions", os.fspath(predictions)]
    for flag, value, default in (("--passages", passages, None),
                                 ("--first-qid", first_qid, 0),
                                 ("--qrels", qrels, None), ("--recall", recall, "answer")):
        if value != default:
            args += [flag, str(value)]
    ks = tuple(sorted(set(topk)))
    if ks != DEFAULT_CUTOFFS:
        args += ["--topk", *map(str, ks)]
    args += [f for f, on in (("--allow-missing", allow_missing),
                             ("--allow-extra", allow_extra)) if on]
    return RetrievalRun(Path(predictions).name, result, questions, keep.passages, ks,
                        qrels is not None, tuple(args))
