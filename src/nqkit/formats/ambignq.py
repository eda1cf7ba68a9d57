"""AmbigNQ records (Min et al. 2020, §4): light and full formats, and AmbigQA predictions.

A light file is a JSON list of ``{"id", "question", "annotations"}``; each annotation is
either ``{"type": "singleAnswer", "answer": [aliases...]}`` or ``{"type": "multipleQAs",
"qaPairs": [{"question": rewrite, "answer": [aliases...]}, ...]}``. A rewrite may hold
several equivalent phrasings separated by ``|``. The full format adds the annotators'
search trail (``viewed_doc_titles``, ``used_queries``) and the NQ-open answer and page
(``nq_answer``, ``nq_doc_title``); :class:`AmbigNqExample` keeps them when present.

Predictions are a JSON object ``{id: [answer, ...]}`` (answers only) or ``{id: [{"question",
"answer"}, ...]}`` (question-answer pairs); a bare string value means one answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from nqkit.errors import InputError, examples
from nqkit.io import ObjectPairs, PathLike, read_json

__all__ = [
    "AmbigNqExample",
    "AmbigQaPrediction",
    "MultipleQAs",
    "QaPair",
    "SingleAnswer",
    "read_ambignq",
    "read_ambigqa_predictions",
]


@dataclass(frozen=True, slots=True)
class SingleAnswer:
    """An annotator found one answer (with its aliases)."""

    answers: tuple[str, ...]  # acceptable strings of the one answer


@dataclass(frozen=True, slots=True)
class QaPair:
    """One disambiguated question with its answer."""

    question: str  # the rewrite; ``|`` separates equivalent phrasings
    answers: tuple[str, ...]  # acceptable strings of this answer

    @property
    def phrasings(self) -> list[str]:
        """The non-empty ``|``-separated phrasings of the rewrite, stripped."""
        return [s.strip() for s in self.question.split("|") if s.strip()]


@dataclass(frozen=True, slots=True)
class MultipleQAs:
    """An annotator found several answers, each with a disambiguated question."""

    qa_pairs: tuple[QaPair, ...]


Annotation = SingleAnswer | MultipleQAs


@dataclass(frozen=True, slots=True)
class AmbigNqExample:
    """One AmbigNQ prompt question with its annotations (one or more annotators)."""

    id: str  # the NQ-open example id (a string of a signed int64)
    question: str  # the prompt question
    annotations: tuple[Annotation, ...]
    nq_answer: tuple[str, ...] | None = None  # full format: the NQ-open answers
    nq_doc_title: str | None = None  # full format: the NQ page title
    viewed_doc_titles: tuple[str, ...] | None = None  # full format: pages the annotators read
    used_queries: tuple[Mapping[str, Any], ...] | None = None  # full format: searches made

    @property
    def is_multi(self) -> bool:
        """Multiple answers: no annotator gave a single answer (the paper's "multi")."""
        return not any(isinstance(a, SingleAnswer) for a in self.annotations)


def _aliases(value: Any, where: str, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(a, str) for a in value):
        return tuple(value)
    raise InputError(where, f"{what} must be a non-empty list of strings, found {value!r:.60}",
                     "check that the file is an AmbigNQ light or full file")


def _annotation(ann: Any, where: str) -> Annotation:
    if not isinstance(ann, dict) or "type" not in ann:
        raise InputError(where, f"an annotation must be an object with a 'type', found "
                         f"{ann!r:.60}", "check that the file is an AmbigNQ file")
    if ann["type"] == "singleAnswer":
        return SingleAnswer(_aliases(ann.get("answer"), where, "'answer'"))
    if ann["type"] == "multipleQAs":
        pairs = ann.get("qaPairs")
        if not isinstance(pairs, list) or not pairs:
            raise InputError(where, "'qaPairs' must be a non-empty list",
                             "check that the file is an AmbigNQ file")
        out = []
        for p in pairs:
            if not isinstance(p, dict) or not isinstance(p.get("question"), str):
                raise InputError(where, f"a QA pair must have a string 'question', found "
                                 f"{p!r:.60}", "check that the file is an AmbigNQ file")
            out.append(QaPair(p["question"], _aliases(p.get("answer"), where,
                                                      "a QA pair's 'answer'")))
        return MultipleQAs(tuple(out))
    raise InputError(where, f"unknown annotation type {ann['type']!r}",
                     "expected 'singleAnswer' or 'multipleQAs'")


def parse_ambignq_example(obj: Any, where: str) -> AmbigNqExample:
    """Build one record from its JSON object; ``where`` names it in errors."""
    if not isinstance(obj, dict):
        raise InputError(where, f"expected an object, found {type(obj).__name__}",
                         "an AmbigNQ file is a JSON list of {id, question, annotations}")
    for key in ("id", "question", "annotations"):
        if key not in obj:
            raise InputError(where, f"missing key {key!r}",
                             "an AmbigNQ file is a JSON list of {id, question, annotations}")
    if not isinstance(obj["id"], str):
        # The official script looks predictions (JSON object keys, always strings) up by
        # this id: any other type fails there. Turning 5 into "5" would score a file no
        # official run can.
        raise InputError(where, f"'id' must be a string, found {type(obj['id']).__name__} "
                         f"{obj['id']!r:.40}", 'AmbigNQ ids are strings, e.g. '
                         '"-6631842452804060768"')
    if not isinstance(obj["question"], str):
        raise InputError(where, "'question' must be a string", "check the file")
    anns = obj["annotations"]
    if not isinstance(anns, list) or not anns:
        raise InputError(where, "'annotations' must be a non-empty list", "check the file")
    ex_id = obj["id"]
    nq_answer = obj.get("nq_answer")
    titles = obj.get("viewed_doc_titles")
    queries = obj.get("used_queries")
    return AmbigNqExample(
        id=ex_id,
        question=obj["question"],
        annotations=tuple(_annotation(a, f"{where} (id {ex_id})") for a in anns),
        nq_answer=tuple(nq_answer) if isinstance(nq_answer, list) else None,
        nq_doc_title=obj.get("nq_doc_title"),
        viewed_doc_titles=tuple(titles) if isinstance(titles, list) else None,
        used_queries=tuple(queries) if isinstance(queries, list) else None,
    )


def read_ambignq(path: PathLike) -> Iterator[AmbigNqExample]:
    """Read an AmbigNQ light or full file (one JSON list; plain or gzipped)."""
    data = read_json(path, what="AmbigNQ")
    if not isinstance(data, list):
        raise InputError(path, f"expected a JSON list of examples, found {type(data).__name__}",
                         "give an AmbigNQ file such as dev_light.json")
    if not data:
        raise InputError(path, "the AmbigNQ file holds no example", "give a non-empty file")
    seen: set[str] = set()
    for i, obj in enumerate(data):
        ex = parse_ambignq_example(obj, f"{path}: example {i}")
        if ex.id in seen:
            raise InputError(f"{path}: example {i}", f"duplicate id {ex.id}",
                             "ids must be unique")
        seen.add(ex.id)
        yield ex


@dataclass(frozen=True, slots=True)
class AmbigQaPrediction:
    """The prediction for one prompt question: answers, optionally with questions."""

    answers: tuple[str, ...]
    questions: tuple[str, ...] | None  # None for answers-only predictions


def _shown(pred: AmbigQaPrediction) -> str:
    return examples([list(pred.answers)], width=30)


def read_ambigqa_predictions(path: PathLike) -> dict[str, AmbigQaPrediction]:
    """Read ``{id: [answers]}`` or ``{id: [{"question", "answer"}]}`` predictions.

    Every value must be of one kind across the file (the official script decides the kind
    by the first element). An empty list is allowed (it scores 0). Integer-like keys are
    kept as strings. A string value is one answer when every value is a string (the
    official script wraps each in a list when the first is a string); strings mixed with
    lists are refused, as the official script refuses them. An id given twice (a JSON
    object may repeat a key; the official script keeps the last value) is refused when its
    predictions differ, and warned about when they are the same.
    """
    data = read_json(path, what="predictions", pairs=True)
    if not isinstance(data, ObjectPairs):
        raise InputError(path, f"expected a JSON object {{id: [...]}}, found "
                         f"{type(data).__name__}",
                         'write {"<id>": ["answer", ...]} or {"<id>": [{"question": ..., '
                         '"answer": ...}]}')
    if not data:
        raise InputError(path, "the predictions object is empty", "predict at least one id")
    out: dict[str, AmbigQaPrediction] = {}
    kind: str | None = None
    first_key, first = data[0]
    strings = isinstance(first, str)
    repeated = 0
    for key, value in data:
        where = f"{path}: id {key}"
        if isinstance(value, str) != strings:
            found, want = ("a list", "a string") if strings else ("a string", "a list")
            raise InputError(where, f"expected {want} like the value of id {first_key}, "
                             f"found {found} (strings and lists cannot mix)",
                             'give every id a list of answers ["..."] (or every id one '
                             'answer string)')
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise InputError(where, f"expected a list, found {type(value).__name__}",
                             "each value is a list of answers or of {question, answer}")
        if all(isinstance(v, str) for v in value):
            this = "answers" if value else None
            pred = AmbigQaPrediction(tuple(value), None)
        elif all(isinstance(v, dict) and isinstance(v.get("question"), str)
                 and isinstance(v.get("answer"), str) for v in value):
            this = "pairs"
            pred = AmbigQaPrediction(tuple(v["answer"] for v in value),
                                     tuple(v["question"] for v in value))
        else:
            raise InputError(where, f"wrong prediction shape {value!r:.80}",
                             'use ["answer", ...] or [{"question": "...", "answer": "..."}] '
                             "(strings only)")
        if this is not None:
            if kind is None:
                kind = this
            elif kind != this:
                raise InputError(where, f"mixes {this} with {kind} of earlier ids",
                                 "give every id the same kind of prediction")
        if key in out:
            if out[key] != pred:
                raise InputError(where, "is predicted twice, with different predictions "
                                 f"({_shown(out[key])} and {_shown(pred)})",
                                 "keep one prediction per id")
            repeated += 1
        out[key] = pred
    if repeated:
        from nqkit.report import warn

        warn(f"{path}: {repeated:,} id(s) are predicted twice, with the same prediction; "
             "it is used once")
    if kind == "pairs":
        # An empty list next to pairs is an empty set of pairs, not answers only.
        out = {k: (AmbigQaPrediction((), ()) if not v.answers else v) for k, v in out.items()}
    return out
