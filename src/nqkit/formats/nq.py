"""Natural Questions records: the original format and the simplified format.

Original format (dataset README, "Data Format"): one JSON object per line with the page's
HTML (``document_html``), its tokens with UTF-8 byte offsets into that HTML
(``document_tokens``), the long-answer candidates and the annotations (one in train, five
in dev). Start offsets are inclusive and end offsets exclusive; a null span has -1
everywhere.

Simplified format (``simplify_nq_example`` of the dataset README): the tokens joined by
single spaces as ``document_text`` (spaces inside a token become ``_``), byte offsets
removed, everything else kept.

Readers here are lazy: :func:`read_nq` yields one record per line over a path, a glob or a
list of shards, plain or gzipped. Building records costs time on full pages; tools that
need only annotations (the evaluation) use :mod:`nqkit.formats.nq_gold` instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter, itemgetter
from typing import Any, Literal

import msgspec
import orjson

from nqkit.errors import InputError, examples, location
from nqkit.io import PathLike, PathsLike, atomic_output, expand_paths, iter_lines, parse_json_line

YesNo = Literal["NONE", "YES", "NO"]
YES_NO_VALUES: tuple[str, ...] = ("NONE", "YES", "NO")

# Example ids are int64 in every official file (and in the official evaluation's parser).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# Long-answer types by the first token of a candidate (dataset README, "Data Statistics";
# paper §6.4).
CANDIDATE_TYPES: dict[str, str] = {
    "p": "paragraph",
    "table": "table",
    "tr": "table row",
    "ul": "list", "ol": "list", "dl": "list",
    "li": "list item", "dd": "list item", "dt": "list item",
}
TYPE_NAMES: tuple[str, ...] = ("paragraph", "table", "table row", "list", "list item", "other")

_TAG_RE = re.compile(r"^<\s*/?\s*([A-Za-z0-9]+)")


def tag_type(token: str) -> str:
    """Long-answer type of a candidate whose first token is ``token`` (e.g. ``<Table>``)."""
    m = _TAG_RE.match(token)
    if not m:
        return "other"
    return CANDIDATE_TYPES.get(m.group(1).lower(), "other")


@dataclass(frozen=True, slots=True)
class Span:
    """A span of a document, by bytes and/or tokens; -1 marks an absent offset."""

    start_byte: int  # inclusive UTF-8 byte offset into document_html, or -1
    end_byte: int  # exclusive byte offset, or -1
    start_token: int  # inclusive index into document_tokens, or -1
    end_token: int  # exclusive token index, or -1

    @property
    def is_null(self) -> bool:
        """Null as in the official evaluation: every offset negative."""
        return (self.start_byte < 0 and self.end_byte < 0
                and self.start_token < 0 and self.end_token < 0)

    @property
    def has_bytes(self) -> bool:
        return self.start_byte >= 0 and self.end_byte >= 0

    @property
    def has_tokens(self) -> bool:
        return self.start_token >= 0 and self.end_token >= 0

    def __reduce__(self) -> tuple[type[Span], tuple[int, int, int, int]]:
        # Pickled as a constructor call: about 3x faster both ways than the generic path
        # of slotted dataclasses, and gold records cross process boundaries by the 10,000.
        return Span, (self.start_byte, self.end_byte, self.start_token, self.end_token)

    def to_json(self, *, with_bytes: bool = True) -> dict[str, int]:
        d = {"start_token": self.start_token, "end_token": self.end_token}
        if with_bytes:
            d = {"start_byte": self.start_byte, "end_byte": self.end_byte, **d}
        return d


NULL_SPAN = Span(-1, -1, -1, -1)


@dataclass(frozen=True, slots=True)
class Token:
    """One token of the page: a word, or an HTML tag when ``html_token``."""

    token: str  # the token text (an HTML tag such as "<P>" when html_token)
    start_byte: int  # inclusive byte offset into document_html
    end_byte: int  # exclusive byte offset
    html_token: bool  # True for HTML tags


@dataclass(frozen=True, slots=True)
class Candidate:
    """A long-answer candidate: a paragraph, table, table row, list or list item."""

    span: Span  # offsets of the candidate (bytes are -1 in the simplified format)
    top_level: bool  # not nested inside another candidate (a convenience flag only)


@dataclass(frozen=True, slots=True)
class Annotation:
    """One annotator's answer: a long answer, short answers and a yes/no answer."""

    annotation_id: int  # the annotation's id (a uint64)
    long_answer: Span  # NULL_SPAN when the annotator found no long answer
    candidate_index: int  # index into long_answer_candidates, -1 when null
    short_answers: tuple[Span, ...]  # a set of spans inside the long answer (often empty)
    yes_no_answer: str  # "NONE", "YES" or "NO"

    def __reduce__(self) -> tuple[type[Annotation], tuple[Any, ...]]:
        return Annotation, (self.annotation_id, self.long_answer, self.candidate_index,
                            self.short_answers, self.yes_no_answer)  # see Span.__reduce__

    @property
    def has_long(self) -> bool:
        return not self.long_answer.is_null

    @property
    def has_short(self) -> bool:
        """A short answer is a non-null span or a yes/no answer (official rule)."""
        return self.yes_no_answer != "NONE" or (
            bool(self.short_answers) and any(not s.is_null for s in self.short_answers))


