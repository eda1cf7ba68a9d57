"""A pure-Python tokenizer compatible with Stanford's PTBTokenizer on question text.

The AmbigQA evaluation (via pycocoevalcap) tokenizes every question with Stanford CoreNLP
3.4.1's ``PTBTokenizer -preserveLines -lowerCase`` in a Java subprocess, then drops the
punctuation tokens listed in :data:`PTB_PUNCTUATION`. What survives the later SQuAD
normalization is only *where words are split*: a split inserts a space that punctuation
removal would otherwise not (``don't`` -> ``do n't`` -> ``do nt``; ``sperm—occur`` ->
``sperm -- occur`` -> ``sperm occur``). This module reproduces those splits with PTB
conventions (Penn Treebank tokenization guidelines; CoreNLP ``PTBLexer`` documentation):

* whitespace (including no-break and zero-width spaces) separates tokens;
* clitics are split off: ``n't``, ``'s``, ``'re``, ``'ve``, ``'ll``, ``'d``, ``'m`` (also
  with a typographic apostrophe), and a plural possessive's final apostrophe;
* ``'n'`` inside a word is a token of its own (``rock'n'roll``);
* ``cannot``, ``gonna``, ``gotta``, ``wanna``, ``gimme``, ``lemme`` are split in two;
* punctuation other than word-internal hyphens, apostrophes and periods, number-internal
  commas, periods, colons and slashes is split off; dashes (``–``, ``—``) and ellipses
  become PTB ``--`` and ``...``, quotes become PTB quote tokens, brackets ``-LRB-`` etc.

It is verified against the official outputs on AmbigNQ dev (every rewrite and prompt
question there); it is not a general replacement for CoreNLP on arbitrary text.
"""

from __future__ import annotations

import re

from nqkit.text.normalize import normalize_answer

__all__ = ["PTB_PUNCTUATION", "eval_question", "ptb_tokenize"]

# Tokens pycocoevalcap removes after PTB tokenization.
PTB_PUNCTUATION: frozenset[str] = frozenset([
    "''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-",
    "--", "...", ";",
])

_SPACE = re.compile(r"[\s\u00a0\u200b\u2000-\u200a\u2028\u2029\u3000\ufeff]+")
_APOS = "'\u2019"
_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-",
             "}": "-RCB-"}
_SPLIT_WORDS = {
    "cannot": ("can", "not"), "gonna": ("gon", "na"), "gotta": ("got", "ta"),
    "wanna": ("wan", "na"), "gimme": ("gim", "me"), "lemme": ("lem", "me"),
}
# A run of characters that stays one token: letters/digits joined by word-internal
# hyphens, apostrophes, periods, ampersands; numbers with , . : / inside.
_NUMBER = r"\d+(?:[,.:/\u2044]\d+)*"
_WORD = r"[^\W_]+(?:(?:[-.&/]|[" + _APOS + r"](?=[^\W_]))[^\W_]+)*\.?"
_TOKEN = re.compile(
    r"(?P<num>[-+]?" + _NUMBER + r"(?:-[^\W_]+)*(?![^\W_]))"
    r"|(?P<word>" + _WORD + r")"
    r"|(?P<dots>\.\.\.+|\u2026)"
    r"|(?P<dash>--+|[\u2012-\u2015])"
    r"|(?P<punct>.)",
    re.UNICODE,
)
_CLITIC = re.compile(r"(?i)^(?P<stem>.+?)(?P<clitic>n[" + _APOS + r"]t|[" + _APOS
                     + r"](?:s|re|ve|ll|d|m))$")


_N_INFIX = re.compile(r"(?i)([" + _APOS + r"]n[" + _APOS + r"])")


def _split_word(word: str) -> list[str]:
    if _N_INFIX.search(word):
        # "rock'n'roll" -> "rock" "'n'" "roll"
        out: list[str] = []
        for piece in _N_INFIX.split(word):
            if piece:
                out.extend([piece] if _N_INFIX.fullmatch(piece) else _split_word(piece))
        return out
    low = word.lower()
    if low in _SPLIT_WORDS:
        first = _SPLIT_WORDS[low][0]
        return [word[: len(first)], word[len(first):]]
    trail: list[str] = []
    if word.endswith(".") and len(word) > 1 and not re.search(r"\.[^\W_]", word):
        # a sentence-final period (abbreviations keep theirs; punctuation removal makes
        # the difference invisible after normalization)
        word, trail = word[:-1], ["."]
    m = _CLITIC.match(word)
    if m and m.group("stem"):
        clitic = m.group("clitic").replace("\u2019", "'")
        return [m.group("stem"), clitic, *trail]
    return [word, *trail]


def ptb_tokenize(text: str, *, lower: bool = False) -> list[str]:
    """Split ``text`` into PTB tokens (brackets, quotes and dashes in PTB spelling)."""
    tokens: list[str] = []
    for chunk in _SPACE.split(text):
        if not chunk:
            continue
        for m in _TOKEN.finditer(chunk):
            kind = m.lastgroup
            tok = m.group()
            if kind == "word":
                # clitics split off; a plural possessive's apostrophe ("students'") is
                # left outside the word by _WORD and becomes a token of its own below
                tokens.extend(_split_word(tok))
            elif kind == "num":
                tokens.append(tok)
            elif kind == "dots":
                tokens.append("...")
            elif kind == "dash":
                tokens.append("--")
            elif tok in _BRACKETS:
                tokens.append(_BRACKETS[tok])
            elif tok == '"':
                # opening at the start of a chunk, closing elsewhere
                tokens.append("``" if m.start() == 0 else "''")
            elif tok in "\u201c\u00ab":
                tokens.append("``")
            elif tok in "\u201d\u00bb":
                tokens.append("''")
            elif tok in "\u2018\u2019":
                tokens.append("`" if tok == "\u2018" else "'")
            else:
                tokens.append(tok)
    if lower:
        tokens = [t.lower() for t in tokens]
    return tokens


def eval_question(text: str) -> str:
    """A question as the official AmbigQA evaluation compares it.

    PTB tokens, lower-cased, without :data:`PTB_PUNCTUATION`, joined by spaces, then SQuAD
    answer normalization (punctuation characters and articles removed, spaces collapsed).
    """
    words = [t for t in ptb_tokenize(text, lower=True) if t not in PTB_PUNCTUATION]
    return normalize_answer(" ".join(words))
