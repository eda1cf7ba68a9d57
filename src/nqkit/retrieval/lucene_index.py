"""The ``lucene-exact`` BM25 flavour on the sharded path: Pyserini's BM25, shard by shard.

``nqkit index build --retriever bm25 --bm25-method lucene-exact`` and ``nqkit retrieve``
over such an index give, per question, the top-k list and the scores of Pyserini 1.6.0's
``LuceneSearcher`` over an index of the same passages built as Pyserini builds its
``wikipedia-dpr`` index (``contents = title + "\\n" + text``, Anserini's
``DefaultEnglishAnalyzer``, ``BM25Similarity(k1, b)``). The formulas are
:mod:`nqkit.retrieval.lucene_bm25`'s, the analyzer :func:`nqkit.text.lucene.analyze`;
this module is their job plumbing, in the three steps of
:mod:`nqkit.retrieval.bm25_index`, each a list of shard jobs run by :mod:`nqkit.cluster`:

1. *count* (one job per shard): analyze ``title + "\\n" + text`` of every passage, each
   distinct chunk between ASCII whitespace once per process, whatever shard holds it
   (:func:`nqkit.text.lucene.chunks` says why that gives the terms of the whole text;
   ``_read_chunks`` how a shard's bytes are read a block at a time, ``_block_rows`` how
   a chunk is found by its bytes with numpy), write the shard's postings
   with shard-local term ids (what :func:`~nqkit.retrieval.lucene_bm25.count_docs` gives,
   counted a block of passages at a time) and the
   passage ids (``ids-NNNNN.npy``, a fixed-width unicode array: the tie-break needs them
   at search time);
2. *global statistics* (here): the sorted union of the vocabularies, document frequencies,
   Lucene's ``docCount`` and ``sumTotalTermFreq`` (:func:`~nqkit.retrieval.lucene_bm25.
   global_stats`' rules, without holding the shards' postings in the driver);
3. *score* (one job per shard): every posting's boost-1 clause score with the global idf
   and norm cache (:func:`~nqkit.retrieval.lucene_bm25.score_shard`), stored by global term.

A search analyzes each question with the same analyzer, makes Anserini's bag-of-words
query (each distinct term once, boosted by its count) and lets each shard job add the
clause scores of its passages in double, round them to float32 once, and keep its top k
in Lucene's order: score descending, then the passage id as a string, ascending (not the
corpus order of :mod:`nqkit.retrieval.topk`). The driver merges the shards' lists in the
same order, so any sharding and any cluster give the same lists.

Scores written: Anserini's adjusted scores (:func:`~nqkit.retrieval.lucene_bm25.
anserini_adjust`: rounded to 4 decimals, near-ties pulled apart by 1e-6 steps), which are
what ``LuceneSearcher.search`` / ``batch_search`` return and what Pyserini's run files
carry. The adjustment is applied to the merged list, rank by rank; a score at rank i
depends only on the ranks above it, so it does not depend on the depth k. The ranking is
Lucene's raw float32 ranking (the adjustment never reorders). Signatures say
``scores:anserini``.
"""

from __future__ import annotations

import bisect
import itertools
import json
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.cluster import Cluster, peak_rss_mb
from nqkit.retrieval.lucene_bm25 import (
    F32,
    CountedShard,
    GlobalStats,
    LuceneBM25Settings,
    anserini_adjust_lists,
    avg_field_length,
    clause_scores,
    idf,
    norm_cache,
    query_clauses,
    score_shard,
)
from nqkit.retrieval.passage_store import Shard, read_shard, shard_passage
from nqkit.retrieval.topk import Hits

__all__ = ["ANALYZER", "METHOD", "SCORES", "build_lucene", "contents", "search_lucene"]

METHOD = "lucene-exact"
ANALYZER = "lucene-9.9.1-english"  # Anserini 1.7.1's DefaultEnglishAnalyzer (porter)
SCORES = "anserini"  # the scores written: ScoreTiesAdjusterReranker's
SUBDIR = "bm25"
_COUNTED = ("vocab", "doc_freq", "lengths", "indptr", "rows", "freqs")
_SCORED = ("norms", "terms", "indptr", "rows", "freqs", "data")


def contents(title: str, text: str) -> str:
    """The text Pyserini's DPR indexes analyze: the title, a line break, the text."""
    return f"{title}\n{text}"


