"""The fast paths of the NQ readers accept exactly what the careful paths accept.

(And the one-pass candidate nesting answers like its definition on any candidates.)

Gold annotations and predictions are first tried by a check written for speed
(``_well_formed_*``); anything it does not accept goes to the careful validator, which
words the error. These tests draw objects of every shape (right, wrong and odd values,
missing keys) and require: whenever the fast path returns a record, the careful path
returns the same record; whenever the careful path refuses, the fast path returns
``None``. The careful path is reached by passing a read-only mapping, which the fast
paths never take.
"""

from __future__ import annotations

import gc
import pickle
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nqkit.errors import InputError
from nqkit.formats.nq import (
    INT64_MAX,
    NULL_SPAN,
    Annotation,
    Span,
    _parents,
    _Parser,
    _well_formed_annotation,
    _well_formed_span,
)
from nqkit.formats.nq_gold import GoldExample, PendingGold, pool_size
from nqkit.formats.nq_predictions import (
    _well_formed_prediction,
    prediction_from_json,
    predictions_from_json,
)
from nqkit.io import gc_paused

# Values that sit on every boundary of the offset rules, and values of the wrong type.
OFFSETS = st.one_of(
    st.sampled_from([-2, -1, 0, 1, 2, 5, 10, INT64_MAX, INT64_MAX + 1]),
    st.integers(-3, 12),
    st.sampled_from([True, False, None, 1.0, "3", -1.0]),
)
OFFSET_KEYS = ("start_byte", "end_byte", "start_token", "end_token")


@st.composite
def offsets(draw: st.DrawFn) -> dict[str, Any]:
    """An offsets object: each key present (with any value) or left out."""
    return {k: draw(OFFSETS) for k in OFFSET_KEYS if draw(st.integers(0, 5))}


