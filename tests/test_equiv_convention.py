"""``--convention equiv``: each rule on hand cases (expected verdicts worked out by hand
from the rule's wording in nqkit/conventions/equiv.py), the registered convention against
``explain``, its place among the conventions, and the held-out agreement the docs state,
recomputed here with a kappa written out independently."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

import pytest

from nqkit.conventions import convention_names, get_convention
from nqkit.conventions.equiv import RULES, EquivVerdict, explain
from nqkit.metrics.em_conventions import explain_conventions
from nqkit.text.answer_forms import canonical_tokens, dates, fix_mojibake

from conftest import ROOT, SHARED, shared_file

DATA = SHARED / "data" / "openqa-eval"
HUMAN = DATA / "NQ301_human.tsv"
GOLD = DATA / "model_outputs" / "NQ_DPR.jsonl"

# (prediction, gold answers, accepted, rule, gold answer met)
CASES = [
    ("the Beatles", ["Beatles"], True, "equal", "Beatles"),
    # canonical: numbers, dates, units, accents, mis-decoded text, hyphens, initials
    ("two", ["2"], True, "canonical", "2"),
    ("2,579", ["2579"], True, "equal", "2579"),  # SQuAD drops the comma already
    ("1,500,000", ["1.5 million"], True, "canonical", "1.5 million"),
    ("March 30, 2006", ["30 March 2006"], True, "canonical", "30 March 2006"),
    ("30th of March 2006", ["March 30, 2006"], True, "canonical", "March 30, 2006"),
    ("420 milligrams", ["420\u00a0mg"], True, "canonical", "420\u00a0mg"),
    ("Dáin", ["D\u00c3\u00a1in"], True, "canonical", "D\u00c3\u00a1in"),
    ("charlotte of mecklenburg - strelitz", ["Charlotte of Mecklenburg-Strelitz"], True,
     "canonical", "Charlotte of Mecklenburg-Strelitz"),
    ("season nine", ["season 9"], True, "canonical", "season 9"),
    ("the twenty-second", ["22nd"], True, "canonical", "22nd"),
    ("Bhimrao Ramji Ambedkar", ["B. R. Ambedkar"], True, "initials", "B. R. Ambedkar"),
    ("B Ramji Ambedkar", ["Bhimrao R. Ambedkar"], True, "initials", "Bhimrao R. Ambedkar"),
    ("B. R.", ["Bob Ray"], False, "no-match", None),  # no full word in common
    # part-of-gold: at least half the content words, the numbers, a name's end
    ("foreign exchange", ["foreign exchange market"], True, "part-of-gold",
     "foreign exchange market"),
    ("Harrison", ["Aaron Harrison"], True, "part-of-gold", "Aaron Harrison"),
    ("Aaron", ["Aaron Harrison"], False, "no-match", None),
    ("group", ["group 1"], False, "no-match", None),
    ("exchange", ["foreign exchange market"], False, "no-match", None),
    ("explosion", ["in an explosion"], True, "part-of-gold", "in an explosion"),
    # contains: whole words, any gold answer
    ("Jim Brown (5.22)", ["Emmitt Smith", "Jim Brown"], True, "contains", "Jim Brown"),
    ("1990", ["1"], False, "no-match", None),
    ("The Houston Astros won the 2017 World Series.", ["2017"], True, "contains", "2017"),
    # gold-part: parenthesis, qualifier, place before a comma, list item
    ("SDH", ["subdural hematoma (SDH)"], True, "gold-part", "subdural hematoma (SDH)"),
    ("No, but you may need ID", ["Typically, no"], True, "gold-part", "Typically, no"),
    ("Madison", ["Madison, Wisconsin"], True, "gold-part", "Madison, Wisconsin"),
    ("Ontario", ["Orangeville, Ontario, Canada"], False, "no-match", None),
    ("it was John", ["John, Paul and George"], True, "gold-part", "John, Paul and George"),
    ("September 27, 2018", ["September 27, 2017"], False, "no-match", None),
    ("6", ["Jack Nicklaus (6)"], False, "no-match", None),  # a bare number in brackets
    # coarser-date: the year of a gold date, no other month or day
    ("1965", ["1 August 1965"], True, "coarser-date", "1 August 1965"),
    ("banned in 1965.", ["1 August 1965"], True, "coarser-date", "1 August 1965"),
    ("July 1965", ["1 August 1965"], False, "no-match", None),
    ("2 August 1965", ["1 August 1965"], False, "no-match", None),
    # guards
    ("1990 or 1991", ["1990"], False, "hedged", None),
    ("either Paris or Rome", ["Paris"], False, "hedged", None),
    ("either Paris", ["Paris"], True, "contains", "Paris"),  # one alternative: no hedge
    ("biotic or abiotic", ["Abiotic", "Biotic"], True, "contains", "Abiotic"),
    ("1990 or 1991", ["1990 or 1991"], True, "equal", "1990 or 1991"),
    ("Paris, Rome, Berlin, Madrid", ["Paris"], False, "many-candidates", None),
    ("Paris, Rome, Berlin, Madrid", ["Paris", "Rome", "Berlin", "Madrid"], True,
     "contains", "Paris"),
    ("Paris, Rome and Berlin", ["Paris"], True, "contains", "Paris"),  # three: a list
    (" ".join(["word"] * 41) + " Paris", ["Paris"], False, "too-long", None),
    (" ".join(["word"] * 39) + " Paris", ["Paris"], True, "contains", "Paris"),
    ("", ["x"], False, "empty", None),
    ("...", ["x"], False, "empty", None),
    ("Rome", ["Paris"], False, "no-match", None),
]


@pytest.mark.parametrize(("prediction", "answers", "accepted", "rule", "gold"), CASES,
                         ids=[c[0][:40] or "empty" for c in CASES])
def test_each_rule(prediction: str, answers: list[str], accepted: bool, rule: str,
                   gold: str | None) -> None:
    assert explain(prediction, answers) == EquivVerdict(accepted, rule, gold)


def test_every_rule_name_is_exercised_and_documented() -> None:
    assert {c[3] for c in CASES} == set(RULES)
    doc = (ROOT / "src" / "nqkit" / "conventions" / "equiv.py").read_text(encoding="utf-8")
    assert all(f"``{name}``" in doc for name in RULES)


@pytest.mark.parametrize(("text", "words"), [
    ("March 30, 2006", ("30", "march", "2006")),
    ("Sept. 4", ("4", "september")),
    ("may be", ("may", "be")),  # a month only beside a number
    ("twenty-one", ("21",)),
    ("the first", ("1st",)),
    ("eleventh", ("11th",)),
    ("$265 million", ("265000000",)),
    ("3.50", ("3.5",)),
    ("200-500 mg", ("200", "to", "500", "mg")),
    ("U.S.", ("us",)),
    ("Dr. B.R. Ambedkar", ("dr", "br", "ambedkar")),
    ("100%", ("100", "percent")),
    ("Grey's Anatomy", ("greys", "anatomy")),
    ("6th century BCE", ("6th", "century", "bc")),
])
def test_canonical_words(text: str, words: tuple[str, ...]) -> None:
    assert canonical_tokens(text) == words


def test_mojibake_and_dates() -> None:
    assert fix_mojibake("D\u00c3\u00a1in") == "Dáin"
    assert fix_mojibake("Dáin") == "Dáin"  # right text is left alone
    assert fix_mojibake("\u00c3 la carte") == "\u00c3 la carte"  # not decodable: as is
    assert dates(canonical_tokens("July 4, 1960, when")) == [(2, "july", "4")]
    assert dates(canonical_tokens("in 1965")) == [(1, None, None)]


def test_the_registered_convention_is_explain() -> None:
    rule = get_convention("equiv")
    for prediction, answers, accepted, _, gold in CASES:
        assert rule.match(prediction, answers) == gold
        assert (rule.match(prediction, answers) is not None) == accepted
    assert rule.creditable(["Paris"]) and not rule.creditable([])
    assert "nqkit's own" in rule.source and not rule.published


def test_selectable_but_not_among_the_published_rules() -> None:
    assert "equiv" in convention_names()
    assert "equiv" not in convention_names(published=True)
    table = explain_conventions([("q", "two", ["2"])])
    assert "equiv" not in table.names
    assert explain_conventions([("q", "two", ["2"])], ["orqa", "equiv"]).num_correct == {
        "orqa": 0, "equiv": 1}


def test_eval_nq_open_scores_with_equiv_and_explains_it(tmp_path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in (
        ("how many", ["2"]), ("when", ["1 August 1965"]), ("who", ["Aaron Harrison"]))))
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"question": q, "prediction": p}) + "\n"
                             for q, p in (("how many", "two"), ("when", "1965"),
                                          ("who", "Aaron"))))
    r = subprocess.run([sys.executable, "-m", "nqkit", "eval", "nq-open", "--gold", str(gold),
                        "--predictions", str(preds), "--convention", "equiv", "--explain",
                        "--format", "json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    text = json.dumps(out)
    assert "em-equiv" in text  # the signature names the rule
    assert re.search(r'"equiv": \{"accuracy": 0\.666', text)
    assert re.search(r'"orqa": \{"accuracy": 0\.0', text)


# ------------------------------------------------------------- the held-out half

def _kappa(a: list[bool], b: list[bool]) -> float:
    """Cohen's kappa written out from its definition (Cohen 1960), over the 2x2 table."""
    n = len(a)
    yy = sum(x and y for x, y in zip(a, b, strict=True))
    nn = sum(not x and not y for x, y in zip(a, b, strict=True))
    po = (yy + nn) / n
    pe = (sum(a) / n) * (sum(b) / n) + (1 - sum(a) / n) * (1 - sum(b) / n)
    return (po - pe) / (1 - pe)


