"""The ``lucene-exact`` BM25 flavour on the sharded path: Pyserini's BM25, shard by shard.

``nqkit index build --retriever bm25 --bm25-method lucene-exact`` and ``nqkit retrieve``
over such an index give, per question, the top-k list and the scores of Pyserini 1.6.0's
``LuceneSearcher`` over an index of the same passages built as Pyserini builds its
``wikipedia-dpr`` index (``contents = title + "\\n" + text``, Anserini's
``DefaultEnglishAnalyzer``, ``BM25Similarity(k1, b)``). The formulas are
:mod:`nqkit.retrieval.lucene_bm25`'s, the analyzer :func:`nqkit.text.lucene.analyze`;
this module is their job plumbing, in the three steps of
:mod:`nqkit.retrieval.bm25_index`, each a list of shard jobs run by :mod:`nqkit.cluster`:

1. *count* (one job per shard; with fewer shards than two per worker, one per part of
   a shard, ``_parts``, merged by the shard's score job into what one job would have
   written): analyze ``title + "\\n" + text`` of every passage, each
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

Multifield (``--bm25-fields text title``, :mod:`nqkit.retrieval.lucene_bm25` says what
Anserini does): every field is the three steps above over what the field holds
(:func:`~nqkit.retrieval.lucene_bm25.field_texts`), in a directory of its own
(``bm25-text/``, ``bm25-title/``; the ids stay in ``bm25/``), read passage by passage (the
block reader of step 1 reads whole records, title and text at once). A search job adds,
per shard, the fields' clause scores by :func:`~nqkit.retrieval.lucene_bm25.
combine_fields`' rule before keeping its top k.

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
import orjson

from nqkit.arrays import distinct
from nqkit.cluster import Cluster, peak_rss_mb, release_memory
from nqkit.retrieval.lucene_bm25 import (
    F32,
    FLAT,
    CountedShard,
    GlobalStats,
    LuceneBM25Settings,
    anserini_adjust_lists,
    avg_field_length,
    clause_scores,
    field_texts,
    field_weights,
    idf,
    norm_cache,
    query_clauses,
    score_shard,
    term_weight,
)
from nqkit.retrieval.passage_store import (
    Shard,
    mapped_shard,
    read_shard_bytes,
    shard_offsets,
    shard_passage,
)
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


def _sub(field: str) -> str:
    """A field's directory: ``bm25`` for the flat field (and every index's ids), else
    ``bm25-<field>``."""
    return SUBDIR if field == FLAT else f"{SUBDIR}-{field}"


def _path(root: Path, kind: str, shard: Shard, field: str = FLAT) -> Path:
    ext = "json" if kind == "vocab" else "npy"
    return root / _sub(field) / f"{kind}-{shard.name}.{ext}"


def _counted_path(root: Path, kind: str, shard: Shard, field: str = FLAT, part: int = -1
                  ) -> Path:
    """A count job's output (``part``: the job's part of the shard, -1 the whole shard)."""
    path = _path(root, "counted-" + kind if kind != "vocab" else kind, shard, field)
    return path if part < 0 else path.with_name(f"{path.stem}.p{part}{path.suffix}")


@dataclass(frozen=True, slots=True)
class _Job:
    root: str
    shard: Shard
    k1: float
    b: float
    doc_count: int = 0  # score jobs: the global statistics
    sum_total_term_freq: int = 0
    field: str = FLAT  # what is analyzed (lucene_bm25.field_texts)
    write_ids: bool = True  # count jobs: also write the shard's ids (one field does)
    # the shard's rows counted by separate jobs (_parts): their first rows, or () for one
    # job over the whole shard; a count job's part of them (-1: the whole shard)
    parts: tuple[int, ...] = ()
    part: int = -1


_MARK = b"\x00"  # stands for each passage's id in a shard's bytes (a chunk without terms)
CHUNK_LIMIT = 1 << 21  # chunks a process keeps (the table starts again when above)
_BLOCK = 8192  # passages whose chunks are split at once
_KEY_BITS = 63  # a shard's (term, row, frequency) sort key is an int64


# 0 for a byte bytes.split() cuts at, 1 for the others (a bytes.translate table)
_IN_CHUNK = bytes(int(bool(bytes([c]).split())) for c in range(256))
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
    NUL byte, so no two chunks share a key; a first word 0 marks an empty slot). A slot's
    two words lie side by side and are read as one 16-byte item (one memory access per
    probe, not two)."""

    def __init__(self, bits: int = 16) -> None:
        self.bits = bits
        self.keys = np.zeros((1 << bits, 2), dtype=np.uint64)
        self.rows = np.zeros(1 << bits, dtype=np.int32)
        self.count = 0

    def _slots(self, k0: np.ndarray, k1: np.ndarray) -> np.ndarray:
        h = k0 * _MIX0
        h ^= k1 * _MIX1
        h >>= np.uint64(64 - self.bits)
        return h.astype(np.intp)

    def _held(self, slots: np.ndarray) -> np.ndarray:
        """The keys in ``slots``, an (n, 2) array."""
        return self.keys.view("V16").reshape(-1)[slots].view(np.uint64).reshape(-1, 2)

    def find(self, k0: np.ndarray, k1: np.ndarray) -> np.ndarray:
        """Each key's row, -1 where the key is not held."""
        out = np.full(k0.shape[0], -1, dtype=np.int32)
        mask = (1 << self.bits) - 1
        todo = np.arange(k0.shape[0])
        slots = self._slots(k0, k1)
        first = True
        while todo.shape[0]:  # linear probing: the keys not yet found nor missed move on
            held = self._held(slots)
            q0, q1 = (k0, k1) if first else (k0[todo], k1[todo])
            hit = (held[:, 0] == q0) & (held[:, 1] == q1)
            out[todo[hit]] = self.rows[slots[hit]]
            on = ~hit & (held[:, 0] != 0)
            todo = todo[on]
            slots = (slots[on] + 1) & mask
            first = False
        return out

    def insert(self, k0: np.ndarray, k1: np.ndarray, rows: np.ndarray) -> None:
        """Add keys not held, distinct; the table grows to stay at most half full."""
        need = self.count + k0.shape[0]
        if need * 2 > 1 << self.bits:
            used = self.keys[:, 0] != 0
            held = (self.keys[used, 0], self.keys[used, 1], self.rows[used])
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
            free = self.keys[slots, 0] == 0
            _, first = np.unique(slots[free], return_index=True)
            won = np.flatnonzero(free)[first]
            at, who = slots[won], todo[won]
            self.keys[at, 0], self.keys[at, 1], self.rows[at] = k0[who], k1[who], rows[who]
            on = np.ones(todo.shape[0], dtype=bool)
            on[won] = False
            todo = todo[on]
            slots = (slots[on] + 1) & mask
        self.count += k0.shape[0]


