"""`nqkit compare TASK`: paired tests of two systems, values derived by hand or from the
official outputs."""

from __future__ import annotations

import json

import pytest

from nqkit.cli import main
from nqkit.stats import approximate_randomization
from nqkit.tasks.base import get_task

from conftest import shared_file


def _nq_open_files(tmp_path):
    refs = [("q1", ["a"]), ("q2", ["b"]), ("q3", ["c"]), ("q4", ["d"])]
    r = tmp_path / "refs.jsonl"
    r.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in refs))
    a = tmp_path / "a.jsonl"  # right on q1, q2
    a.write_text("".join(json.dumps({"question": q, "prediction": p}) + "\n"
                         for q, p in [("q1", "a"), ("q2", "b"), ("q3", "x"), ("q4", "y")]))
    b = tmp_path / "b.jsonl"  # right on all four
    b.write_text("".join(json.dumps({"question": q, "prediction": p}) + "\n"
                         for q, p in [("q1", "a"), ("q2", "b"), ("q3", "c"), ("q4", "d")]))
    return str(r), str(a), str(b)


def test_nq_open_by_hand(tmp_path, capsys):
    refs, a, b = _nq_open_files(tmp_path)
    assert main(["compare", "nq-open", "--gold", refs, a, b, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (m,) = out["metrics"]
    assert (m["metric"], m["a"], m["b"], m["difference"]) == ("exact match", 0.5, 1.0, 0.5)
    # q3 and q4 favour B by one point each; of the 4 swap patterns only "none" and "both"
    # keep |difference| = 1/2: the exact p-value is 2/4
    task = get_task("nq-open")
    ra, rb = task.run(gold=[refs], predictions=a), task.run(gold=[refs], predictions=b)
    exact = approximate_randomization(ra.headline["exact match"], rb.headline["exact match"],
                                      exact=True)
    assert exact.p_value == 0.5
    assert m["p_randomization"] == pytest.approx(0.5, abs=0.02)  # 10,000 random trials
    assert out["signature"].startswith("compare|test:both|resamples:1000|trials:10000|seed:0|"
                                       "task:nq-open|answer-field:answer|match:em-nfd|")


def test_a_system_against_itself_is_never_significant(tmp_path, capsys):
    refs, a, _ = _nq_open_files(tmp_path)
    assert main(["compare", "nq-open", "--gold", refs, a, a, "--format", "json"]) == 0
    (m,) = json.loads(capsys.readouterr().out)["metrics"]
    assert (m["difference"], m["low"], m["high"]) == (0.0, 0.0, 0.0)
    assert (m["p_bootstrap"], m["p_randomization"]) == (1.0, 1.0)


def test_nq_headline_is_the_official_f1(capsys):
    gold = str(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"))
    preds = shared_file("golden", "nq-eval", "annotator0.predictions.json")
    official = json.loads(shared_file("golden", "nq-eval", "annotator0.official.json")
                          .read_text())
    r = get_task("nq").run(gold=[gold], predictions=str(preds), gold_cache=False)
    for t in ("long", "short"):
        assert r.headline[f"{t}-best-threshold-f1"].score() == pytest.approx(
            official[f"{t}-best-threshold-f1"], abs=1e-9)
    assert main(["compare", "nq", "--gold", gold, str(preds), str(preds), "--no-gold-cache",
                 "--test", "randomization", "--trials", "200"]) == 0
    out = capsys.readouterr().out
    assert "p (randomization)" in out and "p (bootstrap)" not in out


def test_bad_input_is_one_line(tmp_path, capsys):
    refs, a, _ = _nq_open_files(tmp_path)
    assert main(["compare", "nq-open", "--gold", refs, a, str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("nqkit: error:")
    assert main(["compare", "nq-open", "--gold", refs, a, a, "--resamples", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
