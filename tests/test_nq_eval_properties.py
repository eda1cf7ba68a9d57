"""Properties of the NQ metrics that must hold for any data (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nqkit.errors import InputError
from nqkit.formats.nq import NULL_SPAN, Annotation, Span
from nqkit.formats.nq_predictions import NqPrediction
from nqkit.metrics.nq import evaluate_nq, span_equal, span_set_equal

# Candidate long answers and short spans of a toy page, by tokens and bytes.
LONGS = [Span(10 * i, 10 * i + 9, i * 3, i * 3 + 3) for i in range(6)]
SHORTS = [Span(100 + 2 * i, 101 + 2 * i, 50 + i, 51 + i) for i in range(8)]


@st.composite
def annotation(draw):
    if draw(st.booleans()):
        return Annotation(0, NULL_SPAN, -1, (), "NONE")
    long_answer = draw(st.sampled_from(LONGS))
    kind = draw(st.sampled_from(["none", "spans", "yesno"]))
    shorts: tuple[Span, ...] = ()
    yes_no = "NONE"
    if kind == "spans":
        shorts = tuple(draw(st.lists(st.sampled_from(SHORTS), min_size=1, max_size=3)))
    elif kind == "yesno":
        yes_no = draw(st.sampled_from(["YES", "NO"]))
    return Annotation(0, long_answer, 0, shorts, yes_no)


gold_sets = st.lists(st.lists(annotation(), min_size=5, max_size=5), min_size=1, max_size=25)


def answerable(golds) -> bool:
    """Some example has a gold answer (else the evaluation refuses: every F1 would be 0)."""
    return any(sum(a.has_long for a in anns) >= 2 or sum(a.has_short for a in anns) >= 2
               for anns in golds)


def perfect(ex_id, anns):
    long_ann = next((a for a in anns if a.has_long), None)
    short_ann = next((a for a in anns if a.has_short), None)
    has_long = sum(a.has_long for a in anns) >= 2
    has_short = sum(a.has_short for a in anns) >= 2
    long_span = long_ann.long_answer if has_long and long_ann else NULL_SPAN
    shorts: tuple[Span, ...] = ()
    yes_no = "NONE"
    if has_short and short_ann:
        shorts, yes_no = short_ann.short_answers, short_ann.yes_no_answer
    return NqPrediction(ex_id, long_span, 1.0, shorts, 1.0, yes_no)


@settings(max_examples=200, deadline=None)
@given(gold_sets)
def test_perfect_predictions_score_one(golds):
    gold = dict(enumerate(golds))
    preds = {i: perfect(i, anns) for i, anns in gold.items()}
    if not answerable(golds):
        with pytest.raises(InputError, match="every recall and F1 would be 0"):
            evaluate_nq(gold, preds)
        return
    m = evaluate_nq(gold, preds).metrics
    any_long = any(sum(a.has_long for a in anns) >= 2 for anns in golds)
    any_short = any(sum(a.has_short for a in anns) >= 2 for anns in golds)
    assert m["long-best-threshold-f1"] == (1.0 if any_long else 0.0)
    assert m["short-best-threshold-f1"] == (1.0 if any_short else 0.0)


def _wrong(p: NqPrediction) -> NqPrediction:
    """A non-null answer that no annotator gave (spans outside the page's candidates)."""
    return NqPrediction(p.example_id, Span(9000, 9100, 900, 910), p.long_answer_score,
                        (Span(9000, 9001, 900, 901),), p.short_answers_score, "NONE")


@settings(max_examples=200, deadline=None)
@given(gold_sets, st.lists(st.floats(0, 1, allow_nan=False), min_size=25, max_size=25),
       st.integers(0, 24))
def test_replacing_a_correct_prediction_by_a_wrong_one_never_raises_f1(golds, scores, k):
    assume(answerable(golds))
    gold = dict(enumerate(golds))
    preds = {i: perfect(i, anns) for i, anns in gold.items()}
    preds = {i: NqPrediction(i, p.long_answer, scores[i], p.short_answers, scores[-1 - i],
                             p.yes_no_answer) for i, p in preds.items()}
    before = evaluate_nq(gold, preds)
    i = k % len(gold)
    after = evaluate_nq(gold, {**preds, i: _wrong(preds[i])})
    for task in ("long", "short"):
        key = f"{task}-best-threshold-f1"
        assert after.metrics[key] <= before.metrics[key] + 1e-12


@settings(max_examples=100, deadline=None)
@given(gold_sets, st.lists(st.integers(-50, 50), min_size=25, max_size=25), st.randoms())
def test_order_and_monotone_rescaling_do_not_change_f1(golds, scores, rnd):
    # Integer scores keep the rescaling exact: floats could merge distinct scores into ties.
    assume(answerable(golds))
    gold = dict(enumerate(golds))
    preds = {i: NqPrediction(i, perfect(i, a).long_answer if i % 3 else _wrong(
        perfect(i, a)).long_answer, scores[i], (), scores[i], "NONE")
        for i, a in gold.items()}
    base = evaluate_nq(gold, preds).metrics
    keys = list(gold)
    rnd.shuffle(keys)
    shuffled = evaluate_nq({k: gold[k] for k in keys}, preds).metrics
    rescaled_preds = {i: NqPrediction(i, p.long_answer, 3 * p.long_answer_score + 7, (),
                                      3 * p.short_answers_score + 7, "NONE")
                      for i, p in preds.items()}
    rescaled = evaluate_nq(gold, rescaled_preds).metrics
    for key, value in base.items():
        assert shuffled[key] == value
        if not key.endswith("best-threshold"):
            assert abs(rescaled[key] - value) < 1e-12, key


def test_span_equality_is_by_bytes_or_tokens():
    a = Span(10, 20, 1, 3)
    assert span_equal(a, Span(10, 20, 5, 6))  # bytes agree
    assert span_equal(a, Span(11, 20, 1, 3))  # tokens agree
    assert span_equal(a, Span(-1, -1, 1, 3))  # token-only prediction
    assert not span_equal(a, Span(11, 20, 1, 4))
    assert not span_equal(NULL_SPAN, NULL_SPAN)


def test_short_answers_are_sets():
    s1, s2 = Span(1, 2, 1, 2), Span(3, 4, 3, 4)
    assert span_set_equal([s1, s2], [s2, s1, s1])
    assert not span_set_equal([s1, s2], [s1])
    assert not span_set_equal([s1], [s1, s2])


