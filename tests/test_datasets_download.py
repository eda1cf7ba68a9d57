"""Downloads against a real HTTP server on 127.0.0.1 serving real files from ../shared.

Expected checksums are computed here with hashlib from the source files; every download is
compared byte for byte with what the server holds. Faults are real: the server closes the
socket mid-file, flips a byte, answers 404, ignores Range, or nothing listens at all.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest

from nqkit.datasets.download import DownloadError, fetch, mirror_url
from nqkit.datasets.local import RECORD, dataset_dir, read_record
from nqkit.datasets.names import resolve
from nqkit.datasets.registry import load_registry
from nqkit.errors import InputError

from conftest import shared_file
from http_mirror import NQ_OPEN_PATH, Fault, MirrorServer, refused_url

SQUAD_PATH = "/SQuAD-explorer/dataset/dev-v1.1.json"
DPR_TEST_PATH = "/dpr/data/retriever/nq-test.qa.csv"
# published in ../shared/data/README.md for the official SQuAD dev file
SQUAD_SHA256 = "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9"


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def visible(directory: Path) -> list[str]:
    """The files a user sees (not the record or the lock files, which start with '.')."""
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith("."))


def write_registry(path: Path, datasets: list[dict]) -> Path:
    path.write_text(json.dumps({"datasets": datasets}), encoding="utf-8")
    return path


def entry(name: str, files: list[tuple[str, str, bytes | None]], *, fmt: str = "jsonl",
          archive: str | None = None, with_md5: bool = True) -> dict:
    """A registry entry; files are (name, url, content) with md5/size from the content."""
    return {"name": name, "format": fmt, "archive": archive, "files": [
        {"name": n, "url": u, "md5": md5(c) if c is not None and with_md5 else None,
         "size": len(c) if c is not None else None} for n, u, c in files]}


@pytest.fixture
def nq_shards(tmp_path):
    """The real NQ dev sample split into 5 gzipped shards of 2 examples (like nq-dev-0X)."""
    lines = gzip.decompress(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz").read_bytes()
                            ).splitlines(keepends=True)
    assert len(lines) == 10
    out = {}
    for i in range(5):
        out[f"nq-dev-0{i}.jsonl.gz"] = gzip.compress(b"".join(lines[2 * i:2 * i + 2]),
                                                        compresslevel=6, mtime=0)
    return out


def test_mirror_url_keeps_the_official_path(tmp_path):
    url = "https://storage.googleapis.com/natural_questions/v1.0/dev/nq-dev-00.jsonl.gz"
    assert mirror_url(url, "http://127.0.0.1:8000") == (
        "http://127.0.0.1:8000/natural_questions/v1.0/dev/nq-dev-00.jsonl.gz")
    assert mirror_url(url, "https://copy.example.org/nq/") == (
        "https://copy.example.org/nq/natural_questions/v1.0/dev/nq-dev-00.jsonl.gz")
    assert mirror_url(url, tmp_path) == (
        tmp_path.resolve().as_uri() + "/natural_questions/v1.0/dev/nq-dev-00.jsonl.gz")
    assert mirror_url(url, None) == url
    with pytest.raises(InputError, match="neither an http"):
        mirror_url(url, str(tmp_path / "no-such-dir"))


def test_builtin_nq_open_dev_through_a_mirror_then_by_name(home):
    """The built-in nq-open/dev (no published checksum) from a mirror laid out like the
    official path: fetched, its sha256 recorded, then usable by name by any reader."""
    src = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    data = src.read_bytes()
    reg = load_registry()
    ds = reg.get("nq-open/dev")
    with MirrorServer({NQ_OPEN_PATH: src}) as server:
        (item,) = fetch(ds, mirror=server.url, progress=False)
    final = dataset_dir(ds) / "NQ-open.dev.jsonl"
    assert final.read_bytes() == data
    assert (item.status, item.verified, item.size) == ("fetched", "sha256", len(data))
    assert item.sha256 == hashlib.sha256(data).hexdigest()
    rec = read_record(dataset_dir(ds))["NQ-open.dev.jsonl"]
    assert rec["sha256"] == hashlib.sha256(data).hexdigest()
    assert rec["fetched_from"] == server.url + NQ_OPEN_PATH
    assert rec["url"] == "https://raw.githubusercontent.com" + NQ_OPEN_PATH
    assert server.log == [(NQ_OPEN_PATH, None, 200)]
    assert resolve("nq-open/dev") == [final]

    from nqkit.formats.nq_open import read_nq_open
    assert list(read_nq_open("nq-open/dev")) == list(read_nq_open(src))
    # a second get checks and keeps the file: no request
    with MirrorServer({NQ_OPEN_PATH: src}) as server:
        (again,) = fetch(ds, mirror=server.url, progress=False)
        assert server.log == []
    assert again.status == "present" and again.sha256 == item.sha256


def test_builtin_squad_dev_sha256_equals_the_published_one(home):
    src = shared_file("data", "squad", "dev-v1.1.json")
    ds = load_registry().get("squad/dev-1.1")
    with MirrorServer({SQUAD_PATH: src}) as server:
        (item,) = fetch(ds, mirror=server.url, progress=False)
    assert item.sha256 == SQUAD_SHA256


def test_mirror_directory_is_read_through_file_urls(home, tmp_path):
    src = shared_file("data", "dpr", "nq-test.qa.tsv")
    mirror = tmp_path / "mirror"
    target = mirror / DPR_TEST_PATH.lstrip("/")
    target.parent.mkdir(parents=True)
    target.symlink_to(src)
    ds = load_registry().get("dpr/nq-test.qa")
    (item,) = fetch(ds, mirror=str(mirror), progress=False)
    assert item.path.read_bytes() == src.read_bytes()


def test_shards_fetch_only_the_chosen_files(home, tmp_path, nq_shards):
    files = {f"/nq/v1.0/dev/{n}": c for n, c in nq_shards.items()}
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/nq-dev", [(n, f"https://storage.example.org/nq/v1.0/dev/{n}", c)
                        for n, c in nq_shards.items()])])
    ds = load_registry([reg_file]).get("test/nq-dev")
    with MirrorServer(files) as server:
        got = fetch(ds, ds.select("1-2"), mirror=server.url, progress=False)
    assert [g.file.name for g in got] == ["nq-dev-01.jsonl.gz", "nq-dev-02.jsonl.gz"]
    assert sorted(p for p, _, _ in server.log) == ["/nq/v1.0/dev/nq-dev-01.jsonl.gz",
                                                   "/nq/v1.0/dev/nq-dev-02.jsonl.gz"]
    assert all(g.verified == "md5+size" for g in got)
    d = dataset_dir(ds)
    assert visible(d) == ["nq-dev-01.jsonl.gz", "nq-dev-02.jsonl.gz"]
    reg = load_registry([reg_file])
    assert resolve("test/nq-dev:1-2", registry=reg) == [d / "nq-dev-01.jsonl.gz",
                                                        d / "nq-dev-02.jsonl.gz"]
    with pytest.raises(InputError) as e:
        resolve("test/nq-dev", registry=reg)
    assert "only partly on disk (2 of 5 files)" in str(e.value)
    assert f"`nqkit data get test/nq-dev --registry {reg_file}`" in str(e.value)
    with pytest.raises(InputError, match="--shards 0-4"):
        resolve("test/nq-dev:0-4", registry=reg)


def test_several_files_download_at_once(home, tmp_path, nq_shards):
    """With --jobs 3 the server holds each request until 3 are in flight: the test passes
    only if three downloads really run concurrently."""
    files = {f"/d/{n}": c for n, c in list(nq_shards.items())[:3]}
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/three", [(n.rsplit("/", 1)[1], f"https://h.example.org{n}", c)
                       for n, c in files.items()])])
    ds = load_registry([reg_file]).get("test/three")
    with MirrorServer(files, gate=3) as server:
        got = fetch(ds, mirror=server.url, jobs=3, progress=False)
    assert server.max_in_flight == 3
    assert [g.path.read_bytes() for g in got] == list(files.values())


def test_dropped_connection_resumes_with_range_and_is_identical(home, tmp_path):
    src = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    data = src.read_bytes()
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/dev-sample", [("nq-dev-sample10.jsonl.gz",
                             "https://h.example.org/nq/nq-dev-sample10.jsonl.gz", data)])])
    ds = load_registry([reg_file]).get("test/dev-sample")
    with MirrorServer({"/nq/nq-dev-sample10.jsonl.gz": src}) as server:
        server.faults["/nq/nq-dev-sample10.jsonl.gz"] = Fault(drops=[300_000])
        (item,) = fetch(ds, mirror=server.url, backoff=0, progress=False)
    assert server.log == [("/nq/nq-dev-sample10.jsonl.gz", None, 200),
                          ("/nq/nq-dev-sample10.jsonl.gz", "bytes=300000-", 206)]
    assert item.path.read_bytes() == data
    assert item.md5 == md5(data) and item.verified == "md5+size"
    assert not list(dataset_dir(ds).glob("*.part"))


def test_interrupted_twice_fails_in_one_line_then_resumes(home, tmp_path):
    """Two drops with --retries 1: a clear error, the .part kept, no final file; the next
    run resumes from the kept bytes and ends byte-identical."""
    src = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    data = src.read_bytes()
    path = "/nq/nq-dev-sample10.jsonl.gz"
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/dev-sample", [("nq-dev-sample10.jsonl.gz", "https://h.example.org" + path,
                             data)])])
    ds = load_registry([reg_file]).get("test/dev-sample")
    final = dataset_dir(ds) / "nq-dev-sample10.jsonl.gz"
    part = final.with_name(final.name + ".part")
    with MirrorServer({path: src}) as server:
        server.faults[path] = Fault(drops=[200_000, 600_000])
        with pytest.raises(DownloadError) as e:
            fetch(ds, mirror=server.url, retries=1, backoff=0, progress=False)
        msg = str(e.value)
        assert "\n" not in msg
        assert "the download broke off 2 times in a row (last after 600,000 of " in msg
        assert "run the same command again to resume" in msg
        assert not final.exists()
        assert part.read_bytes() == data[:600_000]
        (item,) = fetch(ds, mirror=server.url, retries=1, backoff=0, progress=False)
        assert server.log[-1] == (path, "bytes=600000-", 206)
    assert final.read_bytes() == data and not part.exists()
    assert (item.status, item.resumed_from) == ("resumed", 600_000)
    assert item.md5 == md5(data)


def test_server_without_range_support_replaces_the_part(home, tmp_path):
    src = shared_file("data", "dpr", "nq-dev.qa.tsv")
    data = src.read_bytes()
    path = "/dpr/data/retriever/nq-dev.qa.csv"
    ds = load_registry().get("dpr/nq-dev.qa")
    d = dataset_dir(ds)
    d.mkdir(parents=True)
    (d / "nq-dev.qa.csv.part").write_bytes(b"stale bytes of another attempt")
    with MirrorServer({path: src}) as server:
        server.faults[path] = Fault(ignore_range=True)
        (item,) = fetch(ds, mirror=server.url, progress=False)
    assert server.log == [(path, "bytes=30-", 200)]
    assert item.path.read_bytes() == data and item.status == "fetched"


def test_corrupted_bytes_fail_the_md5_and_leave_nothing(home, tmp_path):
    src = shared_file("data", "nq-open", "NQ-open.efficientqa.dev.1.1.jsonl")
    data = src.read_bytes()
    path = "/nq_open/NQ-open.efficientqa.dev.1.1.jsonl"
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/eqa", [("NQ-open.efficientqa.dev.1.1.jsonl", "https://h.example.org" + path,
                      data)])])
    ds = load_registry([reg_file]).get("test/eqa")
    corrupted = data[:1000] + bytes([data[1000] ^ 0xFF]) + data[1001:]
    with MirrorServer({path: src}) as server:
        server.faults[path] = Fault(corrupt_at=1000)
        with pytest.raises(DownloadError) as e:
            fetch(ds, mirror=server.url, progress=False)
    assert str(e.value) == (
        f"NQ-open.efficientqa.dev.1.1.jsonl: checksum mismatch: expected md5 {md5(data)}, "
        f"got {md5(corrupted)} ({len(data):,} bytes from {server.url}{path}) — the corrupt "
        "download was removed; run the same command again, and check the mirror if it "
        "persists")
    assert visible(dataset_dir(ds)) == []


def test_size_disagreeing_with_the_registry_is_refused_before_download(home, tmp_path):
    src = shared_file("data", "dpr", "nq-test.qa.tsv")
    reg_file = write_registry(tmp_path / "reg.json", [{
        "name": "test/sized", "format": "dpr-qa", "files": [
            {"name": "nq-test.qa.csv", "url": "https://h.example.org/q.csv", "md5": None,
             "size": 1234}]}])
    ds = load_registry([reg_file]).get("test/sized")
    with MirrorServer({"/q.csv": src}) as server, pytest.raises(DownloadError) as e:
        fetch(ds, mirror=server.url, progress=False)
    assert f"the server offers {src.stat().st_size:,} bytes, the registry says 1,234" in str(
        e.value)
    assert visible(dataset_dir(ds)) == []


def test_404_and_connection_refused(home, tmp_path):
    ds = load_registry().get("nq-open/dev")
    with MirrorServer({}) as server, pytest.raises(DownloadError) as e:
        fetch(ds, mirror=server.url, progress=False)
    assert str(e.value).startswith(f"{server.url}{NQ_OPEN_PATH}: HTTP 404 Not Found — the "
                                   "mirror does not hold the file")
    dead = refused_url()
    with pytest.raises(DownloadError) as e:
        fetch(ds, mirror=dead, progress=False)
    assert str(e.value).startswith(f"{dead[len('http://'):]}: cannot connect (Connection "
                                   "refused) — check the network")
    assert not (dataset_dir(ds) / "NQ-open.dev.jsonl").exists()


def test_free_disk_is_checked_before_anything_is_fetched(home, tmp_path):
    reg_file = write_registry(tmp_path / "reg.json", [{
        "name": "test/huge", "format": "jsonl", "files": [
            {"name": "huge.jsonl", "url": "https://h.example.org/huge.jsonl", "md5": None,
             "size": 10**18}]}])
    ds = load_registry([reg_file]).get("test/huge")
    with MirrorServer({}) as server, pytest.raises(DownloadError) as e:
        fetch(ds, mirror=server.url, progress=False)
        assert server.log == []
    assert "not enough free disk space for test/huge: 1000000.0 TB to download" in str(e.value)
    assert list(dataset_dir(ds).iterdir()) == []


def test_zip_archive_is_verified_then_extracted(home, tmp_path):
    dev = shared_file("data", "ambignq", "dev_light.json")
    train = shared_file("data", "ambignq", "train_light.json")
    archive = tmp_path / "ambignq_light.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(train, "train_light.json")
        z.write(dev, "dev_light.json")
    data = archive.read_bytes()
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/ambig", [("ambignq_light.zip", "https://h.example.org/ambigqa/data/a.zip", data)],
        fmt="ambignq", archive="zip")])
    reg = load_registry([reg_file])
    ds = reg.get("test/ambig")
    with MirrorServer({"/ambigqa/data/a.zip": archive}) as server:
        (item,) = fetch(ds, mirror=server.url, progress=False)
    d = dataset_dir(ds)
    assert item.members == ("train_light.json", "dev_light.json")
    assert (d / "dev_light.json").read_bytes() == dev.read_bytes()
    assert (d / "train_light.json").read_bytes() == train.read_bytes()
    assert read_record(d)["ambignq_light.zip"]["members"] == ["train_light.json",
                                                              "dev_light.json"]
    assert resolve("test/ambig", registry=reg) == [d / "train_light.json", d / "dev_light.json"]
    assert resolve("test/ambig:dev_light", registry=reg) == [d / "dev_light.json"]

    from nqkit.formats.ambignq import read_ambignq
    os.environ["NQKIT_REGISTRY"] = str(reg_file)
    try:
        assert [e.id for e in read_ambignq("test/ambig:dev_light.json")] == [
            o["id"] for o in json.loads(dev.read_bytes())]
        with pytest.raises(InputError, match="names 2 files, expected one AmbigNQ file"):
            list(read_ambignq("test/ambig"))
    finally:
        del os.environ["NQKIT_REGISTRY"]


def test_a_file_on_disk_that_does_not_match_is_reported_not_trusted(home, tmp_path):
    data = b'{"question": "q", "answer": ["a"]}\n'
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/small", [("small.jsonl", "https://h.example.org/small.jsonl", data)])])
    ds = load_registry([reg_file]).get("test/small")
    d = dataset_dir(ds)
    d.mkdir(parents=True)
    (d / "small.jsonl").write_bytes(data.upper())
    with pytest.raises(DownloadError) as e:
        fetch(ds, progress=False)
    assert f"expected md5 {md5(data)}, got md5 {md5(data.upper())}" in str(e.value)
    assert not (d / RECORD).exists()


def test_a_second_process_on_the_same_file_is_refused(home, tmp_path):
    """Two `nqkit data get` of the same file at once would interleave bytes in one .part:
    the second is refused while the first holds the file's lock."""
    import fcntl

    src = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    ds = load_registry().get("nq-open/dev")
    d = dataset_dir(ds)
    d.mkdir(parents=True)
    with open(d / ".NQ-open.dev.jsonl.lock", "a") as held, MirrorServer({NQ_OPEN_PATH: src}
                                                                      ) as server:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(DownloadError) as e:
            fetch(ds, mirror=server.url, progress=False)
        assert str(e.value) == (f"{d}: another nqkit process is downloading "
                                "NQ-open.dev.jsonl — wait for it to finish, then run the "
                                "command again")
        assert server.log == []
        fcntl.flock(held, fcntl.LOCK_UN)
        (item,) = fetch(ds, mirror=server.url, progress=False)
    assert item.path.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("published", [True, False])
