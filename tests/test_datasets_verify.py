"""Downloaded files checked by content: `nqkit data verify`, reads by registry name, and
`nqkit data get --force`, against a real HTTP server on 127.0.0.1 serving real files.

The damage is what happens to files on real disks and shared drives: one byte flipped in
place (same size; with and without the modification time put back), a truncated copy, a
deleted file. Expected checksums are computed here with hashlib from the served bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nqkit.datasets import Checked, DownloadError, verify
from nqkit.datasets.download import fetch
from nqkit.datasets.local import RECORD, dataset_dir, read_record
from nqkit.datasets.names import local_paths
from nqkit.datasets.registry import load_registry
from nqkit.errors import InputError

from conftest import shared_file, this_tree_env
from http_mirror import MirrorServer


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture
def lab(home, tmp_path):
    """A two-shard dataset (the real NQ dev sample, split) in a user registry, served by a
    local mirror and downloaded: ``(dataset, registry file, {name: bytes}, server)``."""
    lines = gzip.decompress(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
                            .read_bytes()).splitlines(keepends=True)
    shards = {f"nq-dev-0{i}.jsonl.gz": gzip.compress(b"".join(lines[5 * i:5 * i + 5]),
                                                     mtime=0) for i in range(2)}
    reg_file = tmp_path / "reg.json"
    reg_file.write_text(json.dumps({"datasets": [{
        "name": "lab/nq-dev", "format": "nq", "files": [
            {"name": n, "url": f"https://h.example.org/nq/{n}", "md5": md5(c),
             "size": len(c)} for n, c in shards.items()]}]}))
    ds = load_registry([reg_file]).get("lab/nq-dev")
    with MirrorServer({f"/nq/{n}": c for n, c in shards.items()}) as server:
        fetch(ds, mirror=server.url, progress=False)
        yield ds, reg_file, shards, server


def flip_in_place(path: Path, at: int, keep_time: bool) -> None:
    """One byte flipped in place: same size, same inode; the modification time put back
    when ``keep_time`` (what a careless copy tool or a deliberate edit can do)."""
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x01]))
    if keep_time:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_verify_reads_every_file_and_finds_a_flip_the_stamp_cannot_see(lab):
    ds, _, shards, _ = lab
    d = dataset_dir(ds)
    first = verify(ds, progress=False)
    assert [(c.file.name, c.status, c.checked) for c in first] == [
        (n, "ok", "md5+size+sha256") for n in shards]
    assert [c.sha256 for c in first] == [hashlib.sha256(c).hexdigest() for c in shards.values()]
    target = d / "nq-dev-01.jsonl.gz"
    flip_in_place(target, 500, keep_time=True)
    assert read_record(d)["nq-dev-01.jsonl.gz"]["stamp"][0:2] == [
        target.stat().st_size, target.stat().st_mtime_ns]
    # size and modification time kept, but the change time moved: reads hash it again
    with pytest.raises(InputError, match="changed on disk after it was downloaded"):
        local_paths(ds)
    # A record whose stamp was rewritten to the file's new state (a change the stamp cannot
    # see): `data get` and reads trust it unread (their contract) ...
    record = json.loads((d / RECORD).read_text())
    st = target.stat()
    record["files"]["nq-dev-01.jsonl.gz"]["stamp"] = [
        st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]
    (d / RECORD).write_text(json.dumps(record))
    assert [f.status for f in fetch(ds, progress=False)] == ["present", "present"]
    assert local_paths(ds) == [d / n for n in shards]
    # ... and `data verify` reads it, whatever its stamp
    again = verify(ds, progress=False)
    assert [c.status for c in again] == ["ok", "differs"]
    bad = again[1]
    assert isinstance(bad, Checked) and bad.size == len(shards["nq-dev-01.jsonl.gz"])
    assert bad.problem.startswith("the file changed on disk after it was downloaded (sha256 ")
    assert bad.fix == "fetch it again with `nqkit data get lab/nq-dev --shards 1 --force " \
        f"--registry {lab[1]}`"


def test_a_flip_that_changes_the_stamp_is_refused_by_get_by_name_and_verify(lab):
    ds, *_ = lab
    target = dataset_dir(ds) / "nq-dev-00.jsonl.gz"
    flip_in_place(target, 1234, keep_time=False)
    expected = (f"{target}: the file changed on disk after it was downloaded (sha256 ")
    with pytest.raises(DownloadError) as e:
        fetch(ds, progress=False)
    assert str(e.value).startswith(expected)
    with pytest.raises(DownloadError) as e:
        local_paths(ds)
    assert str(e.value).startswith(expected)
    assert [c.status for c in verify(ds, progress=False)] == ["differs", "ok"]
    # the other shard alone is intact, and read
    assert local_paths(ds, "1") == [dataset_dir(ds) / "nq-dev-01.jsonl.gz"]


def test_reads_by_name_refuse_a_changed_file_in_one_line(lab, monkeypatch):
    ds, reg_file, *_ = lab
    monkeypatch.setenv("NQKIT_REGISTRY", str(reg_file))
    target = dataset_dir(ds) / "nq-dev-00.jsonl.gz"
    flip_in_place(target, 1234, keep_time=False)
    from nqkit.formats.nq import read_nq

    with pytest.raises(DownloadError) as e:
        list(read_nq("lab/nq-dev"))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{target}: the file changed on disk")
    assert msg.endswith("— fetch it again with `nqkit data get lab/nq-dev --shards 0 --force`")
    # the intact shard alone is still read by name
    assert len(list(read_nq("lab/nq-dev:1"))) == 5


def test_a_touched_file_read_by_name_is_hashed_once(lab, monkeypatch):
    ds, *_ = lab
    d = dataset_dir(ds)
    target = d / "nq-dev-00.jsonl.gz"
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    calls = []
    import nqkit.datasets.integrity as v

    real = v.file_digests
    monkeypatch.setattr(v, "file_digests", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert local_paths(ds) == [d / "nq-dev-00.jsonl.gz", d / "nq-dev-01.jsonl.gz"]
    assert calls == [target]  # the touched file only, and its new stamp recorded
    assert read_record(d)["nq-dev-00.jsonl.gz"]["stamp"][1] == st.st_mtime_ns + 10**9
    local_paths(ds)
    assert calls == [target]


def test_a_truncated_file_is_damaged_not_absent(lab):
    ds, reg_file, *_ = lab
    target = dataset_dir(ds) / "nq-dev-01.jsonl.gz"
    size = target.stat().st_size
    os.truncate(target, size - 100)
    with pytest.raises(DownloadError) as e:
        local_paths(ds)
    assert str(e.value) == (
        f"{target}: the file on disk is incomplete or damaged: {size - 100:,} of the "
        f"{size:,} bytes the registry publishes — fetch it again with `nqkit data get "
        f"lab/nq-dev --shards 1 --force --registry {reg_file}`")
    with pytest.raises(DownloadError, match="incomplete or damaged"):
        fetch(ds, progress=False)
    (ok, bad) = verify(ds, progress=False)
    assert (ok.status, bad.status, bad.checked, bad.sha256) == ("ok", "differs", "size", None)


def test_missing_and_not_downloaded(lab):
    ds, *_ = lab
    d = dataset_dir(ds)
    (d / "nq-dev-00.jsonl.gz").unlink()
    rows = verify(ds, progress=False)
    assert [(c.status, c.problem) for c in rows] == [
        ("missing", "recorded, but not on disk"), ("ok", "")]
    (d / RECORD).unlink()
    (d / "nq-dev-00.jsonl.gz.part").write_bytes(b"x" * 300)
    rows = verify(ds, progress=False)
    assert [(c.status, c.checked) for c in rows] == [("not downloaded", "-"),
                                                     ("ok", "md5+size")]
    assert rows[0].problem == "an interrupted download (300 bytes) waits in " \
        "nq-dev-00.jsonl.gz.part"


def test_force_replaces_a_damaged_file_once_the_new_one_is_verified(lab):
    ds, _, shards, server = lab
    d = dataset_dir(ds)
    flip_in_place(d / "nq-dev-01.jsonl.gz", 99, keep_time=False)
    n = len(server.log)
    got = fetch(ds, ds.select("1"), mirror=server.url, progress=False, force=True)
    assert [g.status for g in got] == ["fetched"]
    assert server.log[n:] == [("/nq/nq-dev-01.jsonl.gz", None, 200)]
    assert (d / "nq-dev-01.jsonl.gz").read_bytes() == shards["nq-dev-01.jsonl.gz"]
    assert [c.status for c in verify(ds, progress=False)] == ["ok", "ok"]


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nqkit", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_cli_verify_table_json_and_exit_codes(lab, home):
    ds, reg_file, shards, _ = lab
    env = this_tree_env(NQKIT_HOME=str(home), NQKIT_REGISTRY=str(reg_file))
    p = run("data", "verify", env=env)  # every dataset on disk
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["file", "size", "status", "checked", "what", "differs"]
    assert [line.split()[3] for line in lines[2:]] == ["ok", "ok"]
    target = dataset_dir(ds) / "nq-dev-00.jsonl.gz"
    flip_in_place(target, 1000, keep_time=True)  # same size and mtime; the ctime moved
    p = run("data", "verify", "lab/nq-dev", "--format", "json", env=env)
    assert p.returncode == 2
    rows = json.loads(p.stdout)
    assert [(r["file"], r["status"]) for r in rows] == [("nq-dev-00.jsonl.gz", "differs"),
                                                        ("nq-dev-01.jsonl.gz", "ok")]
    assert rows[0]["published_md5"] == md5(shards["nq-dev-00.jsonl.gz"])
    assert rows[0]["md5"] != rows[0]["published_md5"]
    line = p.stderr.splitlines()
    assert len(line) == 1 and line[0].startswith(
        f"nqkit: error: {target}: the file changed on disk after it was downloaded")
    assert line[0].endswith("— fetch it again with `nqkit data get lab/nq-dev --shards 0 "
                            "--force`")
    p = run("data", "verify", "lab/nq-dev:1", env=env)  # the intact shard alone
    assert p.returncode == 0 and "nq-dev-00" not in p.stdout
    # the change time moved, so `data path` hashes it again and refuses it too
    assert run("data", "path", "lab/nq-dev", env=env).returncode == 2


def test_cli_verify_of_nothing_on_disk_and_unknown_names(home):
    env = this_tree_env(NQKIT_HOME=str(home))
    env.pop("NQKIT_REGISTRY", None)
    p = run("data", "verify", env=env)
    assert (p.returncode, p.stdout) == (0, "")
    assert p.stderr == f"nqkit: note: no dataset is on disk under {home / 'data'}\n"
    p = run("data", "verify", "nq-open/dev", env=env)
    assert p.returncode == 0
    assert p.stdout.splitlines()[2].split()[:3] == ["nq-open/dev/NQ-open.dev.jsonl", "-",
                                                    "not"]
    p = run("data", "verify", "nq/deev", env=env)
    assert p.returncode == 2 and "unknown dataset 'nq/deev'" in p.stderr


def test_library_verify_does_not_raise_for_damage(lab):
    ds, *_ = lab
    os.truncate(dataset_dir(ds) / "nq-dev-00.jsonl.gz", 10)
    assert [c.status for c in verify(ds, progress=False)] == ["differs", "ok"]
    with pytest.raises(InputError):  # a DownloadError is an InputError: one line, exit 2
        local_paths(ds)


def test_downloads_never_write_through_a_link_out_of_the_data_home(home, tmp_path):
    """A dataset directory that a symbolic link inside the data home sends elsewhere is
    refused for downloads (nothing is written outside NQKIT_HOME); a home that is itself a
    link is fine, and reads follow the user's links."""
    data = b'{"question": "q", "answer": ["a"]}\n'
    source = tmp_path / "small.jsonl"
    source.write_bytes(data)
    reg_file = tmp_path / "reg.json"
    reg_file.write_text(json.dumps({"datasets": [{"name": "lab/small", "format": "nq-open",
                                                  "files": [{"name": "small.jsonl",
                                                             "url": source.as_uri(),
                                                             "md5": md5(data),
                                                             "size": len(data)}]}]}))
    ds = load_registry([reg_file]).get("lab/small")
    outside = tmp_path / "outside"
    outside.mkdir()
    (home / "data").mkdir(parents=True)
    (home / "data" / "lab").symlink_to(outside)
    with pytest.raises(InputError) as e:
        fetch(ds, progress=False)
    assert str(e.value) == (
        f"lab/small: the dataset's directory {home / 'data' / 'lab' / 'small'} leads to "
        f"{outside / 'small'}, outside the data home {home / 'data'}, through a symbolic link"
        " — remove the link; to keep the data on another disk, set NQKIT_HOME there")
    assert list(outside.iterdir()) == []
    (outside / "small").mkdir()
    (outside / "small" / "small.jsonl").write_bytes(data)
    assert local_paths(ds) == [home / "data" / "lab" / "small" / "small.jsonl"]
    # the home itself a link: downloads go through it
    (home / "data" / "lab").unlink()
    linked = tmp_path / "linked-home"
    linked.symlink_to(home)
    (item,) = fetch(ds, home=linked / "data", progress=False)
    assert item.path.read_bytes() == data and item.status == "fetched"


