"""Simplify original-format NQ examples, byte for byte as the official simplification does.

The simplified format (dataset README, "Simplified data"; ``simplify_nq_example`` of the
official utilities) keeps, in this order, ``question_text``, ``example_id``,
``document_url``, a ``document_text`` made of the page tokens joined by single spaces (a
space inside a token, as in ``<Td colspan="2">``, becomes ``_``), the long-answer
candidates and the annotations with their byte offsets removed. Everything else in a
candidate, an annotation or a span keeps its key order. Each output line is what Python's
``json.dumps(record, ensure_ascii=False)`` writes (separators ``", "`` and ``": "``),
followed by ``"\\n"`` — the official output, which ``tests/test_simplify.py`` checks byte
for byte against the official file.

Speed: parsing the ~1 MB original line is nearly all of the work, and most of it is HTML
that the simplified format drops. :func:`simplify_line` decodes only the fields it needs
with a typed ``msgspec`` decoder (the HTML and the token offsets are skipped without
building Python objects), then builds the same record the generic path builds. Any line the
fast decoder refuses goes through the generic path (``json.loads`` + :func:`simplify_example`),
which either produces exactly the official record or raises :class:`InputError` with the
file and line. Strings are written by orjson, which writes them exactly as ``json.dumps``
does. :func:`iter_simplify` runs shards in worker processes (see BENCHMARKS.md).

Known leniencies: bytes that are not valid UTF-8 inside fields the simplified format drops
(``document_html``, ``document_title``, ...) are not checked; the official script, which
decodes the whole line, would crash on such a file. The tokens' byte offsets are not read
either (the simplified format drops them, as the official function does): a token outside
the page is refused by every command that reads the offsets, but checking every token
here would cost 39% more CPU, and declaring the offsets to the fast decoder 15%
(BENCHMARKS.md, "Checks of the NQ readers"). A token's ``html_token`` is checked as every
reader checks it, which costs nothing measurable.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import operator
import os
import queue
import shutil
from array import array
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from nqkit.errors import InputError, examples, location
from nqkit.formats.nq import (
    INT64_MAX,
    ExampleIds,
    HtmlSize,
    _Parser,
    _well_formed_annotation,
    check_nq_spans,
    check_token_fields,
)
from nqkit.io import (
    PathsLike,
    atomic_output,
    check_output,
    expand_paths,
    is_gzip,
    is_regular_file,
    iter_lines,
    make_temp,
)
from nqkit.workers import die_with_parent

__all__ = [
    "SIMPLIFIED_KEYS",
    "SimplifyResult",
    "document_text",
    "dumps_simplified",
    "iter_simplify",
    "simplify_command",
    "simplify_example",
    "simplify_files",
    "simplify_line",
]

# Key order of a simplified record, as the official function builds it.
SIMPLIFIED_KEYS: tuple[str, ...] = (
    "question_text", "example_id", "document_url", "document_text",
    "long_answer_candidates", "annotations",
)
_BYTE_KEYS = frozenset(("start_byte", "end_byte"))
_FIX = "check the file is in the original Natural Questions format"


# --------------------------------------------------------------------------- one example

def document_text(tokens: Sequence[str]) -> str:
    """The tokens joined by single spaces, each space inside a token replaced by ``_``.

    Splitting the result on ``" "`` gives back exactly ``len(tokens)`` items, except for no
    tokens at all (``""`` splits into one empty token), which the official function rejects.
    """
    # Most pages have a token with spaces (table cells such as <Td colspan="2">), so rather
    # than one replace per token: join with NUL, replace every space, then turn the NULs
    # into the separating spaces -- valid whenever no token holds a NUL itself.
    text = "\0".join(tokens)
    if text.count("\0") == len(tokens) - 1:
        return text.replace(" ", "_").replace("\0", " ")
    return " ".join([t.replace(" ", "_") for t in tokens])


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
            float: "number", type(None): "null"}.get(type(v), type(v).__name__)


def _found(v: Any) -> str:
    """``found <type> <value>`` for messages (the value cut to 40 characters)."""
    if v is None or isinstance(v, dict | list):
        return f"found {_type_name(v)}"
    return f"found {_type_name(v)} {v!r:.40}"


def _need(d: Mapping[str, Any], key: str, typ: type, ctx: str, where: str | None) -> Any:
    """``d[key]``, checked to be of type ``typ`` (never a bool for ``int``)."""
    if key not in d:
        raise InputError(where, f"missing key {key!r} in {ctx}", _FIX)
    v = d[key]
    if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
        want = {dict: "an object", list: "an array", str: "a string", int: "an integer"}[typ]
        raise InputError(where, f"{ctx}.{key} must be {want}, {_found(v)}", _FIX)
    return v


def _without_bytes(span: Any, ctx: str, where: str | None) -> dict[str, Any]:
    """A new dict equal to ``span`` without ``start_byte``/``end_byte``, key order kept."""
    if not isinstance(span, dict):
        raise InputError(where, f"{ctx} must be an object, {_found(span)}", _FIX)
    return {k: v for k, v in span.items() if k not in _BYTE_KEYS}


def _candidates(cands: list[Any], where: str | None, *, owned: bool = False
                ) -> list[dict[str, Any]]:
    """The candidates without byte offsets: new dicts, or, when the caller ``owned`` the
    decoded list (the fast path), the same dicts with the offsets popped."""
    if not owned:
        return [_without_bytes(c, f"long_answer_candidates[{i}]", where)
                for i, c in enumerate(cands)]
    for i, c in enumerate(cands):
        if type(c) is not dict:
            _without_bytes(c, f"long_answer_candidates[{i}]", where)  # raises
        c.pop("start_byte", None)
        c.pop("end_byte", None)
    return cands


def _annotations(annotations: list[Any], where: str | None, *, owned: bool = False
                 ) -> list[dict[str, Any]]:
    out = []
    for i, a in enumerate(annotations):
        ctx = f"annotations[{i}]"
        if not isinstance(a, dict):
            raise InputError(where, f"{ctx} must be an object, {_found(a)}", _FIX)
        long_answer = _without_bytes(_need(a, "long_answer", dict, ctx, where),
                                     f"{ctx}.long_answer", where)
        shorts = [_without_bytes(s, f"{ctx}.short_answers[{j}]", where)
                  for j, s in enumerate(_need(a, "short_answers", list, ctx, where))]
        # Replacing values of existing keys keeps the annotation's own key order.
        new = a if owned else dict(a)
        new["long_answer"] = long_answer
        new["short_answers"] = shorts
        out.append(new)
    return out


def _record(question_text: str, example_id: int, document_url: str, tokens: Sequence[str],
            candidates: list[Any], annotations: list[Any], where: str | None, *,
            owned: bool = False, stripped: bool = False) -> dict[str, Any]:
    """The simplified record; ``owned``: the caller's decoded objects may be changed in
    place; ``stripped``: the candidates are checked objects without byte offsets already."""
    if not tokens:
        # The official function checks that the text splits back into as many tokens as
        # the page has; that fails only for a page without tokens.
        raise InputError(where, "document_tokens is empty (a page without tokens cannot be "
                         "simplified)", "remove the example or give its tokens")
    # The official function copies the candidates and annotations as they are, and so
    # does this one, once they are checked as every reader checks them (_simplify_fast,
    # simplify_example): an example no reader would accept is refused here rather than
    # written for the next tool to trip on.
    _Parser(where).example_id(example_id)
    return {
        "question_text": question_text,
        "example_id": example_id,
        "document_url": document_url,
        "document_text": document_text(tokens),
        "long_answer_candidates": candidates if stripped else _candidates(candidates, where,
                                                                          owned=owned),
        "annotations": _annotations(annotations, where, owned=owned),
    }


def simplify_example(example: Mapping[str, Any], where: str | None = None) -> dict[str, Any]:
    """The simplified record of one decoded original-format example.

    Returns new objects (the input and everything in it is left untouched), with keys in
    :data:`SIMPLIFIED_KEYS` order. Raises :class:`InputError` at ``where`` (e.g.
    ``file:line``) for a missing key or a value of the wrong type.
    """
    if not isinstance(example, Mapping):
        raise InputError(where, f"expected a JSON object, found {_type_name(example)}",
                         "each line must be one NQ example {...}")
    ctx = "example"
    if "document_tokens" not in example and "document_text" in example:
        raise InputError(where, "this example is already in the simplified format "
                         "(document_text, no document_tokens)",
                         "give the original-format files (with document_html and "
                         "document_tokens)")
    raw_tokens = _need(example, "document_tokens", list, ctx, where)
    tokens = []
    for i, t in enumerate(raw_tokens):
        if not isinstance(t, dict):
            raise InputError(where, f"document_tokens[{i}] must be an object, {_found(t)}",
                             _FIX)
        tokens.append(_need(t, "token", str, f"document_tokens[{i}]", where))
    # html_token as every reader checks it (issue 30: a token without one was simplified);
    # the byte offsets are not read (see the module's docstring)
    check_token_fields(_Parser(where), raw_tokens, offsets=False)
    html = _need(example, "document_html", str, ctx, where)
    candidates = _need(example, "long_answer_candidates", list, ctx, where)
    annotations = _need(example, "annotations", list, ctx, where)
    record = _record(
        _need(example, "question_text", str, ctx, where),
        _need(example, "example_id", int, ctx, where),
        _need(example, "document_url", str, ctx, where),
        tokens, candidates, annotations, where,
    )
    # After the record (whose own checks word the shape errors): spans inside the page,
    # by tokens and by bytes, candidate indexes, yes/no answers, as read_nq checks them.
    # The tokens' own byte offsets are not read (nor written): see _simplify_fast.
    check_nq_spans(record["example_id"], candidates, annotations, len(tokens), where,
                   html=html)
    return record


def dumps_simplified(record: Mapping[str, Any], where: str | None = None) -> bytes:
    """One output line: ``json.dumps(record, ensure_ascii=False)`` + newline, UTF-8."""
    try:
        return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(where, "a string holds a lone UTF-16 surrogate escape, which cannot "
                         "be written as UTF-8", "repair the example's text") from e
    except ValueError as e:  # e.g. circular references in a hand-made dict
        raise InputError(where, f"cannot write the record as JSON ({e})", _FIX) from e


# --------------------------------------------------------------------------- one line

try:  # msgspec is a pure speed-up: without it every line takes the generic path
    import msgspec
except ImportError:  # pragma: no cover - msgspec is a dependency
    msgspec = None  # type: ignore[assignment]


if msgspec is not None:

    class _Token(msgspec.Struct, gc=False):
        # html_token is decoded to be checked as the readers check it (a bool; an int one
        # takes the generic path); untracked by the garbage collector, these records cost
        # less to build than one tracked field did.
        token: str
        html_token: bool

    class _Example(msgspec.Struct):
        # Only the fields the simplified record needs; the rest (the HTML, the token
        # offsets, the question tokens) is skipped without building Python objects.
        question_text: str
        example_id: int
        document_url: str
        document_html: msgspec.Raw  # its JSON text, undecoded: for its length only
        document_tokens: list[_Token]
        long_answer_candidates: list[Any]
        annotations: list[Any]

    _decode: Callable[[bytes], Any] | None = msgspec.json.Decoder(_Example).decode
    _token_text = operator.attrgetter("token")
else:  # pragma: no cover
    _decode = None


_encode_py = json.JSONEncoder(ensure_ascii=False).encode


def _dumps_fast(record: dict[str, Any], where: str | None) -> bytes:
    """:func:`dumps_simplified`, with the strings written by orjson.

    orjson writes a string exactly as ``json.dumps(s, ensure_ascii=False)`` does (checked
    over every code point outside the surrogates, which it refuses), straight to UTF-8 and
    several times faster, which matters for the ~50 kB document_text. Candidates and
    annotations, which may hold any JSON value, go through the standard encoder.
    """
    try:
        return b"".join((
            b'{"question_text": ', orjson.dumps(record["question_text"]),
            b', "example_id": ', int.__repr__(record["example_id"]).encode(),
            b', "document_url": ', orjson.dumps(record["document_url"]),
            b', "document_text": ', orjson.dumps(record["document_text"]),
            b', "long_answer_candidates": ',
            _encode_py(record["long_answer_candidates"]).encode("utf-8"),
            b', "annotations": ', _encode_py(record["annotations"]).encode("utf-8"),
            b"}\n",
        ))
    except (orjson.JSONEncodeError, UnicodeEncodeError):
        return dumps_simplified(record, where)  # raises the error for the user


class _Unsure(Exception):
    """The fast path cannot vouch for a line: the generic path decides, and words the
    error if there is one."""


def _simplify_fast(ex: Any, where: str | None) -> dict[str, Any]:
    """The record of a line the typed decoder read, when every candidate and annotation
    passes the rules of :class:`nqkit.formats.nq._Parser` and lies inside the page (else
    :class:`_Unsure`).

    The same rules as the generic path, in the pass that strips the candidates' byte
    offsets anyway, without building span objects. The page's byte length is bounded from
    its undecoded JSON text (:meth:`HtmlSize.of_json`), which costs most of the checks'
    time: together about 0.17 ms a page, 7% of a one-process run (BENCHMARKS.md,
    "Checks of the NQ readers"). The tokens' own byte offsets are neither read nor
    written (decoding them would cost 15% more; the simplified format drops them, as
    the official function does).
    """
    tokens = list(map(_token_text, ex.document_tokens))
    cands = ex.long_answer_candidates
    top_token = top_byte = -1
    for c in cands:  # the decoded objects are this function's own: strip them in place
        if type(c) is not dict:
            raise _Unsure
        sb = c.pop("start_byte", -2)
        eb = c.pop("end_byte", -2)
        st = c.get("start_token", -2)
        et = c.get("end_token", -2)
        if not (type(sb) is int and type(eb) is int and type(st) is int and type(et) is int
                and (sb == eb == -1 or 0 <= sb < eb <= INT64_MAX)
                and (st == et == -1 or 0 <= st < et <= INT64_MAX)):
            raise _Unsure
        if et > top_token:
            top_token = et
        if eb > top_byte:
            top_byte = eb
    for a in ex.annotations:
        ann = _well_formed_annotation(a, True) if type(a) is dict else None
        if ann is None or ann.candidate_index >= len(cands):
            raise _Unsure
        for s in (ann.long_answer, *ann.short_answers):
            if s.end_token > top_token:
                top_token = s.end_token
            if s.end_byte > top_byte:
                top_byte = s.end_byte
    if top_token > len(tokens) or not HtmlSize.of_json(ex.document_html).covers(top_byte):
        raise _Unsure
    return _record(ex.question_text, ex.example_id, ex.document_url, tokens, cands,
                   ex.annotations, where, owned=True, stripped=True)


def simplify_line(line: bytes, where: str | None = None) -> bytes:
    """Simplify one original-format JSON line (bytes) into one output line (bytes).

    Equal to ``dumps_simplified(simplify_example(json.loads(line)))``, but several times
    faster on real pages. Raises :class:`InputError` at ``where`` on bad input.
    """
    return _simplify_line(line, where)[0]


def _simplify_line(line: bytes, where: str | None) -> tuple[bytes, int]:
    """:func:`simplify_line`, and the example's id."""
    if _decode is not None:
        try:
            ex = _decode(line)
        except Exception:  # anything odd: the generic path decides
            pass
        else:
            try:
                record = _simplify_fast(ex, where)
            except _Unsure:
                pass
            else:
                return _dumps_fast(record, where), record["example_id"]
    try:
        obj = json.loads(line.rstrip())  # stripped: an error position counts in the line
    except json.JSONDecodeError as e:
        raise InputError(where, f"malformed JSON ({e.msg} at character {e.pos + 1})",
                         "each line must be one complete JSON object") from e
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError, nesting too deep
        raise InputError(where, f"malformed JSON ({e})",
                         "each line must be one complete JSON object") from e
    record = simplify_example(obj, where)
    return dumps_simplified(record, where), record["example_id"]


