"""The small interface every retriever implements, and the registry of retrievers.

A retriever indexes a list of texts (answers, sentences, paragraphs or NQ candidates,
optionally with a context each) and returns a :class:`SearchIndex`. Given a list of
queries, the index returns a *scorer*: a function ``scores(lo, hi)`` giving the
``(hi - lo, size)`` float32 matrix of query-by-document scores for queries ``lo..hi-1``
(higher is better). The query-side work (encoding, tokenizing) is done once; the matrix
is produced in row chunks, so memory stays bounded whatever the number of queries.
This is exactly what :func:`nqkit.metrics.ranking.rank_queries` consumes.

Dense retrievers are built from an :class:`Encoder` (``encode_queries(texts)`` and
``encode_docs(texts, contexts=None)`` returning L2-comparable float32 arrays); scores are
dot products, as in ReQA (Algorithm 2). Lexical retrievers score directly.

Each retriever is declared once, as a :class:`RetrieverSpec` registered in
:data:`RETRIEVERS` by the module that defines it: its settings (:class:`~nqkit.settings.Param`
records, each declared once), which of them each command reads, and what it provides to
the two paths — an in-memory retriever class for ``nqkit reqa run`` (small collections,
every document scored) and :class:`ShardedJobs` for ``nqkit index build`` / ``nqkit
retrieve`` (an index directory built and searched by shard jobs that :mod:`nqkit.cluster`
runs). The retriever modules are found by scanning this package (:func:`load_retrievers`),
so a new retriever is one module whose ``RETRIEVERS.add(...)`` call is its registration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from nqkit.registry import Registry
from nqkit.settings import Param

__all__ = ["BUILD", "MEMORY", "PRESETS", "RETRIEVERS", "SEARCH", "Encoder", "Retriever",
           "RetrieverSpec", "ScoreFn", "SearchIndex", "ShardedJobs", "apply_preset",
           "load_retrievers", "missing_extra", "preset_param", "retriever_params"]

ScoreFn = Callable[[int, int], np.ndarray]


class SearchIndex(Protocol):
    """An indexed collection that scores queries against all of its documents."""

    size: int  # number of indexed documents (columns of the score matrix)

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        """Prepare ``queries``; the result gives score rows ``lo..hi-1`` on demand."""
        ...


class Retriever(Protocol):
    """Something that indexes texts; ``settings`` names it in metric signatures."""

    name: str

    def settings(self) -> dict[str, object]:
        """Every setting that changes the scores (for signatures and ``params``)."""
        ...

    def index(self, docs: Sequence[str], contexts: Sequence[str] | None = None) -> SearchIndex:
        """Index ``docs`` (``contexts[i]`` is the text around ``docs[i]``, if any)."""
        ...


@runtime_checkable
class Encoder(Protocol):
    """A dual encoder: queries and documents encoded independently into vectors."""

    name: str  # identifies the model in cache keys and signatures

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 query embeddings."""
        ...

    def encode_docs(self, texts: Sequence[str],
                    contexts: Sequence[str] | None = None) -> np.ndarray:
        """``(len(texts), dim)`` float32 document embeddings (contexts optional)."""
        ...


MEMORY, BUILD, SEARCH = "memory", "build", "search"  # reqa run, index build, retrieve


@dataclass(frozen=True)
class ShardedJobs:
    """What a retriever provides to ``nqkit index build`` and ``nqkit retrieve``.

    The settings travel as the plain dict stored under ``"settings"`` in the index's
    params.json; ``index`` is a loaded :class:`nqkit.retrieval.open_index.OpenIndex`.
    """

    # index build's parsed options -> the settings recorded in params.json
    settings: Callable[[Mapping[str, Any]], dict[str, Any]]
    # (index directory being built, shards, settings, cluster) -> facts for params.json
    build: Callable[..., dict[str, Any]]
    # (index, questions, k, cluster, retrieve's parsed options) -> (hits, peak RSS in MB)
    search: Callable[..., tuple[list[Any], float]]
    # params.json -> the settings that change the scores, for signatures
    signature: Callable[[Mapping[str, Any]], dict[str, object]]
    # the index's settings -> versions of the libraries that change its tokens, scores or
    # embeddings (recorded in params.json; a flavour that uses no library records none)
    versions: Callable[[Mapping[str, Any]], dict[str, str]] = lambda _settings: {}
    # of those, the ones an index must match (only those its settings' versions() name)
    checked_versions: tuple[str, ...] = ()
    # retrieve's parsed options -> the options ``search`` gets, checked before any work
    search_options: Callable[[Mapping[str, Any]], dict[str, Any]] = dict
    # the index's settings -> the modules its build jobs run in (a cluster's workers
    # import them while the passage store is written: Cluster.preload)
    job_modules: Callable[[Mapping[str, Any]], tuple[str, ...]] = lambda _settings: ()


