"""Open-domain index directories: built once from a passage corpus, queried many times.

An index directory describes itself (house style 8)::

    DIR/params.json          format, corpus fingerprint and count, shards, retriever
                             settings, versions, sizes of every file
    DIR/passages/            the passage store (shard-NNNNN.tsv + offsets-NNNNN.npy)
    DIR/bm25/ or DIR/dense/  the retriever's shard arrays

The retriever's build and search jobs, settings, signature and checked library versions
come from its declaration (:class:`nqkit.retrieval.base.ShardedJobs`).

:func:`build_index` writes everything into a temporary sibling directory and renames it
into place only when the build succeeded, so a failed or interrupted build leaves no
half index. :func:`load_index` checks ``params.json`` before any search: the format
version, that every file listed is there with its recorded size, and that the library
versions that change tokens or embeddings (bm25s and PyStemmer; torch and
sentence-transformers) are the ones the index was built with — otherwise one line says
what differs and how to rebuild.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nqkit._version import __version__
from nqkit.cluster import Cluster
from nqkit.errors import InputError
from nqkit.io import PathLike
from nqkit.retrieval.passage_store import PassageStore, Shard, write_store

if TYPE_CHECKING:
    from nqkit.retrieval.base import ShardedJobs

__all__ = ["FORMAT", "FORMAT_VERSION", "OpenIndex", "build_index", "load_index",
           "sharded_jobs", "sharded_retrievers"]

FORMAT = "nqkit-passage-index"
FORMAT_VERSION = 1
PARAMS = "params.json"


@dataclass
class OpenIndex:
    """A loaded index directory (checked); search it with :meth:`search`."""

    root: Path
    params: dict[str, Any]
    shards: tuple[Shard, ...]
    store: PassageStore = field(repr=False)

    @property
    def retriever(self) -> str:
        return str(self.params["retriever"])

    @property
    def fingerprint(self) -> str:
        return str(self.params["corpus"]["fingerprint"])

    @property
    def passages(self) -> int:
        return int(self.params["corpus"]["passages"])

    def settings(self) -> dict[str, Any]:
        return dict(self.params["settings"])

    def signature_settings(self) -> dict[str, object]:
        """The settings that change this retriever's scores, for signatures."""
        return sharded_jobs(self.retriever).signature(self.params)

    def search(self, questions: list[str], k: int, cluster: Cluster,
               options: Mapping[str, Any]) -> tuple[list[Any], float]:
        """Top-k ``(rows, scores)`` per question, and the largest job peak RSS (MB).

        ``options``: the retriever's ``search_options`` (e.g. the resolved ``device``; see
        :func:`nqkit.retrieval.open_run.search_options`).
        """
        return sharded_jobs(self.retriever).search(self, questions, k, cluster, options)


def sharded_jobs(retriever: str) -> ShardedJobs:
    """The index build and search jobs of ``retriever`` (from the retriever registry)."""
    from nqkit.retrieval.base import load_retrievers

    registry = load_retrievers()
    jobs = registry.get(retriever).sharded if retriever in registry else None
    if jobs is None:
        raise InputError(None, f"retriever {retriever!r} builds no index directory",
                         "choose one of: " + ", ".join(sharded_retrievers()))
    return jobs


def sharded_retrievers() -> list[str]:
    """Names of the retrievers that build index directories."""
    from nqkit.retrieval.base import load_retrievers

    registry = load_retrievers()
    return [n for n in registry.names() if registry.get(n).sharded is not None]


def _versions(retriever: str) -> dict[str, str]:
    import numpy

    return {"nqkit": __version__, "numpy": numpy.__version__,
            **sharded_jobs(retriever).versions()}


def _file_sizes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != PARAMS}