@dataclass(frozen=True)
class NqExample:
    """One example of the original NQ format."""

    example_id: int  # int64 id, unique in a split
    question_text: str  # the question, lower-cased as issued
    question_tokens: tuple[str, ...]  # its tokens
    document_title: str  # Wikipedia page title
    document_url: str  # timestamped Wikipedia URL
    document_html: str  # the page's full HTML
    document_tokens: tuple[Token, ...]  # words and HTML tags with byte offsets
    long_answer_candidates: tuple[Candidate, ...]  # in document order
    annotations: tuple[Annotation, ...]  # 1 in train, 5 in dev, none in test input

    @cached_property
    def html_bytes(self) -> bytes:
        """The HTML as UTF-8 bytes: the space that byte offsets index."""
        return self.document_html.encode("utf-8")

    def span_text(self, span: Span | Candidate) -> str:
        """Text of a span from its non-HTML tokens, joined by single spaces."""
        s = span.span if isinstance(span, Candidate) else span
        if not s.has_tokens:
            raise ValueError("span has no token offsets")
        return " ".join(t.token for t in self.document_tokens[s.start_token:s.end_token]
                        if not t.html_token)

    def span_html(self, span: Span | Candidate) -> str:
        """The raw HTML of a span, cut from the page by its byte offsets."""
        s = span.span if isinstance(span, Candidate) else span
        if not s.has_bytes:
            raise ValueError("span has no byte offsets")
        return self.html_bytes[s.start_byte:s.end_byte].decode("utf-8", errors="replace")

    def candidate_type(self, index: int) -> str:
        """Type of candidate ``index`` from its first token (paragraph, table, ...)."""
        c = self.long_answer_candidates[index].span
        return tag_type(self.document_tokens[c.start_token].token)

    @cached_property
    def candidate_parents(self) -> tuple[int, ...]:
        """For each candidate, the index of the smallest candidate containing it, or -1."""
        return _parents([c.span for c in self.long_answer_candidates])

    def to_json(self) -> dict[str, Any]:
        """The official JSON object of this example (write it with sorted keys)."""
        return {
            "annotations": [_annotation_json(a, True) for a in self.annotations],
            "document_html": self.document_html,
            "document_title": self.document_title,
            "document_tokens": [{"end_byte": t.end_byte, "html_token": t.html_token,
                                 "start_byte": t.start_byte, "token": t.token}
                                for t in self.document_tokens],
            "document_url": self.document_url,
            "example_id": self.example_id,
            "long_answer_candidates": [_candidate_json(c, True)
                                       for c in self.long_answer_candidates],
            "question_text": self.question_text,
            "question_tokens": list(self.question_tokens),
        }

    def candidate_depth(self, index: int) -> int:
        """Nesting depth of a candidate: 0 for top-level ones."""
        depth, p = 0, self.candidate_parents[index]
        while p >= 0:
            depth, p = depth + 1, self.candidate_parents[p]
        return depth


@dataclass(frozen=True)
class SimplifiedNqExample:
    """One example of the simplified NQ format (tokens only, no HTML)."""

    example_id: int  # int64 id
    question_text: str  # the question
    document_url: str  # timestamped Wikipedia URL
    document_text: str  # the page tokens joined by single spaces
    long_answer_candidates: tuple[Candidate, ...]  # token offsets only
    annotations: tuple[Annotation, ...]  # token offsets only

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        """The whitespace-separated tokens that token offsets index."""
        return tuple(self.document_text.split(" "))

    def span_text(self, span: Span | Candidate) -> str:
        """Text of a span from its non-HTML tokens (tags recognised as ``<...>``)."""
        s = span.span if isinstance(span, Candidate) else span
        return " ".join(t for t in self.tokens[s.start_token:s.end_token] if not _is_tag(t))

    def candidate_type(self, index: int) -> str:
        c = self.long_answer_candidates[index].span
        return tag_type(self.tokens[c.start_token])

    @cached_property
    def candidate_parents(self) -> tuple[int, ...]:
        return _parents([c.span for c in self.long_answer_candidates])

    def to_json(self) -> dict[str, Any]:
        """The simplified-format JSON object, keys in the official order."""
        return {
            "question_text": self.question_text,
            "example_id": self.example_id,
            "document_url": self.document_url,
            "document_text": self.document_text,
            "long_answer_candidates": [_candidate_json(c, False)
                                       for c in self.long_answer_candidates],
            "annotations": [_annotation_json(a, False) for a in self.annotations],
        }

    @property
    def document_title(self) -> str:
        """The title, read from the URL (the simplified format has no title field)."""
        m = re.search(r"[?&]title=([^&]+)", self.document_url)
        return m.group(1).replace("_", " ") if m else ""


