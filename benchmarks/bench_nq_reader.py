"""The NQ readers' checks, side by side with another tree: what the checks cost per shard.

Every command that reads NQ original-format pages checks each example's spans against
its page (``nqkit.formats.nq``: ``read_nq`` builds records, ``validate_nq_json`` checks
raw JSON for the conversions, ``simplify`` its own fast decoder). Those checks run on
the 42 GB of NQ train, so they must cost nothing measurable. This script times three
commands over one shard of the tiled dev set (``benchmarks/make_tiled_dev.py``: 1,566
examples, 179 MB gzipped), each in a fresh process:

* ``nqkit simplify SHARD -j 1`` (the simplify fast path);
* ``nqkit baseline first_paragraph --input SHARD`` (``read_nq``: full records);
* ``nqkit convert nq-open SHARD`` (``validate_nq_json`` on the raw JSON).

With ``--baseline-src DIR`` (the ``src`` of another checkout, e.g. ``git archive`` of
main) the same commands run with that tree too, interleaved with this one's, and their
outputs must be byte-identical. Each command runs ``--repeat`` times; medians of CPU
seconds (user + system, start-up included).

With ``--pages`` (and ``--baseline-src``), instead: the readers' own work per page over
the real dev sample (``../shared/data/nq``, 10 pages, no decompression or start-up), each
tree in a fresh process, interleaved: ``read_nq``'s (JSON + records + checks),
``validate_nq_json``'s and ``simplify_line``'s. Steadier than whole commands on a loaded
machine, where their CPU time moves by 5-10% between runs of the same tree.

Usage (from the repository root):

    python benchmarks/make_tiled_dev.py   # once
    python benchmarks/bench_nq_reader.py --baseline-src /tmp/main/src [--repeat 5]
    python benchmarks/bench_nq_reader.py --baseline-src /tmp/main/src --pages [--repeat 9]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS: dict[str, list[str]] = {
    "simplify -j 1": ["simplify", "{shard}", "-o", "{out}.jsonl", "-j", "1"],
    "baseline first_paragraph": ["baseline", "first_paragraph", "--input", "{shard}", "-o",
                                 "{out}.json"],
    "convert nq-open": ["convert", "nq-open", "{shard}", "-o", "{out}.jsonl"],
}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(src: Path, argv: list[str], out: Path) -> tuple[float, str]:
    """CPU seconds (user + system, all threads) of one command in a fresh process, and
    the sha256 of its output. CPU time rather than wall time: on a shared machine other
    jobs blur wall times by 10-20% between runs of the same code."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = _children_cpu()
    subprocess.run([sys.executable, "-m", "nqkit", *argv], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = _children_cpu() - t0
    produced = next(p for p in out.parent.iterdir() if p.name.startswith(out.name))
    digest = hashlib.sha256(produced.read_bytes()).hexdigest()
    produced.unlink()
    return seconds, digest


# One process's measure of the readers' work per page (see --pages): ms of CPU per page.
_PAGES_SCRIPT = """
import gzip, sys, time, orjson
from nqkit.formats.nq import example_from_json, validate_nq_json
from nqkit.formats.simplify import simplify_line
lines = gzip.decompress(open(sys.argv[2], "rb").read()).splitlines()
f = {"read_nq": lambda b: example_from_json(orjson.loads(b), "x"),
     "validate_nq_json": lambda b: validate_nq_json(orjson.loads(b), "x"),
     "simplify_line": lambda b: simplify_line(b, "x")}[sys.argv[1]]
for b in lines:
    f(b)  # warm up
t = time.process_time()
for _ in range(10):
    for b in lines:
        f(b)
print((time.process_time() - t) / (10 * len(lines)) * 1e3)
"""


def pages(trees: dict[str, Path], sample: Path, repeat: int) -> None:
    """The --pages table: medians of ``repeat`` fresh processes per reader and tree."""
    times: dict[tuple[str, str], list[float]] = {}
    readers = ("read_nq", "validate_nq_json", "simplify_line")
    for _ in range(repeat):
        for reader in readers:
            for tree, src in trees.items():
                out = subprocess.run([sys.executable, "-c", _PAGES_SCRIPT, reader, str(sample)],
                                     check=True, capture_output=True, text=True,
                                     env={**os.environ, "PYTHONPATH": str(src)}).stdout
                times.setdefault((reader, tree), []).append(float(out))
    print(f"{sample}: ms of CPU per page, medians of {repeat}")
    print("| reader | " + " | ".join(trees) + (" | now / before |" if len(trees) > 1 else " |"))
    print("|---|" + "---:|" * (len(trees) + (len(trees) > 1)))
    for reader in readers:
        med = {t: statistics.median(times[(reader, t)]) for t in trees}
        row = f"| `{reader}` | " + " | ".join(f"{med[t]:.2f}" for t in trees)
        print(row + (f" | {med['now'] / med['before']:.3f} |" if len(trees) > 1 else " |"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "bench-data" / "tiled-dev")
    ap.add_argument("--baseline-src", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pages", action="store_true",
                    help="time the readers per page on the shared dev sample instead")
    ap.add_argument("--sample", type=Path,
                    default=ROOT.parent / "shared" / "data" / "nq" / "nq-dev-sample10.jsonl.gz")
    args = ap.parse_args()
    if args.pages:
        trees = {"now": ROOT / "src"}
        if args.baseline_src is not None:
            trees = {"before": args.baseline_src.resolve(), **trees}
        pages(trees, args.sample, args.repeat)
        return 0
    shard = args.data / "nq-dev-00.jsonl.gz"
    if not shard.exists():
        sys.exit(f"{shard} not found: run benchmarks/make_tiled_dev.py first")
    trees = {"now": ROOT / "src"}
    if args.baseline_src is not None:
        trees = {"before": args.baseline_src.resolve(), **trees}
    times: dict[tuple[str, str], list[float]] = {}
    digests: dict[tuple[str, str], set[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for name, template in COMMANDS.items():
                for tree, src in trees.items():
                    out = Path(tmp) / "out"
                    argv = [a.format(shard=shard, out=out) for a in template]
                    seconds, digest = run(src, argv, out)
                    times.setdefault((name, tree), []).append(seconds)
                    digests.setdefault((name, tree), set()).add(digest)
    print(f"one shard: {shard} ({shard.stat().st_size / 1e6:.0f} MB), medians of "
          f"{args.repeat}, CPU seconds")
    print("| command | " + " | ".join(trees) + (" | now / before |" if len(trees) > 1 else " |"))
    print("|---|" + "---:|" * (len(trees) + (len(trees) > 1)))
    for name in COMMANDS:
        med = {t: statistics.median(times[(name, t)]) for t in trees}
        row = f"| {name} | " + " | ".join(f"{med[t]:.2f}" for t in trees)
        if len(trees) > 1:
            row += f" | {med['now'] / med['before']:.3f}"
            if digests[(name, "now")] != digests[(name, "before")]:
                row += " (OUTPUTS DIFFER)"
        print(row + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
