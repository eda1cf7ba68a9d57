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

``--pyserini`` runs another comparison, side by side in one run on the same passages and
questions: index build and search by nqkit's two BM25 flavours (``--bm25-method
lucene-exact`` and the bm25s default), in one process, lucene-exact also on a Dask
LocalCluster of 2 workers (``--bm25s-dask``: bm25s too), against Pyserini 1.6.0 itself
(Java 21+, pyserini installed: test oracle only). Pyserini's build is Anserini's
``IndexCollection`` from the jar Pyserini ships, in its own JVM (``-collection
JsonCollection -generator DefaultLuceneDocumentGenerator -threads 2``, nothing stored
beyond what BM25 search needs; ``--pyserini-store`` builds a second index with
``-storePositions -storeDocvectors -storeRaw`` as Pyserini's DPR index has), over the
passages written as ``{"id", "contents": title + "\\n" + text}`` JSON lines in 8 files (a
thread indexes one file at a time); its search is ``LuceneSearcher.batch_search``
(``SimpleSearcher``, threads 2, k 100, BM25 k1 0.9 b 0.4) in a fresh Python process that
starts the JVM and writes the TREC run. Each step is one fresh process, timed by wall
clock with its peak RSS (``wait4``: the process and the workers it waited for).
Checked: lucene-exact's index files equal with 2 workers and in one process, its TREC
runs equal, and its top-100 lists and scores against Pyserini's.

Usage (from the repository root; about 3 minutes on 2 cores at the default size):

    python benchmarks/bench_retrieve_scale.py [--size 200000] [--tiled]
    python benchmarks/bench_retrieve_scale.py --size 1000000 --pyserini --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


PYSERINI_SEARCH = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from lucene_bm25_oracle import Oracle, find_java_home
from nqkit.retrieval.questions import read_questions
questions = read_questions(sys.argv[3])
oracle = Oracle(find_java_home())
searcher = oracle.searcher(sys.argv[2], 0.9, 0.4)  # LuceneSearcher's SimpleSearcher
jlist = oracle.autoclass("java.util.ArrayList")
qs, qids = jlist(), jlist()
for i, x in enumerate(questions):
    qs.add(x.question)
    qids.add(str(i))
t0 = time.perf_counter()
res = searcher.batch_search(qs, qids, 100, 2)  # what LuceneSearcher.batch_search calls
t_java = time.perf_counter() - t0
hits = {r.getKey(): r.getValue() for r in res.entrySet().toArray()}
with open(sys.argv[4], "w", encoding="utf-8") as f:
    for i, x in enumerate(questions):
        f.writelines(f"{x.qid} Q0 {h.docid} {r} {h.score!r} Anserini\\n"
                     for r, h in enumerate(hits[str(i)], 1))
print(json.dumps({"java_seconds": t_java}))
"""


def _pyserini_docs(corpus: Path, docs: Path, files: int = 8) -> None:
    """The passages as Pyserini's JsonCollection reads them, in ``files`` files."""
    from nqkit.retrieval.corpus import read_passages

    docs.mkdir()
    # streamed: a child's peak RSS as wait4 reports it starts at this process's RSS when
    # it forked, so holding the corpus here would show in every step's peak
    n = sum(1 for _ in read_passages(corpus))
    per = -(-n // files)
    outs = [open(docs / f"docs{i}.jsonl", "w", encoding="utf-8")  # noqa: SIM115
            for i in range(files)]
    try:
        for j, p in enumerate(read_passages(corpus)):
            outs[j // per].write(json.dumps({"id": p.id, "contents": f"{p.title}\n{p.text}"})
                                 + "\n")
    finally:
        for f in outs:
            f.close()


def against_pyserini(corpus: Path, out: Path, store: bool, bm25s_dask: bool,
                     bm25s: bool = True) -> None:
    """The ``--pyserini`` comparison (module docstring)."""

    sys.path.insert(0, str(ROOT / "tests"))
    from lucene_bm25_oracle import find_java_home

    home = find_java_home()
    if home is None:
        sys.exit("--pyserini needs a Java 21+ runtime (JAVA_HOME or /usr/lib/jvm/temurin-*)")
    import pyserini

    jar = next((Path(pyserini.__file__).parent / "resources" / "jars").glob("anserini-*.jar"))
    os.environ["JAVA_HOME"] = str(home)
    os.environ.setdefault("OPENAI_API_KEY", "dummy")  # pyserini 1.6.0 wants one
    docs = out / "pyserini-docs"
    if not docs.exists():
        _pyserini_docs(corpus, docs)
    rows: list[tuple[str, str, float, float]] = []

    def step(what: str, who: str, cmd: list[str]) -> str:
        secs, rss, text = run_rss(cmd)
        rows.append((what, who, secs, rss))
        print(f"{what} {who}: {secs:.1f} s, {rss:,.0f} MB", file=sys.stderr)
        return text

    modes = {"1 process": ["--cluster", "none"],
             "Dask, 2 workers": ["--cluster", "local", "--workers", "2"]}
    flavours = {"nqkit lucene-exact": ["--bm25-method", "lucene-exact"],
                "nqkit bm25s (default)": []}
    if not bm25s:
        del flavours["nqkit bm25s (default)"]
    ix: dict[tuple[str, str], Path] = {}
    for name, opts in flavours.items():
        for mode, cl in modes.items():
            if not (opts or bm25s_dask or cl[1] == "none"):
                continue
            d = out / f"ix-{'exact' if opts else 'bm25s'}-{cl[1]}"
            if d.exists():
                shutil.rmtree(d)
            step("build", f"{name}, {mode}", nqkit("index", "build", "--corpus", str(corpus),
                                                   "--retriever", "bm25", *opts, "-o", str(d),
                                                   *cl))
            ix[name, mode] = d
    pix = out / "ix-pyserini"
    stored = ["-storePositions", "-storeDocvectors", "-storeRaw"]
    for d, flags, label in [(pix, [], "minimal"), (out / "ix-pyserini-stored", stored,
                                                   "`-storePositions -storeDocvectors "
                                                   "-storeRaw`")][:2 if store else 1]:
        if d.exists():
            shutil.rmtree(d)
        step("build", f"Pyserini 1.6.0 IndexCollection, 2 threads, {label}", [
            str(home / "bin" / "java"), "--add-modules=jdk.incubator.vector", "-cp", str(jar),
            "io.anserini.index.IndexCollection", "-collection", "JsonCollection", "-input",
            str(docs), "-index", str(d), "-generator", "DefaultLuceneDocumentGenerator",
            "-threads", "2", *flags])
    trec: dict[tuple[str, str], Path] = {}
    for (name, mode), d in ix.items():
        trec[name, mode] = out / f"{d.name}.trec"
        step("search", f"{name}, {mode}", nqkit(
            "retrieve", "--index", str(d), "--questions", str(QUESTIONS), "--hits", "100",
            "--trec", str(trec[name, mode]), *modes[mode]))
    p_trec = out / "pyserini.trec"
    text = step("search", "Pyserini 1.6.0 batch_search, 2 threads", [
        sys.executable, "-c", PYSERINI_SEARCH, str(ROOT / "tests"), str(pix), str(QUESTIONS),
        str(p_trec)])
    java = json.loads(text.strip().splitlines()[-1])["java_seconds"]

    exact = "nqkit lucene-exact"
    one, two = (json.loads((ix[exact, m] / "params.json").read_text()) for m in modes)
    facts = one["facts"]
    print(f"\n## BM25 over {facts['doc_count']:,} passages with terms (lucene-exact "
          f"vocabulary {facts['vocabulary']:,} terms, {facts['postings']:,} postings), "
          "3,610 questions, top 100\n")
    print("| step | system | seconds | peak MB | x lucene-exact, 1 process | "
          "x Pyserini |")
    print("|---|---|---:|---:|---:|---:|")
    base = {w: next(s for ww, who, s, _ in rows if ww == w and who == f"{exact}, 1 process")
            for w in ("build", "search")}
    pys = {w: next(s for ww, who, s, _ in rows if ww == w and who.startswith("Pyserini"))
           for w in ("build", "search")}
    for what, who, secs, rss in rows:
        print(f"| {what} | {who} | {secs:.1f} | {rss:,.0f} | {secs / base[what]:.2f} | "
              f"{secs / pys[what]:.2f} |")
    print(f"\nPyserini's batch_search call alone (in its process): {java:.1f} s")
    same_files = one["files"] == two["files"]
    same_run = trec[exact, "1 process"].read_bytes() == trec[exact, "Dask, 2 workers"].read_bytes()
    print(f"lucene-exact, 2 workers against 1 process: index files "
          f"{'identical' if same_files else 'DIFFER'} ({len(one['files'])} files, SHA-256), "
          f"TREC run {'identical' if same_run else 'DIFFERS'}")
    a, b = trec_lists(trec[exact, "1 process"]), trec_lists(p_trec)
    qids = set(a) | set(b)
    same = sum(a.get(q) == b.get(q) for q in qids)
    print(f"lucene-exact against Pyserini: {same:,} of {len(qids):,} top-100 lists identical "
          "(ids and float32 scores)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=200_000)
    ap.add_argument("--tiled", action="store_true", help="repeat the real texts instead")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench-data" / "retrieve-scale"))
    ap.add_argument("--pyserini", action="store_true",
                    help="builds and searches of both flavours against Pyserini's")
    ap.add_argument("--pyserini-store", action="store_true",
                    help="also a Pyserini build that stores positions, document vectors and "
                    "raw text, as its wikipedia-dpr index does (searched: the minimal one)")
    ap.add_argument("--bm25s-dask", action="store_true",
                    help="--pyserini: also the bm25s flavour on 2 Dask workers")
    ap.add_argument("--no-bm25s", action="store_true",
                    help="--pyserini: lucene-exact and Pyserini only")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kind = "tiled" if args.tiled else "distinct"
    corpus = out / f"{kind}-{args.size}.tsv"
    if not corpus.exists():
        write_passages(corpus, (tiled_passages if args.tiled else distinct_passages)(args.size))
    if args.pyserini:
        against_pyserini(corpus, out, args.pyserini_store, args.bm25s_dask,
                         not args.no_bm25s)
        return 0
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