def _span_json(s: Span, with_bytes: bool) -> dict[str, int]:
    if with_bytes:
        return {"end_byte": s.end_byte, "end_token": s.end_token,
                "start_byte": s.start_byte, "start_token": s.start_token}
    return {"end_token": s.end_token, "start_token": s.start_token}


def _candidate_json(c: Candidate, with_bytes: bool) -> dict[str, Any]:
    return {**_span_json(c.span, with_bytes), "top_level": c.top_level}


def _annotation_json(a: Annotation, with_bytes: bool) -> dict[str, Any]:
    return {
        "annotation_id": a.annotation_id,
        "long_answer": {"candidate_index": a.candidate_index,
                        **_span_json(a.long_answer, with_bytes)},
        "short_answers": [_span_json(s, with_bytes) for s in a.short_answers],
        "yes_no_answer": a.yes_no_answer,
    }


def write_nq(path: PathLike, examples: Iterable[NqExample | SimplifiedNqExample]) -> int:
    """Write examples as JSON lines (``.gz`` compressed), atomically; returns the count.

    Original-format examples are written as the official files are: sorted keys, compact
    separators, UTF-8 (so an unchanged example reads back byte-identical).
    """
    n = 0
    with atomic_output(path, "wb") as f:
        for ex in examples:
            opts = orjson.OPT_SORT_KEYS if isinstance(ex, NqExample) else 0
            f.write(orjson.dumps(ex.to_json(), option=opts))
            f.write(b"\n")
            n += 1
    return n


def _is_tag(token: str) -> bool:
    return len(token) > 2 and token[0] == "<" and token[-1] == ">"


def _parents(spans: list[Span]) -> tuple[int, ...]:
    """For each span, the last earlier span containing it (by tokens), or -1.

    Official candidates come in document order and nest properly, so a stack of open
    candidates finds each one's container in one pass. A file whose candidates do not
    (out of order, or overlapping without nesting) is answered by the definition itself,
    in quadratic time, rather than with wrong parents.
    """
    parents = [-1] * len(spans)
    stack: list[int] = []
    for i, s in enumerate(spans):
        if i and s.start_token < spans[i - 1].start_token:
            return _parents_by_definition(spans)
        while stack and spans[stack[-1]].end_token <= s.start_token:
            stack.pop()
        if stack:
            if spans[stack[-1]].end_token < s.end_token:  # overlaps without nesting
                return _parents_by_definition(spans)
            parents[i] = stack[-1]
        stack.append(i)
    return tuple(parents)


def _parents_by_definition(spans: list[Span]) -> tuple[int, ...]:
    return tuple(next((j for j in range(i - 1, -1, -1)
                       if spans[j].start_token <= s.start_token
                       and s.end_token <= spans[j].end_token), -1)
                 for i, s in enumerate(spans))


# --------------------------------------------------------------------------- parsing

