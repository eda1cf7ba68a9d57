"""Question-answer files of the open-domain benchmarks, read by their names.

* DPR QA files (``nq-test.qa.tsv``, ``.qa.csv``): ``question<TAB>['answer', ...]`` per
  line (DPR's ``.csv`` files are tab-separated too; a comma-separated file is read as CSV).
* NQ-open / EfficientQA JSON lines (``NQ-open.dev.jsonl``): ``{"question", "answer": [...]}``.
* AmbigNQ (``dev_light.json``): the answers are every answer of every annotation (single
  answers and the answers of all question-answer pairs), in order without repeats;
  ``first_annotation`` keeps the first annotation's own reading (its single answer's
  aliases, or the first alias of each of its question-answer pairs).

One reader for every command that takes such files as questions with their answers
(``retrieve``'s questions, ``overlap``'s test and training sets, the nearest-question
baselines' memory).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["QaRecord", "is_qa_file", "iter_qa_file"]

_DPR = (".tsv", ".tsv.gz", ".csv", ".csv.gz")
_NQ_OPEN = (".jsonl", ".jsonl.gz")
_AMBIGNQ = (".json", ".json.gz")


@dataclass(frozen=True, slots=True)
class QaRecord:
    """One question with every gold answer a training or test file gives it."""

    question: str
    answers: tuple[str, ...]  # every answer string (AmbigNQ: of every annotation)
    id: str | None = None  # AmbigNQ example id, where the file has ids
    where: str | None = field(default=None, compare=False)
    # AmbigNQ: the first annotation's answers (see the module docstring); else = answers
    first_annotation: tuple[str, ...] | None = None

    @property
    def first_answers(self) -> tuple[str, ...]:
        """The answers of the first annotation (all answers where a file has one)."""
        return self.answers if self.first_annotation is None else self.first_annotation


def is_qa_file(path: Path) -> bool:
    """Whether ``path``'s name is one :func:`iter_qa_file` reads."""
    return path.name.lower().endswith((*_DPR, *_NQ_OPEN, *_AMBIGNQ))


def iter_qa_file(path: Path) -> Iterator[QaRecord]:
    """The questions of a DPR, NQ-open or AmbigNQ file (by its name), in file order, each
    with the place it was read from; callers check :func:`is_qa_file` first and word
    their own refusal of other files."""
    name = path.name.lower()
    if name.endswith(_DPR):
        from nqkit.formats.dpr import iter_dpr_qa

        for where, q, golds in iter_dpr_qa(path):
            yield QaRecord(q, golds, None, where)
    elif name.endswith(_NQ_OPEN):
        from nqkit.formats.nq_open import read_nq_open

        # no --answer-field here: the lines must use "answer"
        for line in read_nq_open(path, field_option=None):
            yield QaRecord(line.question, line.answers, None, line.where or str(path))
    elif name.endswith(_AMBIGNQ):
        from nqkit.formats.ambignq import SingleAnswer, read_ambignq

        for i, ex in enumerate(read_ambignq(path)):
            answers: list[str] = []
            for ann in ex.annotations:
                group = (ann.answers if isinstance(ann, SingleAnswer)
                         else tuple(a for qa in ann.qa_pairs for a in qa.answers))
                answers.extend(a for a in group if a not in answers)
            first = ex.annotations[0]
            yield QaRecord(ex.question, tuple(answers), ex.id, f"{path}: example {i}",
                           first.answers if isinstance(first, SingleAnswer)
                           else tuple(qa.answers[0] for qa in first.qa_pairs))
    else:
        raise ValueError(f"{path}: not a question-answer file (see is_qa_file)")
