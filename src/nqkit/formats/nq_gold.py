"""Fast reading of NQ gold annotations, without parsing the pages.

The evaluation needs, per example, only its id, its annotations (and for breakdowns the
question and the type of each annotated long answer). A dev shard line is ~800 KB, almost
all of it HTML and tokens, so decoding every line with a JSON parser (what the official
script does) spends nearly all its time on bytes that are thrown away.

Here each line is scanned for the top-level keys and only their values are decoded. Inside
a JSON string every ``"`` is escaped, so a pattern such as ``,"example_id":`` cannot occur
within the HTML text; but a custom file may hold the same key names in nested objects, so
each key is taken only where its place proves it top-level: in the head of the line
before the page, or in a tail that runs to the end of the line, each of them one JSON
object of its own (it is not when cut inside a nested value). See
:func:`_top_level_values`. Whenever the fast path does not find
what it expects, the line is parsed in full, so the result never depends on the writer's
key order, spacing or extra keys.

Shards are read in parallel processes (see :func:`pool_size`), and the result can be
cached on disk keyed by the files' paths, sizes and modification times
(:mod:`nqkit.formats.gold_cache`).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import orjson

from nqkit.errors import InputError, examples, location
from nqkit.formats.nq import Annotation, Span, _Parser, tag_type
from nqkit.io import PathsLike, expand_paths, gc_paused, iter_line_spans, parse_json_line
from nqkit.workers import new_pool, stop_pool


@dataclass(frozen=True, slots=True)
class GoldExample:
    """What the evaluation needs of one annotated example."""

    example_id: int | str  # the example's id (int in official data)
    annotations: tuple[Annotation, ...]  # 5 in dev
    question_text: str  # for breakdowns by question word
    long_types: tuple[str | None, ...] = ()  # type of each annotation's long answer, if read

    def __reduce__(self) -> tuple[type[GoldExample], tuple[Any, ...]]:
        # a constructor call, like Span.__reduce__: shards come back from worker processes
        return GoldExample, (self.example_id, self.annotations, self.question_text,
                             self.long_types)

    def long_type(self, threshold: int = 2) -> str | None:
        """The gold long-answer type: the most common type among non-null annotations.

        ``None`` when the types were not read; ``"null"`` when the example has no gold long
        answer by the ``threshold`` rule.
        """
        if not self.long_types:
            return None
        nonnull = [t for a, t in zip(self.annotations, self.long_types, strict=True)
                   if a.has_long and t]
        if len(nonnull) < threshold:
            return "null"
        return Counter(nonnull).most_common(1)[0][0]


def _key_value_pos(buf: bytes, key: bytes, lo: int, hi: int, *, reverse: bool = False) -> int:
    """Position just after ``"key":`` at the top level of ``buf[lo:hi]``, or -1."""
    pat = b'"' + key + b'"'
    pos = buf.rfind(pat, lo, hi) if reverse else buf.find(pat, lo, hi)
    while pos >= 0:
        j = pos - 1
        while j >= lo and buf[j] in b" \t\r\n":
            j -= 1
        k = pos + len(pat)
        while k < hi and buf[k] in b" \t\r\n":
            k += 1
        if j >= lo and buf[j] in b"{," and k < hi and buf[k] == 58:  # ':'
            return k + 1
        pos = buf.rfind(pat, lo, pos) if reverse else buf.find(pat, pos + 1, hi)
    return -1


def _top_level_values(buf: bytes, lo: int, hi: int) -> tuple[Any, Any, Any]:
    """The annotations, example id and question of the line ``buf[lo:hi]``, each read where
    its place proves it a top-level key; ``ValueError`` when that cannot be shown.

    Two pieces of the line are decoded, each as a JSON object of its own:

    * the head, from the line's start to the first page key (``"document_..."``) closed
      with ``}``: the keys before the page (the original files' ``annotations``, the
      simplified files' ``question_text`` and ``example_id``);
    * the tail, from the last occurrence of the keys still missing to the end of the line
      (the original files' ``example_id``, candidates and question; the simplified files'
      ``annotations``), by a typed decoder that skips the values the evaluation does not
      read (the candidates) without building them.

    Each piece is valid JSON only where its edge is at the top level of the line's
    object: cut inside a nested value, brackets are left open (head) or left over
    (tail), so a key nested in some other value is never taken for the line's own.
    """
    head: dict[str, Any] = {}
    cut = buf.find(b',"document_', lo, hi)  # compact JSON, as the official files
    if cut < 0:
        m = _PAGE_KEY_RE.search(buf, lo, hi)
        cut = m.start() if m else -1
    if cut >= 0:
        with contextlib.suppress(orjson.JSONDecodeError):  # a cut inside a value: no head
            head = orjson.loads(buf[lo:cut] + b"}")
    annotations = head.get("annotations", _UNSET)
    example_id = head.get("example_id", _UNSET)
    question = head.get("question_text", _UNSET)
    missing = [k for k, v in ((b"annotations", annotations), (b"example_id", example_id),
                              (b"question_text", question)) if v is _UNSET]
    if missing:
        starts = [_key_value_pos(buf, k, lo, hi, reverse=True) for k in missing]
        if min(starts) < 0:
            raise ValueError("fast path: a key is missing")
        try:
            tail = _KEYS.decode(b"{" + buf[min(_key_start(buf, p, lo) for p in starts):hi])
        except msgspec.DecodeError as e:  # a type error included: the full parse words it
            raise ValueError(f"fast path: {e}") from None
        if annotations is _UNSET:
            annotations = tail.annotations
        if example_id is _UNSET:
            example_id = tail.example_id
        if question is _UNSET:
            question = tail.question_text
        if _UNSET in (annotations, example_id, question):
            raise ValueError("fast path: a key is not where it was looked for")
    return annotations, example_id, question


class _Keys(msgspec.Struct):
    """The keys the evaluation reads from a piece of a line; other keys are skipped."""

    annotations: list[Any] | msgspec.UnsetType = msgspec.UNSET
    example_id: int | str | msgspec.UnsetType = msgspec.UNSET
    question_text: str | msgspec.UnsetType = msgspec.UNSET


_KEYS = msgspec.json.Decoder(_Keys)
_UNSET: Any = msgspec.UNSET
_PAGE_KEY_RE = re.compile(rb',\s*"document_')  # the first key of the page's text


def _key_start(buf: bytes, value_pos: int, lo: int) -> int:
    """Where the key (its opening ``"``) starts whose value starts at ``value_pos``."""
    return buf.rfind(b'"', lo, buf.rfind(b'"', lo, value_pos))


def _token_at_byte(buf: bytes, start_byte: int, lo: int, hi: int) -> str | None:
    """The text of the document token starting at ``start_byte``, found without parsing.

    Official files write tokens with sorted keys, compactly:
    ``{"end_byte":..,"html_token":..,"start_byte":N,"token":"..."}`` (other writers add
    spaces); candidates and spans never have ``"token"`` after ``start_byte``.
    """
    for pat in (b'"start_byte":%d,"token":"' % start_byte,
                b'"start_byte": %d, "token": "' % start_byte):
        i = buf.find(pat, lo, hi)
        if i >= 0:
            j = buf.find(b'"', i + len(pat), hi)
            return buf[i + len(pat):j].decode("utf-8", errors="replace")
    return None


def _framed(buf: bytes, lo: int, hi: int) -> bool:
    """The line starts with ``{`` and ends with ``}`` (ignoring surrounding whitespace)."""
    while lo < hi and buf[lo] in b" \t\r\n":
        lo += 1
    while hi > lo and buf[hi - 1] in b" \t\r\n":
        hi -= 1
    return hi - lo >= 2 and buf[lo] == 123 and buf[hi - 1] == 125


def _parse_gold(buf: bytes, lo: int, hi: int, where: str | None, with_types: bool
                ) -> GoldExample:
    """Extract a :class:`GoldExample` from the original- or simplified-format line
    ``buf[lo:hi]``."""
    p = _Parser(where)
    try:
        # A truncated or cut line fails this framing check and gets the full parser's error.
        # Damage inside the page text, which the evaluation never reads, goes unnoticed
        # here (nqkit.formats.nq.read_nq parses and checks everything).
        if not _framed(buf, lo, hi):
            raise ValueError("fast path: not one JSON object")
        anns, example_id, question = _top_level_values(buf, lo, hi)
        d: dict[str, Any] | None = None
    except (ValueError, UnicodeDecodeError):  # orjson.JSONDecodeError is a ValueError
        d = parse_json_line(buf[lo:hi], where)
        if not isinstance(d, dict):
            raise InputError(where, f"expected a JSON object, found {type(d).__name__}",
                             "each line must be one NQ example") from None
        anns = p.get(d, "annotations", list, "example")
        example_id = d.get("example_id")
        question = d.get("question_text", "")
    if not isinstance(anns, list):
        raise InputError(where, f"annotations must be a list, found {type(anns).__name__}",
                         "check the file is in the Natural Questions format")
    example_id = p.example_id(example_id, strings=True)
    # Byte offsets are optional so that simplified-format gold (tokens only) reads too.
    annotations = tuple(p.annotation(a, i, bytes_required=False) for i, a in enumerate(anns))
    _check_bounds(p, buf, lo, hi, annotations, d)
    types: tuple[str | None, ...] = ()
    if with_types:
        types = _long_types(buf, lo, hi, annotations, d, where)
    return GoldExample(example_id, annotations, str(question), types)


_LAST_END_BYTE_RE = re.compile(rb'"end_byte"\s*:\s*(\d+)\s*,\s*$')


def _check_bounds(p: _Parser, buf: bytes, lo: int, hi: int,
                  annotations: tuple[Annotation, ...], d: dict[str, Any] | None) -> None:
    """Refuse annotation spans that point past the end of the document.

    A fully parsed line is checked exactly. The fast path never decodes the page, so it
    checks what costs no pass over the line: byte offsets against the end of the last
    document token (found from the end of the line), token offsets against that many
    bytes (a token covers at least one byte) or, in the simplified format, against the
    length of ``document_text``. Exact token checks belong to :func:`nqkit.formats.nq.read_nq`,
    which every command that reads pages uses.
    """
    if d is not None:
        spans = _named_spans(annotations)
        if spans and isinstance(d.get("document_tokens"), list):
            p.check_bounds(spans, len(d["document_tokens"]),
                           d["document_html"] if isinstance(d.get("document_html"), str)
                           else None)
        elif spans and isinstance(d.get("document_text"), str):
            p.check_bounds(spans, d["document_text"].count(" ") + 1, None)
        return
    # the largest ends first (a null span's are -1): spans are named only to report one
    top_byte = top_token = -1
    for a in annotations:
        for s in (a.long_answer, *a.short_answers):
            if s.end_byte > top_byte:
                top_byte = s.end_byte
            if s.end_token > top_token:
                top_token = s.end_token
    if top_byte < 0 and top_token < 0:
        return
    last = buf.rfind(b'"html_token"', lo, hi)
    if last >= 0:
        m = _LAST_END_BYTE_RE.search(buf, max(lo, last - 40), last)
        if m is None:  # another writer's key order: not worth a full parse here
            return
        end = int(m.group(1))
        if top_byte <= end and top_token <= end:
            return
        for ctx, s in _named_spans(annotations):
            if s.end_byte > end or s.end_token > end:
                what, value = ("byte", s.end_byte) if s.end_byte > end else ("token",
                                                                             s.end_token)
                raise p.fail(f"{ctx} ends at {what} {value:,}, past the end of the document "
                             f"(its last token ends at byte {end:,})",
                             "offsets must index the document; check the file is "
                             "unmodified NQ data")
        return
    text_pos = _key_value_pos(buf, b"document_text", lo, hi)
    if text_pos >= 0:
        limit = (hi - text_pos) // 2 + 1  # n tokens need at least 2n - 1 characters
        if top_token <= limit:
            return
        for ctx, s in _named_spans(annotations):
            if s.end_token > limit:
                raise p.fail(f"{ctx} ends at token {s.end_token:,}, past the end of the "
                             "document", "offsets must index the document; check the file "
                             "is unmodified NQ data")


def _named_spans(annotations: tuple[Annotation, ...]) -> list[tuple[str, Span]]:
    """The non-null spans with their names in messages: long answers, then short ones."""
    spans = [(f"annotations[{i}].long_answer", a.long_answer) for i, a in enumerate(annotations)]
    spans += [(f"annotations[{i}].short_answers[{j}]", s) for i, a in enumerate(annotations)
              for j, s in enumerate(a.short_answers)]
    return [(ctx, s) for ctx, s in spans if not s.is_null]


def _long_types(buf: bytes, lo: int, hi: int, annotations: tuple[Annotation, ...],
                d: dict[str, Any] | None, where: str | None) -> tuple[str | None, ...]:
    out: list[str | None] = []
    seen: dict[int, str | None] = {}  # annotators often agree: search each start once
    for a in annotations:
        if not a.has_long:
            out.append(None)
            continue
        sb = a.long_answer.start_byte
        if sb not in seen:
            seen[sb] = _token_at_byte(buf, sb, lo, hi) if a.long_answer.has_bytes else None
        tok = seen[sb]
        if tok is None:
            if d is None:
                d = parse_json_line(buf[lo:hi], where)
            assert d is not None
            if "document_tokens" in d:
                tok = d["document_tokens"][a.long_answer.start_token]["token"]
            else:
                tok = d["document_text"].split(" ")[a.long_answer.start_token]
        out.append(tag_type(str(tok)))
    return tuple(out)


def _id_kind(example_id: int | str, plural: bool = False) -> str:
    if isinstance(example_id, str):
        return "strings" if plural else "a string"
    return "integers" if plural else "an integer"


def _read_shard(path: str, with_types: bool) -> tuple[list[GoldExample], int]:
    """The shard's examples and the line number of its first one.

    Example ids must be all integers or all strings: a mix would make predictions look
    missing when the fault is in the gold file, so it is refused here, at its line.
    """
    # Lines are scanned in place, by bounds inside large chunks: no per-line copies.
    out: list[GoldExample] = []
    first_line = 0
    with gc_paused():
        for lineno, buf, lo, hi in iter_line_spans(path):
            ex = _parse_gold(buf, lo, hi, location(path, lineno), with_types)
            if not out:
                first_line = lineno
            elif type(ex.example_id) is not type(out[0].example_id):
                raise InputError(location(path, lineno),
                                 f"example_id {ex.example_id!r:.30} is "
                                 f"{_id_kind(ex.example_id)}, but the ids before it (from line "
                                 f"{first_line}) are {_id_kind(out[0].example_id, True)}",
                                 "write every example_id of the gold data the same way")
            out.append(ex)
    return out, first_line


def pool_size(shards: int, cores: int) -> int:
    """How many processes read ``shards`` equal shards soonest on ``cores`` cores.

    A gzip shard is read by one process from start to end, so 5 dev shards on 2 cores
    take 3 shard-times with 2 processes (the last shard alone) but 2.5 with 3, the cores
    being shared. This counts, for each pool size from ``cores`` to ``2 * cores``, the
    shard-times of its waves (a wave of k shards takes max(1, k / cores)) and picks the
    smallest pool with the fewest.
    """
    if shards <= cores:
        return max(1, shards)

    def waves(w: int) -> float:
        full, rest = divmod(shards, w)
        return full * max(1.0, w / cores) + (max(1.0, rest / cores) if rest else 0.0)

    return min(range(cores, min(shards, 2 * cores) + 1), key=lambda w: (waves(w), w))


class PendingGold:
    """Gold shards being read by worker processes while the caller does other work.

    :meth:`result` waits for the shards (raising the first shard's error in file order,
    as a sequential read would). Use it as a context manager: leaving the block before
    :meth:`result` (an error in the caller's own work) stops the workers at once rather
    than waiting for shards nobody will read.
    """

    def __init__(self, files: Sequence[str], *, with_types: bool = False,
                 workers: int | None = None,
                 then: Callable[[dict[int | str, GoldExample]], None] | None = None,
                 ) -> None:
        self._files = list(files)
        self._with_types = with_types
        self._then = then
        self._gold: dict[int | str, GoldExample] | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._parts: list[Future[tuple[list[GoldExample], int]]] = []
        workers = min(len(self._files), workers or pool_size(len(self._files),
                                                            os.cpu_count() or 1))
        if workers > 1:
            self._pool = new_pool(workers)
            self._parts = [self._pool.submit(_read_shard, f, with_types) for f in self._files]

    @classmethod
    def done(cls, gold: dict[int | str, GoldExample]) -> PendingGold:
        """An already read gold set (from the cache)."""
        pending = cls([])
        pending._gold = gold
        return pending

    def result(self, progress: Callable[..., Iterable[Any]] | None = None,
               ) -> dict[int | str, GoldExample]:
        """The gold by example id. ``progress`` (``nqkit.report.progress`` at the command
        line) wraps the shards as they are read, with ``desc``, ``total`` and ``unit``:
        the 50 train shards take minutes."""
        if self._gold is None:
            def each(items: Sequence[Any]) -> Iterable[Any]:
                if progress is None or len(items) < 2:
                    return items
                return progress(items, desc="reading the gold", total=len(items),
                                unit="shard")

            if self._pool is None:
                shards = [_read_shard(f, self._with_types) for f in each(self._files)]
            else:
                try:
                    with gc_paused():  # the shards' records are unpickled meanwhile
                        shards = [part.result() for part in each(self._parts)]
                finally:
                    self.close()
            self._gold = _index(self._files, shards)
            if self._then is not None:
                self._then(self._gold)
        return self._gold

    def close(self) -> None:
        """Stop the workers (at once if they are still reading)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if all(part.done() for part in self._parts):
            pool.shutdown(wait=True)
        else:
            stop_pool(pool)

    def __enter__(self) -> PendingGold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_nq_gold(paths: PathsLike, *, with_types: bool = False, workers: int | None = None,
                 ) -> dict[int | str, GoldExample]:
    """Read the gold annotations of every example in the given shards, by example id.

    Shards are read in parallel processes (``workers``, default: the core count). Raises
    :class:`InputError` on malformed lines, empty inputs and duplicate example ids.
    """
    files = [str(p) for p in expand_paths(paths, what="gold")]
    with PendingGold(files, with_types=with_types, workers=workers) as pending:
        return pending.result()


def _index(files: Sequence[str], shards: Sequence[tuple[list[GoldExample], int]]
           ) -> dict[int | str, GoldExample]:
    gold: dict[int | str, GoldExample] = {}
    first: tuple[str, int, int | str] | None = None  # file, line, id of the first example
    for f, (shard, first_line) in zip(files, shards, strict=True):
        if shard and first is None:
            first = (f, first_line, shard[0].example_id)
        elif shard and first is not None and type(shard[0].example_id) is not type(first[2]):
            raise InputError(location(f, first_line),
                             f"example_id {shard[0].example_id!r:.30} is "
                             f"{_id_kind(shard[0].example_id)}, but the ids of "
                             f"{location(first[0], first[1])} are {_id_kind(first[2], True)}",
                             "write every example_id of the gold data the same way")
        for ex in shard:
            if ex.example_id in gold:
                raise InputError(f, f"duplicate example_id {ex.example_id} in the gold data",
                                 "give each shard once; example ids must be unique")
            gold[ex.example_id] = ex
    if not gold:
        raise InputError(examples((Path(f).name for f in files), width=None),
                         "the gold data holds no examples (empty files)",
                         "give non-empty NQ .jsonl or .jsonl.gz files")
    return gold
