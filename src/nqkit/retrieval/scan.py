"""Sharded search that scores every passage: for retrievers with nothing to build.

A retriever whose scores need no index arrays (a scoring function of question and passage
texts) searches an index directory with :func:`scan_search`: one job per shard, run by
:mod:`nqkit.cluster`, reads the shard's passages (``title + " " + text``, as the other
retrievers index them), scores them against a chunk of questions at a time, keeps each
question's top k (positive scores only: a passage that matches nothing is not retrieved,
as in Lucene), and the shard lists are merged (:mod:`nqkit.retrieval.topk`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.cluster import Cluster, peak_rss_mb
from nqkit.retrieval.passage_store import Shard, iter_shard
from nqkit.retrieval.topk import Hits, merge_shard_results, pack_hits, topk_of_row

__all__ = ["ScoreTexts", "scan_search"]

QUERY_CHUNK = 256  # questions scored at a time (bounds the score matrix of a shard)

# (questions, passage texts, settings) -> (questions, passages) float32 scores
ScoreTexts = Callable[[Sequence[str], Sequence[str], Any], np.ndarray]


@dataclass(frozen=True, slots=True)
class _ScanJob:
    root: str
    shard: Shard
    questions: tuple[str, ...]
    k: int
    score: ScoreTexts  # a module-level function (sent to the workers by name)
    settings: Any


def _scan_job(job: _ScanJob) -> dict[str, Any]:
    texts = [f"{p.title} {p.text}" for p in iter_shard(Path(job.root), job.shard)]
    hits: list[Hits] = []
    for lo in range(0, len(job.questions), QUERY_CHUNK):
        scores = np.asarray(job.score(job.questions[lo:lo + QUERY_CHUNK], texts,
                                      job.settings), dtype=np.float32)
        hits.extend(topk_of_row(row, job.k, offset=job.shard.start, positive_only=True)
                    for row in scores)
    return {"hits": pack_hits(hits), "peak_rss_mb": peak_rss_mb()}


def scan_search(index: Any, questions: list[str], k: int, cluster: Cluster,
                score: ScoreTexts, settings: Any = None) -> tuple[list[Hits], float]:
    """Top-k hits of every question over every shard of ``index``, scored by
    ``score(questions, texts, settings)``; also the largest job peak RSS (MB)."""
    jobs = [_ScanJob(str(index.root), s, tuple(questions), k, score, settings)
            for s in index.shards]
    results = cluster.map(_scan_job, jobs, desc=f"{index.retriever} search")
    return merge_shard_results(results, len(questions), k)