def test_a_file_changed_after_download_is_found_by_its_content(home, tmp_path, published):
    """Same size, one byte flipped: re-hashed because its stamp changed, refused in one
    line (with or without a published checksum: the sha256 recorded at download tells)."""
    data = b'{"question": "q", "answer": ["a"]}\n' * 50
    source = tmp_path / "small.jsonl"
    source.write_bytes(data)
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/small", [("small.jsonl", source.as_uri(), data if published else None)])])
    ds = load_registry([reg_file]).get("test/small")
    (item,) = fetch(ds, progress=False)
    assert item.status == "fetched"
    assert fetch(ds, progress=False)[0].status == "present"
    flipped = bytearray(data)
    flipped[10] ^= 1
    item.path.write_bytes(bytes(flipped))
    with pytest.raises(DownloadError, match="changed on disk after it was downloaded"):
        fetch(ds, progress=False)


def test_a_touched_file_is_hashed_once_and_its_new_stamp_recorded(home, tmp_path):
    data = b'{"question": "q", "answer": ["a"]}\n'
    source = tmp_path / "small.jsonl"
    source.write_bytes(data)
    reg_file = write_registry(tmp_path / "reg.json", [entry(
        "test/small", [("small.jsonl", source.as_uri(), data)])])
    ds = load_registry([reg_file]).get("test/small")
    (item,) = fetch(ds, progress=False)
    stamp = json.loads((item.path.parent / RECORD).read_text())["files"]["small.jsonl"]["stamp"]
    os.utime(item.path, ns=(stamp[1] + 10**9, stamp[1] + 10**9))
    assert fetch(ds, progress=False)[0].status == "present"
    new = json.loads((item.path.parent / RECORD).read_text())["files"]["small.jsonl"]["stamp"]
    st = item.path.stat()  # size, mtime, ctime, inode, device
    assert new == [stamp[0], stamp[1] + 10**9, st.st_ctime_ns, stamp[3], stamp[4]]
    assert new[2] >= stamp[2]


