"""``orqa`` (the default): the official NQ-open evaluation.

``language/orqa/utils/eval_utils.py``: Unicode NFD, lower-case, ASCII punctuation removed,
the articles *a*/*an*/*the* removed as words, whitespace collapsed; the prediction must
equal one normalized gold answer. Also called ``official``.
"""

from __future__ import annotations

from nqkit.conventions.base import EmConvention, register
from nqkit.text.normalize import normalize_answer_nfd

ORQA = register(EmConvention(
    "orqa", "language/orqa/utils/eval_utils.py (official NQ-open)", normalize_answer_nfd,
    contains=False), aliases=("official",))
