"""TF-IDF nearest question: answer a question with the answer of the most similar one.

The "TFIDF Nearest Question" baseline of the NQ-open README (EfficientQA, Min et al.
2021, arXiv:2008.02637) and the "closest question" idea of the NQ paper (§6.1): a
question is represented by TF-IDF weights of its lower-cased word unigrams and bigrams
(sublinear term frequency, smoothed idf, L2-normalized), and the memory question with
the highest cosine similarity lends its answer.

The memory is whatever question-answer pairs the user gives (:func:`load_qa_memory`):
NQ-open JSONL, DPR ``*.qa.tsv`` or AmbigNQ JSON (first answer of the first annotation).
The similarity is :class:`nqkit.text.tfidf.TfidfIndex`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from nqkit.errors import InputError, examples
from nqkit.io import PathLike, expand_paths
from nqkit.text.tfidf import TfidfIndex, question_terms

__all__ = ["QaMemory", "TfidfIndex", "load_qa_memory", "question_terms"]


@dataclass(frozen=True, slots=True)
class QaMemory:
    """Question-answer pairs the nearest-question baselines copy from."""

    questions: tuple[str, ...]
    answers: tuple[tuple[str, ...], ...]  # answer strings per question (first = used)
    sources: tuple[str, ...]  # file name each item came from


def _read_memory_file(path: Path) -> Iterable[tuple[str, tuple[str, ...]]]:
    name = path.name.lower()
    if name.endswith((".tsv", ".tsv.gz", ".qa.csv")):  # DPR names its TSV files .qa.csv
        from nqkit.formats.dpr import read_dpr_qa_tsv

        yield from read_dpr_qa_tsv(path)
    elif name.endswith(".json") or name.endswith(".json.gz"):
        from nqkit.formats.ambignq import MultipleQAs, read_ambignq

        for ex in read_ambignq(path):
            ann = ex.annotations[0]
            if isinstance(ann, MultipleQAs):
                yield ex.question, tuple(p.answers[0] for p in ann.qa_pairs)
            else:
                yield ex.question, ann.answers
    elif name.endswith(".jsonl") or name.endswith(".jsonl.gz"):
        from nqkit.formats.nq_open import read_nq_open

        for oex in read_nq_open(path):
            yield oex.question, oex.answers
    else:
        raise InputError(path, "unknown memory file type",
                         "give NQ-open .jsonl, DPR .qa.tsv or AmbigNQ .json files")


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
        for q, a in _read_memory_file(path):
            if not a:
                continue
            qs.append(q)
            ans.append(a)
            src.append(path.name)
    if not qs:
        raise InputError(examples(paths, width=None), "the memory files hold no question "
                         "with an answer", "give non-empty question-answer files")
    return QaMemory(tuple(qs), tuple(ans), tuple(src))
