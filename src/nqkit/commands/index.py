"""``nqkit index build``: a self-describing passage index (BM25 or dense) from a corpus."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command
from nqkit.settings import Param, format_param, output_param, positive_int

ORDER = 100  # where `nqkit --help` lists it

# where shard jobs run: shared by `index build` and `retrieve`
CLUSTER_PARAMS = (
    Param("cluster", "--cluster", "where shard jobs run: none (this process), local (a Dask "
          "LocalCluster of worker processes, one per core or --workers), or a scheduler "
          "address tcp://HOST:8786 (default: local)", default="local",
          metavar="none|local|tcp://HOST:PORT"),
    Param("workers", "--workers", "--cluster local: number of worker processes (default: "
          "one per core)", type=positive_int, metavar="N"),
)

CORPUS = Param("corpus", "--corpus", "DPR passage file (psgs_w100.tsv or .tsv.gz)",
               required=True, metavar="FILE")
OUTPUT = output_param("new index directory (must not exist or be empty)", metavar="DIR")
SHARD_SIZE = Param("shard_size", "--shard-size", "passages per shard (default 131072; a "
                   "multiple of 64 x the batch size keeps dense embeddings independent of "
                   "it)", default=131072, type=positive_int, metavar="N")


def _add_build_params(b: argparse.ArgumentParser) -> None:
    """index build's options after --corpus: --retriever (its choices from the registry),
    its own, then the build settings every retriever declares; --format last."""
    from nqkit.retrieval.base import BUILD, preset_param, retriever_params
    from nqkit.retrieval.open_index import sharded_retrievers

    retriever = Param("retriever", "--retriever", "", choices=tuple(sharded_retrievers()),
                      required=True)
    for param in (retriever, OUTPUT, *CLUSTER_PARAMS, SHARD_SIZE, preset_param("pyserini-nq"),
                  *retriever_params(BUILD), format_param("table", "json", help="")):
        param.add_to(b)


def run_build(args: argparse.Namespace) -> int:
    import json
    import time

    from nqkit.cluster import open_cluster, validate_spec
    from nqkit.io import expand_paths
    from nqkit.report import format_table, say
    from nqkit.retrieval.base import apply_preset
    from nqkit.retrieval.open_index import build_index, sharded_jobs

    validate_spec(args.cluster)
    expand_paths(args.corpus, what="passage corpus")
    settings = sharded_jobs(args.retriever).settings(apply_preset(vars(args)))
    t0 = time.perf_counter()
    with open_cluster(args.cluster, workers=args.workers) as cluster:
        params = build_index(args.corpus, args.output, args.retriever, cluster,
                             shard_size=args.shard_size, settings=settings)
        workers = cluster.workers
    seconds = time.perf_counter() - t0
    size = sum(params["files"].values())
    if args.format == "json":
        print(json.dumps({"index": args.output, "retriever": args.retriever,
                          "passages": params["corpus"]["passages"],
                          "fingerprint": params["corpus"]["fingerprint"],
                          "shards": len(params["shards"]), "bytes": size,
                          "seconds": round(seconds, 2)}))
        return 0
    rows = [("retriever", args.retriever), ("passages", f"{params['corpus']['passages']:,}"),
            ("shards", len(params["shards"])),
            ("corpus fingerprint", params["corpus"]["fingerprint"][:12]),
            ("settings", " ".join(f"{k}={v}" for k, v in params["settings"].items()
                                  if k not in ("model", "model_fingerprint"))),
            ("size on disk", f"{size / 2**20:,.1f} MB")]
    print(format_table(["item", "value"], rows, title=f"index written to {args.output}"))
    where = "" if args.cluster == "none" else f", {workers} worker{'s' * (workers != 1)}"
    say(f"built in {seconds:.1f} s (cluster {args.cluster}{where})")
    return 0


COMMANDS = (Command(
    "build", "build a BM25 or dense index directory from a DPR passage corpus",
    "Build an index directory (params.json, passage store, shards) from a DPR passage file "
    "id<TAB>text<TAB>title (.tsv or .tsv.gz). BM25: bm25s, k1 0.9, b 0.4 over title and "
    "text (Pyserini's NQ setting, the pyserini-nq preset) with global statistics across "
    "shards. Dense: a sentence-transformers model, embeddings as memory-mapped shards, exact "
    "inner-product search or a faiss index (--ann).",
    run_build, params=(CORPUS,), group="index",
    populate=_add_build_params),)  # the retrievers load only when `index build` is used
