"""TREC run and qrels files, the formats ``trec_eval`` reads and retrieval papers exchange.

* A **run** has one line per retrieved document: ``qid Q0 docid rank score tag``, six
  whitespace-separated columns (``Q0`` is a literal placeholder, ``tag`` names the run).
  trec_eval orders a query's documents by score, not by the rank column; readers here
  keep the file's lines and :func:`ranked` orders them by score (higher first), ties by
  the rank column, then by file order.
* **qrels** have one line per judged document: ``qid iteration docid relevance``
  (``iteration`` is usually ``0``; relevance an integer, > 0 relevant).

Readers are lazy iterators with ``file:line`` errors; writers are atomic
(:func:`nqkit.io.atomic_output`) and write scores with the shortest text that reads back
to the same float, so a run round-trips exactly; scores computed in float32 are first
made the floats of their shortest float32 text (:func:`float32_scores`), so every nqkit
run (``nqkit retrieve --trec``, ``nqkit reqa run --trec``) writes them the same way.

:func:`run_from_scores` turns a query x document score matrix into run lines (top-k,
deterministic under ties), and :func:`trec_to_dpr_results` turns a run plus a
questions/answers file (DPR ``.qa.tsv`` or NQ-open JSONL, qid = 0-based line number, the
convention of Pyserini's DPR topics) and a DPR passage file into DPR retrieval results,
which :func:`nqkit.metrics.answer_recall.score_answer_recall` scores.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from nqkit.errors import InputError, examples, for_example, location
from nqkit.formats.dpr import DprContext, DprResult, read_dpr_passages, read_dpr_qa_tsv
from nqkit.formats.nq_open import read_nq_open
from nqkit.io import PathLike, PathsLike, atomic_output, decode_utf8, expand_paths, iter_lines

__all__ = [
    "TrecQrel",
    "TrecRunLine",
    "float32_scores",
    "ranked",
    "read_questions_answers",
    "read_trec_qrels",
    "read_trec_run",
    "run_from_scores",
    "top_k",
    "trec_to_dpr_results",
    "write_trec_qrels",
    "write_trec_run",
]

RUN_EXAMPLE = "qid Q0 docid rank score tag"
QRELS_EXAMPLE = "qid 0 docid relevance"


@dataclass(frozen=True, slots=True)
class TrecRunLine:
    """One retrieved document of one query."""

    qid: str  # query id (no whitespace)
    docid: str  # document id (no whitespace)
    rank: int  # the rank column (1 = first); trec_eval orders by score instead
    score: float  # higher is better
    tag: str  # the run's name
    where: str | None = field(default=None, compare=False)  # file:line, for messages


@dataclass(frozen=True, slots=True)
class TrecQrel:
    """One relevance judgement."""

    qid: str
    docid: str
    relevance: int  # > 0: relevant (graded relevance allowed)
    iteration: str = "0"  # the second column, ignored by trec_eval
    where: str | None = field(default=None, compare=False)


def _fields(paths: PathsLike, what: str, n: int, example: str
            ) -> Iterator[tuple[str, list[str]]]:
    any_line = False
    files = expand_paths(paths, what=what)
    for path in files:
        for lineno, raw in iter_lines(path):
            where = location(path, lineno) or str(path)
            cols = decode_utf8(raw, where).split()
            if len(cols) != n:
                raise InputError(where, f"expected {n} whitespace-separated columns, found "
                                 f"{len(cols)} ({examples(cols, quote=True, width=30)})",
                                 f"each line of a {what} is: {example}")
            any_line = True
            yield where, cols
    if not any_line:
        raise InputError(examples(files, width=None), f"the {what} file is empty",
                         f"give a non-empty {what} file")


def read_trec_run(paths: PathsLike) -> Iterator[TrecRunLine]:
    """Lazily read TREC run files (plain or gzipped; globs allowed).

    Raises :class:`InputError` at ``file:line`` for a line without 6 columns, a rank that
    is not a positive integer or a score that is not a finite number.
    """
    for where, (qid, _q0, docid, rank_text, score_text, tag) in _fields(
            paths, "TREC run", 6, RUN_EXAMPLE):
        try:
            rank = int(rank_text)
        except ValueError:
            rank = 0
        if rank < 1:
            raise InputError(where, f"the rank must be a positive integer, found {rank_text!r}",
                             f"each line is: {RUN_EXAMPLE}")
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise InputError(where, f"the score must be a finite number, found {score_text!r}",
                             f"each line is: {RUN_EXAMPLE}")
        yield TrecRunLine(qid, docid, rank, score, tag, where)


def read_trec_qrels(paths: PathsLike) -> Iterator[TrecQrel]:
    """Lazily read TREC qrels files; the relevance must be an integer."""
    for where, (qid, iteration, docid, rel_text) in _fields(paths, "qrels", 4, QRELS_EXAMPLE):
        try:
            relevance = int(rel_text)
        except ValueError:
            raise InputError(where, f"the relevance must be an integer, found {rel_text!r}",
                             f"each line is: {QRELS_EXAMPLE}") from None
        yield TrecQrel(qid, docid, relevance, iteration, where)


def _token(value: str, name: str) -> str:
    # split() breaks on exactly the characters isspace() accepts, and costs a quarter of
    # a per-character scan: it runs three times for each of a run's (many) lines
    if value.split() != [value]:
        raise InputError(None, f"a TREC {name} must be non-empty and without whitespace, "
                         f"found {value!r:.60}", f"replace the whitespace in the {name}s")
    return value


def float32_scores(scores: Sequence[float] | np.ndarray) -> list[float]:
    """Scores a retriever computed in float32 (BM25, dense dot products), as the floats to
    write: each one the value of the shortest decimal that reads back to the same float32,
    at most 9 significant digits (``0.72568756`` rather than ``0.7256875634193420``, the
    float32 widened to a double).

    Rounding to float32 is monotone, so distinct float32 scores stay distinct and in
    order, and equal ones stay equal: trec_eval, which orders a query's documents by
    score (not by the rank column), sees the retriever's ranking. Pyserini's fixed
    ``%.6f`` can merge close scores into ties that trec_eval then breaks by docid.
    """
    # astype(str) is numpy's shortest round-trip text for the float32 (Dragon4)
    return [float(t) for t in np.asarray(scores, dtype=np.float32).reshape(-1)
            .astype(str).tolist()]


def write_trec_run(path: PathLike, lines: Iterable[TrecRunLine]) -> int:
    """Write run lines atomically (``.gz`` compresses); returns the number written.

    A score is written in one form: Python's ``repr`` of the float, the shortest text that
    reads back to the same float, so write -> read is exact, and trec_eval, ir_measures
    and Pyserini read it as that number (C ``atof`` / Python ``float``). Give scores
    computed in float32 through :func:`float32_scores` so they are written at float32
    length, as DPR results hold them.
    """
    n = 0
    qid = tag = None  # checked when they change: a query's lines share them
    with atomic_output(path) as f:
        for ln in lines:
            if ln.rank < 1 or not math.isfinite(ln.score):
                raise InputError(None, f"rank {ln.rank} / score {ln.score} of query {ln.qid} "
                                 "cannot be written", "ranks start at 1; scores are finite")
            if ln.qid != qid:
                qid = _token(ln.qid, "query id")
            if ln.tag != tag:
                tag = _token(ln.tag, "run tag")
            f.write(f"{qid} Q0 {_token(ln.docid, 'document id')} {ln.rank} "
                    f"{float(ln.score)!r} {tag}\n")
            n += 1
    return n


def write_trec_qrels(path: PathLike, qrels: Iterable[TrecQrel]) -> int:
    """Write qrels atomically; returns the number written."""
    n = 0
    with atomic_output(path) as f:
        for q in qrels:
            f.write(f"{_token(q.qid, 'query id')} {_token(q.iteration, 'iteration')} "
                    f"{_token(q.docid, 'document id')} {int(q.relevance)}\n")
            n += 1
    return n


def ranked(lines: Iterable[TrecRunLine]) -> dict[str, list[TrecRunLine]]:
    """Lines grouped by query (first-seen order), each query's lines by score (higher
    first), ties by the rank column, then file order. A document retrieved twice for one
    query is an :class:`InputError` (trec_eval refuses such runs too)."""
    groups: dict[str, list[TrecRunLine]] = {}
    seen: set[tuple[str, str]] = set()
    for ln in lines:
        key = (ln.qid, ln.docid)
        if key in seen:
            raise InputError(ln.where, f"document {ln.docid!r} is retrieved twice for query "
                             f"{ln.qid!r}", "keep one line per (query, document)")
        seen.add(key)
        groups.setdefault(ln.qid, []).append(ln)
    for group in groups.values():
        group.sort(key=lambda x: (-x.score, x.rank))  # stable: file order breaks ties
    return groups


def top_k(scores: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k = min(depth, columns)`` best columns of each row of ``scores`` and their
    scores, as two ``(rows, k)`` arrays: higher scores first, ties by column order, so
    the result does not depend on how a selection algorithm breaks ties."""
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"scores must be a matrix, got shape {scores.shape}")
    if depth < 1:
        raise ValueError("depth must be at least 1")
    n, m = scores.shape
    k = min(depth, m)
    cols = np.empty((n, k), dtype=np.int64)
    for i, row in enumerate(scores):
        if k < m:
            kth = np.partition(row, m - k)[m - k]  # the k-th largest value
            above = np.flatnonzero(row > kth)
            tied = np.flatnonzero(row == kth)[: k - len(above)]
            pick = np.concatenate([above, tied])
        else:
            pick = np.arange(m)
        cols[i] = pick[np.lexsort((pick, -row[pick].astype(np.float64)))]
    return cols, np.take_along_axis(scores, cols, axis=1)


