"""Visible text of HTML: a byte span of an NQ page (selectolax / lexbor parser).

NQ answer spans are byte offsets into ``document_html``; the span may cut through tags
(``Wilhelm Conrad Röntgen</A>, of Germany``). The NQ-open conversion takes the text a
browser would show for such a fragment: the fragment is parsed as HTML (entities decoded,
tags dropped, unbalanced tags tolerated) and its text nodes are concatenated unchanged.
"""

from __future__ import annotations

__all__ = ["html_span_text", "html_text"]


def html_text(html: str) -> str:
    """The concatenated text nodes of an HTML fragment (no separators, no stripping)."""
    if "<" not in html and "&" not in html:
        return html
    from selectolax.lexbor import LexborHTMLParser

    root = LexborHTMLParser(html).root
    if root is None:
        return ""
    return root.text(deep=True, separator="", strip=False)


def html_span_text(document_html: bytes, start_byte: int, end_byte: int) -> str:
    """Visible text of ``document_html[start_byte:end_byte]`` (UTF-8 bytes)."""
    return html_text(document_html[start_byte:end_byte].decode("utf-8", errors="replace"))
