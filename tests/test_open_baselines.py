"""NQ-open and AmbigQA baselines: nearest question, answer sets, question disambiguation."""

from __future__ import annotations

import json
import string

import pytest

from nqkit.baselines.open_nearest_question import TfidfIndex, load_qa_memory
from nqkit.cli import main

from conftest import shared_file


def test_tfidf_nearest_and_ties():
    index = TfidfIndex(["who wrote hamlet", "who wrote macbeth", "capital of france",
                        "who wrote hamlet"])
    assert index.nearest("who wrote the play hamlet")[0][0] == 0  # tie with 3: lower index
    hits = index.nearest("who wrote macbeth", 3)
    assert [i for i, _ in hits][:1] == [1]
    assert hits[0][1] == pytest.approx(1.0)
    assert [i for i, _ in hits[1:]] == [0, 3]  # equal scores keep index order
    assert index.nearest("zzz unknown words")[0] == (0, 0.0)
    assert index.nearest("who wrote macbeth", exclude=1)[0][0] != 1


def test_load_memory_formats(tmp_path):
    tsv = tmp_path / "m.qa.tsv"
    tsv.write_text("who wrote hamlet\t['Shakespeare', 'W. S.']\n")
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text(json.dumps({"question": "capital of france", "answer": ["Paris"]}) + "\n")
    amb = tmp_path / "m.json"
    amb.write_text(json.dumps([{"id": "1", "question": "who sang x", "annotations": [
        {"type": "multipleQAs", "qaPairs": [{"question": "who sang x in 1990", "answer": ["A"]},
                                            {"question": "who sang x in 2000",
                                             "answer": ["B", "Bee"]}]}]}]))
    mem = load_qa_memory([tsv, jsonl, amb])
    assert mem.questions == ("who wrote hamlet", "capital of france", "who sang x")
    assert mem.answers == (("Shakespeare", "W. S."), ("Paris",), ("A", "B"))
    bad = tmp_path / "m.txt"
    bad.write_text("x")
    with pytest.raises(Exception, match="unknown memory file type"):
        load_qa_memory([bad])
    # a .csv is DPR's comma-separated QA file, read as retrieve and overlap read it
    csv_file = tmp_path / "m.csv"
    csv_file.write_text('who wrote hamlet,"[\'Shakespeare\']"\n')
    assert load_qa_memory([csv_file]).answers == (("Shakespeare",),)
    csv_file.write_text("x")
    with pytest.raises(Exception, match=r"m\.csv:1: expected 2 fields"):
        load_qa_memory([csv_file])


