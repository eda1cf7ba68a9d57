"""Named exact-match conventions: each rule on hand-made cases, from its published definition."""

from __future__ import annotations

import json

import pytest

from nqkit.errors import InputError
from nqkit.metrics.em_conventions import explain_conventions, get_convention

from conftest import shared_file

COMPOSED = "Pel\u00e9"  # é as one code point
DECOMPOSED = "Pele\u0301"  # e + combining acute accent


@pytest.mark.parametrize(("name", "prediction", "answers", "expected"), [
    # ORQA: NFD first, so both spellings of é are one answer
    ("orqa", DECOMPOSED, [COMPOSED], True),
    ("orqa", "The Beatles!", ["beatles"], True),
    ("orqa", "the beatles band", ["beatles"], False),
    # SQuAD (and DPR): no NFD, so the spellings differ; the rest is the same
    ("squad", DECOMPOSED, [COMPOSED], False),
    ("squad", COMPOSED, [COMPOSED], True),
    ("dpr", "An apple.", ["apple"], True),
    # containment: the normalized gold is a substring of the normalized prediction
    ("containment", "the beatles band", ["beatles"], True),
    ("containment", "in 1990", ["1"], True),  # matches inside a word, as published
    ("containment", "beatle", ["beatles"], False),
    ("containment", DECOMPOSED, [COMPOSED], False),  # no NFD either
])
def test_rules(name, prediction, answers, expected):
    assert (get_convention(name).match(prediction, answers) is not None) is expected


def test_aliases_share_the_rule_and_name():
    assert get_convention("dpr") is get_convention("squad")
    assert get_convention("official").name == "orqa"
    with pytest.raises(InputError, match="best-subspan-em, containment, dpr-tokens, "
                       "equiv, lm-eval-v3, lm-eval-v4, orqa, qa-metrics, squad, dpr, "
                       "flashrag-em, official, oqaeval"):
        get_convention("loose")


def test_explain_counts_and_disagreements():
    items = [
        ("q1", "Beatles", ["The Beatles"]),  # the first four correct
        ("q2", DECOMPOSED, [COMPOSED]),  # orqa only
        ("q3", "the beatles band", ["beatles"]),  # containment only
        ("q4", "wrong", ["right"]),  # none
        ("q5", None, ["x"]),  # missing: wrong everywhere
    ]
    # every convention, by hand: dpr-tokens wants the whole token run "the beatles" (q1
    # wrong) and applies NFD (q2 right); lm-eval-v3 deletes each "a" but not "The "
    every = explain_conventions(items)
    assert every.names == ("best-subspan-em", "containment", "dpr-tokens", "lm-eval-v3",
                           "lm-eval-v4", "orqa", "qa-metrics", "squad")
    assert every.num_correct == {"best-subspan-em": 2, "containment": 2, "dpr-tokens": 2,
                                 "lm-eval-v3": 0, "lm-eval-v4": 1, "orqa": 2,
                                 "qa-metrics": 2, "squad": 1}
    assert [d.question for d in every.disagreements] == ["q1", "q2", "q3"]
    t = explain_conventions(items, ["containment", "lm-eval-v4", "orqa", "squad"])
    assert t.names == ("containment", "lm-eval-v4", "orqa", "squad")
    assert t.num_total == 5
    # lm-eval-v4 by hand: no NFD (q2 wrong), "the " deleted but "band" stays (q3 wrong)
    assert t.num_correct == {"containment": 2, "lm-eval-v4": 1, "orqa": 2, "squad": 1}
    assert t.accuracy("squad") == 0.2
    assert [d.question for d in t.disagreements] == ["q2", "q3"]
    assert t.disagreements[0].correct == {"containment": False, "lm-eval-v4": False,
                                          "orqa": True, "squad": False}


def _files(tmp_path):
    import json

    refs = [("q1", ["The Beatles"]), ("q2", [COMPOSED]), ("q3", ["beatles"]), ("q4", ["right"])]
    preds = [("q1", "Beatles"), ("q2", DECOMPOSED), ("q3", "the beatles band"), ("q4", "wrong")]
    r, p = tmp_path / "refs.jsonl", tmp_path / "preds.jsonl"
    r.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in refs))
    p.write_text("".join(json.dumps({"question": q, "prediction": x}) + "\n" for q, x in preds))
    return str(r), str(p)


