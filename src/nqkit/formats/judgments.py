"""Human judgments of model answers: oqaeval's annotation TSV.

Kamalloo et al. (ACL 2023, ``ehsk/OpenQA-eval``, ``NQ301_human.tsv``) release one row per
(question, model answer) with a header naming at least ``Question``, ``Model answer`` and
``Acceptable?``; columns named ``annotator...`` (``annotator1``..``annotator3`` in
``NQ301_human.tsv``: each person's own vote, ``Acceptable?`` being their majority) are
kept as written, for display (``nqkit browse --judgments``); other columns, such as
``id``, are kept out. The
file is read as oqaeval's ``data_utils.read_annotations`` reads it (Python's csv module,
tab-delimited, its default quoting): ``Acceptable?`` is ``Yes`` or ``No`` in any case and
with any surrounding spaces; a row whose verdict is empty is not a judgment and is
skipped. The model answer is kept exactly as written (oqaeval compares it unstripped).

Where oqaeval would crash (a verdict other than yes or no, a missing column, a short
row), :func:`read_judgments` raises :class:`InputError` at ``file:line``.

A file may also carry each question's gold answers in a ``Gold answers`` column, joined
by `` | `` (oqaeval's ``NQ301_BEM.tsv``): they are kept per question (first row's), for
what needs the gold (a judge audit's kinds of disagreement, an exact-match convention as
the judge); :func:`read_gold_answers` reads only that column.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from nqkit.errors import InputError, examples, location
from nqkit.io import PathLike, read_bytes

__all__ = ["COLUMNS", "GOLD_ANSWERS", "GOLD_SEPARATOR", "Judgment", "Judgments", "check_header",
           "gold_cell", "read_gold_answers", "read_judgments", "yes_no"]

QUESTION, ANSWER, VERDICT = "Question", "Model answer", "Acceptable?"
GOLD_ANSWERS, GOLD_SEPARATOR = "Gold answers", " | "  # NQ301_BEM.tsv's gold column
COLUMNS = (QUESTION, ANSWER, VERDICT)
_FIX = "write a header Question<TAB>Model answer<TAB>Acceptable? and Yes or No per row"


@dataclass(frozen=True, slots=True)
class Judgment:
    """One human verdict on one model answer to one question."""

    question: str  # the question text as the judgments file writes it
    answer: str  # the model answer judged, as written (not stripped)
    acceptable: bool  # Acceptable? is yes (True) or no (False)
    # the annotator columns (header name, value as written, stripped; "" : no vote), in
    # header order; () when the file has none. Shown, never scored: the verdict is
    # Acceptable? alone, as oqaeval reads it
    votes: tuple[tuple[str, str], ...] = ()
    where: str | None = field(default=None, compare=False)  # file:line, for messages


@dataclass(frozen=True, slots=True)
class Judgments:
    """The judgments of one file and the fingerprint of its bytes."""

    judgments: tuple[Judgment, ...]  # in file order
    sha256: str  # of the file's bytes (hex): the judgments' name in a signature
    # question -> its gold answers, when the file has a Gold answers column (else None)
    gold: dict[str, tuple[str, ...]] | None = field(default=None, compare=False)


def read_judgments(path: PathLike) -> Judgments:
    """The judgments of one oqaeval annotation TSV and its SHA-256, from its bytes read
    once (a FIFO works); rows with an empty ``Acceptable?`` are skipped.

    Raises :class:`InputError` at ``file:line`` for a file that is not UTF-8, a header
    without the three columns, a row without them, or a verdict other than yes or no.
    """
    data = read_bytes(path, what="judgments")
    gold: dict[str, tuple[str, ...]] = {}
    rows = tuple(_rows(path, data, gold))  # fills gold when there is a Gold answers column
    return Judgments(rows, hashlib.sha256(data).hexdigest(), gold or None)


def gold_cell(cell: str) -> tuple[str, ...]:
    """The gold answers of one ``Gold answers`` cell (joined by `` | ``)."""
    return tuple(a for a in cell.split(GOLD_SEPARATOR) if a.strip())


def read_gold_answers(path: PathLike) -> dict[str, tuple[str, ...]]:
    """Each question's gold answers from a TSV with ``Question`` and ``Gold answers``
    columns (oqaeval's ``NQ301_BEM.tsv``), the first row of a question giving them.

    Raises :class:`InputError` for a file without the two columns or not UTF-8.
    """
    data = read_bytes(path, what="gold")
    try:
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="strict")
        rows = csv.DictReader(text, delimiter="\t")
        header = rows.fieldnames or []
        if QUESTION not in header or GOLD_ANSWERS not in header:
            raise InputError(location(path, 1) or str(path), "the gold TSV's header lacks "
                             f"'{QUESTION}' or '{GOLD_ANSWERS}' (found "
                             f"{examples(header, quote=True)})", "give an NQ-open file, or a "
                             f"TSV with {QUESTION} and {GOLD_ANSWERS} (joined by ' | ')")
        out: dict[str, tuple[str, ...]] = {}
        for row in rows:
            q, cell = row.get(QUESTION), row.get(GOLD_ANSWERS)
            if q is not None and cell is not None:
                out.setdefault(q, gold_cell(cell))
    except UnicodeDecodeError as e:
        raise InputError(path, f"the gold file is not UTF-8 text ({e.reason})",
                         "save it as UTF-8") from None
    return out


def _rows(path: PathLike, data: bytes, gold: dict[str, tuple[str, ...]]) -> Iterator[Judgment]:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, f"the judgments file is not UTF-8 text ({e.reason} at byte "
                         f"{e.start:,})", "save it as UTF-8") from None
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")  # as open(): \r\n is \n
    rows = csv.DictReader(text, delimiter="\t")
    header = rows.fieldnames
    if not header:
        raise InputError(path, "the judgments file is empty", _FIX)
    check_header(path, header, _FIX)
    annotators = [c for c in header if c.strip().lower().startswith("annotator")]
    for row in rows:
        where = location(path, rows.line_num) or str(path)
        question, answer, verdict = (row.get(c) for c in COLUMNS)
        if question is None or answer is None or verdict is None:
            given = sum(v is not None for k, v in row.items() if k is not None)
            raise InputError(where, f"the row has {given} of the {len(header)} columns "
                             "of the header", _FIX)
        cell = row.get(GOLD_ANSWERS)
        if cell is not None:
            gold.setdefault(question, gold_cell(cell))
        acceptable = yes_no(verdict, where, f"'{VERDICT}'",
                            "write Yes or No, or leave it empty for an answer not judged")
        if acceptable is not None:
            votes = tuple((c, (row.get(c) or "").strip()) for c in annotators)
            yield Judgment(question, answer, acceptable, votes, where)


def check_header(path: PathLike, header: Sequence[str], fix: str) -> None:
    """Refuse, at line 1, a header without the three columns of oqaeval's TSVs."""
    absent = [c for c in COLUMNS if c not in header]
    if absent:
        raise InputError(location(path, 1) or str(path),
                         f"the header lacks {examples(absent, quote=True)} (found "
                         f"{examples(header, quote=True)})", fix)


def yes_no(value: object, where: str, what: str, fix: str) -> bool | None:
    """A verdict: Yes or No in any case and spacing (a JSON boolean too), None when empty
    (not judged); anything else refused at ``where``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("yes", "no"):
            return v == "yes"
        if not v:
            return None
    raise InputError(where, f"{what} is {value!r:.40}, not Yes or No", fix)