class _ChunkTable(dict[bytes, int]):
    """Chunk (UTF-8 bytes, :func:`nqkit.text.lucene.chunks`) -> its row in a table of
    term ids: each distinct chunk is analyzed once per process (its terms do not depend
    on the text around it), whatever shards the process counts; row r's ids are
    ``ids[starts[r]:starts[r + 1]]``, indexes into ``names``. The short chunks of the
    block reader are found by their bytes in ``index`` (:func:`_block_rows`) and have no
    dictionary entry; the dictionary holds the others (a chunk may have a row in each:
    the same terms)."""

    def __init__(self) -> None:
        super().__init__()
        from nqkit.text.lucene import MAX_TOKEN_LENGTH, analyze, analyze_word, quotes_neutral

        self.analyze = analyze
        self.analyze_word = analyze_word
        self.longest_word = MAX_TOKEN_LENGTH
        self.quotes_neutral = quotes_neutral
        self.term_ids: dict[str, int] = {}  # term -> id, in first-seen order
        self.names: list[str] = []  # id -> term
        self.starts = array("q", [0])
        self.ids = array("i")
        self.single = array("i")  # row r's one term id; -1: no term, -2: several
        self.index = _ChunkIndex()  # the rows of the short chunks cached here
        self.raw = False  # the chunks read are a shard's bytes (quoted fields as written)
        self.unsafe = False  # ... and one of them may not give the terms of its text
        self[_MARK] = self._add([])  # row 0, also the chunk's own analysis (no terms)

    def _add(self, terms: list[str]) -> int:
        ids, names = self.term_ids, self.names
        if len(terms) == 1:  # nearly always
            got = ids.get(terms[0])
            if got is None:
                got = ids[terms[0]] = len(names)
                names.append(terms[0])
            self.ids.append(got)
            self.single.append(got)
        else:
            for t in terms:
                if t not in ids:
                    ids[t] = len(names)
                    names.append(t)
            self.ids.extend([ids[t] for t in terms])
            self.single.append(-1 - (len(terms) > 1))
        self.starts.append(len(self.ids))
        return len(self.starts) - 2

    def fresh(self, chunk: bytes | bytearray) -> int:
        """A new row for ``chunk`` (analyzed), not cached here: the row, or ``~row``
        when the chunk must never be cached (its terms may not be its text's)."""
        if chunk.isalpha() and len(chunk) <= self.longest_word:  # ASCII letters: a word
            return self._add(self.analyze_word(chunk.decode("ascii")))
        text = chunk.decode("utf-8")
        row = self._add(self.analyze(text))
        if b'"' in chunk and not self.quotes_neutral(text):
            # a quoted field's doubled quotes can change a Hebrew text's terms: such a
            # chunk read from a shard's bytes is not its text, so it is never cached, and
            # its shard is read again the careful way
            self.unsafe = self.unsafe or self.raw
            return ~row
        return row

    def __missing__(self, chunk: bytes) -> int:
        row = self.fresh(chunk)
        if row < 0:
            return ~row
        self[chunk] = row
        return row


_TABLES: dict[str, _ChunkTable] = {}  # this process's table, kept between shard jobs


def _chunk_table() -> _ChunkTable:
    table = _TABLES.get("chunks")
    # rows, not dictionary entries: a chunk that is never cached still has a row
    if table is None or len(table.starts) - 1 > CHUNK_LIMIT:
        table = _TABLES["chunks"] = _ChunkTable()
    return table


