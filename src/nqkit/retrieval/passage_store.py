"""The passage store of an index directory: the corpus cut into shards, read by row.

``nqkit index build`` streams the corpus once (:func:`write_store`): it checks every
passage, computes the corpus fingerprint, refuses duplicate ids, and writes the passages
in shards of ``shard_size`` consecutive passages as ``passages/shard-NNNNN.tsv`` (the
corpus format without header: one record per passage, which spans lines when a quoted
field holds a line break) with ``offsets-NNNNN.npy`` (the byte offset of every record, and
the end), so passages are read by their offsets, never by lines. Shard jobs read only
their own shard; the run writer reads a passage by its global row through a memory map,
so no process ever holds the corpus in memory.

Nearly every line of a corpus is already the record the store holds (no quote, or only the
text quoted as csv.writer quotes it): such lines are read a 16 MB block at a time and
copied whole, with numpy finding them, their offsets and their ids; every other line is
read passage by passage, with the reader's errors (``write_store(..., bulk=False)``, which
reads every line so, is the reference the bulk reading is tested against).

Duplicate ids are found with a 64-bit key per id (8 bytes a passage, 168 MB for DPR's
21 M passages; never colliding for ids of up to 8 bytes without NUL, such as DPR's; see
:func:`_id_key`) and confirmed on the strings by a second look at the shard files only
when two keys collide.
"""

from __future__ import annotations

import bisect
import mmap
import os
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.errors import InputError, examples
from nqkit.formats.dpr import SimpleLines
from nqkit.io import PathLike
from nqkit.retrieval.corpus import (
    FIELD_SEP,
    PASSAGE_END,
    CorpusFingerprint,
    Passage,
    format_passage_line,
    parse_passage_line,
    read_passages,
    read_passages_in_runs,
)

__all__ = ["PassageStore", "Shard", "StoreInfo", "iter_shard", "mapped_shard",
           "read_shard_bytes", "shard_offsets", "shard_passage", "write_store"]

STORE_DIR = "passages"


