"""Reading: (possibly gzipped) files, lines, JSON lines and JSON documents.

``.gz`` files are decompressed with ``isal`` when it is installed (about 5x faster than
zlib), else with the standard library. A non-seekable input (a FIFO, ``<(cat file.gz)``)
is read once: the gzip magic is taken from the same stream. Errors name the file and the
line (:class:`~nqkit.errors.InputError`).
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import io
import zlib
from collections.abc import Iterator
from typing import IO, Any

import orjson

from nqkit.errors import InputError, location
from nqkit.io.paths import PathLike, PathsLike, expand_paths, is_regular_file

try:  # isal is optional: a pure speed-up
    from isal import igzip as _igzip
except ImportError:  # pragma: no cover - depends on the platform
    _igzip = None  # type: ignore[assignment]

__all__ = [
    "ObjectPairs",
    "decode_utf8",
    "gc_paused",
    "is_gzip",
    "iter_jsonl",
    "iter_line_blocks",
    "iter_line_spans",
    "iter_lines",
    "open_binary",
    "parse_json_document",
    "parse_json_line",
    "read_bytes",
    "read_json",
]


def decode_utf8(raw: bytes, where: str | None) -> str:
    """``raw`` as text, or an :class:`InputError` at ``where`` naming the bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = raw[e.start:e.start + 1].hex()
        raise InputError(where, f"invalid UTF-8 (byte 0x{bad} at column {e.start + 1})",
                         "save the file as UTF-8") from None


def is_gzip(path: PathLike) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its name).

    Only for regular files: peeking at a FIFO would consume its first bytes (open it with
    :func:`open_binary`, which peeks on the stream it returns).
    """
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


class _Prefixed(io.RawIOBase):
    """A read-only raw stream: ``prefix`` (bytes already read) and then the rest of ``f``."""

    def __init__(self, prefix: bytes, f: IO[bytes]) -> None:
        self._prefix = prefix
        self._f = f

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._prefix:
            n = min(len(b), len(self._prefix))
            b[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._f.read(len(b))
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._f.close()
        super().close()


def _open_stream(path: PathLike) -> IO[bytes]:
    """A FIFO or another non-seekable file, opened once: the magic is read from the stream."""
    f = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by the returned stream
    head = b""
    while len(head) < 2:
        more = f.read(2 - len(head))
        if not more:
            break
        head += more
    stream = io.BufferedReader(_Prefixed(head, f), 1 << 20)
    if head == b"\x1f\x8b":
        if _igzip is not None:
            return _igzip.IGzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
        return gzip.GzipFile(fileobj=stream, mode="rb")
    return stream


def open_binary(path: PathLike, *, threads: int = 0) -> IO[bytes]:
    """Open a file for binary reading, decompressing gzip transparently.

    ``threads`` > 0 decompresses in that many background threads (isal only), which
    overlaps decompression with the caller's work on another core; the thread reads
    ahead, so a truncated file is noticed a few lines before its end. A FIFO or other
    non-regular file is opened exactly once (reopening it would lose its first bytes).
    """
    if not is_regular_file(path):
        return _open_stream(path)
    if is_gzip(path):
        if threads > 0 and _igzip is not None:
            try:
                from isal import igzip_threaded
            except ImportError:  # pragma: no cover - an isal older than 1.4
                pass
            else:
                return igzip_threaded.open(path, "rb", threads=threads)
        if _igzip is not None:
            return _igzip.open(path, "rb")
        return gzip.open(path, "rb")
    return open(path, "rb")


_TRUNCATED = (EOFError, zlib.error, gzip.BadGzipFile, OSError)


def _read_error(path: PathLike, lineno: int, e: BaseException) -> InputError:
    """The error for a file that cannot be read at ``lineno`` (truncated gzip, I/O)."""
    if isinstance(e, FileNotFoundError | PermissionError | IsADirectoryError):
        return InputError(path, f"cannot read the file ({e.strerror})", "check the path")
    return InputError(
        location(path, lineno),
        f"the compressed file is truncated or corrupt ({e.__class__.__name__}: {e})",
        "download or copy the file again",
    )


def iter_lines(path: PathLike, *, threads: int = 0, blank: bool = False
               ) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, line_bytes)`` of a (possibly gzipped) file; blank lines skipped
    unless ``blank`` (a reader whose records span lines needs every line).

    A truncated or corrupt gzip stream raises :class:`InputError` naming the last good line.
    ``threads`` is passed to :func:`open_binary`.
    """
    lineno = 0
    try:
        with open_binary(path, threads=threads) as f:
            if blank:
                for lineno, line in enumerate(f, 1):
                    yield lineno, line
                return
            for lineno, line in enumerate(f, 1):
                if not line.isspace():  # blank lines skipped; no copy of long lines
                    yield lineno, line
    except _TRUNCATED as e:
        raise _read_error(path, lineno + 1, e) from e