class _Parser:
    """Builds records from decoded JSON, raising InputError at ``where`` on bad fields."""

    def __init__(self, where: str | None) -> None:
        self.where = where

    def fail(self, problem: str, fix: str) -> InputError:
        return InputError(self.where, problem, fix)

    def get(self, d: Mapping[str, Any], key: str, typ: type | tuple[type, ...], ctx: str) -> Any:
        # decoded JSON objects are dicts: test that first (an ABC check costs ~10x more)
        if type(d) is not dict and not isinstance(d, Mapping):
            raise self.fail(f"{ctx} must be a JSON object, found {type(d).__name__}",
                            "check the file is in the Natural Questions format")
        if key not in d:
            raise self.fail(f"missing key {key!r} in {ctx}",
                            "check the file is in the Natural Questions format")
        v = d[key]
        if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
            want = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
            raise self.fail(f"{ctx}.{key} must be {want}, found {type(v).__name__} {v!r:.40}",
                            "check the file is in the Natural Questions format")
        return v

    def span(self, d: Mapping[str, Any], ctx: str, *, bytes_required: bool) -> Span:
        if type(d) is dict and (s := _well_formed_span(d, -2 if bytes_required else -1)):
            return s
        if not isinstance(d, Mapping):  # a number or null where a span should be
            raise self.fail(f"{ctx} must be a JSON object (a span), found "
                            f"{type(d).__name__} {d!r:.40}",
                            "check the file is in the Natural Questions format")
        get = self.get
        sb = get(d, "start_byte", int, ctx) if bytes_required or "start_byte" in d else -1
        eb = get(d, "end_byte", int, ctx) if bytes_required or "end_byte" in d else -1
        st = get(d, "start_token", int, ctx)
        et = get(d, "end_token", int, ctx)
        return self.check_span(Span(sb, eb, st, et), ctx)

    def check_span(self, s: Span, ctx: str) -> Span:
        """The official span rules: offsets are -1 (absent) or a 64-bit position, no
        half-null spans, start < end."""
        for name in ("start_byte", "end_byte", "start_token", "end_token"):
            v = getattr(s, name)
            if not -1 <= v <= INT64_MAX:
                raise self.fail(f"{ctx}.{name} is {v:.6g}, not a position or -1",
                                "offsets are positions in the document, -1 when absent")
        if (s.start_byte < 0) != (s.end_byte < 0):
            raise self.fail(f"{ctx} is half null (start_byte={s.start_byte}, "
                            f"end_byte={s.end_byte})",
                            "give both byte offsets or set both to -1")
        if (s.start_token < 0) != (s.end_token < 0):
            raise self.fail(f"{ctx} is half null (start_token={s.start_token}, "
                            f"end_token={s.end_token})",
                            "give both token offsets or set both to -1")
        if s.has_bytes and s.start_byte >= s.end_byte:
            raise self.fail(f"{ctx} has start_byte >= end_byte ({s.start_byte} >= {s.end_byte})",
                            "end offsets are exclusive: end must exceed start")
        if s.has_tokens and s.start_token >= s.end_token:
            raise self.fail(f"{ctx} has start_token >= end_token "
                            f"({s.start_token} >= {s.end_token})",
                            "end offsets are exclusive: end must exceed start")
        return s

    def example_id(self, value: Any, *, strings: bool = False) -> int | str:
        """A valid example id: a 64-bit signed integer (or, when allowed, a string)."""
        if strings and isinstance(value, str):
            return value
        if isinstance(value, float) and value.is_integer() and abs(value) >= 2**63:
            # JSON parsers (orjson, msgspec) read integers beyond 64 bits as floats
            raise self.fail(f"example_id {value:.6g} does not fit in 64 bits (NQ ids are "
                            "int64)", "check the file is in the Natural Questions format")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"example_id must be an integer, found {value!r:.40}",
                            "check the file is in the Natural Questions format")
        if not INT64_MIN <= value <= INT64_MAX:
            raise self.fail(f"example_id {value:.6g} does not fit in 64 bits (NQ ids are "
                            "int64)", "check the file is in the Natural Questions format")
        return value

    def check_bounds(self, spans: Iterable[tuple[str, Span]], num_tokens: int,
                     html: str | HtmlSize | None) -> None:
        """Every span lies inside the document: ``end_token <= num_tokens`` and, when the
        page's ``html`` (or its size) is given, ``end_byte`` within its UTF-8 bytes."""
        size = HtmlSize.of(html)
        for ctx, s in spans:
            if s.end_token > num_tokens:
                raise self.fail(f"{ctx} ends at token {s.end_token:,}, past the end of the "
                                f"document ({num_tokens:,} tokens)",
                                "offsets must index the document; check the file is "
                                "unmodified NQ data")
            if size is not None and not size.covers(s.end_byte):
                raise self.fail(f"{ctx} ends at byte {s.end_byte:,}, past the end of the "
                                f"document ({size.exact():,} bytes)",
                                "offsets must index the document; check the file is "
                                "unmodified NQ data")

    def check_document(self, candidates: tuple[Candidate, ...],
                       annotations: tuple[Annotation, ...], num_tokens: int,
                       html: str | HtmlSize | None,
                       token_offsets: tuple[Sequence[Any], Sequence[Any]] | None = None
                       ) -> None:
        """Candidates and annotations point inside the document and at real candidates.

        With ``token_offsets`` (the original format: every token's ``start_byte`` and
        ``end_byte``, in two lists), every token must lie inside the HTML too
        (:meth:`check_tokens`). The work here is O(candidates + annotations) per example,
        plus a few C loops over the token offsets.
        """
        n_cands = len(candidates)
        top_token = top_byte = -1
        for c in candidates:
            s = c.span
            if s.end_token > top_token:
                top_token = s.end_token
            if s.end_byte > top_byte:
                top_byte = s.end_byte
        for i, a in enumerate(annotations):
            if a.candidate_index >= n_cands:
                raise self.fail(f"annotations[{i}].long_answer.candidate_index is "
                                f"{a.candidate_index:,} but the example has "
                                f"{n_cands:,} candidates",
                                "check the file is unmodified NQ data")
            for s in (a.long_answer, *a.short_answers):
                if s.end_token > top_token:
                    top_token = s.end_token
                if s.end_byte > top_byte:
                    top_byte = s.end_byte
        size = HtmlSize.of(html)
        if top_token > num_tokens or (size is not None and not size.covers(top_byte)):
            self.check_bounds(_named_spans(candidates, annotations), num_tokens, size)
            raise AssertionError("unreachable: a span is past the end but none fails")
        if token_offsets is not None and size is not None:
            self.check_tokens(*token_offsets, size)

    def check_tokens(self, starts: Sequence[Any], ends: Sequence[Any], size: HtmlSize) -> None:
        """Every token's byte offsets are integers with ``0 <= start_byte <= end_byte``
        inside the page (``end_byte`` at most its UTF-8 length).

        Every token, not only those spans begin and end at: a token's offsets are how the
        browser, ReQA and the text of a span cut the page, and one wrong token anywhere
        garbles what they show without a word. The common case is decided by C loops
        (:func:`tokens_in_page`); only a page that fails them is walked token by token,
        to name the first bad one (or to accept tokens that are valid but out of order).
        """
        if tokens_in_page(starts, ends, size):
            return
        for i, (sb, eb) in enumerate(zip(starts, ends, strict=True)):
            if type(sb) is not int or type(eb) is not int:
                raise self.fail(f"document_tokens[{i}] byte offsets must be integers, found "
                                f"{sb!r:.20} and {eb!r:.20}",
                                "check the file is in the Natural Questions format")
            if not 0 <= sb <= eb or not size.covers(eb):
                how = "reversed" if 0 <= eb < sb and size.covers(sb) else "outside the document"
                raise self.fail(f"document_tokens[{i}] spans bytes {sb:,} to {eb:,}, {how} "
                                f"({size.exact():,} bytes)",
                                "token offsets must index the page's HTML; check the file "
                                "is unmodified NQ data")

    def annotation(self, a: Mapping[str, Any], i: int, *, bytes_required: bool) -> Annotation:
        if type(a) is dict and (ann := _well_formed_annotation(a, bytes_required)):
            return ann
        ctx = f"annotations[{i}]"
        la = self.get(a, "long_answer", dict, ctx)
        long_span = self.span(la, f"{ctx}.long_answer", bytes_required=bytes_required)
        cand = la.get("candidate_index", -1)
        if isinstance(cand, bool) or not isinstance(cand, int) or cand < -1:
            raise self.fail(f"{ctx}.long_answer.candidate_index must be an integer >= -1, "
                            f"found {cand!r:.40}", "use -1 for no long answer")
        if (cand < 0) != long_span.is_null:
            raise self.fail(f"{ctx}.long_answer.candidate_index is {cand} but the long answer "
                            f"is {'null' if long_span.is_null else 'not null'}",
                            "a null long answer has candidate_index -1, any other a "
                            "candidate's index")
        aid = a.get("annotation_id", 0)
        if aid is None:
            aid = 0
        if isinstance(aid, bool) or not isinstance(aid, int):
            raise self.fail(f"{ctx}.annotation_id must be an integer, found {aid!r:.40}",
                            "check the file is in the Natural Questions format")
        shorts = tuple(
            self.span(s, f"{ctx}.short_answers[{j}]", bytes_required=bytes_required)
            for j, s in enumerate(self.get(a, "short_answers", list, ctx))
        )
        yn = self.get(a, "yes_no_answer", str, ctx)
        if yn.upper() not in YES_NO_VALUES:
            raise self.fail(f"{ctx}.yes_no_answer is {yn!r}", "use YES, NO or NONE")
        return Annotation(
            annotation_id=aid,
            long_answer=long_span,
            candidate_index=cand,
            short_answers=shorts,
            yes_no_answer=yn.upper(),
        )

    def candidates(self, d: Mapping[str, Any], *, bytes_required: bool) -> tuple[Candidate, ...]:
        return tuple(
            Candidate(self.span(c, f"long_answer_candidates[{i}]", bytes_required=bytes_required),
                      bool(c.get("top_level", True)))  # span() checked that c is an object
            for i, c in enumerate(self.get(d, "long_answer_candidates", list, "example"))
        )


