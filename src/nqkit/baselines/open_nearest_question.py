"""TF-IDF nearest question: answer a question with the answer of the most similar one.

The "TFIDF Nearest Question" baseline of the NQ-open README (EfficientQA, Min et al.
2021, arXiv:2008.02637) and the "closest question" idea of the NQ paper (§6.1): a
question is represented by TF-IDF weights of its lower-cased word unigrams and bigrams
(sublinear term frequency, smoothed idf, L2-normalized), and the memory question with
the highest cosine similarity lends its answer.

The memory is whatever question-answer pairs the user gives (:func:`load_qa_memory`):
NQ-open JSONL, DPR ``*.qa.tsv`` or AmbigNQ JSON (first answer of the first annotation).
Pure numpy: an inverted index of postings, scored by scatter-add.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nqkit.errors import InputError, examples
from nqkit.io import PathLike, expand_paths

__all__ = ["QaMemory", "TfidfIndex", "load_qa_memory", "question_terms"]

_WORD = re.compile(r"\w+", re.UNICODE)


def question_terms(text: str) -> list[str]:
    """Lower-cased word unigrams and bigrams of a question."""
    words = _WORD.findall(text.lower())
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


class TfidfIndex:
    """Cosine similarity of TF-IDF vectors over a fixed set of documents (questions)."""

    def __init__(self, texts: Sequence[str]) -> None:
        if not texts:
            raise InputError(None, "the memory holds no question", "give question-answer files")
        self.size = len(texts)
        docs = [Counter(question_terms(t)) for t in texts]
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())
        n = len(docs)
        self.idf = {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for i, d in enumerate(docs):
            weights = {t: (1.0 + math.log(c)) * self.idf[t] for t, c in d.items()}
            norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
            for t, w in weights.items():
                ids, vals = postings.setdefault(t, ([], []))
                ids.append(i)
                vals.append(w / norm)
        self._postings = {t: (np.asarray(ids, dtype=np.int64), np.asarray(v, dtype=np.float64))
                          for t, (ids, v) in postings.items()}

    def scores(self, text: str) -> np.ndarray:
        """Cosine similarity of ``text`` to every document."""
        q = Counter(t for t in question_terms(text) if t in self.idf)
        out = np.zeros(self.size, dtype=np.float64)
        if not q:
            return out
        weights = {t: (1.0 + math.log(c)) * self.idf[t] for t, c in q.items()}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        for t, w in weights.items():
            ids, vals = self._postings[t]
            out[ids] += vals * (w / norm)
        return out

    def nearest(self, text: str, k: int = 1, *, exclude: int | None = None
                ) -> list[tuple[int, float]]:
        """The ``k`` most similar documents as ``(index, cosine)``, best first.

        Ties are broken by the lower index (the earlier memory item). ``exclude`` leaves
        one document out (leave-one-out tuning).
        """
        s = self.scores(text)
        if exclude is not None:
            s[exclude] = -1.0
        k = min(k, self.size)
        if k == 1:
            best = int(np.argmax(s))  # the first maximum: the lowest index among ties
            return [(best, float(s[best]))]
        kth = np.partition(s, self.size - k)[self.size - k]  # the k-th largest score
        above = np.flatnonzero(s > kth)
        ties = np.flatnonzero(s == kth)[: k - len(above)]  # lowest indices among ties
        # best first; among equal scores the lower index first
        order = sorted([*above.tolist(), *ties.tolist()], key=lambda i: (-s[i], i))
        return [(int(i), float(s[i])) for i in order]


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