def _string_order(words: list[str]) -> np.ndarray:
    """The indexes that sort ``words`` as ``sorted`` does (by code point, stable): by
    their first 8 UTF-8 bytes with numpy (UTF-8's byte order is the code points'; zero
    padding puts a prefix first), then ``sorted`` within each run of words that share
    those 8 bytes (padding included: a word with a NUL is sorted there)."""
    n = len(words)
    enc = [w.encode("utf-8", "surrogatepass") for w in words]
    lengths = np.fromiter(map(len, enc), dtype=np.int64, count=n)
    blob = np.frombuffer(b"".join(enc) + bytes(8), dtype=np.uint8)
    del enc
    starts = np.cumsum(lengths) - lengths
    keys = np.zeros(n, dtype=np.uint64)
    for k in range(8):  # byte k of each word (0 past its end), most significant first
        keys |= np.where(lengths > k, blob[starts + k], 0).astype(np.uint64) << np.uint64(
            8 * (7 - k))
    del blob, starts
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    # runs of words with the same first 8 bytes: sorted again by the words themselves
    # (from sorted positions a to z; tie i: positions i and i + 1 share them)
    ties = np.flatnonzero(ranked[1:] == ranked[:-1])
    if ties.shape[0]:
        first = np.ones(ties.shape[0], dtype=bool)
        first[1:] = ties[1:] != ties[:-1] + 1
        a_s = ties[first]
        z_s = np.append(ties[np.flatnonzero(first)[1:] - 1], ties[-1]) + 1
        for a, z in zip(a_s.tolist(), z_s.tolist(), strict=True):
            seg = order[a:z + 1].tolist()
            seg.sort(key=words.__getitem__)
            order[a:z + 1] = seg
    return order


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
        single = np.frombuffer(table.single, dtype=np.int32)[chunk_rows]
        one = single >= 0  # nearly always: a chunk holds one term or none
        flat = single[one]
        term_docs = docs[one]
        several = np.flatnonzero(single == -2)
        if several.shape[0]:  # every term of those chunks (the order does not matter)
            starts = np.frombuffer(table.starts, dtype=np.int64)
            rows_ = chunk_rows[several]
            lo_, hi_ = starts[rows_], starts[rows_ + 1]
            del starts  # a view: the table cannot grow while it is alive
            term_ids = np.frombuffer(table.ids, dtype=np.int32)
            flat = np.concatenate([flat, term_ids[_ranges(lo_, hi_)]])
            del term_ids
            term_docs = np.concatenate([term_docs, np.repeat(docs[several], hi_ - lo_)])
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
        order = _string_order(words)
        vocab = [words[i] for i in order.tolist()]
        rank = np.zeros(len(names), dtype=np.int64)
        rank[present[order]] = np.arange(len(order), dtype=np.int64)
        # one key per posting: (term, row) in sort order; built and taken apart in place
        # (a shard's postings are millions: each int64 temporary is tens of MB)
        width = max(n, 1)
        key = rank[terms]
        del terms, rank
        key *= width
        key += rows
        del rows
        bits = int(freqs.max()).bit_length() if freqs.shape[0] else 0
        if (len(vocab) * width) << bits < 1 << _KEY_BITS:  # the frequency rides along
            key <<= bits
            key |= freqs
            key.sort()
            freqs = (key & ((1 << bits) - 1)).astype(np.int32)
            key >>= bits
        else:
            order_ = np.argsort(key, kind="stable")
            key, freqs = key[order_], freqs[order_]
        # term t's postings are the keys in [t * width, (t + 1) * width)
        indptr = np.searchsorted(key, np.arange(len(vocab) + 1, dtype=np.int64) * width)
        np.remainder(key, width, out=key)  # the rows
        return CountedShard(vocab, np.diff(indptr), self.lengths, indptr.astype(np.int64),
                            key.astype(np.int32), freqs)


