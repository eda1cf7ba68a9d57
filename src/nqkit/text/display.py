"""Readable text of NQ token spans, for display only (scoring never reads it).

NQ splits punctuation off words (``Röntgen , of Germany``, ``( 1963 )``, ``Nobel 's``) and
writes quotation marks as ````` and ``''``. Joined with spaces the tokens read badly, so
the browser shows the words of a span as the page wrote them (unlike
:func:`nqkit.text.html.html_span_text`, the visible text of a byte range, which keeps
untokenized text and joins text nodes without separators):

* **Original format** (``document_html`` and byte offsets): each word is the page's own
  text at the token's byte offsets (HTML entities decoded: ``&quot;`` is ``"``, where the
  token says ``''``), and two words are separated by a space exactly when the page has
  one between them — when the HTML between the two tokens, tags removed, is not empty, or
  holds a tag that starts a new block (a paragraph, cell, list item, line break...).
  Text the NQ tokenizer left out of every token (citation marks such as ``[5]``) is not
  shown: it is not part of any span.
* **Simplified format** (tokens only, the page is gone): the spacing is rebuilt by the
  rules of :func:`space_between`, and ````` / ``''`` are shown as ``"``.

The token indices of a span (what is scored and highlighted) are never changed: these
functions only decide how the words of a given range are printed.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

# Never a space before these tokens, or after those.
_NO_SPACE_BEFORE = frozenset([
    ",", ".", ";", ":", ")", "]", "}", "!", "?", "%", "''", "'", "'s", "'S", "n't", "N'T",
    "'m", "'M", "'re", "'RE", "'ve", "'VE", "'ll", "'LL", "'d", "'D", "-", "--", "...", "°",
    "®", "™", "”", "’", "»",
])
_NO_SPACE_AFTER = frozenset(["(", "[", "{", "``", "-", "--", "“", "‘", "«"])
_QUOTES = {"``": '"', "''": '"'}
# Tags after which a browser starts a new block (or a new line): words on either side of
# them are separate even when the page has no whitespace between them.
_BLOCK_TAG = re.compile(
    rb"<\s*/?\s*(?:p|br|li|dd|dt|td|th|tr|table|caption|thead|tbody|tfoot|ul|ol|dl|div|"
    rb"h[1-6]|hr|blockquote|pre|section|article|header|footer|center|figure|figcaption)"
    rb"(?=[\s/>])", re.I)
_TAG = re.compile(rb"<[^>]*>")
_SPACES = re.compile(r"\s+")


def is_tag_token(t: str) -> bool:
    """A simplified-format token that stands for an HTML tag (``<P>``, ``</Td>``)."""
    return len(t) > 2 and t[0] == "<" and t[-1] == ">"


def space_between(prev: str, cur: str) -> bool:
    """Whether a reader expects a space between NQ tokens ``prev`` and ``cur``.

    No space before closing punctuation and clitics (``,`` ``.`` ``;`` ``:`` ``)`` ``]``
    ``!`` ``?`` ``%`` ``''`` ``'s`` ``n't``...), none after opening brackets and quotes
    (``(`` ``[`` `````), none on either side of a hyphen or dash token (NQ splits
    ``Skłodowska-Curie`` and ``1940–1942`` around them).
    """
    return cur not in _NO_SPACE_BEFORE and prev not in _NO_SPACE_AFTER


def join_words(words: Sequence[str], spaces: Sequence[bool], limit: int = 0) -> str:
    """``words`` joined, with a space before word ``i`` when ``spaces[i]`` (the first
    word's flag is ignored); cut to ``limit`` words with `` …`` when given."""
    cut = bool(limit) and len(words) > limit
    n = limit if cut else len(words)
    out: list[str] = []
    for i in range(n):
        if i and spaces[i]:
            out.append(" ")
        out.append(words[i])
    return "".join(out) + (" …" if cut else "")


def simplified_word(t: str) -> str:
    """How a simplified-format word token is shown (quotes as ``"``, ``_`` as a space)."""
    return _QUOTES.get(t, t.replace("_", " "))


def simplified_words(tokens: Iterable[str]) -> tuple[list[str], list[bool]]:
    """The words of simplified-format tokens (tags left out) and, for each, whether a
    space comes before it (:func:`space_between` on the tokens as NQ wrote them)."""
    words: list[str] = []
    spaces: list[bool] = []
    prev = ""
    for t in tokens:
        if is_tag_token(t):
            prev = ""  # a tag between two words separates them
            continue
        spaces.append(not prev or space_between(prev, t))
        words.append(simplified_word(t))
        prev = t
    return words, spaces


def page_words(data: bytes, offsets: Iterable[tuple[int, int, str]]
               ) -> tuple[list[str], list[bool]]:
    """The words of original-format word tokens as the page wrote them, and the page's
    own spacing between them.

    ``data`` is ``document_html`` as bytes; ``offsets`` gives ``(start_byte, end_byte,
    token)`` of each word token (HTML tags left out), in document order. A token without
    usable offsets shows its token text, with a space before it.
    """
    words: list[str] = []
    spaces: list[bool] = []
    prev_end = -1
    n = len(data)
    for start, end, token in offsets:
        if 0 <= start < end <= n:
            word = _SPACES.sub(" ", html.unescape(data[start:end].decode("utf-8", "replace")))
            word = word.strip() or token
            if prev_end < 0 or start < prev_end:
                space = True
            else:
                gap = data[prev_end:start]
                space = bool(_TAG.sub(b"", gap)) or bool(_BLOCK_TAG.search(gap))
            prev_end = end
        else:
            word, space, prev_end = token, True, -1
        words.append(word)
        spaces.append(space)
    return words, spaces
