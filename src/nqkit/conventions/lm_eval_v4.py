"""``lm-eval-v4``: lm-evaluation-harness's ``nq_open`` task, version 4.0 (lm-eval 0.4.13).

Most NQ-open numbers of LLMs are printed by this task (``lm_eval --tasks nq_open``). Its
pipeline, step by step, as its code runs it:

1. the generation is cut at the first ``"\\n"``, then at the first ``"."``, then at the
   first ``","`` (the task's ``until``; its Hugging Face backend splits on each stop in
   turn, ``lm_eval.models.utils.postprocess_generated_text``);
2. the ``remove_whitespace`` filter strips it, ``take_first`` keeps the one generation;
3. ``exact_match`` (``lm_eval.api.metrics.exact_match_hf_evaluate``) deletes the task's
   article regex ``\\b(?:The |the |An |A |The |a |an )`` from the prediction and from each
   gold answer, lower-cases both, deletes every character of ``string.punctuation``,
   and compares them, all as numpy string arrays (the prediction repeated, the gold
   list): they drop trailing NUL characters and lower-case within the width of their
   longest string, so a letter that lower-cases to two characters (``"İ"``) can push a
   string's last character out (:func:`normalize_all`);
4. the question counts when any gold answer matches.

Steps 1–2 are the prediction's extraction (:attr:`EmConvention.extract`): a gold answer is
never cut, so one with a ``,`` or ``.`` (``"Washington, D.C."``) is not met by itself,
verbatim, only by a generation that leaves them out (``"Washington DC"``). Applied to an
already cut generation (the ``filtered_resps`` of ``--log_samples``) the extraction changes
nothing.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from nqkit.conventions.base import EmConvention, register
from nqkit.text.extract import cut_at_stops as extract  # step 1-2: the task's stops

ARTICLES = re.compile(r"\b(?:The |the |An |A |The |a |an )")  # its regexes_to_ignore
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_all(texts: Sequence[str]) -> list[str]:
    """``exact_match_hf_evaluate``'s normalization of one numpy array of strings (the
    prediction repeated, or a question's gold answers): the article regex deleted, then
    lower-cased within the array's width — its longest string, so a letter that
    lower-cases to two characters (``"İ"``) pushes the last character out of a string as
    long as the array is wide —, then ``string.punctuation`` deleted; trailing NULs are
    never seen (numpy drops them)."""
    subbed = [ARTICLES.sub("", t) for t in texts]
    width = max((len(t) for t in subbed), default=0)
    return [t.rstrip("\0").lower()[:width].rstrip("\0").translate(_PUNCTUATION).rstrip("\0")
            for t in subbed]


def normalize(text: str) -> str:
    """One string alone, as the prediction is (an array of it, as wide as it)."""
    return normalize_all([text])[0]


LM_EVAL_V4 = register(EmConvention(
    "lm-eval-v4", "lm-evaluation-harness 0.4.13 lm_eval/tasks/nq_open/nq_open.yaml "
    "(version 4.0): stops \\n . , then exact_match ignore_case, ignore_punctuation, "
    "article regex", normalize, contains=False, extract=extract,
    normalize_answers=normalize_all))
