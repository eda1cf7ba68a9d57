"""NQ-open records: references ``{"question", "answer": [...]}`` and predictions.

NQ-open (Lee et al. 2019; ``nq_open/README.md`` of the NQ repository) is one JSON object
per line with the question text and the list of acceptable answer strings. The EfficientQA
test file adds ``answer_and_def_correct_predictions`` (gold answers plus predictions that
raters judged definitely correct); :func:`read_nq_open` takes the field name to read.
Predictions are JSON lines ``{"question", "prediction"}`` joined to references by the
question string, as in the official evaluation.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from nqkit.errors import InputError, examples, location
from nqkit.formats.harness import (
    FLASHRAG,
    FORMAT_NAMES,
    LM_EVAL,
    OQAEVAL,
    PLAIN,
    SHAPES_HINT,
    FirstFilter,
    flashrag_answers,
    flashrag_prediction,
    is_flashrag_item,
    is_lm_eval_sample,
    lm_eval_answers,
    lm_eval_prediction,
    lm_eval_question,
)
from nqkit.io import (
    ObjectPairs,
    PathLike,
    PathsLike,
    expand_paths,
    iter_lines,
    parse_json_document,
    parse_json_line,
    read_bytes,
)

__all__ = [
    "NqOpenExample",
    "NqOpenPrediction",
    "NqOpenPredictions",
    "nq_open_to_json",
    "read_nq_open",
    "read_nq_open_predictions",
    "read_predictions",
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
    # the gold answers the file carries beside it (harness outputs and released files:
    # nqkit.formats.answer_versions compares them with the gold scored against); None:
    # none, or not a non-empty list of strings
    answers: tuple[str, ...] | None = None


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

    The gold that harnesses' output files carry is read too (:mod:`nqkit.formats.harness`):
    lm-eval samples (the ``doc``'s question and ``answer_field``) and FlashRAG's saved
    data (``golden_answers``); oqaeval-style lines are NQ-open lines. Each file is read
    once (a FIFO too).

    ``field_option`` is the caller's option that chooses the field, named in the message
    for a missing one (``None``: the caller has none, the file must use ``answer_field``).

    Raises :class:`InputError` at ``file:line`` for a missing question, a missing answer
    field or an answer field that is not a non-empty list of strings.
    """
    files = expand_paths(paths, what="gold")
    seen_any = False
    for path in files:
        lines = iter_lines(path)
        head = next(lines, None)
        if head is None:
            continue
        first = _try_json(head[1])
        if (first is None and head[1].lstrip()[:1] == b"[") or (
                isinstance(first, list) and first and isinstance(first[0], dict)):
            # one JSON document (FlashRAG's indented list): the rest of this one reading
            data = head[1] + b"".join(raw for _, raw in lines)
            for ex in _flashrag_gold(path, data, answer_field, field_option):
                seen_any = True
                yield ex
            continue
        samples = isinstance(first, dict) and is_lm_eval_sample(first)
        keep = FirstFilter()
        for lineno, raw in itertools.chain([head], lines):
            where = location(path, lineno) or str(path)
            obj = parse_json_line(raw, where)
            if not isinstance(obj, dict):
                raise InputError(where, f"expected a JSON object, found {type(obj).__name__}",
                                 "each line must be one JSON object {...}")
            seen_any = True
            if samples:
                if not is_lm_eval_sample(obj):
                    raise _not_like_first(where, obj, LM_EVAL)
                if keep.keep(obj):
                    yield NqOpenExample(lm_eval_question(obj, where),
                                        lm_eval_answers(obj, where, answer_field), where)
                continue
            yield _gold_line(obj, where, answer_field, field_option)
    if not seen_any:
        names = examples(files, width=None)
        raise InputError(names, "the gold file is empty", "give a non-empty gold file")


def _gold_line(obj: dict[str, Any], where: str, answer_field: str,
               field_option: str | None) -> NqOpenExample:
    example = f'{{"question": "...", "{answer_field}": ["..."]}}'
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
    return NqOpenExample(question=question, answers=tuple(answers), where=where)