class HtmlSize:
    """The UTF-8 length of a page's HTML, found exactly only when cheap bounds cannot
    decide whether an offset lies inside it (encoding a 300 kB page for every example
    would cost more than the checks).

    ``lo <= exact <= hi``; ``exact`` is computed once, by ``compute``, when an offset falls
    between the bounds.
    """

    __slots__ = ("_compute", "_exact", "hi", "lo")

    def __init__(self, lo: int, hi: int, compute: Callable[[], int]) -> None:
        self.lo, self.hi = lo, hi
        self._compute = compute
        self._exact: int | None = None

    @classmethod
    def of(cls, html: str | HtmlSize | None) -> HtmlSize | None:
        """The size of an HTML string (``None`` stays ``None``)."""
        if html is None or isinstance(html, HtmlSize):
            return html
        # a character is 1 to 4 UTF-8 bytes (lone surrogates, kept by JSON, are 3)
        return cls(len(html), 4 * len(html),
                   lambda: len(html.encode("utf-8", errors="surrogatepass")))

    @classmethod
    def of_json(cls, raw: Any) -> HtmlSize:
        """The size of the HTML held by ``raw`` (a buffer: bytes, ``msgspec.Raw``), a JSON
        string literal (quotes included), without decoding it unless an offset falls
        between the bounds.

        The decoded text is at most as long in UTF-8 as the literal's body (an escape
        never grows: ``\\n`` is 2 bytes for 1, ``\\u00e9`` 6 for 2, a surrogate pair
        12 for 4), and each escape shortens it by at most 5 bytes (``\\u0041``: 6 for
        1), so counting backslashes bounds it from below. In the official files escapes
        are about 3.5% of the page (``"``, newlines, tabs) and spans end well before the
        last fifth of it, so the lower bound decides. Counting costs about 0.1 ms for a
        250 kB page (numpy counts faster, but importing it costs more than a shard's
        worth of counting).
        """
        data = bytes(raw)
        body = len(data) - 2

        def compute() -> int:
            import json

            return len(json.loads(data).encode("utf-8", errors="surrogatepass"))

        return cls(body - 5 * data.count(b"\\"), body, compute)

    def covers(self, end: int) -> bool:
        """True when an end offset ``end`` lies inside the page (``end <= length``)."""
        if end <= self.lo:
            return True
        if end > self.hi:
            return False
        return end <= self.exact()

    def exact(self) -> int:
        if self._exact is None:
            self._exact = self._compute()
        return self._exact


