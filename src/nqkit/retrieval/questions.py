"""Questions to retrieve for, with their gold answers, from the usual open-domain files.

The files are read by :func:`nqkit.formats.qa_files.iter_qa_file` (DPR QA files, NQ-open
JSON lines, AmbigNQ JSON with every answer of every annotation — a passage "has the
answer" when it contains any of them, the convention of retrieval recall on AmbigQA, Min
et al. 2020, §5). Question ids: the 0-based line positions for DPR and NQ-open files (as
DPR's result files are ordered), the AmbigNQ ids for AmbigNQ.
"""

from __future__ import annotations

from dataclasses import dataclass

from nqkit.errors import InputError, for_example
from nqkit.formats.qa_files import is_qa_file, iter_qa_file
from nqkit.io import PathLike, expand_paths

__all__ = ["Question", "read_questions"]


@dataclass(frozen=True, slots=True)
class Question:
    """One question to retrieve passages for."""

    qid: str  # the id in TREC runs: a 0-based position, or the AmbigNQ id
    question: str
    answers: tuple[str, ...]  # gold answers (for has_answer and --eval)


def read_questions(path: PathLike) -> list[Question]:
    """Read a DPR qa.tsv/csv, NQ-open JSONL or AmbigNQ JSON file (by its name).

    An empty (or blank) question is refused, naming its place: nothing can be retrieved
    for it (every passage scores 0 under BM25, and a dense encoder embeds the empty
    string), yet it would get a ranked list and count in the recall as a real question.
    Skipping it with a warning would renumber the positional ids of DPR and NQ-open
    files, which runs and results are joined on.
    """
    (p,) = expand_paths(path, what="questions")
    if not is_qa_file(p):
        raise InputError(p, "unknown questions format", "give a DPR .qa.tsv/.qa.csv, an "
                         "NQ-open .jsonl or an AmbigNQ .json file")
    out: list[Question] = []
    places: list[str] = []  # where each question is, for the message about empty ones
    for i, r in enumerate(iter_qa_file(p)):
        # DPR and NQ-open questions are numbered by position, AmbigNQ's by their ids
        out.append(Question(r.id if r.id is not None else str(i), r.question, r.answers))
        places.append(r.where or str(p))
    if not out:
        raise InputError(p, "the questions file holds no question", "give a non-empty file")
    empty = [where for q, where in zip(out, places, strict=True) if not q.question.strip()]
    if empty:
        more = (f" ({len(empty):,} in all, {for_example(empty[1:])})"
                if len(empty) > 1 else "")
        raise InputError(empty[0], f"empty question{more}",
                         "give its text or remove it (nothing can be retrieved for it)")
    return out
