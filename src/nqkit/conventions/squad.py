"""``squad``: the SQuAD v1.1 evaluation script's exact match.

The official NQ-open rule's steps without NFD, so a composed letter and its decomposed
spelling differ. DPR's reader exact match (``dpr/data/qa_validation.py``,
``exact_match_score``) applies exactly this rule, so ``dpr`` is accepted as another name
for it (the signature says ``squad``).
"""

from __future__ import annotations

from nqkit.conventions.base import EmConvention, register
from nqkit.text.normalize import normalize_answer

SQUAD = register(EmConvention(
    "squad", "SQuAD v1.1 evaluate-v1.1.py; DPR dpr/data/qa_validation.py exact_match_score",
    normalize_answer, contains=False), aliases=("dpr",))
