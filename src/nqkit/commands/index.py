"""``nqkit index build`` and ``nqkit index verify``: self-describing passage indexes (BM25
or dense) from a corpus. The pipeline is :mod:`nqkit.tasks.retrieve`'s."""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command
from nqkit.settings import format_param
from nqkit.tasks.retrieve import BUILD_PARAMS, VERIFY_PARAMS

ORDER = 100  # where `nqkit --help` lists it


def _add_build_params(p: argparse.ArgumentParser) -> None:
    from nqkit.tasks.retrieve import build_params

    for param in build_params():
        param.add_to(p)


def run_build(args: argparse.Namespace) -> int:
    from nqkit.tasks.retrieve import build

    build(vars(args))
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from nqkit.tasks.retrieve import verify

    verify(args.index, format=args.format)
    return 0


VERIFY = (*VERIFY_PARAMS, format_param("table", "json", help=""))

COMMANDS = (Command(
    "build", "build a BM25 or dense index directory from a DPR passage corpus",
    "Build an index directory (params.json, passage store, shards) from a DPR passage file "
    "id<TAB>text<TAB>title (.tsv or .tsv.gz). BM25: bm25s, k1 0.9, b 0.4 over title and "
    "text (Pyserini's NQ setting, the pyserini-nq preset) with global statistics across "
    "shards. Dense: a sentence-transformers model, embeddings as memory-mapped shards, exact "
    "inner-product search or a faiss index (--ann).",
    run_build, params=BUILD_PARAMS, group="index",
    populate=_add_build_params),  # the retrievers load only when `index build` is used
    Command("verify", "re-hash every file of an index directory and say which differ",
            "Re-hash every file of an index directory (and of the model directory a dense "
            "index reads) and compare each with the size and SHA-256 recorded at build. "
            "Prints one row per file and the index digest; exit 2 with one line naming the "
            "files that differ.", run_verify, params=VERIFY, group="index"))
