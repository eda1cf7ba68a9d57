"""Scoring and writing a retrieval run, side by side in one run.

A BM25 index over the 3,349 real passages (benchmarks/make_passages.py: the DPR
bi-encoder sample's passages and the NQ-open oracle's gold passages), top-100 for the
3,610 NQ-open dev questions (DPR's nq-test.qa.tsv); under ``bench-data/eval-retrieval/``
(gitignored). Timed, each ``--repeat`` times (default 3), interleaved, medians:

1. commands, each in a fresh process (wall time, peak RSS from ``wait4``):
   ``nqkit retrieve --topk 100 -o run.json --eval`` (search, results, score) against
   ``nqkit eval retrieval --predictions run.json`` (read and score the same results);
2. writers, in one process on the same search result: the DPR results file
   (``write_dpr_results``, has-answer flags included) against the TREC run
   (``write_trec_blocks``, as ``retrieve --trec`` writes it).

``--baseline-src DIR`` (the ``src`` of another checkout, e.g. a worktree of main) runs
the same commands and writers with that tree as well, interleaved with this one's, and
checks that both write the same bytes and print the same recall.

Usage (from the repository root):

    python benchmarks/bench_eval_retrieval.py [--repeat 3] [--baseline-src ../main/src]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from make_passages import SHARED  # noqa: E402

QUESTIONS = SHARED / "data" / "dpr" / "nq-test.qa.tsv"

# Times the two writers on one search result, in the process of the given tree. The
# command module's `_trec_blocks` is what `retrieve --trec` feeds write_trec_blocks.
WRITERS = """
import json, sys, time
from nqkit.cluster import open_cluster
from nqkit.tasks.retrieve import trec_blocks as _trec_blocks
from nqkit.formats.trec import write_trec_blocks
from nqkit.retrieval.open_index import load_index
from nqkit.retrieval.questions import read_questions
from nqkit.text.dpr_tokenize import simple_tokenize
try:
    from nqkit.retrieval.base import apply_preset
    from nqkit.retrieval.open_run import run_retrieval, write_dpr_results
    search = (apply_preset({"preset": "pyserini-nq", "fusion": None, "alpha": 1.0,
                            "depth": 1000}),)
except ImportError:  # a checkout from before the retrievers were declared once
    from nqkit.retrieval.run import run_retrieval, write_dpr_results
    search = ()
index, questions, out = load_index(sys.argv[1]), read_questions(sys.argv[2]), sys.argv[3]
with open_cluster("none") as cluster:
    run = run_retrieval([index], questions, 100, cluster, *search)