def iter_line_spans(path: PathLike, chunk_size: int = 1 << 22, *, threads: int = 0
                    ) -> Iterator[tuple[int, bytes, int, int]]:
    """Yield ``(line_number, buffer, start, end)``: each non-blank line is ``buffer[start:end]``.

    For scanners of very long lines (an NQ dev line is ~800 KB): lines are located inside
    4 MB decompressed chunks and handed out by bounds, so only a line that crosses a chunk
    boundary is copied, once (``buffer.find(x, start, end)`` reads in place). Reading lines
    one by one from a gzip stream costs about half again the decompression itself; this
    costs a few percent. A 4 MB chunk is still in the CPU cache when the newlines are
    searched (with 16 MB chunks that search read memory and cost 7% of a dev shard), and
    stays under glibc's mmap threshold, so chunk buffers are reused instead of page-faulted
    afresh. Truncated gzip raises :class:`InputError`.
    """
    lineno = 0
    parts: list[bytes | memoryview] = []

    def blank(buf: bytes, lo: int, hi: int) -> bool:
        return lo == hi or (buf[lo] in b" \t\r" and buf[lo:hi].isspace())

    try:
        with open_binary(path, threads=threads) as f:
            while chunk := f.read(chunk_size):
                pos = 0
                nl = chunk.find(b"\n")
                if parts:  # finish the line that started in an earlier chunk
                    if nl < 0:
                        parts.append(chunk)
                        continue
                    parts.append(memoryview(chunk)[:nl])
                    line = b"".join(parts)
                    parts = []
                    lineno += 1
                    if not blank(line, 0, len(line)):
                        yield lineno, line, 0, len(line)
                    pos, nl = nl + 1, chunk.find(b"\n", nl + 1)
                while nl >= 0:
                    lineno += 1
                    if not blank(chunk, pos, nl):
                        yield lineno, chunk, pos, nl
                    pos, nl = nl + 1, chunk.find(b"\n", nl + 1)
                if pos < len(chunk):
                    parts.append(memoryview(chunk)[pos:])  # copied once, by the join
        if parts:
            line = b"".join(parts)
            lineno += 1
            if not blank(line, 0, len(line)):
                yield lineno, line, 0, len(line)
    except _TRUNCATED as e:
        raise _read_error(path, lineno + 1, e) from e


