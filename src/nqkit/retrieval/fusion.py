"""Fusion of a sparse and a dense run: Pyserini's normalized scores, or reciprocal ranks.

* ``norm`` — Pyserini's ``HybridSearcher`` with ``normalization=True`` (Ma et al. 2021, "A
  replication study of dense passage retriever", §3): for each question, take the top
  ``depth`` hits of each retriever; a passage missing from one list gets that list's
  minimum score; each list's scores are centred on the mid-range and divided by the range,
  ``(s - (min + max) / 2) / (max - min)``; the fused score is
  ``alpha * sparse + dense`` (the weight is on the sparse side, Pyserini's default). A list
  whose scores are all equal (range 0) contributes 0 instead of dividing by zero.
* ``rrf`` — reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009):
  ``sum over lists of 1 / (60 + rank)``, rank from 1, over each list's top ``depth``.

Scores are computed in float64. Ties are broken by passage order (Pyserini sorts a
Python set, whose order is arbitrary), so fused runs are reproducible.
"""

from __future__ import annotations

import numpy as np

from nqkit.retrieval.topk import Hits

__all__ = ["FUSIONS", "RRF_K", "fuse_normalized", "fuse_rrf"]

FUSIONS = ("norm", "rrf")
RRF_K = 60


def _ordered(rows: np.ndarray, scores: np.ndarray, k: int) -> Hits:
    order = np.lexsort((rows, -scores))[:k]
    return rows[order].astype(np.int64), scores[order].astype(np.float64)


def fuse_normalized(sparse: Hits, dense: Hits, alpha: float, k: int) -> Hits:
    """Pyserini's normalized hybrid of one question's sparse and dense hit lists."""
    rows = np.union1d(sparse[0], dense[0]).astype(np.int64)
    parts = []
    for hits in (sparse, dense):
        s = hits[1].astype(np.float64)
        lo = float(s.min()) if s.shape[0] else 0.0
        hi = float(s.max()) if s.shape[0] else 1.0
        full = np.full(rows.shape[0], lo, dtype=np.float64)
        full[np.searchsorted(rows, hits[0])] = s
        span = hi - lo
        parts.append((full - (lo + hi) / 2) / span if span > 0 else np.zeros_like(full))
    return _ordered(rows, alpha * parts[0] + parts[1], k)


def fuse_rrf(lists: list[Hits], k: int, rrf_k: int = RRF_K) -> Hits:
    """Reciprocal rank fusion of one question's hit lists."""
    rows = np.unique(np.concatenate([h[0] for h in lists])).astype(np.int64)
    total = np.zeros(rows.shape[0], dtype=np.float64)
    for hits in lists:
        ranks = np.arange(1, hits[0].shape[0] + 1, dtype=np.float64)
        total[np.searchsorted(rows, hits[0])] += 1.0 / (rrf_k + ranks)
    return _ordered(rows, total, k)
