"""Benchmark: one ``nqkit index build`` command with two or more source trees, interleaved.

A change to a fixed cost (a cluster's start, an import) is smaller than the noise
between two runs of one benchmark, so each tree's build runs once per round, the trees
in turn, for ``--rounds`` rounds, and the table gives each tree's median, spread and
ratio to the first tree's median. Every build writes a fresh index (removed before the
next one) and its wall time is the command's, from start to exit, in a fresh process.

    git archive BASE src | tar -x -C bench-data/base
    python benchmarks/bench_build_ab.py --corpus C.tsv --src bench-data/base/src \\
        --src src --rounds 6 -- --retriever bm25 --bm25-method lucene-exact \\
        --cluster local --workers 2

The arguments after ``--`` are the build's (``--corpus`` and ``-o`` are added).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def build(src: Path, corpus: Path, out: Path, args: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(src.resolve()))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nqkit", "index", "build", "--passages",
                    str(corpus), "-o", str(out), *args], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--src", type=Path, action="append", required=True,
                    help="a source tree (the directory holding nqkit/); give two or more")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("build", nargs="*", help="the build's own arguments (after --)")
    a = ap.parse_args()
    if len(a.src) < 2:
        ap.error("give --src at least twice")
    times: dict[Path, list[float]] = {s: [] for s in a.src}
    with tempfile.TemporaryDirectory(prefix="nqkit-ab-") as tmp:
        out = Path(tmp) / "ix"
        for r in range(a.rounds):
            for src in a.src:
                times[src].append(build(src, a.corpus, out, a.build))
                shutil.rmtree(out)
            print(f"round {r + 1}: " + ", ".join(f"{times[s][-1]:.2f}" for s in a.src),
                  file=sys.stderr)
    first = statistics.median(times[a.src[0]])
    print(f"`nqkit index build {' '.join(a.build)}` on {a.corpus.name}, "
          f"{a.rounds} interleaved rounds\n")
    print("| source tree | median s | min-max s | x first |")
    print("|---|---:|---:|---:|")
    for src, ts in times.items():
        med = statistics.median(ts)
        print(f"| {src} | {med:.2f} | {min(ts):.2f}-{max(ts):.2f} | {med / first:.2f} |")


if __name__ == "__main__":
    main()
