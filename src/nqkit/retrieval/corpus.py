"""Passage corpora in DPR's format: ``id<TAB>text<TAB>title`` with a header line.

DPR (Karpukhin et al. 2020, §4.1) splits Wikipedia into 21,015,324 passages of 100 words
and publishes them as ``psgs_w100.tsv`` (13 GB; gzipped 4.5 GB). Its own loader reads the
file with ``csv.reader(delimiter="\\t")``, so a field may be quoted (``"..."`` with ``""``
for a quote inside): the text field of the official file is quoted whenever it holds a
quote character, and a quoted field may hold tabs and line breaks. This reader (the one of
:mod:`nqkit.formats.dpr`) gives exactly csv.reader's fields, splitting a line without a
quote on its tabs directly; it streams plain or gzipped files and names ``file:line`` (the
line where the passage starts) in every error.

The corpus *fingerprint* is a SHA-256 over every passage's id, text and title in file
order (fields separated by 0x1F, passages by 0x1E), computed while streaming: two index
directories can be combined (hybrid runs) only when their fingerprints are equal, and
every printed number names the fingerprint's first 12 hex digits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

from nqkit.errors import InputError, examples, location
from nqkit.formats.dpr import (
    PASSAGE_HEADER,
    SimpleLines,
    parse_passage_record,
    passage_record,
    read_passage_rows,
    read_passage_runs,
)
from nqkit.io import PathLike, atomic_output, expand_paths, is_regular_file

__all__ = [
    "FIELD_SEP",
    "HEADER",
    "PASSAGE_END",
    "CorpusFingerprint",
    "Passage",
    "PassageIds",
    "format_passage_line",
    "parse_passage_line",
    "read_passages",
    "read_passages_in_runs",
    "write_passages",
]

HEADER = PASSAGE_HEADER
FIELD_SEP = b"\x1f"  # between the fields of a passage, in the fingerprint
PASSAGE_END = b"\x1e"  # after every passage, in the fingerprint


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage of a DPR corpus file."""

    id: str  # the passage id (psgs_w100: "1" .. "21015324"), unique in the corpus
    text: str  # the passage text (about 100 words in psgs_w100)
    title: str  # the Wikipedia page title


def parse_passage_line(line: str, where: str | None) -> Passage:
    """One ``id<TAB>text<TAB>title`` record (without its final newline) as a
    :class:`Passage`; it spans lines when a quoted field holds a line break."""
    return Passage(*parse_passage_record(line, where))


def read_passages(path: PathLike, *, with_lines: bool = False
                  ) -> Iterator[Passage] | Iterator[tuple[int, Passage]]:
    """Lazily read a DPR passage file (``.tsv`` or ``.tsv.gz``).

    The first line must be the header ``id<TAB>text<TAB>title``. Yields passages in file
    order (``(line_number, passage)`` pairs with ``with_lines``, the line where the
    passage starts). A file with a header and no passage is refused. Fields are read as
    DPR's ``csv.reader`` reads them (:func:`nqkit.formats.dpr.read_passage_rows`).
    """
    (p,) = expand_paths(path, what="passage corpus")
    rows = read_passage_rows(p, Passage, header=True)
    return rows if with_lines else map(itemgetter(1), rows)


def read_passages_in_runs(path: PathLike, on_run: Callable[[SimpleLines, int, int], None]
                          ) -> Iterator[Passage]:
    """:func:`read_passages` for a reader that takes passages in bulk: runs of lines that
    are records as :func:`format_passage_line` writes them are handed to ``on_run(block,
    a, b)`` (:func:`nqkit.formats.dpr.read_passage_runs`) between the passages yielded."""
    (p,) = expand_paths(path, what="passage corpus")
    return map(itemgetter(1), read_passage_runs(p, Passage, on_run))


