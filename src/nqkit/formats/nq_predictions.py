"""NQ predictions in the competition's format.

A JSON file ``{"predictions": [...]}``; each prediction::

    {"example_id": -2226525965842375672,
     "long_answer": {"start_byte": 62657, "end_byte": 64776,
                     "start_token": 391, "end_token": 604},
     "long_answer_score": 13.5,
     "short_answers": [{"start_byte": 64206, "end_byte": 64280,
                        "start_token": 555, "end_token": 560}, ...],
     "short_answers_score": 26.4,
     "yes_no_answer": "NONE"}

Offsets may be given by bytes, by tokens, or both (-1 for absent ones, or the keys left
out); predictions made on the simplified format give tokens only. A missing
``long_answer`` is a null long answer; ``yes_no_answer`` is YES, NO or NONE (any case),
and a YES/NO answer cannot come with short spans.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from nqkit.errors import InputError, examples
from nqkit.formats.nq import (
    INT64_MAX,
    INT64_MIN,
    NULL_SPAN,
    YES_NO_VALUES,
    Span,
    _Parser,
    _well_formed_span,
)
from nqkit.io import PathLike, atomic_output, gc_paused, read_json


@dataclass(frozen=True, slots=True)
class NqPrediction:
    """One system's answer for one example."""

    example_id: int | str  # the gold example's id (an int in official data)
    long_answer: Span  # NULL_SPAN for no long answer
    long_answer_score: float  # confidence; the evaluation sweeps thresholds over it
    short_answers: tuple[Span, ...]  # the predicted set of short spans
    short_answers_score: float  # confidence of the short answer (spans or yes/no)
    yes_no_answer: str  # "NONE", "YES" or "NO"

    def to_json(self) -> dict[str, Any]:
        return {
            "example_id": self.example_id,
            "long_answer": self.long_answer.to_json(),
            "long_answer_score": self.long_answer_score,
            "short_answers": [s.to_json() for s in self.short_answers],
            "short_answers_score": self.short_answers_score,
            "yes_no_answer": self.yes_no_answer,
        }


def _span(p: _Parser, d: Any, ctx: str) -> Span:
    if not isinstance(d, Mapping):
        raise p.fail(f"{ctx} must be an object with start/end offsets, found {d!r:.40}",
                     'write {"start_byte": .., "end_byte": .., "start_token": .., "end_token": ..}')
    keys = ("start_byte", "end_byte", "start_token", "end_token")
    if not any(k in d for k in keys):
        raise p.fail(f"{ctx} has neither byte nor token offsets",
                     "give start_byte/end_byte or start_token/end_token (-1 when absent)")
    vals = []
    for k in keys:
        v = d.get(k, -1)
        if isinstance(v, bool) or not isinstance(v, int):
            raise p.fail(f"{ctx}.{k} must be an integer, found {v!r:.40}",
                         "offsets are integers, -1 when absent")
        vals.append(v)
    return p.check_span(Span(*vals), ctx)


def _score(p: _Parser, d: Mapping[str, Any], key: str) -> float:
    if key not in d:
        raise p.fail(f"missing key {key!r}", f"every prediction needs a numeric {key}")
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(v):
        raise p.fail(f"{key} must be a number, found {v!r:.40}", f"write a numeric {key}")
    return v


def prediction_from_json(d: Any, where: str | None) -> NqPrediction:
    """Validate and build one prediction; ``where`` locates it in messages."""
    p = _Parser(where)
    if not isinstance(d, Mapping):
        raise p.fail(f"a prediction must be a JSON object, found {type(d).__name__}",
                     "see the prediction format in `nqkit eval nq --help`")
    if "example_id" not in d:
        raise p.fail("missing key 'example_id'", "every prediction needs the example's id")
    ex_id = d["example_id"]
    p.example_id(ex_id, strings=True)
    long_span = _span(p, d["long_answer"], "long_answer") if d.get("long_answer") is not None \
        else NULL_SPAN
    shorts_raw = d.get("short_answers") or []
    if not isinstance(shorts_raw, list):
        raise p.fail(f"short_answers must be a list, found {type(shorts_raw).__name__}",
                     "write a list of spans (possibly empty)")
    shorts = tuple(_span(p, s, f"short_answers[{i}]") for i, s in enumerate(shorts_raw))
    yn = d.get("yes_no_answer", "NONE")
    if not isinstance(yn, str) or yn.upper() not in ("YES", "NO", "NONE"):
        raise p.fail(f"yes_no_answer is {yn!r:.40}", "use YES, NO or NONE")
    yn = yn.upper()
    if yn != "NONE" and any(not s.is_null for s in shorts):
        raise p.fail(f"yes_no_answer {yn} is given together with short answer spans",
                     "a yes/no answer replaces short spans: give one or the other")
    return NqPrediction(ex_id, long_span, _score(p, d, "long_answer_score"), shorts,
                        _score(p, d, "short_answers_score"), yn)


