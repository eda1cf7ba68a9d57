"""Long work is visible (issue 30): every long step shows its progress on stderr.

On a terminal a tqdm bar; anywhere else (a log, CI) a plain line at most every
``nqkit.report.PLAIN_INTERVAL`` seconds, the first only after that long, so a short run
prints nothing more. The tests set the interval to 0 through that module constant (no
test waits or measures time) and look for the lines of the steps themselves; stdout, the
files written and the numbers stay those of a run at the default interval.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

import nqkit.report
from nqkit.cli import main
from nqkit.report import plain_line, progress, progress_bar

from conftest import require, shared_file, small_reqa_task

# a progress line off a terminal: "nqkit: DESC: 12,000/21,000 (57%), 41 s" or, without a
# total, "nqkit: DESC: 1,234 passages, 41 s"
LINE = re.compile(r"^nqkit: (?P<desc>.+?): (?P<done>[\d,]+(?:/[\d,]+ \(\d+%\)| \w+)), "
                  r"[\d,]+ s$")


def _lines(err: str) -> list[tuple[str, str]]:
    """(desc, count) of every progress line of ``err``."""
    return [(m["desc"], m["done"]) for m in map(LINE.match, err.splitlines()) if m]


@pytest.fixture
def every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A progress line at every step, from the first (the interval set to 0)."""
    monkeypatch.setattr(nqkit.report, "PLAIN_INTERVAL", 0.0)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# ------------------------------------------------------------------------- the helper

def test_off_a_terminal_each_step_is_one_plain_line(every_step: None) -> None:
    out = io.StringIO()
    assert list(progress(range(3), desc="encoding passages", file=out)) == [0, 1, 2]
    lines = out.getvalue().splitlines()
    assert [line.rsplit(", ", 1)[0] for line in lines] == [
        "nqkit: encoding passages: 0/3 (0%)", "nqkit: encoding passages: 1/3 (33%)",
        "nqkit: encoding passages: 2/3 (66%)", "nqkit: encoding passages: 3/3 (100%)"]
    assert all(LINE.match(line) for line in lines)
    assert "\r" not in out.getvalue()  # lines for a log, no bar redrawn in place


def test_a_short_step_prints_nothing_at_the_default_interval() -> None:
    assert nqkit.report.PLAIN_INTERVAL == 10.0
    out = io.StringIO()
    assert sum(progress(range(10_000), desc="x", file=out)) == sum(range(10_000))
    with progress_bar(desc="y", total=10, unit="B", unit_scale=True, file=out) as bar:
        bar.reset(total=100)  # a download learning its size: no line before the interval
        bar.update(50)
    assert out.getvalue() == ""


def test_on_a_terminal_it_is_a_tqdm_bar() -> None:
    out = _Terminal()
    assert list(progress(range(3), desc="encoding passages", file=out)) == [0, 1, 2]
    assert "\r" in out.getvalue() and "encoding passages" in out.getvalue()


@pytest.mark.parametrize(("d", "line"), [
    ({"n": 12_000, "total": 21_000, "unit": "passage", "unit_scale": False},
     "nqkit: encoding passages: 12,000/21,000 (57%), 41 s"),
    ({"n": 1_234_567, "total": None, "unit": "passage", "unit_scale": False},
     "nqkit: encoding passages: 1,234,567 passages, 41 s"),
    ({"n": 1, "total": None, "unit": "passage", "unit_scale": False},
     "nqkit: encoding passages: 1 passage, 41 s"),
    ({"n": 7, "total": None, "unit": "q", "unit_scale": False},
     "nqkit: encoding passages: 7 q, 41 s"),
    ({"n": 5, "total": 4, "unit": "it", "unit_scale": False},  # past a wrong total
     "nqkit: encoding passages: 5 it, 41 s"),
    ({"n": 1_200_000_000, "total": 3_000_000_000, "unit": "B", "unit_scale": True},
     "nqkit: encoding passages: 1.20GB/3.00GB (40%), 41 s"),
])
def test_plain_line(d: dict[str, object], line: str) -> None:
    assert plain_line({**d, "prefix": "encoding passages", "elapsed": 41.4,
                       "unit_divisor": 1000}) == line


