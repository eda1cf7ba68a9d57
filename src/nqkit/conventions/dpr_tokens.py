"""``dpr-tokens``: DPR's answer check applied to a prediction (token-run containment).

DPR decides whether a passage holds an answer with ``has_answer`` (``dpr/data/
qa_validation.py``, ``match_type="string"``): the text and each answer are NFD-normalized,
split by its simple tokenizer and lower-cased, and the answer counts when its token
sequence occurs contiguously in the text's. Applied to a prediction in place of a passage,
it is a containment rule on whole tokens: "1" is not in "1990", "beatles" is in "the
beatles band", and punctuation and articles stay (each punctuation mark is a token). An
answer with no token at all is found in any prediction, as DPR's loop finds it. The
tokenizer and the token-run search are the ones of ``nqkit eval retrieval``
(:mod:`nqkit.text.dpr_tokenize`).
"""

from __future__ import annotations

from nqkit.conventions.base import EmConvention, register
from nqkit.text.dpr_tokenize import has_answer, simple_tokenize


def normalize(text: str) -> str:
    """The DPR tokens of ``text`` (NFD, lower-cased), joined by spaces: no token holds a
    space (separators are never part of one), so the join is undone by a split."""
    return " ".join(simple_tokenize(text))


def meets(gold: str, prediction: str) -> bool:
    """Whether the gold answer's token run occurs in the prediction's tokens."""
    if not gold:  # DPR's loop compares the empty run with an empty slice: found
        return True
    return has_answer([gold.split(" ")], prediction.split(" ") if prediction else [])


DPR_TOKENS = register(EmConvention(
    "dpr-tokens", "DPR dpr/data/qa_validation.py has_answer (match_type 'string', "
    "SimpleTokenizer, uncased)", normalize, contains=True, meets=meets))
