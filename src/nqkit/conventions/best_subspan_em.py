"""``best-subspan-em``: lost-in-the-middle's ``best_subspan_em`` (Liu et al. 2023).

``src/lost_in_the_middle/metrics.py`` (nelson-liu/lost-in-the-middle, commit 04cbd0d):
correct when a SQuAD-normalized gold answer is a substring of the SQuAD-normalized
prediction, the rule of ``containment``, except that its article pattern is written with
the ``regex`` module, whose word boundaries are Unicode's (combining marks are word
characters, superscript digits are not:
:func:`nqkit.text.normalize.normalize_answer_unicode_words`). On text without such
characters next to an article the two rules agree.
"""

from __future__ import annotations

from nqkit.conventions.base import EmConvention, register
from nqkit.text.normalize import normalize_answer_unicode_words

BEST_SUBSPAN_EM = register(EmConvention(
    "best-subspan-em", "nelson-liu/lost-in-the-middle@04cbd0d "
    "src/lost_in_the_middle/metrics.py best_subspan_em", normalize_answer_unicode_words,
    contains=True))
