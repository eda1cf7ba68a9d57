"""Index directories verified by content: per-file SHA-256, the index digest, the record
of verified file states, ``retrieve --verify`` and ``nqkit index verify``.

The bad-input catalogue (tests/test_catalogue.py, ``retrieve-tampered/*``) alters every
file of an index with its size kept and checks the one-line refusal; this module checks
what the catalogue cannot: what is hashed when, the digest's meaning, and the model
directory of a dense index.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.retrieval import open_index
from nqkit.retrieval.corpus import Passage, write_passages
from nqkit.retrieval.open_index import index_digest, load_index, verify_index

from conftest import require

PASSAGES = [Passage(str(i), f"passage {i} about topic {i % 7} and the word w{i * 13 % 97}",
                    f"Title {i % 5}") for i in range(1, 61)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "c.tsv"
    write_passages(path, PASSAGES)
    return path


def _build(corpus: Path, out: Path, *extra: str) -> Path:
    require("bm25s")
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus),
                 "--retriever", "bm25", "-o", str(out), "--shard-size", "32", *extra,
                 "--format", "json"]) == 0
    return out


@pytest.fixture(scope="module")
def index(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(corpus, tmp_path_factory.mktemp("ix") / "ix")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("NQKIT_HOME", str(h))
    return h


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_params_record_every_file_by_content_and_the_digest_over_them(index: Path) -> None:
    params = json.loads((index / "params.json").read_text())
    on_disk = sorted(p.relative_to(index).as_posix() for p in index.rglob("*")
                     if p.is_file() and p.name != "params.json")
    assert sorted(params["files"]) == on_disk
    for name, entry in params["files"].items():  # computed independently here
        assert entry == {"bytes": (index / name).stat().st_size, "sha256": _sha(index / name)}
    assert params["digest"] == index_digest(params)
    assert load_index(index).digest == params["digest"]


def test_two_builds_of_one_corpus_have_one_digest_and_other_settings_another(
        corpus: Path, index: Path, tmp_path: Path) -> None:
    again = _build(corpus, tmp_path / "again")
    assert load_index(again).digest == load_index(index).digest
    other = _build(corpus, tmp_path / "k1", "--k1", "1.2")
    assert load_index(other).digest != load_index(index).digest
    resharded = _build(corpus, tmp_path / "shards", "--shard-size", "16")
    assert load_index(resharded).digest != load_index(index).digest


def test_two_runs_print_one_digest_and_an_altered_index_cannot_print_it(
        index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qa = tmp_path / "q.tsv"
    qa.write_text("passage 3 topic\t['w39']\nthe word w26\t['Title 2']\n", encoding="utf-8")

    def signature(ix: Path) -> str:
        code = main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold",
                     str(qa), "--hits", "5", "--eval"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return next(line for line in out.splitlines() if line.startswith("signature: "))

    digest = load_index(index).digest
    first, second = signature(index), signature(index)
    assert first == second and f"|index:{digest[:12]}|" in first
    # A forger who alters a file and rewrites its checksum and the digest consistently
    # makes another index: it runs, under another digest, never under the original one.
    forged = _copy(index, tmp_path / "forged")
    shard = forged / "passages" / "shard-00000.tsv"
    data = bytearray(shard.read_bytes())
    data[data.index(b"passage 2 ") + 8] = ord("9")
    shard.write_bytes(bytes(data))
    params = json.loads((forged / "params.json").read_text())
    params["files"]["passages/shard-00000.tsv"]["sha256"] = _sha(shard)
    params["digest"] = index_digest(params)
    (forged / "params.json").write_text(json.dumps(params))
    assert f"|index:{digest[:12]}|" not in signature(forged)
    # the same alteration without the forgery: refused
    altered = _copy(index, tmp_path / "altered")
    (altered / "passages" / "shard-00000.tsv").write_bytes(bytes(data))
    assert main(["retrieve", "--cluster", "none", "--index", str(altered), "--gold",
                 str(qa), "--hits", "5", "--eval"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "passages/shard-00000.tsv has other content" in err


def _hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files hashed from now on (every call of sha256_files)."""
    import nqkit.io

    seen: list[str] = []
    real = nqkit.io.sha256_files

    def spy(paths, **kw):  # type: ignore[no-untyped-def]
        paths = list(paths)
        seen.extend(p.name for p in paths)
        return real(paths, **kw)
    monkeypatch.setattr(nqkit.io, "sha256_files", spy)
    return seen


