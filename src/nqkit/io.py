"""File access shared by every format: paths and globs, gzip, JSON lines, atomic writes.

* Inputs may be a path, a glob pattern or a list of either (``expand_paths``); shards are
  read in sorted order, lazily.
* ``.gz`` files are decompressed with ``isal`` when it is installed (about 5x faster than
  zlib), else with the standard library.
* Outputs are written to a temporary file in the same directory and moved into place with
  ``os.replace`` only when complete, so a failed run never leaves a half-written file.
  Temporary files are named ``.NAME.PID-HOST.XXXXXXXX.tmp``; one left behind by a killed
  process (its pid no longer runs on this host) is removed by the next write of ``NAME``.
* Inside :func:`output_transaction` (every CLI command runs in one) finished outputs stay
  staged until the whole command succeeds, then appear together; on any error or
  interruption none appears.
* Output paths are checked before any work (:func:`check_output`): an existing directory,
  an impossible parent (a file, no permission) or an input is refused with one line.
  Missing parent directories are created, with a note on stderr (and removed again when
  the command fails).
* A non-seekable input (a FIFO, ``<(cat file.gz)``) is read once: the gzip magic is
  taken from the same stream.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import gc
import glob
import gzip
import hashlib
import io
import os
import re
import socket
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from nqkit.errors import InputError, location

try:  # isal is optional: a pure speed-up
    from isal import igzip as _igzip
except ImportError:  # pragma: no cover - depends on the platform
    _igzip = None  # type: ignore[assignment]

PathLike = str | os.PathLike[str]
PathsLike = PathLike | Sequence[PathLike]

_GLOB_CHARS = set("*?[")


STDIO = "-"  # standard input where a file is read, standard output where one is written
_STDIN_COPY: list[Path] = []


def _stdin_file() -> Path:
    """Standard input, copied once to a temporary file (removed at exit): readers that
    look at a file twice (format detection, then parsing) see all of it, and memory stays
    bounded."""
    if not _STDIN_COPY:
        import atexit
        import shutil
        import tempfile

        fd, name = tempfile.mkstemp(prefix="nqkit-stdin-")
        with os.fdopen(fd, "wb") as f:
            shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
        atexit.register(lambda: Path(name).unlink(missing_ok=True))
        _STDIN_COPY.append(Path(name))
    return _STDIN_COPY[0]


def _check_file(s: str, what: str) -> Path:
    """``s`` as a Path when it names a readable file, else the InputError saying why.

    ``-`` is standard input (see :func:`_stdin_file`)."""
    if s == STDIO:
        return _stdin_file()
    try:
        st = os.stat(s)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(s, f"the {what} path is a loop of symbolic links",
                             "point the link at a real file") from None
        if isinstance(e, FileNotFoundError | NotADirectoryError):
            dangling = os.path.islink(s)
            raise InputError(s, f"{what} file does not exist"
                             + (" (a symbolic link to a missing file)" if dangling else ""),
                             "check the path") from None
        raise InputError(s, f"cannot read the {what} file ({e.strerror})",
                         "check the path and its permissions") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(s, f"{what} is a directory, expected a file",
                         "give a file or a glob such as DIR/*.jsonl.gz")
    return Path(s)


def expand_paths(paths: PathsLike, *, what: str = "input") -> list[Path]:
    """Expand a path, a glob pattern, or a list of them into existing files.

    Globs are expanded and sorted (shards in order); plain paths keep the given order. A
    dataset registry name that is not an existing path (``nq/dev``, ``squad/dev-1.1``)
    stands for its downloaded files; when they are not on disk the error names the
    ``nqkit data get`` command (nothing is downloaded).
    Raises :class:`InputError` when a path does not exist, is a directory or a loop of
    symbolic links, or a pattern matches nothing.
    """
    items: Sequence[PathLike] = [paths] if isinstance(paths, str | os.PathLike) else paths
    memo = _EXPANSIONS.get()
    key = tuple(os.fspath(item) for item in items)
    if memo is not None and key in memo:
        return list(memo[key])
    out: list[Path] = []
    for item in items:
        s = os.fspath(item)
        if any(c in s for c in _GLOB_CHARS) and not os.path.lexists(s):
            matches = sorted(glob.glob(s))
            if not matches:
                raise InputError(s, f"the {what} pattern matches no file", "check the glob")
            out.extend(_check_file(m, what) for m in matches)
        elif "/" in s and not os.path.lexists(s) and (named := _registry_files(s)) is not None:
            out.extend(named)
        else:
            out.append(_check_file(s, what))
    if not out:
        raise InputError(None, f"no {what} files given", "give at least one path or glob")
    if memo is not None:
        memo[key] = list(out)
    return out


_EXPANSIONS: contextvars.ContextVar[dict[tuple[str, ...], list[Path]] | None] = (
    contextvars.ContextVar("nqkit_expansions", default=None))


@contextlib.contextmanager
def expansions_reused() -> Iterator[None]:
    """Inside the block, :func:`expand_paths` answers paths it has already expanded with
    the files it found then, so a command that checks its inputs before any work (no
    output over an input) and then reads them expands each once, and both see the same
    files."""
    token = _EXPANSIONS.set({})
    try:
        yield
    finally:
        _EXPANSIONS.reset(token)


def _registry_files(name: str) -> list[Path] | None:
    """The local files of a dataset registry name (``nq/dev``, ``nq/dev:0-1``) that is not
    an existing path, or None when it is no registry name (see nqkit.datasets.store)."""
    from nqkit.datasets.store import lookup_paths

    return lookup_paths(name)


def decode_utf8(raw: bytes, where: str | None) -> str:
    """``raw`` as text, or an :class:`InputError` at ``where`` naming the bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = raw[e.start:e.start + 1].hex()
        raise InputError(where, f"invalid UTF-8 (byte 0x{bad} at column {e.start + 1})",
                         "save the file as UTF-8") from None


