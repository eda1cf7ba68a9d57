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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from nqkit.errors import InputError, examples, location
from nqkit.io import (
    ObjectPairs,
    PathLike,
    PathsLike,
    expand_paths,
    iter_lines,
    parse_json_line,
    read_json,
)

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
    where: str | None = field(default=None, compare=False)  # file:line, for messages


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
        names = examples(files, width=None)
        raise InputError(names, f"the {what} file is empty", f"give a non-empty {what} file")


def _string_field(obj: dict[str, Any], key: str, where: str, example: str) -> str:
    if key not in obj:
        found = examples(sorted(obj)) or "no keys"
        raise InputError(where, f"missing key {key!r} (found {found})",
                         f"each line must look like {example}")
    value = obj[key]
    if not isinstance(value, str):
        raise InputError(where, f"{key!r} must be a string, found {type(value).__name__}",
                         f"each line must look like {example}")
    return value


def read_nq_open(paths: PathsLike, *, answer_field: str = "answer",
                 field_option: str | None = "--answer-field") -> Iterator[NqOpenExample]:
    """Lazily read NQ-open reference lines; ``answer_field`` names the answer list.

    ``field_option`` is the caller's option that chooses the field, named in the message
    for a missing one (``None``: the caller has none, the file must use ``answer_field``).

    Raises :class:`InputError` at ``file:line`` for a missing question, a missing answer
    field or an answer field that is not a non-empty list of strings.
    """
    example = f'{{"question": "...", "{answer_field}": ["..."]}}'
    for where, obj in _lines(paths, "gold"):
        question = _string_field(obj, "question", where, example)
        if answer_field not in obj:
            found = examples(sorted(obj)) or "no keys"
            hint = (" (EfficientQA test gold uses 'answer_and_def_correct_predictions')"
                    if answer_field == "answer" else "")
            raise InputError(where, f"missing answer field {answer_field!r} (found {found})"
                             + hint, f"choose the field with {field_option}" if field_option
                             else f"each line must look like {example}")
        answers = obj[answer_field]
        if (not isinstance(answers, list) or not answers
                or not all(isinstance(a, str) for a in answers)):
            raise InputError(where, f"{answer_field!r} must be a non-empty list of strings, "
                             f"found {answers!r:.80}", f"each line must look like {example}")
        yield NqOpenExample(question=question, answers=tuple(answers), where=where)


def read_nq_open_predictions(paths: PathsLike) -> Iterator[NqOpenPrediction]:
    """Lazily read predictions: JSON lines ``{"question": ..., "prediction": ...}`` (the
    official format), or a JSON object ``{question: prediction, ...}``, or a JSON list of
    ``{"question", "prediction"}`` objects (common outputs of QA systems).

    A file is read as one JSON document when its first line is not a complete
    ``{"question", "prediction"}`` object; an object is taken as the mapping form only
    when it has neither a ``question`` nor a ``prediction`` key, so the forms never mix up.
    """
    example = '{"question": "...", "prediction": "..."}'
    files = expand_paths(paths, what="predictions")
    seen_any = False
    for path in files:
        if _is_json_document(path):
            for pred in _document_items(path, example):
                seen_any = True
                yield pred
            continue
        for where, obj in _lines(path, "predictions"):
            seen_any = True
            question = _string_field(obj, "question", where, example)
            prediction = _string_field(obj, "prediction", where, example)
            yield NqOpenPrediction(question=question, prediction=prediction)
    if not seen_any:
        raise InputError(examples(files, width=None), "the predictions file is empty",
                         "give a non-empty predictions file")


def _is_json_document(path: Path) -> bool:
    """True when ``path`` holds one JSON document (object or list), not JSON lines."""
    for _, raw in iter_lines(path):
        try:
            first = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw.lstrip()[:1] in (b"{", b"[")  # a pretty-printed document
        if isinstance(first, list):  # a list of objects; a line like ["q", "a"] is an error
            return all(isinstance(x, dict) for x in first[:1])
        return isinstance(first, dict) and "question" not in first and "prediction" not in first
    return False


def _document_items(path: Path, example: str) -> Iterator[NqOpenPrediction]:
    # an object's pairs, a question given twice kept: the scorer counts it as it counts
    # a question on two lines (a warning; the last one is used, as the official script
    # does with lines)
    data = read_json(path, what="predictions", pairs=True)
    if isinstance(data, ObjectPairs):
        for question, prediction in data:
            where = f"{path}: question {examples([question], quote=True)}"
            if not isinstance(prediction, str):
                raise InputError(where, f"the prediction must be a string, found "
                                 f"{type(prediction).__name__}",
                                 'write {"question": "answer", ...} or JSON lines '
                                 + example)
            yield NqOpenPrediction(question=question, prediction=prediction)
    elif isinstance(data, list):
        for i, obj in enumerate(data):
            where = f"{path}: item {i}"
            if not isinstance(obj, dict):
                raise InputError(where, f"expected an object, found {type(obj).__name__}",
                                 f"each item must look like {example}")
            yield NqOpenPrediction(
                question=_string_field(obj, "question", where, example),
                prediction=_string_field(obj, "prediction", where, example))
    else:
        raise InputError(path, f"expected JSON lines, an object or a list, found "
                         f"{type(data).__name__}", f"write one {example} per line")


