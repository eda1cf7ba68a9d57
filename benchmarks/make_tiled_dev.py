"""Build a dev-sized NQ gold set (and predictions for it) from the 10 real dev examples.

The real NQ dev set is 5 shards of about 1,566 examples (about 855 MB gzipped, 6 GB of
JSON); only its first 10 examples are available here (``../shared/data/nq``). This script
tiles them into a set of the same shape:

* 5 shards ``nq-dev-00.jsonl.gz`` ... ``nq-dev-04.jsonl.gz`` of 1,566 examples each: the 10
  real examples repeated in order, example ``i`` (0..7,829 over all shards) being real
  example ``i % 10`` with ``example_id`` renumbered to ``10**15 + i``. Every line is the
  original line byte for byte except for the id digits (the official files are compact
  JSON with sorted keys, and so are these). gzip level 6, one member per shard.
* ``predictions.json``: the official prediction format for those ids, taken from a golden
  prediction file of ``../shared/golden/nq-eval`` (default ``mixed0``: right and wrong
  answers whose scores make the threshold sweep matter) with each prediction copied onto
  every renumbered copy of its example. 7,830 = 783 x 10, so every count of the official
  metrics is 783 times the count on the 10 real examples and every precision, recall, F1
  and threshold equals the golden ``<name>.official.json``, which is copied beside it as
  ``expected.official.json`` to check an evaluation of the tiled set against.
* ``manifest.json``: what was built, from what, with sizes.

Usage (from the repository root; about a minute on 2 cores):

    python benchmarks/make_tiled_dev.py [--out bench-data/tiled-dev] [--predictions mixed0]

``bench-data/`` is gitignored: never commit the output.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared")).resolve()
SAMPLE = SHARED / "data" / "nq" / "nq-dev-sample10.jsonl.gz"
GOLDEN = SHARED / "golden" / "nq-eval"
# Run from a checkout: this repository's nqkit wins over an installed one (also in workers).
sys.path.insert(0, str(ROOT / "src"))

N_SHARDS = 5
PER_SHARD = 1566
ID_BASE = 10**15


def load_templates(sample: Path) -> list[tuple[int, bytes, bytes]]:
    """For each real line: (its example_id, the bytes before the id digits, the bytes after)."""
    from nqkit.io import iter_lines

    out = []
    for lineno, line in iter_lines(sample):
        line = line.rstrip(b"\r\n")
        ex_id = orjson.loads(line)["example_id"]
        key = b'"example_id":' + str(ex_id).encode()
        # A raw `"` never occurs inside a JSON string (it is escaped there), so this key can
        # only be the example's own field; insist on exactly one to be sure.
        if line.count(key) != 1:
            sys.exit(f"{sample}:{lineno}: cannot locate example_id {ex_id} exactly once")
        before, after = line.split(key)
        out.append((ex_id, before + b'"example_id":', after + b"\n"))
    return out


def write_shard(path: str, templates: list[tuple[int, bytes, bytes]], start: int,
                count: int) -> tuple[str, int, int]:
    """Write one shard atomically; returns (path, examples, uncompressed bytes)."""
    from nqkit.io import atomic_output

    n_raw = 0
    # atomic_output gzips `.gz` paths at level 6 with mtime 0 (reproducible bytes).
    with atomic_output(path, "wb") as f:
        for i in range(start, start + count):
            _, before, after = templates[i % len(templates)]
            line = before + str(ID_BASE + i).encode() + after
            f.write(line)
            n_raw += len(line)
    return path, count, n_raw


def write_predictions(out_dir: Path, templates: list[tuple[int, bytes, bytes]],
                      name: str, total: int) -> int:
    from nqkit.io import read_json, write_json

    source = GOLDEN / f"{name}.predictions.json"
    preds = read_json(source)["predictions"]
    by_id = {p["example_id"]: p for p in preds}
    out = []
    for i in range(total):
        real_id = templates[i % len(templates)][0]
        if real_id in by_id:
            out.append({**by_id[real_id], "example_id": ID_BASE + i})
    write_json(out_dir / "predictions.json", {"predictions": out}, indent=False)
    expected = GOLDEN / f"{name}.official.json"
    if expected.exists():
        shutil.copyfile(expected, out_dir / "expected.official.json")
    return len(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench-data" / "tiled-dev",
                    help="output directory (default: bench-data/tiled-dev)")
    ap.add_argument("--predictions", default="mixed0",
                    help="golden prediction file of ../shared/golden/nq-eval to tile "
                    "(default: mixed0)")
    ap.add_argument("--shards", type=int, default=N_SHARDS)
    ap.add_argument("--per-shard", type=int, default=PER_SHARD)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    templates = load_templates(SAMPLE)
    args.out.mkdir(parents=True, exist_ok=True)
    total = args.shards * args.per_shard
    paths = [args.out / f"nq-dev-{s:02d}.jsonl.gz" for s in range(args.shards)]
    # One shard per task; zlib level 6 is the cost, so both cores compress.
    with ProcessPoolExecutor(min(args.jobs, args.shards)) as pool:
        futures = [pool.submit(write_shard, str(p), templates, s * args.per_shard,
                               args.per_shard) for s, p in enumerate(paths)]
        shards = [f.result() for f in futures]
    n_preds = write_predictions(args.out, templates, args.predictions, total)
    gz = sum(p.stat().st_size for p in paths)
    raw = sum(r[2] for r in shards)
    manifest = {
        "source": str(SAMPLE),
        "shards": [{"file": p.name, "examples": n, "json_bytes": b,
                    "gzip_bytes": p.stat().st_size} for p, (_, n, b) in zip(paths, shards,
                                                                            strict=True)],
        "examples": total,
        "example_ids": f"{ID_BASE} + i for i in 0..{total - 1}; example i is real example i % 10",
        "gzip_level": 6,
        "predictions": {"file": "predictions.json", "from": f"{args.predictions}.predictions.json",
                        "count": n_preds,
                        "expected": "expected.official.json (equal when examples % 10 == 0)"},
    }
    from nqkit.io import write_json

    write_json(args.out / "manifest.json", manifest)
    dt = time.perf_counter() - t0
    print(f"wrote {total:,} examples in {args.shards} shards to {args.out}: "
          f"{gz / 1e6:,.0f} MB gzipped, {raw / 1e9:.2f} GB of JSON; "
          f"{n_preds:,} predictions from {args.predictions}; {dt:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
