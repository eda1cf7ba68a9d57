"""Does a judge reorder the systems? (nqkit judge audit --systems; nqkit.metrics.
system_order) and a judge of one's own (nqkit.metrics.judge_audit.audit_judge).

* Kendall's tau-b against scipy's ``kendalltau`` and a brute-force count of concordant,
  discordant and tied pairs written here, and a case worked by hand;
* on the 12 released systems, each system's human score is oqaeval's AnnotatedEM with
  NQ301_human.tsv, its judge score under GPT-4 is oqaeval's AnnotatedEM with
  NQ301_gpt-4.tsv as the annotation file, and under the ``squad`` convention oqaeval's
  EM — all from oqaeval's own ``eval._evaluate`` (the oracle of tests/test_adjudicated.py,
  reused); tau is scipy's on those oracle scores;
* a callable judge gives what the same rule gives as ``--convention``;
* refusals: systems of other questions, a system lacking judged questions, one system.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from nqkit.cli import main
from nqkit.metrics.system_order import kendall_tau_b, ranks

from conftest import oqaeval_eval, require, shared_file, this_tree_env

DATA = ("data", "openqa-eval")


def brute_tau_b(x: list[float], y: list[float]) -> float:
    conc = disc = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        a, b = (x[i] > x[j]) - (x[i] < x[j]), (y[i] > y[j]) - (y[i] < y[j])
        conc += a * b > 0
        disc += a * b < 0
        tx += a == 0
        ty += b == 0
    n0 = len(x) * (len(x) - 1) // 2
    den = math.sqrt((n0 - tx) * (n0 - ty))
    return (conc - disc) / den if den else math.nan


def test_tau_b_by_hand_and_by_brute_force() -> None:
    assert kendall_tau_b([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    # one tie in x: 2 concordant of 2 untied-in-x pairs, 3 untied in y
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert kendall_tau_b([3, 2, 1], [1, 2, 3]) == -1.0
    assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(2, 14)
        x = [rng.randint(0, 4) / 4 for _ in range(n)]  # many ties
        y = [rng.randint(0, 4) / 4 for _ in range(n)]
        want = brute_tau_b(x, y)
        got = kendall_tau_b(x, y)
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def test_tau_b_is_scipys() -> None:
    stats = require("scipy.stats")
    rng = random.Random(3)
    for _ in range(40):
        n = rng.randint(3, 14)
        x = [rng.randint(0, 5) for _ in range(n)]
        y = [rng.randint(0, 5) for _ in range(n)]
        if len(set(x)) > 1 and len(set(y)) > 1:
            want = stats.kendalltau(x, y, variant="b").statistic
            assert kendall_tau_b(x, y) == pytest.approx(want, abs=1e-12)


def test_ranks() -> None:
    assert ranks([0.5, 0.7, 0.5, 0.1]) == [2, 1, 2, 4]


# ------------------------------------------------------------------ the 12 systems

@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The 12 systems as oqaeval reads them, and oqaeval's scores of each: EM and
    AnnotatedEM with the human judgments, AnnotatedEM with GPT-4's verdicts."""
    require("regex")
    from nqkit.formats.judgments import read_judgments
    from nqkit.text.question_key import question_key
    from test_adjudicated import NAMES, as_oqaeval_reads, oracle

    tmp = tmp_path_factory.mktemp("released")
    human = shared_file(*DATA, "NQ301_human.tsv")
    gpt4 = shared_file(*DATA, "NQ301_gpt-4.tsv")
    judged = {question_key(j.question).rstrip("?").strip()
              for j in read_judgments(human).judgments}
    paths, scores = [], {}
    with oqaeval_eval() as oqaeval:
        for name in NAMES:
            # only the judged questions' lines (AnnotatedEM scores no other): 20x faster
            lines = as_oqaeval_reads(name, tmp).read_text(encoding="utf-8").splitlines()
            path = tmp / "judged" / name
            path.parent.mkdir(exist_ok=True)
            path.write_text("".join(x + "\n" for x in lines if x and question_key(
                json.loads(x)["question"]).rstrip("?").strip() in judged), encoding="utf-8")
            h = oracle(oqaeval, path, human, tmp)
            g = oracle(oqaeval, path, gpt4, tmp)
            mean = lambda v: sum(v) / len(v)  # noqa: E731
            scores[Path(name).stem] = (mean(h["AnnotatedEM"]), mean(h["EM"]),
                                       mean(g["AnnotatedEM"]))
            paths.append(str(path))
    return paths, scores


