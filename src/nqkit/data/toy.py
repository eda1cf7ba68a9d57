"""The project's own toy NQ dataset, in the original format.

A handful of tiny Wikipedia-like pages in the spirit of the dataset README's "who founded
google" toy example, each with five annotations, built from readable specifications so
that every byte and token offset is computed, never typed by hand. The built file ships
as ``toy-nq-dev.jsonl`` beside this module (``nqkit demo`` reads it); tests check that the
shipped file equals what this builder produces.

Tokenisation follows the NQ format: an HTML tag is one token (``html_token`` true); any
other run of non-space characters is one word token; offsets are UTF-8 bytes into the HTML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOY_PATH = Path(__file__).with_name("toy-nq-dev.jsonl")
TOY_TRAIN_PATH = Path(__file__).with_name("toy-nq-train.jsonl")

CANDIDATE_TAGS = {"p", "table", "tr", "ul", "ol", "dl", "li", "dd", "dt"}
_TOKEN_RE = re.compile(r"<[^>]+>|[^\s<]+")


def tokenize_html(html: str) -> list[dict[str, Any]]:
    """NQ-style tokens of an HTML string with UTF-8 byte offsets."""
    tokens = []
    for m in _TOKEN_RE.finditer(html):
        start = len(html[: m.start()].encode("utf-8"))
        end = start + len(m.group(0).encode("utf-8"))
        tok = m.group(0)
        tokens.append({"end_byte": end, "html_token": tok.startswith("<"),
                       "start_byte": start, "token": tok})
    return tokens


def find_candidates(tokens: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Long-answer candidates: every paragraph, table, row, list and list item element."""
    stack: list[tuple[str, int]] = []
    spans: list[tuple[int, int]] = []
    for i, t in enumerate(tokens):
        if not t["html_token"]:
            continue
        m = re.match(r"<(/?)([A-Za-z0-9]+)", t["token"])
        if not m or m.group(2).lower() not in CANDIDATE_TAGS:
            continue
        if not m.group(1):
            stack.append((m.group(2).lower(), i))
        else:
            name, start = stack.pop()
            assert name == m.group(2).lower(), "toy HTML must be well nested"
            spans.append((start, i + 1))
    spans.sort()
    cands = []
    for s, e in spans:
        top = not any(s2 <= s and e <= e2 and (s2, e2) != (s, e) for s2, e2 in spans)
        cands.append({"end_byte": tokens[e - 1]["end_byte"], "end_token": e,
                      "start_byte": tokens[s]["start_byte"], "start_token": s, "top_level": top})
    return cands


@dataclass
class ToyAnnotation:
    """One annotator's choice: a candidate (by the text it starts with) and short phrases."""

    candidate: str | None = None  # first words of the chosen candidate, None for null
    short: list[str] = field(default_factory=list)  # phrases inside that candidate
    yes_no: str = "NONE"


@dataclass
class ToyExample:
    example_id: int
    question: str
    title: str
    html: str
    annotations: list[ToyAnnotation]
    oldid: int = 1  # page revision in the URL (pages match across revisions by title)


def _find_words(tokens: list[dict[str, Any]], words: list[str], lo: int, hi: int) -> int:
    for i in range(lo, hi - len(words) + 1):
        if [t["token"] for t in tokens[i:i + len(words)]] == words:
            return i
    raise ValueError(f"phrase {' '.join(words)!r} not found")


def build_example(spec: ToyExample) -> dict[str, Any]:
    tokens = tokenize_html(spec.html)
    cands = find_candidates(tokens)
    annotations = []
    for n, a in enumerate(spec.annotations):
        null = {"candidate_index": -1, "end_byte": -1, "end_token": -1,
                "start_byte": -1, "start_token": -1}
        long_answer, shorts = null, []
        if a.candidate is not None:
            words = a.candidate.split()
            # the candidate whose first word token starts the given text (smallest one)
            idx = min((i for i, c in enumerate(cands)
                       if _starts_with(tokens, c["start_token"], c["end_token"], words)),
                      key=lambda i: cands[i]["end_token"] - cands[i]["start_token"])
            c = cands[idx]
            long_answer = {"candidate_index": idx, "end_byte": c["end_byte"],
                           "end_token": c["end_token"], "start_byte": c["start_byte"],
                           "start_token": c["start_token"]}
            for phrase in a.short:
                w = phrase.split()
                s = _find_words(tokens, w, c["start_token"], c["end_token"])
                e = s + len(w)
                shorts.append({"end_byte": tokens[e - 1]["end_byte"], "end_token": e,
                               "start_byte": tokens[s]["start_byte"], "start_token": s})
        annotations.append({"annotation_id": spec.example_id * 10 + n,
                            "long_answer": long_answer, "short_answers": shorts,
                            "yes_no_answer": a.yes_no})
    return {
        "annotations": annotations,
        "document_html": spec.html,
        "document_title": spec.title,
        "document_tokens": tokens,
        "document_url": "https://en.wikipedia.org//w/index.php?title="
                        + spec.title.replace(" ", "_") + f"&amp;oldid={spec.oldid}",
        "example_id": spec.example_id,
        "long_answer_candidates": cands,
        "question_text": spec.question,
        "question_tokens": spec.question.split(),
    }


