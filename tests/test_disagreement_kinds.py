"""Kinds of disagreement between a judge and the humans (nqkit.metrics.disagreement_kinds):
each rule of the module docstring on hand cases (the expected kind worked out from the
rule's words, not from the code), the order in which the rules are tried, and what
``nqkit judge audit`` prints of them — with the gold from --gold, from the judgments' or
the verdicts' own 'Gold answers' column, and without any gold (one warning, no table)."""

from __future__ import annotations

import json

import pytest

from nqkit.cli import main
from nqkit.metrics.disagreement_kinds import KINDS, disagreement_kind, tokens


@pytest.mark.parametrize("prediction, gold, kind", [
    # 1. verbose: the gold's tokens, contiguous, among 4 or more other tokens
    ("The First Fleet arrived in Australia on 18 January 1788", ["1788"], "verbose answer"),
    ("Donna Pinciotti is who Eric ends up with", ["Ronald Reagan", "Donna Pinciotti"],
     "verbose answer"),
    # 2. a list on one side, the items of one a proper subset of the other's
    ("Paul Cummins and Tom Piper", ["Tom Piper"], "partial list"),
    ("Tom Piper", ["Paul Cummins and Tom Piper"], "partial list"),
    ("Ann; Bob", ["Ann; Bob; Cy"], "partial list"),
    ("Ann", ["Ann, Bob, Cy"], "partial list"),  # two commas: a list
    ("Ann, Bob", ["Ann, Bob, Cy"], "granularity"),  # one comma: one item, no subset
    # 3. numbers or dates on both sides, neither's tokens a proper subset of the other's
    ("ten", ["10"], "number or date format"),
    ("1,000", ["1000"], "number or date format"),
    ("24 June 1983", ["June 24, 1983"], "number or date format"),
    ("1984", ["1983"], "number or date format"),
    ("Season 17", ["14"], "number or date format"),
    ("the 5th", ["fifth"], "number or date format"),
    # 4. granularity: one token set a proper subset of the other
    ("1983", ["June 24, 1983"], "granularity"),  # the example of issue 32
    ("June 24, 1983", ["1983"], "granularity"),
    ("Paris, France", ["Paris"], "granularity"),  # one comma: not a list
    ("Andrew Harrison", ["Andrew Michael Harrison"], "granularity"),
    ("the late Roman period", ["late Roman Empire"], "other"),  # no subset either way
    ("in the late 6th century", ["late 6th century BCE"], "number or date format"),
    # 5. the rest
    ("Prince Albert", ["Charlotte of Mecklenburg-Strelitz"], "other"),
    ("king", ["king"], "other"),  # the same tokens: no rule tells them apart
    ("...", ["1983"], "other"),  # no token
    ("1983", [], "other"),  # no gold
])
def test_each_rule(prediction: str, gold: list[str], kind: str) -> None:
    assert disagreement_kind(prediction, gold) == kind


def test_the_first_rule_that_holds_for_any_gold_answer_wins() -> None:
    # verbose (rule 1, via the 2nd gold answer) beats granularity (rule 4, via the 1st)
    pred = "it was June 24 1983 in the evening"
    assert disagreement_kind(pred, ["June 24 1983 evening", "24 1983"]) == "verbose answer"
    # 3 extra tokens are not "much more text": granularity
    assert disagreement_kind("in June 24 1983", ["1983"]) == "granularity"
    assert disagreement_kind("it was in June 1983", ["1983"]) == "verbose answer"
    # a list whose part is the gold: partial list before granularity
    assert disagreement_kind("Ann and Bob", ["Bob"]) == "partial list"
    # the order of the gold answers does not matter
    assert disagreement_kind("1983", ["x", "June 24, 1983"]) == "granularity"
    assert disagreement_kind("1983", ["June 24, 1983", "x"]) == "granularity"


def test_tokens() -> None:
    assert tokens("The Beatles, 1,964 & a Band") == ("beatles", "1964", "band")
    assert KINDS[-1] == "other" and len(set(KINDS)) == 5


# ------------------------------------------------------------------ on the command line

HUMAN = ("id\tQuestion\tModel answer\tAcceptable?\n"
         "1\twhen was x born\t1983\tYes\n"
         "2\twhen was x born\tborn in 1983 to a family of farmers\tYes\n"
         "3\twho wrote y\tAnn and Bob\tYes\n"
         "4\twho wrote y\tCy\tNo\n"
         "5\twhen was x born\t1984\tNo\n")
