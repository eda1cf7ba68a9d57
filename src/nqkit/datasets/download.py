"""Verified, resumable downloads of registry datasets that never leave a bad file.

For each file of a dataset (several at once, in a bounded thread pool):

1. The bytes go to ``NAME.part`` beside the final name. An existing ``.part`` (an earlier
   run was interrupted) is resumed with an HTTP ``Range`` request; a server that ignores
   the range (``python -m http.server`` does) sends the whole file, which then replaces
   the part. A dropped connection is retried with backoff from where it stopped.
2. The sha256 (and the md5 where one is published) is computed while the bytes arrive,
   each digest in its own thread (hashlib releases the GIL), so hashing overlaps the
   network, the disk and the other digest, and verification costs no second read. The
   reused prefix of a resumed file is hashed from disk first.
3. When the transfer is complete, the size (where known) and the md5 (where published)
   are checked, and only then is the file renamed to its final name (``os.replace``:
   atomic). A mismatch removes the part and names the expected and the actual checksum.
4. The sha256 and what was verified are recorded in ``.nqkit-downloads.json``; a file
   without a published checksum is reported with its sha256, which a user can cite.
5. A zip archive is extracted after it is verified, each member written to a temporary
   name and renamed, so an extracted file is also complete or absent.

A file already under its final name is not fetched again: it is checked as every read by
name checks it (:func:`nqkit.datasets.integrity.check_present`: re-hashed when its stamp
changed since it was verified), and ``force`` fetches it again over a damaged copy.

Before anything is fetched the free disk space is checked against the bytes still to
come; a per-file lock keeps two processes from writing the same ``.part``. Errors are one
line (:class:`DownloadError`, an :class:`~nqkit.errors.InputError`): no connection, HTTP
404, a checksum mismatch, a full disk, a transfer broken off more times in a row than
``retries`` allows. The ``.part`` of an interrupted transfer is kept for the next run;
nothing partial ever carries a final name.

``mirror`` replaces each official URL's scheme and host by a mirror's base and keeps the
path (``https://storage.googleapis.com/natural_questions/v1.0/dev/nq-dev-00.jsonl.gz`` ->
``MIRROR/natural_questions/v1.0/dev/nq-dev-00.jsonl.gz``): labs without internet serve a
copy laid out like the official paths (``python -m http.server`` over a directory, or the
directory itself).
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import os
import queue
import shutil
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from nqkit._version import __version__
from nqkit.datasets.integrity import (
    Digests,
    DownloadError,
    check_present,
    stamp,
    unknown_version,
)
from nqkit.datasets.local import RECORD, dataset_dir, file_lock, read_record, update_record
from nqkit.datasets.registry import DataFile, Dataset
from nqkit.errors import InputError

__all__ = ["DownloadError", "Fetched", "fetch", "human_bytes", "mirror_url"]

CHUNK = 1 << 20  # bytes per read: large enough for GB/s, small enough to notice a stop
PROGRESS_RESET = 1 << 20  # an attempt that brought this many bytes resets the retry count
_USER_AGENT = f"nqkit/{__version__} (+https://github.com/nqkit)"
_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class _Retryable(Exception):
    """The transfer broke off (connection dropped, timeout, 5xx): try again."""


class _Stopped(Exception):
    """Another file failed, or the user interrupted: stop and keep the ``.part``."""


@dataclass(frozen=True, slots=True)
class Fetched:
    """The outcome for one file."""

    file: DataFile
    path: Path  # final path
    size: int
    md5: str | None  # computed where an md5 is published (to verify it), else None
    sha256: str
    verified: str  # "md5+size", "size" or "none" (nothing published to check against)
    status: str  # "fetched", "resumed" (an earlier .part was reused) or "present"
    received: int  # bytes received by this run
    resumed_from: int  # bytes of an earlier .part that were kept
    seconds: float
    url: str  # where it was fetched from ("" when already present)
    members: tuple[str, ...] = ()  # extracted archive members


def human_bytes(n: float | None) -> str:
    """``219.6 MB`` (decimal units, like the sizes download pages give); ``?`` for None."""
    if n is None:
        return "?"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # pragma: no cover


def mirror_url(url: str, mirror: str | os.PathLike[str] | None) -> str:
    """``url`` with its scheme and host replaced by ``mirror``'s base (the path is kept).

    ``mirror`` is a base URL (``http://127.0.0.1:8000`` or ``https://host/copy``) or a
    local directory (used through ``file://``). ``None`` returns ``url`` unchanged.
    """
    if mirror is None:
        return url
    base = os.fspath(mirror)
    parsed = urllib.parse.urlsplit(base)
    if parsed.scheme not in ("http", "https", "file"):
        if not os.path.isdir(base):
            raise InputError(f"--mirror {base}", "is neither an http(s) URL nor a directory",
                             "give e.g. --mirror http://127.0.0.1:8000 or a local directory "
                             "laid out like the official URLs' paths")
        base = Path(base).resolve().as_uri()
    official = urllib.parse.urlsplit(url)
    path = official.path + (f"?{official.query}" if official.query else "")
    return base.rstrip("/") + path


def _free_bytes(directory: Path) -> int:
    d = directory
    while not d.exists() and d != d.parent:
        d = d.parent
    return shutil.disk_usage(d).free


def _hash_prefix(part: Path, limit: int | None, digests: Digests) -> int:
    """Bytes already in ``part``, fed to ``digests`` (a part longer than the known size,
    which cannot be the file's beginning, is discarded)."""
    try:
        have = part.stat().st_size
    except FileNotFoundError:
        return 0
    if limit is not None and have > limit:
        part.unlink()
        return 0
    with open(part, "rb") as f:
        while block := f.read(CHUNK):
            digests.update(block)
    return have


def _content_range(value: str | None) -> tuple[int | None, int | None]:
    """``bytes START-END/TOTAL`` -> ``(START, TOTAL)``; ``bytes */TOTAL`` -> (None, TOTAL)."""
    if not value or not value.startswith("bytes "):
        return None, None
    span, _, total = value[6:].partition("/")
    start = span.partition("-")[0]
    return (int(start) if start.isdigit() else None,
            int(total) if total.isdigit() else None)


def _disk_full(part: Path, have: int, e: OSError) -> DownloadError:
    with contextlib.suppress(OSError):  # a block may have been written in part
        have = part.stat().st_size
    return DownloadError(part.parent, f"disk full while writing {part.name} after "
                         f"{have:,} bytes ({e.strerror})",
                         f"free space and run the same command again to resume from "
                         f"{part.name}, or set NQKIT_HOME to a larger disk")


class _Transfer:
    """One file's download into ``NAME.part``: resume, retry, hash, verify, rename.

    The state (bytes in the part and their running md5/sha256) lives on the object, so
    that a transfer broken off in the middle of a block resumes from what was written.
    """

    def __init__(self, file: DataFile, dest: Path, url: str, *, mirrored: bool, retries: int,
                 timeout: float, backoff: float, stop: threading.Event,
                 bar: Callable[[int | None, int], Any]) -> None:
        self.file, self.dest, self.url, self.mirrored = file, dest, url, mirrored
        self.part = dest.with_name(dest.name + ".part")
        self.retries, self.timeout, self.backoff = retries, timeout, backoff
        self.stop, self.make_bar = stop, bar
        self.total: int | None = file.size
        self.received = 0  # bytes received by this run
        self.restarted = False  # an earlier part was dropped (no resume possible)
        self.digests = Digests(md5=file.md5 is not None)
        self.have = 0
        self.bar: Any = None

    def run(self) -> Fetched:
        lock = self.dest.with_name(f".{self.dest.name}.lock")
        try:
            with file_lock(lock, wait=False) as mine:
                if not mine:
                    raise DownloadError(self.dest.parent, f"another nqkit process is "
                                        f"downloading {self.dest.name}", "wait for it to "
                                        "finish, then run the command again")
                return self._run()
        finally:
            self.digests.close()

    def _run(self) -> Fetched:
        start = time.perf_counter()
        self.have = resumed_from = _hash_prefix(self.part, self.file.size, self.digests)
        failures = 0
        self.bar = self.make_bar(self.total, self.have)
        try:
            while self.total is None or self.have < self.total:
                before = self.have
                try:
                    self._attempt()
                    break
                except _Retryable as e:
                    progressed = self.retries > 0 and self.have - before >= PROGRESS_RESET
                    failures = 0 if progressed else failures + 1
                    if failures > self.retries:
                        total = f"{self.total:,}" if self.total is not None else "?"
                        times = f"{failures} times in a row" if failures > 1 else "once"
                        raise DownloadError(
                            self.url, f"the download broke off {times} (last after "
                            f"{self.have:,} of {total} bytes: {e})",
                            f"the partial download {self.part.name} is kept: run the same "
                            f"command again to resume") from None
                    if self.stop.wait(min(30.0, self.backoff * 2 ** (failures - 1))):
                        raise _Stopped from None
        finally:
            self.bar.close()
        return self._verify(0 if self.restarted else resumed_from,
                            time.perf_counter() - start)

    def _restart(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.part.unlink()
        self.have, self.restarted = 0, True
        self.digests.close()
        self.digests = Digests(md5=self.file.md5 is not None)
        self.bar.reset(total=self.total)

    def _open(self) -> Any:
        headers = {"User-Agent": _USER_AGENT, "Accept-Encoding": "identity"}
        if self.have:
            headers["Range"] = f"bytes={self.have}-"
        request = urllib.request.Request(self.url, headers=headers)
        try:
            return urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            if e.code == 416:
                return e  # the caller decides from Content-Range
            e.close()
            if e.code in (408, 425, 429) or e.code >= 500:
                raise _Retryable(f"HTTP {e.code} {e.reason}") from None
            if e.code == 404:
                fix = ("the mirror does not hold the file at the official URL's path: lay "
                       "the mirror out like the official paths" if self.mirrored else
                       "the official location may have moved: fetch from a copy with "
                       "--mirror URL, or report it")
            else:
                fix = "check the URL and your access to it"
            raise DownloadError(self.url, f"HTTP {e.code} {e.reason}", fix) from None
        except urllib.error.URLError as e:
            reason = e.reason
            if urllib.parse.urlsplit(self.url).scheme == "file":
                text = getattr(reason, "strerror", None) or str(reason)
                raise DownloadError(self.url, f"cannot read the file ({text})",
                                    "lay the mirror directory out like the official URLs' "
                                    "paths") from None
            if isinstance(reason, ConnectionRefusedError | socket.gaierror | PermissionError
                          ) or not isinstance(reason, OSError):
                host = urllib.parse.urlsplit(self.url).netloc or self.url
                text = getattr(reason, "strerror", None) or str(reason)
                raise DownloadError(host, f"cannot connect ({text})",
                                    "check the network, or fetch from a local copy with "
                                    "--mirror URL") from None
            raise _Retryable(str(reason)) from None
        except (TimeoutError, ConnectionError, http.client.HTTPException) as e:
            raise _Retryable(f"{e.__class__.__name__}: {e}") from None

    def _attempt(self) -> None:
        """One request, appending to the part until the file is complete (or raising)."""
        if self.stop.is_set():
            raise _Stopped
        response = self._open()
        with contextlib.closing(response):
            status = getattr(response, "status", None) or response.getcode() or 200
            if status == 416:  # our part reaches the end, or is not a prefix of this file
                _, total = _content_range(response.headers.get("Content-Range"))
                if total is not None and total == self.have:
                    self._check_total(total)
                    return
                self._restart()
                raise _Retryable("the server refused to resume (HTTP 416)")
            if status == 206:
                start, total = _content_range(response.headers.get("Content-Range"))
                if start != self.have:
                    self._restart()
                    raise _Retryable(f"the server resumed at byte {start}, not {self.have}")
            else:  # the whole file (a server that ignores Range): it replaces the part
                if self.have:
                    self._restart()
                length = response.headers.get("Content-Length")
                total = int(length) if length and length.isdigit() else None
            self._check_total(total)
            self._copy(response)
        if self.total is not None and self.have < self.total:
            raise _Retryable("the server closed the connection early")
        if self.total is not None and self.have > self.total:
            self._restart()
            raise _Retryable("the server sent more bytes than the file has")

    def _copy(self, response: Any) -> None:
        try:
            f = open(self.part, "ab")  # noqa: SIM115 - closed below; errors told apart
        except OSError as e:
            raise DownloadError(self.part.parent, f"cannot write ({e.strerror})",
                                "check permissions, or set NQKIT_HOME") from None
        # read1: whatever has arrived (up to CHUNK), so that what a stalled server sent is
        # on disk when the user interrupts; read(CHUNK) would wait for a whole block
        read = getattr(response, "read1", None) or response.read
        with f:
            while True:
                if self.stop.is_set():
                    raise _Stopped
                try:
                    block = read(CHUNK)
                except (TimeoutError, ConnectionError, http.client.HTTPException,
                        OSError) as e:
                    raise _Retryable(f"{e.__class__.__name__}: {e}") from None
                if not block:
                    break
                try:
                    f.write(block)
                    f.flush()  # what is hashed is what is in the file, if we stop here
                except OSError as e:
                    if e.errno in _NO_SPACE:
                        raise _disk_full(self.part, self.have, e) from None
                    raise
                self.digests.update(block)
                self.have += len(block)
                self.received += len(block)
                self.bar.update(len(block))
            try:
                os.fsync(f.fileno())
            except OSError as e:
                if e.errno in _NO_SPACE:
                    raise _disk_full(self.part, self.have, e) from None
                raise

    def _check_total(self, total: int | None) -> None:
        if total is None:
            return
        if self.file.size is not None and total != self.file.size:
            raise DownloadError(self.url, f"the server offers {total:,} bytes, the registry "
                                f"says {self.file.size:,}", "the mirror holds another "
                                "version of the file; check it against the official one")
        if self.total is None:
            self.total = total
            self.bar.reset(total=total)
            self.bar.update(self.have)
            need = total - self.have
            free = _free_bytes(self.part.parent)
            if need > free:
                raise DownloadError(self.part.parent, f"not enough free disk space for "
                                    f"{self.file.name}: {human_bytes(need)} needed, "
                                    f"{human_bytes(free)} free",
                                    "free some space or set NQKIT_HOME to a larger disk")

    def _verify(self, resumed_from: int, seconds: float) -> Fetched:
        f, have = self.file, self.have
        md5, sha = self.digests.hexdigests()
        if f.size is not None and have != f.size:  # pragma: no cover - caught in _attempt
            self.part.unlink()
            raise DownloadError(self.dest.name, f"size mismatch: expected {f.size:,} bytes, "
                                f"got {have:,}", "run the same command again")
        if f.md5 is not None and md5 != f.md5:
            with contextlib.suppress(FileNotFoundError):
                self.part.unlink()
            raise DownloadError(self.dest.name, f"checksum mismatch: expected md5 {f.md5}, "
                                f"got {md5} ({have:,} bytes from {self.url})",
                                "the corrupt download was removed; run the same command "
                                "again, and check the mirror if it persists")
        if f.sha256 is not None and sha != f.sha256:
            with contextlib.suppress(FileNotFoundError):
                self.part.unlink()
            raise DownloadError(self.dest.name, f"{unknown_version(f, sha)} ({have:,} bytes "
                                f"from {self.url})", "the download was removed; fetch the "
                                "official file (a mirror may hold another version)")
        if not self.part.exists():  # an empty file: no byte was ever written
            self.part.touch()
        os.replace(self.part, self.dest)
        verified = verified_against(f)
        status = "resumed" if resumed_from else "fetched"
        return Fetched(f, self.dest, have, md5, sha, verified, status, self.received,
                       resumed_from, seconds, self.url)


def verified_against(f: DataFile) -> str:
    """What a fetched file was checked against: ``md5+size``, ``size``, ``sha256`` (a
    pinned one), a combination, or ``none``."""
    parts = ["md5"] if f.md5 else []
    parts += ["size"] if f.size is not None else []  # no published size: none checked
    parts += ["sha256"] if f.sha256 is not None else []
    return "+".join(parts) or "none"


def _present(ds: Dataset, f: DataFile, dest: Path, record: dict[str, Any]) -> Fetched | None:
    """A file already under its final name, checked (see :func:`check_present`: re-read
    only when its stamp changed), or None if absent."""
    got = check_present(ds, f, dest, record)
    if got is None:
        return None
    size, md5, sha = got
    verified = verified_against(f)
    members = tuple((record.get(f.name) or {}).get("members") or ())
    return Fetched(f, dest, size, md5, sha, verified, "present", 0, 0, 0.0, "", members)


def _record_entry(ds: Dataset, item: Fetched, members: Sequence[str] = ()) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "url": item.file.url, "fetched_from": item.url or None, "size": item.size,
        "md5": item.md5, "sha256": item.sha256, "published_md5": item.file.md5,
        "published_size": item.file.size, "verified": item.verified,
        "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "stamp": stamp(item.path),
    }
    if members:
        entry["members"] = list(members)
    return entry


def _extract_zip(archive: Path, directory: Path) -> list[str]:
    """Extract ``archive`` into ``directory``: each member complete under its final name or
    absent. Returns the members' relative paths."""
    import zipfile

    from nqkit.io import make_temp

    try:
        z = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as e:
        raise DownloadError(archive, f"not a valid zip archive ({e})",
                            "delete it and run the same command again") from None
    with z:
        infos = [i for i in z.infolist() if not i.is_dir()
                 and not i.filename.startswith("__MACOSX/")]
        names: list[str] = []
        for info in infos:
            p = PurePosixPath(info.filename)
            if p.is_absolute() or ".." in p.parts or p.name in (RECORD, archive.name) or \
                    p.name.endswith(".part"):
                raise DownloadError(archive, f"refusing the archive member {info.filename!r}",
                                    "the archive must hold plain relative file names")
            names.append(str(p))
        need = sum(i.file_size for i in infos)
        free = _free_bytes(directory)
        if need > free:
            raise DownloadError(directory, f"not enough free disk space to extract "
                                f"{archive.name}: {human_bytes(need)} needed, "
                                f"{human_bytes(free)} free",
                                "free some space or set NQKIT_HOME to a larger disk")
        for info, name in zip(infos, names, strict=True):
            target = directory.joinpath(*PurePosixPath(name).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = make_temp(target)
            try:
                with os.fdopen(fd, "wb") as out, z.open(info) as src:
                    shutil.copyfileobj(src, out, CHUNK)
                os.replace(tmp, target)
            except zipfile.BadZipFile as e:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise DownloadError(archive, f"the member {name} is corrupt ({e})",
                                    "delete the archive and run the same command again"
                                    ) from None
            except OSError as e:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                if e.errno in _NO_SPACE:
                    raise DownloadError(directory, f"disk full while extracting {name}",
                                        "free some space and run the command again") from None
                raise
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
    return names


class _Bars:
    """Progress displays on stderr (:func:`nqkit.report.progress_bar`, in bytes): on a
    terminal one bar per running download, each on a line of its own."""

    def __init__(self, enabled: bool | None, slots: int) -> None:
        self.enabled = enabled
        self.free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(slots):
            self.free.put(i)

    def make(self, name: str) -> Callable[[int | None, int], Any]:
        def bar(total: int | None, initial: int) -> Any:
            from nqkit.report import progress_bar

            slot = self.free.get()
            t = progress_bar(desc=name, total=total, initial=initial, unit="B",
                             unit_scale=True, position=slot, disable=self.enabled is False)
            close = t.close

            def closing() -> None:
                close()
                self.free.put(slot)

            t.close = closing
            return t

        return bar


def fetch(ds: Dataset, files: Sequence[DataFile] | None = None, *,
          home: Path | None = None, mirror: str | os.PathLike[str] | None = None,
          jobs: int = 4, retries: int = 3, timeout: float = 60.0, backoff: float = 0.5,
          progress: bool | None = None, force: bool = False) -> list[Fetched]:
    """Download ``files`` of ``ds`` (default: all) into its directory, verified.

    ``jobs`` files are fetched at once; ``retries`` bounds the consecutive failed attempts
    of one file (an attempt that brings at least 1 MB resets the count; 0 never retries,
    which leaves the ``.part`` for the next run at the first drop); ``timeout`` is
    the socket timeout in seconds; ``progress`` shows the downloads' progress on stderr
    (``None``: bars on a terminal, elsewhere a line every ten seconds or so). Files
    already on disk are checked, not fetched again (with ``force`` they are fetched
    again, whatever their state, each replacing the file on disk only once it is
    verified: the repair of a damaged file). Returns one
    :class:`Fetched` per file, in the dataset's order; raises :class:`DownloadError`.
    """
    wanted = list(files) if files is not None else list(ds.files)
    for f in wanted:  # a bad --mirror is refused before any directory is created
        mirror_url(f.url, mirror)
    directory = dataset_dir(ds, home, for_writing=True)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DownloadError(directory, f"cannot create the data directory ({e.strerror})",
                            "set NQKIT_HOME to a writable directory") from None
    record = read_record(directory)
    results: dict[str, Fetched] = {}
    todo: list[DataFile] = []
    for f in wanted:
        done = None if force else _present(ds, f, directory / f.name, record)
        if done is None:
            todo.append(f)
        else:
            results[f.name] = done
    need = 0
    for f in todo:
        if f.size is not None:
            part = directory / f"{f.name}.part"
            kept = part.stat().st_size if part.exists() else 0
            need += max(0, f.size - (kept if kept <= f.size else 0))
    free = _free_bytes(directory)
    if need > free:
        raise DownloadError(directory, f"not enough free disk space for {ds.name}: "
                            f"{human_bytes(need)} to download, {human_bytes(free)} free",
                            "free some space or set NQKIT_HOME to a larger disk")
    if todo:
        results.update(_run_pool(ds, todo, directory, mirror=mirror, jobs=jobs,
                                 retries=retries, timeout=timeout, backoff=backoff,
                                 progress=progress))
    out: list[Fetched] = []
    for f in wanted:
        item = results[f.name]
        members: Sequence[str] = item.members
        if ds.archive == "zip" and not (members and all(
                (directory / m).is_file() for m in members)):
            members = _extract_zip(item.path, directory)
            item = Fetched(item.file, item.path, item.size, item.md5, item.sha256,
                           item.verified, item.status, item.received, item.resumed_from,
                           item.seconds, item.url, tuple(members))
        old = read_record(directory).get(f.name)
        if old is None:  # a file found on disk whose record was lost
            update_record(directory, ds.name, f.name, _record_entry(ds, item, members))
        elif list(old.get("members") or []) != list(members):
            update_record(directory, ds.name, f.name, {**old, "members": list(members)})
        out.append(item)
    return out


def _run_pool(ds: Dataset, todo: list[DataFile], directory: Path, *, mirror: Any,
              jobs: int, retries: int, timeout: float, backoff: float,
              progress: bool | None) -> dict[str, Fetched]:
    stop = threading.Event()
    workers = max(1, min(jobs, len(todo)))
    bars = _Bars(progress, workers)
    results: dict[str, Fetched] = {}

    def one(f: DataFile) -> Fetched:
        transfer = _Transfer(f, directory / f.name, mirror_url(f.url, mirror),
                             mirrored=mirror is not None, retries=retries, timeout=timeout,
                             backoff=backoff, stop=stop,
                             bar=bars.make(f.name))
        item = transfer.run()
        # recorded at once: a verified file keeps its sha256 even if a later file fails
        update_record(directory, ds.name, f.name, _record_entry(ds, item))
        return item

    # Daemon threads, not a ThreadPoolExecutor: an interrupted command must exit at once,
    # and an executor's threads are joined at exit (one blocked on a stalled server would
    # hold the process until its socket timeout). Their .part files stay a valid prefix:
    # every block is flushed before it is counted, and the next run re-hashes from disk.
    pending: queue.SimpleQueue[DataFile] = queue.SimpleQueue()
    for f in todo:
        pending.put(f)
    done: queue.SimpleQueue[tuple[DataFile, Fetched | BaseException]] = queue.SimpleQueue()

    def worker() -> None:
        while not stop.is_set():
            try:
                f = pending.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((f, one(f)))
            except BaseException as e:  # handed to the main thread, which raises it
                done.put((f, e))

    threads = [threading.Thread(target=worker, daemon=True, name=f"nqkit-download-{i}")
               for i in range(workers)]
    for t in threads:
        t.start()
    try:
        while len(results) < len(todo):
            try:
                f, out = done.get(timeout=0.2)
            except queue.Empty:
                continue
            if isinstance(out, BaseException):
                raise out
            results[f.name] = out
    except BaseException:
        stop.set()  # the others stop at their next block, keeping their .part
        for t in threads:
            t.join(timeout=2.0)
        raise
    return results
