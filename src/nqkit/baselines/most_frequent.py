"""The "most frequent" baseline (NQ paper §6.1): copy the page's most annotated answer.

For every training page (matched by URL or title, see :mod:`nqkit.baselines.pages`) the
non-null long answers of its training annotations are counted by their text. An evaluation
example on a seen page gets the most often annotated long answer that exists on its own
page, with that count as the long-answer score (so the official threshold sweep can keep
only answers seen often enough). Ties go to the answer that comes first on the evaluation
page. An unseen page, a page whose training annotations are all NULL, or an answer that
cannot be found on the evaluation page gives NULL. No short answer is predicted (the
paper reports this baseline for long answers only).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from nqkit.baselines.pages import CopiedAnswer, candidate_keys, copied_answer, page_keys, transfer
from nqkit.baselines.predict_files import AnyNqExample, nq_baseline
from nqkit.formats.nq import NULL_SPAN
from nqkit.formats.nq_predictions import NqPrediction


@nq_baseline("most_frequent")
class MostFrequent:
    """Predict the long answer most often annotated on the same page in training."""

    name = "most_frequent"
    needs_train = True

    def __init__(self) -> None:
        # page key -> page id; page id -> counts of answers (by text digest), and the
        # distinct training occurrences of each answer (one per page revision)
        self._page_of: dict[str, int] = {}
        self._counts: list[Counter[bytes]] = []
        self._answers: list[dict[bytes, list[CopiedAnswer]]] = []

    def _find_page(self, example: AnyNqExample) -> int | None:
        return next((self._page_of[k] for k in page_keys(example) if k in self._page_of), None)

    def _add_page(self, example: AnyNqExample) -> int:
        pid = self._find_page(example)
        if pid is None:
            pid = len(self._counts)
            self._counts.append(Counter())
            self._answers.append({})
        for k in page_keys(example):
            self._page_of.setdefault(k, pid)
        return pid

    def fit(self, train: Iterable[AnyNqExample]) -> None:
        """Count the non-null long answers of every training annotation, per page."""
        for ex in train:
            pid = self._add_page(ex)
            for i in range(len(ex.annotations)):
                ans = copied_answer(ex, i)
                if ans is not None:
                    self._counts[pid][ans.key] += 1
                    seen = self._answers[pid].setdefault(ans.key, [])
                    if ans not in seen:
                        seen.append(ans)

    def predict(self, example: AnyNqExample) -> NqPrediction:
        pid = self._find_page(example)
        if pid is None or not self._counts[pid]:
            return NqPrediction(example.example_id, NULL_SPAN, 0.0, (), 0.0, "NONE")
        keys = candidate_keys(example)
        best: tuple[int, int] | None = None  # (-count, candidate index): smallest wins
        for key, count in self._counts[pid].items():
            idx = next((j for a in self._answers[pid][key]
                        if (j := transfer(a, example, keys)) >= 0), -1)
            if idx >= 0 and (best is None or (-count, idx) < best):
                best = (-count, idx)
        if best is None:
            return NqPrediction(example.example_id, NULL_SPAN, 0.0, (), 0.0, "NONE")
        span = example.long_answer_candidates[best[1]].span
        return NqPrediction(example.example_id, span, float(-best[0]), (), 0.0, "NONE")
