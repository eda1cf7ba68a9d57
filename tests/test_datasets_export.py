"""Export of registry datasets: JSON lines and Parquet round trips on real files.

Expected records are built here from the source files with the standard library (json,
csv), never from nqkit's readers; Parquet is read back with pyarrow.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pytest

from nqkit.datasets import export as export_mod
from nqkit.datasets.export import export_dataset, iter_json_list, iter_rows
from nqkit.datasets.registry import DataFile, Dataset
from nqkit.errors import InputError

from conftest import require, shared_file


def dataset(fmt: str, names: list[str], archive: str | None = None) -> Dataset:
    return Dataset(name=f"test/{fmt}", title=fmt, format=fmt, archive=archive,
                   files=tuple(DataFile(n, f"https://h.example.org/{n}") for n in names))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def strip_nulls(value):
    """Parquet has a column for every field: absent fields read back as null."""
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value


def test_jsonl_export_copies_the_lines_and_parquet_reads_back_equal(tmp_path):
    pq = require("pyarrow.parquet")
    src = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    ds = dataset("nq-open", [src.name])
    n = export_dataset(ds, [src], tmp_path / "dev.jsonl", "jsonl")
    assert n == 3610
    assert (tmp_path / "dev.jsonl").read_bytes() == src.read_bytes()
    n = export_dataset(ds, [src], tmp_path / "dev.parquet", "parquet")
    assert n == 3610
    table = pq.read_table(tmp_path / "dev.parquet")
    assert table.column_names == ["question", "answer"]
    assert table.to_pylist() == read_jsonl(tmp_path / "dev.jsonl")


def test_squad_is_one_record_per_question(tmp_path):
    pq = require("pyarrow.parquet")
    src = shared_file("data", "squad", "dev-v1.1.json")
    doc = json.loads(src.read_bytes())
    expected = [{"id": qa["id"], "title": a["title"], "context": p["context"],
                 "question": qa["question"], "answers": qa["answers"]}
                for a in doc["data"] for p in a["paragraphs"] for qa in p["qas"]]
    ds = dataset("squad", [src.name])
    out = tmp_path / "squad.jsonl.gz"
    assert export_dataset(ds, [src], out, "jsonl") == len(expected) == 10570
    got = [json.loads(line) for line in gzip.decompress(out.read_bytes()).splitlines()]
    assert got == expected
    # small batches: many row groups, the same records
    assert export_dataset(ds, [src], tmp_path / "squad.parquet", "parquet",
                          batch_bytes=256 << 10) == len(expected)
    f = pq.ParquetFile(tmp_path / "squad.parquet")
    assert f.metadata.num_row_groups > 1
    assert f.read().to_pylist() == expected


def test_json_list_is_read_incrementally(monkeypatch):
    src = shared_file("data", "ambignq", "dev_light.json")
    expected = json.loads(src.read_bytes())
    monkeypatch.setattr(export_mod, "_READ_CHARS", 997)  # many refills, elements cut
    got = [obj for obj, _ in iter_json_list(src)]
    assert got == expected
    big = shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
    assert [obj for obj, _ in iter_json_list(big)] == json.loads(big.read_bytes())


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": 1}', "expected a JSON list"),
    ('[{"a": 1}, {"b": 2}', "after item 1: expected ',' or ']', found the end of the file"),
    ('[{"a": 1}, {"b": 2', "item 1: malformed JSON"),
    ('[{"a": 1} {"b": 2}]', "after item 0: expected ',' or ']', found '{'"),
])
def test_json_list_errors(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        list(iter_json_list(path))


def test_json_list_of_numbers_cut_at_the_buffer_end(tmp_path, monkeypatch):
    path = tmp_path / "n.json"
    values = list(range(0, 300_000, 7))
    path.write_text(json.dumps(values), encoding="utf-8")
    monkeypatch.setattr(export_mod, "_READ_CHARS", 13)
    assert [v for v, _ in iter_json_list(path)] == values


def test_archive_members_keep_their_split_apart(tmp_path):
    pq = require("pyarrow.parquet")
    dev = shared_file("data", "ambignq", "dev_light.json")
    train = shared_file("data", "ambignq", "train_light.json")
    ds = dataset("ambignq", ["ambignq_light.zip"], archive="zip")
    expected = [{"file": "train_light.json", **o} for o in json.loads(train.read_bytes())] + [
        {"file": "dev_light.json", **o} for o in json.loads(dev.read_bytes())]
    out = tmp_path / "ambig.jsonl"
    assert export_dataset(ds, [train, dev], out, "jsonl") == 12038
    assert read_jsonl(out) == expected
    assert export_dataset(ds, [train, dev], tmp_path / "ambig.parquet", "parquet",
                          batch_bytes=64 << 10) == 12038
    assert strip_nulls(pq.read_table(tmp_path / "ambig.parquet").to_pylist()) == expected


def test_parquet_schema_that_grows_is_unified_without_loss(tmp_path, monkeypatch):
    """Single-answer AmbigNQ examples first, then multi-answer ones: the first batch's
    schema has no qaPairs; casting a later batch to it would silently drop them, so the
    writer must unify the schema over all batches and write again."""
    pq = require("pyarrow.parquet")
    dev = json.loads(shared_file("data", "ambignq", "dev_light.json").read_bytes())
    ordered = sorted(dev, key=lambda o: any(a["type"] == "multipleQAs"
                                            for a in o["annotations"]))
    assert ordered[0]["annotations"][0]["type"] == "singleAnswer"
    assert ordered[-1]["annotations"][0]["type"] == "multipleQAs"
    unified = []
    real_unify = export_mod._unify
    monkeypatch.setattr(export_mod, "_unify", lambda *a: unified.append(1) or real_unify(*a))
    out = tmp_path / "grow.parquet"
    with out.open("wb") as f:
        n = export_mod.write_parquet_rows(lambda: ((o, None, 1) for o in ordered), f,
                                          batch_rows=100)
    assert n == len(dev) and unified
    assert strip_nulls(pq.read_table(out).to_pylist()) == ordered


def test_dpr_passages_tsv_with_quoted_text(tmp_path):
    """A psgs_w100-like TSV written from real passages of biencoder-nq-dev: DPR's files
    quote texts that contain quotes, as csv does; the export gives back the texts."""
    pq = require("pyarrow.parquet")
    bi = json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json").read_bytes())
    seen: dict[str, dict] = {}
    for ex in bi:
        for key in ("positive_ctxs", "negative_ctxs", "hard_negative_ctxs"):
            for c in ex[key]:
                seen.setdefault(str(c["passage_id"]), {"id": str(c["passage_id"]),
                                                       "text": c["text"], "title": c["title"]})
    rows = list(seen.values())
    assert any('"' in r["text"] for r in rows)  # the quoting is exercised
    buf = io.StringIO()
    w = csv.writer(buf, delimiter="\t", lineterminator="\n")
    w.writerow(["id", "text", "title"])
    w.writerows([r["id"], r["text"], r["title"]] for r in rows)
    src = tmp_path / "psgs_w100.tsv.gz"
    src.write_bytes(gzip.compress(buf.getvalue().encode("utf-8"), mtime=0))
    ds = dataset("dpr-passages", [src.name])
    assert [r for r, _, _ in iter_rows(ds, [src])] == rows
    export_dataset(ds, [src], tmp_path / "p.parquet", "parquet")
    assert pq.read_table(tmp_path / "p.parquet").to_pylist() == rows


def test_dpr_qa_rows(tmp_path):
    src = shared_file("data", "dpr", "nq-test.qa.tsv")
    import ast
    expected = []
    for line in src.read_text(encoding="utf-8").splitlines():
        q, _, a = line.partition("\t")
        expected.append({"question": q, "answers": ast.literal_eval(a)})
    ds = dataset("dpr-qa", ["nq-test.qa.csv"])
    export_dataset(ds, [src], tmp_path / "t.jsonl", "jsonl")
    assert read_jsonl(tmp_path / "t.jsonl") == expected


def test_parquet_to_stdout_is_refused(tmp_path):
    src = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    with pytest.raises(InputError, match="Parquet cannot be streamed to standard output"):
        export_dataset(dataset("nq-open", [src.name]), [src], "-", "parquet")


@pytest.mark.parametrize("fmt, name", [("nq", "nq-dev-sample10.jsonl.gz"),
                                       ("nq-simplified", "simplified-nq-dev-sample10.jsonl")])
def test_nq_ids_go_to_parquet_as_strings_like_the_hf_dataset(tmp_path, fmt, name):
    """NQ's annotation ids are unsigned 64-bit (many beyond 2**63) and its example ids
    signed: no integer column holds them ("Python int too large to convert to C long"
    before). Parquet gets strings, as the HF natural_questions dataset has; JSON lines
    keep the source's numbers."""
    pq = require("pyarrow.parquet")
    src = shared_file("data", "nq", name)
    raw = gzip.decompress(src.read_bytes()) if name.endswith(".gz") else src.read_bytes()
    source = [json.loads(line) for line in raw.splitlines()]
    assert any(a["annotation_id"] >= 2**63 for e in source for a in e["annotations"])
    assert any(e["example_id"] < 0 for e in source)
    ds = dataset(fmt, [name])
    assert export_dataset(ds, [src], tmp_path / "nq.parquet", "parquet") == 10
    table = pq.read_table(tmp_path / "nq.parquet")
    assert str(table.schema.field("example_id").type) == "string"
    expected = [{**e, "example_id": str(e["example_id"]), "annotations": [
        {**a, "annotation_id": str(a["annotation_id"])} for a in e["annotations"]]}
        for e in source]
    got = strip_nulls(table.to_pylist())
    assert [g["example_id"] for g in got] == [e["example_id"] for e in expected]
    assert [g["annotations"] for g in got] == strip_nulls([e["annotations"] for e in expected])
    assert got == strip_nulls(expected)
    assert export_dataset(ds, [src], tmp_path / "nq.jsonl", "jsonl") == 10
    assert read_jsonl(tmp_path / "nq.jsonl") == source