@st.composite
def consistent_offsets(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly valid offsets (both pairs -1, or start < end), so that valid records are
    drawn often enough to compare; then one or both byte offsets, or (rarely) a token
    offset, left out: token-only spans are how the simplified format writes them."""
    d: dict[str, Any] = {}
    for start, end in (("start_byte", "end_byte"), ("start_token", "end_token")):
        if draw(st.booleans()):
            d[start] = d[end] = -1
        else:
            d[start] = draw(st.integers(0, 20))
            d[end] = d[start] + draw(st.integers(1, 5))
    for key in draw(st.sampled_from([(), (), ("start_byte",), ("end_byte",),
                                     ("start_byte", "end_byte"), ("start_byte", "end_byte"),
                                     ("start_token",), ("end_token",),
                                     ("start_token", "end_token")])):
        del d[key]
    return d


SPANS = st.one_of(offsets(), consistent_offsets())


def careful_span(d: dict[str, Any], bytes_required: bool) -> Span | None:
    try:
        return _Parser(None).span(MappingProxyType(d), "s", bytes_required=bytes_required)
    except InputError:
        return None


@settings(max_examples=600, deadline=None)
@given(SPANS, st.booleans())
def test_span_fast_path_agrees_with_careful_path(d, bytes_required):
    fast = _well_formed_span(d, -2 if bytes_required else -1)
    careful = careful_span(d, bytes_required)
    if careful is None:
        assert fast is None
    elif fast is not None:
        assert fast == careful
    # and what the parser returns for a plain dict is always the careful answer
    try:
        got: Span | None = _Parser(None).span(d, "s", bytes_required=bytes_required)
    except InputError:
        got = None
    assert got == careful


def test_span_fast_path_examples():
    assert _well_formed_span({"start_byte": 3, "end_byte": 9, "start_token": 1,
                              "end_token": 2}, -2) == Span(3, 9, 1, 2)
    # tokens only: bytes read as -1 unless required
    assert _well_formed_span({"start_token": 1, "end_token": 2}, -1) == Span(-1, -1, 1, 2)
    assert _well_formed_span({"start_token": 1, "end_token": 2}, -2) is None
    assert _well_formed_span({"start_byte": -1, "end_byte": -1, "start_token": -1,
                              "end_token": -1}, -2) is NULL_SPAN
    for bad in ({"start_byte": 3, "end_byte": 3, "start_token": 1, "end_token": 2},  # empty
                {"start_byte": 3, "end_byte": -1, "start_token": 1, "end_token": 2},  # half
                {"start_byte": True, "end_byte": 9, "start_token": 1, "end_token": 2},
                {"start_byte": 0, "end_byte": INT64_MAX + 1, "start_token": 1,
                 "end_token": 2}):
        assert _well_formed_span(bad, -2) is None


@st.composite
def annotations(draw: st.DrawFn) -> dict[str, Any]:
    a: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        la = dict(draw(SPANS))
        if draw(st.integers(0, 5)):
            la["candidate_index"] = draw(st.sampled_from([-2, -1, 0, 3, True, None, "1"]))
        a["long_answer"] = la
    if draw(st.integers(0, 9)):
        a["short_answers"] = draw(st.one_of(st.lists(SPANS, max_size=3),
                                            st.sampled_from([None, {}, "x"])))
    if draw(st.integers(0, 9)):
        a["yes_no_answer"] = draw(st.sampled_from(["NONE", "YES", "NO", "yes", "None", "",
                                                   None, 1]))
    if draw(st.booleans()):
        a["annotation_id"] = draw(st.sampled_from([0, 7, 2**64 - 1, None, True, "7", 1.5]))
    return a


@st.composite
def near_valid_annotations(draw: st.DrawFn) -> dict[str, Any]:
    """A valid annotation (consistent candidate index, spans, yes/no answer), then at most
    one field changed to a value on a rule's edge: most draws reach the fast path's
    acceptance, and each edge of its rules is drawn often."""
    long_answer = draw(consistent_offsets())
    null = all(long_answer.get(k, -1) == -1 for k in OFFSET_KEYS)
    a: dict[str, Any] = {
        "annotation_id": draw(st.integers(0, 2**64 - 1)),
        "long_answer": {**long_answer, "candidate_index": -1 if null else draw(
            st.integers(0, 5))},
        "short_answers": draw(st.lists(consistent_offsets(), max_size=2)),
        "yes_no_answer": draw(st.sampled_from(["NONE", "YES", "NO"])),
    }
    change = draw(st.integers(0, 5))
    if change == 1:
        a["long_answer"]["candidate_index"] = draw(st.sampled_from([-2, -1, 0, 1, True]))
    elif change == 2:
        a["yes_no_answer"] = draw(st.sampled_from(["yes", "None", "", None]))
    elif change == 3:
        a["annotation_id"] = draw(st.sampled_from([None, -1, True, 1.0]))
    elif change == 4:
        del a[draw(st.sampled_from(sorted(a)))]
    return a


def careful_annotation(a: dict[str, Any], bytes_required: bool) -> Annotation | None:
    try:
        return _Parser(None).annotation(MappingProxyType(a), 0,
                                        bytes_required=bytes_required)
    except InputError:
        return None


@settings(max_examples=800, deadline=None)
@given(st.one_of(annotations(), near_valid_annotations()), st.booleans())
def test_annotation_fast_path_agrees_with_careful_path(a, bytes_required):
    fast = _well_formed_annotation(a, bytes_required)
    careful = careful_annotation(a, bytes_required)
    if careful is None:
        assert fast is None
    elif fast is not None:
        assert fast == careful


def test_annotation_fast_path_takes_official_annotations():
    a = {"annotation_id": 13591, "long_answer": {"candidate_index": 2, "start_byte": 10,
                                                 "end_byte": 90, "start_token": 3,
                                                 "end_token": 20},
         "short_answers": [{"start_byte": 12, "end_byte": 20, "start_token": 4,
                            "end_token": 6}], "yes_no_answer": "NONE"}
    assert _well_formed_annotation(a, True) == Annotation(
        13591, Span(10, 90, 3, 20), 2, (Span(12, 20, 4, 6),), "NONE")
    # what needs normalizing is left to the careful path, which normalizes it
    lower = {**a, "yes_no_answer": "none"}
    assert _well_formed_annotation(lower, True) is None
    assert careful_annotation(lower, True) == _well_formed_annotation(a, True)


@st.composite
def predictions(draw: st.DrawFn) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        d["example_id"] = draw(st.sampled_from([5, -5, 2**63 - 1, 2**63, -(2**63), "e1",
                                                True, 5.0, None]))
    if draw(st.integers(0, 4)):
        d["long_answer"] = draw(st.one_of(SPANS, st.sampled_from([None, {}, [], 3])))
    if draw(st.integers(0, 4)):
        d["short_answers"] = draw(st.one_of(st.lists(SPANS, max_size=3),
                                            st.sampled_from([None, [], 0, "", {}])))
    if draw(st.integers(0, 3)):
        d["yes_no_answer"] = draw(st.sampled_from(["NONE", "YES", "NO", "no", "x", None]))
    for key in ("long_answer_score", "short_answers_score"):
        if draw(st.integers(0, 9)):
            d[key] = draw(st.sampled_from([0, 1.5, -2, float("inf"), float("-inf"),
                                           float("nan"), True, None, "1"]))
    return d


@st.composite
def near_valid_predictions(draw: st.DrawFn) -> dict[str, Any]:
    """A valid prediction, then at most one field changed to a value on a rule's edge."""
    d: dict[str, Any] = {
        "example_id": draw(st.one_of(st.integers(-(2**63), 2**63 - 1), st.just("e1"))),
        "long_answer": draw(consistent_offsets()),
        "long_answer_score": draw(st.sampled_from([0, 1.5, -2.0])),
        "short_answers": [],
        "short_answers_score": draw(st.sampled_from([0, 3, 0.25])),
        "yes_no_answer": "NONE",
    }
    if draw(st.booleans()):
        d["yes_no_answer"] = draw(st.sampled_from(["YES", "NO"]))
        d["short_answers"] = [{k: -1 for k in OFFSET_KEYS}] * draw(st.integers(0, 1))
    else:
        d["short_answers"] = draw(st.lists(consistent_offsets(), max_size=2))
    change = draw(st.integers(0, 6))
    if change == 1:
        d["example_id"] = draw(st.sampled_from([2**63, -(2**63) - 1, True, 5.0, None]))
    elif change == 2:
        d["long_answer"] = draw(st.sampled_from([None, {}, {"start_token": 1}]))
    elif change == 3:
        d[draw(st.sampled_from(["long_answer_score", "short_answers_score"]))] = draw(
            st.sampled_from([float("nan"), float("inf"), True, None, "1"]))
    elif change == 4:
        d["short_answers"] = draw(st.sampled_from([None, 0, "", [{}], [{"end_token": 2}]]))
    elif change == 5:
        d["yes_no_answer"] = draw(st.sampled_from(["no", "x", None]))
        d["short_answers"] = draw(st.lists(consistent_offsets(), max_size=1))
    elif change == 6:
        del d[draw(st.sampled_from(sorted(d)))]
    return d


def careful_prediction(d: dict[str, Any]) -> Any:
    try:
        return prediction_from_json(MappingProxyType(d), None)
    except InputError:
        return None


@settings(max_examples=800, deadline=None)
@given(st.one_of(predictions(), near_valid_predictions()))
def test_prediction_fast_path_agrees_with_careful_path(d):
    fast = _well_formed_prediction(d)
    careful = careful_prediction(d)
    if careful is None:
        assert fast is None
    elif fast is not None:
        assert fast == careful
        assert [type(x) for x in (fast.long_answer_score, fast.short_answers_score)] == [
            type(careful.long_answer_score), type(careful.short_answers_score)]


def test_predictions_file_errors_still_name_the_prediction():
    good = {"example_id": 1, "long_answer": None, "long_answer_score": 1,
            "short_answers": [], "short_answers_score": 0, "yes_no_answer": "NONE"}
    with pytest.raises(InputError, match=r"p\.json: predictions\[1\] \(example_id 1\).*"
                                         "duplicate prediction"):
        predictions_from_json({"predictions": [good, dict(good)]}, "p.json")
    with pytest.raises(InputError, match=r"predictions\[1\] \(example_id 2\).*"
                                         "long_answer_score must be a number"):
        predictions_from_json({"predictions": [good, {**good, "example_id": 2,
                                                      "long_answer_score": "x"}]}, "p.json")


SPAN_VALUES = st.builds(Span, *(st.integers(-1, 2**63 - 1) for _ in range(4)))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.builds(Annotation, st.integers(0, 2**64 - 1), SPAN_VALUES,
                          st.integers(-1, 99), st.lists(SPAN_VALUES, max_size=3).map(tuple),
                          st.sampled_from(["NONE", "YES", "NO"])), max_size=5).map(tuple),
       st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=5)), st.text(max_size=20))
