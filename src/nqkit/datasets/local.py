"""Where registry datasets live on disk, and registry names wherever a path is taken.

Files live under ``$NQKIT_HOME/data/<name>/`` (default ``~/.cache/nqkit/data/<name>/``,
honouring ``XDG_CACHE_HOME``): ``nq/dev`` is ``.../data/nq/dev/nq-dev-00.jsonl.gz`` and
so on, under the official file names. A file has its final name only once it has been
verified (see :mod:`nqkit.datasets.download`); a ``NAME.part`` beside it is an unfinished
download that the next ``nqkit data get`` resumes. ``.nqkit-downloads.json`` in the same
directory records, per file, where it came from, its size, md5 and sha256, and what was
verified (the sha256 is what a user can cite when no checksum is published).

A registry name may select part of a dataset after a colon: shards (``nq/dev:0-1``), or
one file or extracted archive member by name or stem (``ambignq/light:dev_light``).
:func:`resolve` turns a name or a path into local files; a dataset that is not on disk is
an :class:`~nqkit.errors.InputError` naming the exact ``nqkit data get`` command — nothing
is ever downloaded without the user asking.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from nqkit.datasets.registry import (
    DataFile,
    Dataset,
    env_registry_files,
)
from nqkit.errors import InputError

__all__ = [
    "RECORD",
    "OnDisk",
    "data_home",
    "dataset_dir",
    "get_command",
    "on_disk",
    "read_record",
    "select",
    "split_name",
    "update_record",
]

RECORD = ".nqkit-downloads.json"
_SHARD_SPEC = re.compile(r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*")
_record_lock = threading.Lock()


def data_home() -> Path:
    """``$NQKIT_HOME/data``, else ``${XDG_CACHE_HOME:-~/.cache}/nqkit/data``."""
    home = os.environ.get("NQKIT_HOME")
    if home:
        return Path(home) / "data"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nqkit" / "data"


def dataset_dir(ds: Dataset, home: Path | None = None, *, for_writing: bool = False
                ) -> Path:
    """The directory of a dataset's files (``nq/dev`` -> ``HOME/nq/dev``), never outside
    ``HOME`` (a name with a ``..`` part is refused when the registry is read; checked here
    again, lexically, for a :class:`Dataset` made by hand).

    ``for_writing`` (downloads) also refuses a directory that resolves outside ``HOME``
    through a symbolic link inside it: nothing is ever written outside the data home. A
    link the user made is still followed for reading; the home itself may be a link (to
    keep data on another disk, set ``NQKIT_HOME`` there).
    """
    base = home if home is not None else data_home()
    out = base.joinpath(*ds.name.split("/"))
    inside, root = Path(os.path.normpath(out)), Path(os.path.normpath(base))
    if inside == root or not inside.is_relative_to(root):
        raise InputError(ds.name, f"the dataset's directory {out} is not inside {base}",
                         "give the dataset a name of the form group/name")
    if for_writing:
        real, real_root = Path(os.path.realpath(out)), Path(os.path.realpath(base))
        if real == real_root or not real.is_relative_to(real_root):
            raise InputError(ds.name, f"the dataset's directory {out} leads to {real}, "
                             f"outside the data home {base}, through a symbolic link",
                             "remove the link; to keep the data on another disk, set "
                             "NQKIT_HOME there")
    return out


def read_record(directory: Path) -> dict[str, dict[str, Any]]:
    """``file name -> record`` of ``directory``'s downloads ({} when there is none).

    An unreadable record is treated as empty: the files are then verified again by the
    next ``nqkit data get`` instead of being trusted.
    """
    try:
        doc = orjson.loads((directory / RECORD).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    return {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(
        files, dict) else {}


@contextlib.contextmanager
def file_lock(path: Path, *, wait: bool = True) -> Iterator[bool]:
    """An advisory lock on ``path`` (created if needed) held while the block runs, shared
    by every nqkit process on this machine; yields False instead of waiting when ``wait``
    is false and another process holds it. The OS releases it when a process dies, so a
    leftover lock file is harmless. (No locking where fcntl is missing.)"""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield True
        return
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def update_record(directory: Path, dataset: str, name: str, entry: dict[str, Any]) -> None:
    """Set the record of file ``name`` (atomically; safe from several download threads
    and from several processes fetching shards of the same dataset)."""
    from nqkit.io import make_temp

    with _record_lock, file_lock(directory / f"{RECORD}.lock"):
        files = read_record(directory)
        files[name] = entry
        blob = orjson.dumps({"dataset": dataset, "files": files},
                            option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        fd, tmp = make_temp(directory / RECORD)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob + b"\n")
            os.replace(tmp, directory / RECORD)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def split_name(text: str) -> tuple[str, str | None]:
    """``"nq/dev:0-1"`` -> ``("nq/dev", "0-1")``; no selector -> ``(text, None)``."""
    name, sep, selector = text.partition(":")
    return (name, selector or None) if sep else (text, None)


@dataclass(frozen=True, slots=True)
class OnDisk:
    """Which files of a dataset are on disk, and the local paths to read."""

    dataset: Dataset
    files: tuple[DataFile, ...]  # the files asked about
    present: tuple[DataFile, ...]  # of those, the ones verified and under their final name
    paths: tuple[Path, ...]  # what readers open: the files, or an archive's extracted members
    damaged: tuple[DataFile, ...] = ()  # under their final name, of another size than published

    @property
    def complete(self) -> bool:
        return len(self.present) == len(self.files)


def _members(directory: Path, record: dict[str, dict[str, Any]], f: DataFile) -> list[Path]:
    members = record.get(f.name, {}).get("members")
    if not isinstance(members, list) or not members:
        return []
    paths = [directory / str(m) for m in members]
    return paths if all(p.is_file() for p in paths) else []


def on_disk(ds: Dataset, files: Sequence[DataFile] | None = None,
            home: Path | None = None) -> OnDisk:
    """Which of ``files`` (default: all) are on disk; archives count once extracted.

    Only names and sizes are looked at (this answers ``nqkit data list``): a file of
    another size than the published one is not present. Reading goes through
    :func:`local_paths`, which checks the content where its stamp changed."""
    directory = dataset_dir(ds, home)
    wanted = tuple(files) if files is not None else ds.files
    record = read_record(directory) if ds.archive else {}
    present: list[DataFile] = []
    paths: list[Path] = []
    damaged: list[DataFile] = []
    for f in wanted:
        p = directory / f.name
        try:
            size = p.stat().st_size
        except OSError:
            continue
        if f.size is not None and size != f.size:
            damaged.append(f)
            continue
        if ds.archive:
            members = _members(directory, record, f)
            if not members:
                continue
            paths.extend(members)
        else:
            paths.append(p)
        present.append(f)
    return OnDisk(ds, wanted, tuple(present), tuple(paths), tuple(damaged))


def get_command(ds: Dataset, selector: str | None = None, *, force: bool = False) -> str:
    """The exact command that fetches ``ds`` (and names its registry file if needed);
    ``force`` fetches it again over a damaged copy."""
    cmd = f"nqkit data get {ds.name}"
    if selector and _SHARD_SPEC.fullmatch(selector) and len(ds.files) > 1:
        cmd += f" --shards {selector}"
    if force:
        cmd += " --force"
    if ds.source != "built-in" and os.path.realpath(ds.source) not in {
            os.path.realpath(p) for p in env_registry_files()}:
        cmd += f" --registry {ds.source}"
    return cmd


def select(ds: Dataset, selector: str | None, home: Path | None = None
           ) -> tuple[tuple[DataFile, ...], tuple[Path, ...] | None]:
    """The files a selector picks, and for a member selector of an archive the members.

    Shards: ``0-1``, ``0,3``. A file name or stem (``nq-dev-00``) picks that file; for an
    archive dataset, an extracted member's name or stem (``dev_light``) picks the member
    (only once the archive is on disk, since members are known from the archive itself).
    """
    if selector is None:
        return ds.files, None
    if _SHARD_SPEC.fullmatch(selector):
        return ds.select(selector), None
    for f in ds.files:
        if selector in (f.name, _stem(f.name)):
            return (f,), None
    if ds.archive:
        state = on_disk(ds, home=home)
        for p in state.paths:
            if selector in (p.name, _stem(p.name)):
                return ds.files, (p,)
        if not state.complete:
            raise InputError(f"{ds.name}:{selector}", "the archive is not on disk, so its "
                             "members are unknown", f"fetch it with `{get_command(ds)}`")
        names = [p.name for p in state.paths]
    else:
        names = [f.name for f in ds.files]
    raise InputError(f"{ds.name}:{selector}", f"no file or shard {selector!r}",
                     f"choose shards like 0-1 or one of: {', '.join(names[:6])}"
                     + (" ..." if len(names) > 6 else ""))


def _stem(name: str) -> str:
    for ext in (".gz", ".jsonl", ".json", ".tsv", ".csv", ".zip"):
        name = name.removesuffix(ext)
    return name