def test_a_directory_under_a_file_name_differs_and_is_refused(lab):
    ds, *_ = lab
    target = dataset_dir(ds) / "nq-dev-01.jsonl.gz"
    target.unlink()
    target.mkdir()
    rows = verify(ds, progress=False)
    assert [(c.status, c.problem) for c in rows] == [("ok", ""),
                                                     ("differs", "not a regular file")]
    with pytest.raises(DownloadError, match="is not a regular file"):
        local_paths(ds)


def test_list_and_info_show_a_truncated_file_as_damaged(lab, home, capsys, monkeypatch):
    from nqkit.cli import main

    ds, reg_file, *_ = lab
    monkeypatch.setenv("NQKIT_REGISTRY", str(reg_file))
    os.truncate(dataset_dir(ds) / "nq-dev-01.jsonl.gz", 1000)
    assert main(["data", "list", "--format", "json"]) == 0
    (item,) = [i for i in json.loads(capsys.readouterr().out) if i["name"] == "lab/nq-dev"]
    assert item["on_disk"]["files"] == 1 and item["on_disk"]["damaged"] == [
        "nq-dev-01.jsonl.gz"]
    assert main(["data", "list"]) == 0
    (row,) = [r for r in capsys.readouterr().out.splitlines() if r.startswith("lab/nq-dev")]
    assert row.endswith("1/2, 1 damaged")
    assert main(["data", "info", "lab/nq-dev"]) == 0
    assert ("      on disk but incomplete or damaged (1,000 bytes): fetch it again with "
            "`nqkit data get lab/nq-dev --shards 1 --force`") in capsys.readouterr().out