# --------------------------------------------------------------------------- files

@dataclass(frozen=True, slots=True)
class SimplifyResult:
    """What :func:`simplify_files` did."""

    output: Path  # the file written
    inputs: tuple[Path, ...]  # the input shards, in output order
    examples: int  # examples written


_NO_LIMIT = 1 << 62
_PROCESS_LOCAL = ("/dev/fd/", "/proc/self/fd/", "/dev/stdin")


def _simplify_stream(path: Path, out: Any, tick: Callable[[int], None],
                     stop: Callable[[], bool] | None = None, lo: int = 0,
                     hi: int = _NO_LIMIT, ids: tuple[array, array] | None = None) -> int:
    """Write the simplified lines of one shard to ``out``; returns the example count.

    Only lines whose offset lies in ``[lo, hi)`` are simplified; the offset of a line is
    the total length of the non-blank lines before it, the same in every process, so two
    ranges that meet split a shard exactly. ``ids``, when given, receives each written
    example's id and line number (for the parent's check of repeated ids; on an error,
    those of the lines before it).
    """
    n = pending = offset = 0
    for lineno, line in iter_lines(path):
        start = offset
        offset += len(line)
        if start < lo:
            continue
        if start >= hi:
            break
        text, example_id = _simplify_line(line, location(path, lineno))
        out.write(text)
        if ids is not None:
            ids[0].append(example_id)
            ids[1].append(lineno)
        n += 1
        pending += 1
        if pending == 8:
            tick(pending)
            pending = 0
            if stop is not None and stop():
                return n
    if pending:
        tick(pending)
    return n