simple_tokenize("x")  # the tokenizer's pattern is built once per process, not timed
t0 = time.perf_counter()
write_dpr_results(out + ".json", questions, run, index)
t1 = time.perf_counter()
write_trec_blocks(out + ".trec", _trec_blocks(questions, run, index.store), tag="nqkit-bm25")
t2 = time.perf_counter()
print(json.dumps({"results": t1 - t0, "trec": t2 - t1}))
"""


def env(src: Path) -> dict[str, str]:
    e = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
         "PYTHONPATH": str(src)}
    return e


def run_rss(cmd: list[str], src: Path) -> tuple[float, float, str, str]:
    """Wall seconds, peak RSS (MB) of the child, its stdout and stderr."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env(src), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert p.stdout is not None and p.stderr is not None
    out = p.stdout.read()  # small outputs: a JSON result, a few stderr lines
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t0
    if status:
        sys.exit(f"failed ({status}): {' '.join(cmd)}\n{err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, out, err


def digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def nqkit(*args: str) -> list[str]:
    return [sys.executable, "-m", "nqkit", *args]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-src", type=Path, help="src of another checkout to compare")
    ap.add_argument("--out", type=Path, default=ROOT / "bench-data" / "eval-retrieval")
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    trees = {"this tree": ROOT / "src"}
    if args.baseline_src:
        trees = {"baseline": args.baseline_src.resolve(), **trees}
    here = trees["this tree"]

    corpus, index = out / "real.tsv", out / "bm25"
    if not corpus.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_passages.py"), "-o",
                        str(corpus)], env=env(here), check=True)
    if not (index / "params.json").exists():
        shutil.rmtree(index, ignore_errors=True)
        run_rss(nqkit("index", "build", "--cluster", "none", "--corpus", str(corpus),
                      "--retriever", "bm25", "-o", str(index)), here)
    run_json = out / "run.json"
    run_rss(nqkit("retrieve", "--cluster", "none", "--index", str(index), "--questions",
                  str(QUESTIONS), "--topk", "100", "-o", str(run_json)), here)
    mb = run_json.stat().st_size / 2**20

    retrieve = ["retrieve", "--cluster", "none", "--index", str(index), "--questions",
                str(QUESTIONS), "--topk", "100", "--eval", "--format", "json"]
    evaluate = ["eval", "retrieval", "--predictions", str(run_json), "--format", "json"]
    times: dict[tuple[str, str], list[float]] = {}
    rss: dict[tuple[str, str], list[float]] = {}
    recalls: dict[tuple[str, str], object] = {}
    outputs: dict[tuple[str, str], str] = {}  # digests: a child forked from a parent
    # holding the files would count the parent's pages in its peak RSS
    for _ in range(args.repeat):
        for tree, src in trees.items():
            tag = tree.replace(" ", "-")
            for name, argv in (("retrieve --eval", [*retrieve, "-o",
                                                    str(out / f"{tag}.json")]),
                               ("eval retrieval", evaluate)):
                secs, peak, stdout, _err = run_rss(nqkit(*argv), src)
                times.setdefault((tree, name), []).append(secs)
                rss.setdefault((tree, name), []).append(peak)
                recalls[(tree, name)] = json.loads(stdout)["recall"]
            secs, _, stdout, _err = run_rss([sys.executable, "-c", WRITERS, str(index),
                                             str(QUESTIONS), str(out / f"{tag}-w")], src)
            for key, value in json.loads(stdout).items():
                times.setdefault((tree, f"write {key}"), []).append(value)
            outputs[(tree, "results")] = digest(out / f"{tag}-w.json")
            outputs[(tree, "trec")] = digest(out / f"{tag}-w.trec")

    # the same numbers and bytes everywhere, or the timings mean nothing
    assert len({json.dumps(v, sort_keys=True) for v in recalls.values()}) == 1, recalls
    for kind in ("results", "trec"):
        assert len({v for (_, k), v in outputs.items() if k == kind}) == 1, kind
    assert outputs[("this tree", "results")] == digest(run_json)

    def med(tree: str, name: str) -> float:
        return statistics.median(times[(tree, name)])

    passages = json.loads((index / "params.json").read_text())["corpus"]["passages"]
    print(f"\n## 3,610 questions x top-100 over {passages:,} real passages "
          f"(results file {mb:,.0f} MB), medians of {args.repeat}\n")
    print("| tree | retrieve --eval s | eval retrieval s | eval / retrieve | "
          "peak MB (retrieve / eval) | write results s | write TREC s | results / TREC |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for tree in trees:
        r, e = med(tree, "retrieve --eval"), med(tree, "eval retrieval")
        wr, wt = med(tree, "write results"), med(tree, "write trec")
        print(f"| {tree} | {r:.2f} | {e:.2f} | {e / r:.2f}x | "
              f"{max(rss[(tree, 'retrieve --eval')]):,.0f} / "
              f"{max(rss[(tree, 'eval retrieval')]):,.0f} | {wr:.2f} | {wt:.2f} | "
              f"{wr / wt:.2f}x |")
    if "baseline" in trees:
        print("\nthis tree against the baseline: " + ", ".join(
            f"{name} {med('baseline', name) / med('this tree', name):.1f}x faster"
            for name in ("retrieve --eval", "eval retrieval", "write results", "write trec")))
    print("\nsame recall from every command and tree, same results and TREC bytes from "
          "every tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
