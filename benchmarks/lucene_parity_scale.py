"""Lucene-exact BM25 against Pyserini 1.6.0 on a large corpus (what the suite cannot run).

``tests/test_lucene_bm25.py`` checks parity on the 3,349 real passages; this runs the same
check on ``--size`` passages with distinct texts (``make_passages.distinct_passages``, the
corpus of the retrieval benchmarks): Pyserini indexes them (``IndexCollection``, 1 thread)
and analyzes passages and questions; ``LuceneBM25`` is built from those tokens in shards
of ``--shard-size``; then, for the 3,610 NQ-open dev questions, the index statistics, every
document's norm byte, the top-100 lists and both Lucene's raw scores and
``LuceneSearcher.batch_search``'s are compared. Needs Java 21+ and pyserini (test oracle).

    python benchmarks/lucene_parity_scale.py --size 1000000   # ~7 min, ~9 GB on 2 cores
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from lucene_bm25_oracle import Oracle, find_java_home  # noqa: E402
from make_passages import SHARED, distinct_passages  # noqa: E402
from nqkit.formats.dpr import read_dpr_qa_tsv  # noqa: E402
from nqkit.retrieval.lucene_bm25 import LuceneBM25, anserini_adjust  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--shard-size", type=int, default=30_000)
    args = ap.parse_args()
    home = find_java_home()
    if home is None:
        sys.exit("needs a Java 21+ runtime (JAVA_HOME or /usr/lib/jvm/temurin-*)")
    passages = list(distinct_passages(args.size))
    contents = [f"{p.title}\n{p.text}" for p in passages]
    questions = [q for q, _ in read_dpr_qa_tsv(SHARED / "data" / "dpr" / "nq-test.qa.tsv")]
    oracle = Oracle(home)
    with tempfile.TemporaryDirectory() as tmp:
        docs, index = Path(tmp) / "docs", Path(tmp) / "index"
        docs.mkdir()
        with open(docs / "docs.jsonl", "w", encoding="utf-8") as f:
            for p, c in zip(passages, contents, strict=True):
                f.write(json.dumps({"id": p.id, "contents": c}) + "\n")
        oracle.build_index(docs, index)
        doc_tokens = oracle.analyze(contents)
        query_tokens = oracle.analyze(questions)
        stats = oracle.index_stats(index)
        lucene = oracle.raw_lucene(index, questions, 100)
        returned = oracle.batch_search(index, questions, 100)
    ix = LuceneBM25.build(doc_tokens, [p.id for p in passages], shard_size=args.shard_size)
    norms = np.concatenate([sh.norms for sh in ix.shards])
    bad_norms = sum(stats["norms"][p.id] != norms[i] for i, p in enumerate(passages))
    print(f"{len(passages):,} passages in {len(ix.shards)} shards; Lucene segments "
          f"{stats['segments']}; docCount {stats['doc_count']:,} vs {ix.stats.doc_count:,}; "
          f"sumTotalTermFreq {stats['sum_total_term_freq']:,} vs "
          f"{ix.stats.sum_total_term_freq:,}; norm bytes differing: {bad_norms}")
    same = same_raw = same_returned = 0
    for i, tokens in enumerate(query_tokens):
        rows, scores = ix.search(tokens, 100)
        got = [ix.ids[r] for r in rows]
        if got == [d for d, _ in lucene[i]] == [d for d, _ in returned[i]]:
            same += 1
            same_raw += scores.tolist() == [np.float32(s) for _, s in lucene[i]]
            same_returned += anserini_adjust(scores).tolist() == [
                np.float32(s) for _, s in returned[i]]
    n = len(questions)
    print(f"top-100 lists identical {same}/{n}; Lucene scores bit-equal {same_raw}/{n}; "
          f"LuceneSearcher scores bit-equal {same_returned}/{n}")
    return 0 if same == same_raw == same_returned == n and bad_norms == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