def predictions_from_json(data: Any, path: str) -> dict[int | str, NqPrediction]:
    """Validate the decoded predictions file; returns predictions by example id."""
    items = data.get("predictions") if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        raise InputError(path, 'expected {"predictions": [...]}, found '
                         + (f"keys [{examples(sorted(data, key=str), quote=True)}]"
                            if isinstance(data, Mapping) else type(data).__name__),
                         "write the official prediction format")
    if not items:
        raise InputError(path, "the predictions list is empty",
                         "write one prediction per gold example")
    out: dict[int | str, NqPrediction] = {}
    for i, d in enumerate(items):
        pred = _well_formed_prediction(d) if type(d) is dict else None
        if pred is None or pred.example_id in out:
            ex = d.get("example_id") if isinstance(d, Mapping) else None
            where = f"{path}: predictions[{i}]" + (f" (example_id {ex})" if ex is not None
                                                   else "")
            pred = prediction_from_json(d, where)
            if pred.example_id in out:
                raise InputError(where, f"duplicate prediction for example_id "
                                 f"{pred.example_id}", "give exactly one prediction per example")
        out[pred.example_id] = pred
    return out


def _well_formed_offsets(d: Any) -> Span | None:
    """The span of an offsets object with all four offsets that passes every rule of
    :func:`_span`, else ``None`` (and the careful path judges it)."""
    return _well_formed_span(d, -2) if type(d) is dict else None  # -2: every key required


def _well_formed_prediction(d: dict[str, Any]) -> NqPrediction | None:
    """The prediction of an object that :func:`prediction_from_json` accepts with nothing
    to normalize (int or str id, every offset given, an upper-case yes/no answer, numeric
    scores), else ``None``: the careful path then validates it and words any message."""
    ex_id = d.get("example_id")
    if not ((type(ex_id) is int and INT64_MIN <= ex_id <= INT64_MAX) or type(ex_id) is str):
        return None
    la = d.get("long_answer")
    long_span = NULL_SPAN if la is None else _well_formed_offsets(la)
    shorts_raw = d.get("short_answers")
    yn = d.get("yes_no_answer", "NONE")
    ls, ss = d.get("long_answer_score"), d.get("short_answers_score")
    if (long_span is None or not (shorts_raw is None or type(shorts_raw) is list)
            or type(yn) is not str or yn not in YES_NO_VALUES
            or not (type(ls) is int or (type(ls) is float and ls == ls))
            or not (type(ss) is int or (type(ss) is float and ss == ss))):
        return None
    shorts = []
    for raw in shorts_raw or ():
        span = _well_formed_offsets(raw)
        if span is None or (yn != "NONE" and span is not NULL_SPAN):
            return None
        shorts.append(span)
    return NqPrediction(ex_id, long_span, ls, tuple(shorts), ss, yn)


def read_nq_predictions(path: PathLike) -> dict[int | str, NqPrediction]:
    """Read and validate a predictions file (JSON, optionally gzipped)."""
    with gc_paused():
        return predictions_from_json(read_json(path, what="predictions"), str(path))


def check_id_types(gold_ids: Iterable[int | str], preds: Mapping[int | str, NqPrediction],
                   path: str) -> None:
    """String ids where the gold has integers (or the reverse) are an error, not a miss."""
    gold_type = type(next(iter(gold_ids)))
    for ex_id in preds:
        if type(ex_id) is not gold_type:
            want = "an integer" if gold_type is int else "a string"
            raise InputError(f"{path}: example_id {ex_id!r}",
                             f"example_id must be {want} as in the gold data, "
                             f"found {type(ex_id).__name__}",
                             "write example ids exactly as the gold data has them"
                             + (" (numbers, not strings)" if gold_type is int else ""))


def write_nq_predictions(path: PathLike, predictions: Iterable[NqPrediction]) -> int:
    """Write predictions in the official format, atomically. Returns their count."""
    items = [p.to_json() for p in predictions]
    with atomic_output(path, "wb") as f:
        f.write(orjson.dumps({"predictions": items}))
        f.write(b"\n")
    return len(items)