def _documented_row(half: str, rule: str) -> list[str]:
    text = (ROOT / "docs" / "nq-open-ambigqa.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0] == half and cells[2] == f"`{rule}`":
            return cells
    raise AssertionError(f"docs/nq-open-ambigqa.md has no row {half} / {rule}")


def test_the_held_out_agreement_the_docs_state() -> None:
    shared_file("data", "openqa-eval", "NQ301_human.tsv")
    import csv

    from nqkit.metrics.judge_audit import cohen_kappa
    from nqkit.text.question_key import question_key

    gold = {}
    with GOLD.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            gold[question_key(row["question"]).rstrip("?").strip()] = row["answer"]
    rule = get_convention("equiv")
    pairs: dict[tuple[str, str], tuple[bool, bool]] = {}
    halves: dict[str, str] = {}
    with HUMAN.open(encoding="utf-8") as f:
        for row in list(csv.reader(f, delimiter="\t"))[1:]:
            if not row[3].strip():
                continue
            key = question_key(row[1]).rstrip("?").strip()
            # the split, restated: parity of the first byte of SHA-256 of the key
            halves[key] = "dev" if hashlib.sha256(key.encode()).digest()[0] % 2 == 0 \
                else "held-out"
            pairs.setdefault((key, row[2]), (row[3] == "Yes",
                                             rule.match(row[2].strip(), gold[key]) is not None))
    assert sorted(halves.values()).count("held-out") == 69 and len(halves) == 150
    for half in ("held-out", "dev"):
        chosen = [v for (k, _), v in pairs.items() if halves[k] == half]
        human = [h for h, _ in chosen]
        judge = [j for _, j in chosen]
        cells = _documented_row(half, "equiv")
        assert int(cells[3]) == len(chosen)
        assert f"{_kappa(human, judge):.4f}" == cells[4].split()[0]
        assert cohen_kappa(human, judge) == pytest.approx(_kappa(human, judge), abs=1e-12)
        assert int(cells[6]) == sum(j and not h for h, j in chosen)
        assert int(cells[7]) == sum(h and not j for h, j in chosen)


def test_judge_audit_command_with_equiv() -> None:
    shared_file("data", "openqa-eval", "NQ301_human.tsv")
    r = subprocess.run([sys.executable, "-m", "nqkit", "judge", "audit", "--judgments",
                        str(HUMAN), "--convention", "equiv", "--gold", str(GOLD),
                        "--format", "json", "--resamples", "1000", "--seed", "0"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    cells = _documented_row("all", "equiv")
    kappa, low, high = re.findall(r"\d\.\d{4}", cells[4])
    assert (out["pairs"], f"{out['kappa']:.4f}") == (int(cells[3]), kappa)
    assert [f"{x:.4f}" for x in out["kappa_interval"]] == [low, high]
    assert "convention:equiv" in out["signature"]
