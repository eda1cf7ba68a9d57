"""``lm-eval-v3``: lm-evaluation-harness's ``nq_open`` task before its PR #1305.

The published numbers of LLMs on ``lm_eval --tasks nq_open`` up to January 2024 (lm-eval
0.4.0 and the main branch until PR #1305, issue #1303) were scored by this rule; its task
file said ``version: 0.0`` in lm-eval 0.4.0 and ``version: 3.0`` by the time of the fix,
which kept that number (lm-eval 0.4.1 carries the fixed rule as 3.0; 4.0 came later).
Its pipeline, step by step, as that code ran it:

1. the generation is cut at the first ``"\\n"``, then at the first ``"."``, then at the
   first ``","`` (the task's ``until``; the Hugging Face backend splits on each in turn);
2. the ``remove_whitespace`` filter of that time drops *one* leading space and nothing
   else (it strips both ends only in later versions), ``take_first`` keeps the generation;
3. ``exact_match`` deletes the task's ``regexes_to_ignore`` from the prediction and each
   gold answer, lower-cases both, deletes every character of ``string.punctuation`` and
   compares them (as numpy string arrays, which drop trailing NUL characters and keep a
   lower-cased string no longer than the original, so ``"İ"``, which lower-cases to two
   characters, loses the last character of its string);
4. the question counts when any gold answer matches.

The article pattern was written ``"\\ban|a|the\\b"`` in a double-quoted YAML string, where
``\\b`` is the backspace character: the regular expression is *backspace-an*, or *a*, or
*the-backspace*. It deletes every lower-case letter "a" wherever it stands, before
lower-casing, so "Paris" and "paris" both become "pris" while "PARIS" becomes "paris":
the case of an "A" decides a verdict, and "The Beatles" still does not meet "Beatles".
"""

from __future__ import annotations

import re
import string

from nqkit.conventions.base import EmConvention, register
from nqkit.text.extract import cut

# the YAML string "\ban|a|the\b" as PyYAML reads it: \b is the backspace \x08
REGEX_TO_IGNORE = re.compile("\x08an|a|the\x08")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def extract(generation: str) -> str:
    """The generation as the task then scored it: cut at each stop in turn, one leading
    space dropped."""
    generation = cut(generation)
    return generation[1:] if generation.startswith(" ") else generation


def normalize(text: str) -> str:
    """``exact_match``'s normalization with the task's settings of that time."""
    text = REGEX_TO_IGNORE.sub("", text).rstrip("\0")
    # numpy lower-cases within the array's width: the string's own length here (one
    # prediction, or one gold answer, per call)
    text = text.lower()[:len(text)]
    return text.translate(_PUNCTUATION).rstrip("\0")


LM_EVAL_V3 = register(EmConvention(
    "lm-eval-v3", "lm-evaluation-harness lm_eval/tasks/nq_open/nq_open.yaml before PR #1305 "
    "(lm-eval 0.4.0, 'version: 0.0'; main until 2024-01-18, 'version: 3.0'): stops \\n . , "
    "one leading space dropped, then exact_match ignore_case, ignore_punctuation, "
    "regexes_to_ignore \"\\ban|a|the\\b\" (backspaces: every 'a' deleted)",
    normalize, contains=False, extract=extract))
