"""What verifying an index by content costs: first, later and ``--verify`` runs, side by side.

The corpus is ``--size`` passages with distinct texts and a growing vocabulary
(``benchmarks/make_passages.py``), indexed once with BM25 (``--cluster none``). Then, each
command in a fresh subprocess with a fresh ``NQKIT_HOME`` for the "first" rows (no record
of verified file states: every large file is hashed) and the same home for the "later"
rows (the record says the files are unchanged: only the files up to 1 MiB are hashed):

* ``nqkit retrieve --trec`` for the 3,610 NQ-open dev questions at depth 100, first run;
* the same, later run;
* the same with ``--verify`` (every file hashed, whatever the record says);
* ``nqkit index verify DIR`` (every file hashed, a table of files).

Each retrieve prints the time of its steps; "reading" is where the index is verified
(with the questions read). Rows alternate over ``--repeat`` rounds, so load changes hit
every row alike; medians are reported, with ratios against the later run.

Usage (from the repository root; the corpus and index are kept under bench-data/):

    python benchmarks/bench_verify.py [--size 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_retrieval import nqkit, run_rss  # noqa: E402
from make_passages import SHARED, distinct_passages  # noqa: E402
from nqkit.retrieval.corpus import write_passages  # noqa: E402

QUESTIONS = SHARED / "data" / "dpr" / "nq-test.qa.tsv"
READING = re.compile(r"time: reading ([\d.]+) s")


def _reading(err: str) -> float:
    m = READING.search(err)
    return float(m.group(1)) if m else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench-data" / "verify"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus = out / f"distinct-{args.size}.tsv"
    if not corpus.exists():
        write_passages(corpus, distinct_passages(args.size))
    ix = out / f"bm25-{args.size}"
    if not ix.exists():
        secs, _, _ = run_rss(nqkit("index", "build", "--corpus", str(corpus), "--retriever",
                                   "bm25", "-o", str(ix), "--cluster", "none"))
        print(f"nqkit index build: {secs:.1f} s", file=sys.stderr)
    size = sum(p.stat().st_size for p in ix.rglob("*") if p.is_file())
    large = sum(p.stat().st_size for p in ix.rglob("*") if p.is_file()
                and p.stat().st_size > 1 << 20 and p.name != "params.json")
    base = ["retrieve", "--index", str(ix), "--questions", str(QUESTIONS), "--hits", "100",
            "--cluster", "none", "--trec", str(out / "run.trec")]
    rows = {"retrieve, first run (no record: large files hashed)": (nqkit(*base), True),
            "retrieve, later run (record: small files hashed)": (nqkit(*base), False),
            "retrieve --verify (every file hashed)": (nqkit(*base, "--verify"), False),
            "index verify DIR (every file hashed)": (nqkit("index", "verify", str(ix)), True)}
    times: dict[str, list[float]] = {k: [] for k in rows}
    reading: dict[str, list[float]] = {k: [] for k in rows}
    kept_home = Path(tempfile.mkdtemp(prefix="bench-verify-home-"))
    os.environ["NQKIT_HOME"] = str(kept_home)
    run_rss(nqkit("index", "verify", str(ix)))  # records the file states the later rows use
    try:
        for _ in range(args.repeat):
            for label, (cmd, fresh) in rows.items():
                home = Path(tempfile.mkdtemp(prefix="bench-verify-fresh-")) if fresh \
                    else kept_home
                os.environ["NQKIT_HOME"] = str(home)
                secs, _, err = run_rss(cmd)
                times[label].append(secs)
                reading[label].append(_reading(err))
                if fresh:
                    shutil.rmtree(home)
    finally:
        shutil.rmtree(kept_home, ignore_errors=True)
    later = statistics.median(times["retrieve, later run (record: small files hashed)"])
    print(f"\n## verification of a BM25 index over {args.size:,} distinct passages "
          f"({size / 2**20:,.0f} MB, {large / 2**20:,.0f} MB in files over 1 MiB), "
          f"3,610 questions, top 100, medians of {args.repeat}\n")
    print("| command | whole command s | reading step s | ratio to the later run |")
    print("|---|---:|---:|---:|")
    for label in rows:
        t = statistics.median(times[label])
        r = statistics.median(reading[label])
        shown = "" if r != r else f"{r:.1f}"
        print(f"| {label} | {t:.1f} | {shown} | {t / later:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
