"""Sharded BM25 over a passage store, with exactly the scores of one bm25s index.

BM25's score of a passage depends on corpus-wide statistics: the document frequency of
each term (through the idf) and the average document length. An index built shard by
shard with each shard's own statistics scores differently from one index over the whole
corpus. This module builds in three steps, each a list of shard jobs run by
:mod:`nqkit.cluster`:

1. *count* (one job per shard): tokenize the shard's passages (``title + " " + text``)
   with ``bm25s.tokenize``, write the token ids (shard-local vocabulary) and document
   lengths, and return the shard's vocabulary, document frequencies, passage count and
   total length;
2. *global statistics* (here): merge the vocabularies (sorted, so term ids do not depend
   on the sharding), sum the document frequencies, and compute the idf of every term with
   bm25s's own idf function for the method (``_build_idf_array`` with
   ``_select_idf_scorer``: Lucene ``log(1 + (N - df + 0.5) / (df + 0.5))``, Robertson
   ``log((N - df + 0.5) / (df + 0.5))`` clamped at 0, ATIRE ``log(N / df)``) and the
   average length ``float64(sum of lengths) / N`` — the value ``numpy.mean`` gives bm25s
   (a sum of integers is exact in float64);
3. *score* (one job per shard): the term-frequency component of every (passage, term)
   pair with bm25s's own function (``_select_tfc_scorer``) on the global average length,
   times the global idf, rounded to float32 as bm25s stores it; written per shard as a
   sparse matrix by term (``data``, ``indices`` = shard row, and ``terms``/``indptr`` for
   the terms that occur in the shard).

A query adds, for each of its terms in query order, the stored values of that term's
postings into a float32 score row — the order in which bm25s's ``get_scores`` adds them —
so every passage gets bit for bit the score of one bm25s index over the whole corpus.
Passages that match no query term score 0 and are not returned (as in Lucene). The top k
of each shard, then of their union, are chosen by score and then passage order
(:mod:`nqkit.retrieval.topk`).

Defaults follow Pyserini's DPR/NQ BM25 runs (k1 = 0.9, b = 0.4, title and text; Ma et
al. 2021, "A replication study of dense passage retriever"). Tokenization differs from
Lucene's ``EnglishAnalyzer`` used there: bm25s keeps tokens of 2+ word characters
(``(?u)\\b\\w\\w+\\b``, so one-letter tokens and the parts of "U.S." split differently),
removes bm25s's English stop-word list rather than Lucene's 33 words, and stems with
Snowball English (Porter2) instead of Lucene's Porter stemmer, without Lucene's
possessive filter; and Lucene stores document lengths in one lossy byte. Scores and
rankings therefore differ slightly from Pyserini's.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.arrays import distinct
from nqkit.cluster import Cluster, peak_rss_mb
from nqkit.retrieval.base import missing_extra
from nqkit.retrieval.passage_store import Shard, iter_shard
from nqkit.retrieval.topk import Hits, merge_shard_results, pack_hits, topk_of_row

__all__ = [
    "BM25_METHODS",
    "BM25Settings",
    "bm25_versions",
    "build_bm25",
    "search_bm25",
    "tokenize_queries",
]

BM25_METHODS = ("lucene", "robertson", "atire")  # bm25s methods without a non-occurrence term
SUBDIR = "bm25"
BATCH = 4096  # passages tokenized per bm25s.tokenize call (bounds the token lists in memory)


@dataclass(frozen=True, slots=True)
class BM25Settings:
    """Every setting that changes BM25 scores (recorded in params.json and signatures)."""

    k1: float = 0.9
    b: float = 0.4
    method: str = "lucene"  # bm25s's tf and idf variant
    stopwords: str = "en"  # bm25s's English stop-word list
    stemmer: str = "english"  # PyStemmer (Snowball) language, "none" for no stemming
    fields: str = "title+text"  # what is indexed: title, a space, then the text

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _import() -> tuple[Any, Any]:
    try:
        import bm25s
        import Stemmer
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise missing_extra("bm25s and PyStemmer", "bm25") from e
    return bm25s, Stemmer


def bm25_versions() -> dict[str, str]:
    """Versions that change BM25 tokens or scores (checked when an index is loaded)."""
    bm25s, _Stemmer = _import()
    from importlib.metadata import version

    return {"bm25s": bm25s.__version__, "PyStemmer": version("PyStemmer")}


def _tokenizer(settings: BM25Settings) -> Any:
    bm25s, Stemmer = _import()
    stem = Stemmer.Stemmer(settings.stemmer) if settings.stemmer != "none" else None

    def tokenize(texts: list[str]) -> tuple[list[list[int]], list[str]]:
        tok = bm25s.tokenize(texts, stopwords=settings.stopwords, stemmer=stem,
                             return_ids=True, show_progress=False)
        inv = [""] * len(tok.vocab)
        for t, i in tok.vocab.items():
            inv[i] = t
        return tok.ids, inv

    return tokenize


def _doc_text(title: str, text: str) -> str:
    return f"{title} {text}"


def _paths(root: Path, shard: Shard) -> dict[str, Path]:
    d = root / SUBDIR
    return {k: d / f"{k}-{shard.name}.{'json' if k == 'vocab' else 'npy'}"
            for k in ("tokens", "lengths", "vocab", "df", "map", "data", "indices", "terms",
                      "indptr")}


@dataclass(frozen=True, slots=True)
class _Job:
    root: str
    shard: Shard
    settings: BM25Settings
    avg_len: float = 0.0  # score jobs: global average length (float64)


class _WordIds(dict[str, int]):
    """Lower-cased word -> shard term id (-1 for a stop word), stemming each new word once."""

    def __init__(self, stop: frozenset[str], stem: Any) -> None:
        super().__init__()
        self.stop = stop
        self.stem = stem
        self.vocab: dict[str, int] = {}  # stemmed term -> shard id

    def __missing__(self, word: str) -> int:
        if word in self.stop:
            value = -1
        else:
            term = self.stem(word) if self.stem is not None else word
            value = self.vocab.setdefault(term, len(self.vocab))
        self[word] = value
        return value


def _shard_tokenizer(settings: BM25Settings) -> tuple[Any, _WordIds]:
    """``bm25s.tokenize``'s steps for one text at a time, into shard term ids.

    bm25s lower-cases, splits with ``(?u)\\b\\w\\w+\\b`` (the ``re`` module), drops stop
    words (before stemming), then stems each distinct word with PyStemmer; this does the
    same with a per-word cache, in about half the time of calling ``bm25s.tokenize`` on
    batches (whose Python loop dominated the build). Equality with bm25s's own index is
    what the tests check.
    """
    import re

    _, Stemmer = _import()
    from bm25s.tokenization import _infer_stopwords

    stop = frozenset(_infer_stopwords(settings.stopwords))
    stem = Stemmer.Stemmer(settings.stemmer).stemWord if settings.stemmer != "none" else None
    split = re.compile(r"(?u)\b\w\w+\b").findall
    words = _WordIds(stop, stem)
    lookup = words.__getitem__

    def ids(text: str) -> np.ndarray:
        found = split(text.lower())
        arr = np.fromiter(map(lookup, found), dtype=np.int32, count=len(found))
        return arr[arr >= 0]

    return ids, words


def _count_job(job: _Job) -> dict[str, Any]:
    """Step 1: tokenize one shard; write token ids and lengths; return its statistics."""
    root = Path(job.root)
    ids, words = _shard_tokenizer(job.settings)
    flat: list[np.ndarray] = []
    lengths = np.zeros(job.shard.size, dtype=np.int64)
    df = np.zeros(0, dtype=np.int64)
    batch: list[np.ndarray] = []
    row = 0

    def flush() -> None:
        # document frequencies of the batch: distinct (row, term) pairs, counted by term
        nonlocal df
        arr = np.concatenate(batch)
        rows = np.repeat(np.arange(len(batch), dtype=np.int64),
                         [b.shape[0] for b in batch])
        pairs = distinct((rows << 32) | arr.astype(np.int64))
        counts = np.bincount(pairs & 0xFFFFFFFF, minlength=len(words.vocab))
        if df.shape[0] < counts.shape[0]:
            df = np.concatenate([df, np.zeros(counts.shape[0] - df.shape[0], np.int64)])
        df[:counts.shape[0]] += counts
        flat.append(arr)
        batch.clear()

    for p in iter_shard(root, job.shard):
        arr = ids(_doc_text(p.title, p.text))
        batch.append(arr)
        lengths[row] = arr.shape[0]
        row += 1
        if len(batch) == BATCH:
            flush()
    if batch:
        flush()
    tokens = np.concatenate(flat) if flat else np.zeros(0, np.int32)
    paths = _paths(root, job.shard)
    np.save(paths["tokens"], tokens.astype(np.int32, copy=False))
    np.save(paths["lengths"], lengths)
    inv_vocab = [""] * len(words.vocab)
    for t, i in words.vocab.items():
        inv_vocab[i] = t
    if df.shape[0] < len(inv_vocab):
        df = np.concatenate([df, np.zeros(len(inv_vocab) - df.shape[0], np.int64)])
    # the shard's vocabulary goes to disk, not back to the driver: with 160 shards of the
    # full corpus, all their vocabularies at once would not fit the driver's memory
    with open(paths["vocab"], "w", encoding="utf-8") as f:
        json.dump(inv_vocab, f, ensure_ascii=False)
    np.save(paths["df"], df)
    return {"n": row, "total_len": int(lengths.sum()), "peak_rss_mb": peak_rss_mb()}


def _score_job(job: _Job) -> dict[str, Any]:
    """Step 3: the shard's float32 (passage, term) scores with the global statistics."""
    _bm25s, _ = _import()
    from bm25s.scoring import _select_tfc_scorer

    root = Path(job.root)
    paths = _paths(root, job.shard)
    idf = np.load(root / SUBDIR / "idf.npy", mmap_mode="r")
    tokens = np.load(paths["tokens"])
    lengths = np.load(paths["lengths"])
    gids = np.load(paths["map"])[tokens].astype(np.int64)
    rows = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    # one entry per (row, term) with its count, sorted by term then row (CSC order)
    keys, tf = np.unique(gids * job.shard.size + rows, return_counts=True)
    terms_of, rows_of = np.divmod(keys, job.shard.size) if job.shard.size else (keys, keys)
    tfc = _select_tfc_scorer(job.settings.method)(
        tf_array=tf.astype(np.float32), l_d=lengths[rows_of], l_avg=np.float64(job.avg_len),
        k1=job.settings.k1, b=job.settings.b, delta=None)
    # bm25s: scores_doc = idf_array[voc] * tfc, stored in a float32 array
    data = (idf[terms_of] * tfc).astype(np.float32)
    terms, starts = np.unique(terms_of, return_index=True)
    indptr = np.append(starts, terms_of.shape[0]).astype(np.int64)
    np.save(paths["data"], data)
    np.save(paths["indices"], rows_of.astype(np.int32))
    np.save(paths["terms"], terms.astype(np.int32))
    np.save(paths["indptr"], indptr)
    for k in ("tokens", "lengths", "map"):
        paths[k].unlink()
    return {"postings": int(data.shape[0]), "peak_rss_mb": peak_rss_mb()}


