"""DPR formats (Karpukhin et al. 2020): retrieval results, bi-encoder data, QA TSV files.

* Retrieval results (``dense_retriever.py`` output): a JSON list of ``{"question",
  "answers": [...], "ctxs": [{"id", "title", "text", "score", "has_answer"?}, ...]}`` with
  the contexts in rank order.
* Bi-encoder training/dev data (``biencoder-nq-dev.json``): a JSON list of ``{"question",
  "answers", "positive_ctxs", "negative_ctxs", "hard_negative_ctxs"}``; contexts carry
  ``title``, ``text`` and ``passage_id``.
* QA files (``nq-dev.qa.tsv``): ``question<TAB>python-list-of-answers`` per line.
* The passage corpus (``psgs_w100.tsv``): a header ``id<TAB>text<TAB>title``, then one
  passage per line; a field may be quoted as DPR's ``csv.reader(delimiter="\t")`` reads
  it (``"..."`` with ``""`` for a quote).
"""

from __future__ import annotations

import ast
import csv
import itertools
import math
import zlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from nqkit.errors import InputError, location
from nqkit.io import (
    PathLike,
    PathsLike,
    decode_utf8,
    expand_paths,
    is_regular_file,
    iter_lines,
    open_binary,
    read_json,
)

__all__ = [
    "DprBiencoderExample",
    "DprContext",
    "DprResult",
    "read_dpr_biencoder",
    "read_dpr_passages",
    "read_dpr_qa_tsv",
    "read_dpr_results",
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


def _unquote(field: str) -> str:
    """A csv-quoted field as the csv module reads it: quotes around it dropped, doubled
    quotes inside it made single."""
    if len(field) >= 2 and field[0] == '"' and field[-1] == '"':
        return field[1:-1].replace('""', '"')
    return field


def read_dpr_passages(paths: PathsLike, *, ids: Collection[str] | None = None
                      ) -> Iterator[DprContext]:
    """Lazily read DPR passage files (``id<TAB>text<TAB>title``, the header skipped).

    With ``ids``, only those passages are decoded and yielded (the others are skipped on
    their id, so a pass over the 21M passages of ``psgs_w100.tsv`` keeps only what a run
    retrieved). Raises :class:`InputError` at ``file:line`` for a line without 3 fields.
    """
    wanted = None if ids is None else {i.encode("utf-8") for i in ids}
    for path in expand_paths(paths, what="passages TSV"):
        for lineno, raw in iter_lines(path):
            if lineno == 1 and raw.startswith(b"id\t"):
                continue
            if wanted is not None and raw.partition(b"\t")[0] not in wanted:
                continue
            where = location(path, lineno)
            fields = decode_utf8(raw, where).rstrip("\r\n").split("\t")
            if len(fields) != 3:
                raise InputError(where, f"expected 3 tab-separated fields (id, text, title), "
                                 f"found {len(fields)}",
                                 "give a DPR passage file such as psgs_w100.tsv")
            pid, text, title = fields
            yield DprContext(id=pid, title=_unquote(title), text=_unquote(text))
