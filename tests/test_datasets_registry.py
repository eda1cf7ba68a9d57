"""The registry: its facts equal the official-sources table, its claims about splits hold
on the real files, and user registries are read (or refused) in one line."""

from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path

import pytest

from nqkit.datasets.registry import builtin_registry, load_registry, parse_shards
from nqkit.errors import InputError

from conftest import ROOT, shared_file

ISSUE_NAMES = [
    "nq/dev", "nq/train", "nq/simplified-train", "nq-open/train", "nq-open/dev",
    "efficientqa/dev", "efficientqa/test", "ambignq/light", "ambignq/full", "squad/dev-1.1",
    "squad/train-1.1", "dpr/psgs_w100", "dpr/biencoder-nq-train", "dpr/biencoder-nq-dev",
    "dpr/nq-train.qa", "dpr/nq-dev.qa", "dpr/nq-test.qa",
]
# registered beyond the official table (src/nqkit/datasets/more-sources.tsv)
MORE_NAMES = ["qa-overlap/nq-annotations", "openqa-eval/judgments", "openqa-eval/model-outputs"]


def official_rows() -> list[dict[str, str]]:
    path = shared_file("data", "official-sources.tsv")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if line and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def test_every_dataset_of_the_issue_is_registered_in_order():
    assert builtin_registry().names() == ISSUE_NAMES + MORE_NAMES


def test_files_urls_md5_and_sizes_equal_the_official_table():
    rows = official_rows()
    reg = builtin_registry()
    got = [(ds.name, f.name, f.url, f.md5 or "", "" if f.size is None else str(f.size))
           for ds in reg for f in ds.files if ds.name in ISSUE_NAMES]
    assert got == [(r["dataset"], r["file"], r["url"], r["md5"], r["size"]) for r in rows]
    assert len(reg.get("nq/dev").files) == 5 and len(reg.get("nq/train").files) == 50
    # what is unknown is said to be unknown
    assert reg.get("dpr/nq-test.qa").checksums == "none"
    assert reg.get("nq-open/dev").checksums == "all"  # no md5 published; a pinned sha256
    assert reg.get("nq-open/dev").total_size is None
    assert reg.get("nq/dev").checksums == "all"
    assert reg.get("nq/dev").total_size == sum(
        int(r["size"]) for r in rows if r["dataset"] == "nq/dev")


def test_the_packaged_table_is_the_official_one_byte_for_byte():
    packaged = ROOT / "src" / "nqkit" / "datasets" / "official-sources.tsv"
    assert packaged.read_bytes() == shared_file("data", "official-sources.tsv").read_bytes()


def test_every_catalogued_dataset_has_files_and_every_file_a_catalogue_entry():
    doc = json.loads((ROOT / "src" / "nqkit" / "datasets" / "catalog.json").read_text(
        encoding="utf-8"))
    assert list(doc["datasets"]) == ISSUE_NAMES + MORE_NAMES
    assert list(dict.fromkeys(r["dataset"] for r in official_rows())) == ISSUE_NAMES
    for name, entry in doc["datasets"].items():
        assert entry["licence"] and entry["citation"] and entry["title"], name


def _questions_jsonl(path: Path) -> list[str]:
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8")
            .splitlines() if line.strip()]


def _questions_tsv(path: Path) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        q, _, answers = line.partition("\t")
        assert isinstance(ast.literal_eval(answers), list)
        out.append(q)
    return out