def _flashrag_gold(path: Path, data: bytes, answer_field: str, field_option: str | None
                   ) -> Iterator[NqOpenExample]:
    """The gold of FlashRAG's saved data: each item's question and ``golden_answers``."""
    items = parse_json_document(data, path, what="gold")
    if not isinstance(items, list) or not all(
            isinstance(x, dict) and is_flashrag_item(x) for x in items[:1]):
        raise InputError(path, "a JSON document, not NQ-open gold lines nor FlashRAG's "
                         "saved data", 'give JSON lines {"question": "...", "answer": '
                         '["..."]}')
    if answer_field != "answer":
        raise InputError(path, f"FlashRAG's saved data holds its gold in 'golden_answers', "
                         f"not {answer_field!r}", f"drop {field_option or '--answer-field'}")
    for i, obj in enumerate(items):
        where = f"{path}: item {i}"
        if not isinstance(obj, dict) or not is_flashrag_item(obj):
            raise _not_like_first(where, obj, FLASHRAG)
        question = _string_field(obj, "question", where, '{"question": "...", ...}')
        yield NqOpenExample(question, flashrag_answers(obj, where), where)


def _try_json(raw: bytes) -> Any:
    """``raw`` parsed, or None when it is not one complete JSON value."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _not_like_first(where: str, obj: Any, shape: str) -> InputError:
    found = (f"an object with keys {examples(sorted(obj)) or 'none'}"
             if isinstance(obj, dict) else f"a {type(obj).__name__}")
    return InputError(where, f"expected {FORMAT_NAMES[shape]} as in the first record, "
                      f"found {found}", "give one file of one shape")


@dataclass(frozen=True, slots=True)
class NqOpenPredictions:
    """The predictions of one or more files, and the shape they were read in."""

    predictions: tuple[NqOpenPrediction, ...]  # in file order
    format: str  # nqkit.formats.harness: "nqkit" (plain), "lm-eval-samples", "flashrag",
    # "oqaeval"; the formats joined by "+" when the files differ


def read_nq_open_predictions(paths: PathsLike) -> Iterator[NqOpenPrediction]:
    """The predictions of :func:`read_predictions`, one by one."""
    yield from read_predictions(paths).predictions


def read_predictions(paths: PathsLike) -> NqOpenPredictions:
    """Read NQ-open predictions in any shape nqkit knows, recognised by their content:

    * JSON lines ``{"question": ..., "prediction": ...}`` (the official format);
    * a JSON object ``{question: prediction, ...}``, or a JSON list of
      ``{"question", "prediction"}`` objects (common outputs of QA systems);
    * the output files of harnesses (:mod:`nqkit.formats.harness`): lm-evaluation-harness
      ``--log_samples`` lines (the raw generation ``resps[0][0]``), FlashRAG's saved data
      (``output.pred``), oqaeval-style lines ``{"question", "answer", "prediction"}``.

    A file is read as one JSON document when its first line is not a complete record of
    a line shape; an object is taken as the mapping form only when it has none of their
    keys, so the forms never mix up. Each file is read exactly once, its bytes looked at
    and then parsed: a FIFO or ``<(cat preds.jsonl)`` loses nothing.
    """
    files = expand_paths(paths, what="predictions")
    out: list[NqOpenPrediction] = []
    formats: list[str] = []
    for path in files:
        shape, preds = _file_predictions(path)
        out += preds
        if shape not in formats:
            formats.append(shape)
    if not out:
        raise InputError(examples(files, width=None), "the predictions file is empty",
                         "give a non-empty predictions file")
    return NqOpenPredictions(tuple(out), "+".join(formats))


_EXAMPLE = '{"question": "...", "prediction": "..."}'


def _data_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line_number, line)`` of ``data``, blank lines skipped (as :func:`iter_lines`)."""
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if line and not line.isspace():
            yield lineno, line


def _line_shape(obj: dict[str, Any]) -> str | None:
    if is_lm_eval_sample(obj):
        return LM_EVAL
    if "question" in obj or "prediction" in obj:
        return OQAEVAL if "prediction" in obj and isinstance(obj.get("answer"), list) \
            else PLAIN
    return None