def _audit(capsys, *args: str) -> dict:
    assert main(["judge", "audit", "--format", "json", *args]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("judge", ["gpt-4", "squad"])
def test_the_systems_scores_are_oqaevals(judge, released, capsys) -> None:
    stats = require("scipy.stats")
    paths, scores = released
    human = str(shared_file(*DATA, "NQ301_human.tsv"))
    how = (["--verdicts", str(shared_file(*DATA, "NQ301_gpt-4.tsv"))] if judge == "gpt-4"
           else ["--convention", "squad", "--gold", str(shared_file(*DATA, "NQ301_BEM.tsv"))])
    out = _audit(capsys, "--judgments", human, *how, "--systems", *paths,
                 "--resamples", "200", "--seed", "1")
    assert [s["name"] for s in out["systems"]] == list(scores)
    column = 2 if judge == "gpt-4" else 1
    for s in out["systems"]:
        assert s["human"] == pytest.approx(scores[s["name"]][0], abs=1e-12), s["name"]
        assert s["judge"] == pytest.approx(scores[s["name"]][column], abs=1e-12), s["name"]
        assert s["questions"] == s["judge_questions"] == 150
    h = [v[0] for v in scores.values()]
    j = [v[column] for v in scores.values()]
    assert out["kendall_tau"] == pytest.approx(stats.kendalltau(h, j).statistic, abs=1e-12)
    assert [s["human_rank"] for s in out["systems"]] == [1 + sum(t > x for t in h) for x in h]
    lo, hi = out["kendall_tau_interval"]
    assert -1 <= lo <= hi <= 1
    assert "|systems:" in out["signature"] and "|resamples:200|seed:1|" in out["signature"]


def test_a_callable_judge_is_audited_as_the_convention(capsys) -> None:
    from nqkit.conventions import get_convention
    from nqkit.formats.judgments import read_judgments
    from nqkit.formats.nq_open import read_nq_open
    from nqkit.metrics.judge_audit import audit_judge

    human_path = shared_file(*DATA, "NQ301_human.tsv")
    gold_path = shared_file(*DATA, "model_outputs", "NQ_DPR.jsonl")
    rule = get_convention("containment")
    asked: list[str] = []

    def judge(question: str, answer: str, gold) -> bool:
        asked.append(answer)
        return rule.match(answer.strip(), gold) is not None

    gold = {ex.question: ex.answers for ex in read_nq_open(gold_path)}
    r = audit_judge(read_judgments(human_path).judgments, judge, gold, resamples=100, seed=4)
    cli = _audit(capsys, "--judgments", str(human_path), "--convention", "containment",
                 "--gold", str(gold_path), "--resamples", "100", "--seed", "4")
    assert len(asked) == r.pairs == cli["pairs"]  # asked once per distinct judged pair
    assert (r.accuracy, r.kappa, r.missed_yes, r.false_yes) == (
        cli["accuracy"], cli["kappa"], cli["missed_yes"], cli["false_yes"])
    assert r.accuracy_interval is not None and r.kappa_interval is not None
    assert [r.accuracy_interval.low, r.accuracy_interval.high] == cli["accuracy_interval"]
    assert [r.kappa_interval.low, r.kappa_interval.high] == cli["kappa_interval"]
    # abstaining on every answer with a digit: those pairs leave the audit
    digits = sum(any(c.isdigit() for c in a) for a in asked)
    abstains = audit_judge(read_judgments(human_path).judgments,
                           lambda q, a, g: None if any(c.isdigit() for c in a)
                           else judge(q, a, g), gold, resamples=0)
    assert abstains.abstained > 0 and abstains.pairs == r.pairs - abstains.abstained
    assert abstains.abstained == digits


def test_a_judge_that_says_neither_yes_nor_no_is_refused(tmp_path) -> None:
    from nqkit.errors import InputError
    from nqkit.formats.judgments import Judgment
    from nqkit.metrics.judge_audit import audit_judge

    with pytest.raises(InputError, match="returned 'maybe'"):
        audit_judge([Judgment("who is x", "bob", True, where="h.tsv:2")],
                    lambda q, a, g: "maybe", {"who is x": ["bob"]})  # type: ignore


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nqkit", "judge", "audit", *args],
                          capture_output=True, text=True, env=this_tree_env())


