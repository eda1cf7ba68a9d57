"""Writing: atomic output files and directories, and output transactions.

* Outputs are written to a temporary file in the same directory and moved into place with
  ``os.replace`` only when complete, so a failed run never leaves a half-written file.
  Temporary files are named ``.NAME.PID-HOST.XXXXXXXX.tmp``; one left behind by a killed
  process (its pid no longer runs on this host) is removed by the next write of ``NAME``.
* A directory output (an index) is built in a temporary sibling directory and renamed
  into place only when complete (:func:`atomic_directory`).
* Inside :func:`output_transaction` (every CLI command runs in one) finished outputs stay
  staged until the whole command succeeds, then appear together; on any error or
  interruption none appears.
* Output paths are checked before any work (:func:`check_output`): an existing directory,
  an impossible parent (a file, no permission) or an input is refused with one line.
  Missing parent directories are created, with a note on stderr (and removed again when
  the command fails).
"""

from __future__ import annotations

import contextlib
import contextvars
import gzip
import hashlib
import io
import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePath
from typing import IO, Any

import orjson

from nqkit.errors import InputError
from nqkit.io.paths import STDIO, PathLike

__all__ = [
    "atomic_directory",
    "atomic_output",
    "check_collisions",
    "check_new_directory",
    "check_output",
    "ensure_not_input",
    "make_temp",
    "output_transaction",
    "remove_stale_temps",
    "staged_path",
    "write_json",
    "write_jsonl",
]


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
    try:
        return tempfile.mkstemp(prefix=f".{t.name}.{os.getpid()}-{_HOST}.", suffix=suffix,
                                dir=t.parent)
    except OSError as e:
        raise _cannot_write(t.parent, e) from None


def _cannot_write(directory: Path, e: OSError) -> InputError:
    """The one line for an output directory the system refuses (no traceback)."""
    return InputError(directory, f"cannot create or write to this directory ({e.strerror or e})",
                      "choose an output in a directory you can write to")


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


def _named_files(given: PathLike) -> list[Path | str]:
    """The files a text given for an input names, without refusing anything: the path
    itself, a glob pattern (kept as a pattern: the command expands it once, when it
    reads), the local files of a registry name (no error here for what does not exist:
    the command that reads it says so in its own words)."""
    from nqkit.io.paths import resolve_name

    text = os.fspath(given)
    if text == STDIO:
        return []
    p = Path(text)
    if any(c in text for c in "*?[") and not os.path.lexists(text):
        return [os.path.abspath(text)]
    if p.exists() or p.is_symlink():
        return [p]
    return list(resolve_name(text) or [p])


def _names(out: Path, f: Path | str) -> bool:
    """The output is the file ``f``, or a file the pattern ``f`` matches."""
    if isinstance(f, str):
        return PurePath(os.path.abspath(out)).match(f)
    return _same_file(out, f)


def check_collisions(outputs: Iterable[tuple[str, PathLike]],
                     inputs: Iterable[tuple[str, PathLike]]) -> None:
    """Refuse, before anything is written, a command whose outputs collide: an output
    that is one of its inputs (the same path, links followed, or the same file by device
    and inode) or whose provenance file would be one (:mod:`nqkit.io.provenance`), or
    the output of two options. ``outputs`` and ``inputs`` are (option,
    path) pairs as given; an input may be a glob or a registry name (all its files
    count), ``-`` (standard input or output) is none of them. One
    :class:`~nqkit.errors.InputError` line names both options."""
    from nqkit.io.paths import sidecar

    read = [(option, f) for option, given in inputs for f in _named_files(given)]
    written: list[tuple[str, Path]] = []
    for option, given in outputs:
        if os.fspath(given) == STDIO:
            continue
        out = Path(given)
        for other, f in read:
            if _names(out, f):
                raise InputError(f"{option} {given}", f"the output path is one of the "
                                 f"inputs ({other} {f}): writing it would destroy it",
                                 "choose another output path; inputs are never modified")
            if _names(sidecar(out), f):  # the provenance file written beside it
                raise InputError(f"{option} {given}", f"its provenance file would be "
                                 f"written over an input ({other} {f})",
                                 "choose another output path; inputs are never modified")
        for other, f in written:
            if _same_file(out, f):
                raise InputError(f"{option} {given}", f"is also the {other} output",
                                 "give each output a path of its own")
        written.append((option, out))


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
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # /proc/x, a read-only mount, a file in the way: one line
        _remove_created(missing)
        raise _cannot_write(directory, e) from None
    if note:
        print(f"nqkit: note: created directory {directory}", file=sys.stderr)
    return missing[::-1]


