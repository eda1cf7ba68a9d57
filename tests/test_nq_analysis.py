"""Breakdowns, bootstrap intervals and the PR curve of ``nqkit eval nq``."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nqkit.cli import main
from nqkit.data.toy import TOY_PATH
from nqkit.metrics.nq import AnswerStat, sweep
from nqkit.metrics.nq_analysis import _best_f1_batch, question_word


def _demo_predictions(tmp_path):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    return tmp_path / "first_paragraph.predictions.json"


def test_breakdown_of_the_demo_derived_by_hand(tmp_path, capsys):
    """First paragraph on the toy pages (all scores 1.0, so everything is predicted):
    gold types by majority — 101, 102, 103, 106 paragraph; 104 list item (3 of 4);
    105 table row; 107 null (one annotator). Only 104 is correct (annotator 4 chose
    Google's first paragraph)."""
    preds = _demo_predictions(tmp_path)
    capsys.readouterr()
    assert main(["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(preds),
                 "--breakdown", "--format", "json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {g["group"]: g for g in out["breakdown"]["by_long_answer_type"]["long"]}
    got = {k: (v["examples"], v["gold"], v["predicted"], v["correct"]) for k, v in rows.items()}
    assert got == {"paragraph": (4, 4, 4, 0), "list item": (1, 1, 1, 1),
                   "table row": (1, 1, 1, 0), "null": (1, 0, 1, 0), "all": (7, 6, 7, 1)}
    words = {g["group"]: g["examples"] for g in out["breakdown"]["by_question_word"]["long"]}
    assert words == {"who": 3, "when": 1, "what": 2, "other": 1, "all": 7}


def test_question_word():
    assert question_word("did larry page co-found google") == "other"
    assert question_word("the song that goes who let the dogs out") == "who"
    assert question_word("Where did they film it") == "where"


def test_bootstrap_is_reproducible_and_degenerate_cases_are_exact(tmp_path, capsys):
    preds = _demo_predictions(tmp_path)
    args = ["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(preds),
            "--bootstrap", "200", "--seed", "3", "--format", "json", "--no-cache"]
    capsys.readouterr()
    main(args)
    a = json.loads(capsys.readouterr().out)["bootstrap"]
    main(args)
    b = json.loads(capsys.readouterr().out)["bootstrap"]
    assert a == b
    low, high = a["long-best-threshold-f1"]
    assert 0.0 <= low <= 2 / 13 <= high <= 1.0
    # no short answer is ever predicted: every resample scores 0
    assert a["short-best-threshold-f1"] == [0.0, 0.0]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans(), st.integers(0, 5)),
                min_size=1, max_size=30))
def test_vectorised_sweep_equals_the_official_sweep(rows):
    """The bootstrap's numpy sweep with unit weights is the official sweep."""
    stats = [AnswerStat(g, p, g and p and c, float(s)) for g, p, c, s in rows]
    got = _best_f1_batch(stats, np.ones((1, len(stats))))[0]
    assert abs(got - sweep(stats).best_f1) < 1e-12


def test_pr_curve_is_a_png(tmp_path, capsys):
    preds = _demo_predictions(tmp_path)
    png = tmp_path / "pr.png"
    assert main(["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(preds),
                 "--pr-curve", str(png), "--no-cache"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