def _starts_with(tokens: list[dict[str, Any]], s: int, e: int, words: list[str]) -> bool:
    got = [t["token"] for t in tokens[s:e] if not t["html_token"]][: len(words)]
    return got == words


_GOOGLE = (
    "<html><body><H1>Google</H1>"
    "<P>Google LLC is an American technology company .</P>"
    "<P>Google was founded in 1998 by Larry Page and Sergey Brin while they were PhD "
    "students at Stanford University .</P>"
    "<H2>Products</H2>"
    "<Ul><Li>Google Search , a web search engine .</Li><Li>Gmail , an email service .</Li>"
    "<Li>Android , a mobile operating system .</Li></Ul>"
    "</body></html>"
)
_PARIS = (
    "<html><body><H1>Capitals of Europe</H1>"
    "<P>This list gives the capital city of each country of Europe .</P>"
    "<Table><Tr><Th>Country</Th><Th>Capital</Th></Tr>"
    "<Tr><Td>France</Td><Td>Paris</Td></Tr>"
    "<Tr><Td>Germany</Td><Td>Berlin</Td></Tr>"
    "<Tr><Td>Italy</Td><Td>Rome</Td></Tr></Table>"
    "</body></html>"
)
_ROENTGEN = (
    "<html><body><H1>Nobel Prize in Physics</H1>"
    "<P>The Nobel Prize in Physics is awarded once a year by the Royal Swedish Academy of "
    "Sciences .</P>"
    "<P>The first prize was awarded in 1901 to Wilhelm Conrad Röntgen for the discovery "
    "of X-rays .</P>"
    "</body></html>"
)
_MOON = (
    "<html><body><H1>Moon</H1>"
    "<P>The Moon is Earth's only natural satellite .</P>"
    "<P>It is the fifth largest moon in the Solar System .</P>"
    "</body></html>"
)

TOY_EXAMPLES: list[ToyExample] = [
    ToyExample(101, "who founded google", "Google", _GOOGLE, [
        ToyAnnotation("Google was founded", ["Larry Page", "Sergey Brin"]),
        ToyAnnotation("Google was founded", ["Larry Page", "Sergey Brin"]),
        ToyAnnotation("Google was founded", ["Larry Page and Sergey Brin"]),
        ToyAnnotation("Google was founded"),
        ToyAnnotation(None),
    ]),
    ToyExample(102, "when was google founded", "Google", _GOOGLE, [
        ToyAnnotation("Google was founded", ["1998"]),
        ToyAnnotation("Google was founded", ["1998"]),
        ToyAnnotation("Google was founded", ["1998"]),
        ToyAnnotation(None),
        ToyAnnotation("Google was founded", ["1998"]),
    ]),
    ToyExample(103, "did larry page co-found google", "Google", _GOOGLE, [
        ToyAnnotation("Google was founded", yes_no="YES"),
        ToyAnnotation("Google was founded", yes_no="YES"),
        ToyAnnotation("Google was founded"),
        ToyAnnotation(None),
        ToyAnnotation("Google was founded", yes_no="YES"),
    ]),
    ToyExample(104, "what products does google make", "Google", _GOOGLE, [
        ToyAnnotation("Google Search"),
        ToyAnnotation("Google Search"),
        ToyAnnotation("Google Search"),
        ToyAnnotation("Google LLC"),
        ToyAnnotation(None),
    ]),
    ToyExample(105, "what is the capital of france", "Capitals of Europe", _PARIS, [
        ToyAnnotation("France Paris", ["Paris"]),
        ToyAnnotation("France Paris", ["Paris"]),
        ToyAnnotation("Country Capital"),
        ToyAnnotation("France Paris", ["Paris"]),
        ToyAnnotation("France Paris"),
    ]),
    ToyExample(106, "who got the first nobel prize in physics", "Nobel Prize in Physics",
               _ROENTGEN, [
        ToyAnnotation("The first prize", ["Wilhelm Conrad Röntgen"]),
        ToyAnnotation("The first prize", ["Wilhelm Conrad Röntgen"]),
        ToyAnnotation("The first prize", ["Wilhelm Conrad Röntgen"]),
        ToyAnnotation("The first prize", ["Röntgen"]),
        ToyAnnotation(None),
    ]),
    ToyExample(107, "who was the first person to walk on the moon", "Moon", _MOON, [
        ToyAnnotation(None), ToyAnnotation(None), ToyAnnotation(None),
        ToyAnnotation("The Moon is"), ToyAnnotation(None),
    ]),
]