def _path(root: Path, kind: str, shard: Shard) -> Path:
    ext = "json" if kind == "vocab" else "npy"
    return root / SUBDIR / f"{kind}-{shard.name}.{ext}"


def _counted_path(root: Path, kind: str, shard: Shard) -> Path:
    return _path(root, "counted-" + kind, shard) if kind != "vocab" else _path(root, kind,
                                                                                 shard)


@dataclass(frozen=True, slots=True)
class _Job:
    root: str
    shard: Shard
    k1: float
    b: float
    doc_count: int = 0  # score jobs: the global statistics
    sum_total_term_freq: int = 0


_MARK = b"\x00"  # stands for each passage's id in a shard's bytes (a chunk without terms)
CHUNK_LIMIT = 1 << 21  # chunks a process keeps (the table starts again when above)
_BLOCK = 8192  # passages whose chunks are split at once
_KEY_BITS = 63  # a shard's (term, row, frequency) sort key is an int64


_WS = np.array([not bytes([c]).split() for c in range(256)])  # what bytes.split() cuts at
_SHORT = 16  # chunks of up to this many bytes are found by their bytes in a _ChunkIndex
_LOW = np.array([(1 << (8 * min(k, 8))) - 1 for k in range(_SHORT + 1)], dtype=np.uint64)
_HIGH = np.array([0] * 9 + [(1 << (8 * (k - 8))) - 1 for k in range(9, _SHORT + 1)],
                 dtype=np.uint64)
_MIX0 = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xC2B2AE3D27D4EB4F)


class _ChunkIndex:
    """The table rows of short chunks, found a block at a time with numpy: open
    addressing keyed by a chunk's bytes themselves, its first 16 bytes as two
    little-endian words zero-padded (exact: a chunk read from a shard's bytes holds no
    NUL byte, so no two chunks share a key; ``k0 == 0`` marks an empty slot)."""

    def __init__(self, bits: int = 16) -> None:
        self.bits = bits
        self.k0 = np.zeros(1 << bits, dtype=np.uint64)
        self.k1 = np.zeros(1 << bits, dtype=np.uint64)
        self.rows = np.zeros(1 << bits, dtype=np.int32)
        self.count = 0

    def _slots(self, k0: np.ndarray, k1: np.ndarray) -> np.ndarray:
        h = k0 * _MIX0
        h ^= k1 * _MIX1
        h >>= np.uint64(64 - self.bits)
        return h.astype(np.intp)

    def find(self, k0: np.ndarray, k1: np.ndarray) -> np.ndarray:
        """Each key's row, -1 where the key is not held."""
        out = np.full(k0.shape[0], -1, dtype=np.int32)
        mask = (1 << self.bits) - 1
        todo = np.arange(k0.shape[0])
        slots = self._slots(k0, k1)
        while todo.shape[0]:  # linear probing: the keys not yet found nor missed move on
            held = self.k0[slots]
            hit = (held == k0[todo]) & (self.k1[slots] == k1[todo])
            out[todo[hit]] = self.rows[slots[hit]]
            on = ~hit & (held != 0)
            todo = todo[on]
            slots = (slots[on] + 1) & mask
        return out

    def insert(self, k0: np.ndarray, k1: np.ndarray, rows: np.ndarray) -> None:
        """Add keys not held, distinct; the table grows to stay at most half full."""
        need = self.count + k0.shape[0]
        if need * 2 > 1 << self.bits:
            used = self.k0 != 0
            held = (self.k0[used], self.k1[used], self.rows[used])
            bits = self.bits
            while need * 2 > 1 << bits:
                bits += 1
            self.__init__(bits)  # type: ignore[misc]
            self._place(*held)
        self._place(k0, k1, rows)

    def _place(self, k0: np.ndarray, k1: np.ndarray, rows: np.ndarray) -> None:
        mask = (1 << self.bits) - 1
        todo = np.arange(k0.shape[0])
        slots = self._slots(k0, k1)
        while todo.shape[0]:  # each round, the first key to reach a free slot takes it
            free = self.k0[slots] == 0
            _, first = np.unique(slots[free], return_index=True)
            won = np.flatnonzero(free)[first]
            at, who = slots[won], todo[won]
            self.k0[at], self.k1[at], self.rows[at] = k0[who], k1[who], rows[who]
            on = np.ones(todo.shape[0], dtype=bool)
            on[won] = False
            todo = todo[on]
            slots = (slots[on] + 1) & mask
        self.count += k0.shape[0]


