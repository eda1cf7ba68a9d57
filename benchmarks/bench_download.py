"""Benchmark: ``nqkit data get`` throughput against a local server, and resume after a
dropped connection.

Input, built here from real data (never committed): ``--shards`` NQ-dev-like shards of
about ``--shard-mb`` MB each, every shard the real ``nq-dev-sample10.jsonl.gz`` repeated
as concatenated gzip members (a valid gzip file that decompresses to the sample's lines
repeated). They are served from memory by the Range-aware test server of
``tests/http_mirror.py`` on 127.0.0.1, under the official NQ paths, and fetched through
``--mirror`` like a lab without internet would.

Throughput, side by side (interleaved rounds, medians):

* ``urllib -> /dev/null`` — the server and loopback alone (no disk, no hashing);
* ``urllib -> file`` — what a plain downloader does (wget-like: write, nothing checked);
* ``urllib -> file, then md5 + sha256`` — the careful manual way: download, then
  ``md5sum`` and ``sha256sum`` (here hashlib) over each file;
* ``nqkit --jobs 1`` — ``nqkit.datasets.download.fetch``: ``.part`` file, md5 + sha256
  while writing, fsync, size and md5 verified, atomic rename, record written;
* ``nqkit --jobs 4`` — the same, four files at once (the default).

Resume: one shard whose connection the server drops at half the file. nqkit retries with
``Range`` and receives only the missing half (total bytes received = file size), where a
downloader without resume receives the first half twice (1.5x). A second case stops the
process's transfer entirely at the drop (``retries=0``: a one-line error, the ``.part``
kept) and runs again: the second run fetches only the rest. Every result is checked
byte-identical (md5) to the served file.

A dataset already on disk (``--present``, also run after the above): what a second
``nqkit data get`` and a read by registry name (``local_paths``) cost when the files'
stamps are unchanged (no byte read), when every stamp changed (``touch``: each file is
hashed again, md5 + sha256, and the new stamp recorded), and what ``nqkit data verify``
costs (always reads), beside reading the files (``cat > /dev/null``) and hashing them
one after the other with hashlib (``md5sum`` then ``sha256sum``), on the tiled shards
and on the largest real sample of ../shared (SQuAD dev, 4.9 MB). The files are in the
page cache: this is the CPU cost of checking, the disk's speed aside.

Usage (from the repository root):

    python benchmarks/bench_download.py [--shards 5] [--shard-mb 40] [--repeat 3] [--present]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from nqkit.datasets.download import DownloadError, fetch  # noqa: E402
from nqkit.datasets.integrity import verify  # noqa: E402
from nqkit.datasets.local import dataset_dir  # noqa: E402
from nqkit.datasets.names import local_paths  # noqa: E402
from nqkit.datasets.registry import DataFile, Dataset  # noqa: E402

from http_mirror import Fault, MirrorServer  # noqa: E402

SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared")).resolve()
OFFICIAL = "https://storage.googleapis.com/natural_questions/v1.0/dev/"


def build_shards(n: int, shard_mb: float) -> dict[str, bytes]:
    sample = (SHARED / "data" / "nq" / "nq-dev-sample10.jsonl.gz").read_bytes()
    copies = max(1, round(shard_mb * 1e6 / len(sample)))
    return {f"nq-dev-{i:02d}.jsonl.gz": sample * copies for i in range(n)}


def plain_download(urls: list[str], out_dir: Path | None) -> int:
    n = 0
    for url in urls:
        with urllib.request.urlopen(url, timeout=60) as r:
            f = open(out_dir / url.rsplit("/", 1)[1], "wb") if out_dir else None  # noqa: SIM115
            try:
                while block := r.read(1 << 20):
                    n += len(block)
                    if f:
                        f.write(block)
            finally:
                if f:
                    f.close()
    return n


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed_cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds (all threads of this process, the server's included: the
    same for every run, and what other load on the machine does not blur)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def present_costs(label: str, ds: Dataset, home: Path, repeat: int) -> None:
    """Checking a dataset already on disk, side by side (see the module docstring)."""
    paths = [dataset_dir(ds, home) / f.name for f in ds.files]
    total = sum(p.stat().st_size for p in paths)

    def touch() -> None:
        for p in paths:
            st = p.stat()
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))

    def read_only() -> None:
        for p in paths:
            with open(p, "rb") as f:
                while f.read(1 << 20):
                    pass

    def hash_both() -> None:
        for p in paths:
            for h in (hashlib.md5(), hashlib.sha256()):
                with open(p, "rb") as f:
                    while block := f.read(1 << 20):
                        h.update(block)

    def get_present() -> None:
        assert all(g.status == "present" for g in fetch(ds, home=home, progress=False))

    def verify_all() -> None:
        assert all(c.status == "ok" for c in verify(ds, home=home, progress=False))

    # (setup not timed, the timed run)
    runs: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "read the files (cat > /dev/null)": (lambda: None, read_only),
        "md5 then sha256 of each file (hashlib)": (lambda: None, hash_both),
        "data get, present, stamps unchanged": (lambda: None, get_present),
        "read by name (local_paths), stamps unchanged": (lambda: None,
                                                         lambda: local_paths(ds, home=home)),
        "data get, present, every stamp changed": (touch, get_present),
        "read by name (local_paths), every stamp changed": (
            touch, lambda: local_paths(ds, home=home)),
        "data verify (always reads)": (lambda: None, verify_all),
    }
    get_present()  # the record holds the current stamps
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeat):
        for name, (setup, fn) in runs.items():
            setup()
            times[name].append(timed(fn))
    ref = statistics.median(times["md5 then sha256 of each file (hashlib)"])
    print(f"\n{label}: {len(paths)} file(s), {total / 1e6:.1f} MB, already on disk "
          f"(median of {repeat})")
    print("| check | median s | MB/s | vs md5 then sha256 |\n|---|---:|---:|---:|")
    for name, ts in times.items():
        m = statistics.median(ts)
        rate = f"{total / 1e6 / m:.0f}" if m > 0 else "-"
        print(f"| {name} | {m:.4f} | {rate} | {m / ref:.3f}x |")


def squad_costs(work: Path, repeat: int) -> None:
    """The largest real sample of ../shared (SQuAD dev), fetched from a file:// URL."""
    src = SHARED / "data" / "squad" / "dev-v1.1.json"
    data = src.read_bytes()
    ds = Dataset(name="bench/squad-dev", title="SQuAD dev", format="squad", files=(
        DataFile(src.name, src.as_uri(), hashlib.md5(data).hexdigest(), len(data)),))
    home = work / "home-squad"
    fetch(ds, home=home, progress=False)
    present_costs("SQuAD dev 1.1 (the largest real sample)", ds, home, max(repeat, 5))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shards", type=int, default=5)
    ap.add_argument("--shard-mb", type=float, default=40.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--present", action="store_true",
                    help="only the costs of checking a dataset already on disk")
    args = ap.parse_args()

    shards = build_shards(args.shards, args.shard_mb)
    total = sum(len(b) for b in shards.values())
    md5s = {k: hashlib.md5(v).hexdigest() for k, v in shards.items()}
    files = tuple(DataFile(name, OFFICIAL + name, md5s[name], len(data))
                  for name, data in shards.items())
    ds = Dataset(name="bench/nq-dev", title="tiled NQ dev sample", format="nq", files=files)
    served = {"/natural_questions/v1.0/dev/" + k: v for k, v in shards.items()}
    work = Path(tempfile.mkdtemp(prefix="nqkit-bench-download-"))
    print(f"{len(shards)} shards, {total / 1e6:.1f} MB in all, served from memory on "
          f"127.0.0.1; {args.repeat} interleaved rounds", file=sys.stderr)
    try:
        with MirrorServer(served, chunk=1 << 20) as server:
            urls = [server.url + p for p in served]

            def nqkit_run(jobs: int) -> Callable[[], object]:
                def run() -> object:
                    home = work / f"home-{jobs}"
                    shutil.rmtree(home, ignore_errors=True)
                    got = fetch(ds, home=home, mirror=server.url, jobs=jobs, progress=False)
                    assert [g.md5 for g in got] == [md5s[f.name] for f in files]
                    return got
                return run

            def to_file() -> object:
                out = work / "plain"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                return plain_download(urls, out)

            def to_file_then_hash() -> object:
                to_file()
                for name in shards:  # what a careful user runs next: md5sum, sha256sum
                    for h in (hashlib.md5(), hashlib.sha256()):
                        with open(work / "plain" / name, "rb") as f:
                            while block := f.read(1 << 20):
                                h.update(block)
                    assert h.hexdigest() == hashlib.sha256(shards[name]).hexdigest()
                return None

            if args.present:
                nqkit_run(1)()
                present_costs("tiled NQ dev shards", ds, work / "home-1", args.repeat)
                squad_costs(work, args.repeat)
                return 0
            runs: dict[str, Callable[[], object]] = {
                "urllib -> /dev/null": lambda: plain_download(urls, None),
                "urllib -> file (no checks)": to_file,
                "urllib -> file, then md5 + sha256 of each file": to_file_then_hash,
                "nqkit --jobs 1 (verified)": nqkit_run(1),
                "nqkit --jobs 4 (verified)": nqkit_run(4),
            }
            times: dict[str, list[float]] = {k: [] for k in runs}
            cpus: dict[str, list[float]] = {k: [] for k in runs}
            for _ in range(args.repeat):
                for name, fn in runs.items():
                    wall, cpu = timed_cpu(fn)
                    times[name].append(wall)
                    cpus[name].append(cpu)
            ref = "urllib -> file, then md5 + sha256 of each file"
            base, base_cpu = statistics.median(times[ref]), statistics.median(cpus[ref])
            print("\n| run | median wall s | MB/s | CPU s | wall vs download-then-hash | "
                  "CPU vs download-then-hash |\n|---|---:|---:|---:|---:|---:|")
            for name, ts in times.items():
                m, c = statistics.median(ts), statistics.median(cpus[name])
                print(f"| {name} | {m:.2f} | {total / 1e6 / m:.0f} | {c:.2f} | "
                      f"{base / m:.2f}x | {base_cpu / c:.2f}x |")
            print("\nall rounds (s): " + "; ".join(
                f"{k}: {', '.join(f'{t:.2f}' for t in v)}" for k, v in times.items()))

            # resume after a dropped connection
            first = files[0]
            path = "/natural_questions/v1.0/dev/" + first.name
            one = Dataset(name="bench/one", title="one shard", format="nq", files=(first,))
            half = first.size // 2 if first.size else 0
            home = work / "resume"
            clean_t = timed(lambda: fetch(one, home=home / "clean", mirror=server.url,
                                          progress=False))
            server.faults[path] = Fault(drops=[half])
            server.log.clear()
            start = time.perf_counter()
            (item,) = fetch(one, home=home / "drop", mirror=server.url, backoff=0,
                            progress=False)
            drop_t = time.perf_counter() - start
            assert item.md5 == first.md5
            requests = [r for _, r, _ in server.log]
            print(f"\nresume after a dropped connection ({first.size / 1e6:.1f} MB shard, "
                  f"dropped at {half:,} bytes):")
            print("| case | s | requests | bytes received | vs file size |")
            print("|---|---:|---:|---:|---:|")
            print(f"| no drop | {clean_t:.2f} | 1 | {first.size:,} | 1.00x |")
            print(f"| drop, nqkit retries with Range ({requests}) | {drop_t:.2f} | "
                  f"{len(requests)} | {item.received:,} | {item.received / first.size:.2f}x |")
            print(f"| drop, a downloader without resume (computed) | - | 2 | "
                  f"{first.size + half:,} | {(first.size + half) / first.size:.2f}x |")

            server.faults[path] = Fault(drops=[half])
            server.log.clear()
            try:
                fetch(one, home=home / "twice", mirror=server.url, retries=0, progress=False)
                raise AssertionError("the drop should have stopped the first run")
            except DownloadError as e:
                message = str(e)
            start = time.perf_counter()
            (again,) = fetch(one, home=home / "twice", mirror=server.url, progress=False)
            again_t = time.perf_counter() - start
            assert again.md5 == first.md5
            print(f"| run stopped at the drop (retries 0), then run again | {again_t:.2f} | "
                  f"{len(server.log)} | {again.received:,} (kept {again.resumed_from:,}) | "
                  f"{again.received / first.size:.2f}x |")
            print(f"\nfirst run's error: nqkit: error: {message}")
            present_costs("tiled NQ dev shards", ds, work / "home-1", args.repeat)
            squad_costs(work, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