@dataclass(frozen=True, slots=True)
class Shard:
    """A range of consecutive passages (global rows ``start`` .. ``stop - 1``)."""

    index: int
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start

    @property
    def name(self) -> str:
        return f"{self.index:05d}"


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What :func:`write_store` found: the fingerprint, the count and the shards."""

    fingerprint: str  # SHA-256 hex over ids, texts and titles (see corpus.py)
    passages: int
    shards: tuple[Shard, ...]


def _shard_paths(root: Path, shard: Shard) -> tuple[Path, Path]:
    d = root / STORE_DIR
    return d / f"shard-{shard.name}.tsv", d / f"offsets-{shard.name}.npy"


_KEY_WORDS = 2  # ids of up to 16 bytes are keyed by their bytes, longer ones by hash()
_KEY_MUL = np.uint64(0x9E3779B97F4A7C15)  # odd: ids of up to 8 bytes never collide


def _id_key(pid: str) -> int:
    """The 64-bit key of an id in the duplicate check, as a run of simple lines computes
    it for its ids at once (:meth:`SimpleLines.id_words`): the id's bytes as two 64-bit
    words w, key = w0 * M + w1 modulo 2**64 (signed); an id longer than 16 bytes is keyed
    by ``hash()`` of its bytes. Equal ids have equal keys; keys that collide are
    confirmed on the ids (:func:`_check_unique`)."""
    raw = pid.encode("utf-8")
    if len(raw) > 8 * _KEY_WORDS:
        return hash(raw)
    key = 0
    for (word,) in struct.iter_unpack("<Q", raw.ljust(8 * _KEY_WORDS, b"\0")):
        key = (key * int(_KEY_MUL) + word) & 0xFFFFFFFFFFFFFFFF
    return key - (1 << 64) if key >> 63 else key


class _StoreWriter:
    """The shard files of a store being written: records added one at a time or in runs,
    a shard closed (with its offsets) every ``shard_size`` passages."""

    def __init__(self, root: Path, shard_size: int) -> None:
        self.root = root
        self.shard_size = shard_size
        self.shards: list[Shard] = []
        self.out: Any = None
        self.offsets: list[np.ndarray] = []  # of the open shard, in runs
        self.loose: list[int] = []  # offsets of single records, not yet in ``offsets``
        self.start = self.at = self.row = 0

    def _open(self) -> None:
        self.start, self.at = self.row, 0
        tsv = _shard_paths(self.root, Shard(len(self.shards), self.row, self.row))[0]
        self.out = open(tsv, "wb")  # noqa: SIM115 - closed by _close or close

    def _close(self) -> None:
        self.offsets.append(np.asarray([*self.loose, self.out.tell()], dtype=np.int64))
        self.out.close()
        shard = Shard(len(self.shards), self.start, self.row)
        np.save(_shard_paths(self.root, shard)[1], np.concatenate(self.offsets))
        self.shards.append(shard)
        self.out, self.offsets, self.loose = None, [], []

    def add(self, record: bytes) -> None:
        if self.out is None:
            self._open()
        self.loose.append(self.at)
        self.out.write(record)
        self.at += len(record)
        self.row += 1
        if self.row - self.start == self.shard_size:
            self._close()

    def add_run(self, records: memoryview, starts: np.ndarray) -> int:
        """Records ``records[starts[j]:starts[j + 1]]`` as many as fit in the open shard;
        returns how many were written."""
        if self.out is None:
            self._open()
        k = min(starts.shape[0] - 1, self.shard_size - (self.row - self.start))
        if self.loose:
            self.offsets.append(np.asarray(self.loose, dtype=np.int64))
            self.loose = []
        self.offsets.append(starts[:k] + (self.at - int(starts[0])))
        size = int(starts[k] - starts[0])
        self.out.write(records[:size])
        self.at += size
        self.row += k
        if self.row - self.start == self.shard_size:
            self._close()
        return k

    def finish(self) -> None:
        if self.out is not None:
            self._close()

    def close(self) -> None:
        if self.out is not None:
            self.out.close()


def write_store(corpus: PathLike, root: PathLike, shard_size: int, *, bulk: bool = True
                ) -> StoreInfo:
    """Stream ``corpus`` into the passage store under ``root`` (a new directory).

    Lines that are records as :func:`format_passage_line` writes them (nearly all) are
    taken a block at a time (:func:`read_passages_in_runs`): copied to the shards as they
    are, their fields digested in one piece, their ids keyed with numpy; the store, the
    fingerprint and the errors are those of reading passage by passage, which
    ``bulk=False`` does for every line (the reference the bulk reading is tested and
    timed against).
    """
    from nqkit.report import progress_bar

    root = Path(root)
    (root / STORE_DIR).mkdir(parents=True, exist_ok=True)
    fp = CorpusFingerprint()
    hashes: list[np.ndarray] = []
    buf: list[int] = []
    w = _StoreWriter(root, shard_size)
    # 21 million passages take minutes to read: counted as they are stored
    bar = progress_bar(desc="storing passages", unit="passage")

    def run(block: SimpleLines, a: int, b: int) -> None:
        nonlocal buf
        if buf:  # the keys stay in row order
            hashes.append(np.asarray(buf, dtype=np.int64))
            buf = []
        while a < b:
            k = w.add_run(block.records(a, b), block.starts[a:b + 1])
            fp.update_fields(block.fields(a, a + k, FIELD_SEP, PASSAGE_END), k)
            words, size = block.id_words(a, a + k, _KEY_WORDS)
            keys = np.zeros(k, dtype=np.uint64)
            for j in range(_KEY_WORDS):
                keys *= _KEY_MUL
                keys += words[:, j]
            keys = keys.view(np.int64)
            long = np.flatnonzero(size == 0)
            if long.shape[0]:
                ids = block.ids(a, a + k)
                keys[long] = [hash(ids[j]) for j in long.tolist()]
            hashes.append(keys)
            a += k
            bar.update(k)

    passages = read_passages_in_runs(corpus, run) if bulk else read_passages(corpus)
    try:
        for p in passages:
            assert isinstance(p, Passage)
            w.add(format_passage_line(p).encode("utf-8"))
            fp.update(p)
            buf.append(_id_key(p.id))
            bar.update()
            if len(buf) >= 1 << 16:
                hashes.append(np.asarray(buf, dtype=np.int64))
                buf = []
        w.finish()
    finally:  # a bad passage ends the build: its open shard is closed, not left to the GC
        w.close()
        bar.close()
    hashes.append(np.asarray(buf, dtype=np.int64))
    _check_unique(np.concatenate(hashes), root, w.shards, corpus)
    return StoreInfo(fp.hexdigest(), fp.count, tuple(w.shards))


def _check_unique(hashes: np.ndarray, root: Path, shards: list[Shard], corpus: PathLike
                  ) -> None:
    order = np.argsort(hashes, kind="stable")
    sorted_h = hashes[order]
    dup = np.flatnonzero(sorted_h[1:] == sorted_h[:-1])
    if not dup.shape[0]:
        return
    suspects = set(order[dup].tolist()) | set(order[dup + 1].tolist())
    store = PassageStore(root, tuple(shards))
    seen: dict[str, int] = {}
    repeated: list[str] = []
    for row in sorted(suspects):
        pid = store.get(row).id
        if pid in seen:
            repeated.append(pid)
        seen.setdefault(pid, row)
    store.close()
    if repeated:
        raise InputError(corpus, f"{len(repeated):,} passage "
                         f"{'ids occur' if len(repeated) > 1 else 'id occurs'} more than once "
                         f"({examples(repeated, quote=True)})",
                         "give every passage a unique id (runs name passages by id)")


def iter_shard(root: PathLike, shard: Shard) -> Iterator[Passage]:
    """The passages of one shard, in order (for shard jobs)."""
    root = Path(root)
    tsv, offs = _shard_paths(root, shard)
    offsets = np.load(offs).tolist()
    with open(tsv, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if offsets[-1] else b""
    try:
        for j in range(len(offsets) - 1):
            yield _record(data, offsets, j, root, shard)
    finally:
        if isinstance(data, mmap.mmap):
            data.close()


def shard_offsets(root: PathLike, shard: Shard) -> np.ndarray:
    """A shard file's record offsets (int64, the end last)."""
    return np.load(_shard_paths(Path(root), shard)[1])


