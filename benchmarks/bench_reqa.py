"""ReQA speed on SQuAD 1.1 dev, side by side in one run.

1. BM25 end to end: build the task from the SQuAD JSON, index 10,250 sentences, rank all
   11,426 queries at sentence and paragraph level (target: under 30 s).
2. Dense end to end: all-MiniLM-L6-v2 on CPU, encoding every sentence and question (no
   cache) and ranking (target: under 10 min on 2 cores); reports sentences per second.
3. Ranking alone on the golden hashed-bow-64 embeddings: nqkit's chunked counting ranks
   vs a naive per-question full ``scipy.stats.rankdata`` (as the official script does).

Usage: python benchmarks/bench_reqa.py [--shared ../shared] [--skip-dense] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nqkit.formats.reqa import build_from_squad  # noqa: E402
from nqkit.formats.squad import iter_squad_articles  # noqa: E402
from nqkit.io import iter_jsonl  # noqa: E402
from nqkit.metrics.ranking import (  # noqa: E402
    RankTargets,
    aggregate_ranks,
    rank_queries,
    reqa_evaluate,
)
from nqkit.retrieval import get_retriever  # noqa: E402


def end_to_end(squad: Path, retriever_name: str, **opts: object) -> tuple[float, dict, int]:
    t0 = time.perf_counter()
    task = build_from_squad(iter_squad_articles(squad), {"source": "squad"})
    sentences = [c.sentence for c in task.index]
    questions = [q.question for q in task.queries]
    targets = RankTargets.from_sentences(sentences, [c.doc_id for c in task.index],
                                         [q.answer_sentence for q in task.queries])
    index = get_retriever(retriever_name, **opts).index(sentences)
    ranks = rank_queries(index.scorer(questions), targets)
    res = aggregate_ranks(questions, ranks, index_size=index.size)
    return time.perf_counter() - t0, dict(res.levels), len(sentences) + len(questions)


def naive_rankdata(q: np.ndarray, a: np.ndarray, targets: RankTargets,
                   questions: list[str]) -> dict[str, float]:
    """The official way: a full rankdata per question (sentence level only)."""
    from scipy.stats import rankdata

    from nqkit.metrics.ranking import dot_scores

    best: dict[str, float] = {}
    for lo in range(0, len(q), 1000):
        scores = dot_scores(q[lo:lo + 1000], a)  # the same scores nqkit ranks
        for i, row in enumerate(scores):
            r = float(rankdata(-row)[targets.target_items[lo + i]].min())
            key = questions[lo + i]
            best[key] = min(best.get(key, r), r)
    return {"mrr": sum(1 / v for v in best.values()) / len(best)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=os.environ.get("NQKIT_SHARED", str(ROOT.parent / "shared")))
    ap.add_argument("--skip-dense", action="store_true")
    args = ap.parse_args()
    shared = Path(args.shared)
    squad = shared / "data" / "squad" / "dev-v1.1.json"
    gold = shared / "golden" / "reqa-squad-dev"
    rows: list[tuple[str, float, str]] = []

    t, levels, _ = end_to_end(squad, "bm25")
    rows.append(("BM25 end to end (build+index+rank)", t,
                 f"sentence MRR {levels['sentence']['mrr']:.3f}"))

    if not args.skip_dense:
        with tempfile.TemporaryDirectory():
            t, levels, n = end_to_end(squad, "dense", cache_dir=None)
        rows.append(("dense end to end (MiniLM, encode+rank)", t,
                     f"sentence MRR {levels['sentence']['mrr']:.3f}, {n / t:.0f} texts/s"))

    index = list(iter_jsonl(gold / "index.jsonl"))
    queries = list(iter_jsonl(gold / "queries.jsonl"))
    qe = np.load(gold / "hashed-bow-64.queries.npy")
    ae = np.load(gold / "hashed-bow-64.index.npy")
    questions = [str(x["question"]) for x in queries]
    targets = RankTargets.from_sentences([x["sentence"] for x in index],
                                         [x["doc_id"] for x in index],
                                         [x["answer_sentence"] for x in queries])
    t0 = time.perf_counter()
    ours = reqa_evaluate(qe, ae, targets, questions)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    naive = naive_rankdata(qe, ae, targets, questions)
    t_naive = time.perf_counter() - t0
    same = abs(naive["mrr"] - ours.levels["sentence"]["mrr"]) < 1e-12
    rows.append(("ranking, golden embeddings: nqkit (both levels)", t_ours,
                 f"{t_naive / t_ours:.1f}x faster than naive"))
    rows.append(("ranking, golden embeddings: naive rankdata (sentence)", t_naive,
                 f"same MRR: {same}"))

    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  {'seconds':>8}  note")
    for name, secs, note in rows:
        print(f"{name:<{width}}  {secs:8.1f}  {note}")
    print(f"machine: {os.cpu_count()} CPUs, numpy {np.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
