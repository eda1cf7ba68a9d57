"""DPR formats (Karpukhin et al. 2020): retrieval results, bi-encoder data, QA TSV files.

* Retrieval results (``dense_retriever.py`` output): a JSON list of ``{"question",
  "answers": [...], "ctxs": [{"id", "title", "text", "score", "has_answer"?}, ...]}`` with
  the contexts in rank order.
* Bi-encoder training/dev data (``biencoder-nq-dev.json``): a JSON list of ``{"question",
  "answers", "positive_ctxs", "negative_ctxs", "hard_negative_ctxs"}``; contexts carry
  ``title``, ``text`` and ``passage_id``.
* QA files (``nq-dev.qa.tsv``): ``question<TAB>python-list-of-answers`` per line.
* The passage corpus (``psgs_w100.tsv``): a header ``id<TAB>text<TAB>title``, then one
  passage per record, read exactly as DPR's ``csv.reader(delimiter="\t")`` reads it: a
  quoted field (``"..."`` with ``""`` for a quote) may hold tabs and line breaks. One
  reader (:func:`read_passage_rows`) and its mirror (:func:`passage_record`) serve every
  command.
"""

from __future__ import annotations

import ast
import csv
import itertools
import math
import re
import zlib
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import orjson

from nqkit.errors import MAX_EXAMPLES, InputError, location
from nqkit.io import (
    PathLike,
    PathsLike,
    decode_utf8,
    expand_paths,
    is_regular_file,
    iter_line_blocks,
    iter_lines,
    open_binary,
    read_json,
)

__all__ = [
    "PASSAGE_HEADER",
    "DprBiencoderExample",
    "DprContext",
    "DprResult",
    "SimpleLines",
    "parse_passage_record",
    "passage_record",
    "read_dpr_biencoder",
    "read_dpr_passages",
    "read_dpr_qa_tsv",
    "read_dpr_results",
    "read_passage_rows",
    "read_passage_runs",
]


@dataclass(frozen=True, slots=True)
class DprContext:
    """One retrieved or annotated Wikipedia passage."""

    id: str  # passage id in psgs_w100 (``id`` or ``passage_id``), "" when absent
    title: str
    text: str
    score: float | None = None  # retriever score, when given
    has_answer: bool | None = None  # the file's own answer flag, when given


@dataclass(frozen=True, slots=True)
class DprResult:
    """The ranked passages retrieved for one question."""

    question: str
    answers: tuple[str, ...]
    ctxs: tuple[DprContext, ...]  # in rank order


@dataclass(frozen=True, slots=True)
class DprBiencoderExample:
    """One bi-encoder example with its positive and negative passages."""

    question: str
    answers: tuple[str, ...]
    positive_ctxs: tuple[DprContext, ...]
    negative_ctxs: tuple[DprContext, ...]
    hard_negative_ctxs: tuple[DprContext, ...]


def _answers(obj: dict[str, Any], where: str) -> tuple[str, ...]:
    answers = obj.get("answers")
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise InputError(where, f"'answers' must be a list of strings, found {answers!r:.60}",
                         "each item needs \"answers\": [\"...\"]")
    return tuple(answers)


