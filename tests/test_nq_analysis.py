"""Breakdowns, bootstrap intervals and the PR curve of ``nqkit eval nq``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nqkit.analysis.nq_breakdown import best_f1_stacks, question_word, stat_rows
from nqkit.cli import main
from nqkit.data.toy import TOY_PATH
from nqkit.metrics.nq import AnswerStat, Sweep, sweep

from conftest import shared_file


def _demo_predictions(tmp_path):
    assert main(["demo", "-o", str(tmp_path)]) == 0
    return tmp_path / "first_paragraph.predictions.json"


def test_breakdown_of_the_demo_derived_by_hand(tmp_path, capsys):
    """First paragraph on the toy pages (all scores 1.0, so everything is predicted):
    gold types by majority — 101, 102, 103, 106 paragraph; 104 list item (3 of 4);
    105 table row; 107 null (one annotator). Only 104 is correct (annotator 4 chose
    Google's first paragraph)."""
    preds = _demo_predictions(tmp_path)
    capsys.readouterr()
    assert main(["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(preds),
                 "--breakdown", "--format", "json", "--no-gold-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {g["group"]: g for g in out["breakdown"]["by_long_answer_type"]["long"]}
    got = {k: (v["examples"], v["gold"], v["predicted"], v["correct"]) for k, v in rows.items()}
    assert got == {"paragraph": (4, 4, 4, 0), "list item": (1, 1, 1, 1),
                   "table row": (1, 1, 1, 0), "null": (1, 0, 1, 0), "all": (7, 6, 7, 1)}
    # precision, recall, F1 by hand: list item 1/1, 1/1 -> 1; the others 0 correct -> 0;
    # null has no gold answer, so its recall and F1 are undefined (None, shown as "-");
    # all: P = 1/7, R = 1/6, F1 = 2/13
    prf = {k: (v["precision"], v["recall"], v["f1"]) for k, v in rows.items()}
    assert prf == {"paragraph": (0.0, 0.0, 0.0), "list item": (1.0, 1.0, 1.0),
                   "table row": (0.0, 0.0, 0.0), "null": (0.0, None, None),
                   "all": pytest.approx((1 / 7, 1 / 6, 2 / 13))}
    words = {g["group"]: g["examples"] for g in out["breakdown"]["by_question_word"]["long"]}
    assert words == {"who": 3, "when": 1, "what": 2, "other": 1, "all": 7}


def test_group_labels_must_align_with_the_examples():
    # one label per scored example: a shorter list would silently drop examples from "all"
    from nqkit.analysis.nq_breakdown import group_scores
    from nqkit.formats.nq import Annotation, Span
    from nqkit.formats.nq_predictions import NqPrediction
    from nqkit.metrics.nq import evaluate_nq

    a = Annotation(0, Span(-1, -1, 1, 5), 0, (), "NONE")
    r = evaluate_nq({1: (a,) * 5, 2: (a,) * 5},
                    {i: NqPrediction(i, Span(-1, -1, 1, 5), 1.0, (), 0.0, "NONE") for i in (1, 2)})
    rows = group_scores(r, ["x", "y"])
    assert [(g.group, g.examples, g.correct) for g in rows] == [("x", 1, 1), ("y", 1, 1),
                                                                ("all", 2, 2)]
    with pytest.raises(ValueError):
        group_scores(r, ["x"])


def test_question_word():
    assert question_word("did larry page co-found google") == "other"
    assert question_word("the song that goes who let the dogs out") == "who"
    assert question_word("Where did they film it") == "where"


def test_bootstrap_is_reproducible_and_degenerate_cases_are_exact(tmp_path, capsys):
    preds = _demo_predictions(tmp_path)
    args = ["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(preds),
            "--resamples", "200", "--seed", "3", "--format", "json", "--no-gold-cache"]
    capsys.readouterr()
    main(args)
    a = json.loads(capsys.readouterr().out)["bootstrap"]
    main(args)
    b = json.loads(capsys.readouterr().out)["bootstrap"]
    assert a == b
    # Independently: the same resamples (numpy's generator, seeded, 200 draws of 7
    # example indices), each scored by the brute-force best F1 of the toy's long-answer
    # outcomes derived by hand (see the breakdown test: all 7 predicted, 6 with a gold
    # long answer, only example 104 — the 4th — correct, every score 1.0).
    toy = [AnswerStat(gold_has_answer=g, pred_has_answer=True, is_correct=c, score=1.0)
           for g, c in [(True, False), (True, False), (True, False), (True, True),
                        (True, False), (True, False), (False, False)]]
    idx = np.random.default_rng(3).integers(0, 7, size=(200, 7))
    f1s = [_brute_force_best_f1([toy[i] for i in row]) for row in idx]
    assert a["long-best-threshold-f1"] == pytest.approx(
        np.percentile(f1s, [2.5, 97.5]).tolist(), abs=1e-12)
    assert _brute_force_best_f1(toy) == pytest.approx(2 / 13)  # P 1/7, R 1/6
    # no short answer is ever predicted: every resample scores 0
    assert a["short-best-threshold-f1"] == [0.0, 0.0]


def _brute_force_best_f1(stats) -> float:
    """Best F1 over thresholds, from the definition: at threshold t the examples with
    score >= t are answered; P = correct / answered-with-an-answer, R = correct / gold."""
    gold = sum(s.gold_has_answer for s in stats)
    best = 0.0
    for t in {s.score for s in stats}:
        kept = [s for s in stats if s.score >= t]
        correct = sum(s.is_correct for s in kept)
        predicted = sum(s.pred_has_answer for s in kept)
        p = correct / predicted if predicted else 0.0
        r = correct / gold if gold else 0.0
        if p + r > 0:
            best = max(best, 2 * p * r / (p + r))
    return best


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans(), st.integers(0, 5)),
                min_size=1, max_size=30),
       st.lists(st.integers(0, 3), min_size=30, max_size=30))
