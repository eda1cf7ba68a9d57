"""The lucene-exact build's chunk lookup by bytes (numpy) against bytes.split + a dict.

``_block_rows`` finds the table row of every chunk of a block: short chunks by their bytes
in an open-addressing table, the others through the chunk table itself. Its rows must be
those of ``[table[c] for c in block.split()]`` for any bytes a shard can hold (no NUL but
the id marks), and its hash table must hold every key it was given across growth and
collisions.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nqkit.retrieval.lucene_index import (
    _MARK,
    _SHORT,
    _block_rows,
    _ChunkIndex,
    _ChunkTable,
    _string_order,
)

PIECES = ["a", "ab", "The", "word,", "(x)", "e-mail", "U.S.", "1,000", "x" * 8, "y" * 9,
          "z" * 16, "w" * 17, "international-ization", "café", "東京", "😀", "a'ב'",
          'a""b', '"q"', "\u05d0\"\u05d1", "it's"]
SEPS = [" ", "\t", "\n", "  ", "\r\n", "\x0b", "\x0c", "\x1c"]  # \x1c is not whitespace


def _terms(table: _ChunkTable, rows: list[int]) -> list[list[str]]:
    return [[table.names[i] for i in table.ids[table.starts[r]:table.starts[r + 1]]]
            for r in rows]


def _rows(block: bytes, table: _ChunkTable) -> np.ndarray:
    b = np.zeros(len(block) + _SHORT, dtype=np.uint8)
    b[:len(block)] = np.frombuffer(block, dtype=np.uint8)
    return _block_rows(b, block, 0, len(block), table)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPS),
                          st.booleans()), max_size=60),
       st.text(alphabet=st.sampled_from(list("ab \t.é東\x1c")), max_size=30))
def test_block_rows_are_the_rows_of_bytes_split(parts, noise) -> None:
    text = "".join((("\x00 " if mark else "") + piece + sep) for piece, sep, mark in parts)
    block = (text + noise).encode("utf-8")
    table = _ChunkTable()
    chunks = block.split()
    passes = []
    for _ in range(2):  # the index cold, then warm
        got = _rows(block, table).tolist()
        want = [table[c] for c in chunks]
        # the terms of each chunk; a chunk the table never caches (a Hebrew text with a
        # quote) gets a new row at each lookup, and a short chunk has its row in the
        # index, another in the dictionary
        assert _terms(table, got) == _terms(table, want)
        passes.append(got)
    # every chunk the table caches keeps its row: found again, not analyzed again
    cold, warm = passes
    assert [r for r, c in zip(warm, chunks, strict=True) if c in table] == [
        r for r, c in zip(cold, chunks, strict=True) if c in table]
    assert table[_MARK] == 0


def test_the_index_finds_every_key_across_growth_and_collisions() -> None:
    rng = np.random.default_rng(0)
    index = _ChunkIndex(bits=4)
    keys0 = rng.integers(1, 2**63, 5000, dtype=np.uint64)
    keys0[:2000] = np.arange(1, 2001, dtype=np.uint64)  # small keys: crowded slots
    keys1 = np.where(np.arange(5000) % 3 == 0, keys0 ^ np.uint64(7), np.uint64(0))
    rows = np.arange(5000, dtype=np.int32)
    for lo in range(0, 5000, 700):  # added in batches: the table grows between them
        index.insert(keys0[lo:lo + 700], keys1[lo:lo + 700], rows[lo:lo + 700])
        got = index.find(keys0[:lo + 700], keys1[:lo + 700])
        assert got.tolist() == rows[:lo + 700].tolist()
    assert index.count == 5000 and (1 << index.bits) >= 10000
    # keys not held: one word differs
    assert (index.find(keys0, keys1 ^ np.uint64(1 << 40)) == -1).all()
    assert (index.find(keys0 + np.uint64(2**62), keys1) == -1).sum() >= 4990


def test_postings_are_count_shards_with_either_sort(monkeypatch) -> None:
    """A shard counted a block at a time equals ``count_shard`` of its passages' terms,
    whether the frequency rides in the sort key or an argsort carries it (a key that
    would not fit in 63 bits)."""
    from nqkit.retrieval import lucene_index
    from nqkit.retrieval.lucene_bm25 import count_shard
    from nqkit.retrieval.lucene_index import _Postings
    from nqkit.text.lucene import analyze

    rng = np.random.default_rng(1)
    texts = [" ".join(rng.choice(PIECES, size=int(rng.integers(0, 12))).tolist())
             for _ in range(40)]
    want = count_shard([analyze(t) for t in texts])
    for bits in (63, 1):
        monkeypatch.setattr(lucene_index, "_KEY_BITS", bits)
        table = _ChunkTable()
        postings = _Postings(len(texts))
        for lo in range(0, len(texts), 7):  # blocks of 7 passages
            pieces = [(j, c) for j in range(lo, min(lo + 7, len(texts)))
                      for c in texts[j].encode().split()]
            if pieces:
                postings.add(table, np.array([table[c] for _, c in pieces], np.int32),
                             np.array([j for j, _ in pieces], np.int64))
        got = postings.counted(table.names)
        assert got.vocab == want.vocab
        for kind in ("doc_freq", "lengths", "indptr", "rows", "freqs"):
            assert np.array_equal(getattr(got, kind), getattr(want, kind)), (bits, kind)
            assert getattr(got, kind).dtype == getattr(want, kind).dtype, (bits, kind)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab\x00\x01\x7f\x80éz\uffff😀東")),
                        max_size=12), max_size=40))
def test_words_are_ordered_as_sorted_orders_them(words: list[str]) -> None:
    """The vocabularies' order: code points, ties (equal words) in their first order;
    words sharing their first 8 UTF-8 bytes, and those with a NUL, included."""
    words += [w + "abcdefgh" for w in words[:5]] + [w[:3] for w in words[:5]]
    assert _string_order(words).tolist() == sorted(range(len(words)), key=words.__getitem__)