def read_shard_bytes(root: PathLike, shard: Shard, start: int, stop: int, pad: int = 0
                     ) -> bytearray:
    """Bytes ``[start, stop)`` of a shard file (offsets from :func:`shard_offsets`) and
    ``pad`` zero bytes after them, in a buffer numpy can view and write: for shard jobs
    that read a range of records at once (one copy of their bytes, not two)."""
    tsv = _shard_paths(Path(root), shard)[0]
    buf = bytearray(stop - start + pad)
    view = memoryview(buf)[:stop - start]
    with open(tsv, "rb", buffering=0) as f:
        f.seek(start)
        done = 0
        while done < len(view):  # one read gives at most ~2 GB
            got = f.readinto(view[done:])
            if not got:
                raise InputError(tsv, f"ends at byte {start + done}, its offsets say "
                                 f"{stop}", "rebuild the index")
            done += got
    view.release()
    return buf


@contextmanager
def mapped_shard(root: PathLike, shard: Shard) -> Iterator[mmap.mmap | bytes]:
    """A shard file's bytes, memory-mapped, for :func:`shard_passage`."""
    tsv = _shard_paths(Path(root), shard)[0]
    with open(tsv, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(
            f.fileno()).st_size else b""
    try:
        yield data
    finally:
        if isinstance(data, mmap.mmap):
            data.close()


def shard_passage(data: mmap.mmap | bytes, offsets: np.ndarray, j: int, root: PathLike,
                  shard: Shard) -> Passage:
    """Passage ``j`` of a shard (:func:`mapped_shard`; as :func:`iter_shard` gives
    it, with its error for a damaged record)."""
    return _record(data, offsets, j, Path(root), shard)


def _record(data: mmap.mmap | bytes, offsets: Sequence[int] | np.ndarray, j: int,
            root: Path, shard: Shard) -> Passage:
    """Passage ``j`` of a shard file: the bytes between its offset and the next (one
    record, which spans lines when a quoted field holds a line break)."""
    start = int(offsets[j])
    raw = data[start:int(offsets[j + 1])]
    try:
        return parse_passage_line(raw.decode("utf-8").removesuffix("\n"), None)
    except (InputError, UnicodeDecodeError) as e:  # a damaged store: name the line
        tsv = _shard_paths(root, shard)[0]
        line = data[:start].count(b"\n") + 1
        raise InputError(f"{tsv}:{line}", f"unreadable passage in the index's passage store "
                         f"({e})", "rebuild the index") from None


class PassageStore:
    """Passages by global row, read through memory maps of the shard files."""

    def __init__(self, root: PathLike, shards: tuple[Shard, ...]) -> None:
        self.root = Path(root)
        self.shards = shards
        self.starts = [s.start for s in shards]
        self._maps: dict[int, tuple[mmap.mmap, np.ndarray]] = {}

    def _open(self, i: int) -> tuple[mmap.mmap, np.ndarray]:
        if i not in self._maps:
            tsv, offs = _shard_paths(self.root, self.shards[i])
            with open(tsv, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
            offsets = np.load(offs, mmap_mode="r")
            self._maps[i] = (m, offsets)  # type: ignore[assignment]
        return self._maps[i]

    def get(self, row: int) -> Passage:
        i = bisect.bisect_right(self.starts, row) - 1
        shard = self.shards[i]
        if not 0 <= row - shard.start < shard.size:
            raise IndexError(row)
        m, offsets = self._open(i)
        return _record(m, offsets, row - shard.start, self.root, shard)

    def ids(self, rows: Sequence[int]) -> list[str]:
        """The ids of the passages at ``rows`` (ascending rows read fastest): each read
        from the start of its record up to the first tab, and parsed as :meth:`get`
        parses it only when that field is quoted (it may then hold a tab or a quote)."""
        out: list[str] = []
        append = out.append
        starts = self.starts
        i, lo, hi = -1, 0, 0
        m: Any = None
        offs: Any = None
        for row in rows:
            if not lo <= row < hi:
                i = bisect.bisect_right(starts, row) - 1
                shard = self.shards[i]
                lo, hi = shard.start, shard.stop
                if not lo <= row < hi:
                    raise IndexError(row)
                m, offsets = self._open(i)
                offs = offsets.tolist()  # scalar reads of a memory map are slow
            j = row - lo
            start = offs[j]
            tab = m.find(b"\t", start, offs[j + 1])
            if tab < 0 or m[start] == 0x22:  # no tab: a damaged store, which get() names
                append(_record(m, offs, j, self.root, self.shards[i]).id)
                continue
            try:
                append(m[start:tab].decode("utf-8"))
            except UnicodeDecodeError:
                append(_record(m, offs, j, self.root, self.shards[i]).id)
        return out

    def close(self) -> None:
        for m, _ in self._maps.values():
            if m is not None:
                m.close()
        self._maps.clear()