def test_gold_records_survive_pickling(anns, ex_id, question):
    # gold shards come back from worker processes pickled; the records pickle as
    # constructor calls (Span.__reduce__ and its kin)
    ex = GoldExample(ex_id, anns, question, tuple("paragraph" for _ in anns))
    back = pickle.loads(pickle.dumps(ex, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == ex
    assert type(back) is GoldExample and all(type(a) is Annotation for a in back.annotations)


# Worked by hand: a wave of k shards on c cores takes max(1, k / c) shard-times.
#   5 on 2: 2 processes 1+1+1 = 3; 3 processes 1.5+1 = 2.5; 4 -> 2+1 = 3  => 3
#   50 on 2: 2 processes 25; 3 processes 16 x 1.5 + 1 = 25 (a tie: the smaller)  => 2
#   7 on 2: 2 -> 4; 3 -> 1.5+1.5+1 = 4; 4 -> 2+1.5 = 3.5  => 4
#   5 on 4: 4 -> 1+1 = 2; 5 -> 1.25  => 5
@pytest.mark.parametrize(("shards", "cores", "expected"), [
    (5, 2, 3), (50, 2, 2), (7, 2, 4), (4, 2, 2), (3, 2, 3), (1, 2, 1), (2, 2, 2),
    (5, 4, 5), (5, 1, 1), (1, 1, 1)])
def test_pool_size(shards, cores, expected):
    assert pool_size(shards, cores) == expected


def test_gc_paused_restores_the_collector():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block does not turn it back on early
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_pending_gold_stops_its_workers_when_left_early(tmp_path):
    lines = b"".join(b'{"annotations": [], "example_id": %d, "question_text": "q"}\n' % i
                     for i in range(3))
    files = []
    for i in range(3):
        f = tmp_path / f"g{i}.jsonl"
        f.write_bytes(lines.replace(b'"example_id": ', b'"example_id": 1%d' % i))
        files.append(str(f))
    pending = PendingGold(files, workers=2)
    assert pending._pool is not None
    workers = list(pending._pool._processes.values())
    assert workers
    with pending:
        pass  # the caller's own work failed: result() is never asked for
    assert pending._pool is None
    assert not any(p.is_alive() for p in workers)
    # a result that was asked for is complete and in file order
    with PendingGold(files, workers=2) as again:
        gold = again.result()
    assert list(gold) == [100, 101, 102, 110, 111, 112, 120, 121, 122]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 6)), max_size=12),
       st.booleans())
