"""Answer extraction: the step from an LLM's raw generation to the answer string scored.

A generation is rarely the bare answer (``" Paris.\\nQuestion: ..."``, ``"The answer is
Paris."``); every harness cuts it its own way before exact match, and the cut moves the
number as much as the matching rule does. nqkit makes it a named step (``--extract NAME``,
``extract:NAME`` in the signature), never a silent preprocessing:

* ``none`` (the default): the prediction is scored as given;
* ``first-line``: up to the first line break, stripped;
* ``lm-eval-stops``: cut at the first ``"\\n"``, then the first ``"."``, then the first
  ``","``, stripped — lm-evaluation-harness's ``nq_open`` stops and ``remove_whitespace``
  filter (the ``lm-eval-v4`` convention applies it itself);
* ``answer-is``: the text after the last ``answer is`` or ``answer:`` (any case), up to
  the end of its line, stripped, one final ``.`` dropped; a generation without either
  phrase keeps its first line (and is counted, so a prompt format that never produces
  the phrase is noticed).

Gold answers are never extracted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from nqkit.errors import InputError

__all__ = ["EXTRACTORS", "LM_EVAL_STOPS", "Extractor", "cut", "cut_at_stops", "get_extractor"]

LM_EVAL_STOPS = ("\n", ".", ",")  # lm-eval nq_open's generation_kwargs.until, in its order
_ANSWER_IS = re.compile(r"answer(?: is|:)", re.IGNORECASE)


def cut(generation: str, stops: tuple[str, ...] = LM_EVAL_STOPS) -> str:
    """The generation cut at each stop in turn, as lm-eval's Hugging Face backend does
    (``postprocess_generated_text``)."""
    for stop in stops:
        generation = generation.split(stop)[0]
    return generation


def cut_at_stops(generation: str, stops: tuple[str, ...] = LM_EVAL_STOPS) -> str:
    """:func:`cut`, stripped (lm-eval's ``remove_whitespace`` filter)."""
    return cut(generation, stops).strip()


def first_line(generation: str) -> str:
    return generation.split("\n", 1)[0].strip()


def answer_is(generation: str) -> str | None:
    """The text after the last "answer is"/"answer:" (None: no such phrase)."""
    found = list(_ANSWER_IS.finditer(generation))
    if not found:
        return None
    last = found[-1]
    text = first_line(generation[last.end():])
    return text[:-1].rstrip() if text.endswith(".") else text


@dataclass(frozen=True, slots=True)
class Extractor:
    """One named extraction: ``apply(generation)`` gives the answer and whether the
    extractor found what it looks for (False: it fell back, see the module doc)."""

    name: str
    help: str
    cut: Callable[[str], str | None]  # None: the extractor's pattern is absent
    fallback: Callable[[str], str] = first_line

    def apply(self, generation: str) -> tuple[str, bool]:
        out = self.cut(generation)
        return (self.fallback(generation), False) if out is None else (out, True)


EXTRACTORS: dict[str, Extractor] = {e.name: e for e in (
    Extractor("none", "the prediction as given", lambda g: g),
    Extractor("first-line", "up to the first line break, stripped", first_line),
    Extractor("lm-eval-stops", "cut at the first \\n, then '.', then ',', stripped "
              "(lm-eval nq_open)", cut_at_stops),
    Extractor("answer-is", "the text after the last 'answer is' or 'answer:' on its "
              "line (else the first line)", answer_is),
)}


def get_extractor(name: str) -> Extractor:
    """The extractor called ``name`` (one line naming the others when unknown)."""
    try:
        return EXTRACTORS[name]
    except KeyError:
        raise InputError(None, f"unknown answer extraction {name!r}",
                         f"choose one of: {', '.join(EXTRACTORS)}") from None
