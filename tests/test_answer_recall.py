"""Top-k answer recall: DPR's has-answer check on real bi-encoder data, CLI, bad input."""

from __future__ import annotations

import json

import pytest

from nqkit.cli import main
from nqkit.formats.dpr import read_dpr_biencoder, read_dpr_qa_tsv
from nqkit.metrics.answer_recall import passage_has_answer
from nqkit.text.dpr_tokenize import simple_tokenize

from conftest import shared_file


def test_real_check_on_biencoder_sample():
    examples = list(read_dpr_biencoder(
        shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")))
    def count(key):
        ctxs = [(e.answers, c) for e in examples for c in getattr(e, key)]
        return sum(passage_has_answer(a, c.text) for a, c in ctxs), len(ctxs)
    assert count("positive_ctxs") == (22, 22)
    assert count("hard_negative_ctxs") == (1, 483)
    assert count("negative_ctxs") == (0, 250)


@pytest.mark.parametrize(("text", "tokens"), [
    ("Wilhelm Conrad R\u00f6ntgen, 1901.", ["wilhelm", "conrad", "ro\u0308ntgen", ",", "1901",
                                           "."]),
    ("May 18, 2018", ["may", "18", ",", "2018"]),
    ("$5\u2014ten", ["$", "5", "\u2014", "ten"]),
    ("a\u00a0b\tc\n", ["a", "b", "c"]),
])
def test_simple_tokenize(text, tokens):
    assert simple_tokenize(text) == tokens


@pytest.mark.parametrize(("answer", "text", "expected"), [
    ("Röntgen", "won by Wilhelm Ro\u0308ntgen in 1901", True),  # NFD on both sides
    ("May 18, 2018", "released on May 18, 2018.", True),
    ("May 18, 2018", "released on May 18 2018.", False),  # the comma is a token
    ("Paris", "Parisian food", False),  # whole tokens only
    ("", "anything", False),
])
def test_passage_has_answer(answer, text, expected):
    assert passage_has_answer([answer], text) is expected


def test_qa_tsv_reader():
    rows = list(read_dpr_qa_tsv(shared_file("data", "dpr", "nq-dev.qa.tsv")))
    assert len(rows) == 8757
    assert rows[0] == ("who sings does he love me with reba", ("Linda Davis",))


@pytest.fixture
def results_file(tmp_path):
    examples = list(read_dpr_biencoder(
        shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")))
    items = []
    for n, e in enumerate(examples):
        # n answer-free negatives, then a positive: the first hit is at rank n + 1
        ctxs = [{"id": c.id, "title": c.title, "text": c.text, "score": 0.0}
                for c in (*e.negative_ctxs[:n], e.positive_ctxs[0], *e.negative_ctxs[n:8])]
        items.append({"question": e.question, "answers": list(e.answers), "ctxs": ctxs})
    path = tmp_path / "results.json"
    path.write_text(json.dumps(items))
    return path


def test_cli_recall(results_file, tmp_path, capsys):
    per_q = tmp_path / "per.jsonl"
    assert main(["eval", "retrieval", "--predictions", str(results_file), "--topk", "1", "2",
                 "5", "9",
                 "--format", "json", "--per-item", str(per_q)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["recall"] == {"1": 0.2, "2": 0.4, "5": 1.0, "9": 1.0}
    assert got["signature"].startswith("retrieval|split:custom|recall:answer|tok:dpr-simple-nfd")
    ranks = [json.loads(line)["first_hit"] for line in per_q.read_text().splitlines()]
    assert ranks == [1, 2, 3, 4, 5]
    assert main(["eval", "retrieval", "--predictions", str(results_file), "--topk", "3"]) == 0
    assert "top-3" in capsys.readouterr().out


@pytest.mark.parametrize(("content", "message"), [
    ("", "the retrieval results file is empty"),
    ("[]", "the retrieval results file holds no question"),
    ('{"question": "q"}', "expected a JSON list of questions, found dict"),
    ('[{"question": "q", "answers": ["a"]}]', "question 0: missing list 'ctxs'"),
    ('[{"question": "q", "answers": "a", "ctxs": []}]',
     "question 0: 'answers' must be a list of strings"),
    ('[{"question": "q", "answers": ["a"], "ctxs": [{"title": "t"}]}]',
     "a context must be an object with a string 'text'"),
])
def test_cli_bad_input(tmp_path, capsys, content, message):
    path = tmp_path / "r.json"
    path.write_text(content)
    assert main(["eval", "retrieval", "--predictions", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nqkit: error: ") and message in err


def test_cli_bad_topk(results_file, capsys):
    assert main(["eval", "retrieval", "--predictions", str(results_file), "--topk", "0"]) == 2
    assert "argument --topk: must be >= 1, found 0" in capsys.readouterr().err


def test_cli_jsonl_format(results_file, capsys):
    assert main(["eval", "retrieval", "--predictions", str(results_file), "--topk", "2", "--format",
                 "jsonl"]) == 0
    captured = capsys.readouterr()
    ranks = [json.loads(line)["first_hit"] for line in captured.out.splitlines()]
    assert ranks == [1, 2, None, None, None]  # only the first 2 contexts are examined
    assert "signature: retrieval|" in captured.err


def test_recall_and_flag_disagreements_by_hand():
    from nqkit.formats.dpr import DprContext, DprResult
    from nqkit.metrics.answer_recall import score_answer_recall

    def ctx(text, flag=None):
        return DprContext("", "t", text, None, flag)

    results = [
        # answer at rank 2; rank 1 is flagged as an answer but does not hold it,
        # rank 3 holds it but is flagged as not: 2 disagreements
        DprResult("q1", ("Paris",),
                  (ctx("london", True), ctx("in paris ."), ctx("Paris", False))),
        # answer first, no flags
        DprResult("q2", ("Rome",), (ctx("Rome"), ctx("x"), ctx("y"))),
        # never found, and only 2 passages for k = 3
        DprResult("q3", ("Oslo",), (ctx("a"), ctx("b"))),
    ]
    r = score_answer_recall(results, [1, 3])
    assert r.recall == {1: 1 / 3, 3: 2 / 3}
    assert r.first_hit == [2, 1, None]
    assert (r.flag_disagreements, r.short_lists, r.num_questions) == (2, 1, 3)


def test_allow_missing_reports_how_many_gold_questions_had_results(tmp_path, capsys):
    """A gold question without results is scored as not found, and the coverage says so
    (it said 3/3 for 2 questions with results)."""
    gold = tmp_path / "gold.qa.tsv"
    gold.write_text("q one\t['paris']\nq two\t['rome']\nq three\t['oslo']\n",
                    encoding="utf-8")
    results = tmp_path / "results.json"
    ctx = {"id": "1", "title": "t", "text": "Paris is big", "score": 1.0}
    results.write_text(json.dumps([
        {"question": "q one", "answers": ["paris"], "ctxs": [ctx]},
        {"question": "q two", "answers": ["rome"], "ctxs": [ctx]}]), encoding="utf-8")
    argv = ["eval", "retrieval", "--gold", str(gold), "--predictions", str(results),
            "--topk", "1", "--format", "json"]
    assert main(argv) == 2
    assert "1 of 3 gold questions have no results" in capsys.readouterr().err
    assert main([*argv, "--allow-missing"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["coverage"] == {"predicted": 2, "total": 3}
    assert got["recall"]["1"] == pytest.approx(1 / 3)
