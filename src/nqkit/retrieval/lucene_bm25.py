"""Lucene's BM25 exactly as Pyserini 1.6.0 runs it, over token lists, in numpy (no Java).

Pyserini 1.6.0 ships Anserini 1.7.1, built on Lucene 9.9.1. What decides a score and a
rank there, and what this module reproduces, as read in the classes of the jar Pyserini
ships (``javap -c`` of Lucene's ``BM25Similarity``, ``BM25Similarity$BM25Scorer``,
``SmallFloat``, ``MaxScoreBulkScorer``, ``WANDScorer``, ``BooleanScorer`` and Anserini's
``SimpleSearcher``, ``BagOfWordsQueryGenerator``, ``ScoreTiesAdjusterReranker``,
``IndexCollection``), and checked against Pyserini by ``tests/test_lucene_bm25.py``:

* **Document length** (``BM25Similarity.computeNorm``): the number of tokens the analyzer
  emits for the field (removed stop words do not count; overlapping tokens would be
  discounted, but a token list has none; ``IndexCollection`` indexes with the default
  ``BM25Similarity``, so ``discountOverlaps`` is on), stored in ONE byte by
  ``SmallFloat.intToByte4``: 0-23 as themselves, above that 24 plus the rest with 4
  significant bits, truncated (exact up to 40; 100 is stored as 96). Scoring sees only
  the decoded length (``byte4ToInt``), one of 256 values.
* **Collection statistics**: ``docCount`` = documents with at least one token in the
  field; ``sumTotalTermFreq`` = all tokens; ``docFreq`` per term.
* **idf** = ``(float) Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5))``,
  computed in double and rounded to float once.
* **avgdl** = ``(float) ((double) sumTotalTermFreq / (double) docCount)``.
* **Norm cache** (one float per length byte), in float32 and in this order:
  ``1 / (k1 * ((1 - b) + b * length / avgdl))``.
* **Query** (``BagOfWordsQueryGenerator``): each distinct analyzed term once, as a SHOULD
  clause boosted by its count in the question; ``weight = boost * idf`` (float32).
* **Clause score** (``BM25Scorer.score``), float32: ``weight - weight / (1 + freq *
  cache[norm])``.
* **Document score**: the clause scores are added in DOUBLE (``MaxScoreBulkScorer``'s
  window scores, also ``BooleanScorer``'s buckets and ``WANDScorer``) and rounded to float
  once. The double sum of a few float32 values whose magnitudes lie within 2**25 of each
  other is exact, so the order of the clauses (a Java ``HashMap``'s) does not matter.
* **Order** (``SimpleSearcher``'s sort): score descending, then the external id as a
  string, ascending (``SortField("id", STRING_VAL)``: UTF-8 bytes, i.e. code points) —
  not the index order. ``"10"`` comes before ``"9"``.
* **Returned scores** (``ScoreTiesAdjusterReranker``, on by default in ``SimpleSearcher``,
  so in ``LuceneSearcher.search`` and ``batch_search``): each score, in rank order,
  is rounded to 4 decimals (``Math.round(score * 10000.0) / 10000.0`` in double, then
  float); when it is within ``1e-4f`` of the previous (already adjusted) score a running
  count grows and ``1e-6f * count`` is subtracted, else the count restarts at 0. The order
  is not changed. :func:`anserini_adjust` does this; :func:`LuceneBM25.search` returns the
  raw Lucene scores.

**Multifield** (Anserini's ``IndexCollection -fields title`` with ``SearchCollection
-fields contents=1.0 title=1.0``, or ``LuceneSearcher.search(q, fields=...)``): each field
is an index of its own for the formulas above (its own ``docCount``, ``sumTotalTermFreq``,
avgdl, norm bytes and document frequencies). What the fields hold: Anserini's
multifield collections (``BeirMultifieldCollection``; ``JsonCollection`` puts what the
JSON says) index the text alone as ``contents`` and the title as ``title``, where the
flat ones (``BeirFlatCollection``, Pyserini's DPR index) index ``title + "\\n" + text``
as ``contents``; ``DefaultLuceneDocumentGenerator`` skips a document whose ``contents``
is empty after Java's ``trim()``, title and all. The query
(``BagOfWordsQueryGenerator.buildQuery(Map, ...)``) is a BooleanQuery of one SHOULD
clause per field, ``BoostQuery(bag-of-words query of the field, weight)``; a clause
term's boost is ``(float) (count * weight)`` (``BoostQuery.createWeight`` multiplies the
boosts down the tree), so its BM25 weight is ``(count * weight) * idf`` in float32. Lucene
9.9.1 rewrites a ``BoostQuery`` of boost 1 to its query and then flattens a nested pure
disjunction into its parent (``BooleanQuery.rewrite``): the clauses of every field of
weight 1 are added with the others in one double sum; a field of another weight stays a
nested scorer whose score, its own double sum, is rounded to float32 before the outer
double sum. :class:`MultiFieldBM25` does this; :func:`combine_fields` is the rule.

The index is built in the three steps of the sharded layout of
:mod:`nqkit.retrieval.bm25_index` (count per shard, global statistics, score per shard),
so that N shards give the bytes of one: :func:`count_shard`, :func:`global_stats`,
:func:`score_shard`; :class:`LuceneBM25` ties them together for one process.
"""