def _remove_created(dirs: list[Path]) -> None:
    for d in reversed(dirs):
        with contextlib.suppress(OSError):
            d.rmdir()  # only when empty
    dirs.clear()


def _link_target(link: Path) -> Path:
    """The file an output link points to (see :func:`atomic_output`)."""
    real = Path(os.path.realpath(link))
    if not real.parent.is_dir():
        raise InputError(link, f"is a link to {real}, whose directory does not exist",
                         "give a regular file path, or point the link at an existing "
                         "directory")
    return real


@contextlib.contextmanager
def atomic_output(path: PathLike, mode: str = "w", *, encoding: str = "utf-8",
                  compress: bool | None = None, cache: bool = False) -> Iterator[IO[Any]]:
    """Write ``path`` all-or-nothing: a temp file in the same directory, renamed on success.

    On any exception the temporary file is removed and ``path`` is left as it was. Paths
    ending in ``.gz`` are gzip-compressed unless ``compress`` says otherwise (``False`` for
    bytes that are already gzip members). Inside :func:`output_transaction` the rename
    waits for the end of the transaction, unless ``cache`` (a cache entry, valid on its
    own). The path is checked first (:func:`check_output`); missing parent directories
    are created with a note on stderr. A path that is a symbolic link is written through:
    the file it points to is replaced (atomically, beside it) and the link stays, as
    ``open(path, "w")`` would leave it; a link whose target's directory does not exist is
    refused with one line (nothing is created at a place the user did not name).
    """
    if os.fspath(path) == STDIO:  # standard output: a stream, written as it comes
        out: IO[Any] = sys.stdout.buffer if "b" in mode else sys.stdout
        yield out
        out.flush()
        return
    target = Path(path)
    check_output(target)
    if target.is_symlink():
        target = _link_target(target)
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


@contextlib.contextmanager
def atomic_directory(path: PathLike, *, option: str | None = None, what: str = "index",
                     shared: bool = False, note: bool = True) -> Iterator[Path]:
    """Build directory ``path`` all-or-nothing: yields a temporary sibling directory to
    fill, renamed to ``path`` only when the block succeeds.

    The temporary directory gets the mode a new directory would get (the umask's), so the
    finished one is shared like any output. On any exception (Ctrl-C included) it is
    removed, with the parent directories created for it; missing parents are created
    with a note on stderr once the directory is in place (an error stays the one line on
    stderr). A target that is a file or a non-empty directory is refused before anything
    is created (an empty one is replaced); ``option`` and ``what`` name it in the message.
    ``shared``: a cache entry that another process may build at the same moment; whichever
    finishes first wins, the other copy is dropped and the target is not checked first.
    Not deferred by :func:`output_transaction`: a directory is complete on its own.
    """
    out = Path(path)
    if not shared:
        check_new_directory(out, option=option, what=what)
    if out.is_symlink() and out.is_dir():
        # a link to an (empty) directory: the directory it names is the one built, the
        # link keeps naming it
        out = out.resolve()
    created = _make_parents(out.resolve().parent, note=False)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".building",
                                    dir=out.resolve().parent))
    except OSError as e:
        _remove_created(created)
        raise _cannot_write(out.resolve().parent, e) from None
    except BaseException:
        _remove_created(created)
        raise
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700
    try:
        yield tmp
        if out.is_dir() and not shared:
            out.rmdir()  # empty (checked above): replaced by the finished directory
        try:
            os.replace(tmp, out)
        except OSError:
            if not shared or not out.is_dir():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another process finished it first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_created(created)
        raise
    if created and note:
        print(f"nqkit: note: created directory {out.resolve().parent}", file=sys.stderr)


def check_new_directory(out: Path, *, option: str | None = None, what: str = "index"
                        ) -> None:
    """Refuse, with one line, a directory output over a file or a non-empty directory, or
    one that cannot be created (see :func:`check_output`); :func:`atomic_directory`
    checks this too, a caller may check it earlier (before any work)."""
    where = f"{option} {out}" if option else out
    if out.exists() and not out.is_dir():
        raise InputError(where, "exists and is not a directory",
                         f"give a new directory for the {what}")
    if out.is_dir() and any(out.iterdir()):
        article = "an" if what[:1] in "aeiou" else "a"
        raise InputError(where, "is not empty", "give a new or empty directory "
                         f"({article} {what} is never overwritten in place)")
    check_output(out, kind="dir", option=option)


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
