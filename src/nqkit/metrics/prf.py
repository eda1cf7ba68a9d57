"""Precision, recall and F1 from counts: the one definition every NQ metric uses.

An empty denominator gives 0.0, as in the official NQ script (``safe_divide``): no
prediction has precision 0, no gold answer recall 0, and P + R = 0 gives F1 0.
"""

from __future__ import annotations

__all__ = ["f1_score", "prf", "safe_divide"]


def safe_divide(x: float, y: float) -> float:
    """``x / y``, or 0.0 when ``y`` is 0."""
    return x / y if y else 0.0


def f1_score(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall (0.0 when both are 0)."""
    return safe_divide(2 * precision * recall, precision + recall)


def prf(correct: float, predicted: float, gold: float) -> tuple[float, float, float]:
    """``(precision, recall, F1)`` of ``correct`` answers among ``predicted`` ones, against
    ``gold`` answers."""
    p, r = safe_divide(correct, predicted), safe_divide(correct, gold)
    return p, r, f1_score(p, r)
