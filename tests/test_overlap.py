"""Test-train overlap (Lewis et al. 2021): answer overlap, the question proxy, the official
QA-Overlap scoring, group scores and the leak report.

Expected values come from hand-worked cases and from the small oracle below, written from
the definitions (the paper's §2 and the QA-Overlap evaluation's documented behaviour), not
from the code under test.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections import Counter
from pathlib import Path

import pytest

from nqkit.analysis.overlap import (
    compute_overlap,
    leak_report,
    load_qa_set,
)
from nqkit.cli import main
from nqkit.formats.qa_overlap import read_row_predictions
from nqkit.metrics.qa_overlap import squad_f1
from nqkit.tasks.overlap import score_overlap

# ----------------------------------------------------------------------------- the oracle


def _norm(s: str) -> str:
    """SQuAD v1.1 normalisation, from its definition."""
    s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def _f1(pred: str, gold: str) -> float:
    p, g = _norm(pred).split(), _norm(gold).split()
    same = sum((Counter(p) & Counter(g)).values())
    if not same:
        return 0
    precision, recall = 1.0 * same / len(p), 1.0 * same / len(g)
    return (2 * precision * recall) / (precision + recall)


def _official(refs, preds, anns, label):
    """The per-label numbers as the QA-Overlap evaluation defines them (row join,
    annotation-file order, max over gold answers, 100 * sum / n)."""
    ids = [a["id"] for a in anns if label in a["labels"]]
    em = [max(_norm(preds[i]) == _norm(g) for g in refs[i]) for i in ids]
    f1 = [max(_f1(preds[i], g) for g in refs[i]) for i in ids]
    return 100 * sum(em) / len(em), 100 * sum(f1) / len(f1), len(ids)


def _write(path: Path, lines) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _jsonl(path: Path, objs) -> Path:
    return _write(path, [json.dumps(o) for o in objs])


# ----------------------------------------------------------------------------- unit cases

@pytest.mark.parametrize(("pred", "gold", "expected"), [
    ("the Beatles", "Beatles", 1.0),
    ("John Lennon", "Lennon", 2 * 0.5 * 1.0 / 1.5),
    ("", "Lennon", 0.0),
    ("a", "the", 0.0),  # both normalise to nothing: no shared token
    ("1 2 2", "2 2 3", 2 * (2 / 3) * (2 / 3) / (4 / 3)),
])
def test_squad_f1_by_hand(pred, gold, expected):
    assert squad_f1(pred, gold) == pytest.approx(expected, abs=1e-15)


def test_row_predictions_follow_text_lines(tmp_path):
    p = tmp_path / "preds.txt"
    p.write_bytes(b"  Paris \r\n\nLondon\rRome\n")
    got = [(x.id, x.prediction) for x in read_row_predictions(p)]
    assert got == [(0, "Paris"), (1, ""), (2, "London"), (3, "Rome")]


def test_row_predictions_json_lines_by_name(tmp_path):
    p = _jsonl(tmp_path / "preds.json", [{"id": 1, "prediction": "b"},
                                         {"id": 0, "prediction": "a"}])
    assert [(x.id, x.prediction) for x in read_row_predictions(p)] == [(1, "b"), (0, "a")]


def _small_train(shared, tmp_path: Path, n: int = 300) -> Path:
    """The first ``n`` lines of DPR's nq-dev.qa (NQ-open training questions)."""
    lines = shared("data", "dpr", "nq-dev.qa.tsv").read_text(encoding="utf-8").splitlines()
    return _write(tmp_path / "train.qa.tsv", lines[:n])


def _qa(tmp_path: Path, name: str, rows) -> Path:
    return _jsonl(tmp_path / name, [{"question": q, "answer": a} for q, a in rows])


