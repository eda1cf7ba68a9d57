"""BM25 with bm25s (Lucene variant), English stop words and the Snowball stemmer.

ReQA's Table 6 uses BM25 at paragraph level; index sentences for sentence level.
Scores of all documents for one query come from ``bm25s.BM25.get_scores`` (a sparse
matrix-vector product), so a full score row costs about the size of the postings of the
query terms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from nqkit.retrieval.base import RETRIEVERS, ScoreFn, missing_extra
from nqkit.settings import Param, float_in

__all__ = ["BM25Retriever"]


def _import_bm25s() -> tuple[Any, Any]:
    try:
        import bm25s
        import Stemmer
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise missing_extra("bm25s and PyStemmer", "bm25") from e
    return bm25s, Stemmer


@dataclass
class _BM25Index:
    model: Any
    vocab: dict[str, int]
    size: int
    tokenize: Any

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        ids = [[self.vocab[t] for t in toks if t in self.vocab]
               for toks in self.tokenize(list(queries))]

        def scores(lo: int, hi: int) -> np.ndarray:
            out = np.zeros((hi - lo, self.size), dtype=np.float32)
            for r, q in enumerate(ids[lo:hi]):
                if q and self.model is not None:
                    out[r] = self.model.get_scores(q)
            return out

        return scores


@dataclass
class BM25Retriever:
    """BM25 over the given texts (contexts are ignored)."""

    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"
    stopwords: str = "en"
    stemmer: str | None = "english"
    name: str = field(default="bm25", init=False)
    # the command-line settings of `nqkit reqa run --retriever bm25`
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("k1", "--k1", "BM25 k1 (default 1.5)", default=1.5, type=float_in(0)),
        Param("b", "--b", "BM25 b (default 0.75)", default=0.75, type=float_in(0, 1)),
    )

    @classmethod
    def from_settings(cls, s: Mapping[str, Any]) -> BM25Retriever:
        return cls(k1=s["k1"], b=s["b"])

    def settings(self) -> dict[str, object]:
        return {"retriever": self.name, "k1": self.k1, "b": self.b, "bm25": self.method,
                "stop": self.stopwords, "stem": self.stemmer or "none"}

    def _tokenizer(self) -> Any:
        bm25s, Stemmer = _import_bm25s()
        stem = Stemmer.Stemmer(self.stemmer) if self.stemmer else None

        def tokenize(texts: list[str]) -> list[list[str]]:
            out: list[list[str]] = bm25s.tokenize(texts, stopwords=self.stopwords, stemmer=stem,
                                                  return_ids=False, show_progress=False)
            return out

        return tokenize

    def index(self, docs: Sequence[str], contexts: Sequence[str] | None = None) -> _BM25Index:
        bm25s, _ = _import_bm25s()
        tokenize = self._tokenizer()
        tokens = tokenize(list(docs))
        model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in toks] for toks in tokens]
        if not vocab:  # only stop words (or nothing): every query scores 0 everywhere
            return _BM25Index(None, vocab, len(docs), tokenize)
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        return _BM25Index(model, vocab, len(docs), tokenize)


RETRIEVERS.add("bm25", BM25Retriever)
