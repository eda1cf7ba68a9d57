"""TF-IDF nearest question: answer a question with the answer of the most similar one.

The "TFIDF Nearest Question" baseline of the NQ-open README (EfficientQA, Min et al.
2021, arXiv:2008.02637) and the "closest question" idea of the NQ paper (§6.1): a
question is represented by TF-IDF weights of its lower-cased word unigrams and bigrams
(sublinear term frequency, smoothed idf, L2-normalized), and the memory question with
the highest cosine similarity lends its answer.

The memory is whatever question-answer pairs the user gives (:func:`load_qa_memory`),
read by :mod:`nqkit.formats.qa_files`: NQ-open JSONL, DPR ``*.qa.tsv`` or AmbigNQ JSON
(first answer of the first annotation).
The similarity is :class:`nqkit.text.tfidf.TfidfIndex`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nqkit.errors import InputError, examples
from nqkit.formats.qa_files import is_qa_file, iter_qa_file
from nqkit.io import PathLike, expand_paths
from nqkit.text.tfidf import TfidfIndex, question_terms

__all__ = ["QaMemory", "TfidfIndex", "load_qa_memory", "question_terms"]


@dataclass(frozen=True, slots=True)
class QaMemory:
    """Question-answer pairs the nearest-question baselines copy from."""

    questions: tuple[str, ...]
    answers: tuple[tuple[str, ...], ...]  # answer strings per question (first = used)
    sources: tuple[str, ...]  # file name each item came from


def load_qa_memory(paths: Sequence[PathLike]) -> QaMemory:
    """Load question-answer pairs from NQ-open JSONL, DPR QA TSV or AmbigNQ JSON files.

    For AmbigNQ, the answers of an example are those of its first annotation (the first
    alias of each QA pair, or the aliases of a single answer), so the first answer is the
    first annotation's first answer.
    """
    qs: list[str] = []
    ans: list[tuple[str, ...]] = []
    src: list[str] = []
    for path in expand_paths(list(paths), what="memory"):
        if not is_qa_file(path):
            raise InputError(path, "unknown memory file type",
                             "give NQ-open .jsonl, DPR .qa.tsv or AmbigNQ .json files")
        for rec in iter_qa_file(path):
            if not rec.first_answers:
                continue
            qs.append(rec.question)
            ans.append(rec.first_answers)
            src.append(path.name)
    if not qs:
        raise InputError(examples(paths, width=None), "the memory files hold no question "
                         "with an answer", "give non-empty question-answer files")
    return QaMemory(tuple(qs), tuple(ans), tuple(src))
