"""Ranking metrics of ReQA: MRR and recall at k, at sentence and at paragraph level.

Reproduces the ReQA paper (Ahmad et al., 2019, §3, Eq. 1-2, Algorithm 2) and the
behaviour of its official evaluation script:

* every query scores every index item (higher is better); ranks start at 1 and tied
  scores share the average of their ranks (``scipy.stats.rankdata`` on negated scores);
* a query's *sentence rank* is the best rank of any index item whose sentence equals the
  target sentence (the same sentence may occur in several paragraphs);
* a paragraph is scored by its best sentence; paragraphs are ranked like sentences, and a
  query's *paragraph rank* is the best rank of a paragraph holding a target sentence;
* a question asked several times (same text) keeps its best rank; MRR and R@k average
  over distinct questions, and R@k counts ranks ``<= k``.

Scores are consumed in chunks of queries, so memory stays bounded by
``chunk rows x index size`` whatever the number of queries. Ranks are computed without a
sort: the average rank of a score ``t`` in a row is ``#(> t) + (#(== t) + 1) / 2``.

Pure functions: no I/O. Scores come from a callable ``scores(lo, hi)`` giving the rows of
queries ``lo..hi-1`` (for embeddings, :func:`dot_scores` of ``Q[lo:hi]`` and ``A``).

Why dot products are accumulated in float64: a float32 GEMM rounds differently on every
BLAS kernel (OpenBLAS picks Haswell, SkylakeX, ... from the CPU), and ties among float32
scores decide deep ranks, so MRR and even R@k moved with the machine (SQuAD dev with
64-dim embeddings: MRR 0.1446899 on Haswell, 0.1446910 on SkylakeX, R@10 0.19461 instead
of 0.19480 on Sandybridge). Float64 dot products of float32 vectors differ between kernels
only by a few float64 ulps, and rounding them once to float32 removes that difference
(except for a score within a few float64 ulps of a float32 rounding boundary, which none
of those kernels hit on that data), while keeping the float32 ties of the original setup.
``accumulate="float32"`` computes as the official script did (one float32 GEMM), which
reproduces its numbers exactly only on the official run's kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nqkit.errors import InputError, for_example
from nqkit.signature import make_signature

__all__ = [
    "KS",
    "QueryRanks",
    "RankTargets",
    "RankingResult",
    "aggregate_ranks",
    "average_ranks",
    "chunk_rows",
    "dot_scores",
    "rank_queries",
    "reqa_evaluate",
]

KS: tuple[int, ...] = (1, 5, 10)
ACCUMULATE = ("float64", "float32")
ScoreFn = Callable[[int, int], np.ndarray]


@dataclass(frozen=True)
class RankTargets:
    """What counts as correct for each query, in index positions.

    Build it with :meth:`from_sentences`.
    """

    item_doc: np.ndarray  # (n_items,) compact paragraph number 0..n_docs-1 of each item
    n_docs: int  # number of distinct paragraphs in the index
    target_items: tuple[np.ndarray, ...]  # per query: index positions of its target sentence
    target_docs: tuple[np.ndarray, ...]  # per query: compact paragraphs of those positions
    doc_ids: np.ndarray = field(repr=False)  # (n_docs,) original doc id of each compact number

    @classmethod
    def from_sentences(cls, index_sentences: Sequence[str], index_doc_ids: Sequence[int],
                       target_sentences: Sequence[str]) -> RankTargets:
        """Targets from the index (sentence, doc id per item) and each query's sentence.

        Raises :class:`InputError` when a target sentence is not in the index: such a query
        could never be answered, and scoring it as a miss would be a silent zero.
        """
        positions: dict[str, list[int]] = {}
        for i, s in enumerate(index_sentences):
            positions.setdefault(s, []).append(i)
        absent = [s for s in target_sentences if s not in positions]
        if absent:
            raise InputError(None, f"{len(absent):,} of {len(target_sentences):,} target "
                             "sentences are not in the index, so their queries could never be "
                             f"answered ({for_example(repr(s[:60]) for s in absent)})",
                             "build the index and the queries from the same task")
        doc_ids, item_doc = np.unique(np.asarray(index_doc_ids, dtype=np.int64),
                                      return_inverse=True)
        items: list[np.ndarray] = []
        docs: list[np.ndarray] = []
        for s in target_sentences:
            pos = np.asarray(positions[s], dtype=np.int64)
            items.append(pos)
            docs.append(np.unique(item_doc[pos]))
        return cls(item_doc.astype(np.int64), len(doc_ids), tuple(items), tuple(docs), doc_ids)


@dataclass(frozen=True)
class QueryRanks:
    """Per-query ranks (floats: ties are averaged); ``None`` when a level was not scored."""

    sentence: np.ndarray | None
    document: np.ndarray | None


@dataclass(frozen=True)
class RankingResult:
    """MRR and R@k per level over distinct questions, with the signature of the setting."""

    levels: Mapping[str, Mapping[str, float]]  # "sentence"/"document" -> {"mrr", "r@1", ...}
    questions: int  # number of queries
    distinct_questions: int  # number of distinct question texts (the denominator)
    index_size: int  # number of index items (sentences), or paragraphs for paragraph scoring
    signature: str

    def as_dict(self) -> dict[str, object]:
        return {"index_size": self.index_size, "questions": self.questions,
                "distinct_questions": self.distinct_questions,
                **{k: dict(v) for k, v in self.levels.items()}, "signature": self.signature}


def average_ranks(scores: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Average rank (1 = best) of ``target[i]`` among the values of row ``scores[i]``."""
    t = target[:, None]
    greater = np.count_nonzero(scores > t, axis=1)
    equal = np.count_nonzero(scores == t, axis=1)
    return greater + (equal + 1) / 2.0


