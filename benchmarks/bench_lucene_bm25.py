"""Lucene-exact BM25 (nqkit.retrieval.lucene_bm25) against bm25s, and against Pyserini.

Side by side in one run, over the same token lists: the 3,349 real passages (or
``--tiled N`` copies of them with new ids) and the 3,610 NQ-open dev questions (DPR
nq-test.qa.tsv), k1 0.9, b 0.4, top 100:

1. tokens once for both (``--size N``: N passages with distinct texts, the corpus of
   ``bench_retrieval.py``), with bm25s's tokenizer as nqkit's BM25 uses it today (lower-case,
   ``\\w\\w+``, English stop words, Snowball stemmer), timed apart: the Lucene analyzer
   in Python is built separately, and this compares the scorers alone;
2. index build: ``bm25s.BM25(method="lucene").index(tokens)`` against
   ``LuceneBM25.build(tokens, ids)``;
3. search: ``retrieve(query_tokens, k=100)`` against ``LuceneBM25.search`` per question;
4. with ``--pyserini`` (Java 21+ and pyserini installed): Pyserini's own index build
   (``IndexCollection``, 1 thread) and ``LuceneSearcher.batch_search`` (1 thread), in this
   process's JVM; those include Lucene's analyzer, which 2 and 3 do not.

Best of ``--repeat`` runs each. Usage (from the repository root):

    python benchmarks/bench_lucene_bm25.py [--size 1000000 | --tiled 100000] [--pyserini]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from make_passages import (  # noqa: E402
    SHARED,
    distinct_passages,
    real_passages,
    tiled_passages,
)
from nqkit.formats.dpr import read_dpr_qa_tsv  # noqa: E402
from nqkit.retrieval.lucene_bm25 import LuceneBM25  # noqa: E402

QUESTIONS = SHARED / "data" / "dpr" / "nq-test.qa.tsv"


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=0,
                    help="passages with distinct texts (make_passages.distinct_passages)")
    ap.add_argument("--tiled", type=int, default=0, help="passages (real ones repeated)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pyserini", action="store_true", help="also time Pyserini (Java 21+)")
    args = ap.parse_args()

    import bm25s
    import numpy as np
    import Stemmer

    passages = list(distinct_passages(args.size) if args.size
                    else tiled_passages(args.tiled) if args.tiled else real_passages())
    questions = [q for q, _ in read_dpr_qa_tsv(QUESTIONS)]
    ids = [p.id for p in passages]
    texts = [f"{p.title}\n{p.text}" for p in passages]
    stem = Stemmer.Stemmer("english")

    def tok(xs: list[str]) -> list[list[str]]:
        return bm25s.tokenize(xs, stopwords="en", stemmer=stem, return_ids=False,
                              show_progress=False)

    t_tok, (docs, queries) = best(lambda: (tok(texts), tok(questions)), 1)
    print(f"{len(passages):,} passages, {len(questions):,} questions; "
          f"tokens (bm25s tokenizer, shared): {t_tok:.2f} s", file=sys.stderr)

    def bm25s_build() -> Any:
        r = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
        r.index(docs, show_progress=False)
        return r

    t_b_build, retriever = best(bm25s_build, args.repeat)
    k = min(100, len(passages))
    t_b_search, _ = best(lambda: retriever.retrieve(queries, k=k, show_progress=False,
                                                    n_threads=1), args.repeat)
    t_l_build, ix = best(lambda: LuceneBM25.build(docs, ids), args.repeat)
    t_l_search, hits = best(lambda: [ix.search(q, k) for q in queries], args.repeat)
    assert len(hits) == len(questions) and not np.isnan(hits[0][1]).any()

    rows = [("bm25s (lucene method)", t_b_build, t_b_search),
            ("nqkit lucene-exact", t_l_build, t_l_search)]
    if args.pyserini:
        rows.append(("Pyserini 1.6.0 (incl. analyzer)",
                     *pyserini_times(passages, questions, k, args.repeat)))
    print(f"| scorer | build s | search s ({len(questions):,} q) | build / lucene-exact "
          "| search / lucene-exact |")
    print("|---|---:|---:|---:|---:|")
    for name, b, s in rows:
        print(f"| {name} | {b:.3f} | {s:.3f} | {b / t_l_build:.2f} | {s / t_l_search:.2f} |")
    return 0


def pyserini_times(passages: list[Any], questions: list[str], k: int, repeat: int
                   ) -> tuple[float, float]:
    from lucene_bm25_oracle import Oracle, find_java_home

    home = find_java_home()
    if home is None:
        sys.exit("--pyserini needs a Java 21+ runtime")
    oracle = Oracle(home)
    with tempfile.TemporaryDirectory() as tmp:
        docs_dir = Path(tmp) / "docs"
        docs_dir.mkdir()
        with open(docs_dir / "docs.jsonl", "w", encoding="utf-8") as f:
            for p in passages:
                f.write(json.dumps({"id": p.id, "contents": f"{p.title}\n{p.text}"}) + "\n")
        n = iter(range(repeat))
        t_build, _ = best(lambda: oracle.build_index(docs_dir, Path(tmp) / f"ix{next(n)}"),
                          repeat)
        searcher = oracle.searcher(Path(tmp) / "ix0")
        jlist = oracle.autoclass("java.util.ArrayList")
        qs, qids = jlist(), jlist()
        for i, q in enumerate(questions):
            qs.add(q)
            qids.add(str(i))
        # the Java call alone: converting 361,000 hits to Python is not Pyserini's search
        t_search, _ = best(lambda: searcher.batch_search(qs, qids, k, 1), repeat)
    return t_build, t_search


if __name__ == "__main__":
    raise SystemExit(main())
