"""Benchmark: ``nqkit.arrays.distinct`` against ``np.unique`` (no ``return_*``).

Side by side, in one run, on integer arrays of 10^3 to 10^6 values with few repeats
(values drawn from 10x the size: term ids of a vocabulary, passage rows of a corpus)
and with many (from a tenth of the size: the passages several questions' clauses
touch), each timed as the best of 5 calls after one untimed call; both results are
checked equal. The build and search it serves are measured end to end by
``bench_retrieve_scale.py``.

Run: ``python benchmarks/bench_unique.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nqkit.arrays import distinct  # noqa: E402


def best(fn, a: np.ndarray, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    fn(a)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(a)
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    print(f"numpy {np.__version__}")
    print("| values | drawn from | np.unique ms | distinct ms | x distinct |")
    print("|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for n in (10**3, 10**4, 10**5, 10**6):
        for high in (10 * n, max(2, n // 10)):
            a = rng.integers(0, high, n, dtype=np.int64)
            if not np.array_equal(np.unique(a), distinct(a)):
                raise SystemExit("distinct differs from np.unique")
            t_np, t_d = best(np.unique, a), best(distinct, a)
            print(f"| {n:,} | {high:,} | {t_np * 1e3:.2f} | {t_d * 1e3:.2f} | "
                  f"{t_np / t_d:.1f} |")


if __name__ == "__main__":
    main()