def _block_rows(b: np.ndarray, blob: bytes | bytearray, lo: int, hi: int,
                table: _ChunkTable) -> np.ndarray:
    """The table rows of the chunks of ``b[lo:hi]`` (the pieces ``bytes.split`` cuts),
    in order; ``b``: uint8 with 16 zero bytes after the text, ``blob`` bytes holding
    every chunk but the marks at the same place (the buffer ``b`` views, or the shard's
    own bytes: ``b`` differs from them only where an id or a careful record was blanked,
    where no other chunk lies).

    A chunk of up to 16 bytes is found in ``table.index`` by its bytes, with numpy; the
    distinct ones not there are analyzed once (:meth:`_ChunkTable.fresh`) and added to
    the index (not to the dictionary: the index alone holds the short chunks read this
    way); longer chunks, and those ``table`` never caches, go through ``table`` one
    by one."""
    # 1 for a byte of a chunk, with a 0 on either side: the chunks' edges alternate,
    # each chunk's start then its end
    word = np.frombuffer(b"\x00" + b[lo:hi].tobytes().translate(_IN_CHUNK) + b"\x00",
                         dtype=np.int8)
    edges = np.flatnonzero(word[1:] != word[:-1]) + lo
    s, e = edges[0::2], edges[1::2]
    del word, edges
    sizes = e - s
    head = b[s]
    rows = np.full(s.shape[0], -1, dtype=np.int32)
    # _MARK: the NUL byte standing for an id, alone (no other NUL is read: a chunk that
    # starts with one is not a mark, and the caller's count of marks refuses it)
    rows[(head == 0) & (sizes == 1)] = 0
    short = np.flatnonzero((sizes <= _SHORT) & (head != 0))
    words = np.ndarray((b.shape[0] - 7,), dtype="<u8", buffer=b.data, strides=(1,))
    starts = s[short]
    cut = sizes[short]
    k0 = words[starts] & _LOW[cut]
    k1 = np.zeros(short.shape[0], dtype=np.uint64)  # a chunk's bytes 9-16: most have none
    long = np.flatnonzero(cut > 8)
    k1[long] = words[starts[long] + 8] & _HIGH[cut[long]]
    del starts, long
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
        # analyzed, and held by the index only (no dictionary entry: millions of them)
        got = np.fromiter(map(table.fresh, chunks), dtype=np.int32, count=len(chunks))
        kept = got >= 0
        table.index.insert(k0[one[kept]], k1[one[kept]], got[kept])
        found[new] = table.index.find(a0, a1)
    rows[short] = found
    rest = np.flatnonzero(rows < 0)
    if rest.shape[0]:  # dictionary keys: bytes
        keys = [bytes(blob[x:y]) for x, y in zip(s[rest].tolist(), e[rest].tolist(),
                                                 strict=True)]
        rows[rest] = np.fromiter(map(table.__getitem__, keys), dtype=np.int32,
                                 count=len(keys))
    return rows