def test_a_mirror_holding_another_version_of_a_pinned_file_is_refused(home, tmp_path):
    # NQ-open dev with its last question dropped: a whole file, another version of it
    data = b"".join(shared_file("data", "nq-open", "NQ-open.dev.jsonl").read_bytes()
                    .splitlines(keepends=True)[:-1])
    other = tmp_path / "NQ-open.dev.jsonl"
    other.write_bytes(data)
    ds = load_registry().get("nq-open/dev")
    with MirrorServer({NQ_OPEN_PATH: other}) as server, pytest.raises(DownloadError) as e:
        fetch(ds, mirror=server.url, progress=False)
    assert str(e.value).startswith("NQ-open.dev.jsonl: this is not the file the registry "
                                   f"knows (sha256 {hashlib.sha256(data).hexdigest()[:12]}...")
    assert not (dataset_dir(ds) / "NQ-open.dev.jsonl").exists()
    assert not list(dataset_dir(ds).glob("*.part"))


OPENQA_EVAL = "/ehsk/OpenQA-eval/8b9317d0f0c92b52e1c71c0168dff74b5f76a5f4/data/"


def test_openqa_eval_model_outputs_are_verified_by_their_pinned_sha256(home, tmp_path):
    # the registry pins each released predictions file by the sha256 of the whole file;
    # a mirror laid out like the GitHub paths serves the real copies
    src = shared_file("data", "openqa-eval", "model_outputs")
    mirror = tmp_path / "mirror"
    (mirror / OPENQA_EVAL.strip("/")).mkdir(parents=True)
    (mirror / OPENQA_EVAL.strip("/") / "model_outputs").symlink_to(src)
    ds = load_registry().get("openqa-eval/model-outputs")
    got = fetch(ds, mirror=str(mirror), progress=False)
    assert len(got) == 12
    for item in got:
        data = (src / item.file.name).read_bytes()
        assert item.verified == "sha256"
        assert item.sha256 == hashlib.sha256(data).hexdigest()
        assert item.path.read_bytes() == data


def test_openqa_eval_judgments_have_no_checksum_to_check_and_say_so(home, tmp_path):
    # only half of the official judgments is held here, so no sha256 is pinned: the file
    # is fetched, nothing is claimed verified, and its sha256 is recorded for citing
    half = shared_file("data", "openqa-eval", "NQ301_human.tsv")
    ds = load_registry().get("openqa-eval/judgments")
    assert ds.checksums == "none"
    assert [f.name for f in ds.files] == ["NQ301_human.tsv", "NQ301_BEM.tsv",
                                          "NQ301_gpt-4.tsv", "NQ301_text-davinci-003.tsv"]
    with MirrorServer({OPENQA_EVAL + "NQ301_human.tsv": half}) as server:
        (item,) = fetch(ds, ds.select("0"), mirror=server.url, progress=False)
    assert item.verified == "none"
    assert item.sha256 == hashlib.sha256(half.read_bytes()).hexdigest()
    assert read_record(dataset_dir(ds))["NQ301_human.tsv"]["sha256"] == item.sha256
