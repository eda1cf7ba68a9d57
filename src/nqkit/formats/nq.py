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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

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
                     html: str | None) -> None:
        """Every span lies inside the document: ``end_token <= num_tokens`` and, when
        ``html`` is given, ``end_byte`` <= its UTF-8 length (encoded only when needed: a
        string of n characters has at least n bytes)."""
        html_bytes: int | None = None
        for ctx, s in spans:
            if s.end_token > num_tokens:
                raise self.fail(f"{ctx} ends at token {s.end_token:,}, past the end of the "
                                f"document ({num_tokens:,} tokens)",
                                "offsets must index the document; check the file is "
                                "unmodified NQ data")
            if html is not None and s.end_byte > len(html):
                if html_bytes is None:
                    html_bytes = len(html.encode("utf-8", errors="surrogatepass"))
                if s.end_byte > html_bytes:
                    raise self.fail(f"{ctx} ends at byte {s.end_byte:,}, past the end of the "
                                    f"document ({html_bytes:,} bytes)",
                                    "offsets must index the document; check the file is "
                                    "unmodified NQ data")

    def check_document(self, candidates: tuple[Candidate, ...],
                       annotations: tuple[Annotation, ...], num_tokens: int,
                       html: str | None) -> None:
        """Candidates and annotations point inside the document and at real candidates."""
        spans: list[tuple[str, Span]] = [
            (f"long_answer_candidates[{i}]", c.span) for i, c in enumerate(candidates)]
        for i, a in enumerate(annotations):
            spans.append((f"annotations[{i}].long_answer", a.long_answer))
            spans.extend((f"annotations[{i}].short_answers[{j}]", s)
                         for j, s in enumerate(a.short_answers))
            if a.candidate_index >= len(candidates):
                raise self.fail(f"annotations[{i}].long_answer.candidate_index is "
                                f"{a.candidate_index:,} but the example has "
                                f"{len(candidates):,} candidates",
                                "check the file is unmodified NQ data")
        self.check_bounds(spans, num_tokens, html)

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


_TOKEN_KEYS = frozenset(("token", "start_byte", "end_byte", "html_token"))


def _tokens(p: _Parser, d: Mapping[str, Any]) -> tuple[Token, ...]:
    raw = p.get(d, "document_tokens", list, "example")
    try:
        return tuple(Token(t["token"], t["start_byte"], t["end_byte"], bool(t["html_token"]))
                     for t in raw)
    except (TypeError, KeyError):
        pass
    for i, t in enumerate(raw):  # find the bad token, for the message
        ctx = f"document_tokens[{i}]"
        p.get(t, "token", str, ctx)
        p.get(t, "start_byte", int, ctx)
        p.get(t, "end_byte", int, ctx)
        p.get(t, "html_token", (bool, int), ctx)
    raise AssertionError("unreachable: a token failed to build but passes every check")


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
    p.check_document(candidates, annotations, len(tokens), html)
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
    if is_simplified(d):
        num_tokens = p.get(d, "document_text", str, "example").count(" ") + 1
    else:
        html = p.get(d, "document_html", str, "example")
        tokens = p.get(d, "document_tokens", list, "example")
        num_tokens = len(tokens)
        keys = _TOKEN_KEYS
        if not all(type(t) is dict and keys <= t.keys() for t in tokens):
            _tokens(p, d)  # raises, naming the bad token
    anns = d.get("annotations")
    check_nq_spans(p.get(d, "example_id", (int, float, str) if string_ids else (int, float),
                         "example"),
                   p.get(d, "long_answer_candidates", list, "example"),
                   p.get(d, "annotations", list, "example") if anns is not None else [],
                   num_tokens, where, bytes_required=html is not None, html=html,
                   string_ids=string_ids)


def check_nq_spans(example_id: Any, candidates: list[Any], annotations: list[Any],
                   num_tokens: int, where: str | None = None, *,
                   bytes_required: bool = True, html: str | None = None,
                   string_ids: bool = False) -> None:
    """The checks of :func:`read_nq` on an example's id, candidates and annotations, for
    fast paths that decode only those (byte offsets are checked when ``html`` is given)."""
    p = _Parser(where)
    p.example_id(example_id, strings=string_ids)
    cands = p.candidates({"long_answer_candidates": candidates}, bytes_required=bytes_required)
    anns = tuple(p.annotation(a, i, bytes_required=bytes_required)
                 for i, a in enumerate(annotations))
    p.check_document(cands, anns, num_tokens, html)


def is_simplified(d: Mapping[str, Any]) -> bool:
    """True for a simplified-format line (it has ``document_text``, not ``document_html``)."""
    return "document_text" in d and "document_html" not in d


def read_nq(paths: PathsLike) -> Iterator[NqExample | SimplifiedNqExample]:
    """Lazily read NQ examples (original or simplified, detected per line) from shards."""
    n = 0
    files = expand_paths(paths, what="NQ")
    for path in files:
        for lineno, line in iter_lines(path):
            where = location(path, lineno)
            d = parse_json_line(line, where)
            if not isinstance(d, dict):
                raise InputError(where, f"expected a JSON object, found {type(d).__name__}",
                                 "each line must be one NQ example")
            n += 1
            if is_simplified(d):
                yield simplified_from_json(d, where)
            else:
                yield example_from_json(d, where)
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
