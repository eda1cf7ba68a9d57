"""Gold passages as TREC qrels, derived from the NQ-open oracle file and DPR bi-encoder files.

TREC qrels (``qid 0 docid relevance``, :mod:`nqkit.formats.trec`) name a question by its
number and a passage by its corpus id. nqkit numbers questions as Pyserini numbers DPR
topics and as ``nqkit eval retrieval`` reads a TREC run: ``first_qid + i`` for the i-th
question (0-based) of a questions file (DPR ``.qa.tsv`` or NQ-open JSONL). The sources:

* **NQ-open oracle** (``nq-open-oracle.jsonl.gz``: ``{"question", "answers", "ctxs":
  [{"title", "text", "hasanswer", "isgold"}], "nq_annotated_gold"}``): the gold passages
  are the contexts with ``"isgold": true``. They carry **no passage id**, so a gold passage
  is matched to the corpus by its content: a corpus passage is gold when its title and its
  text equal the gold passage's title and text after whitespace is collapsed (every run of
  whitespace read as one space, ends stripped) — rule ``match:title+text-ws``. Collapsing
  whitespace matters: passage files hold one passage per line, and tools that write them
  (DPR's among them) turn tabs and line breaks inside a text into spaces. Every corpus
  passage that matches is gold (a corpus may hold one passage twice under two ids).
* **DPR bi-encoder data** (``biencoder-nq-dev.json``): the ``positive_ctxs`` of a
  question, by their ``passage_id`` (rule ``match:id``); an id the corpus does not hold
  is dropped and counted.

A question of the source that is not in the questions file is dropped and counted; a
question whose gold passage is not in the corpus gets no qrels line, so it is *gold
unknown* for ``nqkit eval retrieval --qrels`` (never a miss).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nqkit.errors import InputError, for_example, location
from nqkit.formats.dpr import DprBiencoderExample, DprContext
from nqkit.formats.trec import TrecQrel
from nqkit.io import PathsLike, expand_paths, iter_lines, parse_json_line

K = TypeVar("K")  # what identifies a gold passage: an id, or a (title, text) key

__all__ = [
    "MATCH_ID",
    "MATCH_TEXT",
    "NqOpenOracleExample",
    "QrelsDerivation",
    "content_key",
    "qrels_from_biencoder",
    "qrels_from_oracle",
    "question_numbers",
    "read_nq_open_oracle",
]

MATCH_TEXT = "title+text-ws"  # title and text equal, whitespace collapsed
MATCH_ID = "id"  # the passage id


@dataclass(frozen=True, slots=True)
class NqOpenOracleExample:
    """One line of the NQ-open oracle file."""

    question: str
    answers: tuple[str, ...]
    gold: tuple[DprContext, ...]  # the contexts marked "isgold": true (no passage id)
    where: str | None = field(default=None, compare=False)  # file:line, for messages


def read_nq_open_oracle(paths: PathsLike) -> Iterator[NqOpenOracleExample]:
    """Lazily read NQ-open oracle files (JSON lines, plain or gzipped)."""
    keys = '{"question", "answers", "ctxs": [{"title", "text", "isgold"}]}'
    for path in expand_paths(paths, what="NQ-open oracle"):
        for lineno, raw in iter_lines(path):
            where = location(path, lineno) or str(path)
            obj = parse_json_line(raw, where)
            ctxs = obj.get("ctxs") if isinstance(obj, dict) else None
            if not isinstance(obj, dict) or not isinstance(obj.get("question"), str) \
                    or not isinstance(ctxs, list):
                raise InputError(where, "expected an object with a string 'question' and a "
                                 "list 'ctxs'", f"each line of the oracle file is {keys}")
            answers = obj.get("answers", [])
            if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                raise InputError(where, "'answers' must be a list of strings",
                                 f"each line of the oracle file is {keys}")
            gold = []
            for i, c in enumerate(ctxs, 1):
                if not isinstance(c, dict) or not isinstance(c.get("text"), str) \
                        or not isinstance(c.get("title", ""), str):
                    raise InputError(where, f"a context must have a string 'title' and "
                                     f"'text', found {c!r:.60}",
                                     f"each line of the oracle file is {keys}")
                if _is_gold(c, i, where):
                    gold.append(DprContext("", c["title"], c["text"]))
            yield NqOpenOracleExample(obj["question"], tuple(answers), tuple(gold), where)


def _is_gold(ctx: dict[str, Any], i: int, where: str) -> bool:
    """Whether context ``i`` (1-based) of a line is a gold passage. ``isgold`` must be a
    JSON boolean: a string "true" or a missing flag would otherwise drop the gold passage
    without a word. A gold passage must have its title, half of what it is matched by."""
    flag = ctx.get("isgold")
    if not isinstance(flag, bool):
        found = "no 'isgold'" if "isgold" not in ctx else \
            f'"isgold": {json.dumps(flag)[:40]}'
        raise InputError(where, f"context {i} has {found}, expected true or false (a JSON "
                         "boolean)", 'mark each context "isgold": true or "isgold": false, '
                         "without quotes")
    if flag and not ctx.get("title", "").strip():
        raise InputError(where, f"gold context {i} has "
                         f"{'no' if 'title' not in ctx else 'an empty'} 'title'",
                         "give each gold passage its Wikipedia page title: gold passages "
                         f"are matched to the corpus by title and text (match:{MATCH_TEXT})")
    return flag


def content_key(title: str, text: str) -> tuple[str, str]:
    """The key of rule ``match:title+text-ws``: title and text, whitespace collapsed."""
    return " ".join(title.split()), " ".join(text.split())


def question_numbers(questions: Sequence[str], where: str | None,
                     first_qid: int = 0) -> dict[str, str]:
    """Each question's TREC qid, ``first_qid + position``; a question asked twice cannot be
    named by one number and is refused."""
    out: dict[str, str] = {}
    repeated = []
    for i, q in enumerate(questions):
        if q in out:
            repeated.append(repr(q))
        else:
            out[q] = str(first_qid + i)
    if repeated:
        raise InputError(where, f"{len(repeated):,} question(s) occur more than once "
                         f"({for_example(repeated)}), so a question number cannot name "
                         "one question", "give a questions file without repeated questions")
    return out


@dataclass(frozen=True, slots=True)
class QrelsDerivation:
    """Qrels derived from a source of gold passages, and what could not be matched."""

    qrels: tuple[TrecQrel, ...]  # relevance 1, by question number then source order
    match: str  # MATCH_TEXT or MATCH_ID
    source_questions: int  # questions read from the source
    not_in_questions: tuple[str, ...]  # source questions not in the questions file
    without_gold: int  # source questions that mark no gold passage
    gold_passages: int  # distinct (question, gold passage) pairs of joined questions
    unmatched: tuple[str, ...]  # of those, the ones not found in the corpus
    questions_with_gold: int  # questions with at least one qrels line
    corpus_passages: int  # passages read from the corpus


class _Tally:
    """The counts of a derivation while it runs."""

    def __init__(self) -> None:
        self.qrels: list[TrecQrel] = []
        self.source_questions = self.without_gold = self.gold_passages = 0
        self.questions_with_gold = self.corpus_passages = 0
        self.not_in_questions: list[str] = []
        self.unmatched: list[str] = []

    def result(self, match: str, where: str | None) -> QrelsDerivation:
        d = QrelsDerivation(tuple(self.qrels), match, self.source_questions,
                            tuple(self.not_in_questions), self.without_gold,
                            self.gold_passages, tuple(self.unmatched),
                            self.questions_with_gold, self.corpus_passages)
        return _check(d, where)


def _check(d: QrelsDerivation, where: str | None) -> QrelsDerivation:
    if d.source_questions and len(d.not_in_questions) == d.source_questions:
        raise InputError(where, f"none of the {d.source_questions:,} questions of the source "
                         f"is in the questions file "
                         f"({for_example(map(repr, d.not_in_questions))})",
                         "give the questions file of the same split (NQ-open dev: DPR's "
                         "nq-test.qa.tsv)")
    if not d.qrels:
        raise InputError(where, f"none of the {d.gold_passages:,} gold passages is in the "
                         f"corpus of {d.corpus_passages:,} passages (match:{d.match})",
                         "give the passage corpus the runs retrieve from")
    return d


def _wanted(d: _Tally, golds: Iterable[tuple[str, list[K]]],
            qids: dict[str, str]) -> dict[str, list[K]]:
    """The gold keys of each numbered question (qid -> keys, first occurrence first),
    counting in ``d`` the source questions, those not in the questions file and those
    without a gold passage."""
    wanted: dict[str, list[K]] = {}
    for question, keys in golds:
        d.source_questions += 1
        qid = qids.get(question)
        if qid is None:
            d.not_in_questions.append(question)
            continue
        if not keys:
            d.without_gold += 1
            continue
        have = wanted.setdefault(qid, [])
        have.extend(k for k in dict.fromkeys(keys) if k not in have)
    return wanted


def qrels_from_oracle(examples: Iterable[NqOpenOracleExample], qids: dict[str, str],
                      passages: Iterable[DprContext], *, where: str | None = None
                      ) -> QrelsDerivation:
    """Qrels of the oracle's gold passages found in ``passages`` by rule
    ``match:title+text-ws``; ``qids`` maps each question of the questions file to its
    number (:func:`question_numbers`). ``passages`` is read once; only the keys of gold
    passages are kept."""
    d = _Tally()
    wanted = _wanted(d, ((ex.question, [content_key(c.title, c.text) for c in ex.gold])
                         for ex in examples), qids)
    needed = {key for keys in wanted.values() for key in keys}
    ids: dict[tuple[str, str], list[str]] = {}
    for p in passages:
        d.corpus_passages += 1
        key = content_key(p.title, p.text)
        if key in needed:
            ids.setdefault(key, []).append(p.id)
    for qid, keys in sorted(wanted.items(), key=lambda kv: int(kv[0])):
        found = False
        for key in keys:
            d.gold_passages += 1
            if key not in ids:
                d.unmatched.append(f"{key[0]}: {key[1][:40]}")
            for pid in ids.get(key, ()):
                d.qrels.append(TrecQrel(qid, pid, 1))
                found = True
        d.questions_with_gold += found
    return d.result(MATCH_TEXT, where)


def qrels_from_biencoder(examples: Iterable[DprBiencoderExample], qids: dict[str, str],
                         passages: Iterable[DprContext], *, where: str | None = None
                         ) -> QrelsDerivation:
    """Qrels of the ``positive_ctxs`` of DPR bi-encoder examples, by passage id (rule
    ``match:id``), kept when ``passages`` holds the id."""
    d = _Tally()
    wanted = _wanted(d, ((ex.question, [c.id for c in ex.positive_ctxs if c.id])
                         for ex in examples), qids)
    needed = {p for pids in wanted.values() for p in pids}
    present: set[str] = set()
    for p in passages:
        d.corpus_passages += 1
        if p.id in needed:
            present.add(p.id)
    for qid, pids in sorted(wanted.items(), key=lambda kv: int(kv[0])):
        d.gold_passages += len(pids)
        d.unmatched.extend(p for p in pids if p not in present)
        kept = [p for p in pids if p in present]
        d.qrels.extend(TrecQrel(qid, p, 1) for p in kept)
        d.questions_with_gold += bool(kept)
    return d.result(MATCH_ID, where)
