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
:func:`write_trec_run` takes any iterable of lines; :func:`write_trec_blocks` and
:func:`write_trec_matrix` write a ranking held as arrays (top-k columns and scores per
query, what both commands have) to the same bytes, several times faster.

:func:`run_from_scores` turns a query x document score matrix into run lines (top-k,
deterministic under ties), and :func:`trec_to_dpr_results` turns a run plus a
questions/answers file (DPR ``.qa.tsv`` or NQ-open JSONL, qid = 0-based line number, the
convention of Pyserini's DPR topics) and a DPR passage file into DPR retrieval results,
which :func:`nqkit.metrics.answer_recall.score_answer_recall` scores.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from nqkit.arrays import distinct
from nqkit.errors import InputError, examples, for_example, location
from nqkit.formats.dpr import DprContext, DprResult, read_dpr_passages, read_dpr_qa_tsv
from nqkit.formats.nq_open import read_nq_open
from nqkit.io import PathLike, PathsLike, atomic_output, decode_utf8, expand_paths, iter_lines

__all__ = [
    "TrecBlock",
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
    "write_trec_blocks",
    "write_trec_matrix",
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


def _write_lines(f: IO[str], lines: Iterable[TrecRunLine]) -> int:
    n = 0
    qid = tag = None  # checked when they change: a query's lines share them
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


def write_trec_run(path: PathLike, lines: Iterable[TrecRunLine]) -> int:
    """Write run lines atomically (``.gz`` compresses); returns the number written.

    A score is written in one form: Python's ``repr`` of the float, the shortest text that
    reads back to the same float, so write -> read is exact, and trec_eval, ir_measures
    and Pyserini read it as that number (C ``atof`` / Python ``float``). Give scores
    computed in float32 through :func:`float32_scores` so they are written at float32
    length, as DPR results hold them. A ranking held as arrays (a score matrix's top-k)
    is written faster, to the same bytes, by :func:`write_trec_matrix` /
    :func:`write_trec_blocks`.
    """
    with atomic_output(path) as f:
        return _write_lines(f, lines)


@dataclass(frozen=True, slots=True)
class TrecBlock:
    """The ranked documents of consecutive queries, as arrays (for
    :func:`write_trec_blocks`).

    ``cols`` and ``scores`` are either two ``(queries, k)`` arrays or two sequences of
    1-D arrays, one per query (lists may differ in length, or be empty); each query's
    documents best first, so the i-th is written with rank i + 1. ``cols`` index
    ``docids``. A float32 score is written as the shortest text of the float32
    (:func:`float32_scores`), any other as the float64's ``repr``: give float32 scores as
    a float32 array and fused (float64) scores as a float64 one.
    """

    qids: Sequence[str]  # one per query
    docids: Sequence[str]  # the document ids that ``cols`` index (a list or numpy array)
    cols: np.ndarray | Sequence[np.ndarray]  # per query: indexes into docids, best first
    scores: np.ndarray | Sequence[np.ndarray]  # per query: the documents' scores


def _flat(rows: np.ndarray | Sequence[np.ndarray], n: int, what: str
          ) -> tuple[np.ndarray, list[int]]:
    """One block's per-query arrays as one flat array and the per-query lengths."""
    if isinstance(rows, np.ndarray) and rows.ndim == 2:
        if rows.shape[0] != n:
            raise ValueError(f"{what} has {rows.shape[0]} rows for {n} queries")
        return rows.reshape(-1), [rows.shape[1]] * n
    rows = [np.asarray(r) for r in rows]
    if len(rows) != n or any(r.ndim != 1 for r in rows):
        raise ValueError(f"{what} must be a matrix or one 1-D array per query ({n})")
    full = [r for r in rows if r.shape[0]]  # an empty list's dtype may be any
    if len({r.dtype for r in full}) > 1:
        # float32 and float64 scores are written differently: no silent widening
        raise ValueError(f"the arrays of {what} differ in dtype")
    return (np.concatenate(full) if full else np.empty(0)), [r.shape[0] for r in rows]


def _float32_texts(scores: np.ndarray) -> list[str]:
    """``repr(f)`` for each ``f`` of ``float32_scores(scores)``, the digits made by one
    numpy cast of the whole array.

    numpy's text of a float32 has the digits Python's ``repr`` gives the float of that
    text: it is the shortest decimal that reads back to the float32, at most 9 digits, and
    no other decimal of at most that length lies within a double's ulp of it (they are
    10^-9 apart, relatively). Only the notation can differ: numpy writes ``1e+07`` and
    ``1e-04`` where ``repr`` writes ``10000000.0`` and ``0.0001``. So texts in scientific
    notation, and values outside [1e-3, 1e15) where the two notations' thresholds lie,
    go through ``repr(float(text))`` (the definition); the rest is numpy's text as it is.
    """
    texts = scores.astype(str)
    codes = texts.view(np.uint32).reshape(texts.shape[0], -1)  # UCS-4 code points
    mag = np.abs(scores)
    redo = (codes == ord("e")).any(axis=1) | ~((mag >= 1e-3) & (mag < 1e15))
    out: list[str] = texts.tolist()
    for i in np.flatnonzero(redo).tolist():
        out[i] = repr(float(out[i]))
    return out


def _score_texts(scores: np.ndarray) -> list[str]:
    """The text :func:`write_trec_run` writes for each score of a flat array."""
    if scores.dtype == np.float32:
        return _float32_texts(scores)
    return list(map(repr, scores.astype(np.float64).tolist()))


def _tokens_ok(values: list[str]) -> bool:
    """Whether every value passes :func:`_token`, tested on all of them at once: joined
    by a character that is not whitespace, they contain whitespace iff one of them does."""
    if not values:
        return True
    joined = "\x00".join(values)
    return all(values) and joined.split() == [joined]


class _BlockWriter:
    """Writes :class:`TrecBlock` s to an open text stream, checking each distinct qid,
    docid and the tag once; a block that fails a check is re-checked line by line with
    :func:`write_trec_run`'s checks, so the error is the one it gives."""

    _RANKS = 1000  # " r " texts kept for ranks up to this

    def __init__(self, f: Any, tag: str) -> None:
        self.f = f
        self.tag = tag
        self.suffix = f" {tag}\n"
        self.tag_ok = _tokens_ok([tag])
        self.ranks = [f" {r} " for r in range(1, self._RANKS + 1)]
        self.table: Sequence[str] | None = None
        self.checked = np.zeros(0, dtype=bool)
        self.n = 0

    def _docids_ok(self, table: Sequence[str], cols: np.ndarray) -> bool:
        if table is not self.table:
            self.table, self.checked = table, np.zeros(len(table), dtype=bool)
        low, high = int(cols.min()), int(cols.max())
        if low < 0 or high >= len(table):
            raise ValueError(f"document index {low if low < 0 else high} is outside the "
                             f"{len(table):,} docids")
        new = distinct(cols[~self.checked[cols]])  # after the first block, few or none
        if not _tokens_ok([table[i] for i in new.tolist()]):
            return False
        self.checked[new] = True
        return True

    def write(self, block: TrecBlock) -> None:
        qids = list(block.qids)
        cols, lengths = _flat(block.cols, len(qids), "cols")
        scores, score_lengths = _flat(block.scores, len(qids), "scores")
        if lengths != score_lengths:
            raise ValueError("cols and scores differ in shape")
        if not cols.shape[0]:
            return
        docids_ok = self._docids_ok(block.docids, cols)  # first: it checks the indexes
        if not (docids_ok and self.tag_ok and np.isfinite(scores).all() and _tokens_ok(qids)):
            self._raise_first_error(qids, block.docids, cols.tolist(), scores.tolist(),
                                    lengths)
        if max(lengths) > len(self.ranks):
            self.ranks = [f" {r} " for r in range(1, max(lengths) + 1)]
        docs: Iterator[str] = (iter(block.docids[cols].tolist())
                               if isinstance(block.docids, np.ndarray)
                               else map(block.docids.__getitem__, cols.tolist()))
        texts = iter(_score_texts(scores))
        suffix = self.suffix
        parts = []
        for qid, n in zip(qids, lengths, strict=True):
            head = f"{qid} Q0 "
            # the ranks first: zip stops at them without taking a docid or text too many
            ranks = self.ranks[:n]
            parts.append("".join([f"{head}{d}{r}{s}{suffix}"
                                  for r, d, s in zip(ranks, docs, texts, strict=False)]))
        self.f.write("".join(parts))
        self.n += cols.shape[0]

    def _raise_first_error(self, qids: list[str], table: Sequence[str], cols: list[int],
                           scores: list[float], lengths: list[int]) -> None:
        """Check the block's lines as :func:`write_trec_run` does, raising its error."""
        it = iter(zip(cols, scores, strict=True))
        _write_lines(io.StringIO(), (TrecRunLine(q, table[c], rank, v, self.tag)
                                     for q, n in zip(qids, lengths, strict=True)
                                     for rank, (c, v) in zip(range(1, n + 1), it,
                                                             strict=False)))
        raise AssertionError("a block failed a check that none of its lines fails")


def write_trec_blocks(path: PathLike, blocks: Iterable[TrecBlock], *, tag: str) -> int:
    """Write a run given as blocks of queries (:class:`TrecBlock`) atomically; returns the
    number of lines written.

    The bytes, and the error for a line that cannot be written, are those of
    :func:`write_trec_run` given the same lines (qids, docids, rank 1, 2, ... per query,
    float32 scores through :func:`float32_scores`), at a fraction of its cost: scores are
    formatted by one numpy cast per block, each distinct qid and docid is checked once,
    and no object is made per line. Memory is bounded by a block: producers stream
    blocks of a few thousand queries (``nqkit retrieve --trec`` writes 7.9 M lines for
    NQ train's 79,168 questions at depth 100).
    """
    with atomic_output(path) as f:
        writer = _BlockWriter(f, tag)
        for block in blocks:
            writer.write(block)
    return writer.n


def write_trec_matrix(path: PathLike, qids: Sequence[str], docids: Sequence[str],
                      cols: np.ndarray | Sequence[np.ndarray],
                      scores: np.ndarray | Sequence[np.ndarray], *, tag: str,
                      block_size: int = 2048) -> int:
    """Write the ranking of every query in ``qids`` atomically: ``cols[i]`` indexes
    ``docids``, best first, with ``scores[i]`` (the ``(queries, k)`` arrays of
    :func:`top_k`, or one 1-D array per query); returns the lines written. Same bytes as
    :func:`write_trec_run` over the equivalent lines; see :func:`write_trec_blocks`
    (``block_size`` queries are formatted at a time)."""
    if len(cols) != len(qids) or len(scores) != len(qids):
        raise ValueError(f"{len(qids)} qids, {len(cols)} rows of cols, {len(scores)} of scores")
    return write_trec_blocks(path, (
        TrecBlock(qids[lo:lo + block_size], docids, cols[lo:lo + block_size],
                  scores[lo:lo + block_size]) for lo in range(0, len(qids), block_size)),
        tag=tag)


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
                        first_qid: int = 0, depth: int | None = None,
                        progress: Callable[..., Iterable[Any]] | None = None,
                        also: Collection[str] = (), present: set[str] | None = None,
                        ) -> list[DprResult]:
    """DPR retrieval results from a TREC run, its questions and the passage corpus.

    ``questions`` is a DPR ``.qa.tsv`` or NQ-open JSONL file; the run's qid ``first_qid +
    i`` is its i-th question (0-based by default, as Pyserini's DPR topics number them).
    Docids are passage ids of ``passages`` (DPR ``psgs_w100.tsv``), read in one pass that
    keeps only the retrieved ones. Each question's contexts are in score order
    (:func:`ranked`), cut at ``depth`` when given; a question absent from the run gets no
    context. Raises :class:`InputError` for a qid that is no question, and for docids
    missing from the corpus (a count and examples).

    ``progress`` (``nqkit.report.progress`` at the command line) wraps the run's lines and
    the corpus's passages, with ``desc`` and ``unit``: a pass over the 21 M passages of
    ``psgs_w100.tsv`` takes minutes.
    """
    qa = read_questions_answers(questions)
    def shown(items: Iterable[Any], desc: str, unit: str) -> Iterable[Any]:
        return items if progress is None else progress(items, desc=desc, unit=unit)

    groups = ranked(shown(read_trec_run(run), "reading the TREC run", "line"))
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
    found: dict[str, Any] = {}
    twice: dict[str, None] = {}  # an id the run names, given to two passages: it names neither
    for p in shown(read_dpr_passages(passages, ids=needed | set(also)),
                   "reading the passages", "passage"):
        if p.id in found and (p.title, p.text) != (found[p.id].title, found[p.id].text):
            twice[p.id] = None
        found[p.id] = p
    if twice:
        raise InputError(examples(expand_paths(passages, what="passages TSV"), width=None),
                         f"{len(twice):,} id(s) the run names are given to two different "
                         f"passages ({for_example(repr(t) for t in twice)})",
                         "give each passage an id of its own")
    if present is not None:
        present.update(pid for pid in also if pid in found)
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