def _cut_point(path: Path) -> int:
    """Where to cut a shard in two: about 60% of its uncompressed length (a balance hint,
    never a limit; any value splits the shard exactly).

    The second part also decompresses the first (gzip cannot seek), so it gets fewer lines:
    with decompression about 2/3 of the parsing cost, 60/40 gives both parts equal work.
    For gzip, the last 4 bytes hold the uncompressed size modulo 2**32, exact for the usual
    single-member file under 4 GiB; when implausible, assume a compression ratio of 4.
    """
    size = path.stat().st_size
    if is_gzip(path) and size >= 18:
        with open(path, "rb") as f:
            f.seek(-4, os.SEEK_END)
            isize = int.from_bytes(f.read(4), "little")
        size = isize if isize >= size else 4 * size
    return size * 3 // 5


# A task: (index of the input, first offset, end offset) -- a whole shard or half of one.
_Task = tuple[int, int, int]


def _plan(paths: Sequence[Path], jobs: int) -> list[_Task]:
    """One task per shard; when the shards do not divide evenly among ``jobs`` processes,
    the last ones are cut in two so that no core idles while one shard finishes (when
    all the parts can run at once; otherwise cutting would only add a round).

    The second part of a cut shard still decompresses the first (gzip cannot seek), so
    cutting costs a little more work in total and is kept for the tail.
    """
    tasks: list[_Task] = []
    tail = len(paths) % jobs
    if 2 * tail > jobs:  # the halves would not all run at once: cutting would not help
        tail = 0
    for i, p in enumerate(paths):
        # A FIFO can be read only once: never cut it.
        if tail and i >= len(paths) - tail and is_regular_file(p):
            cut = _cut_point(p)
            tasks += [(i, 0, cut), (i, cut, _NO_LIMIT)]
        else:
            tasks.append((i, 0, _NO_LIMIT))
    return tasks