def _is_regular(path: PathLike) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # let open() report the problem


def is_regular_file(path: PathLike) -> bool:
    """True for a regular file (False for a FIFO, ``<(...)``, a character device)."""
    return _is_regular(path)


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
    if not _is_regular(path):
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


def iter_lines(path: PathLike, *, threads: int = 0) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, line_bytes)`` of a (possibly gzipped) file; blank lines skipped.

    A truncated or corrupt gzip stream raises :class:`InputError` naming the last good line.
    ``threads`` is passed to :func:`open_binary`.
    """
    lineno = 0
    try:
        with open_binary(path, threads=threads) as f:
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


def read_json(path: PathLike, *, what: str = "input") -> Any:
    """Read a whole (possibly gzipped) JSON file."""
    paths = expand_paths(path, what=what)
    if len(paths) != 1:  # a glob, or a registry name of several files (ambignq/light)
        raise InputError(path, f"names {len(paths)} files, expected one {what} file",
                         "give one file (NAME:FILE picks one file of a registry dataset)")
    p = paths[0]
    try:
        with open_binary(p) as f:
            data = f.read()
    except _TRUNCATED as e:
        raise InputError(p, f"the compressed file is truncated or corrupt ({e})",
                         "download or copy the file again") from e
    if not data.strip():
        raise InputError(p, f"the {what} file is empty", "give a non-empty JSON file")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise InputError(p, f"malformed JSON ({e})", "check that the file is complete JSON") from e


# ----------------------------------------------------------------------------- outputs

def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


_HOST = _host_tag()
_STALE = re.compile(r"(\d+)-([0-9a-f]{8})\.[A-Za-z0-9_]+(?:\.part)?\.tmp")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # pragma: no cover - e.g. pid out of range
        return False
    return True


def remove_stale_temps(target: PathLike) -> int:
    """Remove temporary files of ``target`` left by nqkit processes that were killed.

    Only files of nqkit's own naming (``.NAME.PID-HOST.XXXXXXXX[.part].tmp``) whose process
    no longer runs on this host are removed (a live pid, or a file written by another
    host of a shared file system, is left alone). Returns the number removed.
    """
    t = Path(target)
    prefix = f".{t.name}."
    n = 0
    try:
        names = os.listdir(t.parent)
    except OSError:
        return 0
    for name in names:
        if not name.startswith(prefix):
            continue
        m = _STALE.fullmatch(name, len(prefix))
        if m is None or m.group(2) != _HOST or _pid_alive(int(m.group(1))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(t.parent / name)
            n += 1
    return n


def make_temp(target: PathLike, suffix: str = ".tmp") -> tuple[int, str]:
    """``(fd, path)`` of a new temporary file beside ``target``, named after it and this
    process (so a later run can tell a leftover of a killed process and remove it)."""
    t = Path(target)
    remove_stale_temps(t)
    return tempfile.mkstemp(prefix=f".{t.name}.{os.getpid()}-{_HOST}.", suffix=suffix,
                            dir=t.parent)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        # realpath, unlike Path.resolve() before Python 3.13, never raises on a symlink loop
        return os.path.realpath(a) == os.path.realpath(b)


def ensure_not_input(output: PathLike, inputs: Iterable[PathLike], *,
                     where: str | None = None) -> None:
    """Refuse to write an output over one of the inputs (nothing a user gave is modified).

    The same file under another name (a symlink, a hard link) counts as the same.
    ``where`` names the output in the message (default: its path).
    """
    out = Path(output)
    for p in inputs:
        if _same_file(out, Path(p)):
            raise InputError(where or output, "the output path is one of the inputs",
                             "choose another output file; inputs are never modified")


def check_output(path: PathLike, inputs: Iterable[PathLike] = (), *, kind: str = "file",
                 option: str | None = None) -> Path:
    """Refuse, with one :class:`InputError` line, an output that cannot be written.

    ``kind`` is ``"file"`` (refused: an existing directory, a non-regular file, one of
    ``inputs``) or ``"dir"`` (refused: an existing non-directory). Either way the
    nearest existing ancestor must be a writable directory (a missing tree below it is
    created when the output is written, with a note on stderr). ``option`` names the
    command-line option in the message. Returns the path.
    """
    p = Path(path)
    if os.fspath(path) == STDIO and kind == "file":
        return p  # standard output
    where = f"{option} {p}" if option else p
    if kind == "file":
        if p.is_dir():
            raise InputError(where, "is a directory, expected a file name",
                             f"give a file path, e.g. {p / 'out'}")
        if p.exists() and not p.is_file():
            raise InputError(where, "exists and is not a regular file",
                             "give the path of a regular file to write")
        parent = p.parent
    elif p.exists() and not p.is_dir():
        raise InputError(where, "exists and is not a directory", "give a directory path")
    else:
        parent = p
    ancestor = parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        if ancestor.is_symlink():  # a dangling link: nothing can be created through it
            break
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(where, f"cannot be created: {ancestor} is not a directory",
                         "choose a path inside an existing directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InputError(where, f"cannot be written: no permission to write in {ancestor}",
                         "choose a writable directory")
    ensure_not_input(p, inputs, where=str(where))
    return p


class _Transaction:
    """Outputs staged until the command that writes them finishes."""

    def __init__(self) -> None:
        self.staged: dict[Path, str] = {}  # target -> finished temp file
        self.created: list[Path] = []  # directories created for outputs, parents first

    def stage(self, target: Path, tmp: str) -> None:
        old = self.staged.pop(target, None)
        if old is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(old)
        self.staged[target] = tmp

    def commit(self) -> None:
        while self.staged:
            target = next(iter(self.staged))
            os.replace(self.staged[target], target)
            del self.staged[target]
        self.created.clear()

    def abort(self) -> None:
        for tmp in self.staged.values():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        self.staged.clear()
        _remove_created(self.created)


_TRANSACTION: contextvars.ContextVar[_Transaction | None] = contextvars.ContextVar(
    "nqkit_output_transaction", default=None)


@contextlib.contextmanager
def output_transaction() -> Iterator[None]:
    """Every :func:`atomic_output` inside the block appears when the block succeeds, and
    none when it raises (including ``KeyboardInterrupt``). Nested blocks join the outer one.

    Cache entries (``atomic_output(..., cache=True)``) are not deferred: they are valid
    whatever happens next.
    """
    if _TRANSACTION.get() is not None:
        yield
        return
    t = _Transaction()
    token = _TRANSACTION.set(t)
    try:
        yield
    except BaseException:
        t.abort()
        raise
    else:
        t.commit()
    finally:
        _TRANSACTION.reset(token)


def staged_path(path: PathLike) -> Path:
    """Where the content of output ``path`` is now: its staged temporary file while the
    enclosing :func:`output_transaction` has not finished, else ``path`` itself."""
    t = _TRANSACTION.get()
    p = Path(path)
    if t is not None and p in t.staged:
        return Path(t.staged[p])
    return p


def _make_parents(directory: Path, note: bool = True) -> list[Path]:
    """Create ``directory`` and its missing parents (a note on stderr unless ``note`` is
    false); returns the ones created."""
    missing = []
    d = directory
    while not d.exists() and d != d.parent:
        missing.append(d)
        d = d.parent
    if not missing:
        return []
    directory.mkdir(parents=True, exist_ok=True)
    if note:
        print(f"nqkit: note: created directory {directory}", file=sys.stderr)
    return missing[::-1]


def _remove_created(dirs: list[Path]) -> None:
    for d in reversed(dirs):
        with contextlib.suppress(OSError):
            d.rmdir()  # only when empty
    dirs.clear()


@contextlib.contextmanager
def atomic_output(path: PathLike, mode: str = "w", *, encoding: str = "utf-8",
                  compress: bool | None = None, cache: bool = False) -> Iterator[IO[Any]]:
    """Write ``path`` all-or-nothing: a temp file in the same directory, renamed on success.

    On any exception the temporary file is removed and ``path`` is left as it was. Paths
    ending in ``.gz`` are gzip-compressed unless ``compress`` says otherwise (``False`` for
    bytes that are already gzip members). Inside :func:`output_transaction` the rename
    waits for the end of the transaction, unless ``cache`` (a cache entry, valid on its
    own). The path is checked first (:func:`check_output`); missing parent directories
    are created with a note on stderr.
    """
    if os.fspath(path) == STDIO:  # standard output: a stream, written as it comes
        out: IO[Any] = sys.stdout.buffer if "b" in mode else sys.stdout
        yield out
        out.flush()
        return
    target = Path(path)
    check_output(target)
    txn = None if cache else _TRANSACTION.get()
    created = _make_parents(target.parent, note=not cache)
    if txn is not None:
        txn.created.extend(created)
        created = []
    fd, tmp = make_temp(target)
    # mkstemp creates 0600; the finished file gets the mode open() would give (umask).
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(fd, 0o666 & ~umask)
    try:
        raw: IO[Any] = os.fdopen(fd, "wb")
        stream: IO[Any] = raw
        if compress if compress is not None else target.suffix == ".gz":
            stream = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0)  # type: ignore[assignment]
        if "b" not in mode:
            stream = io.TextIOWrapper(stream, encoding=encoding, newline="\n")
        try:
            yield stream
        finally:
            stream.close()
            if stream is not raw:
                raw.close()
        if txn is not None:
            txn.stage(target, tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _remove_created(created)
        raise


def write_jsonl(path: PathLike, records: Iterable[Any]) -> int:
    """Write records as JSON lines atomically; returns the number written."""
    n = 0
    with atomic_output(path, "wb") as f:
        for rec in records:
            f.write(orjson.dumps(rec))
            f.write(b"\n")
            n += 1
    return n


def write_json(path: PathLike, obj: Any, *, indent: bool = True) -> None:
    """Write one JSON document atomically."""
    opts = orjson.OPT_INDENT_2 if indent else 0
    with atomic_output(path, "wb") as f:
        f.write(orjson.dumps(obj, option=opts))
        f.write(b"\n")