def test_split_relations_and_counts_hold_on_the_real_files():
    reg = builtin_registry()
    nq_open_dev = _questions_jsonl(shared_file("data", "nq-open", "NQ-open.dev.jsonl"))
    eqa_dev = _questions_jsonl(shared_file("data", "nq-open",
                                           "NQ-open.efficientqa.dev.1.1.jsonl"))
    dpr_test = _questions_tsv(shared_file("data", "dpr", "nq-test.qa.tsv"))
    dpr_dev = _questions_tsv(shared_file("data", "dpr", "nq-dev.qa.tsv"))
    ambig_dev = json.loads(shared_file("data", "ambignq", "dev_light.json").read_bytes())
    ambig_train = json.loads(shared_file("data", "ambignq", "train_light.json").read_bytes())
    squad = json.loads(shared_file("data", "squad", "dev-v1.1.json").read_bytes())
    n_squad = sum(len(p["qas"]) for a in squad["data"] for p in a["paragraphs"])

    assert reg.get("nq-open/dev").count == len(nq_open_dev) == 3610
    assert reg.get("dpr/nq-test.qa").count == len(dpr_test) == 3610
    assert reg.get("efficientqa/dev").count == len(eqa_dev) == 1800
    assert reg.get("dpr/nq-dev.qa").count == len(dpr_dev) == 8757
    assert reg.get("squad/dev-1.1").count == n_squad
    assert reg.get("ambignq/light").count == len(ambig_dev) + len(ambig_train)
    # "dpr/nq-test.qa has the questions of nq-open/dev" — the same 3,610 (in another order)
    assert sorted(dpr_test) == sorted(nq_open_dev)
    assert "dpr/nq-test.qa has the questions of nq-open/dev" in reg.get("dpr/nq-test.qa"
                                                                         ).relations
    assert "dpr/nq-test.qa has the questions of nq-open/dev" in reg.get("nq-open/dev"
                                                                         ).relations
    # EfficientQA dev is not NQ-open dev; DPR's nq-dev is not NQ-open dev either
    assert not set(eqa_dev) & set(nq_open_dev)
    assert not set(dpr_dev) & set(nq_open_dev)
    assert any("NOT nq-open/dev" in r for r in reg.get("efficientqa/dev").relations)
    assert any("NOT nq-open/dev" in r for r in reg.get("dpr/nq-dev.qa").relations)
    # AmbigNQ dev questions are DPR's NQ dev questions (held out of NQ-open train), not
    # NQ-open dev ones; AmbigNQ capitalises questions and adds '?', hence the normalisation
    def norm(qs):
        return {" ".join(re.sub(r"[^a-z0-9 ]", "", q.lower()).split()) for q in qs}

    assert norm(e["question"] for e in ambig_dev) <= norm(dpr_dev)
    assert not norm(e["question"] for e in ambig_dev) & norm(nq_open_dev)
    assert any("NOT nq-open/dev" in r for r in reg.get("ambignq/light").relations)
    # DPR's NQ train and dev make up NQ-open train
    assert reg.get("dpr/nq-train.qa").count + reg.get("dpr/nq-dev.qa").count == reg.get(
        "nq-open/train").count


def test_every_dataset_says_what_it_is_its_licence_and_citation():
    for ds in builtin_registry():
        assert ds.title and ds.description and ds.citation and ds.homepage, ds.name
        if ds.name.startswith("openqa-eval/"):  # the licence file released beside them
            licence = shared_file("data", "openqa-eval", "LICENSE").read_text(encoding="utf-8")
            assert ds.licence == "MIT" and licence.startswith("MIT License"), ds.name
        else:
            assert ds.licence.startswith(("CC BY-SA", "CC BY-NC")), ds.name
    assert builtin_registry().get("ambignq/full").archive == "zip"


@pytest.mark.parametrize(("spec", "n", "expected"), [
    ("0-1", 5, [0, 1]), ("3", 5, [3]), ("0,3,1-2", 5, [0, 1, 2, 3]), ("4,4", 5, [4]),
    ("0-49", 50, list(range(50))),
])
def test_parse_shards(spec, n, expected):
    assert parse_shards(spec, n) == expected


@pytest.mark.parametrize(("spec", "message"), [
    ("5", "shard range 5 is outside 0-4"), ("2-1", "shard range 2-1 is outside 0-4"),
    ("a", "expected shard numbers or ranges, found 'a'"), ("", "found ''"),
])
def test_parse_shards_refuses(spec, message):
    with pytest.raises(InputError, match=message) as e:
        parse_shards(spec, 5, "nq/dev")
    assert "nq/dev has 5 files, numbered 0-4" in str(e.value)


def test_user_registry_tsv_in_the_official_format(tmp_path, monkeypatch):
    tsv = tmp_path / "lab.tsv"
    tsv.write_text(
        "# our copies\n"
        "dataset\tfile\turl\tmd5\tsize\tformat\tlicence\n"
        "lab/dev\tdev-0.jsonl.gz\thttps://lab.example.org/dev-0.jsonl.gz\t"
        "21df324e9d0725c7cbc5ec06a34b630b\t12\tnq\tinternal\n"
        "lab/dev\tdev-1.jsonl.gz\thttps://lab.example.org/dev-1.jsonl.gz\t\t\tnq\tinternal\n",
        encoding="utf-8")
    monkeypatch.setenv("NQKIT_REGISTRY", str(tsv))
    reg = load_registry()
    ds = reg.get("lab/dev")
    assert [(f.name, f.md5, f.size) for f in ds.files] == [
        ("dev-0.jsonl.gz", "21df324e9d0725c7cbc5ec06a34b630b", 12),
        ("dev-1.jsonl.gz", None, None)]
    assert (ds.format, ds.licence, ds.source) == ("nq", "internal", str(tsv))
    assert len(reg) == len(ISSUE_NAMES) + len(MORE_NAMES) + 1
    # the same file given again with --registry is one source, not a duplicate
    assert len(load_registry([tsv])) == len(ISSUE_NAMES) + len(MORE_NAMES) + 1