def _score(value: Any, where: str) -> float | None:
    """A context's score: a number, or a numeric string (DPR writes ``str(score)``)."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        score = float(value)
    elif isinstance(value, str):
        try:
            score = float(value)
        except ValueError:
            score = math.nan
    else:
        score = math.nan
    if math.isnan(score):
        raise InputError(where, f"'score' must be a number, found {value!r:.40}",
                         'write the retriever score as a number, e.g. "score": 81.2')
    return score


def _context(obj: Any, where: str) -> DprContext:
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        raise InputError(where, f"a context must be an object with a string 'text', found "
                         f"{obj!r:.60}", 'contexts look like {"id", "title", "text", "score"}')
    pid = obj.get("id", obj.get("passage_id", ""))
    flag = obj.get("has_answer", obj.get("hasanswer"))
    return DprContext(
        id=str(pid) if pid is not None else "",
        title=str(obj.get("title") or ""),
        text=obj["text"],
        score=_score(obj.get("score"), where),
        has_answer=bool(flag) if flag is not None else None,
    )


def _plain_context(obj: Any) -> DprContext | None:
    """:func:`_context` of the common case at a third of its cost (string id, title and
    text, a float score, a boolean or absent flag, as nqkit and most tools write them);
    ``None`` for anything else, which :func:`_context` then reads or refuses."""
    if type(obj) is not dict:
        return None
    text, pid, title, score = obj.get("text"), obj.get("id"), obj.get("title"), obj.get("score")
    flag = obj.get("has_answer")
    if flag is None:
        flag = obj.get("hasanswer")
    if (type(text) is str and type(pid) is str and type(title) is str
            and type(score) is float and score == score and (flag is None or type(flag) is bool)):
        return DprContext(pid, title, text, score, flag)
    return None


def _items(path: PathLike, what: str) -> list[Any]:
    data = read_json(path, what=what)
    if not isinstance(data, list):
        raise InputError(path, f"expected a JSON list of questions, found {type(data).__name__}",
                         f"give a DPR {what} file (a JSON list)")
    if not data:
        raise InputError(path, f"the {what} file holds no question", "give a non-empty file")
    return data


def _question(obj: Any, where: str, keys: str) -> str:
    if not isinstance(obj, dict):
        raise InputError(where, f"expected an object, found {type(obj).__name__}",
                         f"each item looks like {{{keys}}}")
    q = obj.get("question")
    if not isinstance(q, str):
        raise InputError(where, "missing string 'question'", f"each item looks like {{{keys}}}")
    return q


def _stream_items(path: PathLike, what: str) -> Iterator[Any]:
    """The items of a JSON list file one at a time, in bounded memory when the list is
    laid out one item per run of lines: ``[`` alone on the first line, each item starting
    on a line of its own and ending on a line that ends with ``}`` or ``},`` at the item's
    first indentation, ``]`` alone on the last line. That is both nqkit's layout (one item
    per line) and DPR's ``json.dump(..., indent=4)``; JSON strings hold no raw newline, so
    a line's indentation is the layout's. Any other file is read whole
    (:func:`_items`), and so is one where the layout breaks down (a truncated or
    malformed file then gives :func:`_items`'s error, the items already yielded are not
    yielded again)."""
    paths = expand_paths(path, what=what)
    yielded = 0
    if len(paths) == 1 and is_regular_file(paths[0]):
        stream = _streamed(paths[0])
        try:
            for item in stream:
                yield item
                yielded += 1
        except _NotStreamable:
            pass
        else:
            if yielded:
                return
    # not the layout: the whole file, as before (its errors included)
    yield from itertools.islice(_items(path, what), yielded, None)


_MISSES = 16  # failed tries to end one item before a file is read whole


class _NotStreamable(Exception):
    """The file is not laid out as :func:`_stream_items` reads it."""


def _streamed(path: PathLike) -> Iterator[Any]:
    lines: Iterator[bytes]
    try:
        f = open_binary(path)
    except OSError:
        raise _NotStreamable from None
    with f:
        lines = iter(f)
        try:
            head = next(lines, b"")
            if head.strip() != b"[":
                raise _NotStreamable
            buf: list[bytes] = []
            indent = misses = 0
            for line in lines:
                body = line.strip()
                if not buf:
                    if body == b"]":
                        break
                    if not body:
                        continue
                    indent = len(line) - len(line.lstrip())
                buf.append(line)
                if not (body.endswith((b"}", b"},"))
                        and len(line) - len(line.lstrip()) == indent):
                    continue
                text = b"".join(buf).strip()
                if text.endswith(b","):
                    text = text[:-1]
                try:
                    item = orjson.loads(text)
                except orjson.JSONDecodeError:
                    # not the item's end after all: read on, unless the layout makes every
                    # context look like an item's end (``indent=0``): each try re-reads the
                    # item so far, so the whole file is read at once instead
                    misses += 1
                    if misses > _MISSES:
                        raise _NotStreamable from None
                    continue
                buf = []
                misses = 0
                yield item
            else:
                raise _NotStreamable  # no closing bracket
            if buf or any(not line.isspace() for line in lines):
                raise _NotStreamable
        except (EOFError, OSError, zlib.error):  # truncated or corrupt: read whole
            raise _NotStreamable from None


def read_dpr_results(path: PathLike) -> Iterator[DprResult]:
    """Read DPR retrieval results; contexts keep the file's order (rank order).

    Lazy: a file written by ``nqkit retrieve`` or by DPR is read one question at a time
    (:func:`_stream_items`), so memory is bounded by one question's contexts."""
    for i, obj in enumerate(_stream_items(path, "retrieval results")):
        where = f"{path}: question {i}"
        q = _question(obj, where, "question, answers, ctxs")
        ctxs = obj.get("ctxs")
        if not isinstance(ctxs, list):
            raise InputError(where, "missing list 'ctxs'",
                             "each item looks like {question, answers, ctxs: [...]}")
        yield DprResult(q, _answers(obj, where),
                        tuple(_plain_context(c) or _context(c, f"{where}, ctxs[{j}]")
                              for j, c in enumerate(ctxs)))


def read_dpr_biencoder(path: PathLike) -> Iterator[DprBiencoderExample]:
    """Read a DPR bi-encoder file (positive, negative and hard negative contexts)."""
    keys = "question, answers, positive_ctxs, negative_ctxs, hard_negative_ctxs"
    for i, obj in enumerate(_items(path, "bi-encoder")):
        where = f"{path}: question {i}"
        q = _question(obj, where, keys)
        lists = []
        for key in ("positive_ctxs", "negative_ctxs", "hard_negative_ctxs"):
            value = obj.get(key, [])
            if not isinstance(value, list):
                raise InputError(where, f"{key!r} must be a list",
                                 f"each item looks like {{{keys}}}")
            lists.append(tuple(_context(c, where) for c in value))
        yield DprBiencoderExample(q, _answers(obj, where), *lists)


