"""Writing TREC runs, side by side in one run.

A retrieval run as ``nqkit retrieve --trec`` and ``nqkit reqa run --trec`` hold it: 4,000
queries x depth 100 (400,000 lines), docids DPR passage ids (decimal numbers up to
21,015,324, DPR's psgs_w100.tsv), scores from a seeded RNG, each row sorted best first:
BM25-like float32 scores and fused float64 scores (a hybrid run). Timed for each:

1. lines: one ``TrecRunLine`` per line (float32 rows through ``float32_scores``), written
   by ``write_trec_run`` — what both commands did before;
2. blocks: ``write_trec_matrix`` (``write_trec_blocks`` over blocks of 2,048 queries), what
   they do now; its output is checked to be byte-identical to 1.;
3. floor, format: numpy's float32 cast (or ``repr`` for float64) and one f-string per line
   joined per query, without any check or notation fix, written in one piece;
4. floor, write: the finished text written (atomic output), no formatting at all.

Each is run ``--repeat`` times (default 3), interleaved; the median is reported with its
ratio to 2. The full-scale line is NQ train (79,168 questions x 100 = 7.9 M lines),
linear in lines.

Usage: python benchmarks/bench_trec_write.py [--queries 4000] [--depth 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nqkit.formats.trec import (  # noqa: E402
    TrecRunLine,
    float32_scores,
    write_trec_matrix,
    write_trec_run,
)
from nqkit.io import atomic_output  # noqa: E402

DPR_PASSAGES = 21_015_324
NQ_TRAIN_LINES = 79_168 * 100


def make_run(queries: int, depth: int, seed: int = 0
             ) -> tuple[list[str], list[str], np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    qids = [str(i) for i in range(queries)]
    # a docid table of the distinct retrieved passages, as retrieve builds per block
    rows = rng.integers(1, DPR_PASSAGES + 1, (queries, depth))
    distinct, cols = np.unique(rows, return_inverse=True)
    docids = [str(r) for r in distinct.tolist()]
    cols = cols.reshape(queries, depth)
    # BM25-like: positive, a long tail; a few exact ties as BM25 gives
    bm25 = np.sort(rng.gamma(4.0, 4.0, (queries, depth)).astype(np.float32), axis=1)[:, ::-1]
    bm25[:, 50:52] = bm25[:, 50:51]
    fused = np.sort(rng.standard_normal((queries, depth)) * 0.7 + 1.2, axis=1)[:, ::-1]
    return qids, docids, cols, {"float32": np.ascontiguousarray(bm25),
                                "float64": np.ascontiguousarray(fused)}


def lines_path(path: Path, qids: list[str], docids: list[str], cols: np.ndarray,
               scores: np.ndarray, tag: str) -> None:
    def lines():  # type: ignore[no-untyped-def]
        for q, crow, srow in zip(qids, cols.tolist(), scores, strict=True):
            values = float32_scores(srow) if srow.dtype == np.float32 else srow.tolist()
            for rank, (c, v) in enumerate(zip(crow, values, strict=True), 1):
                yield TrecRunLine(q, docids[c], rank, v, tag)
    write_trec_run(path, lines())


def floor_format(path: Path, qids: list[str], docids: list[str], cols: np.ndarray,
                 scores: np.ndarray, tag: str) -> None:
    texts = (scores.astype(str).tolist() if scores.dtype == np.float32
             else [list(map(repr, row)) for row in scores.tolist()])
    parts = []
    for q, crow, srow in zip(qids, cols.tolist(), texts, strict=True):
        parts.append("".join([f"{q} Q0 {docids[c]} {r} {s} {tag}\n"
                              for r, (c, s) in enumerate(zip(crow, srow, strict=True), 1)]))
    with atomic_output(path) as f:
        f.write("".join(parts))


def floor_write(path: Path, text: str) -> None:
    with atomic_output(path) as f:
        f.write(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=4000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    qids, docids, cols, by_dtype = make_run(args.queries, args.depth)
    n = args.queries * args.depth
    print(f"{args.queries:,} queries x depth {args.depth} = {n:,} lines, "
          f"{len(docids):,} distinct docids; median of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for dtype, scores in by_dtype.items():
            tag = "nqkit-bm25" if dtype == "float32" else "nqkit-hybrid"
            lines_path(d / "lines.trec", qids, docids, cols, scores, tag)
            write_trec_matrix(d / "blocks.trec", qids, docids, cols, scores, tag=tag)
            reference = (d / "lines.trec").read_bytes()
            assert (d / "blocks.trec").read_bytes() == reference, "outputs differ"
            text = reference.decode()
            cases: dict[str, Callable[[], object]] = {
                "lines: TrecRunLine -> write_trec_run (before)": lambda: lines_path(
                    d / "a.trec", qids, docids, cols, scores, tag),  # noqa: B023
                "blocks: write_trec_matrix (now)": lambda: write_trec_matrix(
                    d / "b.trec", qids, docids, cols, scores, tag=tag),  # noqa: B023
                "floor: cast + f-string join, no checks": lambda: floor_format(
                    d / "c.trec", qids, docids, cols, scores, tag),  # noqa: B023
                "floor: write the finished text": lambda: floor_write(
                    d / "d.trec", text),  # noqa: B023
            }
            times: dict[str, list[float]] = {k: [] for k in cases}
            for _ in range(args.repeat):
                for name, fn in cases.items():
                    t0 = time.perf_counter()
                    fn()
                    times[name].append(time.perf_counter() - t0)
            now = statistics.median(times["blocks: write_trec_matrix (now)"])
            print(f"\n{dtype} scores ({len(reference) / 1e6:.1f} MB, byte-identical)")
            print(f"{'path':<48}{'median s':>9}{'runs':>22}{'vs now':>8}"
                  f"{'7.9M lines s':>14}")
            for name, ts in times.items():
                med = statistics.median(ts)
                runs = " ".join(f"{t:.2f}" for t in ts)
                print(f"{name:<48}{med:>9.2f}{runs:>22}{med / now:>8.2f}"
                      f"{med * NQ_TRAIN_LINES / n:>14.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