from __future__ import annotations

import itertools
import json
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.arrays import distinct

__all__ = [
    "FIELDS",
    "FLAT",
    "LENGTH_TABLE",
    "CountedShard",
    "GlobalStats",
    "LuceneBM25",
    "LuceneBM25Settings",
    "MultiFieldBM25",
    "ScoredShard",
    "anserini_adjust",
    "anserini_adjust_lists",
    "avg_field_length",
    "byte4_to_int",
    "clause_scores",
    "combine_fields",
    "count_docs",
    "count_ids",
    "count_shard",
    "field_texts",
    "field_weights",
    "fields_spec",
    "global_stats",
    "idf",
    "int_to_byte4",
    "norm_cache",
    "query_clauses",
    "score_shard",
    "term_weight",
]

F32 = np.float32

# SmallFloat: values below NUM_FREE_VALUES are stored as themselves; the others as
# NUM_FREE_VALUES + a 3-bit-mantissa float of (value - NUM_FREE_VALUES). 24 = 255 minus the
# code of Integer.MAX_VALUE (231), so every int fits in a byte.
NUM_FREE_VALUES = 24


def _long_to_int4(v: np.ndarray) -> np.ndarray:
    """``SmallFloat.longToInt4`` on int64 values in 0 .. 2**31: 3 mantissa bits below the
    leading one (truncated), the shift + 1 above them; values below 8 stay as they are."""
    v = np.asarray(v, dtype=np.int64)
    bits = np.frexp(v.astype(np.float64))[1].astype(np.int64)  # bit length, exact < 2**53
    shift = np.maximum(bits - 4, 0)
    enc = (np.right_shift(v, shift) & 0x07) | ((shift + 1) << 3)
    return np.where(bits < 4, v, enc)


def _int4_to_long(i: np.ndarray) -> np.ndarray:
    i = np.asarray(i, dtype=np.int64)
    bits = i & 0x07
    shift = (i >> 3) - 1
    return np.where(shift == -1, bits, (bits | 0x08) << np.maximum(shift, 0))


def int_to_byte4(n: Any) -> np.ndarray:
    """``SmallFloat.intToByte4``: document lengths (ints >= 0) to their one-byte codes."""
    n = np.asarray(n, dtype=np.int64)
    if (n < 0).any() or (n > 2**31 - 1).any():
        raise ValueError("lengths must be in 0 .. 2**31 - 1")
    small = n < NUM_FREE_VALUES
    enc = NUM_FREE_VALUES + _long_to_int4(np.where(small, 0, n - NUM_FREE_VALUES))
    return np.where(small, n, enc).astype(np.uint8)


def byte4_to_int(code: Any) -> np.ndarray:
    """``SmallFloat.byte4ToInt``: one-byte codes (0-255) to the lengths they stand for."""
    c = np.asarray(code, dtype=np.int64) & 0xFF
    return np.where(c < NUM_FREE_VALUES, c,
                    NUM_FREE_VALUES + _int4_to_long(np.maximum(c - NUM_FREE_VALUES, 0)))


