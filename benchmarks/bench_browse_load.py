"""Benchmark: ``nqkit browse`` under concurrent load, through a real server and real sockets.

Starts ``python -m nqkit browse`` (uvicorn, one process) on a free port of 127.0.0.1 and
sends ``--requests`` GETs, ``--concurrency`` at a time (one thread and one keep-alive
connection each), cycling through a fixed mix of the view's routes. Prints latency
percentiles, errors and throughput, one table row per view.

Views (``--views``, comma-separated, run one after the other in one session):

* ``nq`` (default) — the real NQ dev sample (``nq-dev-sample10.jsonl.gz``) with the
  annotator-0 predictions: the index (plain, searched, filtered), every example page,
  every full-page document (the largest about 0.3 MB of HTML), the page wrapper and a
  static file;
* ``nq-open`` — NQ-open dev (3,610 questions) with the golden ``mixed`` predictions;
* ``ambigqa`` — AmbigNQ dev (2,002 questions) with the golden ``qa_edited`` predictions
  (question-answer pairs);
* ``pair`` — two NQ-open systems side by side (``first_answer`` and ``mixed``);
* ``retrieval`` — a BM25 run of the 3,610 NQ-open dev questions (``dpr/nq-test.qa.tsv``)
  over the 3,349 real passages, 100 passages each, as DPR results JSON (232 MB);
* ``retrieval-pair`` — that run and a second BM25 run (k1 1.5, b 0.75) side by side, as
  TREC runs with the passages and the gold passages of the NQ-open oracle file (qrels);

for the open views: the index (plain, searched, filtered, sorted, a later page), a static
file, and 100 question pages spread over the set, half of them within a filter (their
next/previous follow it).

The retrieval runs are made first, in a temporary directory, by the project's own
commands (``make_passages.py``, ``nqkit index build``, ``nqkit retrieve``, ``nqkit convert
qrels``; about 30 s).

    python benchmarks/bench_browse_load.py
        [--views nq,nq-open,ambigqa,pair,retrieval,retrieval-pair]
        [--requests 500] [--concurrency 20] [--cold]

With ``--cold`` no warm-up pass: the first request of each URL renders it.
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


def _open_urls(index: list[str], keys: list[str], within: str) -> list[str]:
    """The index URLs, a static file and 100 question pages spread over ``keys``, every
    other one within the filter ``within``."""
    step = max(1, len(keys) // 100)
    items = [f"/qid/{k}" + (f"?{within}" if n % 2 else "")
             for n, k in enumerate(keys[::step][:100])]
    return [*index, "/static/style.css", *items]


def _view(name: str) -> tuple[list[str], list[str], str]:
    """``nqkit browse`` arguments, URLs and a description of one view."""
    data, golden = SHARED / "data", SHARED / "golden"
    if name == "nq":
        gold = data / "nq" / "nq-dev-sample10.jsonl.gz"
        preds = golden / "nq-eval" / "annotator0.predictions.json"
        return (["--gold", str(gold), "--predictions", str(preds)], _urls(gold),
                "NQ, real dev sample, 10 examples")
    if name in ("nq-open", "pair"):
        gold = data / "nq-open" / "NQ-open.dev.jsonl"
        keys = [str(k) for k in range(3610)]
        if name == "nq-open":
            args = ["--predictions", str(golden / "nq-open" / "mixed.predictions.jsonl")]
            index = ["/", "/?q=who", "/?verdict=wrong", "/?conventions=disagree",
                     "/?sort=prediction&desc=1", "/?page=37"]
            within, what = "verdict=wrong", "NQ-open dev, 3,610 questions"
        else:
            args = ["--predictions", str(golden / "nq-open" / "first_answer.predictions.jsonl"),
                    str(golden / "nq-open" / "mixed.predictions.jsonl")]
            index = ["/", "/?q=who", "/?change=a-better", "/?sort=position", "/?page=30",
                     "/?a_verdict=correct&b_verdict=wrong"]
            within, what = "change=a-better", "NQ-open dev side by side, 3,610 questions"
        return (["--task", "nq-open", "--gold", str(gold), *args],
                _open_urls(index, keys, within), what)
    if name == "ambigqa":
        gold = data / "ambignq" / "dev_light.json"
        keys = [ex["id"] for ex in json.loads(gold.read_text(encoding="utf-8"))]
        preds = golden / "ambigqa" / "qa_edited.predictions.json"
        index = ["/", "/?q=who", "/?kind=multi&f1=partial", "/?sort=F1+bleu4&desc=1",
                 "/?page=20"]
        return (["--task", "ambigqa", "--gold", str(gold), "--predictions", str(preds)],
                _open_urls(index, keys, "kind=multi"), "AmbigNQ dev, 2,002 questions")
    if name in ("retrieval", "retrieval-pair"):
        r = _retrieval_runs()
        keys = [str(k) for k in range(3610)]
        if name == "retrieval":
            args = ["--predictions", str(r["json"])]
            index = ["/", "/?q=who", "/?top20=miss", "/?first=2-5",
                     "/?sort=first_hit&desc=1", "/?page=37"]
            within, what = "top20=hit", "BM25 run, DPR JSON, 3,610 questions x 100 passages"
        else:
            args = ["--predictions", str(r["trec"]), str(r["trec2"]), "--passages",
                    str(r["passages"]), "--qrels", str(r["qrels"])]
            index = ["/", "/?q=who", "/?change=a-better", "/?sort=position", "/?page=30",
                     "/?a_top20=miss&b_top20=hit"]
            within, what = "differs=differ", "two BM25 TREC runs side by side, with qrels"
        return (["--task", "retrieval", "--gold", str(r["qa"]), *args],
                _open_urls(index, keys, within), what)
    raise SystemExit(f"unknown view {name!r}: choose from nq, nq-open, ambigqa, pair, "
                     "retrieval, retrieval-pair")


_RUNS: dict[str, Path] = {}


def _retrieval_runs() -> dict[str, Path]:
    """Two BM25 runs of NQ-open dev over the real passages, made once per invocation."""
    if _RUNS:
        return _RUNS
    import atexit
    import shutil

    d = Path(tempfile.mkdtemp(prefix="nqkit-bench-runs-"))
    atexit.register(shutil.rmtree, d, True)
    qa = SHARED / "data" / "dpr" / "nq-test.qa.tsv"
    r = {"qa": qa, "passages": d / "real.tsv", "json": d / "bm25.json",
         "trec": d / "bm25.trec", "trec2": d / "bm25-k1.5-b0.75.trec",
         "qrels": d / "oracle.qrels"}
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}

    def run(*argv: str) -> None:
        subprocess.run([sys.executable, *argv], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    run(str(ROOT / "benchmarks" / "make_passages.py"), "-o", str(r["passages"]))
    for idx, k1b, outs in ((d / "idx", ("0.9", "0.4"), ["-o", str(r["json"]), "--trec",
                                                         str(r["trec"])]),
                           (d / "idx2", ("1.5", "0.75"), ["--trec", str(r["trec2"])])):
        run("-m", "nqkit", "index", "build", "--corpus", str(r["passages"]), "--retriever",
            "bm25", "-o", str(idx), "--cluster", "none", "--k1", k1b[0], "--b", k1b[1])
        run("-m", "nqkit", "retrieve", "--index", str(idx), "--questions", str(qa),
            *outs, "--cluster", "none")
    run("-m", "nqkit", "convert", "qrels", "--oracle",
        str(SHARED / "data" / "nq-open" / "nq-open-oracle.jsonl.gz"), "--questions", str(qa),
        "--passages", str(r["passages"]), "-o", str(r["qrels"]))
    _RUNS.update(r)
    return _RUNS


def _pct(s: list[float], p: float) -> float:
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--cold", action="store_true",
                    help="no warm-up pass: the first request of each URL renders it")
    ap.add_argument("--views", default="nq",
                    help="comma-separated: nq, nq-open, ambigqa, pair, retrieval, "
                    "retrieval-pair (default nq)")
    args = ap.parse_args()
    print(f"{args.requests} requests per view, {args.concurrency} at a time, one uvicorn "
          "process" + (", cold (no warm-up)" if args.cold else ""))
    print("| view | URLs | start s | median ms | p90 ms | p99 ms | max ms | errors | "
          "requests/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.views.split(","):
        _run(name.strip(), args)
    return 0


def _run(name: str, args: argparse.Namespace) -> None:
    browse_args, urls, what = _view(name)
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory(prefix="nqkit-bench-load-") as cache:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "nqkit", "browse", *browse_args, "--port", str(port),
             "--cache-dir", cache],
            env=env, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 300
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                    conn.request("HEAD", "/")  # answered once the view is loaded
                    conn.getresponse().read()
                    conn.close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit("server did not start: "
                                         + (proc.stderr.read() if proc.stderr else "")) from None
                    time.sleep(0.1)
            started = time.perf_counter() - start
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
    print(f"| {name} ({what}) | {len(urls)} | {started:.1f} | {statistics.median(s):.0f} | "
          f"{_pct(s, 90):.0f} | {_pct(s, 99):.0f} | {s[-1]:.0f} | {len(errors)} | "
          f"{len(s) / wall:.0f} |", flush=True)
    for e in errors[:3]:
        print("error:", e)


if __name__ == "__main__":
    raise SystemExit(main())