def test_refusals(tmp_path) -> None:
    human = tmp_path / "h.tsv"
    human.write_text("Question\tModel answer\tAcceptable?\nwho is x\tbob\tYes\n"
                     "who is y\tann\tNo\n", encoding="utf-8")
    judge = tmp_path / "j.jsonl"
    judge.write_text(json.dumps({"question": "who is x", "answer": "bob", "verdict": True})
                     + "\n", encoding="utf-8")

    def system(name: str, questions: list[str]) -> str:
        path = tmp_path / name
        path.write_text("".join(json.dumps({"question": q, "answer": ["bob"],
                                            "prediction": "bob"}) + "\n"
                                for q in questions), encoding="utf-8")
        return str(path)

    good = system("a.jsonl", ["who is x", "who is y"])
    other = system("other.jsonl", ["who is z", "what is w"])
    r = _cli("--judgments", str(human), "--verdicts", str(judge), "--systems", good, other)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"nqkit: error: {other}: the system answers none of the 2 "
                               "judged questions")
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    short = system("short.jsonl", ["who is x"])
    r = _cli("--judgments", str(human), "--verdicts", str(judge), "--systems", good, short)
    assert r.returncode == 2 and "lacks 1 of the 2 judged questions" in r.stderr
    r = _cli("--judgments", str(human), "--verdicts", str(judge), "--systems", good)
    assert r.returncode == 2 and "two or more" in r.stderr
    bare = []  # predictions without gold, and no gold anywhere else
    for name in ("bare1.jsonl", "bare2.jsonl"):
        (tmp_path / name).write_text(json.dumps({"question": "who is x", "prediction": "bob"})
                                     + "\n", encoding="utf-8")
        bare.append(str(tmp_path / name))
    r = _cli("--judgments", str(human), "--verdicts", str(judge), "--systems", *bare)
    assert r.returncode == 2 and "carries no gold answers" in r.stderr and "--gold" in r.stderr


def test_a_tau_undefined_on_some_resamples_gets_no_interval(tmp_path, capsys) -> None:
    # two systems, two questions: a resample of one question twice ties the systems
    human = tmp_path / "h.tsv"
    human.write_text("Question\tModel answer\tAcceptable?\nwho is x\tbob\tYes\n"
                     "who is y\tann\tYes\n", encoding="utf-8")
    paths = []
    for name, preds in (("a", ("bob", "ann")), ("b", ("bob", "cy"))):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"question": q, "answer": [g], "prediction": p})
                                + "\n" for q, g, p in zip(("who is x", "who is y"),
                                                          ("bob", "ann"), preds, strict=True)),
                        encoding="utf-8")
        paths.append(str(path))

    def audit(judge: str, *more: str) -> tuple[dict, str]:
        assert main(["judge", "audit", "--judgments", str(human), "--convention", judge,
                     "--systems", *paths, "--format", "json", *more]) == 0
        captured = capsys.readouterr()
        return json.loads(captured.out), captured.err

    out, err = audit("squad", "--resamples", "50")
    # a 2/2 and b 1/2 on both sides: tau 1; a resample of x twice ties them: no interval
    assert [(s["human"], s["judge"]) for s in out["systems"]] == [(1.0, 1.0), (0.5, 0.5)]
    assert out["kendall_tau"] == 1.0 and out["kendall_tau_interval"] is None
    assert "undefined on some bootstrap resamples" in err
    # without resamples: no interval, and nothing to say about one
    out, err = audit("squad", "--resamples", "0")
    assert out["kendall_tau"] == 1.0 and out["kendall_tau_interval"] is None
    assert "resamples" not in err


def test_convention_verdicts_for_scripts(tmp_path) -> None:
    """``nqkit.analysis.judge_audit.convention_verdicts``: the convention's verdict on
    each distinct judged pair whose question the gold file holds (SQuAD's normalization:
    case, punctuation and articles dropped), and the count of pairs it does not hold."""
    from nqkit.analysis.judge_audit import convention_verdicts
    from nqkit.formats.judgments import read_judgments

    human = tmp_path / "h.tsv"
    human.write_text("Question\tModel answer\tAcceptable?\n"
                     "who is x\tBob.\tYes\n"
                     "who is x\tBob.\tYes\n"  # the same pair again: asked once
                     "who is y\tthe ann\tYes\n"
                     "who is y\tanne\tNo\n"
                     "who is z\tcy\tYes\n", encoding="utf-8")  # z: not in the gold file
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n"
                            for q, a in (("who is x", ["bob"]), ("who is y", ["Ann"]))),
                    encoding="utf-8")
    verdicts, no_gold = convention_verdicts("squad", read_judgments(human).judgments,
                                            str(gold))
    assert [(v.question, v.answer, v.acceptable) for v in verdicts] == [
        ("who is x", "Bob.", True), ("who is y", "the ann", True), ("who is y", "anne", False)]
    assert no_gold == 1
