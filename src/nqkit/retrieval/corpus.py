"""Passage corpora in DPR's format: ``id<TAB>text<TAB>title`` with a header line.

DPR (Karpukhin et al. 2020, §4.1) splits Wikipedia into 21,015,324 passages of 100 words
and publishes them as ``psgs_w100.tsv`` (13 GB; gzipped 4.5 GB). Its own loader reads the
file with ``csv.reader(delimiter="\\t")``, so a field may be quoted (``"..."`` with ``""``
for a quote inside): the text field of the official file is quoted whenever it holds a
quote character. This reader takes the same convention, line by line (a passage never
spans lines), streams plain or gzipped files, and names ``file:line`` in every error.

The corpus *fingerprint* is a SHA-256 over every passage's id, text and title in file
order (fields separated by 0x1F, passages by 0x1E), computed while streaming: two index
directories can be combined (hybrid runs) only when their fingerprints are equal, and
every printed number names the fingerprint's first 12 hex digits.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from nqkit.errors import InputError, location
from nqkit.io import PathLike, atomic_output, decode_utf8, expand_paths, iter_lines

__all__ = [
    "HEADER",
    "CorpusFingerprint",
    "Passage",
    "format_passage_line",
    "parse_passage_line",
    "read_passages",
    "write_passages",
]

HEADER = ("id", "text", "title")


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage of a DPR corpus file."""

    id: str  # the passage id (psgs_w100: "1" .. "21015324"), unique in the corpus
    text: str  # the passage text (about 100 words in psgs_w100)
    title: str  # the Wikipedia page title


def _split_quoted(line: str) -> list[str]:
    """Fields of a line holding quotes, as ``csv.reader(delimiter="\\t")`` reads them."""
    return next(csv.reader([line], delimiter="\t"))


def parse_passage_line(line: str, where: str | None) -> Passage:
    """One ``id<TAB>text<TAB>title`` line (without its newline) as a :class:`Passage`."""
    fields = line.split("\t") if '"' not in line else _split_quoted(line)
    if len(fields) != 3:
        raise InputError(where, f"expected 3 tab-separated fields (id, text, title), found "
                         f"{len(fields)}", "each line is id<TAB>text<TAB>title, as in DPR's "
                         "psgs_w100.tsv")
    pid, text, title = fields
    if not pid:
        raise InputError(where, "empty passage id", "give every passage a unique id")
    return Passage(pid, text, title)


def read_passages(path: PathLike, *, with_lines: bool = False
                  ) -> Iterator[Passage] | Iterator[tuple[int, Passage]]:
    """Lazily read a DPR passage file (``.tsv`` or ``.tsv.gz``).

    The first line must be the header ``id<TAB>text<TAB>title``. Yields passages in file
    order (``(line_number, passage)`` pairs with ``with_lines``). A file with a header and
    no passage is refused.
    """
    (p,) = expand_paths(path, what="passage corpus")
    return _read(p, with_lines)


def _read(p: PathLike, with_lines: bool) -> Iterator[Passage] | Iterator[tuple[int, Passage]]:
    seen_header = False
    n = 0
    for lineno, raw in iter_lines(p):
        where = location(p, lineno)
        line = decode_utf8(raw, where).rstrip("\r\n")
        if not seen_header:
            fields = tuple(f.strip().lower() for f in line.split("\t"))
            if fields != HEADER:
                raise InputError(where, f"expected the header id<TAB>text<TAB>title, found "
                                 f"{line!r:.60}", "a DPR passage file starts with the line "
                                 "'id\\ttext\\ttitle'")
            seen_header = True
            continue
        passage = parse_passage_line(line, where)
        n += 1
        yield (lineno, passage) if with_lines else passage
    if not seen_header:
        raise InputError(p, "the passage file is empty", "give a DPR passage file")
    if n == 0:
        raise InputError(p, "the passage file has a header and no passage",
                         "give a file with at least one passage")


class CorpusFingerprint:
    """SHA-256 over ids, texts and titles, updated one passage at a time."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()
        self.count = 0

    def update(self, passage: Passage) -> None:
        self._h.update(passage.id.encode("utf-8"))
        self._h.update(b"\x1f")
        self._h.update(passage.text.encode("utf-8"))
        self._h.update(b"\x1f")
        self._h.update(passage.title.encode("utf-8"))
        self._h.update(b"\x1e")
        self.count += 1

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _field(value: str) -> str:
    # Quote as csv.writer(delimiter="\t") would: only fields holding a quote need it here,
    # since tabs and newlines are replaced by spaces first (a passage is one line).
    value = value.replace("\t", " ").replace("\r", " ").replace("\n", " ")
    if '"' in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def format_passage_line(passage: Passage) -> str:
    """The corpus line of a passage (tabs and newlines inside fields become spaces)."""
    return f"{_field(passage.id)}\t{_field(passage.text)}\t{_field(passage.title)}\n"


def write_passages(path: PathLike, passages: Iterable[Passage]) -> int:
    """Write a DPR passage file (header first; ``.gz`` compresses); returns the count."""
    n = 0
    with atomic_output(path) as f:
        f.write("\t".join(HEADER) + "\n")
        for p in passages:
            f.write(format_passage_line(p))
            n += 1
    return n
