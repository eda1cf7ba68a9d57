"""Open-domain index directories: built once from a passage corpus, queried many times.

An index directory describes itself (house style 8)::

    DIR/params.json          format, corpus fingerprint and count, shards, retriever
                             settings, versions, the size and SHA-256 of every file, and
                             the index digest
    DIR/passages/            the passage store (shard-NNNNN.tsv + offsets-NNNNN.npy)
    DIR/bm25/ or DIR/dense/  the retriever's shard arrays

The retriever's build and search jobs, settings, signature and checked library versions
come from its declaration (:class:`nqkit.retrieval.base.ShardedJobs`).

:func:`build_index` writes everything into a temporary sibling directory and renames it
into place only when the build succeeded, so a failed or interrupted build leaves no
half index.

Indexes are shared between machines and labs, so they are verified by content. At build,
every file gets a SHA-256 (and so does every file of the model directory a dense index
reads at search time), and one *index digest* is taken over what decides the results: the
format, retriever, corpus fingerprint, shards, settings (without the model's path), the
build facts and every file's SHA-256. :func:`load_index` checks, before any search: the
format version; the digest against ``params.json``'s content, so a setting edited in
``params.json`` cannot claim what the arrays were not built with; every file's size and
SHA-256 — the small files (up to 1 MiB) every time, the large ones once per file state
(:class:`nqkit.io.content.VerifiedStates`, a record outside the index, so a second run
reads nothing) or every time with ``full=True`` (``retrieve --verify``, ``index verify``);
and that the library versions that change the index's tokens or embeddings (bm25s and
PyStemmer for bm25s's BM25 flavours, none for ``lucene-exact``, whose analyzer and scoring
are nqkit's own; torch and sentence-transformers) are the ones the index was built with.
Any difference is one line naming the file and how to rebuild. Every run's signature
carries the digest's first 12 hex digits beside the corpus fingerprint.
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

__all__ = ["FORMAT", "FORMAT_VERSION", "FileCheck", "OpenIndex", "build_index", "index_digest",
           "load_index", "sharded_jobs", "sharded_retrievers", "verify_index"]

FORMAT = "nqkit-passage-index"
FORMAT_VERSION = 2  # 2: every file's SHA-256 and the index digest
PARAMS = "params.json"
SMALL_FILE = 1 << 20  # files up to this size are hashed on every load
REBUILD = "rebuild it with `nqkit index build`"


@dataclass
class OpenIndex:
    """A loaded index directory (checked); search it with :meth:`search`."""

    root: Path
    params: dict[str, Any]
    shards: tuple[Shard, ...]
    store: PassageStore = field(repr=False)
    digest: str = ""  # the index digest, recomputed from the verified content

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
        """The index digest and the settings that change this retriever's scores, for
        signatures."""
        return {"index": self.digest[:12], **sharded_jobs(self.retriever).signature(self.params)}

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


def _versions(retriever: str, settings: Mapping[str, Any]) -> dict[str, str]:
    """The versions recorded for an index of ``retriever`` built with ``settings``."""
    import numpy

    return {"nqkit": __version__, "numpy": numpy.__version__,
            **sharded_jobs(retriever).versions(settings)}


def _files_of(root: Path, skip: str | None = None) -> list[str]:
    return [p.relative_to(root).as_posix() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != skip]


def _manifest(root: Path, names: list[str], desc: str) -> dict[str, dict[str, Any]]:
    """``{name: {"bytes": size, "sha256": hex}}`` of files under ``root``."""
    from nqkit.io import sha256_files
    from nqkit.report import progress_bar

    digests = sha256_files([root / n for n in names], desc=desc, progress=progress_bar)
    return {n: {"bytes": (root / n).stat().st_size, "sha256": digests[root / n]}
            for n in names}


def _model_manifest(model: Path) -> dict[str, dict[str, Any]]:
    """:func:`_manifest` of a model directory, from the digests its fingerprint took
    (:func:`~nqkit.retrieval.encoders.model_digests`: hashed once a process while the
    files keep their stamps), not a second pass over a model of hundreds of MB."""
    from nqkit.retrieval.encoders import model_digests

    return {n: {"bytes": (model / n).stat().st_size, "sha256": digest}
            for n, digest in model_digests(model)}


def _model_dir(params: Mapping[str, Any]) -> Path | None:
    """The model directory a (dense) index reads at search time: its ``model`` setting."""
    model = params["settings"].get("model")
    return Path(model) if isinstance(model, str) else None


def index_digest(params: Mapping[str, Any]) -> str:
    """SHA-256 over what decides an index's results (see the module doc): equal for two
    builds of one corpus with one configuration, wherever they were made."""
    import hashlib

    content = {
        "format": params["format"], "format_version": params["format_version"],
        "retriever": params["retriever"],
        "corpus": {"fingerprint": params["corpus"]["fingerprint"],
                   "passages": params["corpus"]["passages"]},
        "shards": params["shards"],
        "settings": {k: v for k, v in params["settings"].items() if k != "model"},
        "facts": {k: v for k, v in params["facts"].items() if k != "peak_rss_mb"},
        "files": {n: e["sha256"] for n, e in params["files"].items()},
        "model_files": {n: e["sha256"] for n, e in params.get("model_files", {}).items()},
    }
    blob = json.dumps(content, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("ascii")).hexdigest()


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
    versions = _versions(retriever, settings)  # a missing extra fails before any work
    jobs = sharded_jobs(retriever)
    with atomic_directory(out, option="-o") as tmp:
        t0 = time.perf_counter()
        cluster.preload(jobs.job_modules(settings))  # on the workers, as the store is written
        info = write_store(corpus, tmp, shard_size)
        t_store = time.perf_counter() - t0
        facts = jobs.build(tmp, info.shards, dict(settings), cluster)
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
            "files": _manifest(tmp, _files_of(tmp, skip=PARAMS), "hash index files"),
        }
        model = _model_dir(params)
        if model is not None and model.is_dir():
            params["model_files"] = _model_manifest(model)
        params["digest"] = index_digest(params)
        with open(tmp / PARAMS, "w", encoding="utf-8") as f:
            json.dump(params, f, indent=2)
            f.write("\n")
    return params


_HEX64 = frozenset("0123456789abcdef")


def _check_manifest(manifest: Any, path: Path, key: str) -> dict[str, dict[str, Any]]:
    """params.json's ``files`` (or ``model_files``): relative names with sizes and
    SHA-256s, none leaving its directory."""
    bad = None
    if not isinstance(manifest, dict):
        bad = f"{key!r} is not an object"
    else:
        for name, entry in manifest.items():
            parts = name.split("/")
            if (not name or name.startswith("/") or "\\" in name
                    or any(p in ("", ".", "..") for p in parts)):
                bad = f"{key}: file name {name!r} leaves the directory"
            elif not (isinstance(entry, dict) and type(entry.get("bytes")) is int
                      and isinstance(entry.get("sha256"), str)
                      and len(entry["sha256"]) == 64 and set(entry["sha256"]) <= _HEX64):
                bad = f"{key}: entry {name!r} is not {{bytes, sha256}}"
            if bad:
                break
    if bad:
        raise InputError(path, f"malformed entry ({bad})", REBUILD)
    return dict(manifest)


def _read_params(root: Path) -> tuple[dict[str, Any], tuple[Shard, ...]]:
    """params.json, checked for its shape (not yet for the files it describes)."""
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
        raise InputError(path, f"malformed JSON ({e})", REBUILD) from None
    if not isinstance(params, dict) or params.get("format") != FORMAT:
        raise InputError(path, "is not the params.json of an nqkit passage index", REBUILD)
    if params.get("format_version") != FORMAT_VERSION:
        raise InputError(path, f"index format version {params.get('format_version')!r}, this "
                         f"nqkit reads version {FORMAT_VERSION}", REBUILD)
    try:
        retriever = params["retriever"]
        shards = tuple(Shard(i, int(a), int(b)) for i, (a, b) in enumerate(params["shards"]))
        n = int(params["corpus"]["passages"])
        dict(params["versions"])
        if not (isinstance(params["settings"], dict) and isinstance(params["facts"], dict)
                and isinstance(params["corpus"]["fingerprint"], str)
                and isinstance(params["digest"], str)):
            raise TypeError("settings, facts, corpus fingerprint or digest")
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(path, f"missing or malformed entry ({e!r})", REBUILD) from None
    params["files"] = _check_manifest(params.get("files"), path, "files")
    if "model_files" in params:
        params["model_files"] = _check_manifest(params["model_files"], path, "model_files")
    if retriever not in sharded_retrievers():
        raise InputError(path, f"unknown retriever {retriever!r}", REBUILD)
    if not shards or shards[-1].stop != n or any(
            a.stop != b.start for a, b in itertools.pairwise(shards)):
        raise InputError(path, f"the shards do not cover the {n:,} passages", REBUILD)
    if index_digest(params) != params["digest"]:
        raise InputError(path, "differs from what was built: its content no longer gives the "
                         "index digest it records (settings, facts or checksums were edited)",
                         REBUILD)
    return params, shards


@dataclass(frozen=True, slots=True)
class FileCheck:
    """One file of an index (or of the model directory it reads) against params.json."""

    path: Path
    bytes: int  # as recorded at build
    status: str  # ok (hashed now), unchanged (this state verified before), missing,
    # size, sha256 (differs)
    found: str = ""  # what differs: the size or SHA-256 on disk

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "unchanged")

    def problem(self, base: Path) -> str:
        name = self.path.relative_to(base).as_posix() if self.path.is_relative_to(base) \
            else str(self.path)
        if self.status == "missing":
            return f"{name} is missing"
        if self.status == "size":
            return f"{name} has {self.found} bytes, the build had {self.bytes:,}"
        return f"{name} has other content (SHA-256 {self.found[:12]}) than at the build"


def _check_files(base: Path, manifest: Mapping[str, Mapping[str, Any]], full: bool
                 ) -> list[FileCheck]:
    from nqkit.io import VerifiedStates, file_stamp, sha256_files
    from nqkit.report import progress_bar

    states = VerifiedStates(base)
    checks: dict[str, FileCheck] = {}
    todo: list[tuple[str, Path, list[int]]] = []
    for name, entry in manifest.items():
        p, size = base / name, entry["bytes"]
        try:
            stamp = file_stamp(p) if p.is_file() else None
        except OSError:
            stamp = None
        if stamp is None:
            checks[name] = FileCheck(p, size, "missing")
        elif stamp[0] != size:
            checks[name] = FileCheck(p, size, "size", f"{stamp[0]:,}")
        elif not full and size > SMALL_FILE and states.known(name, stamp) == entry["sha256"]:
            checks[name] = FileCheck(p, size, "unchanged")
        else:
            todo.append((name, p, stamp))
    try:
        digests = sha256_files([p for _, p, _ in todo], desc=f"verify {base.name}",
                               progress=progress_bar)
    except OSError as e:
        raise InputError(base, f"cannot read an index file ({e.strerror}: {e.filename})",
                         "check the directory's permissions") from None
    for name, p, stamp in todo:
        sha, want = digests[p], manifest[name]["sha256"]
        if sha == want:
            checks[name] = FileCheck(p, stamp[0], "ok")
            if stamp[0] > SMALL_FILE:
                states.remember(name, stamp, sha)
        else:
            checks[name] = FileCheck(p, manifest[name]["bytes"], "sha256", sha)
            states.forget(name)
    states.save()
    return [checks[n] for n in manifest]


def verify_index(root: PathLike, *, full: bool = True
                 ) -> tuple[dict[str, Any], list[FileCheck]]:
    """params.json (checked: shape and digest) and every file's check, the index's files
    first, then its model directory's; raises only for params.json itself."""
    root = Path(root)
    params, _ = _read_params(root)
    checks = _check_files(root, params["files"], full)
    model = _model_dir(params)
    if params.get("model_files"):
        if model is None or not model.is_dir():
            raise InputError(f"--index {root}", f"the model directory the index reads ({model}) "
                             "is gone", "restore it, or rebuild the index with --model")
        checks += _check_files(model, params["model_files"], full)
    return params, checks


