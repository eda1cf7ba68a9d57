"""Top-k selection with one deterministic order: score descending, then passage order.

A top-k list is only reproducible if ties are broken the same way everywhere: here the
passage earlier in the corpus wins (the lower global row number). Selecting the k best of
each shard with this order and then the k best of their union gives exactly the k best of
the whole corpus, so sharded and single-process runs return the same lists, ties
included (:func:`merge_topk`).

A hit list is a pair of arrays ``(rows, scores)``: global passage rows (int64) and their
float32 scores, best first.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Hits", "merge_shard_results", "merge_topk", "pack_hits", "topk_of_row", "topk_rows",
           "unpack_hits"]

Hits = tuple[np.ndarray, np.ndarray]  # (rows int64, scores float32), best first


def _order(rows: np.ndarray, scores: np.ndarray, k: int) -> Hits:
    # lexsort: the last key is the primary one (score descending), then the row ascending.
    order = np.lexsort((rows, -scores.astype(np.float64)))[:k]
    return rows[order].astype(np.int64, copy=False), scores[order].astype(np.float32,
                                                                           copy=False)


def topk_of_row(scores: np.ndarray, k: int, *, offset: int = 0,
                positive_only: bool = False) -> Hits:
    """The ``k`` best columns of one score row (rows numbered from ``offset``).

    ``positive_only`` keeps only scores above 0 (BM25: documents that match no query term
    score 0 and are not retrieved, as in Lucene). Every column tied with the k-th best is
    a candidate, so the tie-break by row is exact.
    """
    cand = np.flatnonzero(scores > 0) if positive_only else np.arange(scores.shape[0])
    vals = scores[cand]
    if cand.shape[0] > k:
        kth = np.partition(vals, cand.shape[0] - k)[cand.shape[0] - k]
        keep = vals >= kth
        cand, vals = cand[keep], vals[keep]
    return _order(cand.astype(np.int64) + offset, vals, k)


def topk_rows(scores: np.ndarray, k: int, *, offset: int = 0) -> list[Hits]:
    """:func:`topk_of_row` for each row of a ``(queries, columns)`` score matrix."""
    n = scores.shape[1]
    if n <= k:
        kth = scores.min(axis=1) if n else np.zeros(scores.shape[0], scores.dtype)
    else:
        kth = np.partition(scores, n - k, axis=1)[:, n - k]
    out: list[Hits] = []
    for r in range(scores.shape[0]):
        row = scores[r]
        cand = np.flatnonzero(row >= kth[r])
        out.append(_order(cand.astype(np.int64) + offset, row[cand], k))
    return out


def merge_topk(parts: Sequence[Hits], k: int) -> Hits:
    """The ``k`` best of several hit lists (disjoint rows), in the same order."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    rows = np.concatenate([p[0] for p in parts])
    scores = np.concatenate([p[1] for p in parts])
    return _order(rows, scores, k)


Packed = tuple[np.ndarray, np.ndarray, np.ndarray]  # rows, scores, offsets (len + 1)


def pack_hits(hits: Sequence[Hits]) -> Packed:
    """Many hit lists as three flat arrays: what a shard job sends back (thousands of tiny
    arrays cost far more to serialize between processes than three large ones)."""
    sizes = np.asarray([h[0].shape[0] for h in hits], dtype=np.int64)
    offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes)])
    if not hits:
        return np.zeros(0, np.int64), np.zeros(0, np.float32), offsets
    return (np.concatenate([h[0] for h in hits]).astype(np.int64, copy=False),
            np.concatenate([h[1] for h in hits]).astype(np.float32, copy=False), offsets)


def unpack_hits(packed: Packed) -> list[Hits]:
    """The inverse of :func:`pack_hits`."""
    rows, scores, offsets = packed
    return [(rows[a:b], scores[a:b]) for a, b in itertools.pairwise(offsets.tolist())]


def merge_shard_results(results: Sequence[dict[str, Any]], n: int, k: int
                        ) -> tuple[list[Hits], float]:
    """Shard search jobs' results (``{"hits": packed, "peak_rss_mb": ...}``, one per shard)
    merged into the top ``k`` of each of ``n`` questions; also the largest job peak RSS."""
    per_shard = [unpack_hits(r["hits"]) for r in results]
    merged = [merge_topk([h[i] for h in per_shard], k) for i in range(n)]
    return merged, max(r["peak_rss_mb"] for r in results)
