"""``nqkit data ...`` from the command line: from nothing to a score through a local
mirror, and every failure as one line with exit code 2 and no file under a final name."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import time

from nqkit.cli import main

from conftest import require, shared_file, this_tree_env
from http_mirror import NQ_OPEN_PATH, Fault, MirrorServer, refused_url


def run(*args: str, env: dict[str, str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nqkit", *args], capture_output=True,
                          text=True, env=env, timeout=120, **kw)


def one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nqkit: error: "), stderr
    return lines[0]


def test_from_nothing_to_a_score_through_a_mirror(home, tmp_path):
    src = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    data = src.read_bytes()
    env = this_tree_env(NQKIT_HOME=str(home))
    env.pop("NQKIT_REGISTRY", None)
    final = home / "data" / "nq-open" / "dev" / "NQ-open.dev.jsonl"

    # not on disk: the exact command to run
    p = run("data", "path", "nq-open/dev", env=env)
    assert p.returncode == 2 and p.stdout == ""
    assert one_error_line(p.stderr) == (
        f"nqkit: error: nq-open/dev: dataset is not on disk under {final.parent} — fetch it "
        "with `nqkit data get nq-open/dev`")

    with MirrorServer({NQ_OPEN_PATH: src}) as server:
        p = run("data", "get", "nq-open/dev", "--mirror", server.url, env=env)
    assert p.returncode == 0, p.stderr
    sha = hashlib.sha256(data).hexdigest()
    assert p.stdout.splitlines()[2].split() == [
        "nq-open/dev/NQ-open.dev.jsonl", "391.3", "kB", "fetched", "sha256", sha]
    # checked against the sha256 the registry pins: no "no checksum" note
    assert "no checksum is published" not in p.stderr
    assert final.read_bytes() == data

    p = run("data", "path", "nq-open/dev", env=env)
    assert (p.returncode, p.stdout) == (0, f"{final}\n")
    p = run("data", "info", "nq-open/dev", env=env)
    assert f"on disk, sha256 {sha} (verified: sha256)" in p.stdout
    assert "dpr/nq-test.qa has the questions of nq-open/dev" in p.stdout

    # score by name: half the questions answered with their first gold answer
    gold = [json.loads(line) for line in data.decode().splitlines()]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"question": g["question"], "prediction":
                                         g["answer"][0] if i % 2 == 0 else "nqkit"}) + "\n"
                             for i, g in enumerate(gold)), encoding="utf-8")
    p = run("eval", "nq-open", "--gold", "nq-open/dev", "--predictions", str(preds),
            "--format", "json", env=env)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert (result["num_correct"], result["num_total"]) == (1805, 3610)


def test_list_info_and_path_in_process(home, capsys):
    assert main(["data", "list", "--format", "json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert len(items) == 20
    by_name = {i["name"]: i for i in items}
    assert by_name["nq/dev"]["total_size"] == 1068038975
    assert by_name["nq/dev"]["checksums"] == "all"
    assert by_name["nq-open/dev"]["checksums"] == "all"  # a pinned sha256
    assert by_name["dpr/nq-test.qa"]["checksums"] == "none"
    assert by_name["nq/train"]["on_disk"] == {"files": 0, "of": 50, "directory": str(
        home / "data" / "nq" / "train"), "damaged": []}
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["name", "what", "files", "size", "licence", "on", "disk"]
    assert out[2].startswith("nq/dev ") and out[2].endswith("  no")
    assert main(["data", "info", "dpr/nq-dev.qa"]) == 0
    out = capsys.readouterr().out
    assert "NOT nq-open/dev: these are nq-open/train questions held out by DPR" in out
    assert "md5 not published" in out
    assert main(["data", "get", "nq/dev", "--shards", "7"]) == 2
    assert capsys.readouterr().err == (
        "nqkit: error: --shards 7: shard range 7 is outside 0-4 — nq/dev has 5 files, "
        "numbered 0-4; write e.g. --shards 0-1\n")
    assert main(["data", "get", "nq/deev"]) == 2
    assert capsys.readouterr().err.startswith(
        "nqkit: error: unknown dataset 'nq/deev' — did you mean nq/dev")


def test_get_errors_are_one_line_and_leave_no_final_file(home, tmp_path, capsys):
    src = shared_file("data", "nq-open", "NQ-open.efficientqa.dev.1.1.jsonl")
    data = src.read_bytes()
    path = "/eqa/NQ-open.efficientqa.dev.1.1.jsonl"
    reg = tmp_path / "lab.tsv"
    reg.write_text("dataset\tfile\turl\tmd5\tsize\n"
                   f"lab/eqa\tNQ-open.efficientqa.dev.1.1.jsonl\thttps://h.example.org{path}\t"
                   f"{hashlib.md5(data).hexdigest()}\t{len(data)}\n", encoding="utf-8")
    final = home / "data" / "lab" / "eqa" / "NQ-open.efficientqa.dev.1.1.jsonl"
    with MirrorServer({path: src}) as server:
        server.faults[path] = Fault(corrupt_at=5)
        assert main(["data", "get", "lab/eqa", "--registry", str(reg), "--mirror",
                     server.url]) == 2
        err = one_error_line(capsys.readouterr().err)
        bad = bytearray(data)
        bad[5] ^= 0xFF
        assert (f"checksum mismatch: expected md5 {hashlib.md5(data).hexdigest()}, got "
                f"{hashlib.md5(bytes(bad)).hexdigest()}") in err
        assert not final.exists() and not final.with_name(final.name + ".part").exists()
        assert main(["data", "get", "nq-open/dev", "--mirror", server.url]) == 2
        assert "HTTP 404 Not Found" in one_error_line(capsys.readouterr().err)
    assert main(["data", "get", "nq-open/dev", "--mirror", refused_url()]) == 2
    assert "cannot connect (Connection refused)" in one_error_line(capsys.readouterr().err)
    assert main(["data", "path", "lab/eqa", "--registry", str(reg)]) == 2
    assert one_error_line(capsys.readouterr().err).endswith(
        f"fetch it with `nqkit data get lab/eqa --registry {reg}`")
    assert not final.exists()


def _limit_file_size() -> None:
    # a real "no space" failure from the kernel: writes beyond 200 kB fail with EFBIG
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))


def test_disk_full_is_one_line_and_keeps_the_part_for_resuming(home):
    src = shared_file("data", "dpr", "nq-dev.qa.tsv")  # 608 kB
    env = this_tree_env(NQKIT_HOME=str(home))
    env.pop("NQKIT_REGISTRY", None)
    with MirrorServer({"/dpr/data/retriever/nq-dev.qa.csv": src}) as server:
        p = run("data", "get", "dpr/nq-dev.qa", "--mirror", server.url, env=env,
                preexec_fn=_limit_file_size)
        assert p.returncode == 2
        err = one_error_line(p.stderr)
        assert "disk full while writing nq-dev.qa.csv.part after " in err
        assert "run the same command again to resume" in err
        d = home / "data" / "dpr" / "nq-dev.qa"
        assert not (d / "nq-dev.qa.csv").exists()
        kept = (d / "nq-dev.qa.csv.part").stat().st_size
        assert 0 < kept <= 200_000
        p = run("data", "get", "dpr/nq-dev.qa", "--mirror", server.url, env=env)
        assert p.returncode == 0, p.stderr
        assert server.log[-1] == ("/dpr/data/retriever/nq-dev.qa.csv", f"bytes={kept}-", 206)
    assert (d / "nq-dev.qa.csv").read_bytes() == src.read_bytes()


def test_terminated_mid_file_keeps_the_part_then_resumes(home):
    """SIGTERM (what `timeout` and schedulers send; Ctrl-C takes the same path) while the
    server stalls mid-file: exit 143 at once, the bytes so far kept in .part, no final
    file; the same command then resumes from them."""
    src = shared_file("data", "dpr", "nq-dev.qa.tsv")
    path = "/dpr/data/retriever/nq-dev.qa.csv"
    env = this_tree_env(NQKIT_HOME=str(home))
    env.pop("NQKIT_REGISTRY", None)
    d = home / "data" / "dpr" / "nq-dev.qa"
    part = d / "nq-dev.qa.csv.part"
    with MirrorServer({path: src}) as server:
        server.faults[path] = Fault(stall_after=250_000)
        proc = subprocess.Popen([sys.executable, "-m", "nqkit", "data", "get", "dpr/nq-dev.qa",
                                 "--mirror", server.url], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            # until the stalled server's bytes are on disk (the server holds the rest until
            # release is set, so the state cannot move on); the deadline is a safety net
            deadline = time.monotonic() + 120
            while not (part.exists() and part.stat().st_size == 250_000):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the first 250,000 bytes never arrived"
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=120)
        finally:
            server.release.set()
            if proc.poll() is None:
                proc.kill()
        assert (proc.returncode, err) == (143, "nqkit: terminated\n")
        assert not (d / "nq-dev.qa.csv").exists() and part.stat().st_size == 250_000
        server.faults.clear()
        p = run("data", "get", "dpr/nq-dev.qa", "--mirror", server.url, env=env)
        assert p.returncode == 0, p.stderr
        assert server.log[-1] == (path, "bytes=250000-", 206)
    assert (d / "nq-dev.qa.csv").read_bytes() == src.read_bytes()


def test_export_by_name_to_stdout_and_parquet(home, tmp_path, capsys):
    pq = require("pyarrow.parquet")
    src = shared_file("data", "squad", "dev-v1.1.json")
    with MirrorServer({"/SQuAD-explorer/dataset/dev-v1.1.json": src}) as server:
        assert main(["data", "get", "squad/dev-1.1", "--mirror", server.url]) == 0
    capsys.readouterr()
    assert main(["data", "export", "squad/dev-1.1", "-o", "-"]) == 0
    out = capsys.readouterr()
    rows = [json.loads(line) for line in out.out.splitlines()]
    doc = json.loads(src.read_bytes())
    first = doc["data"][0]["paragraphs"][0]
    assert len(rows) == 10570
    assert rows[0] == {"id": first["qas"][0]["id"], "title": doc["data"][0]["title"],
                       "context": first["context"], "question": first["qas"][0]["question"],
                       "answers": first["qas"][0]["answers"]}
    assert "exported 10,570 records of squad/dev-1.1" in out.err
    target = tmp_path / "out" / "squad.parquet"
    assert main(["data", "export", "squad/dev-1.1", "-o", str(target)]) == 0
    assert pq.read_table(target).to_pylist() == rows
    assert main(["data", "export", "squad/train-1.1", "-o", str(tmp_path / "t.jsonl")]) == 2
    assert "fetch it with `nqkit data get squad/train-1.1`" in capsys.readouterr().err
    assert not (tmp_path / "t.jsonl").exists()
    assert os.listdir(tmp_path / "out") == ["squad.parquet"]