GOLD = {"when was x born": ["June 24, 1983"], "who wrote y": ["Ann"]}
# the judge misses 1 (granularity), 2 (not verbose: the gold's tokens are not in it; a
# number, and no subset either way: number or date format) and 3 (partial list); says
# a false yes on 5 (number or date format); agrees on 4
JUDGE = [("when was x born", "1983", False), ("when was x born",
         "born in 1983 to a family of farmers", False), ("who wrote y", "Ann and Bob", False),
         ("who wrote y", "Cy", False), ("when was x born", "1984", True)]


def _audit(capsys, *args: str) -> tuple[dict, str]:
    assert main(["judge", "audit", *args, "--format", "json", "--resamples", "0"]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def test_kinds_from_gold_given_in_three_ways(tmp_path, capsys) -> None:
    human = tmp_path / "h.tsv"
    human.write_text(HUMAN, encoding="utf-8")
    judge = tmp_path / "j.jsonl"
    judge.write_text("".join(json.dumps({"question": q, "answer": a, "verdict": v}) + "\n"
                             for q, a, v in JUDGE), encoding="utf-8")
    gold = tmp_path / "g.jsonl"
    gold.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n"
                            for q, a in GOLD.items()), encoding="utf-8")
    expected = {"granularity": (1, 0), "number or date format": (1, 1),
                "partial list": (1, 0)}
    got, err = _audit(capsys, "--judgments", str(human), "--verdicts", str(judge),
                      "--gold", str(gold))
    d = got["disagreements"]
    assert list(d) == list(KINDS)
    assert {k: (v["missed_yes"], v["false_yes"]) for k, v in d.items()
            if v["missed_yes"] or v["false_yes"]} == expected
    assert d["partial list"]["examples"] == [{"question": "who wrote y",
                                              "answer": "Ann and Bob", "gold": ["Ann"],
                                              "human": True, "judge": False}]
    assert got["missed_yes"] + got["false_yes"] == 4 and err == ""
    # the same gold as a TSV column (NQ301_BEM.tsv's shape: answers joined by " | "),
    # in --gold, in the judgments file, in the verdicts file
    rows = [line.split("\t") for line in HUMAN.splitlines()]
    with_gold = "".join("\t".join([*r[:2], "Gold answers" if i == 0 else " | ".join(
        GOLD[r[1]]), *r[2:]]) + "\n" for i, r in enumerate(rows))
    tsv = tmp_path / "gold.tsv"
    tsv.write_text(with_gold, encoding="utf-8")
    for args in (["--judgments", str(human), "--verdicts", str(judge), "--gold", str(tsv)],
                 ["--judgments", str(tsv), "--verdicts", str(judge)]):
        again, _ = _audit(capsys, *args)
        assert again["disagreements"] == d
    verdicts = tmp_path / "v.tsv"
    verdicts.write_text("".join("\t".join([*r[:4], ("Acceptable?" if i == 0 else
                                                    "Yes" if JUDGE[i - 1][2] else "No")])
                                + "\n" for i, r in enumerate(
                                    line.split("\t") for line in with_gold.splitlines())),
                        encoding="utf-8")
    again, _ = _audit(capsys, "--judgments", str(human), "--verdicts", str(verdicts))
    assert again["disagreements"] == d


def test_without_gold_the_kinds_are_said_to_be_skipped(tmp_path, capsys) -> None:
    human = tmp_path / "h.tsv"
    human.write_text(HUMAN, encoding="utf-8")
    judge = tmp_path / "j.jsonl"
    judge.write_text("".join(json.dumps({"question": q, "answer": a, "verdict": v}) + "\n"
                             for q, a, v in JUDGE), encoding="utf-8")
    got, err = _audit(capsys, "--judgments", str(human), "--verdicts", str(judge))
    assert got["disagreements"] is None
    assert err.count("warning:") == 1 and "not sorted by kind" in err
    assert main(["judge", "audit", "--judgments", str(human), "--verdicts", str(judge),
                 "--resamples", "0"]) == 0
    table = capsys.readouterr().out
    assert "disagreement kind" not in table and "missed yes" in table


def test_a_gold_tsv_without_the_gold_column_is_refused(tmp_path, capsys) -> None:
    human = tmp_path / "h.tsv"
    human.write_text(HUMAN, encoding="utf-8")
    assert main(["judge", "audit", "--judgments", str(human), "--convention", "orqa",
                 "--gold", str(human)]) == 2
    err = capsys.readouterr().err
    assert f"{human}:1: the gold TSV's header lacks 'Question' or 'Gold answers'" in err
    assert len(err.strip().splitlines()) == 1
