"""`nqkit retrieve` on distinct passages against bm25s used directly, side by side.

The corpus is ``--size`` passages with distinct texts and a vocabulary that grows as real
text's does (``benchmarks/make_passages.py``, the default kind; ``--tiled`` repeats the
3,349 real texts instead, which keeps the vocabulary at theirs and makes every per-text
cache hit). Both indexes are built first (timed, reported, not compared: they differ in
what they store). Then, each command in a fresh subprocess (wall time and the process's
own peak RSS from ``wait4``), for the 3,610 NQ-open dev questions (DPR ``nq-test.qa.tsv``)
at depth 100:

* ``nqkit retrieve --trec`` (no results JSON);
* ``nqkit retrieve -o results.json --trec`` (DPR results with ``has_answer`` for every
  context, and the TREC run);
* bm25s directly: load its saved index memory-mapped, tokenize the questions with the
  same settings (English stop words, Snowball English stemmer; k1 0.9, b 0.4, Lucene
  variant, ``title + " " + text``), ``retrieve`` the top 100, write the TREC run with one
  f-string per line. This is the floor a user would write by hand.

The two TREC runs are compared: top-100 lists equal per question (bm25s breaks score ties
its own way, so a few lists differ in order at equal scores).

Usage (from the repository root; about 3 minutes on 2 cores at the default size):

    python benchmarks/bench_retrieve_scale.py [--size 200000] [--tiled]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_retrieval import nqkit, run_rss  # noqa: E402
from make_passages import SHARED, distinct_passages, tiled_passages  # noqa: E402
from nqkit.retrieval.corpus import write_passages  # noqa: E402

QUESTIONS = SHARED / "data" / "dpr" / "nq-test.qa.tsv"

BM25S_BUILD = """
import sys, time
import bm25s, Stemmer
from nqkit.retrieval.corpus import read_passages
t0 = time.perf_counter()
texts = [f"{p.title} {p.text}" for p in read_passages(sys.argv[1])]
tok = bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"),
                     show_progress=False)
model = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
model.index(tok, show_progress=False)
model.save(sys.argv[2])
print(time.perf_counter() - t0)
"""

BM25S_SEARCH = """
import sys
import bm25s, Stemmer
from nqkit.retrieval.corpus import read_passages
from nqkit.retrieval.questions import read_questions
ids = [p.id for p in read_passages(sys.argv[1])]
model = bm25s.BM25.load(sys.argv[2], mmap=True)
questions = read_questions(sys.argv[3])
q = bm25s.tokenize([x.question for x in questions], stopwords="en",
                   stemmer=Stemmer.Stemmer("english"), show_progress=False)
docs, scores = model.retrieve(q, k=100, show_progress=False, n_threads=1)
with open(sys.argv[4], "w", encoding="utf-8") as f:
    for x, row, srow in zip(questions, docs.tolist(), scores.tolist()):
        f.writelines(f"{x.qid} Q0 {ids[d]} {r} {s} bm25s\\n"
                     for r, (d, s) in enumerate(zip(row, srow), 1) if s > 0)
"""


def trec_lists(path: Path) -> dict[str, list[tuple[float, str]]]:
    """Per query, ``(float32 score, docid)`` in rank order."""
    import numpy as np

    out: dict[str, list[tuple[float, str]]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            qid, _, doc, _, score, _ = line.split()
            out.setdefault(qid, []).append((float(np.float32(score)), doc))
    return out


def same_up_to_ties(a: list[tuple[float, str]], b: list[tuple[float, str]]) -> bool:
    """Equal scores rank by rank, and the same passages at every score but the lowest
    (where the cut at depth 100 may take different members of a tie)."""
    if [s for s, _ in a] != [s for s, _ in b]:
        return False
    low = a[-1][0] if a else 0.0
    return sorted(x for x in a if x[0] > low) == sorted(x for x in b if x[0] > low)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=200_000)
    ap.add_argument("--tiled", action="store_true", help="repeat the real texts instead")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench-data" / "retrieve-scale"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kind = "tiled" if args.tiled else "distinct"
    corpus = out / f"{kind}-{args.size}.tsv"
    if not corpus.exists():
        write_passages(corpus, (tiled_passages if args.tiled else distinct_passages)(args.size))
    ix = out / f"nqkit-{kind}-{args.size}"
    bx = out / f"bm25s-{kind}-{args.size}"
    if not ix.exists():
        secs, _, _ = run_rss(nqkit("index", "build", "--corpus", str(corpus), "--retriever",
                                   "bm25", "-o", str(ix), "--cluster", "none"))
        print(f"nqkit index build: {secs:.1f} s", file=sys.stderr)
    if not bx.exists():
        secs, _, _ = run_rss([sys.executable, "-c", BM25S_BUILD, str(corpus), str(bx)])
        print(f"bm25s index: {secs:.1f} s", file=sys.stderr)
    vocab = json.loads((ix / "params.json").read_text())["facts"]["vocabulary"]

    trec_n, trec_b = out / "nqkit.trec", out / "bm25s.trec"
    base = ["retrieve", "--index", str(ix), "--questions", str(QUESTIONS), "--hits", "100",
            "--cluster", "none"]
    cases: dict[str, list[str]] = {
        "nqkit retrieve --trec (no results JSON)": nqkit(*base, "--trec", str(trec_n))}
    cases["nqkit retrieve -o results.json --trec"] = nqkit(
        *base, "-o", str(out / "results.json"), "--trec", str(trec_n))
    cases["bm25s directly (load mmap, tokenize, retrieve, write TREC)"] = [
        sys.executable, "-c", BM25S_SEARCH, str(corpus), str(bx), str(QUESTIONS), str(trec_b)]
    times: dict[str, list[float]] = {k: [] for k in cases}
    peaks: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.repeat):  # alternating, so load changes hit every case alike
        for label, cmd in cases.items():
            secs, rss, _ = run_rss(cmd)
            times[label].append(secs)
            peaks[label].append(rss)
    floor = statistics.median(times["bm25s directly (load mmap, tokenize, retrieve, write TREC)"])
    print(f"\n## top-100 for 3,610 questions over {args.size:,} {kind} passages "
          f"(vocabulary {vocab:,} terms), medians of {args.repeat}\n")
    print("| command | seconds | x bm25s | peak MB |")
    print("|---|---:|---:|---:|")
    for label in cases:
        t = statistics.median(times[label])
        print(f"| {label} | {t:.1f} | {t / floor:.2f} | {max(peaks[label]):,.0f} |")
    a, b = trec_lists(trec_n), trec_lists(trec_b)
    qids = set(a) | set(b)
    same = sum(a.get(q) == b.get(q) for q in qids)
    ties = sum(same_up_to_ties(a.get(q, []), b.get(q, [])) for q in qids)
    print(f"\nTREC runs: {same:,} of {len(qids):,} top-100 lists identical, {ties:,} "
          "identical up to the order of equal scores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