def test_answer_overlap_and_proxy_by_hand(tmp_path):
    train = load_qa_set(_qa(tmp_path, "train.jsonl", [
        ("who sang hey jude", ["The Beatles"]),
        ("what is the capital of france", ["Paris"]),
        ("who won the world cup in 2014", ["Germany"]),
    ]))
    test = load_qa_set(_qa(tmp_path, "test.jsonl", [
        ("who sang hey jude?", ["Beatles", "Paul McCartney"]),  # paraphrase, shared answer
        ("which band recorded let it be", ["the beatles!"]),  # answer only
        ("who won the world cup in 2018", ["France"]),  # similar question, other answer
        ("how tall is everest", ["8,848 m"]),  # nothing
    ]))
    a = compute_overlap(test, train, threshold=0.5)
    assert [it.answer_overlap for it in a.items] == [True, True, False, False]
    assert a.items[0].shared_answers == ("Beatles",)
    assert a.items[0].nearest_row == 0 and a.items[0].similarity == pytest.approx(1.0)
    assert [it.question_overlap for it in a.items] == [True, False, False, False]
    assert a.counts() == {"total": 4, "question_overlap": 1, "no_question_overlap": 3,
                          "answer_overlap": 2, "no_answer_overlap": 2,
                          "answer_overlap_only": 1, "no_overlap": 2}
    # searched among all training questions, the 2014 final is the 2018 one's neighbour
    b = compute_overlap(test, train, threshold=0.5, scope="all")
    assert b.items[2].nearest_row == 2 and b.items[2].question_overlap
    assert "qscope:all" in b.signature() and "qproxy:tfidf-cos>=0.5" in b.signature()


def test_an_empty_normalised_answer_overlaps_and_is_said(tmp_path):
    # "A+" loses its "+" and then the article "a": by the definition it equals "---"
    train = load_qa_set(_qa(tmp_path, "train.jsonl", [("which dash", ["---"])]))
    test = load_qa_set(_qa(tmp_path, "test.jsonl", [("most common blood type", ["A+"]),
                                                   ("other", ["B"])]))
    a = compute_overlap(test, train)
    assert [it.answer_overlap for it in a.items] == [True, False]
    assert [w.code for w in a.warnings] == ["empty-answer-overlap"]
    assert "|warn:empty-answer-overlap|" in a.signature()


def test_answer_overlap_on_real_files_matches_the_definition(shared):
    test_path = shared("data", "nq-open", "NQ-open.dev.jsonl")
    train_paths = [shared("data", "dpr", "nq-dev.qa.tsv"),
                   shared("data", "ambignq", "train_light.json")]
    test = load_qa_set(test_path)
    train = load_qa_set(train_paths)
    # the oracle: every answer string of every training question, normalised
    seen = set()
    for line in train_paths[0].read_text(encoding="utf-8").splitlines():
        _, answers = line.split("\t")
        seen.update(_norm(a) for a in eval(answers))
    for ex in json.loads(train_paths[1].read_text(encoding="utf-8")):
        for ann in ex["annotations"]:
            golds = ann["answer"] if ann["type"] == "singleAnswer" else [
                a for p in ann["qaPairs"] for a in p["answer"]]
            seen.update(_norm(a) for a in golds)
    expected = [any(_norm(a) in seen for a in json.loads(line)["answer"])
                for line in test_path.read_text(encoding="utf-8").splitlines()]
    got = compute_overlap(test, train)
    assert [it.answer_overlap for it in got.items] == expected
    assert sum(expected) == got.counts()["answer_overlap"] > 1000
    # the training set is named by its fingerprint: 18,793 NQ-open training questions
    assert train.split.startswith("nq-open/train[18793#")
    assert f"train:{train.split}" in got.signature()


# ----------------------------------------------------------------------------- official

@pytest.fixture(scope="module")
def official_case(tmp_path_factory):
    """A test annotation file in the official format for DPR's nq-test.qa rows (answer
    overlap from the oracle against DPR's nq-dev.qa, random human-style question labels on
    1,000 rows) and row-ordered predictions from a golden NQ-open prediction file."""
    from conftest import shared_file

    tmp = tmp_path_factory.mktemp("official")
    rows_path = shared_file("data", "dpr", "nq-test.qa.tsv")
    rows = [line.split("\t") for line in rows_path.read_text(encoding="utf-8").splitlines()]
    refs = [eval(a) for _, a in rows]
    seen = {_norm(a) for line in shared_file("data", "dpr", "nq-dev.qa.tsv").read_text(
        encoding="utf-8").splitlines() for a in eval(line.split("\t")[1])}
    rng = random.Random(7)
    judged = set(rng.sample(range(len(rows)), 1000))
    anns = []
    for i, golds in enumerate(refs):
        answer = any(_norm(g) in seen for g in golds)
        labels = ["total", "answer_overlap" if answer else "no_answer_overlap"]
        if i in judged:
            question = answer and rng.random() < 0.5
            labels.append("question_overlap" if question else "no_question_overlap")
            if answer and not question:
                labels.append("answer_overlap_only")
        anns.append({"id": i, "labels": labels})
    rng.shuffle(anns)  # the file order is not the row order
    by_q = {}
    for line in shared_file("golden", "nq-open", "mixed.predictions.jsonl").read_text(
            encoding="utf-8").splitlines():
        obj = json.loads(line)
        by_q[obj["question"]] = obj["prediction"]
    preds = [by_q.get(q, "").strip() for q, _ in rows]
    return {"rows": rows_path, "refs": refs, "anns": anns, "preds": preds,
            "ann_path": _jsonl(tmp / "nq-annotations.jsonl", anns),
            "pred_path": _write(tmp / "preds.txt", [p.replace("\n", " ") for p in preds])}