def _named_spans(candidates: tuple[Candidate, ...], annotations: tuple[Annotation, ...]
                 ) -> Iterator[tuple[str, Span]]:
    """Every span of an example with its name for messages, in file order."""
    for i, c in enumerate(candidates):
        yield f"long_answer_candidates[{i}]", c.span
    for i, a in enumerate(annotations):
        yield f"annotations[{i}].long_answer", a.long_answer
        for j, s in enumerate(a.short_answers):
            yield f"annotations[{i}].short_answers[{j}]", s


def _well_formed_span(d: dict[str, Any], absent: int) -> Span | None:
    """The span of an offsets object that passes every rule of :meth:`_Parser.span`, else
    ``None`` (and the careful path finds the fault and words the message).

    Offsets left out read as ``absent``: -1, or -2 where they are required (then the
    object fails here). Exactly the spans the careful path accepts pass: offsets are ints
    (not bools), each pair is both -1 or ``0 <= start < end <= INT64_MAX``.
    """
    sb = d.get("start_byte", absent)
    eb = d.get("end_byte", absent)
    st = d.get("start_token", -2)
    et = d.get("end_token", -2)
    if (type(sb) is int and type(eb) is int and type(st) is int and type(et) is int
            and (sb == eb == -1 or 0 <= sb < eb <= INT64_MAX)
            and (st == et == -1 or 0 <= st < et <= INT64_MAX)):
        return NULL_SPAN if sb == st == -1 else Span(sb, eb, st, et)
    return None


def _well_formed_annotation(a: dict[str, Any], bytes_required: bool) -> Annotation | None:
    """The annotation of an object that passes every rule of :meth:`_Parser.annotation`
    with nothing to normalize (an int id, an upper-case yes/no answer), else ``None``."""
    la = a.get("long_answer")
    shorts = a.get("short_answers")
    yn = a.get("yes_no_answer")
    aid = a.get("annotation_id", 0)
    if (type(la) is not dict or type(shorts) is not list or type(aid) is not int
            or type(yn) is not str or yn not in YES_NO_VALUES):
        return None
    absent = -2 if bytes_required else -1
    long_span = _well_formed_span(la, absent)
    cand = la.get("candidate_index", -1)
    if long_span is None or type(cand) is not int or cand < -1 or (cand < 0) != (
            long_span is NULL_SPAN):
        return None
    spans = []
    for s in shorts:
        span = _well_formed_span(s, absent) if type(s) is dict else None
        if span is None:
            return None
        spans.append(span)
    return Annotation(aid, long_span, cand, tuple(spans), yn)


# A token's fields, read as columns by C loops (map over the tokens' dicts or records).
_TOKEN_TEXT, _TOKEN_START, _TOKEN_END, _TOKEN_HTML = map(
    itemgetter, ("token", "start_byte", "end_byte", "html_token"))
START_BYTE, END_BYTE = attrgetter("start_byte"), attrgetter("end_byte")
_STR = frozenset((str,))
_INT_LIST_BYTES = b"0123456789,[]"  # every byte orjson writes for a list of ints >= 0


def tokens_in_page(starts: Sequence[Any], ends: Sequence[Any], size: HtmlSize) -> bool:
    """True when the tokens certainly pass :meth:`_Parser.check_tokens`: their offsets are
    ints (not bools) in page order, ``0 <= start[0] <= end[0] <= start[1] <= ... <= end[-1]``,
    and the last ends inside the page. False means "walk the tokens" (a bad token, or valid
    tokens out of order), never "invalid".

    Official pages are in that order, so C loops decide them: the interleaved offsets are
    found sorted (timsort sees one run: n comparisons of ints), their ends bound them, and
    orjson writes them with digits only (a bool is ``true``, a float has a ``.`` or an
    ``e``, an int beyond 64 bits is refused). About 0.2 ms for a 7,000-token page, where a
    Python loop over its tokens takes 2 ms; NQ train has 307,373 pages.
    """
    n = len(starts)
    if not n:
        return True
    offsets: list[Any] = [0] * (2 * n)
    offsets[0::2] = starts
    offsets[1::2] = ends
    try:
        return (offsets == sorted(offsets) and offsets[0] >= 0 and size.covers(offsets[-1])
                and not orjson.dumps(offsets).translate(None, _INT_LIST_BYTES))
    except TypeError:  # a string or null among them; orjson.JSONEncodeError is a TypeError
        return False