# Worker-process state, set by _init_worker: the progress queue, and the index of the
# first task that failed (tasks after it stop early; tasks before it run to the end, since
# one of them may hold an earlier error: the error reported is the first in input order).
_progress_q: Any = None
_first_failed: Any = None


def _init_worker(progress_q: Any, first_failed: Any, parent_pid: int) -> None:
    global _progress_q, _first_failed
    die_with_parent(parent_pid)
    _progress_q, _first_failed = progress_q, first_failed
    tune_malloc()


@contextlib.contextmanager
def _main_not_reimported() -> Iterator[None]:
    """Start worker processes without re-running the caller's ``__main__``.

    The ``spawn`` start method makes each new worker import the parent's main script
    (as ``__mp_main__``), so a plain script or a stdin program without an
    ``if __name__ == "__main__":`` guard would run again in every worker and break the
    pool. The workers need nothing from it (they run nqkit's own functions), so the main
    module is swapped for an empty one while they start. Notebooks and ``python -c`` have
    no main file and are unaffected either way.
    """
    import sys
    import types

    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def tune_malloc() -> None:
    """Keep glibc from returning memory to the system after every ~1 MB line.

    Each original line and its decoded objects are allocated and freed again; by default
    glibc maps large blocks afresh and trims the heap top each time, and the page faults
    cost about 8% of a simplify run. Raising the mmap and trim thresholds keeps the pages.
    For processes nqkit owns (the CLI, its workers); a no-op where glibc is absent.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
        libc.mallopt(m_mmap_threshold, 64 << 20)
        libc.mallopt(m_trim_threshold, 256 << 20)
        libc.mallopt(m_top_pad, 64 << 20)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def _shard_worker(index: int, path: str, part: str, compress: bool, lo: int,
                  hi: int) -> tuple[Any, ...]:
    """Simplify one shard, or the ``[lo, hi)`` range of it, into the part file ``part``;
    errors come back as plain tuples (InputError does not survive pickling), and with
    either the ids and line numbers of the examples written (the parent checks that no
    id repeats across the whole input)."""

    def stop() -> bool:
        return bool(_first_failed.value < index)

    ids = (array("q"), array("q"))
    if stop():
        return ("ok", 0, ids)
    try:
        with open(part, "wb") as raw:
            if compress:
                import gzip

                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                    n = _simplify_stream(Path(path), gz, _progress_q.put, stop, lo, hi, ids)
            else:
                n = _simplify_stream(Path(path), raw, _progress_q.put, stop, lo, hi, ids)
        return ("ok", n, ids)
    except InputError as e:
        with _first_failed.get_lock():
            _first_failed.value = min(_first_failed.value, index)
        return ("error", e.where, e.problem, e.fix, ids)


def iter_simplify(inputs: PathsLike, output: str | os.PathLike[str], *,
                  jobs: int | None = None) -> Generator[int, None, SimplifyResult]:
    """Simplify every example of ``inputs`` (paths, globs, shards) into ``output``.

    A generator: it does the work as it is consumed and yields ``1`` for each example
    finished (to drive a progress bar); its return value (``StopIteration.value``)
    is a :class:`SimplifyResult`. The output is written atomically (``.gz`` is compressed)
    and never over an input. With ``jobs`` > 1 (default: one per core) shards are
    simplified in worker processes, one shard per task, the last shards cut in two when
    they do not divide evenly among the processes (so a single shard also uses both
    cores); the output keeps the input order. Worker processes are started with
    ``spawn`` without re-running the caller's main script, so this works from a plain
    script (no ``if __name__ == "__main__":`` guard needed), a notebook or a REPL; they
    end with their parent, even when it is killed.
    """
    paths = expand_paths(inputs, what="NQ")
    check_output(output, paths)
    out_path = Path(output)
    compress = out_path.suffix == ".gz"
    if jobs is None:
        jobs = os.cpu_count() or 1
    jobs = max(1, jobs)
    if any(str(p).startswith(_PROCESS_LOCAL) for p in paths):
        # ``<(zcat ...)`` is /dev/fd/N: a descriptor only this process has; read it here.
        jobs = 1
    if jobs == 1:
        total = 0
        seen = ExampleIds(paths)
        with atomic_output(out_path, "wb") as out:
            # One process: decompress in a background thread when there is a core for it
            # (in a parallel run the processes fill the cores, and threads only cost).
            threads = 1 if (os.cpu_count() or 1) > 1 else 0
            for file_no, p in enumerate(paths):
                for lineno, line in iter_lines(p, threads=threads):
                    text, example_id = _simplify_line(line, location(p, lineno))
                    seen.add(example_id, file_no, lineno)
                    out.write(text)
                    total += 1
                    yield 1
            _check_not_empty(total, paths)
    else:
        total = yield from _parallel(paths, out_path, compress, jobs)
    return SimplifyResult(out_path, tuple(paths), total)


def _check_not_empty(total: int, paths: Sequence[Path]) -> None:
    if total == 0:
        raise InputError(examples(paths, width=None), "no examples found (the input is empty)",
                         "give non-empty NQ .jsonl or .jsonl.gz files")


def _parallel(paths: Sequence[Path], out_path: Path, compress: bool,
              jobs: int) -> Generator[int, None, int]:
    import multiprocessing

    tasks = _plan(paths, jobs)
    ctx = multiprocessing.get_context("spawn")  # no fork of a threaded parent (tqdm)
    progress_q = ctx.Queue()
    first_failed = ctx.Value("q", len(tasks))  # no task has failed yet
    parts: list[str] = []
    # The final output is written by atomic_output below; the parts go beside it, so its
    # directory is created (and noted) by the same mechanism first.
    with atomic_output(out_path, "wb", compress=False) as out:
        try:
            total = yield from _run_parts(paths, tasks, parts, progress_q, first_failed, ctx,
                                          out_path, compress, jobs)
            for part in parts:
                _append(part, out)
        finally:
            for part in parts:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(part)
    return total


def _run_parts(paths: Sequence[Path], tasks: list[_Task], parts: list[str], progress_q: Any,
               first_failed: Any, ctx: Any, out_path: Path, compress: bool,
               jobs: int) -> Generator[int, None, int]:
    from concurrent.futures import ProcessPoolExecutor

    try:
        for _ in tasks:
            fd, part = make_temp(out_path, ".part.tmp")
            os.close(fd)
            parts.append(part)
        with ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=ctx,
                                 initializer=_init_worker,
                                 initargs=(progress_q, first_failed, os.getpid())) as pool:
            try:
                with _main_not_reimported():  # workers start during the first submits
                    futures = [pool.submit(_shard_worker, k, str(paths[i]), part, compress,
                                           lo, hi)
                               for k, ((i, lo, hi), part) in enumerate(zip(tasks, parts,
                                                                           strict=True))]
                while not all(f.done() for f in futures):
                    with contextlib.suppress(queue.Empty):
                        yield from itertools.repeat(1, progress_q.get(timeout=0.1))
                results = [f.result() for f in futures]
            except BaseException:  # interrupted, or a worker died: stop every task
                first_failed.value = -1
                # Their work is thrown away: end the workers now rather than wait for
                # them (one may be blocked reading a pipe that will never be written).
                for proc in list(getattr(pool, "_processes", {}).values()):
                    with contextlib.suppress(Exception):
                        proc.terminate()
                raise
        while True:
            try:
                yield from itertools.repeat(1, progress_q.get_nowait())
            except queue.Empty:
                break
        # In input order, the ids of each part (up to its error, if it failed) before its
        # error: the error reported is the first a one-process run would meet.
        seen = ExampleIds(paths)
        for (file_no, _, _), r in zip(tasks, results, strict=True):
            for example_id, lineno in zip(*r[-1], strict=True):
                seen.add(example_id, file_no, lineno)
            if r[0] == "error":
                raise InputError(r[1], r[2], r[3])
        total = sum(r[1] for r in results)
        _check_not_empty(total, paths)
        # Parts are whole gzip members when compressing; members concatenate into one
        # valid gzip file, so no recompression is needed (the caller appends them).
        return total
    finally:
        progress_q.close()


def _append(part: str, out: Any) -> None:
    """Append the file ``part`` to the binary file ``out``, in the kernel when it can."""
    out.flush()
    with open(part, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        done = 0
        try:
            while done < size:
                n = os.copy_file_range(src.fileno(), out.fileno(), size - done)
                if n == 0:
                    break
                done += n
        except (AttributeError, OSError):  # not Linux, or not for these files
            pass
        out.seek(0, os.SEEK_END)  # the kernel moved the file offset: resynchronise
        if done < size:
            src.seek(done)
            shutil.copyfileobj(src, out, 1 << 22)


def simplify_files(inputs: PathsLike, output: str | os.PathLike[str], *,
                   jobs: int | None = None) -> SimplifyResult:
    """Run :func:`iter_simplify` to the end (no progress display) and return its result."""
    gen = iter_simplify(inputs, output, jobs=jobs)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            result: SimplifyResult = stop.value
            return result


def simplify_command(inputs: PathsLike, output: str | os.PathLike[str], *,
                     jobs: int | None = None) -> None:
    """``nqkit simplify``: original NQ files to the simplified format, byte for byte
    official, several shards in parallel (``jobs`` processes), with a progress bar; the
    count on stdout."""
    import sys

    from nqkit.errors import InputError
    from nqkit.io import check_output, expand_paths
    from nqkit.report import progress

    tune_malloc()

    if jobs is not None and jobs < 1:
        raise InputError("--jobs", f"must be at least 1, found {jobs}", "give -j 1 or more")
    check_output(output, expand_paths(inputs, what="NQ"), option="-o")
    gen = iter_simplify(inputs, output, jobs=jobs)
    result: SimplifyResult | None = None

    def drive() -> Iterator[int]:
        nonlocal result
        result = yield from gen

    try:
        for _ in progress(drive(), desc="simplify", unit="ex"):
            pass
    finally:
        gen.close()  # on an error or a signal: stop the workers, remove temp files now
    assert result is not None  # set when the generator finishes
    n_files = len(result.inputs)
    print(f"simplified {result.examples:,} examples from {n_files:,} "
          f"file{'s' if n_files != 1 else ''} into {result.output}", file=sys.stdout)
