"""Reliability of files and processes: a self-verifying gold cache, clean ends on SIGTERM
and SIGKILL, worker pools from plain scripts, outputs that never land on inputs and appear
only on success, FIFOs read once, install hints that work, bounded bootstrap.

Expected numbers come from the official evaluation outputs in ``../shared/golden``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from nqkit.cli import main
from nqkit.errors import MissingDependencyError, install_hint, source_tree
from nqkit.io import atomic_output, open_binary, output_transaction, write_json

from conftest import shared_file

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


def _gold() -> Path:
    return shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")


def _mixed0() -> tuple[Path, str]:
    """The mixed0 predictions and the official long-answer F1 printed to 4 decimals."""
    golden = shared_file("golden", "nq-eval", "mixed0.official.json")
    f1 = json.loads(golden.read_text())["long-best-threshold-f1"]
    return shared_file("golden", "nq-eval", "mixed0.predictions.json"), f"{f1:.4f}"


def _long_f1(table: str) -> str:
    m = re.search(r"^long answer\s+(\d\.\d{4})\s", table, re.M)
    assert m, table
    return m.group(1)


def _one_error_line(err: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nqkit: error: "), err
    assert "Traceback" not in err


def _temps(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.endswith(".tmp"))


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(SRC), **extra)
    return env


# ------------------------------------------------------------ 1. the gold cache verifies itself

def _alter_numbers(blob: bytes) -> bytes:
    """Valid JSON, plausible records, other numbers: every gold long answer becomes NULL."""
    head, _, body = blob.partition(b"\n")
    rows = orjson.loads(body)
    for row in rows:
        for ann in row[3]:
            ann[1] = [-1, -1, -1, -1]
            ann[2] = -1
    return head + b"\n" + orjson.dumps(rows)


def _wrong_version(blob: bytes) -> bytes:
    head, _, body = blob.partition(b"\n")
    header = orjson.loads(head)
    header["version"] = header["version"] + 1  # checksum still right: only the version is off
    return orjson.dumps(header) + b"\n" + body


CORRUPTIONS = {
    "altered-numbers": _alter_numbers,
    "empty-list": lambda b: b"[]",
    "empty-object": lambda b: b"{}",
    "truncated": lambda b: b[: len(b) // 2],
    "garbage-bytes": lambda b: bytes(range(256)) * 4,
    "wrong-version": _wrong_version,
    "old-format-body-only": lambda b: b.partition(b"\n")[2],
    "empty-file": lambda b: b"",
}


@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_corrupt_gold_cache_entry_is_rebuilt_and_the_number_is_right(how, tmp_path, monkeypatch,
                                                                      capsys):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    preds, want = _mixed0()
    argv = ["eval", "nq", "--gold", str(_gold()), "--predictions", str(preds)]
    assert main(argv) == 0
    assert _long_f1(capsys.readouterr().out) == want
    (entry,) = (tmp_path / "home" / "cache" / "gold").glob("*.json")
    good = entry.read_bytes()
    entry.write_bytes(CORRUPTIONS[how](good))
    for _ in range(2):  # the run that finds the bad entry, and the one after it
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert _long_f1(out) == want
        assert len(err.strip().splitlines()) <= 1
    assert entry.read_bytes() == good  # rebuilt


def test_altered_entry_would_change_the_number_if_trusted(tmp_path, monkeypatch):
    """The 'altered-numbers' corruption above matters: decoded without verification it
    scores the same predictions differently (so the test above can fail)."""
    from nqkit.formats import gold_cache
    from nqkit.formats.nq_predictions import read_nq_predictions
    from nqkit.metrics.nq import evaluate_nq

    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    preds_path, want = _mixed0()
    gold_cache.load_nq_gold(_gold())
    (entry,) = (tmp_path / "home" / "cache" / "gold").glob("*.json")
    altered = _alter_numbers(entry.read_bytes()).partition(b"\n")[2]
    trusted = gold_cache._decode_body(altered)
    f1 = evaluate_nq(trusted, read_nq_predictions(preds_path)).long.best_f1
    assert f"{f1:.4f}" != want


def test_gold_read_from_a_pipe_is_never_cached(tmp_path, monkeypatch, capsys):
    """A FIFO's name says nothing about its content: caching it could give another run's
    numbers for different gold."""
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    preds, want = _mixed0()
    with _fifo(tmp_path / "gold.fifo", _gold().read_bytes()) as fifo:
        assert main(["eval", "nq", "--gold", str(fifo), "--predictions", str(preds)]) == 0
    assert _long_f1(capsys.readouterr().out) == want
    assert not list((tmp_path / "home").rglob("*.json"))


# ------------------------------------------------------------ 2. killed runs do not leak

def _tiled_input(path: Path, copies: int) -> Path:
    """``copies`` x the 10 real dev examples with new ids (as benchmarks/make_tiled_dev.py)."""
    lines = gzip.decompress(_gold().read_bytes()).splitlines()
    out = []
    for c in range(copies):
        for i, line in enumerate(lines):
            new_id = b'"example_id":%d' % (10**15 + 10 * c + i)
            out.append(re.sub(rb'"example_id":\s*\d+', new_id, line, count=1))
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(b"\n".join(out) + b"\n")
    return path


class _Fifo:
    def __init__(self, path: Path, data: bytes, *, hold: bool) -> None:
        self.path, self.data, self.hold = path, data, hold
        self.stop = threading.Event()
        os.mkfifo(path)
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def _write(self) -> None:
        try:
            with open(self.path, "wb") as f:
                f.write(self.data)
                f.flush()
                if self.hold:  # keep the reader waiting for more, until the test ends
                    self.stop.wait()
        except (BrokenPipeError, OSError):
            pass

    def close(self) -> None:
        self.stop.set()
        if not self.hold:
            self.thread.join(30)


@pytest.fixture
def fifo_factory() -> Iterator[object]:
    made: list[_Fifo] = []

    def make(path: Path, data: bytes, hold: bool = False) -> _Fifo:
        f = _Fifo(path, data, hold=hold)
        made.append(f)
        return f

    yield make
    for f in made:
        f.stop.set()
        # Unblock a writer whose reader never came (never blocks itself: O_NONBLOCK).
        fd = os.open(f.path, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)
        f.thread.join(10)


class _fifo:  # a context manager, named like open()
    def __init__(self, path: Path, data: bytes) -> None:
        self.f = _Fifo(path, data, hold=False)

    def __enter__(self) -> Path:
        return self.f.path

    def __exit__(self, *exc: object) -> None:
        self.f.close()


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(x) for x in (task / "children").read_text().split()]
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its parent may reap it


def _wait_gone(pids: list[int], timeout: float = 120.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _start_stuck_simplify(tmp_path: Path, fifo_factory) -> tuple[subprocess.Popen[bytes], Path,
                                                                   list[int]]:
    """``nqkit simplify -j 2`` on a tiled shard and a FIFO that delivers half a shard and
    then stays open, so the run is surely still writing when it is signalled."""
    tiled = _tiled_input(tmp_path / "tiled.jsonl.gz", 10)
    pipe = tmp_path / "more.fifo"
    fifo_factory(pipe, tiled.read_bytes()[:400_000], hold=True)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "nqkit", "simplify", str(tiled), str(pipe),
                             "-o", str(out_dir / "simple.jsonl.gz"), "-j", "2"],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Until the output and its 2 parts exist and both workers are up (the FIFO holds the
    # run there until the test ends); the deadline is only a safety net.
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, proc.communicate()
        kids = _children(proc.pid)
        if len(_temps(out_dir)) >= 3 and len(kids) >= 2:
            break
        assert time.monotonic() < deadline, (_temps(out_dir), kids)
        time.sleep(0.05)
    time.sleep(1.0)  # not for correctness: lets the workers get into reading and writing
    kids = _children(proc.pid)
    assert proc.poll() is None and _temps(out_dir)
    return proc, out_dir, kids


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_sigterm_cleans_up_like_ctrl_c(tmp_path, fifo_factory):
    proc, out_dir, kids = _start_stuck_simplify(tmp_path, fifo_factory)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err.decode().strip().splitlines()[-1] == "nqkit: terminated"
    assert os.listdir(out_dir) == []  # no temp file, no partial output
    assert _wait_gone(kids) == []


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_sigkill_workers_die_and_the_next_run_removes_stale_temps(tmp_path, fifo_factory):
    proc, out_dir, kids = _start_stuck_simplify(tmp_path, fifo_factory)
    stale = _temps(out_dir)
    assert all(f".{proc.pid}-" in name for name in stale)  # the temp names carry the pid
    proc.kill()
    proc.communicate(timeout=120)
    assert _wait_gone(kids) == []  # the workers died with their parent
    assert _temps(out_dir) == stale  # nothing could clean up after SIGKILL
    # A second run to the same output (other inputs) removes the leftovers of the dead run.
    simplified = shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl")
    r = subprocess.run([sys.executable, "-m", "nqkit", "simplify", str(_gold()), "-o",
                        str(out_dir / "simple.jsonl.gz"), "-j", "1"], env=_env(),
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert os.listdir(out_dir) == ["simple.jsonl.gz"]
    assert gzip.decompress((out_dir / "simple.jsonl.gz").read_bytes()) == simplified.read_bytes()


def test_temp_files_of_live_processes_and_other_names_are_kept(tmp_path):
    from nqkit.io import make_temp, remove_stale_temps

    target = tmp_path / "x.json"
    fd, mine = make_temp(target)
    os.close(fd)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    host = Path(mine).name.split(".")[3].split("-")[1]
    leftover = tmp_path / f".x.json.{dead}-{host}.abc123_z.tmp"
    other_host = tmp_path / f".x.json.{dead}-00000000.abc123_z.tmp"
    foreign = tmp_path / ".x.json.notours.tmp"
    for p in (leftover, other_host, foreign):
        p.write_text("")
    assert remove_stale_temps(target) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [Path(mine).name, other_host.name, foreign.name])


# ------------------------------------------------------------ 3. library calls from scripts

def _docs_example() -> str:
    text = (ROOT / "docs" / "simplify.md").read_text()
    block = re.search(r"## From Python\s+```python\n(.*?)```", text, re.S)
    assert block
    lines = [x for x in block.group(1).splitlines()
             if "example_dict" not in x and "raw_json_line_bytes" not in x]
    code = "\n".join(lines)
    assert "simplify_files(" in code and "jobs=2" in code
    return code


@pytest.mark.parametrize("how", ["script", "stdin", "dash-c"])
def test_docs_simplify_example_runs_without_a_main_guard(how, tmp_path):
    (tmp_path / "nq-dev-00.jsonl.gz").symlink_to(_gold())
    code = _docs_example()
    if how == "script":
        (tmp_path / "example.py").write_text(code + "\n")
        argv, stdin = [sys.executable, "example.py"], None
    elif how == "stdin":
        argv, stdin = [sys.executable, "-"], code
    else:
        argv, stdin = [sys.executable, "-c", code], None
    r = subprocess.run(argv, input=stdin, cwd=tmp_path, env=_env(), capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "10"
    want = shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl").read_bytes()
    assert gzip.decompress((tmp_path / "out.jsonl.gz").read_bytes()) == want
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["nq-dev-00.jsonl.gz", "out.jsonl.gz"] + (["example.py"] if how == "script" else []))


# ------------------------------------------------------------ 4. outputs

def _writing_commands(d: Path) -> dict[str, tuple[list[str], str]]:
    """Every writing command: argv with OUT where the output goes, and the output kind."""
    gold = str(_gold())
    nq_open = str(shared_file("data", "nq-open", "NQ-open.dev.jsonl"))
    amb = str(shared_file("data", "ambignq", "dev_full_sample5.json"))
    dpr = str(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json"))
    squad = str(shared_file("data", "squad", "dev-v1.1.json"))
    preds, _ = _mixed0()
    (d / "amb-preds.json").write_text("{}")
    (d / "open-preds.jsonl").write_text("")
    return {
        "simplify": (["simplify", gold, "-o", "OUT"], "file"),
        "convert nq-open": (["convert", "nq-open", gold, "-o", "OUT"], "file"),
        "baseline": (["baseline", "first_paragraph", "--gold", gold, "-o", "OUT"],
                     "file"),
        "predict": (["predict", "first_paragraph", "--gold", gold, "-o", "OUT"], "file"),
        "baseline-open nearest-question": (["baseline", "nearest-question", "--train",
                                            nq_open, "--gold", nq_open, "-o", "OUT"],
                                           "file"),
        "baseline-open ambigqa-answers": (["baseline", "ambigqa-answers", "--train", amb,
                                           "--gold", amb, "-o", "OUT"], "file"),
        "baseline-open ambigqa-questions": (["baseline", "ambigqa-questions", "--method",
                                             "prompt", "--gold", amb, "-o", "OUT"], "file"),
        "eval nq --pr-curve": (["eval", "nq", "--gold", gold, "--predictions", str(preds),
                                "--pr-curve", "OUT"], "file"),
        "eval nq-open --per-question": (["eval", "nq-open", "--gold", nq_open,
                                         "--predictions", str(d / "open-preds.jsonl"),
                                         "--per-item", "OUT"], "file"),
        "eval ambigqa --per-example": (["eval", "ambigqa", "--gold", amb, "--predictions",
                                        str(d / "amb-preds.json"), "--per-item", "OUT"],
                                       "file"),
        "eval retrieval --per-question": (["eval", "retrieval", "--predictions", dpr,
                                           "--per-item", "OUT"],
                                          "file"),
        "reqa build": (["reqa", "build", "--from", "squad", squad, "-o", "OUT"], "dir"),
        "demo --out": (["demo", "-o", "OUT"], "dir"),
        "browse --cache-dir": (["browse", "--gold", gold, "--cache-dir", "OUT", "--index-only"],
                               "dir"),
    }


COMMANDS = ["simplify", "convert nq-open", "baseline", "predict",
            "baseline-open nearest-question", "baseline-open ambigqa-answers",
            "baseline-open ambigqa-questions", "eval nq --pr-curve",
            "eval nq-open --per-question", "eval ambigqa --per-example",
            "eval retrieval --per-question", "reqa build", "demo --out", "browse --cache-dir"]


def _run(argv: list[str], out: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(out) if a == "OUT" else a for a in argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", COMMANDS)
def test_impossible_output_paths_are_one_line_exit_2(name, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    argv, kind = _writing_commands(tmp_path)[name]
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me\n")
    a_dir = tmp_path / "a-dir"
    a_dir.mkdir()
    (a_dir / "inside").write_text("keep me too\n")
    wrong = [a_dir, a_file / "x.out", a_file / "sub" / "x.out"]
    if kind == "dir":
        wrong = [a_file, a_file / "sub"]
    for out in wrong:
        code, err = _run(argv, out, capsys)
        assert code == 2, (out, err)
        _one_error_line(err)
        assert str(out) in err
    assert a_file.read_text() == "keep me\n"
    assert os.listdir(a_dir) == ["inside"]
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["a-file", "a-dir", "amb-preds.json", "open-preds.jsonl"]
        + (["home"] if (tmp_path / "home").exists() else []))


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
@pytest.mark.parametrize("name", ["simplify", "demo --out"])
def test_unwritable_output_directory_is_one_line_exit_2(name, tmp_path, capsys):
    argv, _kind = _writing_commands(tmp_path)[name]
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, err = _run(argv, locked / "x", capsys)
    finally:
        locked.chmod(0o700)
    assert code == 2
    _one_error_line(err)
    assert "no permission" in err


def test_reqa_run_never_writes_over_the_task_files(tmp_path, capsys):
    from nqkit.formats.reqa import build_from_squad, save_task
    from nqkit.formats.squad import squad_articles_from_json

    doc = json.loads(shared_file("data", "squad", "dev-v1.1.json").read_text())
    art = doc["data"][0]
    small = {"data": [{"title": art["title"], "paragraphs": art["paragraphs"][:2]}]}
    task = tmp_path / "task"
    save_task(build_from_squad(squad_articles_from_json(small, "small"), {"source": "squad"}),
              task)
    before = {p.name: p.read_bytes() for p in task.iterdir()}
    for name in sorted(before):
        for ranks in (task / name, tmp_path / "task" / ".." / "task" / name):
            code, err = _run(["reqa", "run", "--gold", str(task), "--per-item", "OUT"], ranks,
                             capsys)
            assert code == 2, err
            _one_error_line(err)
            assert "one of the inputs" in err
    (tmp_path / "link.jsonl").symlink_to(task / "queries.jsonl")
    code, err = _run(["reqa", "run", "--gold", str(task), "--per-item", "OUT"],
                     tmp_path / "link.jsonl", capsys)
    assert code == 2 and "one of the inputs" in err
    assert {p.name: p.read_bytes() for p in task.iterdir()} == before


def test_reqa_build_on_empty_nq_leaves_nothing(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, err = _run(["reqa", "build", "--from", "nq", str(empty), "-o", "OUT"],
                     tmp_path / "task", capsys)
    assert code == 2
    _one_error_line(err)
    assert os.listdir(tmp_path) == ["empty.jsonl"]


def test_baseline_eval_failure_leaves_no_predictions(tmp_path, capsys):
    """Examples without annotations can be predicted but not scored: the command fails, so
    the predictions it wrote first must not appear."""
    lines = shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl").read_text().splitlines()
    no_ann = tmp_path / "no-annotations.jsonl"
    no_ann.write_text("".join(json.dumps({k: v for k, v in json.loads(x).items()
                                          if k != "annotations"}) + "\n" for x in lines))
    code, err = _run(["baseline", "first_paragraph", "--gold", str(no_ann), "-o",
                      "OUT", "--eval"], tmp_path / "preds.json", capsys)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("nqkit: error: ")
    assert os.listdir(tmp_path) == ["no-annotations.jsonl"]


def test_baseline_eval_success_writes_and_scores(tmp_path, capsys):
    code, err = _run(["baseline", "first_paragraph", "--gold", str(_gold()), "-o",
                      "OUT", "--eval"], tmp_path / "preds.json", capsys)
    assert code == 0, err
    assert sorted(os.listdir(tmp_path)) == ["preds.json"]
    assert len(json.loads((tmp_path / "preds.json").read_text())["predictions"]) == 10


def test_missing_output_directories_are_created_with_a_note_and_removed_on_failure(tmp_path,
                                                                                   capsys):
    simplified = shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl")
    out = tmp_path / "new" / "deeper" / "s.jsonl"
    code, err = _run(["simplify", str(_gold()), "-o", "OUT", "-j", "1"], out, capsys)
    assert code == 0
    assert err.strip().splitlines() == [f"nqkit: note: created directory {out.parent}"]
    assert out.read_bytes() == simplified.read_bytes()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, err = _run(["simplify", str(empty), "-o", "OUT"], tmp_path / "n2" / "d" / "s.jsonl",
                     capsys)
    assert code == 2
    assert sorted(os.listdir(tmp_path)) == ["empty.jsonl", "new"]


def test_output_transaction_is_all_or_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt), output_transaction():
        write_json(tmp_path / "a.json", {"a": 1})
        with atomic_output(tmp_path / "sub" / "b.txt") as f:
            f.write("b")
        assert not (tmp_path / "a.json").exists()  # staged, not yet visible
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []
    with output_transaction():
        write_json(tmp_path / "a.json", {"a": 1})
        write_json(tmp_path / "a.json", {"a": 2})  # the last write wins
        with atomic_output(tmp_path / "cache.bin", "wb", cache=True) as f:
            f.write(b"x")
        assert (tmp_path / "cache.bin").exists()  # caches are not deferred
    assert json.loads((tmp_path / "a.json").read_text()) == {"a": 2}
    assert sorted(os.listdir(tmp_path)) == ["a.json", "cache.bin"]


# ------------------------------------------------------------ 5. FIFOs are read once

def test_eval_nq_gold_and_predictions_from_fifos(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path / "home"))
    preds, want = _mixed0()
    for gz_preds in (False, True):
        data = preds.read_bytes()
        with _fifo(tmp_path / f"g{gz_preds}", _gold().read_bytes()) as g, \
                _fifo(tmp_path / f"p{gz_preds}", gzip.compress(data) if gz_preds else data) as p:
            code = main(["eval", "nq", "--gold", str(g), "--predictions", str(p)])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert _long_f1(out) == want


@pytest.mark.parametrize("compressed", [False, True])
def test_open_binary_on_a_fifo_gives_the_whole_stream(compressed, tmp_path):
    raw = gzip.decompress(_gold().read_bytes())
    with _fifo(tmp_path / "f", _gold().read_bytes() if compressed else raw) as f, \
            open_binary(f) as stream:
        assert stream.read() == raw


def test_truncated_gzip_fifo_is_still_called_truncated(tmp_path, capsys):
    preds, _ = _mixed0()
    data = _gold().read_bytes()
    with _fifo(tmp_path / "g", data[: len(data) // 2]) as g:
        code = main(["eval", "nq", "--gold", str(g), "--predictions", str(preds),
                     "--no-gold-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "truncated or corrupt" in err
    _one_error_line(err)


# ------------------------------------------------------------ 6. install hints that work

def _fake_tree(root: Path, with_pyproject: bool = True) -> Path:
    pkg = root / "src" / "nqkit"
    pkg.mkdir(parents=True)
    if with_pyproject:
        (root / "pyproject.toml").write_text('[project]\nname = "nqkit"\n')
    return pkg


def test_install_hint_from_a_source_checkout(tmp_path, monkeypatch):
    pkg = _fake_tree(tmp_path / "checkout")
    assert source_tree(pkg) == tmp_path / "checkout"
    monkeypatch.chdir(tmp_path)
    assert install_hint("bm25", pkg) == f'pip install -e "{tmp_path / "checkout"}[bm25]"'
    monkeypatch.chdir(tmp_path / "checkout")
    assert install_hint("bm25", pkg) == 'pip install -e ".[bm25]"'


def test_install_hint_from_an_installed_package(tmp_path):
    site = tmp_path / "lib" / "python3" / "site-packages" / "nqkit"
    site.mkdir(parents=True)
    assert source_tree(site) is None
    assert install_hint("bm25", site) == 'pip install "nqkit[bm25]"'
    other = _fake_tree(tmp_path / "other", with_pyproject=False)  # src/ but no project file
    assert install_hint("dense", other) == 'pip install "nqkit[dense]"'


@pytest.mark.parametrize("installed", [False, True])
def test_missing_dependency_message_matches_how_nqkit_runs(installed, tmp_path):
    if installed:  # a copy of the package outside any checkout, as a wheel installs it
        site = tmp_path / "site-packages"
        shutil.copytree(SRC / "nqkit", site / "nqkit",
                        ignore=shutil.ignore_patterns("__pycache__"))
        path, want = site, 'pip install "nqkit[bm25]"'
    else:
        path, want = SRC, f'pip install -e "{ROOT}[bm25]"'
    code = ("from nqkit.errors import MissingDependencyError as E; "
            "print(E('bm25s', 'bm25'))")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=str(path)), timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"bm25s is needed, which is not installed — {want}"
    assert str(MissingDependencyError("x", "bm25")).endswith(install_hint("bm25"))


# ------------------------------------------------------------ 7. bounded work

@pytest.mark.parametrize("extra, fragment", [
    (["--resamples", "100000000000"], "argument --resamples: must be in [0, 100000]"),
    (["--resamples", "100001"], "argument --resamples: must be in [0, 100000]"),
    (["--resamples", "-1"], "argument --resamples: must be in [0, 100000]"),
    (["--resamples", "10", "--seed", "-1"], "argument --seed: must be >= 0"),
])
def test_unbounded_or_invalid_bootstrap_is_refused(extra, fragment, tmp_path, monkeypatch,
                                                   capsys):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path))
    preds, _ = _mixed0()
    code = main(["eval", "nq", "--gold", str(_gold()), "--predictions", str(preds), *extra])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    _one_error_line(err)
    assert fragment in err


def test_large_seeds_are_accepted(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NQKIT_HOME", str(tmp_path))
    preds, want = _mixed0()
    for seed in ("0", str(2**64 + 1)):
        code = main(["eval", "nq", "--gold", str(_gold()), "--predictions", str(preds),
                     "--resamples", "20", "--seed", seed])
        out = capsys.readouterr().out
        assert code == 0 and _long_f1(out) == want and f"seed {seed}" in out
