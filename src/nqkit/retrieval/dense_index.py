"""Dense passage index: sentence-transformers embeddings in memory-mapped shards.

Encoding (one job per shard, run by :mod:`nqkit.cluster`): each job loads the model once
per worker process, encodes its passages as ``title + " " + text`` (L2-normalized, so the
inner product is the cosine the MiniLM family was trained with) and writes
``dense/emb-NNNNN.npy`` (float32, ``(passages, dim)``) through a memory map, a chunk at a
time. Chunks start at global multiples of ``batch_size * 64`` passages: a passage is
always encoded in the same company (sentence-transformers sorts a call's texts by length
and pads each batch, which changes the last bits of an embedding), so the embeddings do
not depend on the number of workers, nor on the shard size when it is a multiple of the
chunk.

Search is exact by default: each shard job memory-maps its embeddings and computes
inner products a block of passages at a time with float64 accumulation rounded once to
float32 (:func:`nqkit.metrics.ranking.dot_scores`, the same on every BLAS kernel), keeps
the top k of every question by score and then passage order, and the shard lists are
merged (:mod:`nqkit.retrieval.topk`). With ``ann="hnsw"`` or ``"ivfpq"`` a faiss index is
built after encoding (HNSW: 32 links, efConstruction 200, efSearch 128; IVF-PQ: ``4 sqrt(N)``
lists, 8-dimensional sub-quantizers, 8 bits, 32 lists probed) and searched in one
process; faiss's scores are approximate (IVF-PQ: compressed vectors) and its lists are
re-ordered by score and passage order.

``device``: ``cpu``, ``cuda`` (float16 weights) or ``auto`` (CUDA when torch sees a GPU;
:func:`nqkit.retrieval.dense.resolve_device`).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nqkit.arrays import distinct
from nqkit.cluster import Cluster, advance, peak_rss_mb
from nqkit.errors import InputError
from nqkit.metrics.ranking import dot_scores
from nqkit.retrieval.base import missing_extra
from nqkit.retrieval.passage_store import Shard, iter_shard
from nqkit.retrieval.topk import Hits, merge_shard_results, merge_topk, pack_hits, topk_rows

__all__ = ["ANN_METHODS", "DenseSettings", "build_dense", "dense_versions", "encode_queries",
           "search_dense"]

SUBDIR = "dense"
ANN_METHODS = ("hnsw", "ivfpq")
CHUNK_BATCHES = 64  # a chunk of passages given to one encode call = batch_size * this
BLOCK = 16384  # passages scored at a time per shard (bounds the float64 temporaries)
QUERY_CHUNK = 512


@dataclass(frozen=True, slots=True)
class DenseSettings:
    """Every setting that changes dense scores (recorded in params.json and signatures)."""

    model: str  # the model directory
    model_name: str  # its name in signatures
    model_fingerprint: str  # file names and sizes of the model directory
    batch_size: int = 64
    normalize: bool = True
    doc_text: str = "title+text"
    device: str = "cpu"  # where the passages were encoded (cpu, or cuda in float16)
    ann: str = "exact"  # exact, hnsw or ivfpq

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def dense_versions() -> dict[str, str]:
    """Versions that change embeddings (checked when an index is loaded)."""
    from importlib.metadata import version

    try:
        return {"torch": version("torch"),
                "sentence-transformers": version("sentence-transformers")}
    except Exception as e:  # pragma: no cover - depends on the installation
        raise missing_extra("sentence-transformers", "dense") from e


_ENCODERS: dict[tuple[str, str, int], Any] = {}  # one model per worker process


def _encoder(settings: DenseSettings, device: str) -> Any:
    from nqkit.retrieval.encoders import SentenceTransformerEncoder

    key = (settings.model, device, settings.batch_size)
    if key not in _ENCODERS:
        _ENCODERS[key] = SentenceTransformerEncoder(
            settings.model, batch_size=settings.batch_size, normalize=settings.normalize,
            device=device, show_progress=False)
    return _ENCODERS[key]


def model_settings(model: str | None, batch_size: int, device: str, ann: str) -> DenseSettings:
    """Settings for a model directory (default: all-MiniLM-L6-v2 from its package)."""
    from nqkit.retrieval.encoders import SentenceTransformerEncoder, default_model_path

    path = model if model is not None else default_model_path()
    if not os.path.isdir(path):
        raise InputError(f"--model {path}", "is not a directory",
                         "give a local sentence-transformers model directory")
    enc = SentenceTransformerEncoder(path, batch_size=batch_size, show_progress=False)
    name = "all-MiniLM-L6-v2" if model is None else Path(path).name
    return DenseSettings(str(Path(path).resolve()), name, enc.fingerprint(), batch_size,
                         True, "title+text", device, ann)


def _emb_path(root: Path, shard: Shard) -> Path:
    return root / SUBDIR / f"emb-{shard.name}.npy"


@dataclass(frozen=True, slots=True)
class _EncodeJob:
    root: str
    shard: Shard
    settings: DenseSettings


def _encode_job(job: _EncodeJob) -> dict[str, Any]:
    root = Path(job.root)
    enc = _encoder(job.settings, job.settings.device)
    chunk = job.settings.batch_size * CHUNK_BATCHES
    out: Any = None
    row = job.shard.start
    texts: list[str] = []

    def flush() -> None:
        nonlocal out
        emb = np.asarray(enc.encode_docs(texts), dtype=np.float32)
        if out is None:
            out = np.lib.format.open_memmap(_emb_path(root, job.shard), mode="w+",
                                            dtype=np.float32,
                                            shape=(job.shard.size, emb.shape[1]))
        lo = row - len(texts) - job.shard.start
        out[lo:lo + len(texts)] = emb
        # a shard of the default size takes minutes on a CPU: counted by passages encoded
        advance(len(texts))
        texts.clear()

    for p in iter_shard(root, job.shard):
        texts.append(f"{p.title} {p.text}")
        row += 1
        if row % chunk == 0:  # chunk boundaries at global multiples: see the module doc
            flush()
    if texts:
        flush()
    dim = int(out.shape[1])
    out.flush()
    del out
    return {"dim": dim, "peak_rss_mb": peak_rss_mb()}


def _import_faiss() -> Any:
    try:
        import faiss
    except ImportError as e:
        raise missing_extra("faiss-cpu", "ann") from e
    return faiss


def _ann_params(n: int, dim: int) -> dict[str, int]:
    nlist = max(1, min(65536, int(4 * math.sqrt(n)), n // 39))
    m = next(m for m in range(max(1, dim // 8), 0, -1) if dim % m == 0)
    nbits = max(1, min(8, int(math.log2(max(2, n)))))  # PQ training needs 2**nbits vectors
    return {"nlist": nlist, "m": m, "nbits": nbits, "nprobe": min(nlist, 32),
            "hnsw_m": 32, "ef_construction": 200, "ef_search": 128}


def _build_ann(root: Path, shards: tuple[Shard, ...], n: int, dim: int, ann: str
               ) -> dict[str, int]:
    faiss = _import_faiss()
    p = _ann_params(n, dim)
    if ann == "hnsw":
        index = faiss.IndexHNSWFlat(dim, p["hnsw_m"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = p["ef_construction"]
    else:
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFPQ(quantizer, dim, p["nlist"], p["m"], p["nbits"],
                                 faiss.METRIC_INNER_PRODUCT)
        # train on evenly spaced passages (deterministic), 64 per list or at least 10,000
        want = min(n, max(p["nlist"] * 64, 10_000))
        rows = distinct(np.linspace(0, n - 1, want).astype(np.int64))
        sample = np.concatenate([np.asarray(np.load(_emb_path(root, s), mmap_mode="r")
                                            [rows[(rows >= s.start) & (rows < s.stop)]
                                             - s.start]) for s in shards])
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
    from nqkit.report import progress_bar

    # HNSW links every vector as it is added: hours for tens of millions of passages
    with progress_bar(desc=f"building the {ann} index", total=n, unit="passage") as bar:
        for s in shards:
            emb = np.load(_emb_path(root, s), mmap_mode="r")
            for lo in range(0, s.size, BLOCK * 4):
                block = np.ascontiguousarray(emb[lo:lo + BLOCK * 4], dtype=np.float32)
                index.add(block)
                bar.update(block.shape[0])
    faiss.write_index(index, str(root / SUBDIR / f"{ann}.faiss"))
    return p


def build_dense(root: Path, shards: tuple[Shard, ...], settings: DenseSettings,
                cluster: Cluster) -> dict[str, Any]:
    """Encode every shard; build the faiss index if asked; returns facts for params.json.

    The encoding is shown passage by passage (on stderr), wherever the jobs run.
    """
    (root / SUBDIR).mkdir(parents=True, exist_ok=True)
    results = cluster.map(_encode_job, [_EncodeJob(str(root), s, settings) for s in shards],
                          desc="encoding passages", sizes=[s.size for s in shards],
                          unit="passage")
    dim = results[0]["dim"]
    facts: dict[str, Any] = {"dim": dim,
                             "peak_rss_mb": max(r["peak_rss_mb"] for r in results)}
    if settings.ann != "exact":
        n = shards[-1].stop
        facts["ann_params"] = _build_ann(root, shards, n, dim, settings.ann)
    return facts


def encode_queries(settings: DenseSettings, questions: list[str], device: str) -> np.ndarray:
    """Question embeddings with the index's model on ``device``.

    The model directory recorded in params.json must still hold the same files.
    """
    from nqkit.retrieval.encoders import SentenceTransformerEncoder

    if not os.path.isdir(settings.model):
        raise InputError(settings.model, "the index's model directory is gone",
                         "restore it, or rebuild the index with --model")
    enc = SentenceTransformerEncoder(settings.model, show_progress=False)
    fp = enc.fingerprint()
    # an index built before fingerprints hashed contents: its model files were checked
    # by content when it was opened (params.json's model_files)
    if fp != settings.model_fingerprint and \
            enc.legacy_fingerprint() != settings.model_fingerprint:
        raise InputError(settings.model, f"the model files changed since the index was built "
                         f"({fp} vs {settings.model_fingerprint})",
                         "rebuild the index with `nqkit index build`")
    emb = _encoder(settings, device).encode_queries(questions, progress=True)
    return np.asarray(emb, dtype=np.float32)


@dataclass(frozen=True, slots=True)
class _QueryJob:
    root: str
    shard: Shard
    queries: np.ndarray
    k: int


def _query_job(job: _QueryJob) -> dict[str, Any]:
    emb = np.load(_emb_path(Path(job.root), job.shard), mmap_mode="r")
    nq = job.queries.shape[0]
    best: list[list[Hits]] = [[] for _ in range(nq)]
    for lo in range(0, job.shard.size, BLOCK):
        block = np.asarray(emb[lo:lo + BLOCK])
        for qlo in range(0, nq, QUERY_CHUNK):
            scores = dot_scores(job.queries[qlo:qlo + QUERY_CHUNK], block)
            for i, hits in enumerate(topk_rows(scores, job.k, offset=job.shard.start + lo)):
                best[qlo + i].append(hits)
        # keep the per-question lists short as blocks go by
        best = [[merge_topk(b, job.k)] for b in best]
    return {"hits": pack_hits([b[0] for b in best]), "peak_rss_mb": peak_rss_mb()}


def search_dense(root: Path, shards: tuple[Shard, ...], settings: DenseSettings,
                 queries: np.ndarray, k: int, cluster: Cluster) -> tuple[list[Hits], float]:
    """Top-k hits of every query embedding (exact, sharded; or the faiss index)."""
    if settings.ann != "exact":
        return _search_ann(root, settings.ann, queries, k), peak_rss_mb()
    results = cluster.map(_query_job, [_QueryJob(str(root), s, queries, k) for s in shards],
                          desc="dense search")
    return merge_shard_results(results, len(queries), k)


def _search_ann(root: Path, ann: str, queries: np.ndarray, k: int) -> list[Hits]:
    faiss = _import_faiss()
    index = faiss.read_index(str(root / SUBDIR / f"{ann}.faiss"))
    p = _ann_params(index.ntotal, index.d)
    if ann == "hnsw":
        index.hnsw.efSearch = max(p["ef_search"], k)
    else:
        index.nprobe = p["nprobe"]
    scores, labels = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    out: list[Hits] = []
    for s, lab in zip(scores, labels, strict=True):
        keep = lab >= 0
        out.append(merge_topk([(lab[keep].astype(np.int64), s[keep].astype(np.float32))], k))
    return out