def check_token_fields(p: _Parser, raw: Sequence[Any], *, offsets: bool = True) -> None:
    """The rule for a token's fields, walked token by token to name the first bad one:
    an object with a string ``token``, ``start_byte`` and ``end_byte`` (their values are
    :meth:`_Parser.check_tokens`'s; ``offsets=False`` for a reader that never reads
    them) and an ``html_token`` flag (a bool, or an int as 0/1)."""
    for i, t in enumerate(raw):
        ctx = f"document_tokens[{i}]"
        p.get(t, "token", str, ctx)
        if offsets:
            p.get(t, "start_byte", object, ctx)
            p.get(t, "end_byte", object, ctx)
        p.get(t, "html_token", (bool, int), ctx)


def _tokens(p: _Parser, d: Mapping[str, Any]) -> tuple[Token, ...]:
    """The page's tokens as records, each checked by :func:`check_token_fields`' rule."""
    raw = p.get(d, "document_tokens", list, "example")
    try:
        # In C, with exact types (a str, ints that are not bools, a bool): 2x faster than
        # building the records in a Python loop, which leaves time for checking them all.
        return tuple(msgspec.convert(raw, list[Token]))
    except msgspec.ValidationError:
        pass
    check_token_fields(p, raw)  # raises, naming the bad token, unless only types differ
    return tuple(Token(t["token"], t["start_byte"], t["end_byte"], bool(t["html_token"]))
                 for t in raw)


