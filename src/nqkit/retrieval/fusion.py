"""Fusion of two retrievers (a hybrid's first and second part; by default BM25 and a dense
one), for both paths: the formulas, then the plumbing.

The formulas (small functions named for what they compute):

* :func:`zscore_rows` — standardize each score row over all documents (minus the row
  mean, divided by the row standard deviation; a constant row becomes zeros). ``zscore``
  fusion is ``weight * z(second) + (1 - weight) * z(first)`` (``--weight``, the second,
  dense side by default; 0.5, not tuned on any evaluation data).
* :func:`midrange_normalize` — Pyserini's ``HybridSearcher`` with ``normalization=True``
  (Ma et al. 2021, "A replication study of dense passage retriever", §3): scores centred
  on the mid-range and divided by the range, ``(s - (min + max) / 2) / (max - min)``; a
  zero range gives 0 instead of dividing by zero. ``norm`` fusion is
  ``alpha * first + second`` (``--alpha``, the weight on the first, sparse side by
  default: Pyserini's convention; 1.0, not tuned).
* :func:`reciprocal_rank` — reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR
  2009): ``sum over lists of 1 / (60 + rank)``, rank from 1.

The plumbing: :func:`fuse_normalized` and :func:`fuse_rrf` fuse one question's top-``depth``
hit lists (``nqkit retrieve`` with two indexes: a passage missing from one list gets that
list's minimum score, as in Pyserini), and :func:`fuse_rows` fuses whole score rows of
every document (``nqkit reqa run --retriever hybrid``: every document is in both "lists",
so ``norm`` and ``rrf`` there are the same formulas with the depth the whole collection).
List fusion is computed in float64 and ties are broken by passage order (Pyserini sorts a
Python set, whose order is arbitrary), so fused runs are reproducible.
"""

from __future__ import annotations

import numpy as np

from nqkit.arrays import distinct
from nqkit.retrieval.topk import Hits

__all__ = ["FUSIONS", "LIST_FUSIONS", "RRF_K", "fuse_normalized", "fuse_rows", "fuse_rrf",
           "midrange_normalize", "reciprocal_rank", "zscore_rows"]

FUSIONS = ("zscore", "norm", "rrf")  # over whole score rows (reqa run)
LIST_FUSIONS = ("norm", "rrf")  # over top-depth hit lists (retrieve): z-scores need every row
RRF_K = 60


# -- formulas ---------------------------------------------------------------------------

def zscore_rows(scores: np.ndarray) -> np.ndarray:
    """Standardize each row (constant rows become zeros)."""
    s = scores.astype(np.float32, copy=False)
    mean = s.mean(axis=1, keepdims=True)
    std = s.std(axis=1, keepdims=True)
    return np.asarray((s - mean) / np.where(std > 0, std, 1.0), dtype=np.float32)


def midrange_normalize(scores: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float
                       ) -> np.ndarray:
    """Pyserini's normalization ``(s - (lo + hi) / 2) / (hi - lo)``; 0 where ``hi == lo``."""
    span = np.asarray(hi) - np.asarray(lo)
    if span.ndim == 0:
        return (scores - (lo + hi) / 2) / span if span > 0 else np.zeros_like(scores)
    safe = np.where(span > 0, span, 1.0)
    return np.where(span > 0, (scores - (lo + hi) / 2) / safe, 0.0)


def reciprocal_rank(ranks: np.ndarray, k: int = RRF_K) -> np.ndarray:
    """``1 / (k + rank)`` for ranks counted from 1."""
    return 1.0 / (k + ranks)


# -- hit lists (retrieve) -----------------------------------------------------------------

def _ordered(rows: np.ndarray, scores: np.ndarray, k: int) -> Hits:
    order = np.lexsort((rows, -scores))[:k]
    return rows[order].astype(np.int64), scores[order].astype(np.float64)


def fuse_normalized(first: Hits, second: Hits, alpha: float, k: int) -> Hits:
    """Pyserini's normalized hybrid of one question's two hit lists (its sparse one
    first): ``alpha * first + second``."""
    rows = np.union1d(first[0], second[0]).astype(np.int64)
    parts = []
    for hits in (first, second):
        s = hits[1].astype(np.float64)
        lo = float(s.min()) if s.shape[0] else 0.0
        hi = float(s.max()) if s.shape[0] else 1.0
        full = np.full(rows.shape[0], lo, dtype=np.float64)
        full[np.searchsorted(rows, hits[0])] = s
        parts.append(midrange_normalize(full, lo, hi))
    return _ordered(rows, alpha * parts[0] + parts[1], k)


def fuse_rrf(lists: list[Hits], k: int, rrf_k: int = RRF_K) -> Hits:
    """Reciprocal rank fusion of one question's hit lists."""
    rows = distinct(np.concatenate([h[0] for h in lists])).astype(np.int64)
    total = np.zeros(rows.shape[0], dtype=np.float64)
    for hits in lists:
        ranks = np.arange(1, hits[0].shape[0] + 1, dtype=np.float64)
        total[np.searchsorted(rows, hits[0])] += reciprocal_rank(ranks, rrf_k)
    return _ordered(rows, total, k)


# -- whole score rows (reqa run) ----------------------------------------------------------

def _row_ranks(scores: np.ndarray) -> np.ndarray:
    """Rank (from 1) of every column in its row, by score then column order."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, scores.shape[1] + 1)[None, :], axis=1)
    return ranks


def fuse_rows(fusion: str, first: np.ndarray, second: np.ndarray, *, weight: float = 0.5,
              alpha: float = 1.0) -> np.ndarray:
    """Fused float32 ``(queries, documents)`` scores of two score matrices, a hybrid's
    first part's (lexical by default) and its second's (dense by default)."""
    if fusion == "zscore":
        total = np.zeros(first.shape, dtype=np.float32)
        # the second first: the order of the float32 additions is part of the result
        for w, part in ((weight, second), (1.0 - weight, first)):
            total += np.float32(w) * zscore_rows(part)
        return total
    if fusion == "norm":
        parts = []
        for s in (first, second):
            s = s.astype(np.float64)
            parts.append(midrange_normalize(s, s.min(axis=1, keepdims=True),
                                            s.max(axis=1, keepdims=True)))
        return np.asarray(alpha * parts[0] + parts[1], dtype=np.float32)
    if fusion == "rrf":
        total64 = (reciprocal_rank(_row_ranks(first).astype(np.float64))
                   + reciprocal_rank(_row_ranks(second).astype(np.float64)))
        return np.asarray(total64, dtype=np.float32)
    raise ValueError(f"fusion must be one of {FUSIONS}, got {fusion!r}")