def test_candidate_parents_of_any_candidates_follow_the_definition(pairs, in_order):
    # Official candidates nest and come in order (the one-pass stack); a custom file's may
    # not: then too, each parent is the last earlier candidate containing it.
    spans = [Span(-1, -1, a, a + n) for a, n in pairs]
    if in_order:
        spans.sort(key=lambda s: s.start_token)
    expected = []
    for i, s in enumerate(spans):
        containers = [j for j in range(i) if spans[j].start_token <= s.start_token
                      and s.end_token <= spans[j].end_token]
        expected.append(containers[-1] if containers else -1)
    assert _parents(spans) == tuple(expected)


def test_pending_gold_reports_progress_per_shard(tmp_path):
    seen: list[tuple[int, dict[str, Any]]] = []

    def progress(items, **kw):
        seen.append((len(items), kw))
        return items

    lines = b'{"annotations": [], "example_id": %d, "question_text": "q"}\n'
    files = []
    for i in range(3):
        f = tmp_path / f"g{i}.jsonl"
        f.write_bytes(lines % i)
        files.append(str(f))
    for workers in (1, 2):
        seen.clear()
        with PendingGold(files, workers=workers) as pending:
            assert list(pending.result(progress=progress)) == [0, 1, 2]
        assert seen == [(3, {"desc": "reading the gold", "total": 3, "unit": "shard"})]
    seen.clear()
    with PendingGold(files[:2], workers=2) as pending:  # two shards: a bar
        pending.result(progress=progress)
    assert seen == [(2, {"desc": "reading the gold", "total": 2, "unit": "shard"})]
    seen.clear()
    with PendingGold(files[:1], workers=1) as pending:  # one shard: nothing to show
        pending.result(progress=progress)
    assert seen == []
