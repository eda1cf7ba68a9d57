"""Turning third-party page HTML into safe, highlighted HTML for the browser.

Two steps:

1. **Highlight by offsets.** Each word token of the span being shown gets a set of CSS
   classes (gold short answer, predicted long answer, ...). Runs of consecutive words with
   the same classes and no markup between them are wrapped in one ``<mark>``. A mark
   therefore never crosses a tag, so the markup stays properly nested whatever the spans
   are. Original-format pages are cut by byte offsets from ``document_html``; simplified
   pages (tokens only) are rebuilt from their tokens, whose HTML tags are bare tag names.
2. **Sanitize.** The result is re-serialized from a parse by an allow-list: only
   structural and text tags survive (paragraphs, lists, tables, headings, emphasis),
   without any attribute except ``colspan``/``rowspan`` and the browser's own ``class`` on
   marks and ``id`` anchors; the content of ``script``/``style`` and similar elements is
   dropped (an element left open drops nothing: see :func:`sanitize`); all text and
   attribute values are escaped anew. No URL attribute (``href``, ``src``, ``action``...)
   is ever kept; the document's own URL is shown only through :func:`http_url`. Nothing
   the page contains can run a script, load a resource, or submit a form. The pages are
   also served with a strict Content-Security-Policy, and the full page is shown in a
   sandboxed iframe.
"""

from __future__ import annotations

import html
import itertools
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from html.parser import HTMLParser
from typing import Any

from nqkit.formats.nq import NqExample, SimplifiedNqExample, Span
from nqkit.text.display import (
    is_tag_token,
    join_words,
    page_words,
    simplified_word,
    simplified_words,
    space_between,
)

# Tags kept (with their text); anything else is unwrapped (text kept, tag dropped).
ALLOWED_TAGS = frozenset([
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd",
    "table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td", "b", "i", "em", "strong",
    "u", "s", "sub", "sup", "small", "code", "pre", "blockquote", "cite", "q", "abbr", "span",
    "div", "mark", "section", "article", "aside", "header", "footer", "figure", "figcaption",
    "center", "big", "tt", "var", "kbd", "samp", "del", "ins", "a",
])
# Tags whose content is dropped too (scripts, styles, embedded objects, forms, media).
DROPPED_TAGS = frozenset([
    "script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed",
    "applet", "link", "meta", "base", "head", "title", "form", "input", "button", "select",
    "option", "textarea", "svg", "math", "audio", "video", "source", "track", "picture", "img",
    "canvas", "map", "area", "param", "noembed", "noframes", "xmp", "plaintext", "dialog",
    "portal",
])
VOID_TAGS = frozenset([
    "br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "param",
    "source", "track", "wbr",
])
# Classes the browser itself puts on marks.
MARK_CLASSES = frozenset(("gl", "gs", "pl", "ps", "hl"))


