"""The "closest question" baseline (NQ paper §6.1): copy the answer of the most similar
training question asked about the same page.

The paper names the similarity "TFIDF weighted word overlap" without details; nqkit uses:

* words: maximal runs of letters and digits (``\\w+``) of the case-folded question;
* ``idf(w) = ln((1 + N) / (1 + df(w))) + 1`` over the N training questions, where
  ``df(w)`` is the number of training questions containing ``w`` (always positive, so
  every shared word counts, rare words most);
* ``overlap(q, t) = sum of idf(w) over the distinct words w shared by q and t``.

Among the training questions on the same page (matched by URL or title), the one with the
largest overlap wins (ties: the earlier one in the training files); its long answer is
carried over to the evaluation page by text (see :mod:`nqkit.baselines.pages`), with the
overlap as the long-answer score. When that training question's answer is NULL, the page
is unseen, or the answer is not on the evaluation page, the prediction is NULL. No short
answer is predicted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from nqkit.baselines.pages import CopiedAnswer, example_answer, page_keys, transfer
from nqkit.baselines.predict_files import AnyNqExample, nq_baseline
from nqkit.formats.nq import NULL_SPAN
from nqkit.formats.nq_predictions import NqPrediction

_WORD_RE = re.compile(r"\w+")


def question_words(question: str) -> frozenset[str]:
    """The distinct words of a question (case folded)."""
    return frozenset(_WORD_RE.findall(question.casefold()))


def smooth_idf(n_docs: int, df: int) -> float:
    """``ln((1 + N) / (1 + df)) + 1``."""
    return math.log((1 + n_docs) / (1 + df)) + 1.0


@nq_baseline("closest_question")
class ClosestQuestion:
    """Predict the answer of the training question on the same page with the largest
    IDF-weighted word overlap."""

    name = "closest_question"
    needs_train = True

    def __init__(self) -> None:
        self._df: Counter[str] = Counter()
        self._n = 0
        # page key -> training questions on that page: (words, answer or None)
        self._pages: dict[str, list[tuple[frozenset[str], CopiedAnswer | None]]] = {}

    def fit(self, train: Iterable[AnyNqExample]) -> None:
        """Index every training question by page and count word document frequencies."""
        for ex in train:
            words = question_words(ex.question_text)
            self._n += 1
            self._df.update(words)
            entry = (words, example_answer(ex))
            keys = page_keys(ex)
            # all keys of a page share one list, so a page matched by title or URL is one page
            shared = next((self._pages[k] for k in keys if k in self._pages), None)
            if shared is None:
                shared = []
            shared.append(entry)
            for k in keys:
                self._pages.setdefault(k, shared)

    def idf(self, word: str) -> float:
        return smooth_idf(self._n, self._df[word])

    def overlap(self, a: frozenset[str], b: frozenset[str]) -> float:
        """IDF-weighted overlap of two word sets."""
        return sum(self.idf(w) for w in sorted(a & b))

    def predict(self, example: AnyNqExample) -> NqPrediction:
        null = NqPrediction(example.example_id, NULL_SPAN, 0.0, (), 0.0, "NONE")
        entries = next((self._pages[k] for k in page_keys(example) if k in self._pages), None)
        if not entries:
            return null
        words = question_words(example.question_text)
        best_score, best_answer = -1.0, None
        for train_words, answer in entries:
            score = self.overlap(words, train_words)
            if score > best_score:  # strict: ties keep the earlier training question
                best_score, best_answer = score, answer
        if best_answer is None:
            return NqPrediction(example.example_id, NULL_SPAN, best_score, (), 0.0, "NONE")
        idx = transfer(best_answer, example)
        if idx < 0:
            return null
        span = example.long_answer_candidates[idx].span
        return NqPrediction(example.example_id, span, best_score, (), 0.0, "NONE")
