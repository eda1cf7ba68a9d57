"""Questions to retrieve for, with their gold answers, from the usual open-domain files.

* DPR QA files (``nq-test.qa.tsv``, ``.qa.csv``): ``question<TAB>['answer', ...]`` per
  line (DPR's ``.csv`` files are tab-separated too; a comma-separated file is read as CSV);
  question ids are the 0-based line positions, as DPR's result files are ordered.
* NQ-open JSON lines (``NQ-open.dev.jsonl``): ``{"question", "answer": [...]}``; ids are
  0-based positions.
* AmbigNQ (``dev_light.json``): ids are the AmbigNQ ids; the answers are every answer of
  every annotation (single answers and the answers of all question-answer pairs), in
  order without repeats — a passage "has the answer" when it contains any of them, the
  convention of retrieval recall on AmbigQA (Min et al. 2020, §5).
"""

from __future__ import annotations

import ast
import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nqkit.errors import InputError, location
from nqkit.io import PathLike, decode_utf8, expand_paths, iter_lines

__all__ = ["Question", "read_questions"]


@dataclass(frozen=True, slots=True)
class Question:
    """One question to retrieve passages for."""

    qid: str  # the id in TREC runs: a 0-based position, or the AmbigNQ id
    question: str
    answers: tuple[str, ...]  # gold answers (for has_answer and --eval)


def _comma_csv(path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    for lineno, raw in iter_lines(path):
        where = location(path, lineno)
        line = decode_utf8(raw, where).rstrip("\r\n")
        fields = next(csv.reader([line]))
        if len(fields) != 2:
            raise InputError(where, f"expected 2 fields (question, answers), found {len(fields)}",
                             "each line is question,['answer', ...] (or tab-separated)")
        try:
            answers = ast.literal_eval(fields[1])
        except (ValueError, SyntaxError) as e:
            raise InputError(where, f"the answers are not a Python list literal ({e})",
                             "write answers as ['a', 'b']") from None
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise InputError(where, "the answers must be a list of strings",
                             "write answers as ['a', 'b']")
        yield fields[0], tuple(answers)


def _first_line(path: Path) -> bytes:
    for _, raw in iter_lines(path):
        return raw
    return b""


def read_questions(path: PathLike) -> list[Question]:
    """Read a DPR qa.tsv/csv, NQ-open JSONL or AmbigNQ JSON file (by its name)."""
    (p,) = expand_paths(path, what="questions")
    name = p.name.lower()
    out: list[Question] = []
    if name.endswith((".tsv", ".tsv.gz", ".csv", ".csv.gz")):
        from nqkit.formats.dpr import read_dpr_qa_tsv

        rows = (read_dpr_qa_tsv(p) if b"\t" in _first_line(p) or ".tsv" in name
                else _comma_csv(p))
        out = [Question(str(i), q, a) for i, (q, a) in enumerate(rows)]
    elif name.endswith((".jsonl", ".jsonl.gz")):
        from nqkit.formats.nq_open import read_nq_open

        out = [Question(str(i), ex.question, ex.answers) for i, ex in enumerate(read_nq_open(p))]
    elif name.endswith((".json", ".json.gz")):
        from nqkit.formats.ambignq import SingleAnswer, read_ambignq

        for ex in read_ambignq(p):
            answers: list[str] = []
            for ann in ex.annotations:
                group = (ann.answers if isinstance(ann, SingleAnswer)
                         else tuple(a for qa in ann.qa_pairs for a in qa.answers))
                answers.extend(a for a in group if a not in answers)
            out.append(Question(ex.id, ex.question, tuple(answers)))
    else:
        raise InputError(p, "unknown questions format", "give a DPR .qa.tsv/.qa.csv, an "
                         "NQ-open .jsonl or an AmbigNQ .json file")
    if not out:
        raise InputError(p, "the questions file holds no question", "give a non-empty file")
    return out
