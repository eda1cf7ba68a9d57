"""Benchmark: ``nqkit simplify`` vs a naive single-process simplification.

Input: the dev-sized tiled set of ``benchmarks/make_tiled_dev.py`` (5 shards, 7,830
examples, about 894 MB gzipped / 5.8 GB of JSON). Three runs, side by side:

* naive — what the official simplification does, written here: stdlib ``gzip`` line by
  line, ``json.loads`` of the whole line, the record built by dict surgery, ``json.dumps``
  (``ensure_ascii=False``) per line, one process;
* ``nqkit simplify -j 1`` — the same command on one core (the per-core gain);
* ``nqkit simplify`` — the command as a user runs it (one process per shard, both cores).

The nqkit runs are the real command in a subprocess (start-up included). All outputs are
plain ``.jsonl`` and must be byte-identical; the script checks their sha256. Besides wall
time the table gives CPU seconds (all processes): the CPU ratio is the work saved, which
other load on the machine does not blur; the wall-time speed-up is what a user waits.

Usage (from the repository root):

    python benchmarks/make_tiled_dev.py      # once
    python benchmarks/bench_simplify.py [--data bench-data/tiled-dev] [--repeat 3] [--keep]

Each method runs ``--repeat`` times in interleaved rounds and its median is reported.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def naive_simplify(inputs: list[Path], output: Path) -> int:
    """The baseline: parse everything, rebuild the record, dump it; one process."""
    n = 0
    with open(output, "w", encoding="utf-8") as out:
        for path in inputs:
            with gzip.open(path, "rb") as f:
                for line in f:
                    ex = json.loads(line)
                    text = " ".join(t["token"].replace(" ", "_") for t in ex["document_tokens"])
                    for c in ex["long_answer_candidates"]:
                        c.pop("start_byte", None)
                        c.pop("end_byte", None)
                    for a in ex["annotations"]:
                        for span in [a["long_answer"], *a["short_answers"]]:
                            span.pop("start_byte", None)
                            span.pop("end_byte", None)
                    record = {
                        "question_text": ex["question_text"],
                        "example_id": ex["example_id"],
                        "document_url": ex["document_url"],
                        "document_text": text,
                        "long_answer_candidates": ex["long_answer_candidates"],
                        "annotations": ex["annotations"],
                    }
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    n += 1
    return n


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def run_nqkit(inputs: list[Path], output: Path, jobs: int | None) -> None:
    cmd = [sys.executable, "-m", "nqkit", "simplify", *map(str, inputs), "-o", str(output)]
    if jobs is not None:
        cmd += ["-j", str(jobs)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "bench-data" / "tiled-dev")
    ap.add_argument("--work", type=Path, default=ROOT / "bench-data" / "simplify-out",
                    help="where the outputs go (deleted afterwards unless --keep)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--skip-naive", action="store_true", help="time only nqkit")
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds; the median of each method is reported (default 3)")
    args = ap.parse_args(argv)

    inputs = sorted(args.data.glob("nq-dev-*.jsonl.gz"))
    if not inputs:
        sys.exit(f"no shards in {args.data}: run python benchmarks/make_tiled_dev.py first")
    gz_bytes = sum(p.stat().st_size for p in inputs)
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"input: {len(inputs)} shards, {gz_bytes / 1e6:,.0f} MB gzipped; "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}", flush=True)

    runs: list[tuple[str, float, float, Path]] = []  # medians per method
    times: dict[str, list[tuple[float, float]]] = {}

    def cpu_seconds() -> float:
        # This process plus every finished child and grandchild (the pool workers are
        # reaped by the nqkit process, whose totals come to us when it is reaped).
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    def timed(name: str, fn: Callable[[Path], object], out: Path) -> None:
        c0, t0 = cpu_seconds(), time.perf_counter()
        fn(out)
        dt, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        times.setdefault(name, []).append((dt, cpu))
        print(f"  {name}: {dt:.1f} s wall, {cpu:.1f} s CPU", flush=True)

    methods: list[tuple[str, Callable[[Path], object], Path]] = []
    if not args.skip_naive:
        methods.append(("naive (json.loads + json.dumps, 1 process)",
                        lambda o: naive_simplify(inputs, o), args.work / "naive.jsonl"))
    methods.append(("nqkit simplify -j 1", lambda o: run_nqkit(inputs, o, 1),
                    args.work / "nqkit-j1.jsonl"))
    methods.append(("nqkit simplify (both cores)", lambda o: run_nqkit(inputs, o, None),
                    args.work / "nqkit.jsonl"))
    try:
        # Rounds interleave the methods, so that a change of load on the machine touches
        # all of them; each method's median over the rounds is reported.
        for r in range(args.repeat):
            if args.repeat > 1:
                print(f"round {r + 1}/{args.repeat}", flush=True)
            for name, fn, out in methods:
                timed(name, fn, out)
        for name, _, out in methods:
            walls = sorted(t[0] for t in times[name])
            cpus = sorted(t[1] for t in times[name])
            runs.append((name, statistics.median(walls), statistics.median(cpus), out))
        digests = {name: sha256(out) for name, _, _, out in runs}
        identical = len(set(digests.values())) == 1
        first_out = runs[0][3]
        out_bytes = first_out.stat().st_size
        with open(first_out, "rb") as f:
            n_examples = sum(1 for _ in f)
        base, base_cpu = runs[0][1], runs[0][2]
        print()
        width = max(len(r[0]) for r in runs)
        print(f"{'run':<{width}}  {'wall s':>7}  {'CPU s':>7}  {'examples/s':>10}  "
              f"{'speed-up':>8}  {'CPU ratio':>9}")
        print(f"{'-' * width}  {'-' * 7}  {'-' * 7}  {'-' * 10}  {'-' * 8}  {'-' * 9}")
        for name, dt, cpu, _ in runs:
            print(f"{name:<{width}}  {dt:7.1f}  {cpu:7.1f}  {n_examples / dt:10.0f}  "
                  f"{base / dt:7.2f}x  {base_cpu / cpu:8.2f}x")
        if args.repeat > 1:
            print(f"\nmedians of {args.repeat} interleaved rounds; all wall times: " + "; ".join(
                f"{name.split(' (')[0]} " + ", ".join(f"{t[0]:.1f}" for t in times[name])
                for name, _, _ in methods))
        print(f"\n{n_examples:,} examples, {out_bytes / 1e6:,.0f} MB written per run; outputs "
              f"{'byte-identical' if identical else 'DIFFER'} (sha256 {first_out.name}: "
              f"{digests[runs[0][0]][:16]}...); load average after {os.getloadavg()[0]:.2f}")
        return 0 if identical else 1
    finally:
        if not args.keep:
            shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