def dot_scores(queries: np.ndarray, items: np.ndarray, *, accumulate: str = "float64",
               ) -> np.ndarray:
    """float32 dot products ``queries @ items.T``, the same on every CPU by default.

    ``accumulate="float64"`` sums in float64 and rounds once to float32, so the result does
    not depend on the BLAS kernel; ``"float32"`` is a plain float32 GEMM (the official ReQA
    script's arithmetic, whose last bits depend on the kernel the CPU selects).
    """
    if accumulate == "float64":
        return np.asarray(np.asarray(queries, dtype=np.float64)
                          @ np.asarray(items, dtype=np.float64).T).astype(np.float32)
    if accumulate == "float32":
        return np.asarray(np.asarray(queries, dtype=np.float32)
                          @ np.asarray(items, dtype=np.float32).T)
    raise ValueError(f"accumulate must be one of {ACCUMULATE}, not {accumulate!r}")


def _doc_max(scores: np.ndarray, order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Best item score of every paragraph, for a chunk of rows."""
    return np.maximum.reduceat(scores[:, order], starts, axis=1)


def chunk_rows(n_columns: int, memory_bytes: int = 256 * 2**20) -> int:
    """Rows per chunk so that a chunk's score matrix and its temporaries fit the budget."""
    return max(1, int(memory_bytes // max(1, n_columns * 4 * 4)))


def rank_queries(scores: ScoreFn, targets: RankTargets, *, level: str = "sentence",
                 chunk_size: int | None = None,
                 progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
                 ) -> QueryRanks:
    """Rank every query's targets, a chunk of queries at a time.

    ``level="sentence"``: ``scores(lo, hi)`` gives ``(hi-lo, n_items)`` item scores, and
    both sentence and paragraph ranks are computed. ``level="document"``: it gives
    ``(hi-lo, n_docs)`` paragraph scores, columns in the order of ``targets.doc_ids``, and
    only paragraph ranks are computed (the paper's Table 6 BM25 setting).
    """
    if level not in ("sentence", "document"):
        raise ValueError(f"level must be 'sentence' or 'document', not {level!r}")
    nq = len(targets.target_items)
    n_cols = len(targets.item_doc) if level == "sentence" else targets.n_docs
    rows = chunk_size or chunk_rows(n_cols)
    order = np.argsort(targets.item_doc, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(targets.item_doc[order]) != 0])
    sent = np.empty(nq) if level == "sentence" else None
    doc = np.empty(nq)
    chunks: Iterable[int] = range(0, nq, rows)
    if progress is not None:
        chunks = progress(chunks)
    for lo in chunks:
        hi = min(lo + rows, nq)
        s = np.asarray(scores(lo, hi))
        if s.shape != (hi - lo, n_cols):
            raise ValueError(f"scores({lo}, {hi}) has shape {s.shape}, expected "
                             f"{(hi - lo, n_cols)}")
        if level == "sentence":
            assert sent is not None
            best = np.array([s[i, targets.target_items[lo + i]].max() for i in range(hi - lo)],
                            dtype=s.dtype)
            sent[lo:hi] = average_ranks(s, best)
            d = _doc_max(s, order, starts)
        else:
            d = s
        best_doc = np.array([d[i, targets.target_docs[lo + i]].max() for i in range(hi - lo)],
                            dtype=d.dtype)
        doc[lo:hi] = average_ranks(d, best_doc)
    return QueryRanks(sent, doc)


def _summary(best: Iterable[float], ks: Sequence[int]) -> dict[str, float]:
    ranks = list(best)
    out = {"mrr": sum(1.0 / r for r in ranks) / len(ranks)}
    for k in ks:
        out[f"r@{k}"] = sum(1 for r in ranks if r <= k) / len(ranks)
    return out


def aggregate_ranks(questions: Sequence[str], ranks: QueryRanks, *, index_size: int,
                    ks: Sequence[int] = KS, settings: Mapping[str, object] | None = None,
                    ) -> RankingResult:
    """MRR and R@k over distinct questions, each keeping its best rank (Eq. 1-2)."""
    if not questions:
        raise ValueError("no queries to score")
    levels: dict[str, dict[str, float]] = {}
    for name, arr in (("sentence", ranks.sentence), ("document", ranks.document)):
        if arr is None:
            continue
        best: dict[str, float] = {}
        for q, r in zip(questions, arr.tolist(), strict=True):
            if r < best.get(q, np.inf):
                best[q] = r
        levels[name] = _summary(best.values(), ks)
    paragraph = "best-sentence" if ranks.sentence is not None else "scored"
    sig = make_signature("reqa", {"ties": "average", "repeats": "best",
                                  "paragraph": paragraph, "k": ",".join(map(str, ks)),
                                  **(settings or {})})
    return RankingResult(levels, len(questions), len(set(questions)), index_size, sig)


def reqa_evaluate(query_emb: np.ndarray, index_emb: np.ndarray, targets: RankTargets,
                  questions: Sequence[str], *, chunk_size: int | None = None,
                  ks: Sequence[int] = KS, settings: Mapping[str, object] | None = None,
                  accumulate: str = "float64") -> RankingResult:
    """ReQA metrics from dot products of query and index embeddings (Algorithm 2).

    ``accumulate`` is passed to :func:`dot_scores`; the default gives the same numbers on
    every CPU, ``"float32"`` the official script's arithmetic.
    """
    if accumulate not in ACCUMULATE:
        raise ValueError(f"accumulate must be one of {ACCUMULATE}, not {accumulate!r}")

    def scores(lo: int, hi: int) -> np.ndarray:
        return dot_scores(query_emb[lo:hi], index_emb, accumulate=accumulate)

    ranks = rank_queries(scores, targets, chunk_size=chunk_size)
    acc = {} if accumulate == "float64" else {"acc": "f32-blas"}
    return aggregate_ranks(questions, ranks, index_size=len(index_emb), ks=ks,
                           settings={"score": "dot", **acc, **(settings or {})})
