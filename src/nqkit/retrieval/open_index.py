"""Open-domain index directories: built once from a passage corpus, queried many times.

An index directory describes itself (house style 8)::

    DIR/params.json          format, corpus fingerprint and count, shards, retriever
                             settings, versions, sizes of every file
    DIR/passages/            the passage store (shard-NNNNN.tsv + offsets-NNNNN.npy)
    DIR/bm25/ or DIR/dense/  the retriever's shard arrays

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nqkit import __version__
from nqkit.cluster import Cluster
from nqkit.errors import InputError
from nqkit.io import PathLike
from nqkit.retrieval.store import PassageStore, Shard, write_store

__all__ = ["FORMAT", "FORMAT_VERSION", "OpenIndex", "build_index", "load_index"]

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
        s = self.params["settings"]
        if self.retriever == "bm25":
            return {"retriever": "bm25", "k1": s["k1"], "b": s["b"], "bm25": s["method"],
                    "stop": s["stopwords"], "stem": s["stemmer"], "fields": s["fields"],
                    "bm25s": self.params["versions"]["bm25s"]}
        device = s["device"] + ("-fp16" if s["device"].startswith("cuda") else "")
        return {"retriever": "dense", "model": s["model_name"],
                "model-fp": s["model_fingerprint"].rsplit("-", 1)[-1][:8],
                "doc": s["doc_text"], "search": s["ann"], "device": device}

    def search(self, questions: list[str], k: int, cluster: Cluster, *,
               device: str = "cpu") -> tuple[list[Any], float]:
        """Top-k ``(rows, scores)`` per question, and the largest job peak RSS (MB)."""
        if self.retriever == "bm25":
            from nqkit.retrieval.bm25_index import BM25Settings, search_bm25

            return search_bm25(self.root, self.shards, BM25Settings(**self.settings()),
                               questions, k, cluster)
        from nqkit.retrieval.dense_index import DenseSettings, encode_queries, search_dense

        ds = DenseSettings(**self.settings())
        q = encode_queries(ds, questions, device)
        return search_dense(self.root, self.shards, ds, q, k, cluster)


def _versions(retriever: str) -> dict[str, str]:
    import numpy

    v = {"nqkit": __version__, "numpy": numpy.__version__}
    if retriever == "bm25":
        from nqkit.retrieval.bm25_index import bm25_versions

        v.update(bm25_versions())
    else:
        from nqkit.retrieval.dense_index import dense_versions

        v.update(dense_versions())
    return v


CHECKED_VERSIONS = {"bm25": ("bm25s", "PyStemmer"),
                    "dense": ("torch", "sentence-transformers")}


def _file_sizes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != PARAMS}


def build_index(corpus: PathLike, out: PathLike, retriever: str, cluster: Cluster, *,
                shard_size: int, settings: Any) -> dict[str, Any]:
    """Build an index directory at ``out``; returns its params (also in params.json).

    ``settings`` is a :class:`~nqkit.retrieval.bm25_index.BM25Settings` or a
    :class:`~nqkit.retrieval.dense_index.DenseSettings`.
    """
    from nqkit.io import atomic_directory, check_new_directory

    out = Path(out)
    check_new_directory(out, option="-o")
    versions = _versions(retriever)  # a missing extra fails before any work
    with atomic_directory(out, option="-o") as tmp:
        t0 = time.perf_counter()
        info = write_store(corpus, tmp, shard_size)
        t_store = time.perf_counter() - t0
        if retriever == "bm25":
            from nqkit.retrieval.bm25_index import build_bm25

            facts = build_bm25(tmp, info.shards, settings, cluster)
        else:
            from nqkit.retrieval.dense_index import build_dense

            facts = build_dense(tmp, info.shards, settings, cluster)
        params = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "retriever": retriever,
            "corpus": {"path": str(Path(corpus).resolve()), "fingerprint": info.fingerprint,
                       "passages": info.passages},
            "shard_size": shard_size,
            "shards": [[s.start, s.stop] for s in info.shards],
            "settings": settings.as_dict(),
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
    if retriever not in CHECKED_VERSIONS:
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
    for key in CHECKED_VERSIONS[retriever]:
        if recorded.get(key) != current.get(key):
            raise InputError(path, f"the index was built with {key} {recorded.get(key)}, this "
                             f"environment has {current.get(key)} (tokens or embeddings could "
                             "differ)", f"{rebuild}, or install {key}=={recorded.get(key)}")
    return OpenIndex(root, params, shards, PassageStore(root, shards))


def close_index(index: OpenIndex) -> None:
    with contextlib.suppress(Exception):
        index.store.close()