class _ChunkTable(dict[bytes, int]):
    """Chunk (UTF-8 bytes, :func:`nqkit.text.lucene.chunks`) -> its row in a table of
    term ids: each distinct chunk is analyzed once per process (its terms do not depend
    on the text around it), whatever shards the process counts; row r's ids are
    ``ids[starts[r]:starts[r + 1]]``, indexes into ``names``."""

    def __init__(self) -> None:
        super().__init__()
        from nqkit.text.lucene import analyze, quotes_neutral

        self.analyze = analyze
        self.quotes_neutral = quotes_neutral
        self.term_ids: dict[str, int] = {}  # term -> id, in first-seen order
        self.names: list[str] = []  # id -> term
        self.starts = array("q", [0])
        self.ids = array("i")
        self.index = _ChunkIndex()  # the rows of the short chunks cached here
        self.raw = False  # the chunks read are a shard's bytes (quoted fields as written)
        self.unsafe = False  # ... and one of them may not give the terms of its text
        self[_MARK] = self._add([])  # row 0, also the chunk's own analysis (no terms)

    def _add(self, terms: list[str]) -> int:
        ids, names = self.term_ids, self.names
        for t in terms:
            if t not in ids:
                ids[t] = len(names)
                names.append(t)
        self.ids.extend([ids[t] for t in terms])
        self.starts.append(len(self.ids))
        return len(self.starts) - 2

    def __missing__(self, chunk: bytes) -> int:
        text = chunk.decode("utf-8")
        row = self._add(self.analyze(text))
        if b'"' in chunk and not self.quotes_neutral(text):
            # a quoted field's doubled quotes can change a Hebrew text's terms: such a
            # chunk read from a shard's bytes is not its text, so it is never cached, and
            # its shard is read again the careful way
            self.unsafe = self.unsafe or self.raw
            return row
        self[chunk] = row
        return row


_TABLES: dict[str, _ChunkTable] = {}  # this process's table, kept between shard jobs


def _chunk_table() -> _ChunkTable:
    table = _TABLES.get("chunks")
    # rows, not dictionary entries: a chunk that is never cached still has a row
    if table is None or len(table.starts) - 1 > CHUNK_LIMIT:
        table = _TABLES["chunks"] = _ChunkTable()
    return table


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Every index of the ranges ``[lo[i], hi[i])``, concatenated."""
    sizes = hi - lo
    return np.repeat(lo - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))


class _Postings:
    """A shard's postings, gathered a block of passages at a time: per block, the
    (term, row, frequency) of each distinct term of each row, sorted by term then row
    (terms as ids of the chunk table), and every row's length. Arrays stay the size of
    a block, so the memory they take is reused from block to block instead of being
    mapped afresh (a page fault per 4 KB) for arrays the size of the shard."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.lengths = np.zeros(n, dtype=np.int64)
        self.terms: list[np.ndarray] = []
        self.rows: list[np.ndarray] = []
        self.freqs: list[np.ndarray] = []

    def add(self, table: _ChunkTable, chunk_rows: np.ndarray, docs: np.ndarray) -> None:
        """Count the terms of chunks ``chunk_rows`` (table rows, int32) of the shard rows
        ``docs`` (one per chunk, ascending)."""
        if not chunk_rows.shape[0]:
            return
        starts = np.frombuffer(table.starts, dtype=np.int64)
        first = starts[chunk_rows]
        sizes = starts[chunk_rows + 1] - first
        del starts  # a view: the table cannot grow while it is alive
        term_ids = np.frombuffer(table.ids, dtype=np.int32)
        if int(sizes.max()) <= 1:  # nearly always: a chunk holds one term or none
            one = sizes == 1
            flat = term_ids[first[one]]
            term_docs = docs[one]
        else:  # every term of every chunk: its chunk's first id plus its offset in it
            ends = np.cumsum(sizes)
            at = np.repeat(first - (ends - sizes), sizes) + np.arange(int(ends[-1]))
            flat = term_ids[at]
            term_docs = np.repeat(docs, sizes)
        del term_ids
        lo = int(docs[0])
        span = int(docs[-1]) - lo + 1
        local = term_docs - lo
        self.lengths[lo:lo + span] += np.bincount(local, minlength=span)
        key = flat.astype(np.int64) * span + local
        key.sort()
        new = np.empty(key.shape[0], dtype=bool)
        new[:1] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        at = np.flatnonzero(new)
        freqs = np.diff(at, append=key.shape[0])
        terms, rows = np.divmod(key[at], span)
        self.terms.append(terms.astype(np.int32))
        self.rows.append((rows + lo).astype(np.int32))
        self.freqs.append(freqs.astype(np.int32))

    def counted(self, names: list[str]) -> CountedShard:
        """The shard's postings by term, terms sorted (``names``: the table's terms);
        what :func:`~nqkit.retrieval.lucene_bm25.count_docs` gives for the same tokens."""
        n = self.n
        terms = _cat(self.terms, np.zeros(0, np.int32))
        rows = _cat(self.rows, np.zeros(0, np.int32))
        freqs = _cat(self.freqs, np.zeros(0, np.int32))
        self.terms, self.rows, self.freqs = [], [], []
        present = np.flatnonzero(np.bincount(terms, minlength=len(names)))
        words = [names[i] for i in present.tolist()]
        order = sorted(range(len(words)), key=words.__getitem__)
        vocab = [words[i] for i in order]
        rank = np.zeros(len(names), dtype=np.int64)
        rank[present[order]] = np.arange(len(order), dtype=np.int64)
        key = rank[terms] * max(n, 1) + rows  # one per posting: (term, row) in sort order
        del terms
        bits = int(freqs.max()).bit_length() if freqs.shape[0] else 0
        if (len(vocab) * max(n, 1)) << bits < 1 << _KEY_BITS:  # the frequency rides along
            key <<= bits
            key |= freqs
            key.sort()
            freqs = (key & ((1 << bits) - 1)).astype(np.int32)
            key >>= bits
        else:
            order_ = np.argsort(key, kind="stable")
            key, freqs = key[order_], freqs[order_]
        term_of, row_of = np.divmod(key, max(n, 1))
        doc_freq = np.bincount(term_of, minlength=len(vocab)).astype(np.int64)
        indptr = np.concatenate([np.zeros(1, np.int64), np.cumsum(doc_freq)])
        return CountedShard(vocab, doc_freq, self.lengths, indptr, row_of.astype(np.int32),
                            freqs)