# ------------------------------------------------------------------------- dense index

@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nqkit.retrieval.corpus import Passage, write_passages

    path = tmp_path_factory.mktemp("progress") / "tiny.tsv"
    write_passages(path, [Passage(str(i), f"passage {i} about the river number {i}",
                                  f"Title {i}") for i in range(1, 11)])
    return path


def test_a_dense_index_build_shows_its_encoding(corpus: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    require("sentence_transformers")
    argv = ["index", "build", "--passages", str(corpus), "--retriever", "dense",
            "--device", "cpu", "--cluster", "none", "--format", "json"]
    assert main([*argv, "-o", str(tmp_path / "quiet")]) == 0
    quiet = capsys.readouterr()
    assert _lines(quiet.err) == []  # a short build at the default interval: no line
    monkeypatch.setattr(nqkit.report, "PLAIN_INTERVAL", 0.0)
    assert main([*argv, "-o", str(tmp_path / "shown")]) == 0
    shown = capsys.readouterr()
    lines = _lines(shown.err)
    assert ("encoding passages", "10/10 (100%)") in lines  # counted passage by passage
    assert ("storing passages", "10 passages") in lines
    # stdout is one JSON document, and the index the same bytes
    a, b = json.loads(quiet.out), json.loads(shown.out)
    assert a["digest"] == b["digest"] and a["fingerprint"] == b["fingerprint"]
    # the questions are encoded with their own display too
    qa = tmp_path / "qa.tsv"
    qa.write_text("which river is number three\t['3']\n", encoding="utf-8")
    assert main(["retrieve", "--index", str(tmp_path / "shown"), "--gold", str(qa),
                 "--hits", "3", "--device", "cpu", "--cluster", "none", "--eval"]) == 0
    assert ("encoding questions", "1/1 (100%)") in _lines(capsys.readouterr().err)


def test_a_dense_index_build_on_the_default_cluster_shows_its_encoding(
        corpus: Path, tmp_path: Path, every_step: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the default --cluster is a local Dask cluster: the passages are encoded by worker
    # processes, whose counts the client shows (a one-shard corpus is one long job)
    require("dask.distributed")
    require("sentence_transformers")
    assert main(["index", "build", "--passages", str(corpus), "--retriever", "dense",
                 "--device", "cpu", "-o", str(tmp_path / "ix")]) == 0
    lines = _lines(capsys.readouterr().err)
    assert ("encoding passages", "10/10 (100%)") in lines
    assert not [d for d, _ in lines if "shard" in d]  # counted by passages, not by shards


class _Watch(io.StringIO):
    """stderr that creates ``marker`` once a progress line shows ``count`` units."""

    def __init__(self, marker: Path, counts: tuple[str, ...]) -> None:
        super().__init__()
        self.marker, self.counts = marker, counts

    def write(self, s: str) -> int:
        if any(f": {c}/" in s for c in self.counts):
            self.marker.touch()
        return super().write(s)


def test_dask_workers_report_units_while_their_jobs_run(
        tmp_path: Path, every_step: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each job counts 3 of its 5 units, then waits until the client's display has shown
    # a count only the workers' reports can make (3 or 6 of 10, before any job ended):
    # the jobs end (and the test passes) only if the reports reach the client while they
    # run. Deterministic: no sleep decides anything; a lost report is a job timing out.
    require("dask.distributed")
    from nqkit.cluster import advance, open_cluster

    marker = tmp_path / "shown"

    def job(path: str) -> str:
        import time as _time
        from pathlib import Path as _Path

        advance(3)
        deadline = _time.monotonic() + 120
        while not _Path(path).exists():
            if _time.monotonic() > deadline:
                return "the client never showed the reported units"
            _time.sleep(0.05)
        advance(2)
        return "ok"

    watch = _Watch(marker, ("3", "6"))
    monkeypatch.setattr("sys.stderr", watch)
    with open_cluster("local", workers=2) as cluster:
        assert cluster.map(job, [str(marker)] * 2, desc="counting", sizes=[5, 5],
                           unit="unit") == ["ok", "ok"]
    lines = _lines(watch.getvalue())
    assert ("counting", "10/10 (100%)") in lines
    assert {c for _, c in lines} & {"3/10 (30%)", "6/10 (60%)"}


def test_in_process_jobs_report_units_and_end_at_their_size(
        tmp_path: Path, every_step: None, capsys: pytest.CaptureFixture[str]) -> None:
    from nqkit.cluster import advance, open_cluster

    def job(n: int) -> int:
        advance(n)  # a job may report more than its size (capped) or less (topped up)
        return n

    with open_cluster("none") as cluster:
        assert cluster.map(job, [1, 9], desc="counting", sizes=[4, 4], unit="unit") == [1, 9]
    assert [c for _, c in _lines(capsys.readouterr().err)] == [
        "0/8 (0%)", "1/8 (12%)", "4/8 (50%)", "8/8 (100%)"]
    advance(5)  # outside a job: nothing to count, nothing raised


def test_reqa_run_shows_its_encoding(tmp_path: Path, every_step: None,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    require("sentence_transformers")
    task = small_reqa_task(tmp_path / "task")
    assert main(["reqa", "run", "--gold", str(task), "--retriever", "dense", "--device",
                 "cpu", "--no-embedding-cache", "--no-per-item"]) == 0
    descs = {desc: done for desc, done in _lines(capsys.readouterr().err)}
    n, q = (len((task / name).read_text(encoding="utf-8").splitlines())
            for name in ("index.jsonl", "queries.jsonl"))
    assert descs["encoding answers"] == f"{n}/{n} (100%)"
    assert descs["encoding questions"] == f"{q}/{q} (100%)"


# ------------------------------------------------------------------------- comparisons

def _runs(tmp_path: Path) -> list[str]:
    """Three retrieval runs over five real questions: the positive passage last, first
    and second of four."""
    records = json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
                         .read_text())
    paths = []
    for name, at in (("last", 3), ("first", 0), ("second", 1)):
        out = []
        for r in records:
            ctxs = r["hard_negative_ctxs"][:3]
            ctxs.insert(at, r["positive_ctxs"][0])
            out.append({"question": r["question"], "answers": r["answers"],
                        "ctxs": [{"id": str(i), "title": c["title"], "text": c["text"],
                                  "score": str(10 - i)} for i, c in enumerate(ctxs)]})
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(out))
        paths.append(str(path))
    return paths


def test_compare_retrieval_shows_scoring_and_tests(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["compare", "retrieval", *_runs(tmp_path), "--topk", "1", "5",
            "--resamples", "200", "--trials", "500", "--format", "json"]
    assert main(argv) == 0
    quiet = capsys.readouterr()
    assert _lines(quiet.err) == []  # a short comparison at the default interval
    monkeypatch.setattr(nqkit.report, "PLAIN_INTERVAL", 0.0)
    assert main(argv) == 0
    shown = capsys.readouterr()
    lines = _lines(shown.err)
    assert [done for desc, done in lines if desc == "scoring systems"] == [
        "0/3 (0%)", "1/3 (33%)", "2/3 (66%)", "3/3 (100%)"]
    # 3 pairs x 2 metrics x (200 resamples + 500 trials), counted as they are drawn
    tests = [done for desc, done in lines if desc == "paired tests"]
    assert tests[0] == "0/4,200 (0%)" and tests[-1] == "4,200/4,200 (100%)"
    assert len(tests) == 1 + 3 * 2 * 2  # the first line, then one per block drawn
    assert ("answer recall", "5 q") in lines  # each system's scoring has its own
    assert shown.out == quiet.out  # the JSON on stdout, untouched
    assert [line for line in shown.err.splitlines() if not LINE.match(line)] == \
        quiet.err.splitlines()


def test_eval_bootstrap_intervals_show_their_resamples(
        tmp_path: Path, every_step: None, capsys: pytest.CaptureFixture[str]) -> None:
    run = _runs(tmp_path)[0]
    assert main(["eval", "retrieval", "--predictions", run, "--topk", "1", "5",
                 "--resamples", "300"]) == 0
    tests = [done for desc, done in _lines(capsys.readouterr().err)
             if desc == "bootstrap intervals"]
    assert tests[-1] == "600/600 (100%)"