class _Sanitizer(HTMLParser):
    """One pass of the allow-list sanitizer over a whole fragment.

    ``dropping`` holds the dropped elements currently open, each with where its start tag
    lies in the fragment; those never closed (open at the end, or when an element around
    them ends) are listed in ``unclosed`` for :func:`sanitize` to undo. ``keep_dropped``
    turns dropping off (tags are still removed, their text is kept): the last resort that
    keeps every word of a page.
    """

    def __init__(self, fragment: str, keep_dropped: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        # (tag, start offset, end offset, len(inner) when it started)
        self.dropping: list[tuple[str, int, int, int]] = []
        self.inner: list[str] = []  # elements opened inside dropped ones, still open
        self.unclosed: list[tuple[int, int]] = []  # start tags of dropped elements never closed
        self.open: list[str] = []
        self.keep_dropped = keep_dropped
        self._fragment = fragment
        self._line_starts: list[int] = []

    def set_cdata_mode(self, elem: str, **kw: Any) -> None:
        if not self.keep_dropped:  # the last pass parses script/style content as markup
            super().set_cdata_mode(elem, **kw)

    def _tag_offsets(self) -> tuple[int, int]:
        if not self._line_starts:  # offsets of lines, as getpos() counts them
            starts, i = [0], self._fragment.find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = self._fragment.find("\n", i + 1)
            self._line_starts = starts
        line, col = self.getpos()
        start = self._line_starts[line - 1] + col
        return start, start + len(self.get_starttag_text() or "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, self_closing=False)

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], self_closing: bool) -> None:
        if tag in DROPPED_TAGS:
            if tag == "img" and not self.dropping:
                alt = next((v for k, v in attrs if k == "alt" and v), "")
                if alt:
                    self.out.append(f'<span class="img-alt">[{html.escape(alt)}]</span>')
            if tag not in VOID_TAGS and not self_closing and not self.keep_dropped:
                self.dropping.append((tag, *self._tag_offsets(), len(self.inner)))
            return
        if self.dropping:
            if tag not in VOID_TAGS and not self_closing:
                self.inner.append(tag)
            return
        if tag not in ALLOWED_TAGS:
            return
        kept = []
        for k, v in attrs:
            if v is None:
                continue
            if k in ("colspan", "rowspan") and v.isdigit() and len(v) < 4:
                kept.append(f'{k}="{v}"')
            elif k == "class" and tag == "mark":
                cls = " ".join(c for c in v.split() if c in MARK_CLASSES)
                if cls:
                    kept.append(f'class="{cls}"')
            elif k == "id" and v.startswith("nqkit-") and v.replace("-", "").isalnum():
                kept.append(f'id="{v}"')
        attr = (" " + " ".join(kept)) if kept else ""
        self.out.append(f"<{tag}{attr}>")
        if tag not in VOID_TAGS:
            if self_closing:
                self.out.append(f"</{tag}>")
            else:
                self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # ``<iframe/>``: nothing to drop after it (treated as empty, never as left open).
        self._start(tag, attrs, self_closing=True)

    def handle_endtag(self, tag: str) -> None:
        if self.dropping:
            names = [d[0] for d in self.dropping]
            if tag in names:
                # Closes it and whatever dropped element was left open inside it.
                k = len(names) - 1 - names[::-1].index(tag)
                del self.inner[self.dropping[k][3]:]
                del self.dropping[k:]
                return
            if tag in self.inner:  # an element opened inside the dropped one
                del self.inner[len(self.inner) - 1 - self.inner[::-1].index(tag):]
                return
            if tag not in self.open:
                return
            # The end of an element that encloses the dropped ones: they were never closed
            # (a dropped element does not swallow the page past its parent).
            self.unclosed.extend((a, b) for _, a, b, _ in self.dropping)
            self.dropping.clear()
            self.inner.clear()
        if tag not in ALLOWED_TAGS or tag in VOID_TAGS:
            return
        if tag in self.open:
            # Close what is still open inside it, so the output stays well nested.
            while self.open:
                t = self.open.pop()
                self.out.append(f"</{t}>")
                if t == tag:
                    break

    def handle_data(self, data: str) -> None:
        if not self.dropping:
            self.out.append(html.escape(data, quote=False))

    def close_all(self) -> str:
        self.close()
        self.unclosed.extend((a, b) for _, a, b, _ in self.dropping)
        while self.open:
            self.out.append(f"</{self.open.pop()}>")
        return "".join(self.out)


_MAX_PASSES = 4