def test_verify_shows_its_progress_on_stderr_when_asked(lab, capsys, monkeypatch):
    import nqkit.report

    # off a terminal, a line at every step (the interval between lines set to 0)
    monkeypatch.setattr(nqkit.report, "PLAIN_INTERVAL", 0.0)
    ds, *_ = lab
    assert [c.status for c in verify(ds, progress=True)] == ["ok", "ok"]
    err = capsys.readouterr().err
    assert "nqkit: checking nq-dev-00.jsonl.gz: " in err
    assert "nqkit: checking nq-dev-01.jsonl.gz: " in err
    verify(ds)  # by default, only for files worth waiting on
    verify(ds, progress=False)
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------- pinned sha256 of fixed files

# the SHA-256 published for SQuAD dev 1.1 (as ../shared/data/README.md gives it)
SQUAD_DEV_SHA256 = "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9"
PINNED = {"squad/dev-1.1": ("squad", "dev-v1.1.json"),
          "nq-open/dev": ("nq-open", "NQ-open.dev.jsonl"),
          "efficientqa/dev": ("nq-open", "NQ-open.efficientqa.dev.1.1.jsonl")}


def test_fixed_files_without_a_published_checksum_are_pinned_with_their_provenance():
    reg = load_registry()
    (squad,) = reg.get("squad/dev-1.1").files
    assert squad.sha256 == SQUAD_DEV_SHA256 and "published" in squad.pinned
    for name, (folder, file) in PINNED.items():
        (f,) = reg.get(name).files
        assert f.name == file and f.pinned
        # the pin is the whole official file's: the copy held as real data, hashed here
        assert f.sha256 == hashlib.sha256(shared_file("data", folder, file).read_bytes()
                                          ).hexdigest(), name
        assert reg.get(name).checksums == "all"


def test_a_pinned_file_of_another_version_is_named_so_not_corrupt(home):
    from nqkit.datasets.integrity import check_present

    ds = load_registry().get("nq-open/dev")
    (f,) = ds.files
    dest = dataset_dir(ds, home) / f.name
    dest.parent.mkdir(parents=True)
    real = shared_file("data", "nq-open", f.name).read_bytes()
    dest.write_bytes(real)
    size, _, sha = check_present(ds, f, dest)
    assert (size, sha) == (len(real), f.sha256)
    # another version: one question dropped, the rest unchanged (not damage)
    dest.write_bytes(b"".join(real.splitlines(keepends=True)[1:]))
    with pytest.raises(DownloadError) as e:
        check_present(ds, f, dest)
    assert "this is not the file the registry knows" in str(e.value)
    assert "corrupt" not in str(e.value) and "damaged" not in str(e.value)
    [checked] = verify(ds, home=home)
    assert checked.status == "differs" and checked.checked == "sha256"
    assert checked.problem.startswith("this is not the file the registry knows")
