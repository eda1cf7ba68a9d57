"""NQ-open exact match: golden parity with the official ORQA script, CLI and bad input."""

from __future__ import annotations

import json

import orjson
import pytest

from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.formats.nq_open import (
    NqOpenExample,
    NqOpenPrediction,
    read_nq_open,
    read_nq_open_predictions,
)
from nqkit.metrics.nq_open import regex_match, score_nq_open
from nqkit.text.normalize import normalize_answer, normalize_answer_nfd

from conftest import shared_file

GOLDEN = ["empty", "first_answer", "last_answer_perturbed", "mixed", "shuffled"]


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_parity(name):
    refs = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = shared_file("golden", "nq-open", f"{name}.predictions.jsonl")
    official = json.loads(shared_file("golden", "nq-open", f"{name}.official.json").read_text())
    result = score_nq_open(read_nq_open(refs), read_nq_open_predictions(preds), missing="wrong")
    assert result.official() == official


def test_empty_gold_answers_are_counted():
    refs = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = shared_file("golden", "nq-open", "empty.predictions.jsonl")
    result = score_nq_open(read_nq_open(refs), read_nq_open_predictions(preds), missing="wrong")
    assert result.empty_gold_questions == 4
    # exactly those questions are the correct ones for empty predictions
    assert result.num_correct == result.empty_gold_questions


@pytest.mark.parametrize(("text", "squad", "orqa"), [
    ("The  Beatles!", "beatles", "beatles"),
    ("an apple, a pear", "apple pear", "apple pear"),
    ("Ro\u0308ntgen", "ro\u0308ntgen", "ro\u0308ntgen"),
    ("R\u00f6ntgen", "r\u00f6ntgen", "ro\u0308ntgen"),  # NFD only in the ORQA flavour
    ("theatre", "theatre", "theatre"),  # 'the' only as a whole word
    ("A.B.", "ab", "ab"),
])
def test_normalization(text, squad, orqa):
    assert normalize_answer(text) == squad
    assert normalize_answer_nfd(text) == orqa


def test_regex_matches_at_start_case_insensitively():
    assert regex_match("Barack Obama", "barack")
    assert not regex_match("President Obama", "obama")  # match, not search
    assert not regex_match("anything", "(unclosed")  # as the official function; scoring refuses it


def test_regex_scoring_and_signature():
    refs = [NqOpenExample("q1", ("19[0-9]{2}",)), NqOpenExample("q2", ("paris",))]
    preds = [NqOpenPrediction("q1", "1969"), NqOpenPrediction("q2", "Paris, France")]
    r = score_nq_open(refs, preds, regex=True)
    assert (r.num_correct, r.num_total) == (2, 2)
    assert "match:regex" in r.signature
    r2 = score_nq_open(refs, preds)
    assert r2.num_correct == 0 and "match:em-nfd" in r2.signature


def test_missing_is_an_error_by_default():
    refs = [NqOpenExample("q1", ("a1",)), NqOpenExample("q2", ("a2",))]
    with pytest.raises(InputError, match=r"1 of 2 gold questions have no prediction"):
        score_nq_open(refs, [NqOpenPrediction("q1", "a1")])
    r = score_nq_open(refs, [NqOpenPrediction("q1", "a1")], missing="wrong")
    assert (r.accuracy, r.missing_predictions) == (0.5, 1)
    with pytest.raises(InputError, match=r"; 1 predictions are for questions not in the "
                       r"gold \(another split\?\)"):
        score_nq_open(refs, [NqOpenPrediction("q1", "a1"), NqOpenPrediction("Q2", "a2")])


def test_duplicates_are_counted_and_the_last_prediction_wins():
    # q1 is predicted twice ("b" then "a1": the later one is scored), q2 once
    refs = [NqOpenExample("q1", ("a1",)), NqOpenExample("q2", ("a2",))]
    r = score_nq_open(refs, [NqOpenPrediction("q1", "b"), NqOpenPrediction("q1", "a1"),
                             NqOpenPrediction("q2", "a2")])
    assert (r.num_correct, r.duplicate_predictions, r.duplicate_references) == (2, 1, 0)
    r = score_nq_open(refs, [NqOpenPrediction("q1", "a1"), NqOpenPrediction("q2", "x")])
    assert (r.num_correct, r.duplicate_predictions, r.duplicate_references) == (1, 0, 0)
    # the per-question items stay out of the result's repr (thousands on a real split)
    assert len(r.items) == 2 and "items=" not in repr(r) and "accuracy=0.5" in repr(r)


def _write(path, lines):
    path.write_text("".join(orjson.dumps(x).decode() + "\n" for x in lines))
    return str(path)