def _read_chunks(buf: bytearray, offsets: np.ndarray, careful: np.ndarray,
                 table: _ChunkTable, postings: _Postings) -> list[str] | None:
    """Count the terms of the passages not marked ``careful`` into ``postings``, reading
    their bytes (``buf``: the records at ``offsets`` and ``_SHORT`` zero bytes, written
    here) a block at a time; return those passages' ids, or None when a chunk may not
    give its text's terms (``table.unsafe``: then nothing counted here may be kept, and
    the shard is to be read the careful way).

    A record is ``id<TAB>text<TAB>title<LF>`` (:mod:`nqkit.retrieval.passage_store`): the
    id (not quoted: careful passages are those whose id is) is replaced by a chunk of its
    own, ``_MARK``, and ``bytes.split`` cuts the rest at ASCII whitespace (tabs and line
    breaks, also inside a quoted field, are whitespace to the analyzer). A quoted field's
    chunks keep their quotes, doubled and at its ends: the terms of such a chunk are its
    text's whenever :func:`nqkit.text.lucene.quotes_neutral` says so, else ``table``
    says ``unsafe``."""
    fast = np.flatnonzero(~careful)
    starts = offsets[:-1][fast]
    # an unquoted id ends at the record's first tab (found by bytearray.index: a mask of
    # the shard's tabs would be another array the size of the shard)
    find = buf.index
    id_ends = np.fromiter((find(b"\t", a) for a in starts.tolist()), dtype=np.int64,
                          count=starts.shape[0])
    ids = [buf[a:b].decode("utf-8") for a, b in zip(starts.tolist(), id_ends.tolist(),
                                                     strict=True)]
    # the ids and careful records blanked in place: no chunk lies there, so the other
    # chunks' bytes are read from the same buffer
    b = np.frombuffer(buf, dtype=np.uint8)  # the keys read 16 bytes at a time
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
            rows = _block_rows(b, buf, lo, hi, table)
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
    """Step 1: analyze one shard, or one part of it; write its local postings and ids;
    return its counts."""
    root = Path(job.root)
    table = _chunk_table()
    whole_offsets = shard_offsets(root, job.shard)
    lo = job.parts[job.part] if job.part >= 0 else 0
    hi = (job.parts[job.part + 1] if 0 <= job.part < len(job.parts) - 1
          else whole_offsets.shape[0] - 1)
    base = int(whole_offsets[lo])
    offsets = whole_offsets[lo:hi + 1] - base  # this job's records, from 0
    n = offsets.shape[0] - 1
    ids: list[str] = [""] * n
    postings = _Postings(n)
    # careful: read one by one (parsed): a quoted id, or all when a NUL byte would be
    # taken for a _MARK; multifield: every passage (the block reader reads title and
    # text as one)
    careful = np.full(n, job.field != FLAT, dtype=bool)
    if n and not careful.all():
        buf = read_shard_bytes(root, job.shard, base, int(whole_offsets[hi]), pad=_SHORT)
        careful[:] = buf.find(_MARK, 0, len(buf) - _SHORT) >= 0
        if not careful.all():
            careful |= np.frombuffer(buf, dtype=np.uint8)[offsets[:-1]] == 0x22
            fast_ids = _read_chunks(buf, offsets, careful, table, postings)
            if fast_ids is None:  # a quoted Hebrew text: the whole shard the careful way
                careful[:] = True
                postings = _Postings(n)
            else:
                for j, pid in zip(np.flatnonzero(~careful).tolist(), fast_ids, strict=True):
                    ids[j] = pid
        del buf
    get = table.__getitem__
    with mapped_shard(root, job.shard) as whole:
        for part in np.array_split(np.flatnonzero(careful),
                                   max(1, -(-int(careful.sum()) // _BLOCK))):
            rows_c = array("i")
            docs_c = array("q")
            for j in part.tolist():
                # parsed from the whole shard: a damaged record's error names its line
                p = shard_passage(whole, whole_offsets, lo + j, root, job.shard)
                ids[j] = p.id
                pieces = field_texts(p.title, p.text, job.field).encode("utf-8").split()
                rows_c.extend(map(get, pieces))
                docs_c.extend([j] * len(pieces))
            postings.add(table, np.frombuffer(rows_c, dtype=np.int32),
                         np.frombuffer(docs_c, dtype=np.int64))
    del get
    release_memory()  # the block arrays and the shard's bytes, before the sort's arrays
    counted = postings.counted(table.names)
    _counted_path(root, "vocab", job.shard, job.field, job.part).write_bytes(
        orjson.dumps(counted.vocab))  # read by _merge_vocabularies only
    for kind in _COUNTED[1:]:
        np.save(_counted_path(root, kind, job.shard, job.field, job.part),
                getattr(counted, kind))
    if job.write_ids:
        np.save(_path(root, "ids", job.shard) if job.part < 0
                else _counted_path(root, "ids", job.shard, job.field, job.part),
                np.asarray(ids, dtype=str))
    facts = {"n": n, "docs_with_tokens": int((counted.lengths > 0).sum()),
             "total_len": int(counted.lengths.sum()), "peak_rss_mb": peak_rss_mb()}
    del counted, postings, ids
    release_memory()  # what the next job of this process does not need
    return facts


def _jobs_per_shard(workers: int, shards: int) -> int:
    """Jobs a shard's work is cut into: 1, or enough for two per worker when the shards
    are fewer (:func:`_parts`, :func:`_question_groups`)."""
    return -(-2 * workers // shards) if workers > 1 and shards < 2 * workers else 1


def _parts(shard: Shard, workers: int, shards: int) -> tuple[int, ...]:
    """The first rows of the parts a shard is counted in: one part (``()``) unless the
    shards are fewer than two per worker; then enough parts of at least ``_BLOCK`` rows
    for two per worker. The parts decide only how the work is cut: the shard's files are
    the same bytes (:func:`_merged`)."""
    size = shard.stop - shard.start
    k = max(1, min(_jobs_per_shard(workers, shards), size // _BLOCK))
    if k == 1:
        return ()
    return tuple(size * i // k for i in range(k))


def _load_counted(root: Path, shard: Shard, field: str, part: int = -1) -> CountedShard:
    with open(_counted_path(root, "vocab", shard, field, part), encoding="utf-8") as f:
        vocab = json.load(f)
    arrays = {k: np.load(_counted_path(root, k, shard, field, part)) for k in _COUNTED[1:]}
    return CountedShard(vocab, **arrays)


def _merged(root: Path, job: _Job) -> tuple[CountedShard, np.ndarray]:
    """The shard's counts and local -> global term map from its parts' (:func:`_parts`):
    what one count job over the whole shard gives. The shard's terms are the union of
    its parts'; each part's postings of a term (rows ascending) are placed after those of
    the parts before it, so every term's rows ascend, with no sort (and none of a
    sort's arrays the size of the shard: a score job's memory is the output's)."""
    k = len(job.parts)
    maps = [np.load(_counted_path(root, "map", job.shard, job.field, i)) for i in range(k)]
    ptrs = [np.load(_counted_path(root, "indptr", job.shard, job.field, i))
            for i in range(k)]
    term_map = distinct(np.concatenate(maps))
    at = [np.searchsorted(term_map, m) for m in maps]  # each part's terms in the union
    per_term = np.zeros(term_map.shape[0], dtype=np.int64)
    for where, ptr in zip(at, ptrs, strict=True):
        per_term[where] += np.diff(ptr)  # a part's terms are distinct
    indptr = np.concatenate([np.zeros(1, np.int64), np.cumsum(per_term, dtype=np.int64)])
    free = indptr[:-1].copy()  # each term's next place
    rows = np.empty(int(indptr[-1]), dtype=np.int32)
    freqs = np.empty(int(indptr[-1]), dtype=np.int32)
    lengths = []
    for i, (first, where, ptr) in enumerate(zip(job.parts, at, ptrs, strict=True)):
        sizes = np.diff(ptr)
        dest = _ranges(free[where], free[where] + sizes)  # the part's postings in order
        rows[dest] = np.load(_counted_path(root, "rows", job.shard, job.field, i)) + first
        freqs[dest] = np.load(_counted_path(root, "freqs", job.shard, job.field, i))
        free[where] += sizes
        lengths.append(np.load(_counted_path(root, "lengths", job.shard, job.field, i)))
        del dest
    return CountedShard([], per_term, np.concatenate(lengths), indptr, rows, freqs), term_map


def _stats(root: Path, job: _Job) -> GlobalStats:
    """The global statistics a score or query job needs (no vocabulary: term ids only)."""
    df = np.load(root / _sub(job.field) / "doc_freq.npy", mmap_mode="r")
    n, total = job.doc_count, job.sum_total_term_freq
    avgdl = avg_field_length(total, n) if n else F32(1)
    return GlobalStats([], np.asarray(df), n, total, idf(df, n), avgdl,
                       norm_cache(job.k1, job.b, avgdl))


def _score_job(job: _Job) -> dict[str, Any]:
    """Step 3: the shard's postings under global term ids with their clause scores."""
    if _TABLES:  # a worker's chunks: the counting is over
        _TABLES.clear()
        release_memory()
    root = Path(job.root)
    if job.parts:
        counted, term_map = _merged(root, job)
    else:
        counted = _load_counted(root, job.shard, job.field)
        term_map = np.load(_counted_path(root, "map", job.shard, job.field))
    scored = score_shard(counted, term_map, _stats(root, job))
    for kind in _SCORED:
        np.save(_path(root, kind, job.shard, job.field), getattr(scored, kind))
    if job.parts and job.write_ids:  # the parts' ids, as one count job writes them
        pieces = [_counted_path(root, "ids", job.shard, job.field, i)
                  for i in range(len(job.parts))]
        np.save(_path(root, "ids", job.shard), np.concatenate([np.load(p) for p in pieces]))
        for p in pieces:
            p.unlink()
    for part in range(len(job.parts)) if job.parts else [-1]:
        for kind in (*_COUNTED, "map"):
            _counted_path(root, kind, job.shard, job.field, part).unlink()
    return {"postings": int(scored.data.shape[0]), "peak_rss_mb": peak_rss_mb()}


def _merge_vocabularies(root: Path, units: list[tuple[Shard, int]], field: str) -> int:
    """Step 2 of one field: the sorted vocabulary, document frequencies and each count
    job's (shard and part: ``units``) local -> global term map, written beside the
    shards; the vocabulary's size."""
    from nqkit.report import progress

    # each term numbered where it is first read (a count of all terms read: numbers with
    # gaps), each job's terms by those numbers; then the numbers ranked by the terms'
    # order. Each vocabulary is read once, and no term is looked up twice.
    first: dict[str, int] = {}
    numbered = itertools.count()
    seen: list[np.ndarray] = []
    for s, i in progress(units, desc="BM25 (Lucene) vocabulary", unit="job"):
        local = orjson.loads(_counted_path(root, "vocab", s, field, i).read_bytes())
        seen.append(np.fromiter(map(first.setdefault, local, numbered), dtype=np.int64,
                                count=len(local)))
        del local
    vocab = list(first)
    order = _string_order(vocab)
    place = np.empty(len(vocab), dtype=np.int64)  # each term's place in the order
    place[order] = np.arange(len(vocab), dtype=np.int64)
    rank = np.zeros(next(numbered), dtype=np.int64)  # number -> place
    rank[np.fromiter(first.values(), dtype=np.int64, count=len(vocab))] = place
    del first, place
    vocab = [vocab[i] for i in order.tolist()]
    df = np.zeros(len(vocab), dtype=np.int64)
    for (s, i), numbers in zip(units, seen, strict=True):
        m = rank[numbers]  # a count job's terms are distinct
        df[m] += np.load(_counted_path(root, "doc_freq", s, field, i))
        np.save(_counted_path(root, "map", s, field, i), m)
    del seen, rank
    np.save(root / _sub(field) / "doc_freq.npy", df)
    with open(root / _sub(field) / "vocab.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(vocab, ensure_ascii=False))  # json.dump's bytes, in one call
    return len(vocab)


def build_lucene(root: Path, shards: tuple[Shard, ...], k1: float, b: float,
                 cluster: Cluster, fields: str = FLAT) -> dict[str, Any]:
    """Build the lucene-exact shards of the store under ``root``; facts for params.json.

    ``fields``: :data:`~nqkit.retrieval.lucene_bm25.FLAT` (one field), or a multifield
    spelling (:func:`~nqkit.retrieval.lucene_bm25.field_weights`; the weights are for the
    search): the facts then hold each field's statistics under ``"fields"``."""
    names = list(field_weights(fields))
    for name in names:
        (root / _sub(name)).mkdir(parents=True, exist_ok=True)
    (root / SUBDIR).mkdir(parents=True, exist_ok=True)
    cuts = {s: _parts(s, cluster.workers, len(shards)) for s in shards}
    units = [(s, i) for s in shards for i in (range(len(cuts[s])) if cuts[s] else [-1])]
    counts = cluster.map(_count_job, [_Job(str(root), s, k1, b, field=name,
                                           write_ids=name == names[0], parts=cuts[s],
                                           part=i)
                                      for name in names for s, i in units],
                         desc="BM25 (Lucene) analyze")
    _TABLES.clear()  # this process's chunks (one-process builds): not needed any more
    release_memory()
    sizes = {name: _merge_vocabularies(root, units, name) for name in names}
    n = len(units)
    per: dict[str, dict[str, Any]] = {}
    jobs = []
    for i, name in enumerate(names):
        mine = counts[i * n:(i + 1) * n]
        doc_count = sum(c["docs_with_tokens"] for c in mine)
        total = sum(c["total_len"] for c in mine)
        per[name] = {"vocabulary": sizes[name], "doc_count": doc_count,
                     "sum_total_term_freq": total,
                     "avg_length": float(avg_field_length(total, doc_count))
                     if doc_count else 0.0}
        jobs += [_Job(str(root), s, k1, b, doc_count, total, name,
                      write_ids=name == names[0], parts=cuts[s]) for s in shards]
    scored = cluster.map(_score_job, jobs, desc="BM25 (Lucene) score")
    m = len(shards)
    for i, name in enumerate(names):
        per[name]["postings"] = sum(s["postings"] for s in scored[i * m:(i + 1) * m])
    peak = max([c["peak_rss_mb"] for c in counts] + [s["peak_rss_mb"] for s in scored])
    if fields == FLAT:
        return {**per[FLAT], "analyzer": ANALYZER, "peak_rss_mb": peak}
    return {"fields": per, "analyzer": ANALYZER, "peak_rss_mb": peak}


@dataclass(frozen=True, slots=True)
class _FieldQuery:
    job: _Job  # the field and its global statistics
    terms: np.ndarray  # every question's global term ids of the field, concatenated
    boosts: np.ndarray  # each term's count in its question
    offsets: np.ndarray  # question i's clauses are [offsets[i], offsets[i + 1])
    weight: float = 1.0  # the field's weight (multifield)


@dataclass(frozen=True, slots=True)
class _QueryJob:
    shard: Shard
    fields: tuple[_FieldQuery, ...]
    k: int
    first: int = 0  # the questions searched: [first, last) (-1: to the end)
    last: int = -1


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


def _sums(row_parts: list[np.ndarray], val_parts: list[np.ndarray], size: int
          ) -> tuple[np.ndarray, np.ndarray]:
    """The rows that occur in ``row_parts`` (ascending) and the double sums of their
    values. A row occurs once per clause; its clause scores are added in double (as
    Lucene's scorers add them), by bincount's weights (fastest given intp rows and double
    weights)."""
    rows = np.concatenate(row_parts, dtype=np.intp, casting="safe")
    vals = np.concatenate(val_parts, dtype=np.float64, casting="safe")
    if rows.shape[0] * 64 < size:  # few postings: no pass over the shard
        hit, at = np.unique(rows, return_inverse=True)
        return hit, np.bincount(at, weights=vals)
    # many: one pass. A match scores above 0 (LuceneBM25.matches says why), so the
    # matches are the positive rows (nonzero of a bool array is many times faster than
    # of a float one)
    sums = np.bincount(rows, weights=vals, minlength=size)
    hit = np.flatnonzero(sums > 0)
    return hit, sums[hit]


class _FieldShard:
    """One field's arrays of one shard, and every clause's position in its term list."""

    def __init__(self, fq: _FieldQuery, shard: Shard) -> None:
        root, field = Path(fq.job.root), fq.job.field
        self.fq = fq
        self.stats = _stats(root, fq.job)
        a = {k: np.asarray(np.load(_path(root, k, shard, field), mmap_mode="r"))
             for k in ("norms", "terms", "indptr", "rows", "freqs", "data")}
        # every clause's position in the shard's term list at once (-1: not in the shard)
        terms = a["terms"].astype(np.int64)
        pos = np.searchsorted(terms, fq.terms)
        if terms.shape[0]:
            pos[terms[np.minimum(pos, terms.shape[0] - 1)] != fq.terms] = -1  # also = len
        else:  # a shard of passages without one indexed term
            pos.fill(-1)
        self.pos = pos
        self.starts, self.ends = a["indptr"][:-1].tolist(), a["indptr"][1:].tolist()
        self.rows, self.data, self.freqs, self.norms = (a["rows"], a["data"], a["freqs"],
                                                        a["norms"])
        self.offsets = fq.offsets.tolist()

    def clauses(self, i: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Question i's postings in this field: rows and float32 clause scores."""
        lo, hi = self.offsets[i], self.offsets[i + 1]
        weight = self.fq.weight
        row_parts: list[np.ndarray] = []
        val_parts: list[np.ndarray] = []
        for g, p, boost in zip(self.fq.terms[lo:hi].tolist(), self.pos[lo:hi].tolist(),
                               self.fq.boosts[lo:hi].tolist(), strict=True):
            if p < 0:
                continue
            s, e = self.starts[p], self.ends[p]
            rows = self.rows[s:e]
            row_parts.append(rows)
            if boost == 1 and weight == 1.0:
                val_parts.append(self.data[s:e])
            else:
                w = term_weight(boost, weight, self.stats.idf[g])
                val_parts.append(clause_scores(w, self.freqs[s:e],
                                               self.stats.cache[self.norms[rows]]))
        return row_parts, val_parts


def _query_job(q: _QueryJob) -> dict[str, Any]:
    shard = q.shard
    ids = np.load(_path(Path(q.fields[0].job.root), "ids", shard))
    fields = [_FieldShard(fq, shard) for fq in q.fields]
    out_rows: list[np.ndarray] = []
    out_vals: list[np.ndarray] = []
    out_ids: list[np.ndarray] = []
    sizes: list[int] = []
    size = shard.size
    empty = (np.zeros(0, np.int64), np.zeros(0, F32), ids[:0])
    last = len(q.fields[0].offsets) - 1 if q.last < 0 else q.last
    for i in range(q.first, last):
        row_parts: list[np.ndarray] = []
        val_parts: list[np.ndarray] = []
        for f in fields:
            rows_f, vals_f = f.clauses(i)
            if f.fq.weight == 1.0:  # flattened into the one double sum
                row_parts += rows_f
                val_parts += vals_f
            elif rows_f:  # a nested disjunction: its own sum, rounded to float32
                hit_f, sums_f = _sums(rows_f, vals_f, size)
                row_parts.append(hit_f)
                val_parts.append(sums_f.astype(F32))
        if not row_parts:
            r, v, i_ = empty
        else:
            hit, sums = _sums(row_parts, val_parts, size)
            r, v, i_ = _top(hit.astype(np.int64), sums, ids, q.k)
        out_rows.append(r + shard.start)
        out_vals.append(v)
        out_ids.append(i_)
        sizes.append(r.shape[0])
    offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes, dtype=np.int64)])
    return {"rows": _cat(out_rows, np.zeros(0, np.int64)),
            "scores": _cat(out_vals, np.zeros(0, F32)), "ids": _cat(out_ids, ids[:0]),
            "offsets": offsets, "peak_rss_mb": peak_rss_mb()}


def _cat(parts: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
    return np.concatenate(parts) if parts else empty


def _question_groups(questions: int, workers: int, shards: int) -> list[tuple[int, int]]:
    """The question ranges each shard is searched in, one job each: all questions in one
    job, unless the shards are fewer than two per worker; then enough equal ranges for
    two jobs per worker. Only how the work is cut: each question's list is the same."""
    g = max(1, min(_jobs_per_shard(workers, shards), questions))
    return [(questions * i // g, questions * (i + 1) // g) for i in range(g)]


def _joined(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One shard's results for consecutive question ranges, as one job's."""
    if len(results) == 1:
        return results[0]
    shift = np.cumsum([0] + [int(r["offsets"][-1]) for r in results[:-1]])
    offsets = np.concatenate([np.zeros(1, np.int64)]
                             + [r["offsets"][1:] + d for r, d in zip(results, shift,
                                                                     strict=True)])
    return {"rows": np.concatenate([r["rows"] for r in results]),
            "scores": np.concatenate([r["scores"] for r in results]),
            "ids": np.concatenate([r["ids"] for r in results]), "offsets": offsets,
            "peak_rss_mb": max(r["peak_rss_mb"] for r in results)}


def query_terms(root: Path, questions: list[str], field: str = FLAT
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every question's bag-of-words clauses as global term ids and boosts (terms not in
    the index dropped: they match nothing), concatenated, with the offsets."""
    from nqkit.text.lucene import analyze

    vocab = orjson.loads((root / _sub(field) / "vocab.json").read_bytes())  # sorted
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
                  facts: dict[str, Any], questions: list[str], k: int, cluster: Cluster,
                  fields: str = FLAT) -> tuple[list[Hits], float]:
    """Top-k hits of every question, Anserini's adjusted scores; also the peak RSS (MB).

    Questions must be analyzed as the passages were: an index whose recorded analyzer is
    not this one is refused (:class:`~nqkit.errors.InputError`). ``fields``: the index's
    (:func:`build_lucene`), with the fields' weights.
    """
    if facts.get("analyzer") != ANALYZER:
        from nqkit.errors import InputError

        raise InputError(f"--index {root}", f"the index was analyzed with "
                         f"{facts.get('analyzer')!r}, this nqkit analyzes with {ANALYZER!r}",
                         "rebuild it with `nqkit index build --bm25-method lucene-exact`")
    queries = []
    for name, weight in field_weights(fields).items():
        stats = facts if fields == FLAT else facts["fields"][name]
        job = _Job(str(root), shards[0], settings.k1, settings.b, int(stats["doc_count"]),
                   int(stats["sum_total_term_freq"]), name)
        queries.append(_FieldQuery(job, *query_terms(root, questions, name), weight))
    groups = _question_groups(len(questions), cluster.workers, len(shards))
    jobs = [_QueryJob(s, tuple(queries), k, a, b) for s in shards for a, b in groups]
    done = cluster.map(_query_job, jobs, desc="BM25 (Lucene) search")
    g = len(groups)
    results = [_joined(done[j * g:(j + 1) * g]) for j in range(len(shards))]
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
