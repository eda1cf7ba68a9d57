"""TF-IDF cosine similarity between short texts (questions).

A question is represented by TF-IDF weights of its lower-cased word unigrams and bigrams
(sublinear term frequency, smoothed idf, L2-normalized). Pure numpy: an inverted index of
postings, scored by scatter-add. Used by the nearest-question baselines and by the
question-overlap proxy of :mod:`nqkit.analysis.overlap`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from nqkit.errors import InputError

__all__ = ["TfidfIndex", "question_terms"]

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
