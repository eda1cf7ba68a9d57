"""What the copying baselines share: matching Wikipedia pages and moving a long answer
from a training page to an evaluation page.

Pages are matched by URL or by title (NQ paper §6.1: 79% of the dev pages also occur in
train). The same page may come in different revisions (``oldid``), so the URL is compared
without its revision, and the title (``document_title``, or the ``title=`` parameter of the
URL in the simplified format) is compared after unescaping, with ``_`` read as a space and
case folded.

Offsets of one revision mean nothing in another, so a training long answer is carried by
its **text** (the candidate's words): on the evaluation page it becomes the first candidate
with exactly that text. Only when no candidate has that text and the revisions are the
same (equal URLs) is the training candidate index used as is. Only a 16-byte digest of the
text is kept, so that the whole training set (307k examples) fits in memory.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass
from urllib.parse import unquote

from nqkit.baselines.predict_files import AnyNqExample
from nqkit.formats.nq import NqExample, Span

_TITLE_RE = re.compile(r"[?&](?:amp;)?title=([^&]+)")
_OLDID_RE = re.compile(r"(?:&amp;|&)oldid=\d+")


def normalize_title(title: str) -> str:
    """``Trade_winds`` / ``Trade%20winds`` / ``Trade winds`` -> ``trade winds``."""
    t = html.unescape(unquote(title)).replace("_", " ")
    return " ".join(t.split()).casefold()


def page_title(example: AnyNqExample) -> str:
    """The page's title: ``document_title`` when given, else read from the URL."""
    title = example.document_title if isinstance(example, NqExample) else ""
    if not title:
        m = _TITLE_RE.search(example.document_url)
        title = m.group(1) if m else ""
    return normalize_title(title)


def page_url(example: AnyNqExample) -> str:
    """The URL without its revision id (empty when the example has no URL)."""
    return _OLDID_RE.sub("", html.unescape(example.document_url).strip())


def page_keys(example: AnyNqExample) -> list[str]:
    """Keys under which a page is known: its URL (sans revision) and its title."""
    keys = []
    if url := page_url(example):
        keys.append("url:" + url)
    if title := page_title(example):
        keys.append("title:" + title)
    return keys


def text_key(text: str) -> bytes:
    """A digest that identifies a candidate by its words."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


@dataclass(frozen=True, slots=True)
class CopiedAnswer:
    """A long answer taken from a training page, in a revision-independent form."""

    key: bytes  # text_key of the candidate's words (joined by single spaces)
    candidate_index: int  # its index on the training page
    url: str  # the training page's full URL (revision included)


def copied_answer(example: AnyNqExample, annotation_index: int = 0) -> CopiedAnswer | None:
    """The long answer of one training annotation, or None when it is NULL."""
    if annotation_index >= len(example.annotations):
        return None
    a = example.annotations[annotation_index]
    if not a.has_long:
        return None
    idx = a.candidate_index
    if not 0 <= idx < len(example.long_answer_candidates):
        idx = _candidate_of_span(example, a.long_answer)
    return CopiedAnswer(text_key(example.span_text(a.long_answer)), idx, example.document_url)


def _candidate_of_span(example: AnyNqExample, span: Span) -> int:
    for i, c in enumerate(example.long_answer_candidates):
        if (c.span.start_token, c.span.end_token) == (span.start_token, span.end_token):
            return i
    return -1


def candidate_keys(example: AnyNqExample) -> list[bytes]:
    """The :func:`text_key` of every candidate of the page."""
    return [text_key(example.span_text(c)) for c in example.long_answer_candidates]


def transfer(answer: CopiedAnswer, example: AnyNqExample, keys: list[bytes] | None = None
             ) -> int:
    """Index of the candidate of ``example`` that carries ``answer``, or -1 when none does."""
    keys = keys if keys is not None else candidate_keys(example)
    for i, k in enumerate(keys):
        if k == answer.key:
            return i
    same_revision = answer.url and answer.url == example.document_url
    if same_revision and 0 <= answer.candidate_index < len(example.long_answer_candidates):
        return answer.candidate_index
    return -1


def example_answer(example: AnyNqExample, threshold: int = 2) -> CopiedAnswer | None:
    """The long answer of a training example: its annotation's when it has one annotation;
    with several (5-way data used for training), the most common non-null one when at
    least ``threshold`` annotators gave a long answer (the evaluation's rule), else None."""
    answers = [copied_answer(example, i) for i in range(len(example.annotations))]
    if len(answers) == 1:
        return answers[0]
    given = [a for a in answers if a is not None]
    if len(given) < threshold:
        return None
    keys = [a.key for a in given]
    return max(given, key=lambda a: keys.count(a.key))  # first of the most common
