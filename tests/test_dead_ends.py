"""No silent zeros: inputs whose numbers cannot mean anything are refused with the reason
and the fix (exit 2, one line); numbers that are right but say little carry a warning
(stderr, JSON ``warnings``) and a ``warn:`` mark in the signature, and never change.

Each case is pinned at the CLI (``nqkit.cli.main``) and at the library level. Expected
numbers come from the official outputs in ``shared/golden`` or are derived by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from nqkit.cli import main
from nqkit.data.toy import TOY_PATH
from nqkit.errors import InputError, for_example
from nqkit.formats.ambignq import AmbigNqExample, AmbigQaPrediction, SingleAnswer
from nqkit.formats.dpr import DprContext, DprResult
from nqkit.formats.nq import NULL_SPAN, Annotation, Span
from nqkit.formats.nq_gold import GoldExample, read_nq_gold
from nqkit.formats.nq_open import NqOpenExample, NqOpenPrediction
from nqkit.formats.nq_predictions import NqPrediction, read_nq_predictions
from nqkit.metrics.ambigqa import score_ambigqa
from nqkit.metrics.answer_recall import score_answer_recall
from nqkit.metrics.human import human_bounds
from nqkit.metrics.nq import evaluate_nq
from nqkit.metrics.nq_open import score_nq_open
from nqkit.metrics.ranking import RankTargets
from nqkit.signature import ResultWarning, mark_signature

from conftest import shared_file


def dev_gold() -> Path:
    return shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")


def test_a_signature_carries_one_warning_mark():
    # a task's own warning, then one added later (bootstrap intervals): one mark, in order
    a, b = ResultWarning("all-null", "x"), ResultWarning("few-items", "y")
    once = mark_signature("nq|long-thr:2|v0.1.0", [a])
    assert once == "nq|long-thr:2|warn:all-null|v0.1.0"
    assert mark_signature(once, [b, a]) == "nq|long-thr:2|warn:all-null+few-items|v0.1.0"
    assert mark_signature(once, []) == once


def simplified_dev() -> Path:
    return shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl")


def simplified_train() -> Path:
    return shared_file("data", "nq", "simplified-nq-train-sample10.jsonl")


def golden(*parts: str) -> Path:
    return shared_file("golden", *parts)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(code: int, out: str, err: str) -> str:
    """The one error line of a refusal (exit 2, nothing on stdout, no traceback)."""
    assert code == 2, (out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nqkit: error: "), err
    return lines[0].removeprefix("nqkit: error: ")


def warning_lines(err: str) -> list[str]:
    return [line.removeprefix("nqkit: warning: ") for line in err.splitlines()
            if line.startswith("nqkit: warning: ")]


def eval_nq(capsys, gold, preds, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "eval", "nq", "--gold", str(gold), "--predictions", str(preds),
               "--no-gold-cache", *extra)


def write_nq_preds(path: Path, preds: list[dict]) -> Path:
    path.write_text(json.dumps({"predictions": preds}))
    return path


def null_pred(ex_id) -> dict:
    return {"example_id": ex_id, "long_answer": None, "long_answer_score": 0.0,
            "short_answers": [], "short_answers_score": 0.0, "yes_no_answer": "NONE"}


# ------------------------------------------------------------------ the message helper

def test_message_lists_are_a_count_and_three_examples():
    assert for_example(range(100)) == "e.g. 0, 1, 2"
    assert for_example(["a"]) == "e.g. a"
    gold = {i: GoldExample(i, (), "q") for i in range(10)}
    preds = {i: NqPrediction(i, NULL_SPAN, 0.0, (), 0.0, "NONE") for i in range(3, 100)}
    with pytest.raises(InputError) as e:
        evaluate_nq(gold, preds)
    assert e.value.message == ("90 predicted example ids are not in the gold data "
                               "(e.g. 10, 11, 12) — check that the gold files match the "
                               "predictions, or pass --allow-extra")


# ----------------------------------------------------- NQ: spans of a kind the gold lacks

BYTE_ONLY_VS_TOKEN_GOLD = (
    "2 long-answer predictions have only byte offsets, but the gold has token offsets only "
    "(the simplified format), so they could never match (e.g. 5225754983651766092, "
    "8851020722386421469) — use the original-format gold nq-dev-*.jsonl.gz, which has byte "
    "offsets, or give token offsets in the predictions")


def test_byte_only_predictions_against_token_only_gold_are_refused(capsys):
    # mixed0 gives its two right long answers (examples 5225754983651766092 and
    # 8851020722386421469) by bytes only; against the simplified gold they would be
    # scored wrong and the long F1 would read 0 instead of the official 0.6667.
    preds = golden("nq-eval", "mixed0.predictions.json")
    msg = refused(*eval_nq(capsys, simplified_dev(), preds))
    assert msg == f"{preds}: {BYTE_ONLY_VS_TOKEN_GOLD}"
    with pytest.raises(InputError) as e:
        evaluate_nq(read_nq_gold(simplified_dev(), workers=1), read_nq_predictions(preds))
    assert e.value.problem + " — " + e.value.fix == BYTE_ONLY_VS_TOKEN_GOLD


def test_the_same_predictions_against_the_original_gold_give_the_official_number(capsys):
    preds = golden("nq-eval", "mixed0.predictions.json")
    official = json.loads(golden("nq-eval", "mixed0.official.json").read_text())
    code, out, err = eval_nq(capsys, dev_gold(), preds, "--format", "json")
    assert code == 0 and warning_lines(err) == []
    got = json.loads(out)
    assert "warnings" not in got
    assert math.isclose(got["long-best-threshold-f1"], official["long-best-threshold-f1"],
                        abs_tol=1e-9)
    assert round(got["long-best-threshold-f1"], 4) == 0.6667


def test_token_only_predictions_against_byte_only_gold_are_refused():
    # Gold with byte offsets only (tokens -1): a token-only prediction of the same answer
    # could never match it.
    gold = {7: tuple(Annotation(0, Span(100, 200, -1, -1), 0, (), "NONE") for _ in range(5))}
    right_by_tokens = NqPrediction(7, Span(-1, -1, 10, 20), 1.0, (), 0.0, "NONE")
    with pytest.raises(InputError) as e:
        evaluate_nq(gold, {7: right_by_tokens}, where="p.json")
    assert e.value.message == (
        "p.json: 1 long-answer prediction has only token offsets, but the gold has byte "
        "offsets only, so they could never match (e.g. 7) — give byte offsets in the "
        "predictions, or use gold with token offsets (the original or simplified NQ files)")
    # with both kinds of offsets the prediction is comparable (here: wrong by bytes)
    both = NqPrediction(7, Span(300, 400, 10, 20), 1.0, (), 0.0, "NONE")
    assert evaluate_nq(gold, {7: both}).metrics["long-best-threshold-f1"] == 0.0


def test_short_spans_of_the_wrong_kind_are_refused_too():
    short = Span(-1, -1, 3, 4)
    gold = {1: tuple(Annotation(0, Span(-1, -1, 1, 9), 0, (short,), "NONE") for _ in range(5))}
    pred = NqPrediction(1, Span(-1, -1, 1, 9), 1.0, (Span(30, 40, -1, -1),), 1.0, "NONE")
    with pytest.raises(InputError, match=r"^1 short-answer prediction has only byte offsets"):
        evaluate_nq(gold, {1: pred})


# ------------------------------------------------------- NQ: ids that match no gold example

def test_predictions_of_another_split_are_refused_even_when_missing_is_allowed(capsys, tmp_path):
    # --allow-missing --allow-extra would otherwise score every gold example as null: 0.
    preds = write_nq_preds(tmp_path / "p.json", [null_pred(i) for i in (11, 12, 13, 14)])
    msg = refused(*eval_nq(capsys, dev_gold(), preds, "--allow-missing", "--allow-extra"))
    assert msg == (f"{preds}: none of the 4 predicted example ids is in the gold data "
                   "(e.g. 11, 12, 13), so every example would be scored as null — score the "
                   "predictions against the gold of the split they were made for")
    gold = read_nq_gold(dev_gold(), workers=1)
    with pytest.raises(InputError, match="none of the 4 predicted example ids"):
        evaluate_nq(gold, read_nq_predictions(preds), missing="null", allow_extra=True)


# ------------------------------------------------------------ NQ: all predictions null

def test_all_null_predictions_keep_the_official_zeros_and_warn(capsys):
    preds = golden("nq-eval", "all_null.predictions.json")
    official = json.loads(golden("nq-eval", "all_null.official.json").read_text())
    code, out, err = eval_nq(capsys, dev_gold(), preds, "--format", "json")
    assert code == 0
    message = ("all 10 predictions are null (no long answer, no short answer, no yes/no "
               "answer), so every F1 is 0 — check that the system wrote its answers")
    assert warning_lines(err) == [message]
    got = json.loads(out)
    assert next(iter(got)) == "warnings"
    assert got["warnings"] == [{"code": "all-null", "message": message}]
    assert got["signature"].startswith("nq|long-thr:2|short-thr:2|missing:error|warn:all-null|v")
    for key, value in official.items():
        assert got[key] == value, key
    lib = evaluate_nq(read_nq_gold(dev_gold(), workers=1), read_nq_predictions(preds))
    assert [w.code for w in lib.warnings] == ["all-null"]
    assert lib.metrics == official


def test_a_task_without_any_prediction_is_flagged(capsys, tmp_path):
    # Long answers only (first paragraph on the toy pages): the short F1 is 0 by design.
    assert main(["demo", "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    code, out, err = eval_nq(capsys, TOY_PATH, tmp_path / "first_paragraph.predictions.json")
    assert code == 0
    assert warning_lines(err) == ["none of the 7 predictions has a short answer, so "
                                  "short-answer F1 is 0"]
    assert "|warn:null-short|v" in out


# ------------------------------------------------------- NQ: thresholds out of reach

TRAIN_REFUSAL = ("this gold has 1 annotation per example, so --long-threshold 2 and "
                 "--short-threshold 2 can never be reached and every F1 would be 0 — pass "
                 "--long-threshold 1 --short-threshold 1")


def test_one_way_train_gold_with_the_official_threshold_is_refused(capsys, tmp_path):
    preds = write_nq_preds(tmp_path / "p.json", [
        null_pred(json.loads(line)["example_id"])
        for line in simplified_train().read_text().splitlines()])
    msg = refused(*eval_nq(capsys, simplified_train(), preds))
    assert msg == f"{simplified_train()}: {TRAIN_REFUSAL}"
    gold = read_nq_gold(simplified_train(), workers=1)
    with pytest.raises(InputError) as e:
        evaluate_nq(gold, read_nq_predictions(preds))
    assert e.value.problem + " — " + e.value.fix == TRAIN_REFUSAL


def test_a_threshold_above_five_on_five_way_gold_is_refused(capsys):
    preds = golden("nq-eval", "annotator0.predictions.json")
    msg = refused(*eval_nq(capsys, dev_gold(), preds, "--long-threshold", "6"))
    assert msg == (f"{dev_gold()}: this gold has 5 annotations per example, so "
                   "--long-threshold 6 can never be reached and every F1 would be 0 — pass "
                   "thresholds of at most 5 (the official value is 2, for 5-way gold)")


def test_examples_with_too_few_annotations_are_flagged():
    a = Annotation(0, Span(-1, -1, 1, 5), 0, (), "NONE")
    gold = {1: (a,) * 5, 2: (a,)}  # example 2 can never reach 2 of its 1 annotation
    pred = {i: NqPrediction(i, Span(-1, -1, 1, 5), 1.0, (), 0.0, "NONE") for i in (1, 2)}
    r = evaluate_nq(gold, pred)
    assert [w.code for w in r.warnings] == ["few-annotations", "no-gold-short", "null-short"]
    assert r.warnings[0].message.startswith(
        "1 of 2 gold examples have fewer than 2 annotations (e.g. 2), so they can never")
    # the number itself is unchanged: 1 correct of 2 predicted, 1 gold -> P 1/2, R 1, F1 2/3
    assert math.isclose(r.metrics["long-best-threshold-f1"], 2 / 3)


def first_paragraph_oracle(path: Path) -> tuple[int, int, int]:
    """(correct, predicted, gold) of the first <P> candidate on 1-way simplified data."""
    correct = predicted = gold = 0
    for line in path.read_text().splitlines():
        ex = json.loads(line)
        words = ex["document_text"].split(" ")
        first = next((c for c in ex["long_answer_candidates"]
                      if words[c["start_token"]] == "<P>"), None)
        la = ex["annotations"][0]["long_answer"]
        gold += la["start_token"] >= 0
        if first is not None:
            predicted += 1
            correct += (la["start_token"], la["end_token"]) == (first["start_token"],
                                                                first["end_token"])
    return correct, predicted, gold


def test_baseline_eval_on_train_is_refused_before_predicting(capsys, tmp_path):
    out_file = tmp_path / "x.json"
    msg = refused(*run(capsys, "baseline", "first_paragraph", "--gold",
                       str(simplified_train()), "-o", str(out_file), "--eval"))
    assert msg == f"{simplified_train()}: {TRAIN_REFUSAL}"
    assert not out_file.exists()


def test_baseline_eval_takes_the_thresholds_of_eval_nq(capsys, tmp_path):
    out_file = tmp_path / "x.json"
    code, out, err = run(capsys, "baseline", "first_paragraph", "--gold",
                         str(simplified_train()), "-o", str(out_file), "--eval",
                         "--long-threshold", "1", "--short-threshold", "1")
    assert code == 0
    c, p, g = first_paragraph_oracle(simplified_train())
    precision, recall = c / p, c / g
    f1 = 2 * precision * recall / (precision + recall)
    row = next(line for line in out.splitlines() if line.startswith("long answer"))
    assert row.split()[2:5] == [f"{f1:.4f}", f"{precision:.4f}", f"{recall:.4f}"]
    assert "signature: nq|long-thr:1|short-thr:1|missing:error|warn:null-short|v" in out
    assert warning_lines(err) == ["none of the 10 predictions has a short answer, so "
                                  "short-answer F1 is 0"]


# --------------------------------------------------------- NQ: gold without answers

def _dev_subset(keep) -> dict:
    gold = read_nq_gold(dev_gold(), workers=1)
    return {i: g for i, g in gold.items() if keep(g.annotations)}


def test_gold_without_any_answer_is_refused():
    # Counted by hand from the annotations: fewer than 2 non-null long and short answers.
    gold = _dev_subset(lambda anns: sum(not a.long_answer.is_null for a in anns) < 2
                       and sum(bool(a.short_answers) or a.yes_no_answer != "NONE"
                               for a in anns) < 2)
    assert len(gold) == 6
    preds = {i: NqPrediction(i, NULL_SPAN, 0.0, (), 0.0, "NONE") for i in gold}
    with pytest.raises(InputError) as e:
        evaluate_nq(gold, preds, gold_where="g.jsonl")
    assert e.value.message == (
        "g.jsonl: none of the 6 gold examples has a long answer (>= 2 annotators) or a short "
        "answer (>= 2), so every recall and F1 would be 0 whatever the predictions — score "
        "on gold examples that have answers (e.g. a whole NQ dev shard)")


def test_gold_without_short_answers_warns_for_short_only():
    gold = _dev_subset(lambda anns: sum(bool(a.short_answers) or a.yes_no_answer != "NONE"
                                        for a in anns) < 2)
    assert len(gold) == 8
    preds = read_nq_predictions(golden("nq-eval", "mixed0.predictions.json"))
    r = evaluate_nq(gold, {i: p for i, p in preds.items() if i in gold})
    assert [w.code for w in r.warnings] == ["no-gold-short"]
    assert r.warnings[0].message.startswith("none of the 8 gold examples has a short answer")
    assert r.metrics["short-best-threshold-f1"] == 0.0
    assert "|warn:no-gold-short|" in r.signature


# ---------------------------------------------------- NQ: breakdown and bootstrap

def test_breakdown_group_without_gold_has_no_recall_or_f1(tmp_path, capsys):
    assert main(["demo", "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    code, out, _ = eval_nq(capsys, TOY_PATH, tmp_path / "first_paragraph.predictions.json",
                           "--breakdown", "--format", "json")
    assert code == 0
    rows = {g["group"]: g for g in json.loads(out)["breakdown"]["by_long_answer_type"]["long"]}
    # example 107 has no gold long answer (one annotator): nothing to recall there
    assert (rows["null"]["precision"], rows["null"]["recall"], rows["null"]["f1"]) == \
        (0.0, None, None)


def test_bootstrap_resamples_without_gold_are_counted(capsys):
    # 4 of the 10 dev examples have a gold long answer and 2 a gold short one; with seed 0
    # and 50 resamples the resamples that miss them all are counted by drawing the same
    # indices here.
    preds = golden("nq-eval", "annotator0.predictions.json")
    code, out, err = eval_nq(capsys, dev_gold(), preds, "--resamples", "50", "--format", "json")
    assert code == 0
    gold = read_nq_gold(dev_gold(), workers=1)
    has = {"long": np.array([sum(not a.long_answer.is_null for a in g.annotations) >= 2
                             for g in gold.values()]),
           "short": np.array([sum(bool(a.short_answers) for a in g.annotations) >= 2
                              for g in gold.values()])}
    assert (has["long"].sum(), has["short"].sum()) == (4, 2)
    idx = np.random.default_rng(0).integers(0, 10, size=(50, 10))
    none = {t: int((~h[idx].any(axis=1)).sum()) for t, h in has.items()}
    assert none["short"] > none["long"] > 0
    assert warning_lines(err) == [*(
        f"{none[t]} of 50 bootstrap resamples have no gold answer for {t}-best-threshold-f1 "
        "and count as 0, which pulls its interval down — too few gold answers for an "
        "interval; score more examples" for t in ("long", "short")),
        "bootstrap intervals of long-best-threshold-f1, short-best-threshold-f1 from only "
        "10 items (fewer than 30): the resampled scores take too few values for their 2.5% "
        "tails to mean much — score more items"]
    got = json.loads(out)
    assert [w["code"] for w in got["warnings"]] == ["bootstrap-no-gold"] * 2 + ["few-items"]
    assert "|warn:bootstrap-no-gold+few-items|v" in got["signature"]


# ----------------------------------------------------------------------------- NQ-open

def _open_preds_file(tmp_path: Path, src: Path) -> Path:
    path = tmp_path / "preds.jsonl"
    with path.open("w") as f:
        for line in src.read_text().splitlines():
            d = json.loads(line)
            f.write(json.dumps({"question": d["question"], "prediction": d["answer"][0]}) + "\n")
    return path


def test_nq_open_predictions_of_another_split_are_refused(capsys, tmp_path):
    refs = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = _open_preds_file(tmp_path, shared_file("data", "nq-open",
                                                   "NQ-open.efficientqa.dev.1.1.jsonl"))
    msg = refused(*run(capsys, "eval", "nq-open", "--gold", str(refs), "--predictions",
                       str(preds), "--allow-missing"))
    # both files are known splits (nqkit.splits): the one line names them
    assert msg == (
        f"{preds}: the 1,800 predicted questions are the questions of efficientqa/dev, the "
        "gold holds the questions of nq-open/dev: none of the predictions is in the "
        "gold — score the predictions against the gold of efficientqa/dev, or "
        "predict the questions of nq-open/dev")
    with pytest.raises(InputError, match="none of the 2 predicted questions"):
        score_nq_open([NqOpenExample("q", ("a",))],
                      [NqOpenPrediction("x", "a"), NqOpenPrediction("y", "a")], missing="wrong")


def test_nq_open_partly_other_split_warns():
    refs = [NqOpenExample("q1", ("x",)), NqOpenExample("q2", ("y",))]
    r = score_nq_open(refs, [NqOpenPrediction("q1", "x"), NqOpenPrediction("other", "y")],
                      missing="wrong")
    assert (r.num_correct, r.num_total) == (1, 2)
    assert [w.code for w in r.warnings] == ["other-split"]
    assert r.signature.endswith("|missing:wrong|warn:other-split|v" + r.signature.split("|v")[-1])


def test_nq_open_all_empty_predictions_keep_the_official_number_and_warn(capsys):
    refs = shared_file("data", "nq-open", "NQ-open.dev.jsonl")
    preds = golden("nq-open", "empty.predictions.jsonl")
    official = json.loads(golden("nq-open", "empty.official.json").read_text())
    code, out, err = run(capsys, "eval", "nq-open", "--gold", str(refs),
                         "--predictions", str(preds), "--format", "json")
    assert code == 0
    got = json.loads(out)
    assert {k: got[k] for k in official} == official
    assert got["warnings"][0]["code"] == "all-empty"
    assert warning_lines(err)[0].startswith("all 3,610 predictions are empty after "
                                            "normalization")
    assert "|warn:all-empty|v" in got["signature"]


def test_nq_open_empty_matches_are_flagged():
    refs = [NqOpenExample("q1", ("The",)), NqOpenExample("q2", ("Paris",))]
    r = score_nq_open(refs, [NqOpenPrediction("q1", "a"), NqOpenPrediction("q2", "paris")])
    assert (r.num_correct, r.accuracy) == (2, 1.0)
    assert [w.message for w in r.warnings] == [
        "1 of the 2 correct answers are empty predictions that equal a gold answer "
        "normalizing to the empty string (counted as correct, as the official script does)"]


# ------------------------------------------------------------------------ answer recall

def _ctx(text: str) -> DprContext:
    return DprContext(id="1", title="", text=text, score=None, has_answer=None)


def test_answer_recall_refuses_results_that_can_only_give_zero(capsys, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"question": "q", "answers": ["x"], "ctxs": []}]))
    msg = refused(*run(capsys, "eval", "retrieval", "--predictions", str(path)))
    assert msg == (f"{path}: none of the 1 questions has a retrieved context, so every recall "
                   "would be 0 — give the retriever's output with its ctxs lists")
    with pytest.raises(InputError, match="none of the 1 questions has an answer with a token"):
        score_answer_recall([DprResult("q", ("", " "), (_ctx("some text"),))], [1])
    with pytest.raises(InputError, match="the results hold no question"):
        score_answer_recall([], [1])


def test_answer_recall_warns_on_answerless_questions_and_short_lists(capsys, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([
        {"question": "q1", "answers": ["Paris"], "ctxs": [{"text": "in Paris"}]},
        {"question": "q2", "answers": [], "ctxs": [{"text": "a"}, {"text": "b"}]},
    ]))
    code, out, err = run(capsys, "eval", "retrieval", "--predictions", str(path), "--topk", "1",
                         "2",
                         "--format", "json")
    assert code == 0
    got = json.loads(out)
    assert got["recall"] == {"1": 0.5, "2": 0.5}  # q1 at rank 1; q2 can never count
    assert [w["code"] for w in got["warnings"]] == ["short-lists", "no-answer-tokens"]
    assert warning_lines(err) == [
        "1 of 2 questions have fewer than 2 contexts (0 have none); their recall counts only "
        "what is there — the retriever returned fewer for them than for the others (a "
        "lexical retriever such as BM25 returns only passages that share a term with the "
        "question; an approximate index can return fewer)",
        "1 of 2 questions have no answer with a token (e.g. 'q2'), so they can never count "
        "as answered"]
    assert "|warn:short-lists+no-answer-tokens|v" in got["signature"]
    # every list shorter than the depth asked: then the fix is to retrieve deeper
    code, out, err = run(capsys, "eval", "retrieval", "--predictions", str(path), "--topk", "3")
    assert code == 0
    assert warning_lines(err)[0] == (
        "2 of 2 questions have fewer than 3 contexts (0 have none); their recall counts only "
        "what is there — no list holds more than 2: retrieve 3 passages per question")


# ------------------------------------------------------------------------------ AmbigQA

def _ambig(i: str, answers: tuple[str, ...]) -> AmbigNqExample:
    return AmbigNqExample(i, f"question {i}", (SingleAnswer(answers),))


def test_ambigqa_all_empty_lists_and_empty_matches_warn(capsys, tmp_path):
    refs = [_ambig("1", ("the",)), _ambig("2", ("Paris",))]
    r = score_ambigqa(refs, {"1": AmbigQaPrediction(("a",), None),
                             "2": AmbigQaPrediction(("paris",), None)})
    assert r.metrics["F1 answer"]["all"] == 1.0
    assert [w.code for w in r.warnings] == ["empty-match"]
    empty = score_ambigqa(refs, {"1": AmbigQaPrediction((), None),
                                 "2": AmbigQaPrediction((), None)})
    assert empty.metrics["F1 answer"]["all"] == 0.0
    assert [w.message for w in empty.warnings] == [
        "all 2 prediction lists are empty, so every score is 0 — check that the system wrote "
        "its answers"]
    assert "|warn:all-empty|v" in empty.signature
    with pytest.raises(InputError, match="there is no prediction"):
        score_ambigqa(refs, {}, missing="empty")
    # CLI: the same warning first on stderr and in the JSON
    ref_path, pred_path = tmp_path / "refs.json", tmp_path / "preds.json"
    ref_path.write_text(json.dumps([
        {"id": "1", "question": "q1", "annotations": [{"type": "singleAnswer",
                                                        "answer": ["the"]}]},
        {"id": "2", "question": "q2", "annotations": [{"type": "singleAnswer",
                                                        "answer": ["Paris"]}]}]))
    pred_path.write_text(json.dumps({"1": [], "2": []}))
    code, out, err = run(capsys, "eval", "ambigqa", "--gold", str(ref_path),
                         "--predictions", str(pred_path), "--format", "json")
    assert code == 0
    assert json.loads(out)["warnings"][0]["code"] == "all-empty"
    assert warning_lines(err) == [empty.warnings[0].message]


# --------------------------------------------------------------------------------- ReQA

def test_reqa_targets_absent_from_the_index_are_refused():
    with pytest.raises(InputError) as e:
        RankTargets.from_sentences(["s1", "s2"], [1, 1], ["s1", "gone", "also gone"])
    assert e.value.message == (
        "2 of 3 target sentences are not in the index, so their queries could never be "
        "answered (e.g. 'gone', 'also gone') — build the index and the queries from the "
        "same task")


def test_reqa_run_refuses_a_task_whose_targets_are_not_indexed(capsys, tmp_path):
    task = tmp_path / "t"
    task.mkdir()
    (task / "params.json").write_text(json.dumps(
        {"format": "nqkit-reqa-task", "format_version": 1, "source": "squad"}))
    (task / "index.jsonl").write_text(json.dumps({"sentence": "A b.", "doc_id": 1}) + "\n")
    (task / "queries.jsonl").write_text(json.dumps(
        {"question": "q?", "answer_sentence": "Not there.", "doc_id": 1}) + "\n")
    (task / "paragraphs.jsonl").write_text(json.dumps(
        {"doc_id": 1, "title": "t", "context": "A b."}) + "\n")
    msg = refused(*run(capsys, "reqa", "run", "--gold", str(task), "--no-per-item"))
    assert "queries.jsonl:1: the answer sentence is not in the index" in msg


# ------------------------------------------------------------------------- human bounds

def test_human_bounds_refuse_votes_above_the_pool(capsys):
    # leave one annotator out on 5-way dev: a pool of 1, so --votes 2 can never be reached
    msg = refused(*run(capsys, "eval", "human-bounds", "--gold", str(dev_gold()),
                       "--num-references",
                       "4", "--splits", "all", "--votes", "2", "--no-gold-cache"))
    assert msg == ("--votes 2 is more than the pool of 1 annotation(s) per example, so the "
                   "super-annotator would never answer and score 0 — pass --votes 1 or less, "
                   "or leave --votes out (8/20 of the pool)")


def test_human_bounds_refuse_references_without_answers():
    n = Annotation(0, NULL_SPAN, -1, (), "NONE")
    with pytest.raises(InputError, match=r"^in none of the 1 reference sets do >= 2 references"):
        human_bounds([(1, [n] * 6)], references=5)
