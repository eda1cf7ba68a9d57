"""The passage store written a block at a time equals the store written passage by passage.

``write_store`` hands runs of simple lines (records exactly as ``format_passage_line``
writes them) to numpy a block at a time and every other line to the reader of
:mod:`nqkit.formats.dpr` one by one. The reference is ``write_store(..., bulk=False)``,
the store written passage by passage as it was before: for real passages and for generated corpora
holding every kind of line the reader treats specially (quoted fields with tabs, quotes
and line breaks, CRLF, a lone CR, a byte order mark, blank lines, header variants, NUL,
non-ASCII and long ids, a last line without its line break, gzip), with blocks as small as
one byte and shard boundaries inside and at the edges of blocks, both must write the same
bytes in every shard and offsets file, the same fingerprint, count and shards, and raise
the same error at the same ``file:line``.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pytest

import nqkit.formats.dpr as dpr
from nqkit.errors import InputError
from nqkit.formats.dpr import _invalid_utf8
from nqkit.retrieval.corpus import write_passages
from nqkit.retrieval.passage_store import StoreInfo, write_store

from conftest import SHARED, make_passages_module, shared_file


def _write_store_slow(corpus: Path, root: Path, shard_size: int) -> StoreInfo:
    """The reference: every line read passage by passage."""
    return write_store(corpus, root, shard_size, bulk=False)


def _files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "passages").iterdir())}


def _both(corpus: Path, tmp: Path, shard_size: int, block: int,
          monkeypatch: pytest.MonkeyPatch) -> StoreInfo:
    """Write the store both ways; assert they are the same; return the info."""
    monkeypatch.setattr(dpr, "PASSAGE_BLOCK", block)
    tag = f"{corpus.name}-{shard_size}-{block}"
    slow = _write_store_slow(corpus, tmp / f"slow-{tag}", shard_size)
    fast = write_store(corpus, tmp / f"fast-{tag}", shard_size)
    assert fast == slow
    a, b = _files(tmp / f"slow-{tag}"), _files(tmp / f"fast-{tag}")
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], name
    return fast


def _error(fn, corpus: Path, root: Path) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as e:
        fn(corpus, root, 1000)
    return e.value.message


# ---------------------------------------------------------------------- generated lines

_IDS = ["7", "12345678", "123456789", "a" * 16, "b" * 17, "ümlaut-ïd", "x" * 40,
        "id with spaces", "\ufeffbom-inside"]


def _line(rng: random.Random, i: int) -> bytes:
    """One record (or a few lines) of every kind, its id unique by ``i``."""
    pid = f"{rng.choice(_IDS)}-{i}"
    kind = rng.randrange(24)
    text = rng.choice(["plain text", "é ü 𝄞 text", "a\x00b", " ", "x\x0by", ""])
    lines = {
        0: f'{pid}\t"he said ""hi"" twice"\tT',  # quoted, quotes doubled: simple
        1: f'{pid}\t"""quoted"" at start"\tT',
        2: f'{pid}\t"ends ""quoted"""\tT',
        3: f'{pid}\t""""\tT',  # one quote
        4: f'{pid}\t"no inner quote"\tT',  # csv.writer would not quote it
        5: f'{pid}\t""\tT',
        6: f'{pid}\t"tab\tinside"\tT',
        7: f'{pid}\t"line\nbreak ""and"" more\n"\tT',
        8: f'{pid}\ttext\tti"tle',
        9: f'"{pid}"\ttext\tT',
        10: f'{pid}\tte"xt\tT',
        11: f'{pid}\t"a"x\tT',  # text after the closing quote
        12: f'{pid}\t{text}\tT\r',  # CRLF
        13: f'{pid}\ta\tb\r{pid}x\tc\td',  # a lone CR ends a record for csv
        14: "",  # blank
        15: "  ",
        16: f'{pid}\t"unclosed ""q"" \nspans\tlines"\t"title ""q"""',
        17: f"{pid}\t{text}\t{text}",
        18: f'{pid}\t"a ""b""\tc"\tT',  # a tab inside: not simple
        19: f'{pid}\t"a ""b"" c"\t"T"',
    }.get(kind, f"{pid}\t{text} {i}\tTitle {i % 7}")
    return lines.encode("utf-8") + b"\n"


