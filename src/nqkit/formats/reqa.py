"""ReQA answer-retrieval tasks built from SQuAD or Natural Questions (Ahmad et al., 2019).

A ReQA task is an *answer index* (every sentence of every paragraph, with the id of its
paragraph) and a list of *queries* (a question and its target sentence). Building follows
the paper's §3.1 and Algorithm 1, with the behaviour of the official scripts where the
paper is silent:

* paragraphs are numbered from 1 in file order (``doc_id``), counting every paragraph;
* the sentences of a paragraph come from :func:`nqkit.text.sentences.sentence_spans`;
* the index is deduplicated on (sentence, paragraph text), keeping the first occurrence,
  and holds the sentences of the paragraphs that have at least one question;
* each (question, answer) pair becomes a query whose target is the sentence containing
  ``answer_start``; a question whose answers fall in the same sentence gives one query.
  When ``answer_start`` falls on the whitespace between two sentences, the next sentence
  is the target (the official script would emit the string ``"None"``).

From NQ (§3.2), :func:`nq_to_squad_article` keeps an annotation with exactly one short
answer inside a ``<P>`` long answer and rebuilds the paragraph and answer text from the
non-HTML tokens. The official converter reads one annotation per record (NQ train);
``annotations="each"`` treats every (example, annotator) pair of a 5-way annotated dev
record as a record of its own.

A task directory describes itself: ``index.jsonl`` (``{sentence, doc_id}``),
``queries.jsonl`` (``{question, answer_sentence, doc_id}``), ``paragraphs.jsonl``
(``{doc_id, title, context}``) and ``params.json`` (source, inputs, counts, version).
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nqkit._version import __version__
from nqkit.errors import InputError, location
from nqkit.formats.nq import ExampleIds, validate_nq_json
from nqkit.formats.squad import SquadArticle, squad_articles_from_json
from nqkit.io import (
    PathsLike,
    ensure_not_input,
    expand_paths,
    iter_jsonl,
    iter_lines,
    parse_json_line,
    read_json,
    write_json,
    write_jsonl,
)
from nqkit.text.sentences import sentence_spans

__all__ = ["TASK_FORMAT", "ReqaCandidate", "ReqaQuery", "ReqaTask", "build_from_nq",
           "build_from_squad", "load_task", "nq_clean_text", "nq_to_squad_article",
           "save_task"]

TASK_FORMAT = "nqkit-reqa-task"
TASK_FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class ReqaCandidate:
    """One item of the answer index."""

    sentence: str  # the candidate answer sentence
    doc_id: int  # the paragraph it comes from (1-based, file order)


@dataclass(frozen=True, slots=True)
class ReqaQuery:
    """One query: a question and the sentence that answers it."""

    question: str  # the question text (a question may be asked several times)
    answer_sentence: str  # the target sentence (any index item with this text counts)
    doc_id: int  # the paragraph the question was asked about


@dataclass(frozen=True, slots=True)
class ReqaParagraph:
    """A paragraph: the context of its sentences and the unit of paragraph-level scores."""

    doc_id: int  # 1-based, file order
    title: str  # the article title
    context: str  # the paragraph text


@dataclass(frozen=True, slots=True)
class ReqaTask:
    index: tuple[ReqaCandidate, ...]  # the answer index, in order
    queries: tuple[ReqaQuery, ...]  # the queries, in order
    paragraphs: tuple[ReqaParagraph, ...]  # every paragraph, by doc_id
    params: Mapping[str, Any]  # how the task was built

    def context_of(self, doc_id: int) -> str:
        return self.paragraphs[doc_id - 1].context


def _target_sentence(spans: Sequence[tuple[int, int]], answer_start: int) -> int:
    """Index of the sentence holding ``answer_start`` (or the next one when it is on a gap)."""
    starts = [s for s, _ in spans]
    i = bisect.bisect_right(starts, answer_start) - 1
    if i >= 0 and answer_start < spans[i][1]:
        return i
    return min(i + 1, len(spans) - 1)


def build_from_squad(articles: Iterable[SquadArticle], params: Mapping[str, Any] | None = None,
                     ) -> ReqaTask:
    """Build the ReQA index and queries from SQuAD articles (paper §3.1, Algorithm 1)."""
    index: list[ReqaCandidate] = []
    queries: list[ReqaQuery] = []
    paragraphs: list[ReqaParagraph] = []
    seen: set[tuple[str, str]] = set()
    for article in articles:
        for par in article.paragraphs:
            doc_id = len(paragraphs) + 1
            paragraphs.append(ReqaParagraph(doc_id, article.title, par.context))
            if not par.qas:
                continue
            spans = sentence_spans(par.context)
            sentences = [par.context[a:b] for a, b in spans]
            for qa in par.qas:
                targets: set[int] = set()
                for ans in qa.answers:
                    t = _target_sentence(spans, ans.answer_start)
                    if sentences[t] in {sentences[j] for j in targets}:
                        continue
                    targets.add(t)
                    queries.append(ReqaQuery(qa.question, sentences[t], doc_id))
            for s in sentences:
                if (s, par.context) not in seen:
                    seen.add((s, par.context))
                    index.append(ReqaCandidate(s, doc_id))
    info = dict(params or {})
    info.update(counts={"paragraphs": len(paragraphs), "index": len(index),
                        "queries": len(queries),
                        "distinct_questions": len({q.question for q in queries})})
    return ReqaTask(tuple(index), tuple(queries), tuple(paragraphs), info)


# --- Natural Questions -> SQuAD (paper §3.2) --------------------------------------------

_SPACE = re.compile(r"\s")


def _gap_has_space(gap: str) -> bool:
    """True when ``gap`` (HTML between two tokens) has whitespace outside of any tag.

    Tags are tracked by counting ``<`` and ``>``, because some tags are missing from the
    token list.
    """
    depth = 0
    for ch in gap:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0 and _SPACE.match(ch):
            return True
    return False


def nq_clean_text(tokens: Sequence[Mapping[str, Any]], html: bytes, start: int, end: int,
                  *, look_past_end: bool = False) -> str:
    """Text of tokens ``[start, end)`` without HTML tokens, one space where HTML has space.

    After each text token a single space is written when the HTML between it and the next
    text token (looking no further than ``end``, or ``end + 1`` with ``look_past_end``;
    when no text token is found, up to the last tag token looked at) holds whitespace
    outside of tags. ``look_past_end`` is used for the text before a short answer, so that
    it ends with the space that separates it from the answer.
    """
    limit = end + 1 if look_past_end else end
    out: list[str] = []
    for i in range(start, end):
        tok = tokens[i]
        if tok["html_token"]:
            continue
        out.append(tok["token"])
        nxt = tok
        for j in range(i + 1, min(limit, len(tokens))):
            nxt = tokens[j]
            if not nxt["html_token"]:
                break
        gap = html[tok["end_byte"]:nxt["start_byte"]].decode("utf-8", errors="replace")
        if _gap_has_space(gap):
            out.append(" ")
    return "".join(out)


def _nq_get(record: Mapping[str, Any], key: str, where: str | None) -> Any:
    if key not in record:
        raise InputError(where, f"missing key {key!r}",
                         "the input must be Natural Questions in the ORIGINAL format "
                         "(document_html, document_tokens, annotations)")
    return record[key]


def nq_to_squad_article(record: Mapping[str, Any], annotation: Mapping[str, Any],
                        where: str | None = None) -> dict[str, Any] | None:
    """Convert one (NQ example, annotation) to a one-paragraph SQuAD article, or ``None``.

    Kept: exactly one short answer, and a long answer that is a ``<P>`` block (§3.2).
    ``where`` names the record in error messages.
    """
    shorts = annotation["short_answers"]
    if len(shorts) != 1:
        return None
    long = annotation["long_answer"]
    if long["start_token"] < 0:
        return None
    tokens = _nq_get(record, "document_tokens", where)
    if tokens[long["start_token"]]["token"] != "<P>":
        return None
    html = _nq_get(record, "document_html", where).encode("utf-8")
    short = shorts[0]
    context = nq_clean_text(tokens, html, long["start_token"], long["end_token"])
    answer = nq_clean_text(tokens, html, short["start_token"], short["end_token"])
    before = nq_clean_text(tokens, html, long["start_token"], short["start_token"],
                           look_past_end=True)
    return {
        "title": _nq_get(record, "document_title", where),
        "paragraphs": [{
            "context": context,
            "qas": [{
                "answers": [{"answer_start": len(before), "text": answer}],
                "id": _nq_get(record, "example_id", where),
                "question": _nq_get(record, "question_text", where),
            }],
        }],
    }


NqAnnotations = Literal["first", "each"]


def _iter_nq_json(paths: PathsLike) -> Iterator[tuple[str, Any, int, int]]:
    """``(where, decoded line, file number, line number)`` of every line of NQ files."""
    for file_no, path in enumerate(expand_paths(paths, what="NQ")):
        for lineno, raw in iter_lines(path):
            where = location(path, lineno) or str(path)
            yield where, parse_json_line(raw, where), file_no, lineno


def iter_nq_as_squad(paths: PathsLike, annotations: NqAnnotations = "first",
                     counter: list[int] | None = None,
                     progress: Callable[..., Iterable[Any]] | None = None
                     ) -> Iterator[dict[str, Any]]:
    """Yield SQuAD articles converted from NQ original-format shards, in file order.

    ``annotations="first"`` uses each record's first annotation (the official converter,
    made for NQ train with one annotation per record); ``"each"`` converts every
    annotation as a record of its own and adds ``annotator_index`` to the article.
    ``counter[0]``, when given, is increased by the number of records converted (one per
    (example, annotator) pair with ``"each"``). ``progress`` (``nqkit.report.progress``
    at the command line) wraps the examples read: NQ train is 307,373 of them.
    """
    files = expand_paths(paths, what="NQ")
    ids = ExampleIds(files)  # a repeated example would repeat its queries and sentences
    lines: Iterable[tuple[str, Any, int, int]] = _iter_nq_json(files)
    if progress is not None:
        lines = progress(lines, desc="reading NQ", unit="ex")
    for line_where, record, file_no, lineno in lines:
        if not isinstance(record, dict):
            raise InputError(line_where, f"expected a JSON object, found "
                             f"{type(record).__name__}", "each line must be one NQ example")
        ex_id = record.get("example_id", "?")
        where = f"{line_where} (example {ex_id})"
        anns = _nq_get(record, "annotations", where)
        if not isinstance(anns, list) or not anns:
            raise InputError(where, "'annotations' must be a non-empty list",
                             "the input must be Natural Questions in the ORIGINAL format")
        validate_nq_json(record, line_where)
        ids.add(record["example_id"], file_no, lineno)
        chosen = anns[:1] if annotations == "first" else anns
        if counter is not None:
            counter[0] += len(chosen)
        for k, ann in enumerate(chosen):
            try:
                article = nq_to_squad_article(record, ann, where)
            except (KeyError, TypeError, IndexError) as e:
                raise InputError(where, f"malformed annotation {k} ({e.__class__.__name__}: "
                                 f"{e})", "the input must be Natural Questions in the ORIGINAL "
                                 "format") from e
            if article is not None:
                if annotations == "each":
                    article["annotator_index"] = k
                yield article


def build_from_nq(paths: PathsLike, annotations: NqAnnotations = "first",
                  progress: Callable[..., Iterable[Any]] | None = None
                  ) -> tuple[ReqaTask, dict[str, Any]]:
    """Build a ReQA NQ task; also returns the intermediate SQuAD document. ``progress``:
    see :func:`iter_nq_as_squad`."""
    files = expand_paths(paths, what="NQ")
    counter = [0]
    articles = list(iter_nq_as_squad(files, annotations, counter, progress))
    squad = {"version": "nq-as-squad", "records_in": counter[0], "data": articles}
    params = {"source": "nq", "inputs": [str(p) for p in files], "nq_annotations": annotations}
    task = build_from_squad(squad_articles_from_json(squad, "nq-as-squad"), params)
    return task, squad


# --- task directories ---------------------------------------------------------------------

def save_task(task: ReqaTask, out_dir: str | os.PathLike[str],
              inputs: Sequence[str | os.PathLike[str]] = ()) -> None:
    """Write a task directory (every file atomically; ``params.json`` last)."""
    out = Path(out_dir)
    for name in ("index.jsonl", "queries.jsonl", "paragraphs.jsonl", "params.json"):
        ensure_not_input(out / name, inputs)
    write_jsonl(out / "index.jsonl", ({"sentence": c.sentence, "doc_id": c.doc_id}
                                      for c in task.index))
    write_jsonl(out / "queries.jsonl", ({"question": q.question,
                                         "answer_sentence": q.answer_sentence,
                                         "doc_id": q.doc_id} for q in task.queries))
    write_jsonl(out / "paragraphs.jsonl", ({"doc_id": p.doc_id, "title": p.title,
                                            "context": p.context} for p in task.paragraphs))
    write_json(out / "params.json", {"format": TASK_FORMAT, "format_version": TASK_FORMAT_VERSION,
                                     **task.params, "nqkit_version": __version__})


def _typed(obj: Mapping[str, Any], key: str, kind: type, where: str | None) -> Any:
    value = obj.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(where, f"{key!r} must be {kind.__name__}, found "
                         f"{type(value).__name__ if key in obj else 'nothing'}",
                         "rebuild the task with `nqkit reqa build`")
    return value


def _iter_records(path: Path) -> Iterator[tuple[str | None, dict[str, Any]]]:
    for n, rec in enumerate(iter_jsonl(path, what="ReQA task"), 1):
        yield location(path, n), rec


def load_task(task_dir: str | os.PathLike[str]) -> ReqaTask:
    """Read a task directory written by :func:`save_task`, checking its description."""
    d = Path(task_dir)
    if not d.is_dir():
        raise InputError(d, "is not a directory", "give the directory written by "
                         "`nqkit reqa build ... -o DIR`")
    params_path = d / "params.json"
    if not params_path.exists():
        raise InputError(d, "no params.json: this is not a ReQA task directory",
                         "build one with `nqkit reqa build ... -o DIR`")
    params = read_json(params_path, what="params.json")
    if not isinstance(params, dict) or params.get("format") != TASK_FORMAT:
        raise InputError(params_path, f"'format' must be {TASK_FORMAT!r}",
                         "build the directory with `nqkit reqa build ... -o DIR`")
    if params.get("format_version") != TASK_FORMAT_VERSION:
        raise InputError(params_path, f"format_version {params.get('format_version')!r} is not "
                         f"supported (expected {TASK_FORMAT_VERSION})",
                         "rebuild the task with this version of nqkit")
    index = tuple(ReqaCandidate(_typed(r, "sentence", str, w), _typed(r, "doc_id", int, w))
                  for w, r in _iter_records(d / "index.jsonl"))
    queries = tuple(ReqaQuery(_typed(r, "question", str, w), _typed(r, "answer_sentence", str, w),
                              _typed(r, "doc_id", int, w))
                    for w, r in _iter_records(d / "queries.jsonl"))
    paragraphs = tuple(ReqaParagraph(_typed(r, "doc_id", int, w), str(r.get("title", "")),
                                     _typed(r, "context", str, w))
                       for w, r in _iter_records(d / "paragraphs.jsonl"))
    for i, p in enumerate(paragraphs, 1):
        if p.doc_id != i:
            raise InputError(d / "paragraphs.jsonl", f"doc_id {p.doc_id} at position {i}: "
                             "paragraphs must be numbered 1, 2, ... in order",
                             "rebuild the task with `nqkit reqa build`")
    sentences = {c.sentence for c in index}
    for n, q in enumerate(queries, 1):
        if q.answer_sentence not in sentences:
            raise InputError(location(d / "queries.jsonl", n),
                             "the answer sentence is not in the index",
                             "rebuild the task with `nqkit reqa build`")
    for n, c in enumerate(index, 1):
        if not 1 <= c.doc_id <= len(paragraphs):
            raise InputError(location(d / "index.jsonl", n),
                             f"doc_id {c.doc_id} is not a paragraph (1..{len(paragraphs)})",
                             "rebuild the task with `nqkit reqa build`")
    return ReqaTask(index, queries, paragraphs, params)