def build_toy_lines() -> list[str]:
    """The toy dataset as JSON lines (sorted keys, compact, UTF-8: as the official files)."""
    import json

    return [json.dumps(build_example(s), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            for s in TOY_EXAMPLES]


# A later revision of the Google page: one more paragraph before the founding one, so the
# same long answer has another candidate index (and other offsets) than on the dev page.
_GOOGLE_REV2 = _GOOGLE.replace(
    "<P>Google was founded",
    "<P>Google is headquartered in Mountain View , California .</P><P>Google was founded")

# Toy TRAIN data, one annotation per example as in the real train set, on the toy dev
# pages (the Moon page is deliberately absent). Written in the SIMPLIFIED format, as the
# real train file is. What the copying baselines must predict from it, by hand:
#   most frequent, Google page: "Google was founded" has 2 votes (201, 202 on another
#     revision), "Google LLC" 1, "Google Search" 1 -> the founding paragraph, score 2;
#   Capitals of Europe: "Italy Rome" 2 votes, "Germany Berlin" 1 -> the Italy row, score 2;
#   Nobel Prize in Physics: a 1-1 tie, broken by the earlier candidate -> first paragraph;
#   Moon: unseen page -> NULL.
TOY_TRAIN_EXAMPLES: list[ToyExample] = [
    ToyExample(201, "who are the founders of google", "Google", _GOOGLE,
               [ToyAnnotation("Google was founded", ["Larry Page and Sergey Brin"])]),
    ToyExample(202, "what year was google founded", "Google", _GOOGLE_REV2,
               [ToyAnnotation("Google was founded", ["1998"])], oldid=2),
    ToyExample(203, "what is google", "Google", _GOOGLE, [ToyAnnotation("Google LLC")]),
    ToyExample(204, "what does google search do", "Google", _GOOGLE,
               [ToyAnnotation("Google Search")]),
    ToyExample(205, "who is the ceo of google", "Google", _GOOGLE, [ToyAnnotation(None)]),
    ToyExample(206, "what is the capital of germany", "Capitals of Europe", _PARIS,
               [ToyAnnotation("Germany Berlin", ["Berlin"])]),
    ToyExample(207, "what is the capital of italy", "Capitals of Europe", _PARIS,
               [ToyAnnotation("Italy Rome", ["Rome"])]),
    ToyExample(208, "which city is the capital of italy", "Capitals of Europe", _PARIS,
               [ToyAnnotation("Italy Rome", ["Rome"])]),
    ToyExample(209, "who won the nobel prize in physics in 1901", "Nobel Prize in Physics",
               _ROENTGEN, [ToyAnnotation("The first prize", ["Wilhelm Conrad Röntgen"])]),
    ToyExample(210, "how often is the nobel prize in physics awarded",
               "Nobel Prize in Physics", _ROENTGEN,
               [ToyAnnotation("The Nobel Prize in", ["once a year"])]),
]


def simplify_example(d: dict[str, Any]) -> dict[str, Any]:
    """The simplified form of an original-format example (the dataset README's rules):
    tokens joined by single spaces (spaces inside a token become ``_``), bytes dropped."""

    def tokens_only(span: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in span.items() if not k.endswith("_byte")}

    return {
        "annotations": [{
            "annotation_id": a["annotation_id"],
            "long_answer": tokens_only(a["long_answer"]),
            "short_answers": [tokens_only(s) for s in a["short_answers"]],
            "yes_no_answer": a["yes_no_answer"],
        } for a in d["annotations"]],
        "document_text": " ".join(t["token"].replace(" ", "_") for t in d["document_tokens"]),
        "document_url": d["document_url"],
        "example_id": d["example_id"],
        "long_answer_candidates": [tokens_only(c) for c in d["long_answer_candidates"]],
        "question_text": d["question_text"],
    }


def build_toy_train_lines() -> list[str]:
    """The toy train set as simplified-format JSON lines."""
    import json

    return [json.dumps(simplify_example(build_example(s)), sort_keys=True, ensure_ascii=False)
            for s in TOY_TRAIN_EXAMPLES]


if __name__ == "__main__":  # regenerate: python -m nqkit.data.toy
    TOY_PATH.write_text("\n".join(build_toy_lines()) + "\n", encoding="utf-8")
    TOY_TRAIN_PATH.write_text("\n".join(build_toy_train_lines()) + "\n", encoding="utf-8")
    print(f"wrote {TOY_PATH} and {TOY_TRAIN_PATH}")