LABELS = ("total", "question_overlap", "no_question_overlap", "answer_overlap",
          "no_answer_overlap", "answer_overlap_only")


def test_official_numbers_equal_the_definition_exactly(official_case, capsys):
    c = official_case
    assert main(["overlap", "official", "--annotations", str(c["ann_path"]), "--gold",
                 str(c["rows"]), "--predictions", str(c["pred_path"]), "--format",
                 "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    for label in LABELS:
        em, f1, n = _official(c["refs"], c["preds"], c["anns"], label)
        assert got[label] == {"exact_match": em, "f1_score": f1, "n_examples": n}, label
    assert got["signature"].startswith("qa-overlap-official|annotations:qa-overlap#")


def test_official_text_is_the_scripts(official_case, capsys):
    c = official_case
    main(["overlap", "official", "--annotations", str(c["ann_path"]), "--gold",
          str(c["rows"]), "--predictions", str(c["pred_path"]), "--format", "official"])
    out = capsys.readouterr().out.splitlines()
    em, _, n = _official(c["refs"], c["preds"], c["anns"], "total")
    assert out[:4] == ["-" * 50, "Label       : total", f"N examples  :  {n}",
                       f"Exact Match :  {em}"]
    assert len(out) == 4 * 6


def test_group_scores_from_annotations_equal_the_official(official_case, shared, tmp_path,
                                                          capsys):
    # the same predictions keyed by question: every group's EM and F1 are the official ones
    c = official_case
    rows = [line.split("\t")[0] for line in c["rows"].read_text(encoding="utf-8").splitlines()]
    keyed = _jsonl(tmp_path / "keyed.jsonl", [{"question": q, "prediction": p}
                                              for q, p in zip(rows, c["preds"], strict=True)])
    assert main(["overlap", "score", "--gold", str(c["rows"]), "--predictions", str(keyed),
                 "--annotations", str(c["ann_path"]), "--annotated-test", str(c["rows"]),
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    for label in LABELS:
        em, f1, n = _official(c["refs"], c["preds"], c["anns"], label)
        g = got["groups"][label]
        assert g["n"] == n
        assert 100 * g["EM squad"] == pytest.approx(em, abs=1e-9)
        assert 100 * g["F1 squad"] == pytest.approx(f1, abs=1e-9)
    assert "labels:qa-overlap#" in got["signature"] and "row-order" not in got["signature"]
    # the labels reach NQ-open.dev.jsonl (another order) through the question text
    assert main(["overlap", "score", "--gold", str(shared("data", "nq-open",
                                                          "NQ-open.dev.jsonl")),
                 "--predictions", str(keyed), "--annotations", str(c["ann_path"]),
                 "--annotated-test", str(c["rows"]), "--format", "json"]) == 0
    other = json.loads(capsys.readouterr().out)
    assert {k: v["n"] for k, v in other["groups"].items()} == {
        k: v["n"] for k, v in got["groups"].items()}


def test_official_warns_about_another_row_order(official_case, shared, capsys):
    # NQ-open.dev.jsonl holds the annotated questions in another order than nq-test.qa.csv
    c = official_case
    assert main(["overlap", "official", "--annotations", str(c["ann_path"]), "--gold",
                 str(shared("data", "nq-open", "NQ-open.dev.jsonl")), "--predictions",
                 str(c["pred_path"]), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "nqkit: warning: " in captured.err and "another order than nq-test.qa.csv" in (
        captured.err)
    assert "|warn:row-order|" in json.loads(captured.out)["signature"]


def test_official_refuses_missing_rows(official_case, tmp_path, capsys):
    c = official_case
    short = _write(tmp_path / "short.txt", c["preds"][:-2])
    assert main(["overlap", "official", "--annotations", str(c["ann_path"]), "--gold",
                 str(c["rows"]), "--predictions", str(short)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2 rows have none (e.g. 3608, 3609)" in err[0]


def test_annotation_label_must_be_known(tmp_path, shared, capsys):
    bad = _jsonl(tmp_path / "a.jsonl", [{"id": 0, "labels": ["total", "paraphrase"]}])
    assert main(["overlap", "official", "--annotations", str(bad), "--gold",
                 str(shared("data", "dpr", "nq-test.qa.tsv")), "--predictions",
                 str(_write(tmp_path / "p.txt", ["x"]))]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:1: unknown label(s) 'paraphrase'" in err


# ----------------------------------------------------------------------------- scores

@pytest.mark.parametrize("name", ["mixed"])
def test_total_equals_the_official_nq_open_accuracy(name, shared, tmp_path, capsys):
    official = json.loads(shared("golden", "nq-open", f"{name}.official.json").read_text())
    assert main(["overlap", "score", "--gold", str(shared("data", "nq-open", "NQ-open.dev.jsonl")),
                 "--train", str(_small_train(shared, tmp_path)), "--predictions",
                 str(shared("golden", "nq-open", f"{name}.predictions.jsonl")),
                 "--allow-missing", "--convention", "orqa", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["groups"]["total"]["EM orqa"] == pytest.approx(official["accuracy"], abs=1e-12)


def test_ambigqa_total_equals_the_official_f1_answer(shared, capsys):
    official = json.loads(shared("golden", "ambigqa", "answers_noisy.official.json").read_text())
    assert main(["overlap", "score", "--gold", str(shared("data", "ambignq", "dev_light.json")),
                 "--train", str(shared("data", "ambignq", "train_light.json")), "--predictions",
                 str(shared("golden", "ambigqa", "answers_noisy.predictions.json")),
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["groups"]["total"]["F1 answer"] == pytest.approx(
        official["metrics"]["F1 answer"]["all"], abs=1e-12)
    assert "task:ambigqa" in got["signature"] and "train:ambignq/train" in got["signature"]
    # an NQ-open exact-match rule cannot apply to AmbigQA's F1_ans: refused, not ignored
    assert main(["overlap", "score", "--gold", str(shared("data", "ambignq", "dev_light.json")),
                 "--train", str(shared("data", "ambignq", "train_light.json")), "--predictions",
                 str(shared("golden", "ambigqa", "answers_noisy.predictions.json")),
                 "--convention", "squad"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--convention names an exact-match rule of NQ-open" in err[0]


def test_group_means_intervals_and_differences(tmp_path):
    rows = [(f"question number {i}", [f"answer {i % 7}"]) for i in range(60)]
    test = load_qa_set(_qa(tmp_path, "test.jsonl", rows))
    train = load_qa_set(_qa(tmp_path, "train.jsonl", [("unrelated", ["answer 0"]),
                                                      ("other", ["answer 1"])]))
    a = compute_overlap(test, train)
    em = [float(i % 3 == 0) for i in range(60)]
    r = score_overlap(a, {"EM": em}, resamples=200, seed=3)
    inside = [i for i in range(60) if i % 7 in (0, 1)]
    outside = [i for i in range(60) if i % 7 not in (0, 1)]
    mean_in = sum(em[i] for i in inside) / len(inside)
    mean_out = sum(em[i] for i in outside) / len(outside)
    s = r.score("answer_overlap", "EM")
    assert s.n == len(inside) and s.score == pytest.approx(mean_in)
    assert s.low <= s.score <= s.high
    d = next(x for x in r.differences if x.group == "answer_overlap")
    assert d.minus == "no_answer_overlap" and d.difference == pytest.approx(mean_in - mean_out)
    assert d.low <= d.difference <= d.high
    again = score_overlap(a, {"EM": em}, resamples=200, seed=3)
    assert again.to_json() == r.to_json()


def test_a_difference_without_an_interval_is_said(tmp_path):
    # one test question of 40 has answer overlap: many resamples of the test set hold no
    # question of that group, so the difference has no percentile interval
    rows = [(f"question number {i}", ["shared" if i == 0 else f"answer {i}"])
            for i in range(40)]
    test = load_qa_set(_qa(tmp_path, "test.jsonl", rows))
    train = load_qa_set(_qa(tmp_path, "train.jsonl", [("unrelated", ["shared"])]))
    a = compute_overlap(test, train)
    em = [1.0] + [0.0] * 39
    r = score_overlap(a, {"EM": em}, resamples=200, seed=0)
    d = next(x for x in r.differences if x.group == "answer_overlap")
    assert d.difference == pytest.approx(1.0) and d.low is None and d.high is None
    assert [w.code for w in r.warnings if w.code == "no-interval"] == ["no-interval"]
    assert "answer_overlap - no_answer_overlap" in next(
        w.message for w in r.warnings if w.code == "no-interval")


def test_score_needs_one_source_of_labels(shared, tmp_path, capsys):
    assert main(["overlap", "score", "--gold", str(shared("data", "nq-open", "NQ-open.dev.jsonl")),
                 "--predictions", str(shared("golden", "nq-open", "mixed.predictions.jsonl"))
                 ]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "give either --train" in err[0]


def test_per_item_records_labels(shared, tmp_path, capsys):
    out = tmp_path / "items.jsonl"
    assert main(["overlap", "score", "--gold", str(shared("data", "nq-open", "NQ-open.dev.jsonl")),
                 "--train", str(_small_train(shared, tmp_path)), "--predictions",
                 str(shared("golden", "nq-open", "first_answer.predictions.jsonl")),
                 "--per-item", str(out)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == 3610 and items[0]["question"].startswith("when was the last time")
    assert all("total" in x["labels"] for x in items)
    assert all(x["EM orqa"] == 1.0 for x in items)  # the first gold answer is always right
    table = capsys.readouterr().out
    assert "answer_overlap_only" in table and "signature: overlap|test:nq-open/dev|" in table


# ----------------------------------------------------------------------------- leaks

def test_leak_report_by_hand(tmp_path):
    train = load_qa_set(_qa(tmp_path, "train.jsonl", [
        ("Who sang Hey Jude?", ["The Beatles"]),
        ("what is the capital city of france", ["Paris"]),
    ]))
    test = load_qa_set(_qa(tmp_path, "test.jsonl", [
        ("who sang hey jude", ["Beatles"]),  # the same question, and its answer
        ("what is the capital city of france today", ["Paris, France"]),  # near-duplicate
        ("how tall is everest", ["8,848 m"]),
    ]))
    r = leak_report(test, train, threshold=0.7)
    assert [(x.test_row, x.train_row) for x in r.exact_questions] == [(0, 0)]
    assert [(x.test_row, x.detail) for x in r.answer_overlap] == [(0, "Beatles")]
    assert [(x.test_row, x.train_row) for x in r.near_questions] == [(1, 1)]
    assert r.counts()["near_duplicate_questions"] == 1


def test_leak_cli_on_real_files(shared, capsys):
    assert main(["overlap", "leak", "--gold", str(shared("data", "ambignq", "dev_light.json")),
                 "--train", str(shared("data", "dpr", "nq-dev.qa.tsv")), "--format",
                 "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    # AmbigNQ dev questions are DPR's nq-dev.qa questions (capitalised, with '?')
    assert got["exact_question_duplicates"] == 2002 == got["test_questions"]
    assert got["train"] == "dpr/nq-dev.qa"


def test_leak_takes_the_earlier_positional_files_with_a_note(shared, tmp_path, capsys):
    # the spelling is under test, not the numbers: 200 test and 2,000 training questions
    small = tmp_path / "dev_light.json"
    small.write_text(json.dumps(json.loads(shared("data", "ambignq", "dev_light.json")
                                           .read_text(encoding="utf-8"))[:200]),
                     encoding="utf-8")
    test = str(small)
    train = str(_write(tmp_path / "train.tsv", shared("data", "dpr", "nq-dev.qa.tsv")
                       .read_text(encoding="utf-8").splitlines()[:2000]))
    assert main(["overlap", "leak", "--gold", test, "--train", train, "--format",
                 "json"]) == 0
    new = capsys.readouterr()
    assert main(["overlap", "leak", test, train, "--format", "json"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and not new.err
    assert old.err == ("nqkit: note: positional TEST TRAIN are deprecated and will be removed "
                       f"in the next release; use --gold {test} --train {train}\n")


@pytest.mark.parametrize("old, new", [("--test", "--gold"), ("--bootstrap", "--resamples")])
def test_overlap_score_old_spellings_still_work_with_a_note(shared, tmp_path, capsys, old,
                                                            new):
    # the spelling is under test, not the numbers: 300 test and 2,000 training questions
    gold = _write(tmp_path / "test.jsonl", shared("data", "nq-open", "NQ-open.dev.jsonl")
                  .read_text(encoding="utf-8").splitlines()[:300])
    asked = {json.loads(x)["question"] for x in gold.read_text(encoding="utf-8").splitlines()}
    preds = _write(tmp_path / "preds.jsonl", [
        x for x in shared("golden", "nq-open", "first_answer.predictions.jsonl")
        .read_text(encoding="utf-8").splitlines() if json.loads(x)["question"] in asked])
    train = _write(tmp_path / "train.tsv", shared("data", "dpr", "nq-dev.qa.tsv")
                   .read_text(encoding="utf-8").splitlines()[:2000])
    argv = ["overlap", "score", "--gold", str(gold), "--resamples", "20", "--train",
            str(train), "--predictions", str(preds), "--format", "json"]
    assert main(argv) == 0
    want = capsys.readouterr()
    argv[argv.index(new)] = old
    assert main(argv) == 0
    got = capsys.readouterr()
    assert got.out == want.out
    assert got.err == (f"nqkit: note: {old} is deprecated and will be removed in the next "
                       f"release; use {new}\n") + want.err


# ------------------------------------------------------------ duplicate predictions (issue 30)

def test_a_question_predicted_twice_is_treated_as_eval_nq_open_treats_it(shared, tmp_path,
                                                                         capsys):
    """A question predicted twice: overlap score says what eval nq-open says (a warning;
    the last one is used, as the official script does with lines), whether the two agree
    or not, and whether the predictions are JSON lines or one object {question: answer}
    (a JSON object may repeat a key; a dict kept the last one without a word)."""
    dev = shared("data", "nq-open", "NQ-open.dev.jsonl").read_text(encoding="utf-8")
    refs = [json.loads(x) for x in dev.splitlines()[:20]]
    gold = _write(tmp_path / "test.jsonl", dev.splitlines()[:20])
    right = {r["question"]: r["answer"][0] for r in refs}
    q0, q1 = refs[0]["question"], refs[1]["question"]
    lines = _jsonl(tmp_path / "p.jsonl", [{"question": q, "prediction": p} for q, p in
                                         [*right.items(), (q0, "wrong"), (q1, right[q1])]])
    obj = tmp_path / "p.json"
    obj.write_text("{" + ", ".join(f"{json.dumps(q)}: {json.dumps(p)}" for q, p in
                                   [*right.items(), (q0, "wrong"), (q1, right[q1])]) + "}",
                   encoding="utf-8")
    warning = ("nqkit: warning: 2 duplicate predicted questions; the last one is used (as in "
               "the official script)")
    for preds in (lines, obj):
        assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(preds),
                     "--format", "json"]) == 0
        cap = capsys.readouterr()
        assert warning in cap.err.splitlines()
        assert json.loads(cap.out)["accuracy"] == 19 / 20  # q0's last prediction is wrong
        assert main(["overlap", "score", "--gold", str(gold), "--train",
                     str(_small_train(shared, tmp_path)), "--predictions", str(preds),
                     "--convention", "orqa", "--format", "json"]) == 0
        cap = capsys.readouterr()
        assert warning in cap.err.splitlines()
        assert json.loads(cap.out)["groups"]["total"]["EM orqa"] == 19 / 20


def test_an_ambigqa_id_predicted_twice(shared, tmp_path, capsys):
    """AmbigQA predictions {id: [answers]} naming an id twice: refused when the two differ
    (a dict kept the last one without a word), a warning when they are the same."""
    dev = json.loads(shared("data", "ambignq", "dev_light.json").read_text())[:12]
    gold = tmp_path / "dev.json"
    gold.write_text(json.dumps(dev))
    train = tmp_path / "train.json"
    train.write_text(json.dumps(json.loads(shared("data", "ambignq", "train_light.json")
                                           .read_text())[:60]))
    twice = dev[4]["id"]

    def preds(second):
        path = tmp_path / "preds.json"
        path.write_text("{" + ", ".join([*(f'"{e["id"]}": ["x"]' for e in dev),
                                         f'"{twice}": {second}']) + "}")
        return str(path)

    overlap = ["overlap", "score", "--gold", str(gold), "--train", str(train)]
    for argv in (overlap, ["eval", "ambigqa", "--gold", str(gold)]):
        assert main([*argv, "--predictions", preds('["y", "z"]')]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"nqkit: error: {tmp_path / 'preds.json'}: id {twice}: is predicted twice, with "
            "different predictions (['x'] and ['y', 'z']) — keep one prediction per id"]
        assert main([*argv, "--predictions", preds('["x"]')]) == 0
        assert (f"nqkit: warning: {tmp_path / 'preds.json'}: 1 id(s) are predicted twice, "
                "with the same prediction; it is used once") \
            in capsys.readouterr().err.splitlines()