def sanitize(fragment: str) -> str:
    """Allow-list sanitizing of an HTML fragment (see the module docstring).

    A dropped element left open (``<select>``, ``<noscript>``, ``<title>``, ``<plaintext>``,
    an unclosed ``<script>``, ...) would hide everything after it, gold answers included.
    When a pass finds such elements (open at the end of the fragment or when an element
    around them ends), their start tags are removed and the fragment is sanitized again,
    so the rest of the page is kept (as text: the tags still go). Removing one start tag
    can reveal another (``<math><style>``), hence a few passes; the last one keeps the
    text of every dropped element rather than lose any of the page.
    """
    passes = 0
    while True:
        passes += 1
        s = _Sanitizer(fragment, keep_dropped=passes > _MAX_PASSES)
        s.feed(fragment)
        out = s.close_all()
        if not s.unclosed:
            return out
        parts, pos = [], 0
        for start, end in sorted(s.unclosed):
            parts.append(fragment[pos:start])
            pos = end
        parts.append(fragment[pos:])
        fragment = "".join(parts)


_C0_AND_SPACE = "".join(map(chr, range(0x21)))


def http_url(url: str) -> str:
    """``url`` if it is an absolute http(s) URL, else ``""`` (never a link then).

    Browsers ignore ASCII tabs and newlines anywhere in a URL and spaces and control
    characters around it (``java<TAB>script:`` runs as ``javascript:``), so those are
    removed before the scheme is checked, and the cleaned URL is the one returned.
    """
    cleaned = "".join(ch for ch in url if ch not in "\t\n\r").strip(_C0_AND_SPACE)
    try:
        parts = urllib.parse.urlsplit(cleaned)
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return ""
    return cleaned


# ------------------------------------------------------------------- highlighting

Highlight = tuple[Span, str]  # a span (token offsets used) and the CSS class it adds


def _token_classes(highlights: Iterable[Highlight], start: int, end: int) -> list[frozenset[str]]:
    sets: list[set[str]] = [set() for _ in range(end - start)]
    for span, cls in highlights:
        if not span.has_tokens:
            continue
        for t in range(max(start, span.start_token), min(end, span.end_token)):
            sets[t - start].add(cls)
    return [frozenset(s) for s in sets]


def _mark(classes: frozenset[str]) -> str:
    return f'<mark class="{" ".join(sorted(classes))}">'


def highlight_original(ex: NqExample, start_token: int, end_token: int,
                       highlights: Sequence[Highlight], anchors: dict[int, str] | None = None,
                       ) -> str:
    """The page HTML from token ``start_token`` to ``end_token`` with marks inserted.

    ``anchors`` maps a token index to ids (space-separated) placed as empty spans before it.
    The result is *not yet sanitized*.
    """
    data = ex.html_bytes
    toks = ex.document_tokens
    if not toks:
        return ""
    start_token = max(0, start_token)
    end_token = min(len(toks), end_token)
    classes = _token_classes(highlights, start_token, end_token)
    out: list[bytes] = []
    pos = toks[start_token].start_byte if start_token < end_token else 0
    open_cls: frozenset[str] | None = None
    for i in range(start_token, end_token):
        tok = toks[i]
        if tok.start_byte < pos:  # overlapping or out-of-order offsets: skip the token
            continue
        gap = data[pos:tok.start_byte]
        cls = classes[i - start_token] if not tok.html_token else frozenset()
        if open_cls is not None and (cls != open_cls or b"<" in gap or b">" in gap):
            out.append(b"</mark>")
            open_cls = None
        out.append(gap)
        if anchors and i in anchors:
            if open_cls is not None:
                out.append(b"</mark>")
                open_cls = None
            out.extend(f'<span id="{a}"></span>'.encode() for a in anchors[i].split())
        if cls and open_cls is None:
            out.append(_mark(cls).encode())
            open_cls = cls
        out.append(data[tok.start_byte:tok.end_byte])
        pos = tok.end_byte
    if open_cls is not None:
        out.append(b"</mark>")
    return b"".join(out).decode("utf-8", errors="replace")


