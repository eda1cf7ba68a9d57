"""NQ-open records: references ``{"question", "answer": [...]}`` and predictions.

NQ-open (Lee et al. 2019; ``nq_open/README.md`` of the NQ repository) is one JSON object
per line with the question text and the list of acceptable answer strings. The EfficientQA
test file adds ``answer_and_def_correct_predictions`` (gold answers plus predictions that
raters judged definitely correct); :func:`read_nq_open` takes the field name to read.
Predictions are JSON lines ``{"question", "prediction"}`` joined to references by the
question string, as in the official evaluation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from nqkit.errors import InputError, location
from nqkit.io import PathsLike, expand_paths, iter_lines, parse_json_line

__all__ = [
    "NqOpenExample",
    "NqOpenPrediction",
    "nq_open_to_json",
    "read_nq_open",
    "read_nq_open_predictions",
]


@dataclass(frozen=True, slots=True)
class NqOpenExample:
    """One NQ-open question with its acceptable answers."""

    question: str  # the question text, the join key of predictions
    answers: tuple[str, ...]  # acceptable answer strings (or regexes for CuratedTrec)


@dataclass(frozen=True, slots=True)
class NqOpenPrediction:
    """One predicted answer string for a question."""

    question: str  # the question text as in the references
    prediction: str  # the single predicted answer string


def _lines(paths: PathsLike, what: str) -> Iterator[tuple[str, dict[str, Any]]]:
    seen_any = False
    files = expand_paths(paths, what=what)
    for path in files:
        for lineno, raw in iter_lines(path):
            where = location(path, lineno) or str(path)
            obj = parse_json_line(raw, where)
            if not isinstance(obj, dict):
                raise InputError(where, f"expected a JSON object, found {type(obj).__name__}",
                                 "each line must be one JSON object {...}")
            seen_any = True
            yield where, obj
    if not seen_any:
        names = ", ".join(str(p) for p in files)
        raise InputError(names, f"the {what} file is empty", f"give a non-empty {what} file")


def _string_field(obj: dict[str, Any], key: str, where: str, example: str) -> str:
    if key not in obj:
        found = ", ".join(sorted(obj)) or "no keys"
        raise InputError(where, f"missing key {key!r} (found {found})",
                         f"each line must look like {example}")
    value = obj[key]
    if not isinstance(value, str):
        raise InputError(where, f"{key!r} must be a string, found {type(value).__name__}",
                         f"each line must look like {example}")
    return value


def read_nq_open(paths: PathsLike, *, answer_field: str = "answer") -> Iterator[NqOpenExample]:
    """Lazily read NQ-open reference lines; ``answer_field`` names the answer list.

    Raises :class:`InputError` at ``file:line`` for a missing question, a missing answer
    field or an answer field that is not a non-empty list of strings.
    """
    example = f'{{"question": "...", "{answer_field}": ["..."]}}'
    for where, obj in _lines(paths, "references"):
        question = _string_field(obj, "question", where, example)
        if answer_field not in obj:
            found = ", ".join(sorted(obj)) or "no keys"
            hint = (" (EfficientQA test references use 'answer_and_def_correct_predictions')"
                    if answer_field == "answer" else "")
            raise InputError(where, f"missing answer field {answer_field!r} (found {found})"
                             + hint, "choose the field with --answer-field")
        answers = obj[answer_field]
        if (not isinstance(answers, list) or not answers
                or not all(isinstance(a, str) for a in answers)):
            raise InputError(where, f"{answer_field!r} must be a non-empty list of strings, "
                             f"found {answers!r:.80}", f"each line must look like {example}")
        yield NqOpenExample(question=question, answers=tuple(answers))


def read_nq_open_predictions(paths: PathsLike) -> Iterator[NqOpenPrediction]:
    """Lazily read prediction lines ``{"question": ..., "prediction": ...}``."""
    example = '{"question": "...", "prediction": "..."}'
    for where, obj in _lines(paths, "predictions"):
        question = _string_field(obj, "question", where, example)
        prediction = _string_field(obj, "prediction", where, example)
        yield NqOpenPrediction(question=question, prediction=prediction)


def nq_open_to_json(example: NqOpenExample, *, answer_field: str = "answer") -> dict[str, Any]:
    """The JSON line of an example, mirror of :func:`read_nq_open`."""
    return {"question": example.question, answer_field: list(example.answers)}