def run_from_scores(qids: Sequence[str], docids: Sequence[str], scores: np.ndarray, *,
                    depth: int, tag: str) -> Iterator[TrecRunLine]:
    """The top ``depth`` documents of each row of ``scores`` (queries x documents) as run
    lines, in :func:`top_k` order; a float32 matrix's scores through
    :func:`float32_scores`."""
    scores = np.asarray(scores)
    if scores.shape != (len(qids), len(docids)):
        raise ValueError(f"scores has shape {scores.shape}, expected {(len(qids), len(docids))}")
    cols, vals = top_k(scores, depth)
    rows = (map(float32_scores, vals) if vals.dtype == np.float32 else vals.tolist())
    for qid, row_cols, row_vals in zip(qids, cols.tolist(), rows, strict=True):
        for rank, (c, v) in enumerate(zip(row_cols, row_vals, strict=True), 1):
            yield TrecRunLine(qid, docids[c], rank, float(v), tag)


def read_questions_answers(paths: PathsLike) -> list[tuple[str, tuple[str, ...]]]:
    """``(question, answers)`` of DPR ``.qa.tsv``/``.csv`` or NQ-open JSONL files, in file
    order (a TREC qid is an index into this list)."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for path in expand_paths(paths, what="questions"):
        if path.name.endswith((".tsv", ".tsv.gz", ".csv", ".csv.gz")):
            out.extend(read_dpr_qa_tsv(path))
        else:
            out.extend((ex.question, ex.answers) for ex in read_nq_open(path))
    return out


def trec_to_dpr_results(run: PathsLike, questions: PathsLike, passages: PathsLike, *,
                        first_qid: int = 0, depth: int | None = None) -> list[DprResult]:
    """DPR retrieval results from a TREC run, its questions and the passage corpus.

    ``questions`` is a DPR ``.qa.tsv`` or NQ-open JSONL file; the run's qid ``first_qid +
    i`` is its i-th question (0-based by default, as Pyserini's DPR topics number them).
    Docids are passage ids of ``passages`` (DPR ``psgs_w100.tsv``), read in one pass that
    keeps only the retrieved ones. Each question's contexts are in score order
    (:func:`ranked`), cut at ``depth`` when given; a question absent from the run gets no
    context. Raises :class:`InputError` for a qid that is no question, and for docids
    missing from the corpus (a count and examples).
    """
    qa = read_questions_answers(questions)
    groups = ranked(read_trec_run(run))
    by_index: dict[int, list[TrecRunLine]] = {}
    for qid, lines in groups.items():
        try:
            i = int(qid) - first_qid
        except ValueError:
            i = -1
        if not 0 <= i < len(qa):
            raise InputError(lines[0].where, f"query id {qid!r} is not a question number: "
                             f"the {len(qa):,} questions are numbered {first_qid} to "
                             f"{first_qid + len(qa) - 1} in file order",
                             "give the questions file the run was made for (or --first-qid "
                             "when the run numbers them from 1)")
        by_index[i] = lines[:depth] if depth is not None else lines
    needed = {ln.docid for lines in by_index.values() for ln in lines}
    found = {p.id: p for p in read_dpr_passages(passages, ids=needed)}
    missing = sorted(needed - found.keys())
    if missing:
        raise InputError(examples(expand_paths(passages, what="passages TSV"), width=None),
                         f"{len(missing):,} document(s) of the run are not in the passage file "
                         f"({for_example(repr(m) for m in missing)})",
                         "give the passage file the run was retrieved from")
    results = []
    for i, (question, answers) in enumerate(qa):
        ctxs = tuple(DprContext(ln.docid, found[ln.docid].title, found[ln.docid].text,
                                score=ln.score) for ln in by_index.get(i, ()))
        results.append(DprResult(question, answers, ctxs))
    return results
