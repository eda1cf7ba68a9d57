"""ReQA task builders (SQuAD, NQ) and `nqkit reqa build`: golden parity and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.formats.reqa import (
    build_from_squad,
    iter_nq_as_squad,
    load_task,
    nq_clean_text,
)
from nqkit.formats.squad import squad_articles_from_json

from conftest import shared_file


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x]


def test_squad_build_equals_golden_index_and_queries(tmp_path: Path, capsys) -> None:
    squad = shared_file("data", "squad", "dev-v1.1.json")
    gold = shared_file("golden", "reqa-squad-dev", "index.jsonl").parent
    out = tmp_path / "task"
    assert main(["reqa", "build", "--from", "squad", str(squad), "-o", str(out),
                 "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["index"] == 10250 and summary["queries"] == 11426
    assert _jsonl(out / "index.jsonl") == _jsonl(gold / "index.jsonl")
    assert _jsonl(out / "queries.jsonl") == _jsonl(gold / "queries.jsonl")
    task = load_task(out)
    assert len(task.paragraphs) == 2067
    assert task.params["source"] == "squad"


def test_nq_conversion_equals_golden_per_annotator() -> None:
    nq = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    gold = json.loads(shared_file("golden", "nq-to-squad",
                                  "nq-dev-sample10-per-annotator.json").read_text())
    counter = [0]
    articles = list(iter_nq_as_squad(nq, "each", counter))
    assert counter[0] == gold["records_in"] == 50
    assert articles == gold["data"]


def test_nq_build_cli_writes_task_and_conversion(tmp_path: Path, capsys) -> None:
    nq = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    out = tmp_path / "nq"
    assert main(["reqa", "build", "--from", "nq", str(nq), "-o", str(out),
                 "--nq-annotations", "first", "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # first annotations: only Deadpool 2's annotator 0 has one short answer in a <P>
    assert summary["queries"] == 1
    conv = json.loads((out / "nq-as-squad.json").read_text())
    assert conv["records_in"] == 10
    assert [a["title"] for a in conv["data"]] == ["Deadpool 2"]
    task = load_task(out)
    assert task.params["nq_annotations"] == "first"
    assert task.queries[0].answer_sentence in {c.sentence for c in task.index}


def test_nq_clean_text_spacing() -> None:
    html = b"<P>a<B>b</B> c</P>"
    tokens = [
        {"token": "<P>", "html_token": True, "start_byte": 0, "end_byte": 3},
        {"token": "a", "html_token": False, "start_byte": 3, "end_byte": 4},
        {"token": "<B>", "html_token": True, "start_byte": 4, "end_byte": 7},
        {"token": "b", "html_token": False, "start_byte": 7, "end_byte": 8},
        {"token": "</B>", "html_token": True, "start_byte": 8, "end_byte": 12},
        {"token": "c", "html_token": False, "start_byte": 13, "end_byte": 14},
        {"token": "</P>", "html_token": True, "start_byte": 14, "end_byte": 18},
    ]
    assert nq_clean_text(tokens, html, 0, 7) == "ab c"
    # text before "c", looking one token past the end, keeps the separating space
    assert nq_clean_text(tokens, html, 0, 5, look_past_end=True) == "ab "


def _tiny_squad() -> dict[str, object]:
    ctx = "Paris is in France. It is big. Lyon is too."
    return {"data": [{"title": "T", "paragraphs": [
        {"context": ctx, "qas": [
            {"id": "1", "question": "Where is Paris?",
             "answers": [{"text": "France", "answer_start": 12},
                         {"text": "in France", "answer_start": 9}]},
            {"id": "2", "question": "Is it big?",
             "answers": [{"text": "big", "answer_start": 26}]},
            {"id": "3", "question": "Gap?",  # answer_start on the space between sentences
             "answers": [{"text": " It", "answer_start": 19}]},
        ]},
        {"context": "No questions here.", "qas": []},
        {"context": ctx, "qas": [{"id": "4", "question": "Lyon?",
                                  "answers": [{"text": "Lyon", "answer_start": 31}]}]},
    ]}]}


def test_squad_builder_rules() -> None:
    task = build_from_squad(squad_articles_from_json(_tiny_squad(), "tiny"))
    # the repeated answer sentence of question 1 gives one query; the gap goes forward
    assert [(q.question, q.answer_sentence, q.doc_id) for q in task.queries] == [
        ("Where is Paris?", "Paris is in France.", 1), ("Is it big?", "It is big.", 1),
        ("Gap?", "It is big.", 1), ("Lyon?", "Lyon is too.", 3)]
    # a paragraph without questions adds no sentence; a repeated paragraph adds none either
    assert [(c.sentence, c.doc_id) for c in task.index] == [
        ("Paris is in France.", 1), ("It is big.", 1), ("Lyon is too.", 1)]
    assert len(task.paragraphs) == 3


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"version": "1.1"}, "tiny.json: missing key 'data'"),
        ({"data": [{"paragraphs": [{"context": 3, "qas": []}]}]},
         "tiny.json:data[0].paragraphs[0]: 'context' must be str, found int"),
        ({"data": [{"paragraphs": [{"context": "ab", "qas": [
            {"question": "q", "answers": [{"text": "x", "answer_start": 7}]}]}]}]},
         "answer_start 7 is outside the context (length 2)"),
        # offsets 0-2 are positions of "ab" (2 is its end): 3 is outside, 2 is inside but
        # holds no "x"
        ({"data": [{"paragraphs": [{"context": "ab", "qas": [
            {"question": "q", "answers": [{"text": "x", "answer_start": 3}]}]}]}]},
         "tiny.json:data[0].paragraphs[0].qas[0].answers[0]: answer_start 3 is outside the "
         "context (length 2)"),
        ({"data": [{"paragraphs": [{"context": "ab", "qas": [
            {"question": "q", "answers": [{"text": "x", "answer_start": 2}]}]}]}]},
         "tiny.json:data[0].paragraphs[0].qas[0].answers[0]: the answer text 'x' is not at "
         "answer_start 2 of the context (found '')"),
    ],
)
def test_bad_squad_input(tmp_path: Path, capsys, doc: object, message: str) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "task"
    assert main(["reqa", "build", "--from", "squad", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nqkit: error: ") and message in err
    assert not out.exists()


def test_missing_input_and_not_a_task(tmp_path: Path, capsys) -> None:
    assert main(["reqa", "build", "--from", "squad", str(tmp_path / "nope.json"),
                 "-o", str(tmp_path / "t")]) == 2
    assert "nope.json: SQuAD file does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["reqa", "run", "--gold", str(tmp_path / "empty")]) == 2
    assert "no params.json: this is not a ReQA task directory" in capsys.readouterr().err


def test_nq_bad_record(tmp_path: Path, capsys) -> None:
    path = tmp_path / "nq.jsonl"
    path.write_text(json.dumps({"example_id": 7, "annotations": []}) + "\n")
    assert main(["reqa", "build", "--from", "nq", str(path), "-o", str(tmp_path / "t")]) == 2
    assert (f"{path}:1 (example 7): 'annotations' must be a non-empty list"
            in capsys.readouterr().err)


def test_task_directory_is_checked_on_load(tmp_path: Path) -> None:
    out = tmp_path / "t"
    from nqkit.formats.reqa import save_task

    save_task(build_from_squad(squad_articles_from_json(_tiny_squad(), "tiny")), out)
    lines = (out / "queries.jsonl").read_text().splitlines()
    lines[1] = json.dumps({"question": "q", "answer_sentence": "not indexed", "doc_id": 1})
    (out / "queries.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"queries.jsonl:2: the answer sentence is not in the"):
        load_task(out)
    params = json.loads((out / "params.json").read_text())
    (out / "params.json").write_text(json.dumps({**params, "format_version": 99}))
    with pytest.raises(InputError, match="format_version 99 is not supported"):
        load_task(out)