@pytest.mark.parametrize(("text", "message"), [
    ("dataset\tfile\turl\nx/y\ta\thttps://h/a\n",
     "lab.tsv:1: expected the header dataset file url md5 size"),
    ("dataset\tfile\turl\tmd5\tsize\nx/y\ta\tftp://h/a\t\t\n",
     "lab.tsv:2: URL 'ftp://h/a' is not http, https or file"),
    ("dataset\tfile\turl\tmd5\tsize\nx/y\ta\thttps://h/a\tXYZ\t\n",
     "lab.tsv:2: md5 'XYZ' is not 32 lower-case hex digits"),
    ("dataset\tfile\turl\tmd5\tsize\nx/y\ta\thttps://h/a\t\tbig\n",
     "lab.tsv:2: size 'big' is not a number of bytes"),
    ("dataset\tfile\turl\tmd5\tsize\nx/y\t../a\thttps://h/a\t\t\n",
     "lab.tsv:2: file name '../a' must be a plain file name"),
    ("dataset\tfile\turl\tmd5\tsize\nnoslash\ta\thttps://h/a\t\t\n",
     "dataset name 'noslash' must look like group/name"),
    # a registry shared between labs must not reach outside NQKIT_HOME
    ("dataset\tfile\turl\tmd5\tsize\nx/../../../../escape\ta\thttps://h/a\t\t\n",
     "dataset name 'x/../../../../escape' must look like group/name"),
    ("dataset\tfile\turl\tmd5\tsize\nx/./y\ta\thttps://h/a\t\t\n",
     "dataset name 'x/./y' must look like group/name"),
    ("dataset\tfile\turl\tmd5\tsize\n/abs/x\ta\thttps://h/a\t\t\n",
     "dataset name '/abs/x' must look like group/name"),
    ("dataset\tfile\turl\tmd5\tsize\nnq/dev\ta.jsonl\thttps://h/a.jsonl\t\t\n",
     "dataset nq/dev is already defined by built-in — choose another name (to fetch the "
     "official files from elsewhere use --mirror URL)"),
])
def test_user_registry_errors_are_one_line(tmp_path, text, message):
    tsv = tmp_path / "lab.tsv"
    tsv.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_registry([tsv], env=False)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_user_registry_json_and_unknown_names(tmp_path):
    reg_file = tmp_path / "lab.json"
    reg_file.write_text(json.dumps({"datasets": [{
        "name": "lab/qa", "title": "Our QA", "format": "nq-open", "licence": "internal",
        "relations": ["lab/qa has the questions of nq-open/dev"],
        "files": [{"name": "qa.jsonl", "url": "https://lab.example.org/qa.jsonl"}]}]}),
        encoding="utf-8")
    reg = load_registry([reg_file], env=False)
    ds = reg.get("lab/qa")
    assert (ds.title, ds.relations, ds.files[0].md5) == (
        "Our QA", ("lab/qa has the questions of nq-open/dev",), None)
    with pytest.raises(InputError, match=r"unknown dataset 'nq/deev' — did you mean nq/dev"):
        reg.get("nq/deev")
    reg_file.write_text('{"datasets": [{"name": "lab/x"}]}', encoding="utf-8")
    with pytest.raises(InputError, match=r"lab\.json: dataset 0: malformed dataset entry"):
        load_registry([reg_file], env=False)


def test_a_dataset_made_by_hand_cannot_place_its_files_outside_the_data_home(tmp_path):
    from nqkit.datasets.local import dataset_dir
    from nqkit.datasets.registry import DataFile, Dataset

    f = DataFile("a.jsonl", "https://h/a.jsonl", None, None)
    ok = Dataset("lab/qa", "t", "jsonl", files=(f,))
    assert dataset_dir(ok, tmp_path) == tmp_path / "lab" / "qa"
    for name in ("x/../../escape", "x/..", "../x"):
        with pytest.raises(InputError, match="is not inside"):
            dataset_dir(Dataset(name, "t", "jsonl", files=(f,)), tmp_path)


def test_data_get_with_an_escaping_registry_name_writes_nothing(tmp_path, capsys,
                                                                monkeypatch):
    from nqkit.cli import main

    home = tmp_path / "home"
    source = tmp_path / "src.jsonl"
    source.write_text("{}\n", encoding="utf-8")
    tsv = tmp_path / "lab.tsv"
    tsv.write_text("dataset\tfile\turl\tmd5\tsize\n"
                   f"x/../../escape\ta.jsonl\t{source.as_uri()}\t\t\n", encoding="utf-8")
    before = sorted(p for p in tmp_path.rglob("*"))
    monkeypatch.setenv("NQKIT_HOME", str(home))
    monkeypatch.delenv("NQKIT_REGISTRY", raising=False)
    assert main(["data", "get", "x/../../escape", "--registry", str(tsv)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "must look like group/name" in err[0]
    assert sorted(p for p in tmp_path.rglob("*")) == before
