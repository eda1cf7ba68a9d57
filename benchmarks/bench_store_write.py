"""The passage store's write (``nqkit index build``'s first pass), old and new side by side.

Times :func:`write_store` (runs of simple lines read a block at a time) against
``write_store(..., bulk=False)`` (passage by passage, as ``write_store`` read before) on
one corpus, alternately (slow, fast, slow, fast, ... ``--repeat`` times each, default 2) so that a
machine shared with other jobs loads both alike, and checks that both wrote the same store:
every shard file and offsets file byte for byte, the fingerprint, the count and the shards.
Prints the seconds of every run, the best of each and their ratio.

Usage: python benchmarks/bench_store_write.py --corpus PATH [--shard-size 131072]
       [--repeat 2]
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nqkit.retrieval.passage_store import StoreInfo, write_store  # noqa: E402


def same_store(a: Path, b: Path) -> bool:
    """Both stores hold the same files with the same bytes."""
    names = sorted(p.name for p in (a / "passages").iterdir())
    if names != sorted(p.name for p in (b / "passages").iterdir()):
        return False
    return all((a / "passages" / n).read_bytes() == (b / "passages" / n).read_bytes()
               for n in names)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--shard-size", type=int, default=131_072)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    variants: dict[str, Callable[..., StoreInfo]] = {
        "slow": functools.partial(write_store, bulk=False), "fast": write_store}
    times: dict[str, list[float]] = {k: [] for k in variants}
    infos: dict[str, StoreInfo] = {}
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        for r in range(args.repeat):
            for name, fn in variants.items():
                out = Path(tmp) / name
                shutil.rmtree(out, ignore_errors=True)
                t0 = time.perf_counter()
                infos[name] = fn(args.corpus, out, args.shard_size)
                times[name].append(time.perf_counter() - t0)
                print(f"run {r + 1} {name}: {times[name][-1]:.2f} s", flush=True)
        same = infos["slow"] == infos["fast"] and same_store(Path(tmp) / "slow",
                                                             Path(tmp) / "fast")
    slow, fast = min(times["slow"]), min(times["fast"])
    info = infos["fast"]
    print(f"{info.passages:,} passages, {len(info.shards)} shards, fingerprint "
          f"{info.fingerprint[:12]}")
    print(f"passage by passage: {slow:.2f} s   in blocks: {fast:.2f} s   "
          f"{slow / fast:.1f}x faster   identical stores: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
