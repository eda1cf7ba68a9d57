"""Hybrid retrieval: a lexical and a dense retriever fused (:mod:`nqkit.retrieval.fusion`).

Declared once (:data:`SPEC`) for both paths, with one ``--fusion`` setting:

* ``nqkit reqa run --retriever hybrid`` scores every document with both retrievers and
  fuses whole score rows: ``zscore`` (the default of the ``reqa`` preset:
  ``weight * z(dense) + (1 - weight) * z(lexical)``, ``--weight``), ``norm``
  (``alpha * lexical + dense`` on mid-range normalized rows, ``--alpha``) or ``rrf``;
* ``nqkit retrieve --index BM25_DIR --index DENSE_DIR`` fuses each question's top
  ``--depth`` hits of the two indexes with ``norm`` (the default of the ``pyserini-nq``
  preset) or ``rrf``; z-scores need every document's score, so ``zscore`` is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nqkit.retrieval.base import MEMORY, RETRIEVERS, SEARCH, RetrieverSpec, ScoreFn
from nqkit.retrieval.bm25 import BM25Retriever
from nqkit.retrieval.dense import DenseRetriever
from nqkit.retrieval.fusion import FUSIONS, RRF_K, fuse_rows, zscore_rows
from nqkit.settings import Param, float_in, positive_int

__all__ = ["PARAMS", "SPEC", "HybridRetriever", "fusion_settings", "zscore_rows"]

PARAMS: tuple[Param, ...] = (
    Param("fusion", "--fusion", "hybrid: zscore (z-scores over every document; reqa run "
          "only), norm (Pyserini's normalized scores) or rrf (reciprocal rank fusion) "
          "(default: the preset's; reqa zscore, pyserini-nq norm)", choices=FUSIONS),
    Param("weight", "--weight", "hybrid zscore: weight of the dense z-scores, fused = "
          "weight * dense + (1 - weight) * lexical (default 0.5, not tuned)",
          default=0.5, type=float_in(0, 1)),
    Param("alpha", "--alpha", "hybrid norm: weight of the normalized BM25 score, fused = "
          "alpha * bm25 + dense (Pyserini's convention; default 1.0, not tuned)",
          default=1.0, type=float_in(0)),
    Param("depth", "--depth", "hybrid: hits taken from each retriever before fusion "
          "(default 1000)", default=1000, type=positive_int),
)


def fusion_settings(fusion: str, weight: float, alpha: float) -> dict[str, object]:
    """The fusion's part of a signature: its name and the one setting it reads."""
    if fusion == "zscore":
        return {"fusion": fusion, "weight": weight}
    if fusion == "norm":
        return {"fusion": fusion, "alpha": alpha}
    return {"fusion": fusion, "rrf-k": RRF_K}


@dataclass
class _HybridIndex:
    lexical: Any
    dense: Any
    retriever: HybridRetriever
    size: int

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        dense, lexical = self.dense.scorer(queries), self.lexical.scorer(queries)
        r = self.retriever

        def scores(lo: int, hi: int) -> np.ndarray:
            d = dense(lo, hi)
            return fuse_rows(r.fusion, lexical(lo, hi), d, weight=r.weight, alpha=r.alpha)

        return scores


@dataclass
class HybridRetriever:
    """A lexical and a dense retriever, fused per query (see the module doc)."""

    dense: Any = None
    lexical: Any = None
    weight: float = 0.5
    fusion: str = "zscore"
    alpha: float = 1.0
    name: str = field(default="hybrid", init=False)

    @classmethod
    def from_settings(cls, s: Mapping[str, Any]) -> HybridRetriever:
        """``s``: parsed options after :func:`nqkit.retrieval.base.apply_preset`."""
        return cls(dense=DenseRetriever.from_settings(s),
                   lexical=BM25Retriever.from_settings(s), weight=s["weight"],
                   fusion=s.get("fusion") or "zscore", alpha=s.get("alpha", 1.0))

    def __post_init__(self) -> None:
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError("weight must be in [0, 1]")
        if self.fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {FUSIONS}")
        if self.dense is None:
            self.dense = DenseRetriever()
        if self.lexical is None:
            self.lexical = BM25Retriever()

    def settings(self) -> dict[str, object]:
        dense = {f"dense.{k}": v for k, v in self.dense.settings().items() if k != "retriever"}
        lex = {f"lex.{k}": v for k, v in self.lexical.settings().items() if k != "retriever"}
        return {"retriever": self.name, **fusion_settings(self.fusion, self.weight, self.alpha),
                **dense, **lex}

    def index(self, docs: Sequence[str], contexts: Sequence[str] | None = None) -> _HybridIndex:
        # dense first: with an encoder that fails, nothing is tokenized in vain
        dense = self.dense.index(docs, contexts)
        return _HybridIndex(self.lexical.index(docs, contexts), dense, self, len(docs))


SPEC = RETRIEVERS.add("hybrid", RetrieverSpec(
    "hybrid", "a lexical and a dense retriever, fused", PARAMS,
    uses={MEMORY: ("fusion", "weight", "alpha"), SEARCH: ("fusion", "alpha", "depth")},
    in_memory=HybridRetriever,
    parts=("bm25", "dense")))  # (lexical, dense): retrieve fuses one index of each