def highlight_simplified(ex: SimplifiedNqExample, start_token: int, end_token: int,
                         highlights: Sequence[Highlight], anchors: dict[int, str] | None = None,
                         ) -> str:
    """Like :func:`highlight_original`, rebuilt from the tokens of a simplified example.

    Words are spaced as a reader expects (:func:`nqkit.text.display.space_between`); a
    space between two words of the same mark stays inside it.
    """
    toks = ex.tokens
    start_token = max(0, start_token)
    end_token = min(len(toks), end_token)
    classes = _token_classes(highlights, start_token, end_token)
    out: list[str] = []
    open_cls: frozenset[str] | None = None
    prev = ""  # the previous word token, "" after a tag
    for i in range(start_token, end_token):
        t = toks[i]
        is_tag = is_tag_token(t)
        cls = frozenset() if is_tag else classes[i - start_token]
        if open_cls is not None and cls != open_cls:
            out.append("</mark>")
            open_cls = None
        if anchors and i in anchors:
            if open_cls is not None:
                out.append("</mark>")
                open_cls = None
            out.extend(f'<span id="{a}"></span>' for a in anchors[i].split())
        if is_tag:
            out.append(t.lower() + " ")
            prev = ""
            continue
        if prev and space_between(prev, t):
            out.append(" ")
        if cls and open_cls is None:
            out.append(_mark(cls))
            open_cls = cls
        out.append(html.escape(simplified_word(t)))
        prev = t
    if open_cls is not None:
        out.append("</mark>")
    return "".join(out)


def render_span(ex: NqExample | SimplifiedNqExample, start_token: int, end_token: int,
                highlights: Sequence[Highlight], anchors: dict[int, str] | None = None) -> str:
    """Sanitized, highlighted HTML of a token range of either format."""
    if isinstance(ex, NqExample):
        raw = highlight_original(ex, start_token, end_token, highlights, anchors)
    else:
        raw = highlight_simplified(ex, start_token, end_token, highlights, anchors)
    return sanitize(raw)


def num_tokens(ex: NqExample | SimplifiedNqExample) -> int:
    return len(ex.document_tokens) if isinstance(ex, NqExample) else len(ex.tokens)


def token_text(ex: NqExample | SimplifiedNqExample, start: int, end: int, limit: int = 0) -> str:
    """Readable plain text of a token range (HTML tags left out), cut to ``limit`` words
    if given: the page's own words and spacing for the original format, rebuilt spacing
    for the simplified one (:mod:`nqkit.text.display`)."""
    # Only the words shown are read (and one more, to know whether to cut): a candidate
    # can be a table of thousands of tokens.
    if isinstance(ex, NqExample):
        offsets = ((t.start_byte, t.end_byte, t.token)
                   for t in ex.document_tokens[start:end] if not t.html_token)
        words, spaces = page_words(ex.html_bytes,
                                   itertools.islice(offsets, limit + 1) if limit else offsets)
    else:
        words, spaces = simplified_words(_first_words(ex.tokens[start:end], limit + 1)
                                         if limit else ex.tokens[start:end])
    return join_words(words, spaces, limit)


def _first_words(tokens: Iterable[str], n: int) -> Iterator[str]:
    """``tokens`` up to and including the ``n``-th word (tags pass through)."""
    for t in tokens:
        yield t
        if not is_tag_token(t):
            n -= 1
            if n <= 0:
                return


def mark_spans(text: str, spans: Iterable[tuple[int, int]], cls: str = "hl") -> str:
    """Plain ``text`` (third-party data) as HTML: every character escaped, and the
    character ``spans`` (sorted, not overlapping, as
    :func:`nqkit.text.dpr_tokenize.answer_char_spans` gives them) wrapped in
    ``<mark class="cls">``, the only markup in the result. ``cls`` is one of the
    browser's own mark classes."""
    if cls not in MARK_CLASSES:
        raise ValueError(f"not a mark class of the browser: {cls!r}")
    out: list[str] = []
    pos = 0
    for start, end in spans:
        start, end = max(start, pos), min(end, len(text))
        if start >= end:
            continue
        out.append(html.escape(text[pos:start]))
        out.append(f'<mark class="{cls}">{html.escape(text[start:end])}</mark>')
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)