def _corpus(path: Path, n: int, seed: int, *, header: bytes = b"id\ttext\ttitle\n",
            end: bytes = b"") -> Path:
    rng = random.Random(seed)
    data = header + b"".join(_line(rng, i) for i in range(n)) + end
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data, mtime=0))
    else:
        path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bulk-corpora")
    real = d / "real.tsv"
    shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
    write_passages(real, make_passages_module().real_passages(SHARED))
    return {
        "real": real,
        "mixed": _corpus(d / "mixed.tsv", 400, 1),
        "gz": _corpus(d / "mixed.tsv.gz", 300, 2),
        "bom": _corpus(d / "bom.tsv", 200, 3, header=b"\xef\xbb\xbf\n\nID\tText \tTITLE\r\n"),
        # a passage that reads as the header after the header, and no final line break
        "again": _corpus(d / "again.tsv", 200, 4, header=b"id\ttext\ttitle\nid\ttext\ttitle\n",
                         end=b"last\tno\tline break"),
    }


def test_real_passages(corpora: dict[str, Path], tmp_path: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    real = corpora["real"]
    assert b'""' in real.read_bytes()  # quoted texts: read in bulk too
    info = _both(real, tmp_path, 1000, dpr.PASSAGE_BLOCK, monkeypatch)
    assert info.passages == 3349
    _both(real, tmp_path, 100, 4096, monkeypatch)


@pytest.mark.parametrize("name", ["mixed", "gz", "bom", "again"])
@pytest.mark.parametrize(("shard_size", "block"), [(2, 1), (3, 64), (50, 1000),
                                                   (10**6, 1 << 24), (7, 4096)])
def test_generated_corpora(corpora: dict[str, Path], tmp_path: Path, name: str,
                           shard_size: int, block: int,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    _both(corpora[name], tmp_path, shard_size, block, monkeypatch)


def test_crlf_and_simple_lines_share_a_block(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f"{i}\ttext {i}\tT{i}" + ("\r\n" if i % 3 == 0 else "\n") for i in range(300)]
    corpus = tmp_path / "crlf.tsv"
    corpus.write_text("id\ttext\ttitle\r\n" + "".join(lines), encoding="utf-8", newline="")
    assert _both(corpus, tmp_path, 11, 256, monkeypatch).passages == 300


@pytest.mark.parametrize("per_block", [1, 4, 5])
def test_shards_ending_at_block_ends(tmp_path: Path, per_block: int,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines of 20 bytes, blocks of ``per_block`` lines, shards of 4 lines: shards end
    at block ends, inside blocks, or both."""
    lines = [f"{i:06d}\ttext-{i:05d}\tT\n" for i in range(123)]
    assert {len(x) for x in lines} == {20}
    corpus = tmp_path / "even.tsv"
    corpus.write_text("id\ttext\ttitle\n" + "".join(lines), encoding="utf-8")
    info = _both(corpus, tmp_path, 4, 20 * per_block, monkeypatch)
    assert [s.size for s in info.shards] == [4] * 30 + [3]
    offsets = np.load(tmp_path / f"fast-even.tsv-4-{20 * per_block}" / "passages"
                      / "offsets-00001.npy")
    assert offsets.tolist() == [0, 20, 40, 60, 80]  # by hand: 4 records of 20 bytes


# ----------------------------------------------------------------------------- errors

_SIMPLE = "".join(f"{i}\tsimple text {i}\tTitle\n" for i in range(1, 3001))


@pytest.mark.parametrize(("bad", "problem"), [
    (b"2999\tagain\tT\n", "1 passage id occurs more than once ('2999')"),
    (b"\tno id\tT\n", "3002: empty passage id"),
    (b"3001\tonly two fields\n", "3002: expected 3 tab-separated fields"),
    (b"3001\ta\tb\tc\n", "3002: expected 3 tab-separated fields"),
    (b"3001\tbad \xff byte\tT\n", "3002: invalid UTF-8 (byte 0xff at column 10)"),
    (b"3001\tbad \xed\xa0\x80 surrogate\tT\n", "3002: invalid UTF-8"),
    (b'3001\t"never closed\tT\n3002\tx\tT\n', "3002: the quoted field opening on this line"),
    (b'3001\t"two\nlines"\tT\n\t"empty"\tT\n', "3004: empty passage id"),
])
def test_errors_after_many_simple_lines(tmp_path: Path, bad: bytes, problem: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bad line comes after 3,000 simple lines (many blocks of 4 KB): the same error,
    at the same line, as passage by passage."""
    monkeypatch.setattr(dpr, "PASSAGE_BLOCK", 4096)
    corpus = tmp_path / "bad.tsv"
    corpus.write_bytes(b"id\ttext\ttitle\n" + _SIMPLE.encode() + bad + b"9999\tz\tT\n")
    slow = _error(_write_store_slow, corpus, tmp_path / "slow")
    fast = _error(write_store, corpus, tmp_path / "fast")
    assert fast == slow
    assert problem in fast


@pytest.mark.parametrize("pid", ["17", "a" * 16, "b" * 30, "ü" * 9])
def test_duplicates_between_bulk_and_single_lines(tmp_path: Path, pid: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An id read in bulk and the same id read one by one (a quoted title) are found,
    whatever their length (ids are keyed two ways)."""
    monkeypatch.setattr(dpr, "PASSAGE_BLOCK", 64)
    corpus = tmp_path / "dup.tsv"
    corpus.write_text(f"id\ttext\ttitle\n0\tx\tT\n{pid}\tbulk\tT\n1\ty\tT\n"
                      f'{pid}\tsingle\t"quoted ""title"""\n2\tz\tT\n', encoding="utf-8")
    slow = _error(_write_store_slow, corpus, tmp_path / "slow")
    assert _error(write_store, corpus, tmp_path / "fast") == slow
    assert f"1 passage id occurs more than once ({pid!r})" in slow


def test_distinct_ids_that_share_their_first_bytes(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ids = ["1", "1\x00", "a" * 16, "a" * 16 + "b", "a" * 15, "x" * 40, "x" * 39 + "y"]
    corpus = tmp_path / "near.tsv"
    write_passages(corpus, [])  # header only
    with open(corpus, "a", encoding="utf-8") as f:
        f.writelines(f"{pid}\ttext\tT\n" for pid in ids)
    assert _both(corpus, tmp_path, 3, 32, monkeypatch).passages == len(ids)


# ------------------------------------------------------------------------ UTF-8 check

def test_invalid_utf8_positions_agree_with_decode() -> None:
    """Lines flagged by the numpy check are exactly those ``bytes.decode`` refuses."""
    rng = random.Random(5)
    pieces = [b"a", b"\n", *(bytes([b]) for b in (0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
                                                   0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
                                                   0xED, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5,
                                                   0xFF)),
              *(c.encode("utf-8", "surrogatepass") for c in
                ("é", "€", "𝄞", "\u0080", "\u07ff", "\u0800", "\ud7ff", "\ue000",
                 "\uffff", "\U00010000", "\U0010ffff", "\ud800"))]
    for _ in range(2000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 25)))
        arr = np.frombuffer(data, dtype=np.uint8)
        pos = np.flatnonzero(arr >= 0x80)
        nl = np.flatnonzero(arr == 0x0A)
        flagged = set(np.searchsorted(nl, _invalid_utf8(pos, arr[pos])).tolist())
        refused = set()
        for i, line in enumerate(data.split(b"\n")):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                refused.add(i)
        assert flagged == refused, data


def test_truncated_gzip_names_a_line_inside_the_file(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip stream that breaks off is refused at the line the line reader names (the
    one it breaks off in, within one 8 KB read of the stream), not at line 1."""
    monkeypatch.setattr(dpr, "PASSAGE_BLOCK", 1 << 24)  # the whole file in one block
    lines = [f"{i}\ttext number {i}\tT\n" for i in range(1, 60001)]
    data = gzip.compress(("id\ttext\ttitle\n" + "".join(lines)).encode(), mtime=0)
    corpus = tmp_path / "cut.tsv.gz"
    corpus.write_bytes(data[:len(data) // 2])
    messages = [_error(fn, corpus, tmp_path / fn.__name__)
                for fn in (_write_store_slow, write_store)]
    found = []
    for m in messages:
        where, _, problem = m.partition(": ")
        assert problem.startswith("the compressed file is truncated or corrupt")
        found.append(int(where.rpartition(":")[2]))
    assert 10_000 < found[1] == found[0] <= 60_001