def read_dpr_qa_tsv(paths: PathLike) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Yield ``(question, answers)`` of DPR QA files: ``question<TAB>['a', 'b']`` (DPR's
    ``.qa.tsv``, and its ``.qa.csv`` files, which are tab-separated too), or comma-separated
    ``question,"['a', 'b']"`` in a ``.csv`` file whose lines have no tab."""
    for _, question, answers in iter_dpr_qa(paths):
        yield question, answers


def iter_dpr_qa(paths: PathLike) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """:func:`read_dpr_qa_tsv` with each line's place: ``(file:line, question, answers)``."""
    for path in expand_paths(paths, what="QA TSV"):
        comma = path.name.endswith((".csv", ".csv.gz")) and b"\t" not in _first_line(path)
        for lineno, raw in iter_lines(path):
            where = location(path, lineno)
            line = decode_utf8(raw, where).rstrip("\r\n")
            if comma:
                fields = next(csv.reader([line]))
                if len(fields) != 2:
                    raise InputError(where, f"expected 2 fields (question, answers), found "
                                     f"{len(fields)}", "each line is question,['answer', ...] "
                                     "(or tab-separated)")
                question, answers_text = fields
            else:
                question, sep, answers_text = line.partition("\t")
                if not sep:
                    raise InputError(where, "expected question<TAB>answers, found no tab",
                                     "each line is: question<TAB>['answer', ...]")
            try:
                answers = ast.literal_eval(answers_text)
            except (ValueError, SyntaxError) as e:
                raise InputError(where, f"the answers are not a Python list literal ({e})",
                                 "write answers as ['a', 'b']") from e
            if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                raise InputError(where, "the answers must be a list of strings",
                                 "write answers as ['a', 'b']")
            yield where or str(path), question, tuple(answers)


def _first_line(path: PathLike) -> bytes:
    for _, raw in iter_lines(path):
        return raw
    return b""


# ------------------------------------------------------------------------- passage files
#
# DPR reads psgs_w100.tsv with ``csv.reader(open(path), delimiter="\t")`` (and
# ``gzip.open(path, "rt")`` for .gz): Python's text mode, so "\r\n" and a lone "\r" end a
# line as "\n" does, and csv's default dialect: a field that starts with a quote runs to
# the next quote not doubled (tabs and line breaks included), "" inside it is one quote,
# and whatever follows its closing quote up to the next tab is kept literally; a quote
# anywhere else is an ordinary character. The reader below gives exactly csv.reader's
# fields, splitting on tabs directly when a line holds no quote (nearly every line).

PASSAGE_HEADER = ("id", "text", "title")
# Characters a quoted field may hold before its quote is taken for one that is never
# closed (csv.reader's own default limit, which DPR's loader keeps, is 131,072): a stray
# quote would otherwise read the rest of a 13 GB file into one field.
MAX_QUOTED = 1 << 20

# Inside a quoted field: its characters up to the closing quote (doubled quotes included),
# then, when the quote closes here, the rest of the field up to a tab or line end.
_QUOTED = re.compile(r'([^"]*(?:""[^"]*)*)(?:(")([^\t\n]*))?')
_PLAIN = re.compile(r"[^\t\n]*")
_BLANK = " \x0b\x0c"  # with nothing else, a line is blank (skipped, as iter_lines does)


class _StrictTsv(csv.excel_tab):
    """csv.reader's dialect for DPR's files, strict: a line whose quoted field is still
    open at its end raises instead of ending the record (the line is then read with the
    lines that follow)."""

    strict = True


_STRICT_TSV = _StrictTsv()
_Make = TypeVar("_Make")


class _UnclosedQuote(Exception):
    """A quoted field whose closing quote never comes (``line`` is where it opens)."""

    def __init__(self, line: int, eof: bool) -> None:
        super().__init__(line)
        self.line = line
        self.eof = eof


def _unclosed_error(where: str | None, eof: bool) -> InputError:
    found = ("is never closed (csv.reader would read the rest of the file into this field)"
             if eof else f"is not closed within {MAX_QUOTED:,} characters")
    return InputError(where, f"the quoted field opening on this line {found}",
                      'end the field with a quote, and write a quote inside it as ""')


