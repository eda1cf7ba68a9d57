"""SHA-256 of everything `--bm25-method lucene-exact` writes, to prove a change keeps the bytes.

Builds lucene-exact indexes of one corpus (one process and a Dask LocalCluster of 2
workers, each at the default shard size and at ``--shard-size``), retrieves the NQ-open
dev questions (DPR ``nq-test.qa.tsv``) from each (``--trec`` and ``-o`` DPR results) and
records the SHA-256 of every index file, of ``params.json``'s ``files``, ``facts`` (peak
memory left out) and ``digest``, and of every run file, with the wall time of each
step. ``--record FILE`` writes them; ``--compare FILE`` checks them against a record
(exit 1 on any difference). ``--src DIR`` runs the nqkit of another source tree, so a
record can be made with the code before a change:

    git archive BASE src | tar -x -C bench-data/base
    python benchmarks/check_lucene_bytes.py --corpus C.tsv --src bench-data/base/src \\
        --record bench-data/bytes-base.json
    python benchmarks/check_lucene_bytes.py --corpus C.tsv --compare bench-data/bytes-base.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared"))
QUESTIONS = SHARED / "data" / "dpr" / "nq-test.qa.tsv"
sys.path.insert(0, str(ROOT / "src"))

from nqkit.io.content import sha256_file as sha  # noqa: E402


def run(src: Path, *args: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "nqkit", *args], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = p.communicate()
    wall = time.perf_counter() - t0
    if p.returncode:
        sys.exit(f"failed: nqkit {' '.join(args)}\n{err[-2000:]}")
    return {"wall": round(wall, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--out", default=str(ROOT / "bench-data" / "bytes"))
    ap.add_argument("--shard-size", type=int, default=30_000)
    ap.add_argument("--record")
    ap.add_argument("--compare")
    args = ap.parse_args()
    src, out = Path(args.src).resolve(), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    hashes: dict[str, str] = {}
    times: dict[str, dict[str, float]] = {}
    modes = {"none": ["--cluster", "none"], "dask2": ["--cluster", "local", "--workers", "2"]}
    for shard_size in (None, args.shard_size):
        for mode, cl in modes.items():
            name = f"{mode}-{shard_size or 'default'}"
            d = out / f"ix-{name}"
            if d.exists():
                shutil.rmtree(d)
            size = ["--shard-size", str(shard_size)] if shard_size else []
            times[f"build {name}"] = run(src, "index", "build", "--corpus", args.corpus,
                                         "--retriever", "bm25", "--bm25-method",
                                         "lucene-exact", "-o", str(d), *size, *cl)
            for f in sorted(p for p in d.rglob("*") if p.is_file() and p.name != "params.json"):
                hashes[f"{name}/{f.relative_to(d).as_posix()}"] = sha(f)
            params = json.loads((d / "params.json").read_text())
            facts = {k: v for k, v in params["facts"].items() if k != "peak_rss_mb"}
            hashes[f"{name}/params:files+facts+digest"] = hashlib.sha256(json.dumps(
                [params["files"], facts, params["digest"]], sort_keys=True).encode()).hexdigest()
            trec, res = out / f"{name}.trec", out / f"{name}.json"
            times[f"retrieve {name}"] = run(src, "retrieve", "--index", str(d), "--questions",
                                            str(QUESTIONS), "--hits", "100", "--trec",
                                            str(trec), "-o", str(res), *cl)
            hashes[f"{name}.trec"] = sha(trec)
            hashes[f"{name}.json"] = sha(res)
    for k, v in times.items():
        print(f"{k}: {v['wall']:.1f} s", file=sys.stderr)
    if args.record:
        Path(args.record).write_text(json.dumps({"hashes": hashes, "times": times}, indent=1))
    if args.compare:
        ref = json.loads(Path(args.compare).read_text())["hashes"]
        bad = sorted(k for k in set(ref) | set(hashes) if ref.get(k) != hashes.get(k))
        print(f"{len(hashes)} hashes, {len(ref)} recorded: "
              f"{'all identical' if not bad else f'{len(bad)} DIFFER: ' + ', '.join(bad[:10])}")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