def iter_line_blocks(path: PathLike, block_size: int, *, threads: int = 0
                     ) -> Iterator[tuple[int, memoryview]]:
    """Yield ``(line_number, block)``: the file cut into blocks of whole lines (each ends
    in "\\n" but the last, when the file does not), ``line_number`` that of the block's
    first line; every line, blank or not, is in one block.

    For readers that scan lines in bulk (numpy over a block): a block is ``block_size``
    bytes and the rest of the line it ends in, read into a buffer of its own (never
    zero-filled first), so memory stays bounded by the block size and the longest line,
    never the file. A truncated or corrupt gzip stream raises :class:`InputError` naming
    the line it breaks off in, after a last block of the whole lines read before it (as
    :func:`iter_lines` yields every line before the error).
    """
    import numpy as np  # only readers in bulk need it

    lineno = 1
    # read in pieces of the line reader's buffer: a stream that breaks off keeps what came
    # before, so the line named is the one the line reader names, within a piece
    piece = 1 << 13
    try:
        f = open_binary(path, threads=threads)
    except _TRUNCATED as e:
        raise _read_error(path, lineno, e) from e
    with f:
        while True:
            buf = np.empty(block_size + (1 << 16), dtype=np.uint8)
            n = 0
            try:
                while n < block_size:
                    into = buf[n:min(n + piece, block_size)].data
                    got = f.readinto(into)  # type: ignore[attr-defined]
                    if not got:
                        break
                    n += got
                if n and buf[n - 1] != 0x0A:  # the line goes on: read it whole
                    rest = np.frombuffer(f.readline(), dtype=np.uint8)
                    if n + len(rest) > len(buf):
                        buf = np.concatenate((buf[:n], rest))
                    else:
                        buf[n:n + len(rest)] = rest
                    n += len(rest)
            except _TRUNCATED as e:
                whole = buf[:n].tobytes().rfind(b"\n") + 1
                if whole:
                    yield lineno, buf[:whole].data
                    lineno += int(np.count_nonzero(buf[:whole] == 0x0A))
                raise _read_error(path, lineno, e) from e
            if not n:
                return
            yield lineno, buf[:n].data
            lineno += int(np.count_nonzero(buf[:n] == 0x0A))


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a reader builds many small objects.

    Decoded JSON and the records built from it hold no reference cycles, but every 700
    new objects start a collection that walks the young ones, and each few of those a
    walk of everything built so far: on a dev set's 40,000 annotations that is a third of
    the reading time. Reference counting still frees everything as usual; the collector
    resumes (if it was on) when the block ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_json_line(raw: bytes | str, where: str | None) -> Any:
    """Parse one JSON value, raising :class:`InputError` at ``where`` when it is malformed."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise InputError(where, f"malformed JSON ({e})",
                         "each line must be one complete JSON object") from e


def iter_jsonl(paths: PathsLike, *, what: str = "input") -> Iterator[dict[str, Any]]:
    """Lazily yield the JSON objects of every line of every file (plain or gzipped)."""
    for path in expand_paths(paths, what=what):
        for lineno, line in iter_lines(path):
            obj = parse_json_line(line, location(path, lineno))
            if not isinstance(obj, dict):
                raise InputError(location(path, lineno),
                                 f"expected a JSON object, found {type(obj).__name__}",
                                 "each line must be one JSON object {...}")
            yield obj


class ObjectPairs(list[tuple[str, Any]]):
    """A JSON object as its ``(key, value)`` pairs in file order, a repeated key kept
    (a dict keeps the last value of a key only, so a repeat would go unseen)."""


def _object_pairs(data: bytes) -> ObjectPairs:
    """The top-level object of ``data`` (valid JSON, an object) as :class:`ObjectPairs`;
    the objects inside it are dicts."""
    import json

    top: list[tuple[str, Any]] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal top
        top = pairs  # the top-level object closes last
        return dict(pairs)

    json.loads(data, object_pairs_hook=hook)
    return ObjectPairs(top)


def read_bytes(path: PathLike, *, what: str = "input") -> bytes:
    """The whole content of one (possibly gzipped) file, read once: a FIFO or ``<(...)``
    gives its bytes to this one read, so a reader that must look at a file before parsing
    it (its shape, then its records) looks at these bytes, never at the file twice."""
    try:
        with open_binary(path) as f:
            return f.read()
    except _TRUNCATED as e:
        if isinstance(e, FileNotFoundError | PermissionError | IsADirectoryError):
            raise _read_error(path, 0, e) from e
        raise InputError(path, f"the compressed file is truncated or corrupt ({e})",
                         "download or copy the file again") from e


def parse_json_document(data: bytes, where: PathLike, *, what: str = "input",
                        pairs: bool = False) -> Any:
    """``data`` (a whole file's bytes) as one JSON document; with ``pairs``, a top-level
    object as :class:`ObjectPairs`. :class:`InputError` at ``where`` when it is empty or
    malformed."""
    if not data.strip():
        raise InputError(where, f"the {what} file is empty", "give a non-empty JSON file")
    try:
        out = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise InputError(where, f"malformed JSON ({e})",
                         "check that the file is complete JSON") from e
    return _object_pairs(data) if pairs and isinstance(out, dict) else out


def read_json(path: PathLike, *, what: str = "input", pairs: bool = False) -> Any:
    """Read a whole (possibly gzipped) JSON file. With ``pairs``, a top-level object is
    returned as :class:`ObjectPairs` (for files keyed by question or id, where a key given
    twice is two predictions for one item)."""
    paths = expand_paths(path, what=what)
    if len(paths) != 1:  # a glob, or a registry name of several files (ambignq/light)
        raise InputError(path, f"names {len(paths)} files, expected one {what} file",
                         "give one file (NAME:FILE picks one file of a registry dataset)")
    p = paths[0]
    return parse_json_document(read_bytes(p, what=what), p, what=what, pairs=pairs)
