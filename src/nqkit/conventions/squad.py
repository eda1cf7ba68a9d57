"""``squad``: the SQuAD v1.1 evaluation script's exact match.

The official NQ-open rule's steps without NFD, so a composed letter and its decomposed
spelling differ. Two more harnesses apply exactly this rule, each tested against its own
code, so their names are other names for it (the signature says ``squad``):

* ``flashrag-em``: FlashRAG's ``em`` metric (``flashrag/evaluator/metrics.py``,
  ``ExactMatch``, flashrag-dev 0.1.2), its ``normalize_answer`` being SQuAD's;
* ``oqaeval``: the EM of Kamalloo et al.'s evaluation (``ehsk/OpenQA-eval``,
  ``oqaeval/eval.py`` ``em_eval`` over ``squad_evaluate.exact_match_score``).

DPR's reader exact match (``dpr/data/qa_validation.py``, ``exact_match_score``) applies
this rule too, with the articles matched by the ``regex`` module, whose word boundaries
differ from Python's beside combining marks and a few symbols; ``dpr`` is accepted as
another name for it.
"""

from __future__ import annotations

from nqkit.conventions.base import EmConvention, register
from nqkit.text.normalize import normalize_answer

SQUAD = register(EmConvention(
    "squad", "SQuAD v1.1 evaluate-v1.1.py; DPR dpr/data/qa_validation.py exact_match_score",
    normalize_answer, contains=False), aliases=("dpr", "flashrag-em", "oqaeval"))