def _split_fields(text: str, lineno: int, more: Callable[[], tuple[int, str] | None] | None
                  ) -> tuple[list[str], int, str]:
    """The fields of the record that starts ``text``, as csv.reader reads them.

    ``text`` holds line breaks only as "\\n"; a quoted field still open at its end goes on
    with the lines ``more`` returns (``(line number, text)``, ``None`` at the end of the
    file). Returns the fields, the position after the record and the text it ends in (the
    last line read). Raises :class:`_UnclosedQuote`.
    """
    fields: list[str] = []
    pos = 0
    while True:
        if text.startswith('"', pos):
            opened = lineno
            m = _QUOTED.match(text, pos + 1)
            assert m is not None  # every group may be empty
            value = m.group(1)
            if m.group(2) is None:  # the field runs on: each line adds all of itself
                parts = [value]
                size = len(value)
                while m.group(2) is None:
                    nxt = more() if more is not None else None
                    if nxt is None:
                        raise _UnclosedQuote(opened, eof=True)
                    lineno, text = nxt
                    m = _QUOTED.match(text)
                    assert m is not None
                    parts.append(m.group(1))
                    size += len(parts[-1])
                    if size > MAX_QUOTED:
                        raise _UnclosedQuote(opened, eof=False)
                value = "".join(parts)  # a line ends in "\n": no "" is cut in two
            if '""' in value:
                value = value.replace('""', '"')
            rest = m.group(3)
            fields.append(value + rest if rest else value)
            pos = m.end()
        else:
            m = _PLAIN.match(text, pos)
            assert m is not None
            fields.append(m.group())
            pos = m.end()
        if pos == len(text) or text[pos] == "\n":
            return fields, min(pos + 1, len(text)), text
        pos += 1  # a tab: the next field


