"""Downloaded files checked by their content: what is checked, when, and against what.

A file of a registry dataset is checked against three facts: the size and the md5 the
registry publishes (where it does) and the sha256 recorded in ``.nqkit-downloads.json``
when the file was downloaded (see :mod:`nqkit.datasets.download`). Reading a large file
costs seconds per GB, so the reading is paid once per state of the file: the record also
keeps the file's *stamp* (size, modification and change times in ns, inode, device),
taken when its content was last verified. Any write to a file sets its change time to the
clock's, and no program can set it back, so an edit in place that restores the size and
the modification time changes the stamp too.

* ``nqkit data get`` of a file already present, and every command that reads a dataset
  by its registry name (:func:`~nqkit.datasets.names.local_paths`), call
  :func:`check_present`: a size other than the published one is refused at once (a
  truncated or grown file, unread); a file whose stamp equals the recorded one is
  trusted unread; any other (touched, edited, replaced, copied in by hand, or recorded
  before stamps were) is hashed again and must match, and its new stamp is recorded, so
  the hashing is paid once (a data home the user cannot write is still read: its files
  are then hashed at each use).
* ``nqkit data verify`` (:func:`verify`) hashes every present file again, whatever its
  stamp: a change that kept the whole stamp (a filesystem that keeps no change times, a
  clock set back by the administrator) is found only this way.

A mismatch is one :class:`DownloadError` line naming the file, what differs and the
command that fetches it again (``nqkit data get NAME --force``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nqkit.datasets.local import dataset_dir, get_command, read_record, update_record
from nqkit.datasets.registry import DataFile, Dataset
from nqkit.errors import InputError

__all__ = ["Checked", "Digests", "DownloadError", "check_present", "file_digests",
           "refetch_command", "stamp", "unknown_version", "verify"]

CHUNK = 1 << 20  # bytes per read
BAR_FROM = 64 << 20  # files at least this large show their progress (stderr)


class DownloadError(InputError):
    """A download that cannot complete or cannot be used; one line: where, what happened,
    what to do."""


class Digests:
    """The sha256 (and md5) of a byte stream, each digest fed by its own thread.

    ``update`` queues a block (bounded: at most a few MB wait); ``hexdigests`` waits for
    the queues to drain. hashlib releases the GIL on large blocks, so on two cores the
    md5 (about 240 MB/s here) and the sha256 (about 550 MB/s) run beside the network and
    disk work instead of after it.
    """

    def __init__(self, md5: bool) -> None:
        self.hashes: list[Any] = [hashlib.sha256()]
        if md5:
            self.hashes.append(hashlib.md5(usedforsecurity=False))
        self.queues: list[queue.Queue[bytes | None]] = []
        self.threads: list[threading.Thread] = []
        for h in self.hashes:
            q: queue.Queue[bytes | None] = queue.Queue(maxsize=8)
            t = threading.Thread(target=self._feed, args=(h, q), daemon=True,
                                 name="nqkit-digest")
            t.start()
            self.queues.append(q)
            self.threads.append(t)

    @staticmethod
    def _feed(h: Any, q: queue.Queue[bytes | None]) -> None:
        while True:
            block = q.get()
            try:
                if block is None:
                    return
                h.update(block)
            finally:
                q.task_done()

    def update(self, block: bytes) -> None:
        for q in self.queues:
            q.put(block)

    def hexdigests(self) -> tuple[str | None, str]:
        """``(md5 or None, sha256)`` of everything given so far."""
        for q in self.queues:
            q.join()
        md5 = self.hashes[1].hexdigest() if len(self.hashes) > 1 else None
        return md5, self.hashes[0].hexdigest()

    def close(self) -> None:
        for q in self.queues:
            q.put(None)
        for t in self.threads:
            t.join()


def stamp(path: Path) -> list[int]:
    """What changes when a file is written or replaced (:func:`nqkit.io.file_stamp`): size,
    modification and change times (ns), inode, device."""
    from nqkit.io import file_stamp

    return file_stamp(path)


def _bar(name: str, total: int, progress: bool | None) -> Any:
    from nqkit.report import progress_bar

    # by default only for files worth waiting on
    disable = total < BAR_FROM if progress is None else not progress
    return progress_bar(desc=f"checking {name}", total=total, unit="B", unit_scale=True,
                        disable=disable)


def file_digests(path: Path, md5: bool, *, progress: bool | None = None
                 ) -> tuple[int, str | None, str]:
    """``(bytes, md5 or None, sha256)`` of the file at ``path``, read once; the progress
    of a large file on stderr (``progress`` forces it on or off)."""
    digests = Digests(md5)
    try:
        n = 0
        with open(path, "rb") as f:
            bar = _bar(path.name, os.fstat(f.fileno()).st_size, progress)
            try:
                while block := f.read(CHUNK):
                    digests.update(block)
                    n += len(block)
                    bar.update(len(block))
            finally:
                bar.close()
        return (n, *digests.hexdigests())
    finally:
        digests.close()


def refetch_command(ds: Dataset, f: DataFile) -> str:
    """The command that downloads ``f`` again over a damaged copy (only that shard)."""
    selector = str(ds.files.index(f)) if len(ds.files) > 1 and f in ds.files else None
    return get_command(ds, selector, force=True)


def _size_problem(f: DataFile, size: int) -> str:
    if f.size is None or size == f.size:
        return ""
    if size < f.size:
        return (f"the file on disk is incomplete or damaged: {size:,} of the {f.size:,} "
                "bytes the registry publishes")
    return (f"the file on disk does not match the registry: expected {f.size:,} bytes, "
            f"got {size:,} bytes")


def _content_problem(f: DataFile, entry: dict[str, Any], md5: str | None, sha: str) -> str:
    recorded = entry.get("sha256")
    if isinstance(recorded, str) and recorded != sha:
        return (f"the file changed on disk after it was downloaded (sha256 {sha[:12]}..., "
                f"recorded {recorded[:12]}...)")
    if f.md5 is not None and md5 != f.md5:
        return (f"the file on disk does not match the registry: expected md5 {f.md5}, got "
                f"md5 {md5}")
    if f.sha256 is not None and sha != f.sha256:
        return unknown_version(f, sha)
    return ""


def unknown_version(f: DataFile, sha: str) -> str:
    """The problem of a file whose sha256 is not the one the registry pins: another
    version of the file (edited, re-exported, another release), not a damaged copy."""
    return (f"this is not the file the registry knows (sha256 {sha[:12]}..., the registry "
            f"pins {str(f.sha256)[:12]}..., {f.pinned}): another version of {f.name}")


def _remember(directory: Path, ds: Dataset, f: DataFile, entry: dict[str, Any],
              size: int, md5: str | None, sha: str, new: list[int]) -> None:
    """Record the new stamp of a file whose content was verified again (best effort: a
    data home the user cannot write keeps its record, and the file is hashed at each use)."""
    with contextlib.suppress(OSError):
        update_record(directory, ds.name, f.name,
                      {**entry, "size": size, "md5": md5, "sha256": sha, "stamp": new})


def check_present(ds: Dataset, f: DataFile, dest: Path,
                  record: dict[str, dict[str, Any]] | None = None, *,
                  progress: bool | None = None, digest: bool = True
                  ) -> tuple[int, str | None, str] | None:
    """``(size, md5, sha256)`` of the file ``f`` under its final name ``dest``, checked
    (see the module's docstring for when its content is read), or ``None`` when there is
    no such file. ``record`` is the directory's download record (read when not given).

    The md5 is ``None`` where none is published. Without ``digest`` a file with nothing
    to compare its content with (no md5 published, no sha256 recorded) is not read (its
    sha256 is then ``""``): reading it would find nothing. Raises :class:`DownloadError` (one line,
    with the command that fetches the file again) when the file does not match.
    """
    try:
        now = stamp(dest)
    except (FileNotFoundError, NotADirectoryError):
        return None
    fix = f"fetch it again with `{refetch_command(ds, f)}`"
    if not dest.is_file():
        raise DownloadError(dest, "is not a regular file", f"remove it, then {fix}")
    problem = _size_problem(f, now[0])
    if problem:
        raise DownloadError(dest, problem, fix)
    if record is None:
        record = read_record(dest.parent)
    entry = record.get(f.name) or {}
    md5, recorded = entry.get("md5"), entry.get("sha256")
    if entry.get("stamp") == now and isinstance(recorded, str) and (
            f.md5 is None or md5 == f.md5) and f.sha256 in (None, recorded):
        return now[0], md5 if f.md5 is not None else None, recorded
    if not digest and f.md5 is None and f.sha256 is None and not isinstance(recorded, str):
        return now[0], None, ""
    try:
        size, md5, sha = file_digests(dest, f.md5 is not None, progress=progress)
    except OSError as e:
        raise DownloadError(dest, f"cannot be read ({e.strerror})",
                            "check its permissions") from None
    problem = _size_problem(f, size) or _content_problem(f, entry, md5, sha)
    if problem:
        raise DownloadError(dest, problem, fix)
    if entry:  # verified again: trusted while this stamp holds
        _remember(dest.parent, ds, f, entry, size, md5, sha, stamp(dest))
    return size, md5, sha


@dataclass(frozen=True, slots=True)
class Checked:
    """The outcome of :func:`verify` for one file."""

    dataset: Dataset
    file: DataFile
    path: Path  # where the file is (or would be)
    status: str  # "ok", "differs", "missing" (recorded, gone) or "not downloaded"
    checked: str  # what the content was compared with, e.g. "md5+size+sha256"; "-" unread
    size: int | None  # bytes on disk (None when absent)
    md5: str | None  # computed where an md5 is published
    sha256: str | None  # computed (None when absent or not read)
    problem: str = ""  # what differs, in words ("" when ok)

    @property
    def fix(self) -> str:
        if self.status == "differs":
            return f"fetch it again with `{refetch_command(self.dataset, self.file)}`"
        if self.status == "missing":
            return f"fetch it with `{get_command(self.dataset)}`"
        return ""


def _checked_against(f: DataFile, entry: dict[str, Any]) -> str:
    parts = [p for p, known in (("md5", f.md5 is not None), ("size", f.size is not None),
                                ("sha256", f.sha256 is not None or
                                 isinstance(entry.get("sha256"), str))) if known]
    return "+".join(parts) or "none"


def verify(ds: Dataset, files: Sequence[DataFile] | None = None, *, home: Path | None = None,
           progress: bool | None = None,
           on_file: Callable[[Checked], None] | None = None) -> list[Checked]:
    """Hash every present file of ``files`` (default: all of ``ds``) again, whatever its
    stamp, and compare it with the published size and md5 and the recorded sha256.

    Returns one :class:`Checked` per file, in the dataset's order; raises nothing for a
    file that differs (the caller decides). A file that matches has its stamp recorded
    (so later uses read it no more); ``on_file`` is called as each file is done.
    """
    directory = dataset_dir(ds, home)
    record = read_record(directory)
    out: list[Checked] = []
    for f in (tuple(files) if files is not None else ds.files):
        dest = directory / f.name
        entry = record.get(f.name) or {}
        against = _checked_against(f, entry)
        try:
            now = stamp(dest)
        except (FileNotFoundError, NotADirectoryError):
            part = dest.with_name(dest.name + ".part")
            problem = (f"an interrupted download ({part.stat().st_size:,} bytes) waits in "
                       f"{part.name}" if part.is_file() else "")
            item = Checked(ds, f, dest, "missing" if entry else "not downloaded", "-",
                           None, None, None, "recorded, but not on disk" if entry else problem)
        else:
            problem = ("not a regular file" if not dest.is_file() else
                       _size_problem(f, now[0]))
            if problem:  # unread: the size tells
                item = Checked(ds, f, dest, "differs", "size", now[0], None, None, problem)
            else:
                try:
                    size, md5, sha = file_digests(dest, f.md5 is not None, progress=progress)
                except OSError as e:
                    raise DownloadError(dest, f"cannot be read ({e.strerror})",
                                        "check its permissions") from None
                problem = _size_problem(f, size) or _content_problem(f, entry, md5, sha)
                item = Checked(ds, f, dest, "differs" if problem else "ok", against, size,
                               md5, sha, problem)
                if not problem and entry and (entry.get("stamp") != now or
                                              entry.get("md5") != md5):
                    _remember(directory, ds, f, entry, size, md5, sha, stamp(dest))
        out.append(item)
        if on_file is not None:
            on_file(item)
    return out