class CorpusFingerprint:
    """SHA-256 over ids, texts and titles, updated one passage at a time."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()
        self.count = 0

    def update(self, passage: Passage) -> None:
        # one update of the concatenation: the digest of the same bytes
        self._h.update(f"{passage.id}\x1f{passage.text}\x1f{passage.title}\x1e".encode())
        self.count += 1

    def update_fields(self, data: bytes | memoryview, count: int) -> None:
        """``count`` passages at once, as :meth:`update` digests them one by one: their
        fields joined by :data:`FIELD_SEP`, each passage ended by :data:`PASSAGE_END`."""
        self._h.update(data)
        self.count += count

    def hexdigest(self) -> str:
        return self._h.hexdigest()


class PassageIds:
    """The ids of a corpus read as a stream, to refuse an id given to two passages (a run
    and a qrels file name passages by id, so such an id names neither).

    While the corpus streams, :meth:`add` keeps 8 bytes a passage (the id's hash; 168 MB
    for psgs_w100's 21 M passages); :meth:`check` then looks for a repeated hash and, only
    when there is one, reads the files again for the ids and lines behind it, so that a
    hash collision is never taken for a duplicate. A file that cannot be read twice (a
    pipe) is named without lines.
    """

    _CHUNK = 1 << 16

    def __init__(self) -> None:
        self._chunks: list[Any] = []
        self._buf: list[int] = []

    def add(self, pid: str) -> None:
        self._buf.append(hash(pid))
        if len(self._buf) >= self._CHUNK:
            self._flush()

    def _flush(self) -> None:
        import numpy as np

        if self._buf:
            self._chunks.append(np.asarray(self._buf, dtype=np.int64))
            self._buf = []

    def check(self, paths: Sequence[Path]) -> None:
        """Raise :class:`~nqkit.errors.InputError` when an id occurred twice in the files
        ``paths`` (those just streamed, in order): at the line of its second passage,
        with the line of the first, the count, and up to three ids."""
        import numpy as np

        self._flush()
        if not self._chunks:
            return
        keys = np.concatenate(self._chunks)
        ordered = np.sort(keys)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        if not repeated.shape[0]:
            return
        suspects = set(repeated.tolist())
        if not all(is_regular_file(p) for p in paths):
            raise InputError(examples(paths, width=None), f"{len(suspects):,} passage id(s) "
                             "occur more than once (the corpus cannot be read again to name "
                             "the lines)", "give every passage a unique id (runs and qrels "
                             "name passages by id)")
        first: dict[str, str] = {}  # id -> where its first passage is
        again: dict[str, str] = {}  # id -> where its second passage is, in file order
        for path in paths:
            for line, pid in read_passage_rows(path, _id_only, header=False, warn=False):
                if hash(pid) not in suspects:
                    continue
                if pid in first:
                    again.setdefault(pid, location(path, line) or str(path))
                else:
                    first[pid] = f"{path}:{line}" if len(paths) > 1 else f"line {line}"
        if not again:
            return  # the hashes collided, the ids differ
        pid, at = next(iter(again.items()))
        more = (f"; {len(again):,} ids occur more than once "
                f"(e.g. {examples(map(repr, again), width=40, more=False)})" if len(again) > 1
                else "")
        raise InputError(at, f"passage id {pid!r:.40} already names the passage at "
                         f"{first[pid]}{more}", "give every passage a unique id (runs and "
                         "qrels name passages by id)")


def _id_only(pid: str, text: str, title: str) -> str:
    return pid


def format_passage_line(passage: Passage) -> str:
    """The corpus record of a passage, as ``csv.writer(delimiter="\\t")`` writes it: a
    field holding a tab, a quote or a line break is quoted (a "\\r" is written "\\n")."""
    return passage_record(passage.id, passage.text, passage.title)


def write_passages(path: PathLike, passages: Iterable[Passage]) -> int:
    """Write a DPR passage file (header first; ``.gz`` compresses); returns the count."""
    n = 0
    with atomic_output(path) as f:
        f.write("\t".join(HEADER) + "\n")
        for p in passages:
            f.write(format_passage_line(p))
            n += 1
    return n
