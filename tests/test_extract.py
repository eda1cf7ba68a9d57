"""``--extract NAME``: answer extraction from raw generations is a named, signed step
(issue 31 §2). The cases are derived by hand from the rules in nqkit.text.extract's
docstring; ``lm-eval-stops`` is also checked against lm-eval's own code in
tests/test_lm_eval_convention.py."""

from __future__ import annotations

import json

import pytest

from nqkit.cli import main
from nqkit.text.extract import EXTRACTORS, get_extractor

from conftest import shared_file

CASES = [
    # generation, first-line, lm-eval-stops, answer-is (found?)
    (" Paris.\nQuestion: what else", "Paris.", "Paris", ("Paris.", False)),
    ("The answer is Paris.", "The answer is Paris.", "The answer is Paris",
     ("Paris", True)),
    ("Answer: 1969, July\nmore", "Answer: 1969, July", "Answer: 1969",
     ("1969, July", True)),
    ("I think the answer is X. Actually, the ANSWER IS Washington, D.C.",
     "I think the answer is X. Actually, the ANSWER IS Washington, D.C.", "I think the answer is X",
     ("Washington, D.C", True)),
    ("", "", "", ("", False)),
    ("\nleading break", "", "", ("", False)),
    ("answer:", "answer:", "answer:", ("", True)),
]


@pytest.mark.parametrize(("generation", "first", "stops", "answer_is"), CASES)
def test_each_extractor_by_hand(generation: str, first: str, stops: str,
                                answer_is: tuple[str, bool]) -> None:
    assert get_extractor("none").apply(generation) == (generation, True)
    assert get_extractor("first-line").apply(generation) == (first, True)
    assert get_extractor("lm-eval-stops").apply(generation) == (stops, True)
    assert get_extractor("answer-is").apply(generation) == answer_is


def test_an_unknown_extractor_is_one_line(tmp_path, capsys) -> None:
    gold, preds = _files(tmp_path, [("q1", "Paris", "Paris")])
    assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds,
                 "--extract", "last-word"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown answer extraction 'last-word'" in err
    assert all(name in err for name in EXTRACTORS)


def _files(tmp_path, rows):
    gold, preds = tmp_path / "gold.jsonl", tmp_path / "preds.jsonl"
    gold.write_text("".join(json.dumps({"question": q, "answer": [a]}) + "\n"
                            for q, a, _ in rows), encoding="utf-8")
    preds.write_text("".join(json.dumps({"question": q, "prediction": p}) + "\n"
                             for q, _, p in rows), encoding="utf-8")
    return str(gold), str(preds)


ROWS = [("q1", "Paris", "Let me think. The answer is Paris."),
        ("q2", "the Beatles", "Beatles\nQuestion: who else"),
        ("q3", "1969", "In 1969, they landed.")]


@pytest.mark.parametrize(("name", "correct"), [
    # by hand: none meets no gold; first-line meets q2; the stops q2 ("Let me think",
    # "In 1969" miss); answer-is q1 and, falling back to its first line, q2
    ("none", 0), ("first-line", 1), ("lm-eval-stops", 1), ("answer-is", 2)])
def test_extraction_is_scored_signed_and_kept_per_item(tmp_path, capsys, name: str,
                                                        correct: int) -> None:
    gold, preds = _files(tmp_path, ROWS)
    items = tmp_path / "items.jsonl"
    assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds, "--extract", name,
                 "--format", "json", "--per-item", str(items)]) == 0
    captured = capsys.readouterr()
    got = json.loads(captured.out)
    assert got["num_correct"] == correct
    assert ("|extract:" in got["signature"]) == (name != "none")
    if name != "none":
        assert f"|extract:{name}|" in got["signature"]
    lines = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    # the raw generation stays the prediction; the extracted answer is beside it
    assert [x["prediction"] for x in lines] == [p for _, _, p in ROWS]
    assert all(("extracted" in x) == (name != "none") for x in lines)
    fell_back = "found nothing to extract in 2 of the 3 predictions" in captured.err
    assert fell_back == (name == "answer-is")
    assert ("extract-fallback" in got["signature"]) == (name == "answer-is")


def test_explain_and_compare_see_the_extracted_answer(tmp_path, capsys) -> None:
    gold, preds = _files(tmp_path, ROWS)
    assert main(["eval", "nq-open", "--gold", gold, "--predictions", preds,
                 "--extract", "first-line", "--explain", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["conventions"]["orqa"]["num_correct"] == 1  # q2's first line, Beatles
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({"question": q, "prediction": a}) + "\n"
                             for q, a, _ in ROWS), encoding="utf-8")
    assert main(["compare", "nq-open", "--gold", gold, preds, str(other),
                 "--extract", "first-line", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert "extract:first-line" in out


def test_extraction_leaves_official_numbers_alone_on_bare_answers(capsys) -> None:
    # real released answers are bare: first-line changes none of the 3,610 verdicts
    gold = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = shared_file("golden", "nq-open", "mixed.predictions.jsonl")
    scores = []
    for name in ("none", "first-line"):
        assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(preds),
                     "--allow-missing", "--extract", name, "--format", "json"]) == 0
        scores.append(json.loads(capsys.readouterr().out)["num_correct"])
    assert scores[0] == scores[1] == 1334
