"""Lucene's English analysis: nqkit's pure-Python analyzer against bm25s's tokenizer with
PyStemmer (what nqkit's BM25 uses today) and against Pyserini's own analyzer, side by side
on the same passages in one run.

Passages: ``--size`` passages of benchmarks/make_passages.py's distinct corpus (the 3,349
real DPR passages, then real passages whose words are varied so that the vocabulary grows
as real text's does), each analysed as Pyserini indexes it: ``title + "\\n" + text``.

* nqkit, cold: :func:`nqkit.text.lucene.analyze_many` with an empty term cache (every word
  form stemmed once, as when indexing a new corpus); warm: the same texts again.
* bm25s: ``bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"),
  return_ids=False)``, nqkit's BM25 tokenizer (its stem cache is per call, so every call is
  cold).
* Pyserini 1.6.0: ``Analyzer(get_lucene_analyzer()).analyze`` per text from Python
  (pyjnius, one JNI call a text, as a Pyserini user calls it), and the same analyzer
  (``AnalyzerUtils.analyze``) per text inside Java (tests/lucene_oracle.py, ``via``), each
  timed inside its child without the JVM's start, and as wall time; needs Java 21+ and
  pyserini (``--no-pyserini`` leaves it out).

Tokens per second count each tool's own output terms; passages per second compare the
same work. Usage: ``python benchmarks/bench_lucene_analyzer.py --size 100000``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from make_passages import distinct_passages  # noqa: E402
from nqkit.text import lucene  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100000, help="passages (default 100,000)")
    ap.add_argument("--no-pyserini", action="store_true", help="leave Pyserini out")
    args = ap.parse_args()

    texts = [f"{p.title}\n{p.text}" for p in distinct_passages(args.size)]
    chars = sum(map(len, texts))
    rows: list[tuple[str, float, int]] = []

    lucene._CACHE.clear()
    t = time.perf_counter()
    ours = lucene.analyze_many(texts)
    rows.append(("nqkit lucene.analyze_many, cold term cache", time.perf_counter() - t,
                 sum(map(len, ours))))
    forms = len(lucene._CACHE)
    t = time.perf_counter()
    ours = lucene.analyze_many(texts)
    rows.append(("nqkit lucene.analyze_many, warm term cache", time.perf_counter() - t,
                 sum(map(len, ours))))

    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    t = time.perf_counter()
    theirs = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, return_ids=False,
                            show_progress=False)
    rows.append(("bm25s.tokenize + PyStemmer (english)", time.perf_counter() - t,
                 sum(map(len, theirs))))

    same = None
    if not args.no_pyserini:
        from lucene_oracle import oracle_analyze

        for via, name in (("pyjnius", "Pyserini 1.6.0 Analyzer.analyze from Python"),
                          ("java", "Anserini 1.7.1 AnalyzerUtils.analyze in Java")):
            timing: dict[str, float] = {}
            t = time.perf_counter()
            java = oracle_analyze(texts, timing=timing, via=via)
            wall = time.perf_counter() - t
            rows.append((f"{name}, in the child", timing["analyze"], sum(map(len, java))))
            rows.append((f"{name}, wall (JVM start, strings in and out)", wall,
                         sum(map(len, java))))
            same = sum(a == b for a, b in zip(ours, java, strict=True))

    print(f"{len(texts):,} passages, {chars:,} characters, {forms:,} distinct raw tokens; "
          f"Python {platform.python_version()}, {platform.machine()}")
    base = rows[0][1]
    print("| what | seconds | passages/s | terms | terms/s | x nqkit cold |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, secs, n in rows:
        print(f"| {name} | {secs:.2f} | {len(texts) / secs:,.0f} | {n:,} | {n / secs:,.0f} "
              f"| {secs / base:.2f} |")
    if same is not None:
        print(f"nqkit's terms equal Pyserini's for {same:,}/{len(texts):,} passages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