def build_index(corpus: PathLike, out: PathLike, retriever: str, cluster: Cluster, *,
                shard_size: int, settings: Any) -> dict[str, Any]:
    """Build an index directory at ``out``; returns its params (also in params.json).

    ``settings``: the retriever's settings, as recorded in params.json (a dict, or a
    record with ``as_dict()`` such as :class:`~nqkit.retrieval.bm25_index.BM25Settings`).
    """
    from nqkit.io import atomic_directory, check_new_directory

    if hasattr(settings, "as_dict"):
        settings = settings.as_dict()
    out = Path(out)
    check_new_directory(out, option="-o")
    versions = _versions(retriever)  # a missing extra fails before any work
    with atomic_directory(out, option="-o") as tmp:
        t0 = time.perf_counter()
        info = write_store(corpus, tmp, shard_size)
        t_store = time.perf_counter() - t0
        facts = sharded_jobs(retriever).build(tmp, info.shards, dict(settings), cluster)
        params = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "retriever": retriever,
            "corpus": {"path": str(Path(corpus).resolve()), "fingerprint": info.fingerprint,
                       "passages": info.passages},
            "shard_size": shard_size,
            "shards": [[s.start, s.stop] for s in info.shards],
            "settings": dict(settings),
            "facts": facts,
            "build": {"seconds": round(time.perf_counter() - t0, 2),
                      "store_seconds": round(t_store, 2), "cluster": cluster.spec,
                      "workers": cluster.workers},
            "versions": versions,
            "files": _file_sizes(tmp),
        }
        with open(tmp / PARAMS, "w", encoding="utf-8") as f:
            json.dump(params, f, indent=2)
            f.write("\n")
    return params


def load_index(root: PathLike) -> OpenIndex:
    """Open an index directory after checking its params.json (see the module doc)."""
    root = Path(root)
    path = root / PARAMS
    if not root.is_dir():
        raise InputError(f"--index {root}", "is not a directory",
                         "give a directory made by `nqkit index build`")
    if not path.is_file():
        raise InputError(f"--index {root}", "has no params.json",
                         "give a directory made by `nqkit index build`")
    try:
        params = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(path, f"malformed JSON ({e})", "rebuild the index") from None
    rebuild = "rebuild it with `nqkit index build`"
    if not isinstance(params, dict) or params.get("format") != FORMAT:
        raise InputError(path, "is not the params.json of an nqkit passage index", rebuild)
    if params.get("format_version") != FORMAT_VERSION:
        raise InputError(path, f"index format version {params.get('format_version')!r}, this "
                         f"nqkit reads version {FORMAT_VERSION}", rebuild)
    try:
        retriever = params["retriever"]
        shards = tuple(Shard(i, int(a), int(b)) for i, (a, b) in enumerate(params["shards"]))
        n = int(params["corpus"]["passages"])
        files = dict(params["files"])
        recorded = dict(params["versions"])
        params["settings"], params["corpus"]["fingerprint"]
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(path, f"missing or malformed entry ({e!r})", rebuild) from None
    if retriever not in sharded_retrievers():
        raise InputError(path, f"unknown retriever {retriever!r}", rebuild)
    if not shards or shards[-1].stop != n or any(
            a.stop != b.start for a, b in itertools.pairwise(shards)):
        raise InputError(path, f"the shards do not cover the {n:,} passages", rebuild)
    wrong = []
    for name, size in files.items():
        p = root / name
        if not p.is_file():
            wrong.append(f"{name} missing")
        elif p.stat().st_size != size:
            wrong.append(f"{name} has {p.stat().st_size:,} bytes, params.json says {size:,}")
    if wrong:
        from nqkit.errors import examples

        found = examples(wrong, width=None)
        raise InputError(root, f"the index files do not match params.json ({found})",
                         f"the directory was changed after it was built: {rebuild}")
    current = _versions(retriever)
    for key in sharded_jobs(retriever).checked_versions:
        if recorded.get(key) != current.get(key):
            raise InputError(path, f"the index was built with {key} {recorded.get(key)}, this "
                             f"environment has {current.get(key)} (tokens or embeddings could "
                             "differ)", f"{rebuild}, or install {key}=={recorded.get(key)}")
    return OpenIndex(root, params, shards, PassageStore(root, shards))


def close_index(index: OpenIndex) -> None:
    with contextlib.suppress(Exception):
        index.store.close()
