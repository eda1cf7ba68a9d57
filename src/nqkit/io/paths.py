"""Inputs: paths, globs, standard input and registry names, expanded into files.

Registry names (``nq/dev``) are not known here, so this floor never imports upwards: a
resolver is installed with :func:`set_name_resolver` from above, once, by the ``nqkit``
package when it is imported (``nqkit/__init__.py``: a function that imports the datasets
layer only when a text that may be a name is read); worker processes forked from any
nqkit process inherit it. Without a resolver a name that is no path is reported as a
missing file (tests install their own).
"""

from __future__ import annotations

import errno
import glob
import os
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from nqkit.errors import InputError

__all__ = [
    "PROVENANCE_SUFFIX",
    "STDIO",
    "ExpandedPaths",
    "NameResolver",
    "PathLike",
    "PathsLike",
    "expand_paths",
    "is_regular_file",
    "resolve_name",
    "set_name_resolver",
    "sidecar",
]

PathLike = str | os.PathLike[str]
PathsLike = PathLike | Sequence[PathLike]

_GLOB_CHARS = set("*?[")

STDIO = "-"  # standard input where a file is read, standard output where one is written
PROVENANCE_SUFFIX = ".provenance.json"  # the sidecar of a file nqkit wrote (io.provenance)


def sidecar(path: PathLike) -> Path:
    """The provenance file of ``path`` (:mod:`nqkit.io.provenance`):
    ``PATH.provenance.json``."""
    return Path(os.fspath(path) + PROVENANCE_SUFFIX)
_STDIN_COPY: list[Path] = []

# text -> the local files of a registry name, or None when the text is no registry name
NameResolver = Callable[[str], "list[Path] | None"]
_name_resolver: NameResolver | None = None


def resolve_name(text: str) -> list[Path] | None:
    """The local files of the registry name ``text``, or None when it is none (or no
    resolver is installed, or the dataset is not on disk: then nothing is read)."""
    if "/" not in text or _name_resolver is None or os.path.lexists(text):
        return None
    try:
        return _name_resolver(text)
    except InputError:
        return None


def set_name_resolver(resolver: NameResolver | None) -> NameResolver | None:
    """Install the function that turns a registry name into its local files (``None``
    removes it); returns the one installed before. :func:`expand_paths` asks it about a
    text with a ``/`` that is no existing path; it returns ``None`` for a text that is no
    registry name, and raises :class:`InputError` for a known dataset not on disk."""
    global _name_resolver
    previous, _name_resolver = _name_resolver, resolver
    return previous


class ExpandedPaths(list[Path]):
    """Files already expanded from the inputs a user gave, with the inputs as given.

    A caller that expanded its inputs (to check its outputs against them) passes this on,
    and :func:`expand_paths` returns its files without looking again; ``given`` is how
    messages name the inputs (the globs and names as typed)."""

    def __init__(self, files: Iterable[Path], given: Sequence[PathLike]) -> None:
        super().__init__(files)
        self.given = tuple(os.fspath(g) for g in given)


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


def expand_paths(paths: PathsLike, *, what: str = "input", unique: bool = True) -> list[Path]:
    """Expand a path, a glob pattern, or a list of them into existing files.

    Globs are expanded and sorted (shards in order); plain paths keep the given order. A
    dataset registry name that is not an existing path (``nq/dev``, ``squad/dev-1.1``)
    stands for its downloaded files (through the installed resolver, see
    :func:`set_name_resolver`); when they are not on disk the error names the
    ``nqkit data get`` command (nothing is downloaded). :class:`ExpandedPaths` are
    returned as they are.
    Raises :class:`InputError` when a path does not exist, is a directory or a loop of
    symbolic links, or a pattern matches nothing; and, with ``unique`` (the default), when
    one file is given twice (the same path, overlapping globs, a registry name and one of
    its files, or a link and its target): it would be read, counted and scored twice.
    ``unique=False`` is for a caller that gathers the files of several options, where
    one file may legitimately serve two roles.
    """
    if isinstance(paths, ExpandedPaths):
        return list(paths)
    items: Sequence[PathLike] = [paths] if isinstance(paths, str | os.PathLike) else paths
    out: list[Path] = []
    given: list[str] = []  # the input each file came from, as typed
    for item in items:
        s = os.fspath(item)
        if any(c in s for c in _GLOB_CHARS) and not os.path.lexists(s):
            matches = sorted(glob.glob(s))
            if not matches:
                raise InputError(s, f"the {what} pattern matches no file", "check the glob")
            out.extend(_check_file(m, what) for m in matches)
        elif ("/" in s and _name_resolver is not None and not os.path.lexists(s)
              and (named := _name_resolver(s)) is not None):
            out.extend(named)
        else:
            out.append(_check_file(s, what))
        given.extend([s] * (len(out) - len(given)))
    if not out:
        raise InputError(None, f"no {what} files given", "give at least one path or glob")
    if unique:
        _refuse_repeats(out, given, what)
    return out


def _refuse_repeats(files: list[Path], given: list[str], what: str) -> None:
    """One error line naming the first file given twice (compared by device and inode, so
    a link and its target are the same file; standard input is never a repeat)."""
    seen: dict[tuple[int, int], int] = {}
    for i, p in enumerate(files):
        if given[i] == STDIO:
            continue
        try:
            st = os.stat(p)
        except OSError:  # reported when it is opened
            continue
        j = seen.setdefault((st.st_dev, st.st_ino), i)
        if j != i:
            how = (f" (as {given[j]} and {given[i]})" if given[j] != given[i] else
                   "" if given[i] == os.fspath(p) else f" (twice in {given[i]})")
            raise InputError(os.fspath(p), f"the {what} file is given twice{how}: it would be "
                             "read and counted twice", "give each file once")


def is_regular_file(path: PathLike) -> bool:
    """True for a regular file (False for a FIFO, ``<(...)``, a character device); True
    too when the path cannot be examined, so that opening it reports the problem."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True