def test_large_files_are_hashed_once_per_state_small_ones_every_time(
        index: Path, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ix = _copy(index, tmp_path / "ix")
    files = json.loads((ix / "params.json").read_text())["files"]
    big = {n for n, e in files.items() if e["bytes"] > 900}
    assert big and len(big) < len(files)
    monkeypatch.setattr(open_index, "SMALL_FILE", 900)
    seen = _hashed(monkeypatch)
    load_index(ix)
    assert len(seen) == len(files)  # first load: every file
    seen.clear()
    load_index(ix)
    assert sorted(seen) == sorted(Path(n).name for n in set(files) - big)  # the small ones
    assert list((home / "cache" / "verified").iterdir())  # the record is outside the index
    seen.clear()
    load_index(ix, full=True)  # retrieve --verify, index verify: everything
    assert len(seen) == len(files)


def test_an_edit_in_place_that_restores_size_and_mtime_is_still_seen(
        index: Path, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ix = _copy(index, tmp_path / "ix")
    monkeypatch.setattr(open_index, "SMALL_FILE", 0)  # every file trusted by its state
    load_index(ix)
    target = ix / "bm25" / "data-00000.npy"
    st = target.stat()
    data = bytearray(target.read_bytes())
    data[-1] ^= 0x40
    with open(target, "r+b") as f:  # same inode, same size
        f.write(bytes(data))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert target.stat().st_ino == st.st_ino and target.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(InputError, match=r"bm25/data-00000\.npy has other content"):
        load_index(ix)


def test_a_lost_or_foreign_record_only_costs_a_rehash(
        index: Path, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ix = _copy(index, tmp_path / "ix")
    monkeypatch.setattr(open_index, "SMALL_FILE", 0)
    load_index(ix)
    for record in (home / "cache" / "verified").iterdir():
        record.write_text("{not json")
    seen = _hashed(monkeypatch)
    assert load_index(ix).digest == load_index(index).digest
    n = len(json.loads((ix / "params.json").read_text())["files"])
    assert len(seen) == 2 * n  # both loads hashed everything
    # an unwritable home: verified every time, never an error
    shutil.rmtree(home)
    home.write_text("a file where the home should be")
    seen.clear()
    load_index(ix)
    load_index(ix)
    assert len(seen) == 2 * n


def test_index_verify_names_each_file_and_exits_2_on_a_difference(
        index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", "verify", str(index), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["digest"] == load_index(index).digest
    assert {Path(f["path"]).relative_to(index).as_posix() for f in out["files"]} == set(
        json.loads((index / "params.json").read_text())["files"])
    ix = _copy(index, tmp_path / "ix")
    (ix / "bm25" / "vocab.json").write_bytes(
        (ix / "bm25" / "vocab.json").read_bytes().replace(b'"passag"', b'"passog"', 1))
    (ix / "passages" / "offsets-00001.npy").unlink()
    assert main(["index", "verify", str(ix)]) == 2
    out, err = capsys.readouterr()
    rows = {line.split()[0]: line.split()[2:] for line in out.splitlines()[3:]}
    assert rows[str(ix / "bm25" / "vocab.json")][0] == "DIFFERS"
    assert rows[str(ix / "passages" / "offsets-00001.npy")] == ["MISSING"]
    assert rows[str(ix / "bm25" / "idf.npy")] == ["ok"]
    assert err.count("\n") == 1 and f"2 of {len(rows)} files differ" in err


def test_verify_index_reads_nothing_outside_the_index(index: Path, tmp_path: Path) -> None:
    ix = _copy(index, tmp_path / "ix")
    params = json.loads((ix / "params.json").read_text())
    params["files"]["../../etc/passwd"] = params["files"].pop("bm25/idf.npy")
    (ix / "params.json").write_text(json.dumps(params))
    with pytest.raises(InputError, match="leaves the directory"):
        verify_index(ix)


def test_dense_index_verifies_the_model_directory_it_reads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require("sentence_transformers")
    from nqkit.retrieval.encoders import default_model_path

    model = Path(shutil.copytree(default_model_path(), tmp_path / "model"))
    corpus = tmp_path / "c.tsv"
    write_passages(corpus, PASSAGES[:8])
    ix = tmp_path / "ix"
    assert main(["index", "build", "--cluster", "none", "--passages", str(corpus),
                 "--retriever", "dense", "--model", str(model), "-o", str(ix)]) == 0
    params = json.loads((ix / "params.json").read_text())
    files = sorted(p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file())
    assert sorted(params["model_files"]) == files
    digest = load_index(ix).digest
    # the same model elsewhere gives the same digest: the path is not part of it
    assert index_digest({**params, "settings": {**params["settings"], "model": "/x"}}) == digest
    # a hybrid run's signature names both indexes by digest
    from nqkit.retrieval.open_run import run_signature_settings

    sparse = load_index(_build(corpus, tmp_path / "bm25"))
    sig = run_signature_settings([load_index(ix), sparse], "rrf", 0.5, 100)
    # the bm25 index is the first part whatever the order given, the dense one the second
    assert (sig["1.retriever"], sig["1.index"], sig["2.retriever"], sig["2.index"]) == (
        "bm25", sparse.digest[:12], "dense", digest[:12])
    config = model / "config.json"
    data = config.read_bytes()
    config.write_bytes(data.replace(b"0.1", b"0.2", 1))  # same size, other weights' config
    assert len(config.read_bytes()) == len(data)
    qa = tmp_path / "q.tsv"
    qa.write_text("passage 3\t['w39']\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["retrieve", "--cluster", "none", "--index", str(ix), "--gold", str(qa),
                 "--eval"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.json has other content" in err