def token_offsets(p: _Parser, raw: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The start and end byte offsets of the tokens ``raw`` (decoded JSON objects), after
    checking each token's fields as :func:`_tokens` does (for readers that need no
    records); their values are checked by :meth:`_Parser.check_tokens`."""
    try:
        starts = list(map(_TOKEN_START, raw))
        ends = list(map(_TOKEN_END, raw))
        if set(map(type, map(_TOKEN_TEXT, raw))) <= _STR:
            bytes(map(_TOKEN_HTML, raw))  # every flag a bool (or an int 0-255)
            return starts, ends
    except (KeyError, TypeError, ValueError):  # a field missing, a token not an object
        pass
    check_token_fields(p, raw)
    return list(map(_TOKEN_START, raw)), list(map(_TOKEN_END, raw))


def example_from_json(d: Mapping[str, Any], where: str | None = None) -> NqExample:
    """Build an :class:`NqExample` from the decoded JSON of one original-format line.

    Raises :class:`InputError` at ``where`` for a missing or mistyped field and for a
    candidate or annotation that points outside the document.
    """
    p = _Parser(where)
    tokens = _tokens(p, d)
    html = p.get(d, "document_html", str, "example")
    candidates = p.candidates(d, bytes_required=True)
    annotations = tuple(p.annotation(a, i, bytes_required=True)
                        for i, a in enumerate(p.get(d, "annotations", list, "example")
                                              if d.get("annotations") is not None else ()))
    p.check_document(candidates, annotations, len(tokens), html,
                     (list(map(START_BYTE, tokens)), list(map(END_BYTE, tokens))))
    return NqExample(
        example_id=int(p.example_id(p.get(d, "example_id", (int, float), "example"))),
        question_text=p.get(d, "question_text", str, "example"),
        question_tokens=tuple(d.get("question_tokens") or ()),
        document_title=str(d.get("document_title", "")),
        document_url=str(d.get("document_url", "")),
        document_html=html,
        document_tokens=tokens,
        long_answer_candidates=candidates,
        annotations=annotations,
    )


def simplified_from_json(d: Mapping[str, Any], where: str | None = None) -> SimplifiedNqExample:
    """Build a :class:`SimplifiedNqExample` from one simplified-format line (checked as
    :func:`example_from_json` does, by tokens)."""
    p = _Parser(where)
    text = p.get(d, "document_text", str, "example")
    candidates = p.candidates(d, bytes_required=False)
    annotations = tuple(p.annotation(a, i, bytes_required=False)
                        for i, a in enumerate(p.get(d, "annotations", list, "example")
                                              if d.get("annotations") is not None else ()))
    p.check_document(candidates, annotations, text.count(" ") + 1, None)
    return SimplifiedNqExample(
        example_id=int(p.example_id(p.get(d, "example_id", (int, float), "example"))),
        question_text=p.get(d, "question_text", str, "example"),
        document_url=str(d.get("document_url", "")),
        document_text=text,
        long_answer_candidates=candidates,
        annotations=annotations,
    )


def validate_nq_json(d: Any, where: str | None = None, *, string_ids: bool = False) -> None:
    """Check a decoded NQ example (either format) for tools that work on the raw JSON
    (conversions): the id, the question, and candidates and annotations that index the
    page, as :func:`read_nq` does, without building the page's tokens (the costly part).
    Raises :class:`InputError` at ``where``."""
    p = _Parser(where)
    if not isinstance(d, Mapping):
        raise p.fail(f"expected a JSON object, found {type(d).__name__}",
                     "each line must be one NQ example")
    p.get(d, "question_text", str, "example")
    html: str | None = None
    offsets: tuple[list[Any], list[Any]] | None = None
    if is_simplified(d):
        num_tokens = p.get(d, "document_text", str, "example").count(" ") + 1
    else:
        html = p.get(d, "document_html", str, "example")
        tokens = p.get(d, "document_tokens", list, "example")
        num_tokens = len(tokens)
        offsets = token_offsets(p, tokens)
    anns = d.get("annotations")
    check_nq_spans(p.get(d, "example_id", (int, float, str) if string_ids else (int, float),
                         "example"),
                   p.get(d, "long_answer_candidates", list, "example"),
                   p.get(d, "annotations", list, "example") if anns is not None else [],
                   num_tokens, where, bytes_required=html is not None, html=html,
                   string_ids=string_ids, token_offsets=offsets)


def check_nq_spans(example_id: Any, candidates: list[Any], annotations: list[Any],
                   num_tokens: int, where: str | None = None, *,
                   bytes_required: bool = True, html: str | HtmlSize | None = None,
                   string_ids: bool = False,
                   token_offsets: tuple[Sequence[Any], Sequence[Any]] | None = None) -> None:
    """The checks of :func:`read_nq` on an example's id, candidates and annotations, for
    fast paths that decode only those (byte offsets are checked when ``html`` is given,
    every token's when ``token_offsets``, from :func:`token_offsets`, are too)."""
    p = _Parser(where)
    p.example_id(example_id, strings=string_ids)
    cands = p.candidates({"long_answer_candidates": candidates}, bytes_required=bytes_required)
    anns = tuple(p.annotation(a, i, bytes_required=bytes_required)
                 for i, a in enumerate(annotations))
    p.check_document(cands, anns, num_tokens, html, token_offsets)


def is_simplified(d: Mapping[str, Any]) -> bool:
    """True for a simplified-format line (it has ``document_text``, not ``document_html``)."""
    return "document_text" in d and "document_html" not in d


class ExampleIds:
    """The example ids read so far from one input, to refuse an example given twice.

    ``files`` are the input's files in reading order (a file named twice is two files
    here, so its repeated examples are found like any others); :meth:`add` takes the
    file's position in that list and the line. Each id keeps where it was first seen,
    packed in one int: about 100 bytes per id, 30 MB for NQ train's 307,373 examples.
    """

    __slots__ = ("_first", "files")

    def __init__(self, files: Sequence[PathLike]) -> None:
        self.files = list(files)
        self._first: dict[int | str, int] = {}

    def add(self, example_id: int | str, file_no: int, lineno: int) -> None:
        """Note ``example_id`` at ``files[file_no]:lineno``; raise :class:`InputError` there,
        naming the first place, when it was seen before."""
        here = file_no << 32 | lineno
        first = self._first.setdefault(example_id, here)
        if first != here:
            raise InputError(location(self.files[file_no], lineno),
                             f"duplicate example_id {example_id} (first at "
                             f"{location(self.files[first >> 32], first & 0xFFFFFFFF)})",
                             "give each example once (check for a file or shard given "
                             "twice)")


def read_nq(paths: PathsLike, *, unique: bool = True
            ) -> Iterator[NqExample | SimplifiedNqExample]:
    """Lazily read NQ examples (original or simplified, detected per line) from shards.

    An example id repeated anywhere in ``paths`` is an :class:`InputError` naming both
    lines (``unique=False`` reads repeats as they come).
    """
    n = 0
    files = expand_paths(paths, what="NQ")
    ids = ExampleIds(files) if unique else None
    for file_no, path in enumerate(files):
        for lineno, line in iter_lines(path):
            where = location(path, lineno)
            d = parse_json_line(line, where)
            if not isinstance(d, dict):
                raise InputError(where, f"expected a JSON object, found {type(d).__name__}",
                                 "each line must be one NQ example")
            n += 1
            ex = simplified_from_json(d, where) if is_simplified(d) else example_from_json(
                d, where)
            if ids is not None:
                ids.add(ex.example_id, file_no, lineno)
            yield ex
    if n == 0:
        raise InputError(examples(files, width=None), "no examples found (the input is empty)",
                         "give non-empty NQ .jsonl or .jsonl.gz files")


def read_nq_original(paths: PathsLike) -> Iterator[NqExample]:
    """Like :func:`read_nq` but requires the original format."""
    for ex in read_nq(paths):
        if not isinstance(ex, NqExample):
            raise InputError(str(ex.example_id),
                             "expected the original NQ format, found simplified",
                             "give the original-format files (with document_html)")
        yield ex