# BM25Similarity.LENGTH_TABLE: the decoded length of every byte, as float
LENGTH_TABLE = byte4_to_int(np.arange(256)).astype(F32)


def idf(doc_freq: Any, doc_count: int) -> np.ndarray:
    """Lucene's idf, float32: ``log(1 + (N - df + 0.5) / (df + 0.5))`` in double."""
    df = np.asarray(doc_freq, dtype=np.int64)
    x = (np.float64(doc_count) - df.astype(np.float64) + 0.5) / (df.astype(np.float64) + 0.5)
    return np.log(1.0 + x).astype(F32)


def avg_field_length(sum_total_term_freq: int, doc_count: int) -> np.float32:
    """``(float) (sumTotalTermFreq / (double) docCount)``."""
    return F32(np.float64(sum_total_term_freq) / np.float64(doc_count))


def norm_cache(k1: float, b: float, avgdl: np.float32) -> np.ndarray:
    """The 256 inverse norms ``1 / (k1 * ((1 - b) + b * length / avgdl))``, float32 ops."""
    k1f, bf = F32(k1), F32(b)
    with np.errstate(divide="ignore"):
        inner = (F32(1) - bf) + (bf * LENGTH_TABLE) / F32(avgdl)
        return (F32(1) / (k1f * inner)).astype(F32)


def clause_scores(weight: np.float32, freqs: np.ndarray, inv_norms: np.ndarray) -> np.ndarray:
    """``BM25Scorer.score``: ``weight - weight / (1 + freq * inv_norm)``, float32."""
    w = F32(weight)
    return (w - w / (F32(1) + freqs.astype(F32) * inv_norms)).astype(F32)


def query_clauses(tokens: Sequence[str]) -> list[tuple[str, int]]:
    """``BagOfWordsQueryGenerator``: each distinct term once with its count as the boost."""
    return list(Counter(tokens).items())


def term_weight(count: int, field_weight: float, idf_value: np.float32) -> np.float32:
    """A clause's BM25 weight: ``(float) (count * fieldWeight) * idf`` (float32 products;
    ``BoostQuery.createWeight`` multiplies a term's boost by its field's)."""
    return F32(F32(F32(count) * F32(field_weight)) * F32(idf_value))


# -- fields: what is indexed, and with which weights ------------------------------------

FLAT = "title+text"  # one field: the title, a line break, the text (Pyserini's DPR index)
FIELDS = ("text", "title")  # multifield: Anserini's ``contents`` (the text) and ``title``
_TRIM = "".join(map(chr, range(33)))  # what Java's String.trim() strips: code points <= 32


def field_weights(spec: str) -> dict[str, float]:
    """``"title+text"`` (flat) or ``"text=1,title=0.5"`` (multifield, as
    :func:`fields_spec` writes it) -> ``{field: weight}`` (flat: ``{"title+text": 1.0}``)."""
    if spec == FLAT:
        return {FLAT: 1.0}
    out: dict[str, float] = {}
    for part in spec.split(","):
        name, _, weight = part.partition("=")
        if name not in FIELDS or name in out:
            raise ValueError(f"fields {spec!r}: {name!r} is not one of {FIELDS} (or twice)")
        w = float(weight) if weight else 1.0
        if not (w > 0 and np.isfinite(F32(w))):
            raise ValueError(f"fields {spec!r}: a weight must be a positive float")
        out[name] = w
    return out


def fields_spec(weights: dict[str, float]) -> str:
    """The canonical spelling of :func:`field_weights`' result: fields in name order, each
    weight as the shortest text of its float32 (the weight Lucene uses)."""
    if set(weights) == {FLAT}:
        return FLAT
    field_weights(",".join(weights))  # the names are checked
    return ",".join(f"{name}={np.format_float_positional(F32(weights[name]), trim='-')}"
                    for name in sorted(weights))


