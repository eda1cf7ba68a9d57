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
    exact = approximate_randomization(ra.headline_stats()["exact match"],
                                      rb.headline_stats()["exact match"],
                                      exact=True)
    assert exact.p_value == 0.5
    assert m["p_randomization"] == pytest.approx(0.5, abs=0.02)  # 10,000 random trials
    assert out["signature"].startswith("compare|test:both|resamples:1000|trials:10000|seed:0|"
                                       "task:nq-open|split:custom|answer-field:answer|"
                                       "match:em-nfd|")


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
        assert r.headline_stats()[f"{t}-best-threshold-f1"].score() == pytest.approx(
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


def test_retrieval_by_hand(tmp_path, capsys):
    """Five questions; A ranks a positive passage first nowhere, B everywhere (DPR's
    has_answer on the real bi-encoder passages decides which passages carry an answer)."""
    records = json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json")
                         .read_text())

    def results(first_positive: bool):
        out = []
        for r in records:
            ctxs = [*r["hard_negative_ctxs"][:3], r["positive_ctxs"][0]]
            if first_positive:
                ctxs = ctxs[::-1]
            out.append({"question": r["question"], "answers": r["answers"],
                        "ctxs": [{"id": str(i), "title": c["title"], "text": c["text"],
                                  "score": str(10 - i)} for i, c in enumerate(ctxs)]})
        return out

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(results(False)))
    b.write_text(json.dumps(results(True)))
    task = get_task("retrieval")
    ra = task.run(predictions=str(a), topk=[1, 5])
    rb = task.run(predictions=str(b), topk=[1, 5])
    assert (ra.headline_stats()["top-1"].score(),
            rb.headline_stats()["top-1"].score()) == (0.0, 1.0)
    # all five items favour B: only "swap none" and "swap all" keep |difference| = 1
    exact = approximate_randomization(ra.headline_stats()["top-1"],
                                      rb.headline_stats()["top-1"], exact=True)
    assert exact.p_value == 2 / 32
    assert main(["compare", "retrieval", str(a), str(b), "--topk", "1", "5",
                 "--format", "json"]) == 0
    rows = {m["metric"]: m for m in json.loads(capsys.readouterr().out)["metrics"]}
    assert (rows["top-1"]["difference"], rows["top-5"]["difference"]) == (1.0, 0.0)


def test_library_result_shapes(tmp_path):
    refs, _, b = _nq_open_files(tmp_path)
    r = get_task("nq-open").run(gold=[refs], predictions=b, bootstrap=200, seed=1)
    iv = r.intervals["exact match"]
    assert (iv.score, iv.low, iv.high, iv.resamples, iv.seed) == (1.0, 1.0, 1.0, 200, 1)
    assert r.to_json()["bootstrap"] == {"resamples": 200, "seed": 1, "confidence": 0.95,
                                        "exact match": [1.0, 1.0]}
    lines = [" ".join(line.split()) for line in r.to_table().splitlines()]
    assert "exact match 1.0000" in lines and "exact match 1.0000 1.0000-1.0000" in lines
    # four questions cannot support an interval: a warning, and its mark in the signature
    assert r.warnings[-1].code == "few-items" and "only 4 items" in r.warnings[-1].message
    assert "+few-items|v" in r.signature


def _many(tmp_path, n):
    """n questions; A answers the first n // 2, B all of them."""
    r, a, b = (tmp_path / f"{x}{n}.jsonl" for x in "rab")
    r.write_text("".join(json.dumps({"question": f"q{i}", "answer": [f"a{i}"]}) + "\n"
                         for i in range(n)))
    for path, right in ((a, n // 2), (b, n)):
        path.write_text("".join(json.dumps({"question": f"q{i}", "prediction":
                                            f"a{i}" if i < right else "x"}) + "\n"
                                for i in range(n)))
    return str(r), str(a), str(b)


def test_bootstrap_warns_below_thirty_items(tmp_path, capsys):
    for n, warned in ((29, True), (30, False)):
        refs, _, b = _many(tmp_path, n)
        assert main(["eval", "nq-open", "--gold", refs, "--predictions", b,
                     "--bootstrap", "100", "--format", "json"]) == 0
        cap = capsys.readouterr()
        out = json.loads(cap.out)
        assert ("few-items" in out["signature"]) == warned
        assert ("nqkit: warning: bootstrap intervals of exact match from only 29 items"
                in cap.err) == warned
        assert out["bootstrap"]["exact match"] == [1.0, 1.0]
