"""Files verified by content: SHA-256 digests, and a record of file states already verified.

Artifacts (index directories, model directories) travel between machines and labs, so a
file is trusted for its content, never for its size. Hashing a 60 GB index on every run
would cost minutes, so a verified file's *state* is remembered outside the artifact:
:class:`VerifiedStates` keeps, per artifact, each file's stamp (size, modification and
change times in nanoseconds, inode, device) with the SHA-256 it had when it was hashed.
A later run trusts a file whose stamp is unchanged and hashes any other again. Writing a
file changes its change time (``st_ctime``), which no user program can set back, so an
edit in place that restores the size and the modification time is still seen.

The record lives under ``$NQKIT_HOME/cache/verified/`` (default ``~/.cache/nqkit/verified/``),
one small JSON file per artifact, named by a hash of the artifact's resolved path. It is
a cache: deleting it costs one re-hash; a record that cannot be read or written is
ignored (the files are then hashed every time).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["VerifiedStates", "cache_home", "file_stamp", "sha256_file", "sha256_files"]

CHUNK = 1 << 20


def cache_home() -> Path:
    """Where nqkit's caches live: ``$NQKIT_HOME/cache``, else
    ``${XDG_CACHE_HOME:-~/.cache}/nqkit`` (each cache in a directory of its own)."""
    home = os.environ.get("NQKIT_HOME")
    if home:
        return Path(home) / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nqkit"


def file_stamp(path: Path) -> list[int]:
    """What changes whenever a file is written or replaced: size, mtime and ctime (ns),
    inode and device."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def sha256_file(path: Path, advance: Callable[[int], object] | None = None) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks (``advance(n)`` after each)."""
    h = hashlib.sha256()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(view[:n])
            if advance is not None:
                advance(n)
    return h.hexdigest()


def sha256_files(paths: Iterable[Path], *, desc: str = "verify",
                 progress: Callable[..., Any] | None = None) -> dict[Path, str]:
    """SHA-256 of several files, two at a time (hashlib releases the GIL on large blocks).

    ``progress`` (``nqkit.report.progress_bar`` at the command line; the io floor imports
    nothing above it) makes the progress display in bytes when there is much to read.
    """
    from concurrent.futures import ThreadPoolExecutor

    todo = list(paths)
    total = sum(p.stat().st_size for p in todo)
    bar = None
    if progress is not None and total >= 64 << 20:
        bar = progress(desc=desc, total=total, unit="B", unit_scale=True)
    advance = bar.update if bar is not None else None
    try:
        if len(todo) < 2 or total < 4 << 20:
            return {p: sha256_file(p, advance) for p in todo}
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            digests = list(pool.map(lambda p: sha256_file(p, advance), todo))
        return dict(zip(todo, digests, strict=True))
    finally:
        if bar is not None:
            bar.close()


class VerifiedStates:
    """The file states of one artifact already verified (see the module doc)."""

    def __init__(self, artifact: Path) -> None:
        key = hashlib.sha256(str(artifact.resolve()).encode("utf-8")).hexdigest()[:32]
        self.path = cache_home() / "verified" / f"{key}.json"
        self.artifact = str(artifact.resolve())
        self._states: dict[str, list[object]] = {}
        self._changed = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("artifact") == self.artifact:
                states = data.get("files")
                if isinstance(states, dict):
                    self._states = states
        except (OSError, ValueError):
            pass

    def known(self, name: str, stamp: list[int]) -> str | None:
        """The SHA-256 recorded for file ``name`` in exactly this state, or None."""
        entry = self._states.get(name)
        if (isinstance(entry, list) and len(entry) == 2 and entry[0] == stamp
                and isinstance(entry[1], str)):
            return entry[1]
        return None

    def remember(self, name: str, stamp: list[int], sha256: str) -> None:
        self._states[name] = [stamp, sha256]
        self._changed = True

    def forget(self, name: str) -> None:
        self._changed |= self._states.pop(name, None) is not None

    def save(self) -> None:
        """Write the record (atomically); a home that cannot be written is ignored."""
        if not self._changed:
            return
        import tempfile

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"artifact": self.artifact, "files": self._states}, f)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return
        self._changed = False
