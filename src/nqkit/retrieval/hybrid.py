"""Hybrid retrieval: normalized-score fusion of a lexical and a dense retriever.

For each query, each retriever's score row is standardized over all documents
(z-score: minus the row mean, divided by the row standard deviation; a constant row
becomes zeros), and the fused score is ``weight * z_dense + (1 - weight) * z_lexical``.
Standardizing per query makes the two scales comparable without any training data;
``weight=0.5`` is the default and was not tuned on the evaluation data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from nqkit.retrieval.base import RETRIEVERS, ScoreFn
from nqkit.retrieval.bm25 import BM25Retriever
from nqkit.retrieval.dense import DenseRetriever
from nqkit.settings import Param, float_in

__all__ = ["HybridRetriever", "zscore_rows"]


def zscore_rows(scores: np.ndarray) -> np.ndarray:
    """Standardize each row (constant rows become zeros)."""
    s = scores.astype(np.float32, copy=False)
    mean = s.mean(axis=1, keepdims=True)
    std = s.std(axis=1, keepdims=True)
    return np.asarray((s - mean) / np.where(std > 0, std, 1.0), dtype=np.float32)


@dataclass
class _HybridIndex:
    parts: list[Any]
    weights: list[float]
    size: int

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        fns = [p.scorer(queries) for p in self.parts]

        def scores(lo: int, hi: int) -> np.ndarray:
            total = np.zeros((hi - lo, self.size), dtype=np.float32)
            for w, fn in zip(self.weights, fns, strict=True):
                total += np.float32(w) * zscore_rows(fn(lo, hi))
            return total

        return scores


@dataclass
class HybridRetriever:
    """``weight * z(dense) + (1 - weight) * z(lexical)`` per query."""

    dense: Any = None
    lexical: Any = None
    weight: float = 0.5
    name: str = field(default="hybrid", init=False)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("weight", "--weight", "hybrid: weight of the dense z-scores (default 0.5)",
              default=0.5, type=float_in(0, 1)),
        *DenseRetriever.PARAMS, *BM25Retriever.PARAMS,
    )

    @classmethod
    def from_settings(cls, s: Mapping[str, Any]) -> HybridRetriever:
        return cls(dense=DenseRetriever.from_settings(s),
                   lexical=BM25Retriever.from_settings(s), weight=s["weight"])

    def __post_init__(self) -> None:
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError("weight must be in [0, 1]")
        if self.dense is None:
            self.dense = DenseRetriever()
        if self.lexical is None:
            self.lexical = BM25Retriever()

    def settings(self) -> dict[str, object]:
        dense = {f"dense.{k}": v for k, v in self.dense.settings().items() if k != "retriever"}
        lex = {f"lex.{k}": v for k, v in self.lexical.settings().items() if k != "retriever"}
        return {"retriever": self.name, "fusion": "zscore", "weight": self.weight, **dense, **lex}

    def index(self, docs: Sequence[str], contexts: Sequence[str] | None = None) -> _HybridIndex:
        parts = [self.dense.index(docs, contexts), self.lexical.index(docs, contexts)]
        return _HybridIndex(parts, [self.weight, 1.0 - self.weight], len(docs))


RETRIEVERS.add("hybrid", HybridRetriever)
