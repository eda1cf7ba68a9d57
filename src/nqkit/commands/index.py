"""``nqkit index build``: a self-describing passage index (BM25 or dense) from a corpus."""

from __future__ import annotations

import argparse

from nqkit.settings import positive_int

GROUP = "index"
ORDER = 100  # where `nqkit --help` lists it

CLUSTER_HELP = ("where shard jobs run: none (this process), local (a Dask LocalCluster of "
                "worker processes, one per core or --workers), or a scheduler address "
                "tcp://HOST:8786 (default: local)")


def add_cluster_options(p: argparse.ArgumentParser) -> None:
    """--cluster and --workers, shared by `index build` and `retrieve`."""
    p.add_argument("--cluster", default="local", metavar="none|local|tcp://HOST:PORT",
                   help=CLUSTER_HELP)
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="--cluster local: number of worker processes (default: one per core)")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    b = subparsers.add_parser(
        "build", help="build a BM25 or dense index directory from a DPR passage corpus",
        description="Build an index directory (params.json, passage store, shards) from a "
        "DPR passage file id<TAB>text<TAB>title (.tsv or .tsv.gz). BM25: bm25s, k1 0.9, "
        "b 0.4 over title and text (Pyserini's NQ setting, the pyserini-nq preset) with "
        "global statistics across shards. Dense: a sentence-transformers model, embeddings "
        "as memory-mapped shards, exact inner-product search or a faiss index (--ann).",
        populate=_add_build_params)  # the retrievers load only when `index build` is used
    b.set_defaults(func=run_build)


def _add_build_params(b: argparse.ArgumentParser) -> None:
    """index build's own options, then the build settings every retriever declares."""
    from nqkit.retrieval.base import BUILD, preset_param, retriever_params
    from nqkit.retrieval.open_index import sharded_retrievers

    b.add_argument("--corpus", required=True, metavar="FILE",
                   help="DPR passage file (psgs_w100.tsv or .tsv.gz)")
    b.add_argument("--retriever", choices=tuple(sharded_retrievers()), required=True)
    b.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="new index directory (must not exist or be empty)")
    add_cluster_options(b)
    b.add_argument("--shard-size", type=positive_int, default=131072, metavar="N",
                   help="passages per shard (default 131072; a multiple of 64 x the batch "
                   "size keeps dense embeddings independent of it)")
    for param in (preset_param("pyserini-nq"), *retriever_params(BUILD)):
        param.add_to(b)
    b.add_argument("--format", choices=("table", "json"), default="table")


def run_build(args: argparse.Namespace) -> int:
    import json
    import sys
    import time

    from nqkit.cluster import open_cluster, validate_spec
    from nqkit.io import expand_paths
    from nqkit.report import format_table
    from nqkit.retrieval.base import apply_preset
    from nqkit.retrieval.open_index import build_index, sharded_jobs

    validate_spec(args.cluster)
    expand_paths(args.corpus, what="passage corpus")
    settings = sharded_jobs(args.retriever).settings(apply_preset(vars(args)))
    t0 = time.perf_counter()
    with open_cluster(args.cluster, workers=args.workers) as cluster:
        params = build_index(args.corpus, args.output, args.retriever, cluster,
                             shard_size=args.shard_size, settings=settings)
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
    print(f"{seconds:.1f} s ({args.cluster})", file=sys.stderr)
    return 0