def test_cli_nearest_question(tmp_path, capsys):
    mem = tmp_path / "m.qa.tsv"
    mem.write_text("who wrote hamlet\t['Shakespeare']\ncapital of france\t['Paris']\n")
    qs = tmp_path / "q.jsonl"
    qs.write_text(json.dumps({"question": "who wrote the play hamlet",
                              "answer": ["William Shakespeare", "Shakespeare"]}) + "\n"
                  + json.dumps({"question": "capital of spain", "answer": ["Madrid"]}) + "\n")
    out = tmp_path / "p.jsonl"
    assert main(["baseline", "nearest-question", "--train", str(mem), "--gold",
                 str(qs), "-o", str(out), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["num_correct"], got["num_total"], got["memory_size"]) == (1, 2, 2)
    preds = [json.loads(line) for line in out.read_text().splitlines()]
    assert preds == [{"question": "who wrote the play hamlet", "prediction": "Shakespeare"},
                     {"question": "capital of spain", "prediction": "Paris"}]


@pytest.fixture(scope="module")
def ambig_paths():
    return (shared_file("data", "ambignq", "dev_light.json"),
            shared_file("data", "ambignq", "train_light.json"))


def _qd(method, ambig_paths, tmp_path, capsys):
    dev, train = ambig_paths
    out = tmp_path / f"{method}.json"
    assert main(["baseline", "ambigqa-questions", "--method", method, "--gold",
                 str(dev), "--train", str(train), "-o", str(out), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["metrics"], json.loads(out.read_text())


def test_prompt_baseline_matches_paper_table4(ambig_paths, tmp_path, capsys):
    metrics, preds = _qd("prompt", ambig_paths, tmp_path, capsys)
    # AmbigQA paper, Table 4, "Always prompt question", gold answers given: 47.4 / 0.0
    assert round(100 * metrics["F1 bleu4"]["multi"], 1) == 47.4
    assert round(100 * metrics["F1 edit-f1"]["multi"], 0) == 0.0
    assert metrics["F1 answer"]["all"] == 1.0
    assert len(preds) == 2002


def test_nearest_edit_beats_prompt_on_edit_f1(ambig_paths, tmp_path, capsys):
    prompt, _ = _qd("prompt", ambig_paths, tmp_path, capsys)
    edit, _preds = _qd("nearest-edit", ambig_paths, tmp_path, capsys)
    assert edit["F1 edit-f1"]["multi"] > prompt["F1 edit-f1"]["multi"] + 0.05
    assert edit["F1 answer"]["all"] == 1.0


def test_cli_ambigqa_answers_given_params(ambig_paths, tmp_path, capsys):
    dev, train = ambig_paths
    out = tmp_path / "a.json"
    assert main(["baseline", "ambigqa-answers", "--train", str(train), "--gold",
                 str(dev), "-o", str(out), "--k", "1", "--tau", "1", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    preds = json.loads(out.read_text())
    assert len(preds) == 2002 and all(isinstance(v, list) and v for v in preds.values())
    # F1_ans written from the paper (§3.2) and the official script: per annotation, gold
    # answers (alias sets) take, in order, the first unused equal prediction; with k
    # matches of n gold and m predicted answers F1 = 2PR/(P+R), P = k/m, R = k/n; the
    # best annotation counts; answers compare after SQuAD normalization.
    refs = json.loads(dev.read_text())
    total = 0.0
    for ex in refs:
        pred = [_squad_norm(a) for a in preds[ex["id"]]]
        best = 0.0
        for ann in ex["annotations"]:
            golds = ([ann["answer"]] if ann["type"] == "singleAnswer"
                     else [qa["answer"] for qa in ann["qaPairs"]])
            used: set[int] = set()
            for aliases in golds:
                norm = {_squad_norm(a) for a in aliases}
                j = next((j for j, p in enumerate(pred) if j not in used and p in norm), None)
                if j is not None:
                    used.add(j)
            k = len(used)
            if k:
                prec, rec = k / len(pred), k / len(golds)
                best = max(best, 2 * prec * rec / (prec + rec))
        total += best
    assert got["k"] == 1
    assert got["metrics"]["F1 answer"]["all"] == pytest.approx(total / len(refs), abs=1e-12)


def _squad_norm(text: str) -> str:
    """SQuAD v1.1 normalization, written out: lower, drop punctuation, articles, spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(w for w in text.split() if w not in ("a", "an", "the"))


@pytest.mark.parametrize(("extra", "message"), [
    (["--k", "2"], "give both --k and --tau, or neither"),
    (["--k", "0", "--tau", "0.5"], "argument --k: must be >= 1, found 0"),
    (["--k", "1", "--tau", "1.5"], "argument --tau: must be in [0, 1], found 1.5"),
    (["--tune-slice", "0"], "argument --tune-slice: must be >= 1, found 0"),
])
def test_cli_ambigqa_answers_bad_params(ambig_paths, tmp_path, capsys, extra, message):
    dev, train = ambig_paths
    assert main(["baseline", "ambigqa-answers", "--train", str(train), "--gold",
                 str(dev), "-o", str(tmp_path / "a.json"), *extra]) == 2
    assert message in capsys.readouterr().err
