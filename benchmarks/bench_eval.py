"""Benchmark: ``nqkit eval nq`` against the decompression floor and a naive evaluation.

Side by side in one run, on the tiled dev-sized set of ``make_tiled_dev.py`` (5 shards x
1,566 examples, ~855 MB gzipped, ~6.2 GB of JSON):

1. floor: decompress every shard with isal, discarding the bytes, with a pool of as many
   processes as cores and with a pool of nqkit's size (3 for 5 shards on 2 cores: the
   cores are then shared so no core idles while the last shard is read); ratios are to the
   faster of the two;
2. naive: what the official script does — ``json.loads`` of every line (in a pool of
   nqkit's size), then the same metric code;
3. ``nqkit eval nq --no-gold-cache`` (cold: reads the gold);
4. ``nqkit eval nq`` twice with the cache (the first run fills it, the second is timed).

Each nqkit run is a fresh ``python -m nqkit`` process; its peak resident memory (largest
single process, workers included) is reported. The runs write and use Python's bytecode
cache, as an installed package does (this machine sets ``PYTHONDONTWRITEBYTECODE=1``,
which would recompile every module in every run).

    python benchmarks/bench_eval.py [--data bench-data/tiled-dev] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _decompress(path: str) -> int:
    from isal import igzip

    n = 0
    with igzip.open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            n += len(chunk)
    return n


def floor(shards: list[str], processes: int) -> float:
    t = time.perf_counter()
    with ProcessPoolExecutor(processes) as pool:
        list(pool.map(_decompress, shards))
    return time.perf_counter() - t


def _naive_shard(path: str) -> list[tuple[int, list]]:
    import gzip

    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out.append((d["example_id"], d["annotations"]))
    return out


def naive(shards: list[str], predictions: Path, processes: int) -> float:
    sys.path.insert(0, str(ROOT / "src"))
    from nqkit.formats.nq import _Parser
    from nqkit.formats.nq_predictions import read_nq_predictions
    from nqkit.metrics.nq import evaluate_nq

    t = time.perf_counter()
    with ProcessPoolExecutor(processes) as pool:
        parts = list(pool.map(_naive_shard, shards))
    p = _Parser(None)
    gold = {ex_id: tuple(p.annotation(a, i, bytes_required=True) for i, a in enumerate(anns))
            for part in parts for ex_id, anns in part}
    evaluate_nq(gold, read_nq_predictions(predictions))
    return time.perf_counter() - t


def nqkit_run(shards: list[str], predictions: Path, env: dict[str, str], *extra: str
              ) -> tuple[float, float]:
    """Wall time and peak RSS (MB) of one `nqkit eval nq` process tree."""
    cmd = [sys.executable, "-m", "nqkit", "eval", "nq", "--gold", *shards, "--predictions",
           str(predictions), "--format", "json", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if out.returncode:
        raise SystemExit(out.stderr)
    rss = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return dt, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "bench-data" / "tiled-dev")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    args = ap.parse_args()
    shards = sorted(str(p) for p in args.data.glob("nq-dev-*.jsonl.gz"))
    predictions = args.data / "predictions.json"
    if not shards or not predictions.exists():
        raise SystemExit(f"no tiled data in {args.data}: run benchmarks/make_tiled_dev.py")
    size = sum(os.path.getsize(s) for s in shards) / 1e6
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.path.insert(0, str(ROOT / "src"))
    from nqkit.formats.nq_gold import pool_size

    cores = os.cpu_count() or 1
    pool = pool_size(len(shards), cores)

    with tempfile.TemporaryDirectory() as home:
        env["NQKIT_HOME"] = home
        rows: list[tuple[str, float, float | None]] = []
        rows.append((f"floor: isal decompression, {cores} processes",
                     min(floor(shards, cores) for _ in range(args.repeat)), None))
        if pool != cores:
            rows.append((f"floor: isal decompression, {pool} processes",
                         min(floor(shards, pool) for _ in range(args.repeat)), None))
        rows.append((f"naive: json.loads every line, {pool} processes",
                     naive(shards, predictions, pool), None))
        cold = [nqkit_run(shards, predictions, env, "--no-gold-cache") for _ in range(args.repeat)]
        rows.append(("nqkit eval nq --no-gold-cache", min(c[0] for c in cold),
                     max(c[1] for c in cold)))
        nqkit_run(shards, predictions, env)  # fills the cache
        warm = [nqkit_run(shards, predictions, env) for _ in range(args.repeat)]
        rows.append(("nqkit eval nq, cached gold", min(w[0] for w in warm),
                     max(w[1] for w in warm)))

    base = min(secs for name, secs, _ in rows if name.startswith("floor"))
    print(f"{len(shards)} shards, {size:,.0f} MB gzipped; best of {args.repeat} "
          f"(naive: 1 run); {os.cpu_count()} cores")
    print(f"{'what':42s} {'seconds':>8s} {'x floor':>8s} {'peak MB':>8s}   "
          "(x floor: to the faster floor)")
    for name, secs, rss in rows:
        print(f"{name:42s} {secs:8.2f} {secs / base:8.2f} {rss or 0:8.0f}" if rss else
              f"{name:42s} {secs:8.2f} {secs / base:8.2f} {'':>8s}")


if __name__ == "__main__":
    main()