def _file_predictions(path: Path) -> tuple[str, list[NqOpenPrediction]]:
    """The shape and the predictions of one file, from its bytes read once."""
    data = read_bytes(path, what="predictions")
    head = next(_data_lines(data), None)
    if head is None:
        return PLAIN, []
    first = _try_json(head[1])
    shape = _line_shape(first) if isinstance(first, dict) else None
    # a list on the first line is a document of objects; a line like ["q", "a"] an error
    if shape is None and (
            isinstance(first, dict)
            or (isinstance(first, list) and all(isinstance(x, dict) for x in first[:1]))
            or (first is None and head[1].lstrip()[:1] in (b"{", b"["))):
        if isinstance(first, dict) and _try_json(data) is None:
            raise InputError(location(path, head[0]) or str(path),
                             f"an object with keys {examples(sorted(first)) or 'none'} is "
                             "no predictions shape nqkit reads", SHAPES_HINT)
        return _document_predictions(path, data)
    preds: list[NqOpenPrediction] = []
    keep = FirstFilter()
    for lineno, raw in _data_lines(data):
        where = location(path, lineno) or str(path)
        obj = parse_json_line(raw, where)
        if not isinstance(obj, dict):
            raise InputError(where, f"expected a JSON object, found {type(obj).__name__}",
                             "each line must be one JSON object {...}")
        if shape == LM_EVAL:
            if not is_lm_eval_sample(obj):
                raise _not_like_first(where, obj, LM_EVAL)
            if keep.keep(obj):
                doc = obj.get("doc")
                preds.append(NqOpenPrediction(
                    lm_eval_question(obj, where), lm_eval_prediction(obj, where),
                    _carried(doc.get("answer") if isinstance(doc, dict) else None)))
            continue
        preds.append(NqOpenPrediction(_string_field(obj, "question", where, _EXAMPLE),
                                      _string_field(obj, "prediction", where, _EXAMPLE),
                                      _carried(obj.get("answer"))))
    return shape or PLAIN, preds


def _carried(answers: Any) -> tuple[str, ...] | None:
    """A gold list a predictions file carries, when it is one (else None: the file is
    read as predictions only, its gold field is not ours to refuse)."""
    if (isinstance(answers, list) and answers
            and all(isinstance(a, str) for a in answers)):
        return tuple(answers)
    return None


def _document_predictions(path: Path, data: bytes) -> tuple[str, list[NqOpenPrediction]]:
    # an object's pairs, a question given twice kept: the scorer counts it as it counts
    # a question on two lines (a warning; the last one is used, as the official script
    # does with lines)
    doc = parse_json_document(data, path, what="predictions", pairs=True)
    preds: list[NqOpenPrediction] = []
    if isinstance(doc, ObjectPairs):
        for question, prediction in doc:
            where = f"{path}: question {examples([question], quote=True)}"
            if not isinstance(prediction, str):
                raise InputError(where, f"the prediction must be a string, found "
                                 f"{type(prediction).__name__}",
                                 'write {"question": "answer", ...} or JSON lines '
                                 + _EXAMPLE)
            preds.append(NqOpenPrediction(question=question, prediction=prediction))
        return PLAIN, preds
    if not isinstance(doc, list):
        raise InputError(path, f"expected JSON lines, an object or a list, found "
                         f"{type(doc).__name__}", f"write one {_EXAMPLE} per line")
    flashrag = bool(doc) and isinstance(doc[0], dict) and is_flashrag_item(doc[0])
    for i, obj in enumerate(doc):
        where = f"{path}: item {i}"
        if not isinstance(obj, dict):
            raise InputError(where, f"expected an object, found {type(obj).__name__}",
                             f"each item must look like {_EXAMPLE}")
        if flashrag:
            if not is_flashrag_item(obj):
                raise _not_like_first(where, obj, FLASHRAG)
            preds.append(NqOpenPrediction(
                _string_field(obj, "question", where, '{"question": "...", ...}'),
                flashrag_prediction(obj, where), _carried(obj.get("golden_answers"))))
            continue
        if i == 0 and "question" not in obj and "prediction" not in obj:
            raise InputError(where, f"an object with keys {examples(sorted(obj)) or 'none'}"
                             " is no predictions shape nqkit reads", SHAPES_HINT)
        preds.append(NqOpenPrediction(_string_field(obj, "question", where, _EXAMPLE),
                                      _string_field(obj, "prediction", where, _EXAMPLE)))
    return FLASHRAG if flashrag else PLAIN, preds


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
