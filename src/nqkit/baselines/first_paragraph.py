"""The "first paragraph" baseline (NQ paper §6.1): answer with the page's first ``<P>``."""

from __future__ import annotations

from collections.abc import Iterable

from nqkit.baselines.predict_files import AnyNqExample, nq_baseline
from nqkit.formats.nq import NULL_SPAN
from nqkit.formats.nq_predictions import NqPrediction


@nq_baseline("first_paragraph")
class FirstParagraph:
    """Predict the first paragraph candidate as the long answer; no short answer.

    Every prediction has the same long-answer score, so the official threshold sweep can
    only choose between answering everything and nothing.
    """

    name = "first_paragraph"
    needs_train = False

    def fit(self, train: Iterable[AnyNqExample]) -> None:
        """Nothing to learn."""

    def predict(self, example: AnyNqExample) -> NqPrediction:
        span = NULL_SPAN
        for i, c in enumerate(example.long_answer_candidates):
            if example.candidate_type(i) == "paragraph":
                span = c.span
                break
        # Candidates of simplified input carry token offsets only; both forms are valid.
        return NqPrediction(example.example_id, span, 1.0, (), 0.0, "NONE")