def field_texts(title: str, text: str, field: str) -> str:
    """What one field of a passage holds: :data:`FLAT` ``title + "\\n" + text``; ``text``;
    ``title`` -- empty when the text is empty after Java's ``trim()``, as Anserini then
    skips the whole document (``EmptyDocumentException``: its ``contents`` is the text)."""
    if field == FLAT:
        return f"{title}\n{text}"
    if field == "text":
        return text
    if field == "title":
        return title if text.strip(_TRIM) else ""
    raise ValueError(f"unknown field {field!r}")


def combine_fields(parts: Sequence[tuple[np.ndarray, np.ndarray, float]]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """A multifield query's document scores from its fields' ``(rows, sums, weight)``:
    ``rows`` distinct, ``sums`` each row's clause scores of the field added in double.
    Fields of weight 1 are flattened into one double sum with the rest; another weight's
    sums are rounded to float32 first (a nested BooleanQuery's score); the total is rounded
    to float32 once. Returns the matched rows ascending and their float32 scores.

    The double sums are exact (float32 values within a few powers of two of each other),
    so neither the order of the fields nor that of their clauses matters."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, F32)
    rows = np.concatenate([r for r, _, _ in parts]).astype(np.int64)
    vals = np.concatenate([v if w == 1.0 else v.astype(F32).astype(np.float64)
                           for _, v, w in parts])
    hit, at = np.unique(rows, return_inverse=True)
    return hit, np.bincount(at, weights=vals, minlength=hit.shape[0]).astype(F32)


def anserini_adjust(scores: np.ndarray) -> np.ndarray:
    """Anserini's ``ScoreTiesAdjusterReranker`` on one ranked list of float32 scores.

    What ``SimpleSearcher.search`` (and so Pyserini's ``LuceneSearcher``) returns instead
    of Lucene's scores: rounded to 4 decimals, with near-ties pulled apart by ``1e-6``
    steps (module docstring). The order is unchanged.
    """
    scores = np.asarray(scores, dtype=F32)
    return anserini_adjust_lists(scores, np.asarray([0, scores.shape[0]], dtype=np.int64))


_EPS, _STEP = float(F32(1e-4)), float(F32(1e-6))


def anserini_adjust_lists(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`anserini_adjust` of the ranked lists ``scores[offsets[i]:offsets[i + 1]]``
    (float32, concatenated); the adjusted scores, concatenated the same way.

    The rounding is one numpy pass; the running near-tie count is a loop over Python
    floats that does Java's float arithmetic exactly: each float32 operation is done in
    double, where it is exact (differences of float32 values between 1e-4 and 2**24 and
    products of a float32 by a count below 2**29 fit in 53 bits), and rounded to float32
    once by storing it in an ``array("f")``.
    """
    y = np.asarray(scores, dtype=F32).astype(np.float64) * 10000.0
    r = np.floor(y)
    r += y - r >= 0.5  # Math.round: nearest, halves up (exact)
    out = array("f", (r / 10000.0).astype(F32).tobytes())
    f = array("f", [0.0])  # f[0] = x rounds x to float32
    bounds = offsets.tolist()
    for lo, hi in itertools.pairwise(bounds):
        count = 0
        prev = out[lo] if hi > lo else 0.0
        for i in range(lo + 1, hi):
            x = out[i]
            f[0] = prev - x
            if f[0] > _EPS:
                count = 0
            else:
                count += 1
                f[0] = _STEP * count
                f[0] = x - f[0]
                x = out[i] = f[0]
            prev = x
    return np.frombuffer(out, dtype=F32).copy()


@dataclass(frozen=True, slots=True)
class LuceneBM25Settings:
    """Every setting that changes the scores (recorded in params.json and signatures)."""

    k1: float = 0.9
    b: float = 0.4
    method: str = "lucene-exact"  # Lucene 9.9.1's BM25Similarity as Pyserini 1.6.0 runs it

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class CountedShard:
    """Step 1 of a build: one shard's terms and postings with shard-local term ids."""

    vocab: list[str]  # shard-local terms, sorted
    doc_freq: np.ndarray  # int64 per local term
    lengths: np.ndarray  # int64 tokens per document (the norm before encoding)
    indptr: np.ndarray  # int64, len(vocab) + 1: term t's postings are [indptr[t], indptr[t+1])
    rows: np.ndarray  # int32 shard row of each posting, ascending within a term
    freqs: np.ndarray  # int32 term frequency of each posting


def count_shard(docs: Iterable[Sequence[str]]) -> CountedShard:
    """Postings by term (CSC) of one shard's token lists, rows numbered from 0."""
    local: dict[str, int] = {}
    ids: list[np.ndarray] = []
    lengths: list[int] = []
    for toks in docs:
        ids.append(np.fromiter((local.setdefault(t, len(local)) for t in toks),
                               dtype=np.int32, count=len(toks)))
        lengths.append(len(toks))
    flat = np.concatenate(ids) if ids else np.zeros(0, np.int32)
    return count_ids(flat, np.asarray(lengths, dtype=np.int64), list(local))


def count_ids(flat: np.ndarray, lengths: np.ndarray, terms: list[str]) -> CountedShard:
    """:func:`count_shard` of token lists given as ids: ``flat`` holds every document's
    tokens as indexes into ``terms`` (distinct, in any order), document after document,
    ``lengths`` the number of each document's tokens."""
    n = lengths.shape[0]
    return count_docs(flat, np.repeat(np.arange(n, dtype=np.int64), lengths), lengths, terms)


def count_docs(flat: np.ndarray, docs: np.ndarray, lengths: np.ndarray, terms: list[str]
               ) -> CountedShard:
    """:func:`count_ids` with the document of every token given (``docs[i]`` for
    ``flat[i]``), so the tokens may come in any order; ``lengths`` as there."""
    n = lengths.shape[0]
    # ids -> sorted-term ids, so a shard's arrays depend on neither id nor token order
    order = sorted(range(len(terms)), key=terms.__getitem__)
    vocab = [terms[i] for i in order]
    rank = np.empty(len(terms), dtype=np.int64)
    rank[order] = np.arange(len(terms), dtype=np.int64)
    keys, freqs = np.unique(rank[flat] * max(n, 1) + docs, return_counts=True)
    terms_of, rows_of = np.divmod(keys, max(n, 1))
    doc_freq = np.bincount(terms_of, minlength=len(vocab)).astype(np.int64)
    indptr = np.concatenate([np.zeros(1, np.int64), np.cumsum(doc_freq)])
    return CountedShard(vocab, doc_freq, np.asarray(lengths, dtype=np.int64), indptr,
                        rows_of.astype(np.int32), freqs.astype(np.int32))


@dataclass(frozen=True, slots=True)
class GlobalStats:
    """Step 2: corpus-wide statistics over all shards (Lucene's CollectionStatistics)."""

    vocab: list[str]  # sorted union of the shards' terms
    doc_freq: np.ndarray  # int64 per global term
    doc_count: int  # documents with at least one token
    sum_total_term_freq: int
    idf: np.ndarray  # float32 per global term
    avgdl: np.float32
    cache: np.ndarray  # float32[256] inverse norms


def global_stats(shards: Sequence[CountedShard], settings: LuceneBM25Settings
                 ) -> tuple[GlobalStats, list[np.ndarray]]:
    """Merge the shards' counts; also each shard's local -> global term id map."""
    vocab = sorted(set().union(*(s.vocab for s in shards)))
    index_of = {t: i for i, t in enumerate(vocab)}
    df = np.zeros(len(vocab), dtype=np.int64)
    maps = []
    for s in shards:
        m = np.fromiter((index_of[t] for t in s.vocab), dtype=np.int64, count=len(s.vocab))
        df[m] += s.doc_freq
        maps.append(m)
    doc_count = int(sum(int((s.lengths > 0).sum()) for s in shards))
    total = int(sum(int(s.lengths.sum()) for s in shards))
    avgdl = avg_field_length(total, doc_count) if doc_count else F32(1)
    stats = GlobalStats(vocab, df, doc_count, total, idf(df, doc_count), avgdl,
                        norm_cache(settings.k1, settings.b, avgdl))
    return stats, maps


@dataclass(frozen=True, slots=True)
class ScoredShard:
    """Step 3: one shard's arrays as stored (``.npy`` each), postings by global term."""

    norms: np.ndarray  # uint8 per row: SmallFloat.intToByte4(length)
    terms: np.ndarray  # int32 global ids of the terms present, ascending
    indptr: np.ndarray  # int64, len(terms) + 1
    rows: np.ndarray  # int32
    freqs: np.ndarray  # int32
    data: np.ndarray  # float32 clause score of each posting at boost 1


def score_shard(shard: CountedShard, term_map: np.ndarray, stats: GlobalStats) -> ScoredShard:
    """A shard's postings under global term ids, with each posting's boost-1 score."""
    # both vocabularies are sorted, so global ids ascend with local ones and the
    # shard's postings are already in global term order
    if term_map.shape[0] > 1 and not (np.diff(term_map) > 0).all():
        raise ValueError("the term map must be increasing")
    rows, freqs, indptr, terms = shard.rows, shard.freqs, shard.indptr, term_map
    norms = int_to_byte4(shard.lengths)
    weights = np.repeat(stats.idf[terms], np.diff(indptr))  # boost 1: weight = idf
    inv = stats.cache[norms[rows]]
    data = (weights - weights / (F32(1) + freqs.astype(F32) * inv)).astype(F32)
    return ScoredShard(norms, terms.astype(np.int32), indptr, rows, freqs, data)


def _top_k(cand: np.ndarray, vals: np.ndarray, id_rank: np.ndarray, k: int
           ) -> tuple[np.ndarray, np.ndarray]:
    if cand.shape[0] > k:
        kth = np.partition(vals, cand.shape[0] - k)[cand.shape[0] - k]
        keep = vals >= kth  # every document tied with the k-th competes on its id
        cand, vals = cand[keep], vals[keep]
    order = np.lexsort((id_rank[cand], -vals.astype(np.float64)))[:k]
    return cand[order], vals[order]


SHARD_ARRAYS = ("norms", "terms", "indptr", "rows", "freqs", "data")
FORMAT = 1  # version of the directory layout written by LuceneBM25.save


class LuceneBM25:
    """A Lucene BM25 index over token lists (``ids`` in corpus order), in shards.

    Shards hold consecutive documents; the statistics are global, so the scores and
    lists do not depend on the sharding (each shard's arrays are what a shard job of the
    sharded layout writes).

    >>> ix = LuceneBM25.build([["a", "b"], ["b"]], ["d1", "d2"])
    >>> ix.search(["b"], 2)[0].tolist()
    [1, 0]
    """

    def __init__(self, stats: GlobalStats, shards: Sequence[ScoredShard], ids: Sequence[str],
                 settings: LuceneBM25Settings) -> None:
        self.stats = stats
        self.shards = list(shards)
        self.ids = list(ids)
        self.settings = settings
        sizes = [sh.norms.shape[0] for sh in self.shards]
        if sum(sizes) != len(self.ids):
            raise ValueError(f"the shards hold {sum(sizes)} documents for {len(self.ids)} ids")
        self.starts = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes, dtype=np.int64)])
        self.index_of = {t: i for i, t in enumerate(stats.vocab)}
        # rank of each id in string order: the tie-break of SimpleSearcher's sort
        order = sorted(range(len(self.ids)), key=self.ids.__getitem__)
        self.id_rank = np.empty(len(self.ids), dtype=np.int64)
        self.id_rank[order] = np.arange(len(self.ids))
        self._acc = np.zeros(len(self.ids), dtype=np.float64)  # all zeros between questions
        self._pos: list[list[int]] | None = None

    @classmethod
    def build(cls, docs: Iterable[Sequence[str]], ids: Sequence[str],
              settings: LuceneBM25Settings | None = None,
              shard_size: int | None = None) -> LuceneBM25:
        """Index token lists in the three steps of the sharded layout, in this process."""
        settings = settings or LuceneBM25Settings()
        all_docs = list(docs)
        if len(all_docs) != len(ids):
            raise ValueError(f"{len(all_docs)} token lists for {len(ids)} ids")
        size = shard_size or max(len(all_docs), 1)
        counted = [count_shard(all_docs[lo:lo + size])
                   for lo in range(0, max(len(all_docs), 1), size)]
        stats, maps = global_stats(counted, settings)
        return cls(stats, [score_shard(c, m, stats) for c, m in zip(counted, maps, strict=True)],
                   ids, settings)

    def _positions(self) -> list[list[int]]:
        """Per shard, the position of every global term in its term list (-1: absent);
        built on the first search (a list per shard: scalar lookups in Python)."""
        if self._pos is None:
            self._pos = []
            for sh in self.shards:
                pos = np.full(len(self.stats.vocab), -1, dtype=np.int64)
                pos[sh.terms] = np.arange(sh.terms.shape[0])
                self._pos.append(pos.tolist())
        return self._pos

    def field_sums(self, tokens: Sequence[str], weight: float
                   ) -> tuple[np.ndarray, np.ndarray]:
        """The documents that match at least one term, ascending, with the double sums of
        their clause scores, the terms boosted by ``weight`` (this index as one field of
        a :class:`MultiFieldBM25`)."""
        acc = np.zeros(len(self.ids), dtype=np.float64)
        hit = np.zeros(len(self.ids), dtype=bool)
        pos = self._positions()
        for term, count in query_clauses(tokens):
            g = self.index_of.get(term)
            if g is None:
                continue
            w = term_weight(count, weight, self.stats.idf[g])
            for sh, pos_of, start in zip(self.shards, pos, self.starts[:-1].tolist(),
                                         strict=True):
                p = pos_of[g]
                if p < 0:
                    continue
                s, e = sh.indptr[p], sh.indptr[p + 1]
                rows = sh.rows[s:e]
                acc[rows + start] += clause_scores(w, sh.freqs[s:e],
                                                   self.stats.cache[sh.norms[rows]])
                hit[rows + start] = True
        rows_hit = np.flatnonzero(hit)
        return rows_hit.astype(np.int64), acc[rows_hit]

    def matches(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The documents that match at least one term of an analyzed question, ascending,
        with their float32 scores (every match is a hit in Lucene, whatever its score)."""
        acc = self._acc
        clauses = [(g, boost) for term, boost in query_clauses(tokens)
                   if (g := self.index_of.get(term)) is not None]
        touched: list[np.ndarray] = []
        for sh, pos_of, start in zip(self.shards, self._positions(),
                                     self.starts[:-1].tolist(), strict=True):
            for g, boost in clauses:
                p = pos_of[g]
                if p < 0:
                    continue
                s, e = sh.indptr[p], sh.indptr[p + 1]
                rows = sh.rows[s:e]
                if boost == 1:
                    part = sh.data[s:e]
                else:
                    weight = F32(F32(boost) * self.stats.idf[g])
                    part = clause_scores(weight, sh.freqs[s:e], self.stats.cache[sh.norms[rows]])
                at = rows + start if start else rows
                # a row occurs once per term; double accumulation as Lucene's scorers do
                acc[at] += part
                touched.append(at)
        if not touched:
            return np.zeros(0, np.int64), np.zeros(0, F32)
        if sum(t.shape[0] for t in touched) * 64 < acc.shape[0]:
            rows_hit = distinct(np.concatenate(touched))  # few postings: no pass over all
            vals = acc[rows_hit].astype(F32)
            acc[rows_hit] = 0.0
        else:
            # many: sequential passes beat gathers. A match always scores above 0 (idf > 0,
            # boost >= 1, and weight / (1 + freq * inv_norm) < weight unless a document is
            # some 10**7 times the average length, more than a length an int can hold)
            dense = acc.astype(F32)
            acc.fill(0.0)
            rows_hit = np.flatnonzero(dense > 0)
            vals = dense[rows_hit]
        return rows_hit.astype(np.int64), vals

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Every document's float32 score for one analyzed question (0: no term matched)."""
        out = np.zeros(len(self.ids), dtype=F32)
        rows, vals = self.matches(tokens)
        out[rows] = vals
        return out

    def search(self, tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k ``(rows, float32 scores)`` in Lucene's order (score, then id string)."""
        return _top_k(*self.matches(tokens), self.id_rank, k)

    def save(self, directory: Path) -> None:
        """Each shard's arrays as ``.npy`` (memory-mappable), the global ones, params.json."""
        directory.mkdir(parents=True, exist_ok=True)
        for i, sh in enumerate(self.shards):
            for name in SHARD_ARRAYS:
                np.save(directory / f"{name}-{i:05d}.npy", getattr(sh, name))
        np.save(directory / "doc_freq.npy", self.stats.doc_freq)
        params = {"format": FORMAT, "settings": self.settings.as_dict(),
                  "doc_count": self.stats.doc_count, "shards": len(self.shards),
                  "sum_total_term_freq": self.stats.sum_total_term_freq}
        with open(directory / "params.json", "w", encoding="utf-8") as f:
            json.dump(params, f)
        with open(directory / "vocab.json", "w", encoding="utf-8") as f:
            json.dump(self.stats.vocab, f, ensure_ascii=False)
        with open(directory / "ids.json", "w", encoding="utf-8") as f:
            json.dump(self.ids, f, ensure_ascii=False)

    @classmethod
    def load(cls, directory: Path) -> LuceneBM25:
        """An index written by :meth:`save`, its arrays memory-mapped; idf, avgdl and the
        norm cache are recomputed from the stored counts (they are functions of them)."""
        with open(directory / "params.json", encoding="utf-8") as f:
            params = json.load(f)
        if params.get("format") != FORMAT:
            raise ValueError(f"{directory}: index format {params.get('format')!r}, "
                             f"expected {FORMAT}; rebuild the index")
        settings = LuceneBM25Settings(**params["settings"])
        with open(directory / "vocab.json", encoding="utf-8") as f:
            vocab = json.load(f)
        with open(directory / "ids.json", encoding="utf-8") as f:
            ids = json.load(f)
        df = np.load(directory / "doc_freq.npy")
        n, total = params["doc_count"], params["sum_total_term_freq"]
        avgdl = avg_field_length(total, n) if n else F32(1)
        stats = GlobalStats(vocab, df, n, total, idf(df, n), avgdl,
                            norm_cache(settings.k1, settings.b, avgdl))
        shards = [ScoredShard(**{name: np.asarray(np.load(directory / f"{name}-{i:05d}.npy",
                                                          mmap_mode="r"))
                                 for name in SHARD_ARRAYS})
                  for i in range(params["shards"])]
        return cls(stats, shards, ids, settings)


class MultiFieldBM25:
    """Anserini's multifield BM25 over token lists: one :class:`LuceneBM25` per field
    (``fields[name][i]``: document i's tokens in that field), searched together with
    per-field weights (module docstring; :func:`combine_fields`).

    >>> ix = MultiFieldBM25.build({"text": [["a"], ["b"]], "title": [["b"], ["c"]]},
    ...                           ["d1", "d2"], {"text": 1.0, "title": 1.0})
    >>> [ix.ids[r] for r in ix.search(["c"], 2)[0]]  # c: in d2's title only
    ['d2']
    """

    def __init__(self, indexes: dict[str, LuceneBM25], weights: dict[str, float]) -> None:
        if set(indexes) != set(weights) or not indexes:
            raise ValueError("one weight per field, and at least one field")
        self.indexes = indexes
        self.weights = weights
        first = next(iter(indexes.values()))
        if any(ix.ids != first.ids for ix in indexes.values()):
            raise ValueError("the fields must index the same documents")
        self.ids = first.ids
        self.id_rank = first.id_rank

    @classmethod
    def build(cls, fields: dict[str, Sequence[Sequence[str]]], ids: Sequence[str],
              weights: dict[str, float], settings: LuceneBM25Settings | None = None,
              shard_size: int | None = None) -> MultiFieldBM25:
        return cls({name: LuceneBM25.build(docs, ids, settings, shard_size)
                    for name, docs in fields.items()}, weights)

    def matches(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The documents matching a term in some field, ascending, with float32 scores."""
        return combine_fields([(*ix.field_sums(tokens, self.weights[name]),
                                self.weights[name]) for name, ix in self.indexes.items()])

    def search(self, tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k ``(rows, float32 scores)`` in Lucene's order (score, then id string)."""
        return _top_k(*self.matches(tokens), self.id_rank, k)
