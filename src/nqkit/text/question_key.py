"""The question key of oqaeval (Kamalloo et al., ACL 2023, ``ehsk/OpenQA-eval``).

oqaeval joins predictions, gold questions and human judgments by a key, not by the
question string: ``data_utils.SimpleTokenizer`` tokens of the question joined by single
spaces, then lower-cased. Its tokenizer is DPR's simple one (runs of letters, digits and
marks, or any other single character that is neither a separator nor a control) after
two rewrites: ``’`` becomes ``'`` and ``--`` becomes ``_``, and a few contractions and
colloquial forms (``don't``, ``ain't``, ``won't``, ``didn't``, ``can't``, ``doesn't``,
``wanna``, ``gonna``, ``gimme``), found case-sensitively anywhere in the text, are split
before their last two letters or their ``n't``. Lower-casing comes last, so ``Don't`` and
``don't`` give different keys, as in oqaeval.
"""

from __future__ import annotations

import regex as rx  # \p{...} classes, as the original

__all__ = ["oqaeval_tokens", "question_key", "without_question_mark"]

_TOKEN = rx.compile(r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])",
                    flags=rx.IGNORECASE | rx.UNICODE | rx.MULTILINE)

# (found, written) in the order oqaeval rewrites them: each replaces every occurrence
_SPLITS: tuple[tuple[str, str], ...] = (
    ("don't", "do n't"), ("ain't", "ai n't"), ("won't", "wo n't"), ("didn't", "did n't"),
    ("can't", "ca n't"), ("doesn't", "does n't"), ("wanna", "wan na"), ("gonna", "gon na"),
    ("gimme", "gim me"),
)


def oqaeval_tokens(text: str) -> list[str]:
    """The tokens of ``text`` under oqaeval's ``SimpleTokenizer.tokenize``."""
    text = text.replace("\u2019", "'").replace("--", "_")
    for found, written in _SPLITS:
        text = text.replace(found, written)
    return [m.group() for m in _TOKEN.finditer(text)]


def question_key(question: str) -> str:
    """oqaeval's join key of a question: its tokens joined by spaces, lower-cased."""
    return " ".join(oqaeval_tokens(question)).lower()


def without_question_mark(key: str) -> str:
    """A question key without its final ``?`` (oqaeval files a judged question under
    both; the judge audit joins two judgment files by this one)."""
    return key[:-1].strip() if key.endswith("?") else key
