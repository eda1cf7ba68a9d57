"""nqkit judge audit: agreement and kappa on the openqa-eval files, checked against
scikit-learn (or the textbook formula), and its refusals."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHARED, shared_file

DATA = SHARED / "data" / "openqa-eval"
HUMAN = DATA / "NQ301_human.tsv"
GOLD = DATA / "model_outputs" / "NQ_DPR.jsonl"


@pytest.fixture(autouse=True)
def _shared_data() -> None:
    shared_file("data", "openqa-eval", "NQ301_human.tsv")  # skip, or fail under CI


def kappa(a: list[bool], b: list[bool]) -> float:
    try:
        from sklearn.metrics import cohen_kappa_score
        return float(cohen_kappa_score(a, b))
    except ImportError:
        n = len(a)
        po = sum(x == y for x, y in zip(a, b, strict=False)) / n
        pa, pb = sum(a) / n, sum(b) / n
        pe = pa * pb + (1 - pa) * (1 - pb)
        return (po - pe) / (1 - pe)


def audit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nqkit", "judge", "audit", *args],
                          capture_output=True, text=True)


def human_rows() -> list[list[str]]:
    with HUMAN.open(encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t"))[1:]


def oracle_file(verdict_file: Path) -> tuple[list[bool], list[bool]]:
    # both files list the same pairs in the same order; Acceptable? is the judge's verdict
    with verdict_file.open(encoding="utf-8") as f:
        judge = list(csv.reader(f, delimiter="\t"))[1:]
    h, j = [], []
    for hr, jr in zip(human_rows(), judge, strict=True):
        verdict = jr[2] if len(jr) == 4 else jr[3]
        if verdict.strip() and hr[3].strip() and (hr[1], hr[2]) != (
                "when did the song things that make you go hmmm come out", "1991x"):
            h.append(hr[3] == "Yes")
            j.append(verdict == "Yes")
    return h, j


@pytest.mark.parametrize("name", ["NQ301_gpt-4.tsv", "NQ301_text-davinci-003.tsv"])
def test_llm_verdicts(name: str) -> None:
    r = audit("--judgments", str(HUMAN), "--verdicts", str(DATA / name), "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    h, j = oracle_file(DATA / name)
    # the human file judges one pair twice: the audit keeps one
    assert abs(out["pairs"] - len(h)) <= 1
    assert out["kappa"] == pytest.approx(kappa(h, j), abs=2e-3)
    acc = sum(x == y for x, y in zip(h, j, strict=False)) / len(h)
    assert out["accuracy"] == pytest.approx(acc, abs=2e-3)
    lo, hi = out["kappa_interval"]
    assert lo < out["kappa"] < hi
    lo, hi = out["accuracy_interval"]
    assert lo < out["accuracy"] < hi
    assert out["signature"].startswith("judge-audit|judgments:")


@pytest.mark.parametrize("convention", ["containment", "orqa"])
def test_conventions(convention: str) -> None:
    from nqkit.conventions import get_convention
    from nqkit.formats.nq_open import read_nq_open
    from nqkit.text.question_key import question_key

    gold = {question_key(ex.question): ex.answers for ex in read_nq_open(GOLD)}
    rule = get_convention(convention)
    seen: dict[tuple[str, str], tuple[bool, bool]] = {}
    for row in human_rows():
        k = question_key(row[1]).rstrip("?").strip()
        seen.setdefault((k, row[2]), (row[3] == "Yes",
                                      rule.match(row[2].strip(), gold[k]) is not None))
    h = [a for a, _ in seen.values()]
    j = [b for _, b in seen.values()]
    r = audit("--judgments", str(HUMAN), "--convention", convention, "--gold", str(GOLD),
              "--format", "json", "--resamples", "200", "--seed", "3")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["pairs"] == len(h)
    assert out["kappa"] == pytest.approx(kappa(h, j), abs=1e-9)
    assert out["missed_yes"] == sum(a and not b for a, b in zip(h, j, strict=False))
    assert out["false_yes"] == sum(b and not a for a, b in zip(h, j, strict=False))
    again = audit("--judgments", str(HUMAN), "--convention", convention, "--gold", str(GOLD),
                  "--format", "json", "--resamples", "200", "--seed", "3")
    assert json.loads(again.stdout) == out


def test_refusals(tmp_path: Path) -> None:
    human = tmp_path / "h.tsv"
    human.write_text("Question\tModel answer\tAcceptable?\nwho is x\tbob\tYes\n")
    bad = tmp_path / "v.tsv"
    bad.write_text("Question\tModel answer\tAcceptable?\twho\nwho is x\tbob\tMaybe\tx\n")
    r = audit("--judgments", str(human), "--verdicts", str(bad))
    assert r.returncode == 2 and f"{bad}:2" in r.stderr and "Maybe" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    other = tmp_path / "o.jsonl"
    other.write_text('{"question": "who is y", "answer": "bob", "verdict": true}\n')
    r = audit("--judgments", str(human), "--verdicts", str(other))
    assert r.returncode == 2 and "no (question, answer) pair" in r.stderr
    r = audit("--judgments", str(human), "--convention", "orqa")
    assert r.returncode == 2 and "--gold" in r.stderr
    assert "Traceback" not in r.stderr


def test_an_undefined_kappa_and_questions_without_gold_are_said(tmp_path: Path) -> None:
    human = tmp_path / "h.tsv"
    human.write_text("Question\tModel answer\tAcceptable?\nwho is x\tbob\tYes\n"
                     "who is y\tann\tYes\nwho is z\tmo\tYes\n")
    judge = tmp_path / "j.jsonl"
    judge.write_text("".join(json.dumps({"question": q, "answer": a, "verdict": True}) + "\n"
                             for q, a in (("who is x", "bob"), ("who is y", "ann"))))
    r = audit("--judgments", str(human), "--verdicts", str(judge), "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # every pair yes on both sides: agreement 1, no chance agreement to correct for
    assert out["accuracy"] == 1.0 and out["kappa"] is None and out["kappa_interval"] is None
    assert "kappa is undefined" in r.stderr and out["only_human"] == 1
    assert "verdicts are of pairs" not in r.stderr  # every verdict was judged
    assert out["false_yes_rate"] is None  # no human no to be a rate of
    table = audit("--judgments", str(human), "--verdicts", str(judge)).stdout
    assert "no human no" in table and "nan" not in table
    gold = tmp_path / "g.jsonl"
    gold.write_text(json.dumps({"question": "who is x", "answer": ["bob"]}) + "\n"
                    + json.dumps({"question": "who is y", "answer": ["joe"]}) + "\n")
    r = audit("--judgments", str(human), "--convention", "orqa", "--gold", str(gold),
              "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["pairs"], out["only_human"], out["missed_yes"]) == (2, 1, 1)
    assert "1 judged pairs are of questions --gold does not hold" in r.stderr


def test_verdicts_of_unjudged_pairs_are_said(tmp_path: Path) -> None:
    human = tmp_path / "h.tsv"
    human.write_text("Question\tModel answer\tAcceptable?\nwho is x\tbob\tYes\n"
                     "who is y\tann\tNo\n")
    judge = tmp_path / "j.jsonl"
    judge.write_text("".join(json.dumps({"question": q, "answer": a, "verdict": v}) + "\n"
                             for q, a, v in (("who is x", "bob", True),
                                             ("who is y", "ann", False),
                                             ("who is y", "Ann Lee", True))))
    r = audit("--judgments", str(human), "--verdicts", str(judge), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["only_judge"] == 1
    assert "1 of the judge's verdicts are of pairs the human judgments do not judge" \
        in r.stderr