@dataclass(frozen=True)
class RetrieverSpec:
    """One retriever, declared once for both paths (see the module doc)."""

    name: str
    help: str
    params: tuple[Param, ...]  # its own settings
    # which settings each command reads: {MEMORY: names, BUILD: names, SEARCH: names}
    uses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # reqa run: a class with ``from_settings(settings)`` and ``index(docs, contexts)``,
    # called with keyword options from Python (``get_retriever(name, **options)``)
    in_memory: Any = None
    sharded: ShardedJobs | None = None
    parts: tuple[str, ...] = ()  # retrievers it combines (their settings come along)

    def params_for(self, path: str) -> list[Param]:
        """The settings ``path`` reads: the spec's own, then its parts'."""
        names = self.uses.get(path, ())
        own = [p for p in self.params if p.name in names]
        for part in self.parts:
            own.extend(RETRIEVERS.get(part).params_for(path))
        return own


RETRIEVERS: Registry[RetrieverSpec] = Registry("retriever")

# Named sets of defaults. A setting declared with ``default=None`` takes its value from the
# command's preset: ``nqkit reqa run`` reproduces ReQA (BM25 k1 1.5, b 0.75, Ahmad et al.
# 2019, Table 6) and keeps nqkit's hybrid, ``index build``/``retrieve`` Pyserini's BM25
# setting for DPR's NQ runs (k1 0.9, b 0.4; Ma et al. 2021) and its normalized fusion.
PRESETS: dict[str, dict[str, Any]] = {
    "reqa": {"k1": 1.5, "b": 0.75, "fusion": "zscore"},
    "pyserini-nq": {"k1": 0.9, "b": 0.4, "fusion": "norm"},
}


def preset_param(default: str) -> Param:
    """``--preset NAME``: the defaults a command starts from (see :data:`PRESETS`)."""
    table = "; ".join(f"{name}: " + " ".join(f"{k} {v}" for k, v in values.items())
                      for name, values in PRESETS.items())
    return Param("preset", "--preset", f"defaults of the retriever settings ({table}; "
                 f"default {default})", default=default, choices=tuple(PRESETS))


def apply_preset(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with every unset (None) setting its preset names filled in."""
    out = dict(settings)
    for key, value in PRESETS[out["preset"]].items():
        if out.get(key) is None:
            out[key] = value
    return out


def load_retrievers() -> Registry[RetrieverSpec]:
    """Import every module of this package, so each registers its retrievers.

    The modules import their heavy dependencies (bm25s, torch) only when used.
    """
    global _LOADED
    if not _LOADED:
        from nqkit.registry import discover

        discover("nqkit.retrieval")
        _LOADED = True
    return RETRIEVERS


_LOADED = False


def retriever_params(path: str, names: Sequence[str] | None = None) -> list[Param]:
    """The settings ``path`` reads over the registered retrievers (each once, by name)."""
    registry = load_retrievers()
    out: list[Param] = []
    seen: set[str] = set()
    for name in names if names is not None else registry.names():
        for p in registry.get(name).params_for(path):
            if p.name not in seen:
                seen.add(p.name)
                out.append(p)
    return out


def missing_extra(package: str, extra: str) -> ImportError:
    """The error raised when an optional dependency is not installed (one clear CLI line)."""
    from nqkit.errors import MissingDependencyError

    return MissingDependencyError(package, extra)
