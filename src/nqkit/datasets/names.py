"""Registry names as inputs: ``nq/dev`` (or ``nq/dev:0-1``) wherever a command takes a path.

The local files of a name are checked before they are used, as ``nqkit data get`` checks
them (:func:`nqkit.datasets.integrity.check_present`), so this module sits above both the
files on disk (:mod:`nqkit.datasets.local`) and their checks.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from nqkit.datasets.integrity import check_present
from nqkit.datasets.local import dataset_dir, get_command, on_disk, read_record, select, split_name
from nqkit.datasets.registry import Dataset, DatasetRegistry, load_registry
from nqkit.errors import InputError

__all__ = ["local_paths", "lookup_paths", "resolve"]


def local_paths(ds: Dataset, selector: str | None = None, home: Path | None = None
                ) -> list[Path]:
    """The local files of ``ds`` (or of a selection), checked, or an InputError with the
    command to run.

    Every selected file under its final name is checked as ``nqkit data get`` checks it
    (:func:`nqkit.datasets.integrity.check_present`): a size other than the published one
    (a truncated file) is refused, and a file whose stamp changed since it was verified is
    hashed again before it is used; a mismatch names the command that fetches it again.
    """
    files, members = select(ds, selector, home)
    directory = dataset_dir(ds, home)
    record = read_record(directory)
    for f in files:
        check_present(ds, f, directory / f.name, record, digest=False)
    state = on_disk(ds, files, home)
    if not state.complete:
        n, m = len(state.present), len(files)
        what = "is not on disk" if n == 0 else f"is only partly on disk ({n} of {m} files)"
        label = f"{ds.name}:{selector}" if selector else ds.name
        raise InputError(label, f"dataset {what} under {dataset_dir(ds, home)}",
                         f"fetch it with `{get_command(ds, selector)}`")
    return list(members) if members is not None else list(state.paths)


def lookup_paths(text: str, *, registry: DatasetRegistry | None = None) -> list[Path] | None:
    """The local files of registry name ``text``, or ``None`` when ``text`` is no registry
    name (an existing path, a glob, a name without ``/`` or not in the registry).

    Raises :class:`InputError` naming ``nqkit data get ...`` when the dataset is known but
    not on disk. This is what lets every command take ``nq/dev`` where it takes a path.
    """
    if "/" not in text or os.path.lexists(text) or text.startswith(("/", ".", "~")):
        return None
    if any(c in text for c in "*?[") and glob.glob(text):
        return None
    name, selector = split_name(text)
    reg = registry if registry is not None else load_registry()
    if name not in reg:
        return None
    return local_paths(reg.get(name), selector)


def resolve(name_or_path: str | os.PathLike[str], what: str = "input", *,
            registry: DatasetRegistry | None = None) -> list[Path]:
    """Local files for a registry name (``nq/dev``, ``nq/dev:0-1``) or a path/glob.

    An existing path always wins over a name. A registry dataset that is not on disk
    raises :class:`InputError` with the exact ``nqkit data get NAME`` command; nothing
    is downloaded here.
    """
    from nqkit.io.paths import expand_paths

    text = os.fspath(name_or_path)
    if registry is None:  # expand_paths reads names through the installed resolver
        return expand_paths(text, what=what)
    found = lookup_paths(text, registry=registry)
    return found if found is not None else expand_paths(text, what=what)