def _block_rows(b: np.ndarray, blob: bytes, lo: int, hi: int, table: _ChunkTable
                ) -> np.ndarray:
    """The table rows of the chunks of ``b[lo:hi]`` (the pieces ``bytes.split`` cuts),
    in order; ``b``: uint8 with 16 zero bytes after the text, ``blob`` bytes holding
    every chunk but the marks at the same place (the shard's own bytes: ``b`` differs
    from them only where an id or a careful record was blanked, where no other chunk
    lies).

    A chunk of up to 16 bytes is found in ``table.index`` by its bytes, with numpy; the
    distinct ones not there go through ``table`` once (analyzed if new to it) and are
    added; longer chunks, and those ``table`` never caches, go through ``table`` one
    by one."""
    word = ~_WS[b[lo:hi]]
    edge = np.diff(word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    s = np.flatnonzero(edge == 1) + lo
    e = np.flatnonzero(edge == -1) + lo
    del word, edge
    sizes = e - s
    head = b[s]
    rows = np.full(s.shape[0], -1, dtype=np.int32)
    # _MARK: the NUL byte standing for an id, alone (no other NUL is read: a chunk that
    # starts with one is not a mark, and the caller's count of marks refuses it)
    rows[(head == 0) & (sizes == 1)] = 0
    short = np.flatnonzero((sizes <= _SHORT) & (head != 0))
    words = np.ndarray((b.shape[0] - 7,), dtype="<u8", buffer=b.data, strides=(1,))
    cut = np.minimum(sizes[short], _SHORT)
    k0 = words[s[short]] & _LOW[cut]
    k1 = words[s[short] + 8] & _HIGH[cut]
    found = table.index.find(k0, k1)
    new = np.flatnonzero(found < 0)
    if new.shape[0]:
        a0, a1 = k0[new], k1[new]
        order = np.lexsort((a1, a0))
        s0, s1 = a0[order], a1[order]
        first = np.ones(order.shape[0], dtype=bool)
        first[1:] = (s0[1:] != s0[:-1]) | (s1[1:] != s1[:-1])
        one = new[order[first]]  # each distinct key once
        at = short[one]
        chunks = [blob[x:y] for x, y in zip(s[at].tolist(), e[at].tolist(), strict=True)]
        got = np.fromiter(map(table.__getitem__, chunks), dtype=np.int32, count=len(chunks))
        kept = np.fromiter(map(table.__contains__, chunks), dtype=bool, count=len(chunks))
        table.index.insert(k0[one[kept]], k1[one[kept]], got[kept])
        found[new] = table.index.find(a0, a1)
    rows[short] = found
    rest = np.flatnonzero(rows < 0)
    if rest.shape[0]:
        chunks = [blob[x:y] for x, y in zip(s[rest].tolist(), e[rest].tolist(), strict=True)]
        rows[rest] = np.fromiter(map(table.__getitem__, chunks), dtype=np.int32,
                                 count=len(chunks))
    return rows


def _read_chunks(data: bytes, offsets: np.ndarray, careful: np.ndarray, table: _ChunkTable,
                 postings: _Postings) -> list[str] | None:
    """Count the terms of the shard's passages not marked ``careful`` into ``postings``,
    reading the shard's bytes a block at a time; return those passages' ids, or None
    when a chunk may not give its text's terms (``table.unsafe``: then nothing counted
    here may be kept, and the shard is to be read the careful way).

    A record is ``id<TAB>text<TAB>title<LF>`` (:mod:`nqkit.retrieval.passage_store`): the
    id (not quoted: careful passages are those whose id is) is replaced by a chunk of its
    own, ``_MARK``, and ``bytes.split`` cuts the rest at ASCII whitespace (tabs and line
    breaks, also inside a quoted field, are whitespace to the analyzer). A quoted field's
    chunks keep their quotes, doubled and at its ends: the terms of such a chunk are its
    text's whenever :func:`nqkit.text.lucene.quotes_neutral` says so, else ``table``
    says ``unsafe``."""
    fast = np.flatnonzero(~careful)
    starts = offsets[:-1][fast]
    u = np.frombuffer(data, dtype=np.uint8)
    tabs = np.flatnonzero(u == 0x09)
    id_ends = tabs[np.searchsorted(tabs, starts)]  # an unquoted id ends at the first tab
    del u, tabs
    ids = [data[a:b].decode("utf-8") for a, b in zip(starts.tolist(), id_ends.tolist(),
                                                      strict=True)]
    b = np.zeros(len(data) + _SHORT, dtype=np.uint8)  # the keys read 16 bytes at a time
    b[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    b[_ranges(starts, id_ends)] = 0x20
    b[starts] = _MARK[0]
    slow = np.flatnonzero(careful)
    if slow.shape[0]:
        b[_ranges(offsets[:-1][slow], offsets[1:][slow])] = 0x20
    seen = 0  # fast passages read so far
    table.raw, table.unsafe = True, False
    try:  # a block of passages at a time
        cuts = [*offsets[::_BLOCK].tolist(), int(offsets[-1])]
        for lo, hi in itertools.pairwise(dict.fromkeys(cuts)):
            rows = _block_rows(b, data, lo, hi, table)
            if table.unsafe:
                return None
            marks = rows == 0
            at = np.cumsum(marks) - 1 + seen  # each chunk's passage among the fast ones
            seen += int(np.count_nonzero(marks))
            if rows.shape[0] and (not marks[0] or seen > fast.shape[0]):
                raise RuntimeError("a passage id was not read as one chunk")  # never: no NUL
            postings.add(table, rows, fast[at])
    finally:
        table.raw = False
    if seen != fast.shape[0]:
        raise RuntimeError("a passage id was not read as one chunk")
    return ids


def _count_job(job: _Job) -> dict[str, Any]:
    """Step 1: analyze one shard; write its local postings and ids; return its counts."""
    root = Path(job.root)
    table = _chunk_table()
    data, offsets = read_shard(root, job.shard)
    n = offsets.shape[0] - 1
    # careful: read one by one (parsed): a quoted id, or all when a NUL byte would be
    # taken for a _MARK
    careful = np.full(n, _MARK in data, dtype=bool)
    if n and not careful.all():
        careful |= np.frombuffer(data, dtype=np.uint8)[offsets[:-1]] == 0x22
    ids: list[str] = [""] * n
    postings = _Postings(n)
    if not careful.all():
        fast_ids = _read_chunks(data, offsets, careful, table, postings)
        if fast_ids is None:  # a quoted Hebrew text: the whole shard the careful way
            careful[:] = True
            postings = _Postings(n)
        else:
            for j, pid in zip(np.flatnonzero(~careful).tolist(), fast_ids, strict=True):
                ids[j] = pid
    get = table.__getitem__
    for part in np.array_split(np.flatnonzero(careful), max(1, -(-int(careful.sum())
                                                                 // _BLOCK))):
        rows_c = array("i")
        docs_c = array("q")
        for j in part.tolist():
            p = shard_passage(data, offsets, j, root, job.shard)
            ids[j] = p.id
            pieces = contents(p.title, p.text).encode("utf-8").split()
            rows_c.extend(map(get, pieces))
            docs_c.extend([j] * len(pieces))
        postings.add(table, np.frombuffer(rows_c, dtype=np.int32),
                     np.frombuffer(docs_c, dtype=np.int64))
    del data, get
    counted = postings.counted(table.names)
    with open(_counted_path(root, "vocab", job.shard), "w", encoding="utf-8") as f:
        f.write(json.dumps(counted.vocab, ensure_ascii=False))
    for kind in _COUNTED[1:]:
        np.save(_counted_path(root, kind, job.shard), getattr(counted, kind))
    np.save(_path(root, "ids", job.shard), np.asarray(ids, dtype=str))
    return {"n": n, "docs_with_tokens": int((counted.lengths > 0).sum()),
            "total_len": int(counted.lengths.sum()), "peak_rss_mb": peak_rss_mb()}


def _load_counted(root: Path, shard: Shard) -> CountedShard:
    with open(_counted_path(root, "vocab", shard), encoding="utf-8") as f:
        vocab = json.load(f)
    arrays = {k: np.load(_counted_path(root, k, shard)) for k in _COUNTED[1:]}
    return CountedShard(vocab, **arrays)


def _stats(root: Path, job: _Job) -> GlobalStats:
    """The global statistics a score or query job needs (no vocabulary: term ids only)."""
    df = np.load(root / SUBDIR / "doc_freq.npy", mmap_mode="r")
    n, total = job.doc_count, job.sum_total_term_freq
    avgdl = avg_field_length(total, n) if n else F32(1)
    return GlobalStats([], np.asarray(df), n, total, idf(df, n), avgdl,
                       norm_cache(job.k1, job.b, avgdl))


def _score_job(job: _Job) -> dict[str, Any]:
    """Step 3: the shard's postings under global term ids with their clause scores."""
    root = Path(job.root)
    counted = _load_counted(root, job.shard)
    term_map = np.load(_counted_path(root, "map", job.shard))
    scored = score_shard(counted, term_map, _stats(root, job))
    for kind in _SCORED:
        np.save(_path(root, kind, job.shard), getattr(scored, kind))
    for kind in (*_COUNTED, "map"):
        _counted_path(root, kind, job.shard).unlink()
    return {"postings": int(scored.data.shape[0]), "peak_rss_mb": peak_rss_mb()}


def build_lucene(root: Path, shards: tuple[Shard, ...], k1: float, b: float,
                 cluster: Cluster) -> dict[str, Any]:
    """Build the lucene-exact shards of the store under ``root``; facts for params.json."""
    (root / SUBDIR).mkdir(parents=True, exist_ok=True)
    counts = cluster.map(_count_job, [_Job(str(root), s, k1, b) for s in shards],
                         desc="BM25 (Lucene) analyze")
    import orjson

    from nqkit.report import progress

    terms: set[str] = set()
    for s in progress(shards, desc="BM25 (Lucene) vocabulary", unit="shard"):
        terms.update(orjson.loads(_counted_path(root, "vocab", s).read_bytes()))
    vocab = sorted(terms)
    del terms
    index_of = {t: i for i, t in enumerate(vocab)}
    df = np.zeros(len(vocab), dtype=np.int64)
    for s in progress(shards, desc="BM25 (Lucene) document frequencies", unit="shard"):
        local = orjson.loads(_counted_path(root, "vocab", s).read_bytes())
        m = np.fromiter((index_of[t] for t in local), dtype=np.int64, count=len(local))
        df[m] += np.load(_counted_path(root, "doc_freq", s))  # a shard's terms are distinct
        np.save(_counted_path(root, "map", s), m)
    np.save(root / SUBDIR / "doc_freq.npy", df)
    with open(root / SUBDIR / "vocab.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(vocab, ensure_ascii=False))  # json.dump's bytes, in one call
    _TABLES.clear()  # this process's chunks (one-process builds): not needed any more
    doc_count = sum(c["docs_with_tokens"] for c in counts)
    total = sum(c["total_len"] for c in counts)
    jobs = [_Job(str(root), s, k1, b, doc_count, total) for s in shards]
    scored = cluster.map(_score_job, jobs, desc="BM25 (Lucene) score")
    return {"vocabulary": len(vocab), "doc_count": doc_count, "sum_total_term_freq": total,
            "avg_length": float(avg_field_length(total, doc_count)) if doc_count else 0.0,
            "postings": sum(s["postings"] for s in scored), "analyzer": ANALYZER,
            "peak_rss_mb": max([c["peak_rss_mb"] for c in counts]
                               + [s["peak_rss_mb"] for s in scored])}


@dataclass(frozen=True, slots=True)
class _QueryJob:
    job: _Job
    terms: np.ndarray  # every question's global term ids, concatenated
    boosts: np.ndarray  # each term's count in its question
    offsets: np.ndarray  # question i's clauses are [offsets[i], offsets[i + 1])
    k: int


def _top(rows: np.ndarray, vals: np.ndarray, ids: np.ndarray, k: int
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The k best in Lucene's order: score descending, then the id string ascending
    (``ids``: the shard's; only the candidates' are compared). ``vals``: float32 scores,
    or the double sums they round from."""
    vals = vals.astype(F32)
    if rows.shape[0] > k:
        kth = np.partition(vals, rows.shape[0] - k)[rows.shape[0] - k]
        keep = vals >= kth  # every document tied with the k-th competes on its id
        rows, vals = rows[keep], vals[keep]
    cand_ids = ids[rows]
    order = np.lexsort((cand_ids, -vals.astype(np.float64)))[:k]
    return rows[order], vals[order], cand_ids[order]


def _query_job(q: _QueryJob) -> dict[str, Any]:
    root, shard = Path(q.job.root), q.job.shard
    stats = _stats(root, q.job)
    a = {k: np.asarray(np.load(_path(root, k, shard), mmap_mode="r"))
         for k in ("norms", "terms", "indptr", "rows", "freqs", "data")}
    ids = np.load(_path(root, "ids", shard))
    out_rows: list[np.ndarray] = []
    out_vals: list[np.ndarray] = []
    out_ids: list[np.ndarray] = []
    sizes: list[int] = []
    # every clause's position in the shard's term list at once (-1: not in the shard)
    terms = a["terms"].astype(np.int64)
    pos = np.searchsorted(terms, q.terms)
    if terms.shape[0]:
        pos[terms[np.minimum(pos, terms.shape[0] - 1)] != q.terms] = -1  # also pos == len
    else:  # a shard of passages without one indexed term
        pos.fill(-1)
    starts, ends = a["indptr"][:-1].tolist(), a["indptr"][1:].tolist()
    all_rows, all_data, all_freqs, norms = a["rows"], a["data"], a["freqs"], a["norms"]
    size = shard.size
    empty = (np.zeros(0, np.int64), np.zeros(0, F32), ids[:0])
    for lo, hi in itertools.pairwise(q.offsets.tolist()):
        row_parts: list[np.ndarray] = []
        val_parts: list[np.ndarray] = []
        for g, p, boost in zip(q.terms[lo:hi].tolist(), pos[lo:hi].tolist(),
                               q.boosts[lo:hi].tolist(), strict=True):
            if p < 0:
                continue
            s, e = starts[p], ends[p]
            rows = all_rows[s:e]
            row_parts.append(rows)
            if boost == 1:
                val_parts.append(all_data[s:e])
            else:
                weight = F32(F32(boost) * stats.idf[g])
                val_parts.append(clause_scores(weight, all_freqs[s:e],
                                               stats.cache[norms[rows]]))
        if not row_parts:
            r, v, i = empty
        else:
            # a row occurs once per term; the clause scores of a row are added in double
            # (as Lucene's scorers add them), by bincount's weights, in clause order
            # (bincount is fastest given intp rows and double weights)
            rows = np.concatenate(row_parts, dtype=np.intp, casting="safe")
            vals = np.concatenate(val_parts, dtype=np.float64, casting="safe")
            if rows.shape[0] * 64 < size:  # few postings: no pass over the shard
                hit, at = np.unique(rows, return_inverse=True)
                sums = np.bincount(at, weights=vals)
            else:
                # many: one pass. A match scores above 0 (LuceneBM25.matches says why),
                # so the matches are the positive rows (nonzero of a bool array is many
                # times faster than of a float one)
                sums = np.bincount(rows, weights=vals, minlength=size)
                hit = np.flatnonzero(sums > 0)
                sums = sums[hit]
            r, v, i = _top(hit.astype(np.int64), sums, ids, q.k)
        out_rows.append(r + shard.start)
        out_vals.append(v)
        out_ids.append(i)
        sizes.append(r.shape[0])
    offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes, dtype=np.int64)])
    return {"rows": _cat(out_rows, np.zeros(0, np.int64)),
            "scores": _cat(out_vals, np.zeros(0, F32)), "ids": _cat(out_ids, ids[:0]),
            "offsets": offsets, "peak_rss_mb": peak_rss_mb()}


def _cat(parts: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
    return np.concatenate(parts) if parts else empty


def query_terms(root: Path, questions: list[str]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every question's bag-of-words clauses as global term ids and boosts (terms not in
    the index dropped: they match nothing), concatenated, with the offsets."""
    import orjson

    from nqkit.text.lucene import analyze

    vocab = orjson.loads((root / SUBDIR / "vocab.json").read_bytes())  # sorted
    terms: list[int] = []
    boosts: list[int] = []
    offsets = [0]
    for q in questions:
        for term, boost in query_clauses(analyze(q)):
            g = bisect.bisect_left(vocab, term)  # no dict of a million terms to build
            if g < len(vocab) and vocab[g] == term:
                terms.append(g)
                boosts.append(boost)
        offsets.append(len(terms))
    return (np.asarray(terms, dtype=np.int64), np.asarray(boosts, dtype=np.int64),
            np.asarray(offsets, dtype=np.int64))


def search_lucene(root: Path, shards: tuple[Shard, ...], settings: LuceneBM25Settings,
                  facts: dict[str, Any], questions: list[str], k: int, cluster: Cluster
                  ) -> tuple[list[Hits], float]:
    """Top-k hits of every question, Anserini's adjusted scores; also the peak RSS (MB).

    Questions must be analyzed as the passages were: an index whose recorded analyzer is
    not this one is refused (:class:`~nqkit.errors.InputError`).
    """
    if facts.get("analyzer") != ANALYZER:
        from nqkit.errors import InputError

        raise InputError(f"--index {root}", f"the index was analyzed with "
                         f"{facts.get('analyzer')!r}, this nqkit analyzes with {ANALYZER!r}",
                         "rebuild it with `nqkit index build --bm25-method lucene-exact`")
    terms, boosts, offsets = query_terms(root, questions)
    base = _Job(str(root), shards[0], settings.k1, settings.b, int(facts["doc_count"]),
                int(facts["sum_total_term_freq"]))
    jobs = [_QueryJob(_Job(base.root, s, base.k1, base.b, base.doc_count,
                           base.sum_total_term_freq), terms, boosts, offsets, k)
            for s in shards]
    results = cluster.map(_query_job, jobs, desc="BM25 (Lucene) search")
    if len(results) == 1:  # one shard: its lists are the lists
        ranked_rows, ranked_vals = results[0]["rows"], results[0]["scores"]
        offsets = results[0]["offsets"]
    else:
        rows_of: list[np.ndarray] = []
        vals_of: list[np.ndarray] = []
        for i in range(len(questions)):
            parts = [(r["rows"][a:b], r["scores"][a:b], r["ids"][a:b])
                     for r in results
                     for a, b in [(int(r["offsets"][i]), int(r["offsets"][i + 1]))]]
            rows = np.concatenate([p[0] for p in parts])
            vals = np.concatenate([p[1] for p in parts]).astype(F32)
            ids = np.concatenate([p[2] for p in parts])
            order = np.lexsort((ids, -vals.astype(np.float64)))[:k]
            rows_of.append(rows[order])
            vals_of.append(vals[order])
        sizes = [r.shape[0] for r in rows_of]
        offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes, dtype=np.int64)])
        ranked_rows = _cat(rows_of, np.zeros(0, np.int64))
        ranked_vals = _cat(vals_of, np.zeros(0, F32))
    adjusted = anserini_adjust_lists(ranked_vals.astype(F32), offsets)
    ranked_rows = ranked_rows.astype(np.int64)
    bounds = offsets.tolist()
    hits: list[Hits] = [(ranked_rows[a:b], adjusted[a:b])
                        for a, b in itertools.pairwise(bounds)]
    return hits, max(r["peak_rss_mb"] for r in results)
