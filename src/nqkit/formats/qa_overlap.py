"""QA-Overlap files: test-train overlap annotations and row-ordered predictions.

Lewis, Stenetorp and Riedel (2021), "Question and Answer Test-Train Overlap in
Open-Domain Question Answering Datasets" (EACL; ``facebookresearch/QA-Overlap``), release
one annotation file per test set, ``nq-annotations.jsonl`` for NQ: one JSON object per
line, ``{"id": <int>, "labels": ["total", "answer_overlap", ...]}``. The **row-order
contract**: ``id`` is the 0-based line number of the question in the test file the
release pairs it with (``nq-test.qa.csv``, DPR's tab-separated NQ test file: 3,610
lines, the questions of NQ-open dev in DPR's order, which is not the order of
``NQ-open.dev.jsonl``). Predictions for the official evaluation follow the same order:
a text file with one answer per line (each line stripped of surrounding whitespace), or,
for a file whose name ends in ``json`` or ``.jsonl``, JSON lines ``{"id", "prediction"}``.

Labels are among :data:`LABELS`; ``question_overlap`` and ``no_question_overlap`` are the
human judgement, given for about 1,000 of the 3,610 NQ questions only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nqkit.errors import InputError, examples, location
from nqkit.io import PathLike, decode_utf8, expand_paths, iter_lines, parse_json_line

__all__ = [
    "LABELS",
    "OverlapAnnotation",
    "RowPrediction",
    "annotation_to_json",
    "check_rows",
    "read_overlap_annotations",
    "read_row_predictions",
]

# The labels of the official annotation files, in the order the official script prints them.
LABELS: tuple[str, ...] = (
    "total",
    "question_overlap",
    "no_question_overlap",
    "answer_overlap",
    "no_answer_overlap",
    "answer_overlap_only",
)

_EXAMPLE = '{"id": 0, "labels": ["total", "answer_overlap"]}'


@dataclass(frozen=True, slots=True)
class OverlapAnnotation:
    """The labels of one test question (one line of an annotation file)."""

    id: int  # 0-based row of the question in the paired test file
    labels: tuple[str, ...]  # among LABELS, as given
    where: str | None = field(default=None, compare=False)  # file:line, for messages


@dataclass(frozen=True, slots=True)
class RowPrediction:
    """One prediction of a row-ordered predictions file."""

    id: int  # 0-based row of the test file
    prediction: str
    where: str | None = field(default=None, compare=False)


def read_overlap_annotations(path: PathLike) -> Iterator[OverlapAnnotation]:
    """Lazily read an annotation file in the official format.

    Raises :class:`InputError` at ``file:line`` for a line that is not such an object, an
    id that is not a non-negative integer or repeats, and a label not in :data:`LABELS`.
    """
    seen: set[int] = set()
    any_line = False
    for file in expand_paths(path, what="annotations"):
        for lineno, raw in iter_lines(file):
            where = location(file, lineno) or str(file)
            obj = parse_json_line(raw, where)
            if not isinstance(obj, dict) or "id" not in obj or "labels" not in obj:
                raise InputError(where, f"expected an object with 'id' and 'labels', found "
                                 f"{str(obj)[:60]!r}", f"each line looks like {_EXAMPLE}")
            ident = obj["id"]
            if isinstance(ident, bool) or not isinstance(ident, int) or ident < 0:
                raise InputError(where, f"'id' must be a non-negative integer (the row of the "
                                 f"test file), found {ident!r}", f"each line looks like {_EXAMPLE}")
            if ident in seen:
                raise InputError(where, f"id {ident} appears twice", "give each row once")
            labels = obj["labels"]
            if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
                raise InputError(where, f"'labels' must be a list of strings, found {labels!r:.60}",
                                 f"each line looks like {_EXAMPLE}")
            unknown = [x for x in labels if x not in LABELS]
            if unknown:
                raise InputError(where, f"unknown label(s) {examples(unknown, quote=True)}",
                                 f"labels are among {', '.join(LABELS)}")
            seen.add(ident)
            any_line = True
            yield OverlapAnnotation(ident, tuple(labels), where)
    if not any_line:
        raise InputError(path, "the annotation file is empty", "give a non-empty file")


def annotation_to_json(annotation: OverlapAnnotation) -> dict[str, Any]:
    """The official line of one annotation."""
    return {"id": annotation.id, "labels": list(annotation.labels)}


def _split_lines(text: str) -> list[str]:
    """Lines as Python's text files give them (universal newlines: ``\\n``, ``\\r\\n`` and
    a lone ``\\r`` end a line), without a last empty piece after a final newline."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _is_jsonl_name(path: Path) -> bool:
    # the official rule: a name ending in "json" or ".jsonl" is JSON lines
    return path.name.endswith(("json", ".jsonl"))


def read_row_predictions(path: PathLike) -> list[RowPrediction]:
    """Read row-ordered predictions as the official QA-Overlap evaluation does.

    A file whose name ends in ``json`` or ``.jsonl`` holds JSON lines ``{"id": <int>,
    "prediction": <str>}``; any other file holds one answer per line, the ``i``-th line
    (0-based) answering row ``i``, each line stripped of surrounding whitespace (an empty
    line is an empty answer).
    """
    files = expand_paths(path, what="predictions")
    if len(files) != 1:
        raise InputError(path, f"names {len(files)} files, expected one predictions file",
                         "give one file")
    file = files[0]
    if not _is_jsonl_name(file):
        with open(file, "rb") as f:
            raw = f.read()
        text = decode_utf8(raw, str(file))
        return [RowPrediction(i, line.strip(), location(file, i + 1))
                for i, line in enumerate(_split_lines(text))]
    out: list[RowPrediction] = []
    seen: set[int] = set()
    example = '{"id": 0, "prediction": "..."}'
    for lineno, raw_line in iter_lines(file):
        where = location(file, lineno) or str(file)
        obj = parse_json_line(raw_line, where)
        if not isinstance(obj, dict):
            raise InputError(where, f"expected a JSON object, found {type(obj).__name__}",
                             f"each line looks like {example}")
        ident, pred = obj.get("id"), obj.get("prediction")
        if isinstance(ident, bool) or not isinstance(ident, int) or ident < 0:
            raise InputError(where, f"'id' must be a non-negative integer row, found {ident!r}",
                             f"each line looks like {example}")
        if not isinstance(pred, str):
            raise InputError(where, f"'prediction' must be a string, found {pred!r:.40}",
                             f"each line looks like {example}")
        if ident in seen:
            raise InputError(where, f"id {ident} appears twice", "predict each row once")
        seen.add(ident)
        out.append(RowPrediction(ident, pred, where))
    return out


def check_rows(ids: Iterable[int], n: int, what: str, where: str | None) -> None:
    """Refuse ``ids`` that are not exactly the rows ``0 .. n-1`` of the test file (the
    official script asserts this and stops)."""
    got = set(ids)
    missing = sorted(set(range(n)) - got)
    extra = sorted(got - set(range(n)))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing):,} rows have none (e.g. {examples(missing, more=False)})")
        if extra:
            parts.append(f"{len(extra):,} ids are not rows of the {n:,}-line test file "
                         f"(e.g. {examples(extra, more=False)})")
        raise InputError(where, f"the {what} do not cover the test file row by row: "
                         + "; ".join(parts),
                         f"give one {what[:-1]} per row 0..{n - 1} of the test file, in its "
                         "order")
