"""The gold answers a predictions file carries, against the gold it is scored with
(issue 31 §4): named per question (identical, reordered, mojibake, different), and the
predictions scored under both versions."""

from __future__ import annotations

import json

import pytest

from nqkit.cli import main
from nqkit.formats.answer_versions import compare_versions, repair_mojibake

from conftest import shared_file


@pytest.mark.parametrize(("text", "repaired"), [
    ("54\u00c2\u00a0Mbit/s", "54\u00a0Mbit/s"),  # UTF-8 NBSP read as Latin-1/cp1252
    ("\u00e2\u201a\u00ac9.88", "\u20ac9.88"),  # the euro sign read as cp1252
    ("Pel\u00c3\u00a9", "Pel\u00e9"),
    ("Pel\u00e9", "Pel\u00e9"), ("\u20ac9.88", "\u20ac9.88"), ("plain", "plain"), ("", ""),
])
def test_mojibake_is_repaired_and_nothing_else_changes(text: str, repaired: str) -> None:
    assert repair_mojibake(text) == repaired


def test_each_kind_by_hand() -> None:
    reference = {"q1": ["a", "b"], "q2": ["a", "b"], "q3": ["54\u00a0Mbit/s"],
                 "q4": ["x"], "q5": ["only in gold"]}
    carried = {"q1": ["a", "b"], "q2": ["b", "a"],
               "q3": ["54\u00c2\u00a0Mbit/s", "54\u00a0Mbit/s"],  # both spellings: merged
               "q4": ["x", "y"], "q6": ["only in the file"]}
    v = compare_versions(carried, reference)
    assert v.counts == {"identical": 1, "reordered": 1, "mojibake": 1, "different": 1}
    assert (v.only_carried, v.only_reference) == (1, 1)
    assert v.kinds == {"q1": "identical", "q2": "reordered", "q3": "mojibake",
                       "q4": "different"}
    assert not v.same
    assert compare_versions({"q": ["a"]}, {"q": ["a"]}).same


def test_a_released_file_is_scored_under_both_versions(tmp_path, capsys) -> None:
    released = shared_file("data", "openqa-eval", "model_outputs", "NQ_FiD.jsonl")
    dev = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    assert main(["eval", "nq-open", "--gold", str(dev), "--predictions", str(released),
                 "--format", "json"]) == 0
    captured = capsys.readouterr()
    got = json.loads(captured.out)
    rows = [json.loads(x) for x in released.read_text(encoding="utf-8").splitlines()]
    gold = {json.loads(x)["question"]: json.loads(x)["answer"]
            for x in dev.read_text(encoding="utf-8").splitlines()}
    # the kinds, counted here with plain list operations
    identical = sum(r["answer"] == gold[r["question"]] for r in rows)
    reordered = sum(r["answer"] != gold[r["question"]]
                    and sorted(r["answer"]) == sorted(gold[r["question"]]) for r in rows)
    versions = got["answer_versions"]
    assert (versions["identical"], versions["reordered"]) == (identical, reordered)
    assert versions["mojibake"] > 0 and versions["different"] >= 0
    assert sum(versions[k] for k in ("identical", "reordered", "mojibake",
                                     "different")) == len(rows) == 3610
    # the number under the file's own answers is what eval prints with them as the gold
    own = tmp_path / "own-gold.jsonl"
    own.write_text("".join(json.dumps({"question": r["question"], "answer": r["answer"]})
                           + "\n" for r in rows), encoding="utf-8")
    assert main(["eval", "nq-open", "--gold", str(own), "--predictions", str(released),
                 "--format", "json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert versions["num_correct_own_gold"] == alone["num_correct"]
    assert versions["num_correct_own_gold"] != got["num_correct"]  # the versions matter
    assert "another version than --gold" in captured.err
    assert "answer_versions" not in alone  # its own answers are the gold: nothing to say


def test_the_same_versions_say_nothing(tmp_path, capsys) -> None:
    dev = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    rows = [json.loads(x) for x in dev.read_text(encoding="utf-8").splitlines()]
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"question": r["question"], "answer": r["answer"],
                                         "prediction": r["answer"][0]}) + "\n"
                             for r in rows), encoding="utf-8")
    assert main(["eval", "nq-open", "--gold", str(dev), "--predictions", str(preds),
                 "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "answer_versions" not in json.loads(captured.out)
    assert "another version" not in captured.err
