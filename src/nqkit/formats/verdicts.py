"""A judge's verdicts on model answers: oqaeval's LLM-judge TSVs, or JSON lines.

Kamalloo et al. (ACL 2023, ``ehsk/OpenQA-eval``) release, next to the human judgments
(:mod:`nqkit.formats.judgments`), one TSV per LLM judge (``NQ301_gpt-4.tsv``,
``NQ301_text-davinci-003.tsv``) with the columns ``id``, ``Question``, ``Model answer``,
``Acceptable?`` and the judge's reply (a column named after the model). In these files
``Acceptable?`` is the *judge's* verdict read off its reply, not the human one: it is
``Yes`` where the reply begins with "Yes" (and for GPT-4's two "partially correct"
replies), ``No`` where it begins with "No", and empty where GPT-4 answered "I cannot
determine ...". So the verdict is ``Acceptable?`` (yes or no in any case, spaces
aside); an empty one is an abstention, counted and left out; any other value is refused
at ``file:line``.

``NQ301_text-davinci-003.tsv`` lost the tab between question and answer: every row has
one field fewer than the header, ``Question`` holding the question and the answer run
together. Such a row is kept with ``answer`` None and ``fused`` the joined text; the
audit (:mod:`nqkit.metrics.judge_audit`) finds its pair as the judged (question, answer)
whose concatenation it is.

A TSV with a ``Gold answers`` column (oqaeval's ``NQ301_BEM.tsv``, whose
``Acceptable?`` is BEM's verdict) also gives each question's gold answers (joined by
`` | ``), kept per question.

A JSON lines file holds one ``{"question", "answer", "verdict"}`` object a line, the
verdict ``true``/``false`` or ``"yes"``/``"no"``.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from nqkit.errors import InputError, location
from nqkit.formats.judgments import (
    ANSWER,
    GOLD_ANSWERS,
    QUESTION,
    VERDICT,
    check_header,
    gold_cell,
    yes_no,
)
from nqkit.io import PathLike, parse_json_line, read_bytes

__all__ = ["Verdict", "Verdicts", "read_verdicts"]

_FIX = ("give oqaeval's judge TSV (Question, Model answer, Acceptable? = Yes, No or empty) "
        "or JSON lines of {question, answer, verdict}")
_UNDECIDED = ("write Yes or No (true or false in JSON), or leave it empty for an answer the "
              "judge did not decide")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One judge's verdict on one model answer to one question."""

    question: str  # the question as written; the question and answer run together if fused
    answer: str | None  # the model answer as written; None when the row lost its tab
    acceptable: bool  # the judge says yes (True) or no (False)
    fused: bool = False  # question holds question + answer (a row one field short)
    where: str | None = field(default=None, compare=False)  # file:line, for messages


@dataclass(frozen=True, slots=True)
class Verdicts:
    """The verdicts of one file, its abstentions and the fingerprint of its bytes."""

    verdicts: tuple[Verdict, ...]  # in file order
    sha256: str  # of the file's bytes (hex)
    abstained: int = 0  # rows whose verdict is empty (the judge gave none)
    # question -> its gold answers, when the TSV has a Gold answers column (else None)
    gold: dict[str, tuple[str, ...]] | None = field(default=None, compare=False)


def read_verdicts(path: PathLike) -> Verdicts:
    """The verdicts of a judge TSV or a JSON lines file (``.jsonl``/``.json``), read once.

    Raises :class:`InputError` at ``file:line`` for a verdict other than yes or no, a
    missing column or key, or a file that is not UTF-8.
    """
    data = read_bytes(path, what="verdicts")
    digest = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, f"the verdicts file is not UTF-8 text ({e.reason} at byte "
                         f"{e.start:,})", "save it as UTF-8") from None
    gold: dict[str, tuple[str, ...]] | None = None
    if Path(str(path)).suffix in (".jsonl", ".json") or text.lstrip().startswith("{"):
        rows, abstained = _json_rows(path, data)
    else:
        rows, abstained, gold = _tsv_rows(path, data)
    return Verdicts(tuple(rows), digest, abstained, gold)


def _tsv_rows(path: PathLike, data: bytes
              ) -> tuple[list[Verdict], int, dict[str, tuple[str, ...]] | None]:
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    reader = csv.reader(text, delimiter="\t")
    header = next(reader, None)
    if not header:
        raise InputError(path, "the verdicts file is empty", _FIX)
    check_header(path, header, _FIX)
    q, a, v = (header.index(c) for c in (QUESTION, ANSWER, VERDICT))
    g = header.index(GOLD_ANSWERS) if GOLD_ANSWERS in header else None
    gold: dict[str, tuple[str, ...]] | None = None if g is None else {}
    out: list[Verdict] = []
    abstained = 0
    for row in reader:
        where = location(path, reader.line_num) or str(path)
        if not any(row):
            continue
        fused = len(row) == len(header) - 1 and q + 1 == a
        if fused:  # the tab between question and answer is lost: shift the rest back
            row = [*row[:a], "", *row[a:]]
        if len(row) < len(header):
            raise InputError(where, f"the row has {len(row)} of the {len(header)} columns "
                             "of the header", _FIX)
        if gold is not None and g is not None and not fused:
            gold.setdefault(row[q], gold_cell(row[g]))
        verdict = yes_no(row[v], where, f"'{VERDICT}'", _UNDECIDED)
        if verdict is None:
            abstained += 1
            continue
        out.append(Verdict(row[q], None if fused else row[a], verdict, fused, where))
    return out, abstained, gold


def _json_rows(path: PathLike, data: bytes) -> tuple[list[Verdict], int]:
    out: list[Verdict] = []
    abstained = 0
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        where = location(path, n) or str(path)
        obj = parse_json_line(line, where)
        if not isinstance(obj, dict) or not all(
                isinstance(obj.get(k), str) for k in ("question", "answer")) \
                or "verdict" not in obj:
            raise InputError(where, "the line is not an object with string 'question' "
                             "and 'answer' and a 'verdict'", _FIX)
        verdict = yes_no(obj["verdict"], where, "'verdict'", _UNDECIDED)
        if verdict is None:
            abstained += 1
            continue
        out.append(Verdict(obj["question"], obj["answer"], verdict, False, where))
    return out, abstained