def _universal(text: str) -> str:
    """``text`` with "\\r\\n" and a lone "\\r" made "\\n", as Python's text mode reads it."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _Lines:
    """The lines of a passage file as DPR's loader sees them, numbered by physical line
    (a lone "\\r" ends a line for csv.reader, not for ``wc -l`` or an editor: the lines it
    splits off keep the number of the line they are on)."""

    def __init__(self, path: PathLike, raw: Iterator[tuple[int, bytes]],
                 more: Iterator[tuple[int, bytes]] | None = None) -> None:
        self.path = path
        self.raw = raw  # every line, for the loop over records
        self.more = raw if more is None else more  # the same lines, inside a record
        self.pending: deque[tuple[int, str]] = deque()
        self.last = 0  # the physical line the record being read last took
        self.passage_like = False  # a line it took after its first holds two tabs
        self.merged = 0  # records that took lines looking like passages of their own
        self.merged_at: list[tuple[int, int]] = []  # the first few: (line, lines taken)

    def decode(self, lineno: int, raw: bytes) -> str:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = decode_utf8(raw, location(self.path, lineno))
        if lineno == 1 and text.startswith("\ufeff"):
            text = text[1:]  # a byte order mark is no part of the header
        return text

    def split(self, lineno: int, text: str) -> tuple[int, str]:
        """The first line of ``text`` (a physical line); the others wait in ``pending``."""
        if "\r" not in text:
            return lineno, text
        pieces = _universal(text).split("\n")
        lines = [p + "\n" for p in pieces[:-1]]
        if pieces[-1]:
            lines.append(pieces[-1])
        self.pending.extend((lineno, line) for line in lines[1:])
        return lineno, lines[0]

    def next(self) -> tuple[int, str] | None:
        """The next line, taken by a quoted field that runs on."""
        if self.pending:
            item = self.pending.popleft()
        else:
            for lineno, raw in self.more:
                item = self.split(lineno, self.decode(lineno, raw))
                break
            else:
                return None
        self.last = item[0]
        if item[1].count("\t") >= 2:
            self.passage_like = True
        return item

    def records(self, lineno: int, text: str) -> Iterator[tuple[int, list[str], str]]:
        """Every record starting on this physical line: ``(line, fields, first line)``,
        each before the next is read (a later one may be an error)."""
        item = self.split(lineno, text)
        while True:
            lineno, text = item
            self.last, self.passage_like = lineno, False
            try:
                fields = _split_fields(text, lineno, self.next)[0]
            except _UnclosedQuote as e:
                raise _unclosed_error(location(self.path, e.line), e.eof) from None
            if self.last > lineno and self.passage_like:
                self._merged(lineno, self.last - lineno)
            yield lineno, fields, text
            if not self.pending:
                return
            item = self.pending.popleft()

    def _merged(self, line: int, taken: int) -> None:
        self.merged += 1
        if len(self.merged_at) < MAX_EXAMPLES:
            self.merged_at.append((line, taken))

    def warn_merged(self) -> None:
        """One warning for the records that took lines looking like passages of their own
        (two tabs or more): a stray quote opening a field, which csv.reader (and so DPR)
        runs on to the next quote, reading several passages as one. They are read as DPR
        reads them; a quoted field holding line breaks of its own (``passage_record``
        writes one for a text with a line break) takes lines without tabs and is no
        concern."""
        if not self.merged:
            return
        from nqkit.report import warn

        n = self.merged
        shown = ", ".join(f"line {a:,} (+{k:,} line{'s' if k > 1 else ''}, to {a + k:,})"
                          for a, k in self.merged_at)
        rest = n - len(self.merged_at)
        warn(f"{self.path}: {n:,} quoted field{'s run' if n > 1 else ' runs'} on over the "
             "lines that follow, which look like passages of their own; as DPR's csv.reader "
             f"reads the file, each is one passage: {shown}"
             f"{f' and {rest:,} more' if rest else ''} — if a quote is stray, remove it "
             '(a quote inside a quoted field is written "")')


def _field_count_error(where: str | None, n: int, quoted: bool) -> InputError:
    fix = "each record is id<TAB>text<TAB>title, as in DPR's psgs_w100.tsv"
    if quoted:
        fix = ("the record holds a quote: as in csv.reader, a field opening with a quote "
               "runs to its closing quote, across tabs and lines")
    return InputError(where, f"expected 3 tab-separated fields (id, text, title), found {n}",
                      fix)


def _empty_id(where: str | None) -> InputError:
    return InputError(where, "empty passage id", "give every passage a unique id")


def read_passage_rows(path: PathLike, make: Callable[[str, str, str], _Make], *,
                      header: bool = True, ids: Collection[str] | None = None,
                      warn: bool = True) -> Iterator[tuple[int, _Make]]:
    """Lazily read one DPR passage file (``.tsv`` or ``.tsv.gz``): ``(line, make(id, text,
    title))`` per passage, in file order, ``line`` the line where the passage starts.

    The fields are exactly those of DPR's loader, ``csv.reader(delimiter="\\t")`` over the
    file opened in text mode: quoted fields may hold tabs, quotes (doubled) and line
    breaks ("\\r\\n" and "\\r" read as "\\n"). A byte order mark before the header is
    dropped (DPR would read it into the header's id). Blank lines are skipped. The first
    record must be the header ``id<TAB>text<TAB>title`` with ``header`` (then a file with
    no passage is refused), and is skipped when it is the header otherwise. With ``ids``,
    only those passages are built (the others are skipped on their id, mostly unparsed).

    Raises :class:`InputError` at ``file:line`` for a record that is not 3 fields, an
    empty id, a quote that is never closed (at the line it opens) and invalid UTF-8.
    A quoted field that runs on over lines looking like passages of their own (a stray
    quote: csv.reader reads several passages as one) is read as DPR reads it, and one
    warning when the file ends names where (``warn=False``: none, for a second pass).
    """
    return _passage_rows(path, iter_lines(path, blank=True), make, header, ids, warn=warn)


def _passage_rows(path: PathLike, raw_lines: Iterator[tuple[int, bytes]],
                  make: Callable[[str, str, str], _Make], header: bool,
                  ids: Collection[str] | None,
                  more: Iterator[tuple[int, bytes]] | None = None, *, warn: bool = True
                  ) -> Iterator[tuple[int, _Make]]:
    """:func:`read_passage_rows` over ``(line number, bytes)`` of every line of ``path``
    (``more``: the lines a record spanning lines goes on with, the same lines as
    ``raw_lines`` when not given; :func:`read_passage_runs` hands out both)."""
    wanted_ids = None if ids is None else set(ids)
    wanted = None if ids is None else {i.encode("utf-8") for i in ids}
    lines = _Lines(path, raw_lines, more)
    need_header = True
    n = 0
    for lineno, raw in lines.raw:
        if (wanted is not None and not need_header and b'"' not in raw
                and raw.partition(b"\t")[0] not in wanted and _no_lone_cr(raw)):
            continue
        text = lines.decode(lineno, raw)
        body = text.rstrip("\r\n")
        if '"' not in body and "\r" not in body:  # no quote: csv.reader splits on tabs
            fields = body.split("\t")
            if len(fields) == 3 and fields[0] and not need_header:
                n += 1
                yield lineno, make(*fields)
                continue
            records: Iterable[tuple[int, list[str], str]] = [(lineno, fields, body)]
        elif "\r" not in body and text.endswith("\n"):
            # csv.reader itself when the line holds the whole record (in strict mode, a
            # quoted field still open at the line's end is an error, not a record);
            # anything else it refuses is read with the rest of the record below
            try:
                records = [(lineno, next(csv.reader((text,), _STRICT_TSV)), body)]
            except csv.Error:
                records = lines.records(lineno, text)
        else:
            records = lines.records(lineno, text)
        for lineno, fields, first in records:
            quoted = '"' in first
            if len(fields) == 1 and not quoted and not fields[0].strip(_BLANK):
                continue  # a blank line (csv.reader gives no field, or one of spaces)
            if need_header:
                need_header = False
                if tuple(f.strip().lower() for f in fields) == PASSAGE_HEADER:
                    continue
                if header:
                    raise InputError(location(path, lineno), "expected the header "
                                     f"id<TAB>text<TAB>title, found {first.rstrip()!r:.60}",
                                     "a DPR passage file starts with the line "
                                     "'id\\ttext\\ttitle'")
            if len(fields) != 3:
                raise _field_count_error(location(path, lineno), len(fields), quoted)
            if not fields[0]:
                raise _empty_id(location(path, lineno))
            if wanted_ids is not None and fields[0] not in wanted_ids:
                continue
            n += 1
            yield lineno, make(*fields)
    if warn:
        lines.warn_merged()
    if header and need_header:
        raise InputError(path, "the passage file is empty", "give a DPR passage file")
    if header and n == 0 and ids is None:
        raise InputError(path, "the passage file has a header and no passage",
                         "give a file with at least one passage")


def _no_lone_cr(raw: bytes) -> bool:
    """No "\\r" but the one of a "\\r\\n" ending (a lone "\\r" ends a record in text mode)."""
    cr = raw.find(b"\r")
    return cr < 0 or cr >= len(raw) - 2


# --------------------------------------------------------------- passage files in bulk
#
# Nearly every line of a passage file is a whole record whose fields need no parsing:
# ``id<TAB>text<TAB>title`` with no quote and no "\r" (split on its two tabs), or with the
# text field quoted as csv.writer quotes a field holding a quote ("..." with every inner
# quote doubled, and nothing else quoted). Such a *simple* line is exactly the record
# :func:`passage_record` writes for the passage it holds, so a store can copy it as it is.
# :func:`read_passage_runs` finds simple lines a block at a time with numpy and hands runs
# of them over in bulk; every other line (the header, a blank line, a "\r", a field count
# other than 3, an empty id, a quote anywhere else, invalid UTF-8, a last line without its
# line break) goes through :func:`_passage_rows` as before, with its errors.

PASSAGE_BLOCK = 1 << 24  # bytes of the file scanned at a time by read_passage_runs


class SimpleLines:
    """One block of whole lines of a passage file, with which of them are simple.

    ``starts[i]`` is where line ``i`` starts in ``data`` (``starts[n]``, the end); line
    ``i`` is line number ``first_line + i`` of the file. Only the lines a run names
    (:func:`read_passage_runs`) are passages read in bulk.
    """

    def __init__(self, data: bytes | memoryview, first_line: int) -> None:
        self.data = data
        self.first_line = first_line
        arr = np.frombuffer(data, dtype=np.uint8)
        self._arr = arr
        special = arr < 0x0E  # tab, line feed, carriage return (and rarer controls)
        special |= arr == 0x22
        special |= arr >= 0x80
        pos = np.flatnonzero(special)  # one pass over the block, then only these bytes
        val = arr[pos]
        nl, tab = pos[val == 0x0A], pos[val == 0x09]
        whole = nl.shape[0]
        n = whole + (whole == 0 or int(nl[-1]) != len(arr) - 1) if len(arr) else 0
        starts = np.empty(n + 1, dtype=np.int64)
        starts[0] = 0
        starts[1:whole + 1] = nl + 1
        starts[n] = len(arr)
        self.n = n
        self.starts = starts
        ntab = np.bincount(np.searchsorted(nl, tab), minlength=n)[:n]
        simple = ntab == 2
        if n > whole:
            simple[whole] = False  # no line break: read one by one
        simple[np.searchsorted(nl, pos[val == 0x0D])] = False
        first = np.cumsum(ntab) - ntab  # index in tab of each line's first tab
        rows = np.flatnonzero(simple)
        t1 = np.zeros(n, dtype=np.int64)
        t2 = np.zeros(n, dtype=np.int64)
        t1[rows] = tab[first[rows]]
        t2[rows] = tab[first[rows] + 1]
        simple[rows[t1[rows] == starts[rows]]] = False  # an empty id
        self.id_ends = t1
        self.unquoted_starts = starts
        self._drop: np.ndarray | None = None
        self._joined: tuple[bytes, bytes, np.ndarray] | None = None
        quote = pos[val == 0x22]
        if quote.shape[0]:
            self._quotes(quote, nl, n, simple, t1, t2)
        high = val >= 0x80
        bad = _invalid_utf8(pos[high], val[high])
        simple[np.searchsorted(nl, bad)] = False  # to be refused, one by one
        self.simple = simple
        self._tab, self._nl = tab, nl
        self._slow = np.flatnonzero(~simple)

    def _quotes(self, quote: np.ndarray, nl: np.ndarray, n: int, simple: np.ndarray,
                t1: np.ndarray, t2: np.ndarray) -> None:
        """Lines with a quote stay simple only when the text field alone is quoted, with
        at least one quote inside it, each doubled: ``"a ""b"" c"``. The fields read
        from them lack the field's outer quotes and doubling (``_drop``)."""
        qline = np.searchsorted(nl, quote)
        nq = np.bincount(qline, minlength=n)[:n]
        qfirst = np.cumsum(nq) - nq
        k = np.arange(quote.shape[0]) - qfirst[qline]  # index of each quote in its line
        inner = (k % 2 == 1) & (k < nq[qline] - 1)  # the first of each doubled quote
        quoted = simple & (nq >= 4) & (nq % 2 == 0)
        rows = np.flatnonzero(quoted)
        firstq = qfirst[rows]
        quoted[rows] = ((quote[firstq] == t1[rows] + 1)
                        & (quote[firstq + nq[rows] - 1] == t2[rows] - 1))
        g = np.flatnonzero(inner)
        quoted[qline[g[quote[g + 1] != quote[g] + 1]]] = False  # not doubled
        simple &= (nq == 0) | quoted
        drop = quote[quoted[qline] & ~inner]
        if drop.shape[0]:
            self._drop = drop
            self.unquoted_starts = self.starts - np.searchsorted(drop, self.starts)

    def next_slow(self, i: int) -> int:
        """The first line from ``i`` on that is not simple (``n`` when none is)."""
        j = int(np.searchsorted(self._slow, i))
        return int(self._slow[j]) if j < self._slow.shape[0] else self.n

    def line(self, i: int) -> bytes:
        """Line ``i``, its line break included."""
        return bytes(self.data[int(self.starts[i]):int(self.starts[i + 1])])

    def records(self, a: int, b: int) -> memoryview:
        """Lines ``a`` .. ``b - 1``: the records passage_record writes for them."""
        return memoryview(self.data)[int(self.starts[a]):int(self.starts[b])]

    def fields(self, a: int, b: int, sep: bytes = b"\t", end: bytes = b"\n") -> memoryview:
        """The fields of lines ``a`` .. ``b - 1`` as read (no quoting), each followed by
        ``sep`` (one byte) but a line's last, followed by ``end`` (one byte)."""
        joined = self._joined
        if joined is None or joined[:2] != (sep, end):
            out = self._arr.copy()
            out[self._tab] = sep[0]
            out[self._nl] = end[0]
            if self._drop is not None:
                out = np.delete(out, self._drop)
            joined = self._joined = (sep, end, out)
        return joined[2].data[int(self.unquoted_starts[a]):int(self.unquoted_starts[b])]

    def ids(self, a: int, b: int) -> list[bytes]:
        """The ids of lines ``a`` .. ``b - 1`` (UTF-8)."""
        data = self.data
        return [bytes(data[s:t]) for s, t in zip(self.starts[a:b].tolist(),
                                                 self.id_ends[a:b].tolist(), strict=True)]

    def id_words(self, a: int, b: int, words: int) -> tuple[np.ndarray, np.ndarray]:
        """The ids of lines ``a`` .. ``b - 1`` of up to ``8 * words`` bytes as ``words``
        uint64 each (their bytes zero-padded, read little-endian), and the length in bytes
        of every id (0 where it is longer)."""
        s = self.starts[a:b]
        size = self.id_ends[a:b] - s
        at = s[:, None] + np.arange(8 * words)
        np.minimum(at, len(self._arr) - 1, out=at)
        raw = self._arr[at]
        raw[np.arange(8 * words) >= size[:, None]] = 0
        size[size > 8 * words] = 0
        return raw.view("<u8"), size


def _invalid_utf8(pos: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Of the bytes of a buffer at or above 0x80 (at ``pos``, values ``v``: uint8), the
    positions of those that make it invalid UTF-8, exactly as ``bytes.decode`` judges
    (ASCII bytes are always valid): a lead byte whose sequence is not whole (its continuation
    bytes right after it, the second in its narrower range for E0, ED, F0 and F4: no
    overlong form, surrogate or code point above U+10FFFF), a byte that is never a lead
    (C0, C1, F5-FF), and a continuation byte no lead claims. A sequence never crosses a
    line break, so a line is valid when none of these is in it."""
    m = v.shape[0]
    if not m:
        return pos
    cont = (v & 0xC0) == 0x80
    need = np.zeros(m, dtype=np.int8)
    need[(v >= 0xC2) & (v <= 0xDF)] = 1
    need[(v >= 0xE0) & (v <= 0xEF)] = 2
    need[(v >= 0xF0) & (v <= 0xF4)] = 3
    bad = ~cont & (need == 0)
    after = np.zeros(m + 3, dtype=bool)  # entry i + 1 is a continuation byte right after i
    after[:m - 1] = cont[1:] & (pos[1:] == pos[:-1] + 1)
    whole = np.ones(m, dtype=bool)
    claimed = np.zeros(m + 3, dtype=bool)
    for j in (1, 2, 3):
        lead = need >= j
        whole &= ~lead | after[np.arange(m) + (j - 1)]
        claimed[np.flatnonzero(lead & whole) + j] = True
    second = np.zeros(m, dtype=np.int16)  # the byte after each entry (0: none)
    second[:m - 1] = v[1:]
    whole &= ~(((v == 0xE0) & (second < 0xA0)) | ((v == 0xED) & (second > 0x9F))
               | ((v == 0xF0) & (second < 0x90)) | ((v == 0xF4) & (second > 0x8F)))
    bad |= (need > 0) & ~whole
    bad |= cont & ~claimed[:m]
    return pos[bad]


class _BlockFeed:
    """The lines of a passage file from :class:`SimpleLines` blocks, handed to
    :func:`_passage_rows` as ``raw_lines`` (:meth:`top`, where runs of simple lines are
    handed to ``on_run`` instead once ``bulk`` is set) and ``more`` (:meth:`more`)."""

    def __init__(self, path: PathLike, on_run: Callable[[SimpleLines, int, int], None],
                 block_size: int) -> None:
        self.blocks = iter_line_blocks(path, block_size)
        self.on_run = on_run
        self.block: SimpleLines | None = None
        self.i = 0
        self.bulk = False

    def _load(self) -> bool:
        for first, data in self.blocks:
            self.block, self.i = SimpleLines(data, first), 0
            return True
        return False

    def _line(self) -> tuple[int, bytes] | None:
        while self.block is None or self.i == self.block.n:
            if not self._load():
                return None
        b, i = self.block, self.i
        self.i += 1
        return b.first_line + i, b.line(i)

    def _run(self) -> None:
        while True:
            b = self.block
            if b is None or self.i == b.n:
                if not self._load():
                    return
                continue
            j = b.next_slow(self.i)
            if j > self.i:
                self.on_run(b, self.i, j)
                self.i = j
            if j < b.n:
                return

    def top(self) -> Iterator[tuple[int, bytes]]:
        """Lines where a record starts: after the runs of simple lines that come first."""
        while True:
            if self.bulk:
                self._run()
            line = self._line()
            if line is None:
                return
            yield line

    def more(self) -> Iterator[tuple[int, bytes]]:
        """The next lines, whatever they hold (a record spanning lines goes on)."""
        while (line := self._line()) is not None:
            yield line


def read_passage_runs(path: PathLike, make: Callable[[str, str, str], _Make],
                      on_run: Callable[[SimpleLines, int, int], None]
                      ) -> Iterator[tuple[int, _Make]]:
    """:func:`read_passage_rows` (with the header) for a reader that takes passages in
    bulk: after the first passage, every run of simple lines (lines ``a`` .. ``b - 1`` of
    a block) is handed to ``on_run(block, a, b)`` instead of being yielded, in file order
    between the passages yielded; the errors are :func:`read_passage_rows`'s.
    """
    feed = _BlockFeed(path, on_run, PASSAGE_BLOCK)
    for row in _passage_rows(path, feed.top(), make, True, None, feed.more()):
        yield row
        feed.bulk = True  # the header is read: the next record starting a line is a passage


def parse_passage_record(record: str, where: str | None) -> tuple[str, str, str]:
    """``(id, text, title)`` of one record without its final line break, as
    :func:`read_passage_rows` reads it (it spans lines when a quoted field holds one)."""
    if '"' not in record and "\r" not in record and "\n" not in record:
        fields = record.split("\t")
    else:
        record = _universal(record)
        try:
            fields, end, _ = _split_fields(record, 1, None)
        except _UnclosedQuote as e:
            raise _unclosed_error(where, e.eof) from None
        if end < len(record):
            raise InputError(where, "a line break outside a quoted field ends the passage "
                             "early", "quote a field that holds a line break")
    if len(fields) != 3:
        raise _field_count_error(where, len(fields), '"' in record)
    if not fields[0]:
        raise _empty_id(where)
    return fields[0], fields[1], fields[2]


def _quoted(value: str) -> str:
    # csv.writer's minimal quoting for a tab delimiter: a field holding a tab, a quote or a
    # line break is quoted, its quotes doubled. A "\r" is written as "\n": read in text
    # mode (DPR's loader) it comes back as "\n" whatever is written.
    if "\r" in value:
        value = _universal(value)
    if '"' in value or "\t" in value or "\n" in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def passage_record(pid: str, text: str, title: str) -> str:
    """The record of one passage, line break included: what ``csv.writer(f,
    delimiter="\\t", lineterminator="\\n")`` writes (a "\\r" written as "\\n"), so that
    csv.reader and :func:`read_passage_rows` read the same fields back."""
    return f"{_quoted(pid)}\t{_quoted(text)}\t{_quoted(title)}\n"


def read_dpr_passages(paths: PathsLike, *, ids: Collection[str] | None = None
                      ) -> Iterator[DprContext]:
    """Lazily read DPR passage files (:func:`read_passage_rows`; the header is optional).

    With ``ids``, only those passages are decoded and yielded (the others are skipped on
    their id, so a pass over the 21M passages of ``psgs_w100.tsv`` keeps only what a run
    retrieved). Raises :class:`InputError` at ``file:line`` for a record without 3 fields.
    """
    def context(pid: str, text: str, title: str) -> DprContext:
        return DprContext(id=pid, title=title, text=text)

    for path in expand_paths(paths, what="passages TSV"):
        for _, ctx in read_passage_rows(path, context, header=False, ids=ids):
            yield ctx
