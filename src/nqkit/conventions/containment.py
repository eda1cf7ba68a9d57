"""``containment``: FlashRAG's "accuracy" (its ``acc`` metric, ``Sub_ExactMatch``).

Correct when a SQuAD-normalized gold answer is a *substring* of the SQuAD-normalized
prediction. It rewards long answers and matches inside words ("1" is contained in
"1990").
"""

from __future__ import annotations

from nqkit.conventions.base import EmConvention, register
from nqkit.text.normalize import normalize_answer

CONTAINMENT = register(EmConvention(
    "containment", "FlashRAG flashrag/evaluator/metrics.py Sub_ExactMatch ('acc')",
    normalize_answer, contains=True))
