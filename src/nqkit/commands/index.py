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
    size = sum(e["bytes"] for e in params["files"].values())
    if args.format == "json":
        print(json.dumps({"index": args.output, "retriever": args.retriever,
                          "passages": params["corpus"]["passages"],
                          "fingerprint": params["corpus"]["fingerprint"],
                          "digest": params["digest"],
                          "shards": len(params["shards"]), "bytes": size,
                          "seconds": round(seconds, 2)}))
        return 0
    rows = [("retriever", args.retriever), ("passages", f"{params['corpus']['passages']:,}"),
            ("shards", len(params["shards"])),
            ("corpus fingerprint", params["corpus"]["fingerprint"][:12]),
            ("index digest", params["digest"][:12]),
            ("settings", " ".join(f"{k}={v}" for k, v in params["settings"].items()
                                  if k not in ("model", "model_fingerprint"))),
            ("size on disk", f"{size / 2**20:,.1f} MB")]
    print(format_table(["item", "value"], rows, title=f"index written to {args.output}"))
    where = "" if args.cluster == "none" else f", {workers} worker{'s' * (workers != 1)}"
    say(f"built in {seconds:.1f} s (cluster {args.cluster}{where})")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    import json

    from nqkit.errors import InputError, examples
    from nqkit.report import format_table, say
    from nqkit.retrieval.open_index import verify_index

    params, checks = verify_index(args.index, full=True)
    bad = [c for c in checks if not c.ok]
    if args.format == "json":
        print(json.dumps({"index": args.index, "digest": params["digest"],
                          "ok": not bad, "files": [
                              {"path": str(c.path), "bytes": c.bytes, "status": c.status}
                              for c in checks]}))
    else:
        rows = [(str(c.path), f"{c.bytes:,}", c.status if c.ok else
                 {"missing": "MISSING", "size": f"SIZE {c.found}", "sha256":
                  f"DIFFERS {c.found[:12]}"}[c.status]) for c in checks]
        print(format_table(["file", "bytes", "status"], rows,
                           title=f"index {args.index} (digest {params['digest'][:12]})"))
    if bad:
        from pathlib import Path

        found = examples([c.problem(Path(args.index)) for c in bad], width=None)
        raise InputError(args.index, f"{len(bad)} of {len(checks)} files differ from the "
                         f"build ({found})", "rebuild it with `nqkit index build`, or copy it "
                         "again from its source")
    say(f"all {len(checks)} files verified: index digest {params['digest']}")
    return 0


VERIFY_PARAMS = (Param("index", "index", "index directory made by `nqkit index build`",
                       metavar="DIR"), format_param("table", "json", help=""))

COMMANDS = (Command(
    "build", "build a BM25 or dense index directory from a DPR passage corpus",
    "Build an index directory (params.json, passage store, shards) from a DPR passage file "
    "id<TAB>text<TAB>title (.tsv or .tsv.gz). BM25: bm25s, k1 0.9, b 0.4 over title and "
    "text (Pyserini's NQ setting, the pyserini-nq preset) with global statistics across "
    "shards. Dense: a sentence-transformers model, embeddings as memory-mapped shards, exact "
    "inner-product search or a faiss index (--ann).",
    run_build, params=(CORPUS,), group="index",
    populate=_add_build_params),  # the retrievers load only when `index build` is used
    Command("verify", "re-hash every file of an index directory and say which differ",
            "Re-hash every file of an index directory (and of the model directory a dense "
            "index reads) and compare each with the size and SHA-256 recorded at build. "
            "Prints one row per file and the index digest; exit 2 with one line naming the "
            "files that differ.", run_verify, params=VERIFY_PARAMS, group="index"))
