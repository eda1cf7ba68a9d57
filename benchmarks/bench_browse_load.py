"""Benchmark: ``nqkit browse`` under concurrent load, through a real server and real sockets.

Starts ``python -m nqkit browse`` (uvicorn, one process) on a free port of 127.0.0.1 over
the real dev sample (``../shared/data/nq/nq-dev-sample10.jsonl.gz``) with the annotator-0
predictions, then sends ``--requests`` GETs, ``--concurrency`` at a time (one thread and
one keep-alive connection each), cycling through a fixed mix of every route: the index
(plain, searched, filtered), every example page, every full-page document (the largest is
about 0.3 MB of HTML), the page wrapper and a static file. Prints latency percentiles,
errors and throughput.

    python benchmarks/bench_browse_load.py [--requests 500] [--concurrency 20] [--cold]

With ``--requests 34 --cold`` every URL is asked once, all rendered from nothing.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NQKIT_SHARED", ROOT.parent / "shared"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _urls(gold: Path) -> list[str]:
    with gzip.open(gold, "rt", encoding="utf-8") as f:
        ids = [json.loads(line)["example_id"] for line in f]
    urls = ["/", "/?q=who", "/?gold=long&long=correct", "/static/style.css"]
    for i in ids:
        urls += [f"/example/{i}", f"/example/{i}/document", f"/example/{i}/page"]
    return urls


def _pct(s: list[float], p: float) -> float:
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--cold", action="store_true",
                    help="no warm-up pass: the first request of each URL renders it")
    args = ap.parse_args()

    gold = SHARED / "data" / "nq" / "nq-dev-sample10.jsonl.gz"
    preds = SHARED / "golden" / "nq-eval" / "annotator0.predictions.json"
    urls = _urls(gold)
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory(prefix="nqkit-bench-load-") as cache:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nqkit", "browse", "--gold", str(gold), "--predictions",
             str(preds), "--port", str(port), "--cache-dir", cache],
            env=env, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit("server did not start: "
                                         + (proc.stderr.read() if proc.stderr else "")) from None
                    time.sleep(0.1)
            jobs: queue.Queue[str] = queue.Queue()
            for k in range(args.requests):
                jobs.put(urls[k % len(urls)])
            times: list[float] = []
            errors: list[str] = []
            lock = threading.Lock()

            def worker() -> None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                while True:
                    try:
                        url = jobs.get_nowait()
                    except queue.Empty:
                        break
                    t = time.perf_counter()
                    try:
                        conn.request("GET", url)
                        r = conn.getresponse()
                        r.read()
                        ok = r.status == 200
                        what = f"{url} -> {r.status}"
                    except (OSError, http.client.HTTPException) as e:
                        ok, what = False, f"{url} -> {e!r}"
                        conn.close()
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    dt = (time.perf_counter() - t) * 1000
                    with lock:
                        times.append(dt)
                        if not ok:
                            errors.append(what)
                conn.close()

            if not args.cold:  # warm-up: one pass over every URL, not counted
                warm = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                for u in urls:
                    warm.request("GET", u)
                    warm.getresponse().read()
                warm.close()
            t0 = time.perf_counter()
            threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            wall = time.perf_counter() - t0
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    s = sorted(times)
    print(f"{len(s)} requests, {args.concurrency} at a time, {len(urls)} distinct URLs "
          f"(real dev sample, 10 examples), one uvicorn process"
          + (", cold (no warm-up)" if args.cold else ""))
    print("| median ms | p90 ms | p99 ms | max ms | errors | requests/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {statistics.median(s):.0f} | {_pct(s, 90):.0f} | {_pct(s, 99):.0f} | "
          f"{s[-1]:.0f} | {len(errors)} | {len(s) / wall:.0f} |")
    for e in errors[:3]:
        print("error:", e)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
