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

from dataclasses import dataclass

from nqkit.errors import InputError, for_example
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
    name = p.name.lower()
    out: list[Question] = []
    places: list[str] = []  # where each question is, for the message about empty ones
    if name.endswith((".tsv", ".tsv.gz", ".csv", ".csv.gz")):
        from nqkit.formats.dpr import iter_dpr_qa

        for i, (where, q, a) in enumerate(iter_dpr_qa(p)):
            out.append(Question(str(i), q, a))
            places.append(where)
    elif name.endswith((".jsonl", ".jsonl.gz")):
        from nqkit.formats.nq_open import read_nq_open

        # retrieve has no --answer-field: the lines must use "answer"
        for i, line in enumerate(read_nq_open(p, field_option=None)):
            out.append(Question(str(i), line.question, line.answers))
            places.append(line.where or str(p))
    elif name.endswith((".json", ".json.gz")):
        from nqkit.formats.ambignq import SingleAnswer, read_ambignq

        for i, ex in enumerate(read_ambignq(p)):
            answers: list[str] = []
            for ann in ex.annotations:
                group = (ann.answers if isinstance(ann, SingleAnswer)
                         else tuple(a for qa in ann.qa_pairs for a in qa.answers))
                answers.extend(a for a in group if a not in answers)
            out.append(Question(ex.id, ex.question, tuple(answers)))
            places.append(f"{p}: example {i}")  # as read_ambignq names an entry
    else:
        raise InputError(p, "unknown questions format", "give a DPR .qa.tsv/.qa.csv, an "
                         "NQ-open .jsonl or an AmbigNQ .json file")
    if not out:
        raise InputError(p, "the questions file holds no question", "give a non-empty file")
    empty = [where for q, where in zip(out, places, strict=True) if not q.question.strip()]
    if empty:
        more = (f" ({len(empty):,} in all, {for_example(empty[1:])})"
                if len(empty) > 1 else "")
        raise InputError(empty[0], f"empty question{more}",
                         "give its text or remove it (nothing can be retrieved for it)")
    return out