def build_bm25(root: Path, shards: tuple[Shard, ...], settings: BM25Settings,
               cluster: Cluster) -> dict[str, Any]:
    """Build the BM25 shards of the store under ``root``; returns facts for params.json."""
    _bm25s, _ = _import()
    from bm25s.scoring import _build_idf_array, _select_idf_scorer

    if settings.method not in BM25_METHODS:
        raise ValueError(f"method must be one of {BM25_METHODS}")
    (root / SUBDIR).mkdir(parents=True, exist_ok=True)
    counts = cluster.map(_count_job, [_Job(str(root), s, settings) for s in shards],
                         desc="BM25 tokenize")
    # global vocabulary (sorted: term ids do not depend on the sharding), one shard's
    # vocabulary in memory at a time besides the union
    from nqkit.report import progress

    terms: set[str] = set()
    for s in progress(shards, desc="BM25 vocabulary", unit="shard"):
        terms.update(_load_json(_paths(root, s)["vocab"]))
    vocab = sorted(terms)
    del terms
    index_of = {t: i for i, t in enumerate(vocab)}
    df = np.zeros(len(vocab), dtype=np.int64)
    for s in progress(shards, desc="BM25 document frequencies", unit="shard"):
        paths = _paths(root, s)
        m = np.asarray([index_of[t] for t in _load_json(paths["vocab"])], dtype=np.int32)
        df[m] += np.load(paths["df"])  # a shard's terms are distinct
        np.save(paths["map"], m)
        paths["vocab"].unlink()
        paths["df"].unlink()
    n = sum(c["n"] for c in counts)
    total = sum(c["total_len"] for c in counts)
    avg_len = np.float64(total) / n
    idf = _build_idf_array({i: int(d) for i, d in enumerate(df)}, n_docs=n,
                           compute_idf_fn=_select_idf_scorer(settings.method),
                           dtype="float32")
    np.save(root / SUBDIR / "idf.npy", idf)
    with open(root / SUBDIR / "vocab.json", "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    jobs = [_Job(str(root), s, settings, float(avg_len)) for s in shards]
    scored = cluster.map(_score_job, jobs, desc="BM25 score")
    return {"vocabulary": len(vocab), "avg_length": float(avg_len), "total_length": total,
            "postings": sum(s["postings"] for s in scored),
            "peak_rss_mb": max([c["peak_rss_mb"] for c in counts]
                               + [s["peak_rss_mb"] for s in scored])}


def _load_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def tokenize_queries(root: Path, settings: BM25Settings, questions: list[str]
                     ) -> list[np.ndarray]:
    """Each question's global term ids in query order (repeats kept, unknown terms dropped)."""
    index_of = {t: i for i, t in enumerate(_load_json(root / SUBDIR / "vocab.json"))}
    tokenize = _tokenizer(settings)
    out: list[np.ndarray] = []
    for lo in range(0, len(questions), BATCH):
        ids, inv = tokenize(questions[lo:lo + BATCH])
        for doc in ids:
            out.append(np.asarray([index_of[inv[i]] for i in doc if inv[i] in index_of],
                                  dtype=np.int64))
    return out


@dataclass(frozen=True, slots=True)
class _QueryJob:
    root: str
    shard: Shard
    terms: np.ndarray  # every question's term ids, concatenated
    offsets: np.ndarray  # question i's terms are terms[offsets[i]:offsets[i + 1]]
    k: int


def shard_scores(root: Path, shard: Shard, query: np.ndarray,
                 arrays: dict[str, np.ndarray] | None = None,
                 out: np.ndarray | None = None) -> np.ndarray:
    """The float32 scores of every passage of ``shard`` for one query's term ids.

    ``out`` (``shard.size`` float32) is reused when given: a fresh half-megabyte array per
    query is a fresh memory mapping under Dask's worker malloc settings.
    """
    a = arrays or _load_shard(root, shard)
    if out is None:
        scores = np.zeros(shard.size, dtype=np.float32)
    else:
        scores = out
        scores.fill(0)
    terms = a["terms"]
    for t in query.tolist():
        pos = int(np.searchsorted(terms, t))
        if pos < terms.shape[0] and terms[pos] == t:
            s, e = int(a["indptr"][pos]), int(a["indptr"][pos + 1])
            # each row occurs once per term: a fancy-index add is bm25s's np.add.at here
            scores[a["indices"][s:e]] += a["data"][s:e]
    return scores


def _load_shard(root: Path, shard: Shard) -> dict[str, np.ndarray]:
    paths = _paths(root, shard)
    # plain views of the memory maps: slicing a np.memmap costs a subclass object each time
    return {k: np.asarray(np.load(paths[k], mmap_mode="r"))
            for k in ("data", "indices", "terms", "indptr")}


def _query_job(job: _QueryJob) -> dict[str, Any]:
    root = Path(job.root)
    arrays = _load_shard(root, job.shard)
    hits: list[Any] = []
    buf = np.zeros(job.shard.size, dtype=np.float32)
    for lo, hi in itertools.pairwise(job.offsets.tolist()):
        s = shard_scores(root, job.shard, job.terms[lo:hi], arrays, buf)
        hits.append(topk_of_row(s, job.k, offset=job.shard.start, positive_only=True))
    return {"hits": pack_hits(hits), "peak_rss_mb": peak_rss_mb()}


def search_bm25(root: Path, shards: tuple[Shard, ...], settings: BM25Settings,
                questions: list[str], k: int, cluster: Cluster) -> tuple[list[Hits], float]:
    """Top-k hits of every question over all shards; also the largest job peak RSS (MB)."""
    queries = tokenize_queries(root, settings, questions)
    offsets = np.concatenate([np.zeros(1, np.int64),
                              np.cumsum([q.shape[0] for q in queries], dtype=np.int64)])
    terms = np.concatenate(queries) if queries else np.zeros(0, np.int64)
    results = cluster.map(_query_job, [_QueryJob(str(root), s, terms, offsets, k)
                                       for s in shards], desc="BM25 search")
    return merge_shard_results(results, len(questions), k)
