"""Reading a DPR passage corpus, side by side in one run.

Two corpora of ``--size`` passages (default 300,000, benchmarks/make_passages.py's
distinct corpus, written under ``bench-data/corpus-read/``, gitignored):

* ``quotes``: as csv.writer writes it (psgs_w100.tsv's convention): a text holding a quote
  is quoted, its quotes doubled (about a fifth of the real passages hold one);
* ``no-quotes``: the same with every quote made an apostrophe, so no line holds one (the
  fast path alone).

Timed for each, every reader in a fresh subprocess, ``--repeat`` times interleaved, the
median reported (one pass over the whole file, building every passage):

1. ``read_passages`` of this checkout;
2. ``read_passages`` of ``--baseline-src`` (another checkout's ``src``, e.g. the commit
   before a change: ``git archive HEAD src | tar -x -C /tmp/before``), when given;
3. DPR's loader: ``csv.reader(open(path), delimiter="\\t")``, keeping the rows.

Usage: python benchmarks/bench_corpus_read.py [--size 300000] [--repeat 5]
       [--baseline-src /tmp/before/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from make_passages import distinct_passages  # noqa: E402
from nqkit.retrieval.corpus import Passage, write_passages  # noqa: E402

NQKIT = """
import sys, time
t0 = time.perf_counter()
from nqkit.retrieval.corpus import read_passages
n = sum(1 for _ in read_passages(sys.argv[1]))
print(n, time.perf_counter() - t0)
"""

DPR = """
import csv, sys, time
t0 = time.perf_counter()
with open(sys.argv[1]) as f:
    rows = [row for row in csv.reader(f, delimiter="\\t") if row[0] != "id"]
print(len(rows), time.perf_counter() - t0)
"""


def timed(script: str, corpus: Path, src: Path | None) -> tuple[int, float]:
    env = {**os.environ}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    out = subprocess.run([sys.executable, "-c", script, str(corpus)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), float(out[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--baseline-src", type=Path, help="the src directory to compare with")
    ap.add_argument("--out", type=Path, default=ROOT / "bench-data" / "corpus-read")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    quotes = args.out / f"quotes-{args.size}.tsv"
    plain = args.out / f"no-quotes-{args.size}.tsv"
    if not quotes.exists():
        write_passages(quotes, distinct_passages(args.size))
    if not plain.exists():
        write_passages(plain, (Passage(p.id, p.text.replace('"', "'"),
                                       p.title.replace('"', "'"))
                               for p in distinct_passages(args.size)))
    readers: list[tuple[str, str, Path | None]] = [("nqkit (this checkout)", NQKIT, ROOT / "src")]
    if args.baseline_src:
        readers.append(("nqkit (baseline)", NQKIT, args.baseline_src))
    readers.append(("csv.reader, DPR's loader", DPR, None))
    print(f"## Reading {args.size:,} passages, median of {args.repeat}\n")
    for corpus in (plain, quotes):
        text = corpus.read_text(encoding="utf-8")
        quoted = sum(1 for line in text.splitlines() if '"' in line)
        times: dict[str, list[float]] = {label: [] for label, _, _ in readers}
        for _ in range(args.repeat):
            for label, script, src in readers:
                n, secs = timed(script, corpus, src)
                assert n == args.size, (label, n)
                times[label].append(secs)
        med = {label: statistics.median(t) for label, t in times.items()}
        ref = med["nqkit (this checkout)"]
        print(f"### {corpus.name}: {corpus.stat().st_size / 2**20:,.0f} MB, {quoted:,} lines "
              "with a quote\n")
        print("| reader | seconds | passages/s | time / this checkout's |")
        print("|---|---:|---:|---:|")
        for label, secs in med.items():
            print(f"| {label} | {secs:.2f} | {args.size / secs:,.0f} | {secs / ref:.2f} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
