"""``nqkit eval retrieval`` on a TREC run (plus its questions and the passage corpus), and
its refusal of results computed for another split."""

from __future__ import annotations

import json

from nqkit.cli import main

from conftest import shared_file


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_trec_run_is_scored_like_the_dpr_results_it_stands_for(tmp_path, capsys):
    passages = _write(tmp_path / "psgs.tsv", "id\ttext\ttitle\n"
                      "1\tParis is the capital of France\tParis\n"
                      "2\tBerlin is a city\tBerlin\n"
                      "3\tThe Seine flows through Paris\tSeine\n")
    qa = _write(tmp_path / "qa.tsv", "capital of france\t['Paris']\n"
                "river in paris\t['Seine']\n")
    # question 0: passages 2, 1 (the answer at rank 2); question 1: passages 1, 3 (rank 2
    # again: passage 1 does not contain "seine"), so top-1 = 0/2 and top-2 = 2/2
    run = _write(tmp_path / "run.trec", "0 Q0 2 1 9.0 t\n0 Q0 1 2 8.0 t\n"
                 "1 Q0 1 1 7.0 t\n1 Q0 3 2 6.0 t\n")
    assert main(["eval", "retrieval", "--gold", qa, "--predictions", run, "--passages",
                 passages, "--topk", "1", "2", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["recall"] == {"1": 0.0, "2": 1.0}
    # numbered from 1: --first-qid 1 reads the same run shifted by one
    shifted = _write(tmp_path / "run1.trec", "1 Q0 2 1 9.0 t\n1 Q0 1 2 8.0 t\n"
                     "2 Q0 1 1 7.0 t\n2 Q0 3 2 6.0 t\n")
    assert main(["eval", "retrieval", "--gold", qa, "--predictions", shifted, "--passages",
                 passages, "--topk", "1", "2", "--first-qid", "1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["recall"] == {"1": 0.0, "2": 1.0}
    # without the corpus: one line saying what is needed
    assert main(["eval", "retrieval", "--gold", qa, "--predictions", run]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--passages" in err[0]


def test_results_of_another_split_are_refused_naming_both(tmp_path, capsys):
    gold = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    other = shared_file("data", "nq-open", "NQ-open.efficientqa.dev.1.1.jsonl")
    questions = [json.loads(line) for line in other.read_text(encoding="utf-8").splitlines()]
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"question": q["question"], "answers": q["answer"],
                                    "ctxs": [{"id": "1", "title": "t", "text": "x"}]}
                                   for q in questions]), encoding="utf-8")
    assert main(["eval", "retrieval", "--gold", str(gold), "--predictions", str(results),
                 "--allow-missing", "--allow-extra"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "efficientqa/dev" in err[0] and "nq-open/dev" in err[0]
