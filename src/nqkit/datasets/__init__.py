"""Datasets by name: the registry, verified downloads, local files and export.

``nqkit.datasets.resolve("nq/dev")`` gives the local files of a registry dataset (or of a
path or glob), or an error naming the exact ``nqkit data get`` command; nothing downloads
without the user asking; every file it gives is checked (re-hashed where it changed since
it was verified), and ``nqkit.datasets.verify(ds)`` re-hashes a dataset on demand
(:mod:`nqkit.datasets.integrity`). Downloads live in :mod:`nqkit.datasets.download`, export in
:mod:`nqkit.datasets.export` (imported on use: they need more of the standard library).

Registry names work wherever a path is read, in the command line and in library calls
(``read_nq_open("nq-open/dev")``): the ``nqkit`` package installs
:func:`nqkit.datasets.names.lookup_paths` as the io floor's name resolver
(:func:`nqkit.io.set_name_resolver`) when it is imported, and imports this layer only when
a text that may be a name is read; forked worker processes inherit it.
"""

from __future__ import annotations

from nqkit.datasets.integrity import Checked, DownloadError, verify
from nqkit.datasets.local import data_home, dataset_dir, on_disk
from nqkit.datasets.names import local_paths, resolve
from nqkit.datasets.registry import (
    DataFile,
    Dataset,
    DatasetRegistry,
    builtin_registry,
    load_registry,
    parse_shards,
)

__all__ = [
    "Checked",
    "DataFile",
    "Dataset",
    "DatasetRegistry",
    "DownloadError",
    "builtin_registry",
    "data_home",
    "dataset_dir",
    "load_registry",
    "local_paths",
    "on_disk",
    "parse_shards",
    "resolve",
    "verify",
]