def load_index(root: PathLike, *, full: bool = False) -> OpenIndex:
    """Open an index directory after verifying it (see the module doc); ``full``: hash
    every file again, whatever their state."""
    root = Path(root)
    params, checks = verify_index(root, full=full)
    bad = [c for c in checks if not c.ok]
    if bad:
        from nqkit.errors import examples

        model = _model_dir(params)
        found = examples([c.problem(model if model and not c.path.is_relative_to(root)
                                    else root) for c in bad], width=None)
        raise InputError(f"--index {root}", f"{len(bad)} file{'s' * (len(bad) != 1)} "
                         f"differ{'s' * (len(bad) == 1)} from the build ({found})",
                         f"the directory was changed after it was built: {REBUILD}, or copy "
                         "it again from its source")
    retriever = params["retriever"]
    # the libraries this index's settings use (an index of a flavour that uses none may
    # still name some: lucene-exact indexes built before it stopped recording bm25s's)
    recorded, current = params["versions"], _versions(retriever, params["settings"])
    for key in sharded_jobs(retriever).checked_versions:
        if key in current and recorded.get(key) != current[key]:
            raise InputError(root / PARAMS, f"the index was built with {key} "
                             f"{recorded.get(key)}, this environment has {current.get(key)} "
                             "(tokens or embeddings could differ)",
                             f"{REBUILD}, or install {key}=={recorded.get(key)}")
    shards = tuple(Shard(i, int(a), int(b)) for i, (a, b) in enumerate(params["shards"]))
    return OpenIndex(root, params, shards, PassageStore(root, shards), params["digest"])


def close_index(index: OpenIndex) -> None:
    with contextlib.suppress(Exception):
        index.store.close()