def test_vectorised_sweep_equals_a_brute_force_sweep(rows, weights):
    """The bootstrap's numpy sweep equals the definition, with unit weights and with
    integer weights (a resample: each example repeated as often as it was drawn)."""
    stats = [AnswerStat(g, p, g and p and c, float(s)) for g, p, c, s in rows]
    repeated = [s for s, k in zip(stats, weights, strict=False) for _ in range(k)]
    got = [best_f1_stacks(stat_rows(stats)[None])[0],
           best_f1_stacks(stat_rows(repeated)[None])[0] if repeated else 0.0]
    assert got[0] == pytest.approx(_brute_force_best_f1(stats), abs=1e-12)
    assert got[1] == pytest.approx(_brute_force_best_f1(repeated), abs=1e-12)
    assert sweep(stats).best_f1 == pytest.approx(got[0], abs=1e-12)


def test_pr_curve_is_a_png(tmp_path, capsys):
    preds = _demo_predictions(tmp_path)
    png = tmp_path / "pr.png"
    assert main(["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(preds),
                 "--pr-curve", str(png), "--no-gold-cache"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _png_size(png: bytes) -> tuple[int, int]:
    # PNG: the 8-byte signature, then the IHDR chunk (length, "IHDR", width, height)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


# A long-answer sweep by hand: scores 3 and 2 are thresholds, -inf is the "predict
# everything" end of the sweep (not a point of the picture); the short one has no finite
# threshold at all, so it draws nothing.
_CURVES = {
    "long": Sweep(thresholds=(3.0, 2.0, float("-inf")), precision=(1.0, 0.5, 0.4),
                  recall=(0.25, 0.5, 1.0), best_f1=0.5, best_precision=0.5, best_recall=0.5,
                  best_threshold=2.0),
    "short": Sweep(thresholds=(float("-inf"),), precision=(0.0,), recall=(0.0,), best_f1=0.0,
                   best_precision=0.0, best_recall=0.0, best_threshold=float("-inf")),
}


def test_pr_curve_figure_draws_the_finite_points_and_marks_the_best():
    from nqkit.analysis.plots import pr_curve_figure, pr_curve_png

    fig = pr_curve_figure(_CURVES, "T")
    (ax,) = fig.axes
    (line,) = ax.get_lines()  # the short curve has no point to draw
    assert (tuple(line.get_xdata()), tuple(line.get_ydata())) == ((0.25, 0.5), (1.0, 0.5))
    assert (line.get_label(), line.get_marker(), line.get_markersize()) == (
        "long answer", ".", 3)
    (best,) = ax.collections
    assert best.get_offsets().tolist() == [[0.5, 0.5]]
    assert best.get_zorder() > line.get_zorder()  # the best point is drawn over the curves
    (label,) = ax.texts
    assert (label.get_text(), label.get_fontsize(), label.xyann) == ("F1 0.500 @ 2", 8, (6, 6))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["long answer"]
    assert (ax.get_xlim(), ax.get_ylim(), ax.get_title()) == ((0, 1.02), (0, 1.05), "T")
    # 6.4 x 4.8 inches at 110 dpi
    assert _png_size(pr_curve_png(_CURVES, "T")) == (704, 528)


def test_pr_curve_leaves_out_thresholds_that_predict_nothing():
    from nqkit.analysis.plots import curve_points, pr_curve_figure

    # By hand: at 5 and 4 only null answers are above the threshold (0 predicted, the
    # official 0/0 = 0), at 3 one wrong answer (a real point at (0, 0)), then a right one.
    s = Sweep(thresholds=(5.0, 4.0, 3.0, 2.0, float("-inf")),
              precision=(0.0, 0.0, 0.0, 0.5, 0.4), recall=(0.0, 0.0, 0.0, 0.5, 1.0),
              best_f1=0.5, best_precision=0.5, best_recall=0.5, best_threshold=2.0,
              predicted=(0, 0, 1, 2, 5))
    assert curve_points(s) == [(0.0, 0.0), (0.5, 0.5)]
    for thumbnail in (False, True):
        (line,) = pr_curve_figure({"long": s}, "T", thumbnail=thumbnail).axes[0].get_lines()
        assert list(zip(line.get_xdata(), line.get_ydata(), strict=True)) == [(0, 0), (0.5, 0.5)]


def test_pr_curves_of_the_real_sample_start_at_the_first_predicted_answer():
    from nqkit.analysis.plots import pr_curve_figure
    from nqkit.tasks.nq import evaluate_files

    # annotator0.predictions.json, by hand: long scores 9-5 and short scores 10-7 belong
    # to null answers (nothing predicted above them); the first long answer (score 4,
    # Deadpool) is right with 4 gold long answers: (recall 0.25, precision 1); the Nobel one
    # (score 2) makes it (0.5, 1). The first short answer (score 6) is right with 2 gold
    # short answers: (0.5, 1), and nothing changes below it.
    r, _ = evaluate_files(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz"),
                          str(shared_file("golden", "nq-eval", "annotator0.predictions.json")),
                          cache=False)
    assert r.long.thresholds[:5] == (9.0, 8.0, 7.0, 6.0, 5.0) and r.long.precision[0] == 0.0
    for thumbnail in (False, True):
        fig = pr_curve_figure({"long": r.long, "short": r.short}, thumbnail=thumbnail)
        long_line, short_line = fig.axes[0].get_lines()
        assert list(zip(long_line.get_xdata(), long_line.get_ydata(), strict=True)) == \
            [(0.25, 1.0), (0.25, 1.0), (0.5, 1.0), (0.5, 1.0), (0.5, 1.0)]
        assert list(zip(short_line.get_xdata(), short_line.get_ydata(), strict=True)) == \
            [(0.5, 1.0)] * 6


def test_pr_curve_thumbnail_is_drawn_at_twice_its_shown_size():
    from nqkit.analysis.plots import pr_curve_figure, pr_curve_png

    fig = pr_curve_figure(_CURVES, "T", thumbnail=True)
    (ax,) = fig.axes
    # 4 x 3 inches at 200 dpi, shown at 400 x 300 CSS pixels by the browser's index page
    assert _png_size(pr_curve_png(_CURVES, "T", thumbnail=True)) == (800, 600)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "0.25", "0.5", "0.75", "1"]
    assert ax.get_xticklabels()[0].get_fontsize() == 11
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["long: F1 0.500 @ 2"]
    assert len(ax.texts) == 0  # no label at the point: it is in the legend


def test_bootstrap_defaults_to_seed_0(tmp_path, capsys):
    preds = _demo_predictions(tmp_path)
    base = ["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(preds),
            "--resamples", "300", "--format", "json", "--no-gold-cache"]
    capsys.readouterr()
    main(base)
    default = json.loads(capsys.readouterr().out)["bootstrap"]
    main([*base, "--seed", "0"])
    assert json.loads(capsys.readouterr().out)["bootstrap"] == default
    assert (default["resamples"], default["seed"], default["confidence"]) == (300, 0, 0.95)