def nq_open_to_json(example: NqOpenExample, *, answer_field: str = "answer") -> dict[str, Any]:
    """The JSON line of an example, mirror of :func:`read_nq_open`."""
    return {"question": example.question, answer_field: list(example.answers)}


def nq_open_from_nq(obj: dict[str, Any], where: str, *, max_tokens: int = 5
                    ) -> NqOpenExample | None:
    """Convert one NQ example (original format, as a JSON dict) to NQ-open, or ``None``.

    As ORQA's ``convert_to_nq_open.py``: every short answer of every annotation that spans
    at most ``max_tokens`` tokens contributes the visible text of its HTML bytes; the
    example is kept when there is at least one; answers are deduplicated (first occurrence
    order here, where the original used an unordered set). The question is
    ``question_text`` unchanged.
    """
    from nqkit.text.html import html_span_text

    html = obj.get("document_html")
    if not isinstance(html, str):
        hint = (" (this looks like the simplified format, which has no HTML)"
                if "document_text" in obj else "")
        raise InputError(where, "missing string 'document_html'" + hint,
                         "NQ-open conversion needs the original NQ format")
    question = obj.get("question_text")
    annotations = obj.get("annotations")
    if not isinstance(question, str) or not isinstance(annotations, list):
        raise InputError(where, "missing 'question_text' or 'annotations'",
                         "give NQ examples in the original format")
    html_bytes: bytes | None = None
    answers: dict[str, None] = {}
    for ann in annotations:
        for sa in ann.get("short_answers", []) if isinstance(ann, dict) else ():
            try:
                start_tok, end_tok = int(sa["start_token"]), int(sa["end_token"])
                start_b, end_b = int(sa["start_byte"]), int(sa["end_byte"])
            except (KeyError, TypeError, ValueError) as e:
                raise InputError(where, f"a short answer lacks token/byte offsets ({e!r})",
                                 "short answers need start/end_token and start/end_byte"
                                 ) from e
            if end_tok - start_tok > max_tokens:
                continue
            if html_bytes is None:
                html_bytes = html.encode("utf-8")
            if not 0 <= start_b <= end_b <= len(html_bytes):
                raise InputError(where, f"short answer bytes [{start_b}, {end_b}) lie outside "
                                 f"the {len(html_bytes):,}-byte document",
                                 "check that the file is unmodified NQ data")
            answers[html_span_text(html_bytes, start_b, end_b)] = None
    if not answers:
        return None
    return NqOpenExample(question=question, answers=tuple(answers))


def convert_nq_to_open(inputs: PathsLike, output: PathLike, *, max_tokens: int = 5) -> None:
    """``nqkit convert nq-open``: NQ examples (original format) to NQ-open lines, as ORQA's
    convert_to_nq_open.py converts them (:func:`nq_open_from_nq`), streaming, in input
    order; the counts on stderr."""
    from nqkit.formats.nq import ExampleIds, validate_nq_json
    from nqkit.io import check_output, write_jsonl
    from nqkit.report import progress, say

    if max_tokens < 1:
        raise InputError(None, f"--max-tokens must be positive, found {max_tokens}",
                         "the official conversion uses 5")
    paths = expand_paths(inputs, what="NQ")
    check_output(output, paths, option="-o")
    counts = {"read": 0, "kept": 0}

    def converted() -> Iterator[dict[str, Any]]:
        ids = ExampleIds(paths)  # a repeated example would be a repeated question
        for file_no, path in enumerate(paths):
            for lineno, raw in progress(iter_lines(path), desc=path.name, unit="ex"):
                where = location(path, lineno) or str(path)
                obj = parse_json_line(raw, where)
                if not isinstance(obj, dict):
                    raise InputError(where, f"expected a JSON object, found "
                                     f"{type(obj).__name__}", "give NQ JSON lines")
                counts["read"] += 1
                ex = nq_open_from_nq(obj, where, max_tokens=max_tokens)
                validate_nq_json(obj, where)  # after the conversion's own, pointed checks
                ids.add(obj["example_id"], file_no, lineno)
                if ex is not None:
                    counts["kept"] += 1
                    yield nq_open_to_json(ex)
        if counts["read"] == 0:
            raise InputError(examples(paths, width=None), "the NQ input holds no example",
                             "give non-empty NQ files")

    write_jsonl(output, converted())
    say(f"{counts['kept']:,} of {counts['read']:,} examples have a short answer of at most "
        f"{max_tokens} tokens; wrote {output}")