def test_cli_table_json_and_per_question(tmp_path, capsys):
    refs = _write(tmp_path / "refs.jsonl", [{"question": "q1", "answer": ["The Cat"]},
                                            {"question": "q2", "answer": ["dog"]}])
    preds = _write(tmp_path / "preds.jsonl", [{"question": "q1", "prediction": "cat"},
                                              {"question": "q2", "prediction": "cow"}])
    per_q = tmp_path / "per.jsonl"
    assert main(["eval", "nq-open", "--gold", refs, "--predictions", preds,
                 "--per-item", str(per_q)]) == 0
    out = capsys.readouterr().out
    assert "exact match" in out and "0.5000" in out and "signature: nq-open|" in out
    rows = [json.loads(line) for line in per_q.read_text().splitlines()]
    assert rows[0] == {"question": "q1", "prediction": "cat", "correct": True,
                       "matched_answer": "The Cat", "answers": ["The Cat"]}
    assert rows[1]["correct"] is False
    assert main(["eval", "nq-open", "--gold", refs, "--predictions", preds,
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["num_correct"] == 1
    assert got["signature"].startswith("nq-open|split:custom|answer-field:")


def test_cli_answer_field(tmp_path, capsys):
    refs = _write(tmp_path / "refs.jsonl", [
        {"question": "q1", "answer": ["x"], "answer_and_def_correct_predictions": ["x", "y"]}])
    preds = _write(tmp_path / "preds.jsonl", [{"question": "q1", "prediction": "y"}])
    main(["eval", "nq-open", "--gold", refs, "--predictions", preds, "--format", "json"])
    assert json.loads(capsys.readouterr().out)["num_correct"] == 0
    main(["eval", "nq-open", "--gold", refs, "--predictions", preds, "--format", "json",
          "--answer-field", "answer_and_def_correct_predictions"])
    assert json.loads(capsys.readouterr().out)["num_correct"] == 1


@pytest.mark.parametrize(("refs", "preds", "message"), [
    ([], [{"question": "q", "prediction": "p"}], "refs.jsonl: the gold file is empty"),
    ([{"question": "q", "answer": ["a"]}], [], "preds.jsonl: the predictions file is empty"),
    ([{"question": "q", "answers": ["a"]}], [{"question": "q", "prediction": "p"}],
     "refs.jsonl:1: missing answer field 'answer' (found answers, question)"),
    ([{"question": "q", "answer": "a"}], [{"question": "q", "prediction": "p"}],
     "refs.jsonl:1: 'answer' must be a non-empty list of strings"),
    ([{"question": "q", "answer": ["a"]}], [{"question": "q", "answer": "p"}],
     "preds.jsonl:1: missing key 'prediction' (found answer, question)"),
    ([{"question": "q", "answer": ["a"]}], [{"question": "q", "prediction": ["p"]}],
     "preds.jsonl:1: 'prediction' must be a string, found list"),
    ([{"question": "q", "answer": ["a"]}], [["q", "p"]],
     "preds.jsonl:1: expected a JSON object, found list"),
])
def test_cli_bad_input(tmp_path, capsys, refs, preds, message):
    r = _write(tmp_path / "refs.jsonl", refs)
    p = _write(tmp_path / "preds.jsonl", preds)
    assert main(["eval", "nq-open", "--gold", r, "--predictions", p]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nqkit: error: ") and message in err
    assert err.count("\n") == 1


def test_cli_jsonl_format(tmp_path, capsys):
    refs = _write(tmp_path / "refs.jsonl", [{"question": "q1", "answer": ["x"]}])
    preds = _write(tmp_path / "preds.jsonl", [{"question": "q1", "prediction": "X!"}])
    assert main(["eval", "nq-open", "--gold", refs, "--predictions", preds,
                 "--format", "jsonl"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"question": "q1", "prediction": "X!", "correct": True,
                                        "matched_answer": "x", "answers": ["x"]}
    assert "signature: nq-open|" in captured.err


# ORQA's eval_utils.normalize_answer applies unicodedata.normalize("NFD", s) and nothing
# more for accents: a composed and a decomposed spelling of the same letter are equal, an
# unaccented spelling is a different answer. The SQuAD normalization of AmbigQA has no NFD.
COMPOSED = "Pel\u00e9"  # é as one code point
DECOMPOSED = "Pele\u0301"  # e + combining acute accent
UNACCENTED = "Pele"


@pytest.mark.parametrize(("prediction", "correct"), [
    (DECOMPOSED, True), (COMPOSED, True), (UNACCENTED, False), ("pel\u00c9", True)])
def test_scorer_compares_answers_after_nfd(prediction, correct):
    refs = [NqOpenExample("who is the king of football", (COMPOSED,))]
    r = score_nq_open(refs, [NqOpenPrediction("who is the king of football", prediction)])
    assert (r.num_correct, r.accuracy) == (int(correct), float(correct))
    assert r.items[0].matched_answer == (COMPOSED if correct else None)


def test_scorer_nfd_on_the_gold_side_and_in_the_cli(tmp_path, capsys):
    # gold decomposed, prediction composed; two questions, one right: accuracy 0.5
    refs = _write(tmp_path / "refs.jsonl", [{"question": "q1", "answer": ["x", DECOMPOSED]},
                                            {"question": "q2", "answer": ["Zo\u0308e"]}])
    preds = _write(tmp_path / "preds.jsonl", [{"question": "q1", "prediction": COMPOSED},
                                              {"question": "q2", "prediction": "Zoe"}])
    assert main(["eval", "nq-open", "--gold", refs, "--predictions", preds,
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["num_correct"], got["num_total"], got["accuracy"]) == (1, 2, 0.5)


def test_predictions_as_one_json_document_over_several_lines(tmp_path):
    # One document whose first line is no complete JSON value (it starts with '{' or '['
    # and goes on): an object {question: prediction} or a list of objects.
    as_dict = tmp_path / "d.json"
    as_dict.write_text('{"who wrote it": "Ann",\n "when": "1999"}\n')
    as_list = tmp_path / "l.json"
    as_list.write_text('[{"question": "who wrote it", "prediction": "Ann"},\n'
                       ' {"question": "when", "prediction": "1999"}]\n')
    expected = [NqOpenPrediction("who wrote it", "Ann"), NqOpenPrediction("when", "1999")]
    assert list(read_nq_open_predictions(as_dict)) == expected
    assert list(read_nq_open_predictions(as_list)) == expected
    bad = tmp_path / "b.json"
    bad.write_text('{"who": 3,\n "when": "x"}\n')
    with pytest.raises(InputError) as e:
        list(read_nq_open_predictions(bad))
    assert str(e.value) == (
        f"{bad}: question 'who': the prediction must be a string, found int — write "
        '{"question": "answer", ...} or JSON lines {"question": "...", "prediction": "..."}')