@pytest.mark.parametrize(("convention", "correct", "match"), [
    # by hand from the rules above: q1 for all; q2 only with NFD; q3 only by containment
    ("orqa", 2, "em-nfd"), ("squad", 1, "em-squad"), ("dpr", 1, "em-squad"),
    ("containment", 2, "em-containment"),
])
def test_cli_convention_is_scored_and_signed(tmp_path, capsys, convention, correct, match):
    import json

    from nqkit.cli import main

    refs, preds = _files(tmp_path)
    assert main(["eval", "nq-open", "--gold", refs, "--predictions", preds,
                 "--convention", convention, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["num_correct"], out["accuracy"]) == (correct, correct / 4)
    assert f"|match:{match}|" in out["signature"]


def test_cli_explain_table(tmp_path, capsys):
    from nqkit.cli import main

    refs, preds = _files(tmp_path)
    assert main(["eval", "nq-open", "--gold", refs, "--predictions", preds,
                 "--explain"]) == 0
    out = capsys.readouterr().out
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert "containment 0.5000 2/4 1.0000" in lines
    assert "lm-eval-v4 0.2500 1/4 1.0000" in lines
    assert "orqa 0.5000 2/4 1.0000" in lines
    assert "squad 0.2500 1/4 1.0000" in lines  # last column: every gold creditable
    assert "questions where the conventions disagree (3; the first 3 shown)" in lines
    # columns: best-subspan-em containment dpr-tokens lm-eval-v3 lm-eval-v4 orqa
    # qa-metrics squad
    assert any(line.startswith("q1 ") and line.endswith("yes yes no no yes yes yes yes")
               for line in lines)
    assert any(line.startswith("q2 ") and line.endswith("no no yes no no yes no no")
               for line in lines)
    assert any(line.startswith("q3 ") and line.endswith("yes yes yes no no no yes no")
               for line in lines)


def test_cli_unknown_convention_and_regex(tmp_path, capsys):
    from nqkit.cli import main

    refs, preds = _files(tmp_path)
    assert main(["eval", "nq-open", "--gold", refs, "--predictions", preds,
                 "--convention", "loose"]) == 2
    assert "unknown exact-match convention 'loose'" in capsys.readouterr().err
    assert main(["eval", "nq-open", "--gold", refs, "--predictions", preds,
                 "--convention", "squad", "--regex"]) == 2
    assert "no 'squad' exact-match rule" in capsys.readouterr().err


def test_gap_causes_put_each_difference_down_to_one_step():
    # by hand from the rules: containment credits the longer answers (matching: "the
    # beatles band" holds "beatles", "paris france" holds "paris"); lm-eval's
    # stops cut "Paris, France" to a hit and "Washington, D.C." to a miss (extraction);
    # it keeps a double space that orqa collapses (normalization)
    from nqkit.metrics.em_conventions import gap_causes

    items = [("q1", "the Beatles band", ["Beatles"]), ("q2", "Paris, France", ["Paris"]),
             ("q3", "Washington, D.C.", ["Washington, D.C."]),
             ("q4", "New  York", ["New York"]), ("q5", None, ["x"]), ("q6", "x", ["x"])]
    orqa = get_convention("orqa")
    c = gap_causes(orqa, get_convention("containment"), items)
    assert (c.gained, c.lost, c.net) == ({"normalization": 0, "matching": 2, "extraction": 0},
                                         dict.fromkeys(("normalization", "matching",
                                                        "extraction"), 0), 2)
    assert c.examples["matching"] == ["q1", "q2"]
    c = gap_causes(orqa, get_convention("lm-eval-v4"), items)
    assert c.gained == {"normalization": 0, "matching": 0, "extraction": 1}
    assert c.lost == {"normalization": 1, "matching": 0, "extraction": 1}
    assert c.examples == {"normalization": ["q4"], "matching": [], "extraction": ["q2", "q3"]}


def test_gap_causes_add_up_to_the_gap_on_a_released_system(capsys):
    from nqkit.cli import main

    gold = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = shared_file("golden", "nq-open", "mixed.predictions.jsonl")
    assert main(["eval", "nq-open", "--gold", str(gold), "--predictions", str(preds),
                 "--allow-missing", "--explain", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    mine = got["conventions"]["orqa"]["num_correct"]
    assert set(got["gap_causes"]) == set(got["conventions"]) - {"orqa"}
    for name, causes in got["gap_causes"].items():
        assert causes["net"] == got["conventions"][name]["num_correct"] - mine, name
        assert causes["net"] == sum(causes["gained"].values()) - sum(causes["lost"].values())
    assert got["gap_causes"]["lm-eval-v4"]["lost"]["extraction"] > 0


def test_verdicts_are_creditable_and_match_in_one_pass():
    # EmConvention.verdicts (what --explain asks of every question) normalizes the gold
    # answers once for both questions it answers; it must answer them as the two methods
    # do, under every rule, on hard strings and real released answers, a missing
    # prediction included
    from nqkit.conventions import convention_names

    from em_strings import hard, released

    pairs = hard()[:4000] + released()[:4000]
    for name in convention_names():
        rule = get_convention(name)
        for prediction, answers in pairs:
            assert rule.verdicts(prediction, answers) == (
                rule.creditable(answers), rule.match(prediction, answers) is not None), \
                (name, prediction, answers)
        assert rule.verdicts(None, pairs[0][1]) == (rule.creditable(pairs[0][1]), False)
