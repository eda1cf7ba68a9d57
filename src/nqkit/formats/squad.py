"""SQuAD 1.1 JSON: typed records and a reader.

The SQuAD file is one JSON document ``{"version", "data": [article, ...]}``; an article
holds ``paragraphs``, each with a ``context`` and ``qas`` (questions with ``answers``
``{"text", "answer_start"}``). The whole document is parsed at once (it is one JSON
value); the records are then yielded lazily, article by article.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from nqkit.errors import InputError
from nqkit.io import PathLike, read_json

__all__ = ["SquadAnswer", "SquadArticle", "SquadParagraph", "SquadQuestion",
           "iter_squad_articles", "squad_articles_from_json"]


@dataclass(frozen=True, slots=True)
class SquadAnswer:
    text: str  # the answer span as written in the context
    answer_start: int  # character offset of the span in the paragraph context


@dataclass(frozen=True, slots=True)
class SquadQuestion:
    id: str  # the question id (NQ-derived files use the example id, an int, as a string)
    question: str  # the question text
    answers: tuple[SquadAnswer, ...]  # one or more reference answers


@dataclass(frozen=True, slots=True)
class SquadParagraph:
    context: str  # the paragraph text
    qas: tuple[SquadQuestion, ...]  # questions about this paragraph


@dataclass(frozen=True, slots=True)
class SquadArticle:
    title: str  # the Wikipedia article title
    paragraphs: tuple[SquadParagraph, ...]  # paragraphs in file order


def _field(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, Mapping) or key not in obj:
        raise InputError(where, f"missing key {key!r}",
                         "the file must be SQuAD 1.1 JSON ({'data': [{'paragraphs': ...}]})")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise InputError(where, f"{key!r} must be {names}, found {type(value).__name__}",
                         "the file must be SQuAD 1.1 JSON")
    return value


def squad_articles_from_json(doc: Any, source: str) -> Iterator[SquadArticle]:
    """Yield the articles of a parsed SQuAD document; ``source`` names it in errors.

    Error locations read ``source:data[3].paragraphs[1].qas[0]``.
    """
    data = _field(doc, "data", list, source)
    for ai, art in enumerate(data):
        aw = f"{source}:data[{ai}]"
        paragraphs = []
        for pi, par in enumerate(_field(art, "paragraphs", list, aw)):
            pw = f"{aw}.paragraphs[{pi}]"
            context = _field(par, "context", str, pw)
            questions = []
            for qi, qa in enumerate(_field(par, "qas", list, pw)):
                qw = f"{pw}.qas[{qi}]"
                answers = []
                for ni, ans in enumerate(_field(qa, "answers", list, qw)):
                    nw = f"{qw}.answers[{ni}]"
                    start = _field(ans, "answer_start", int, nw)
                    if not 0 <= start <= len(context):
                        raise InputError(nw, f"answer_start {start} is outside the context "
                                         f"(length {len(context)})",
                                         "answer_start is a character offset into the context")
                    text = _field(ans, "text", str, nw)
                    if context[start:start + len(text)] != text:
                        raise InputError(nw, f"the answer text {text!r:.40} is not at "
                                         f"answer_start {start} of the context (found "
                                         f"{context[start:start + len(text)]!r:.40})",
                                         "answer_start is the character offset of the "
                                         "answer text in the context")
                    answers.append(SquadAnswer(text, start))
                qid = qa.get("id", "") if isinstance(qa, Mapping) else ""
                questions.append(SquadQuestion(str(qid), _field(qa, "question", str, qw),
                                               tuple(answers)))
            paragraphs.append(SquadParagraph(context, tuple(questions)))
        title = art.get("title", "") if isinstance(art, Mapping) else ""
        yield SquadArticle(str(title), tuple(paragraphs))


def iter_squad_articles(path: PathLike) -> Iterator[SquadArticle]:
    """Read a SQuAD 1.1 JSON file (plain or gzipped) and yield its articles in order."""
    doc = read_json(path, what="SQuAD")
    yield from squad_articles_from_json(doc, str(path))
