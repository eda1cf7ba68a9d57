"""NQ -> NQ-open conversion: the real check against NQ-open dev, and small cases."""

from __future__ import annotations

import gzip
import json

import pytest

from nqkit.cli import main
from nqkit.errors import InputError
from nqkit.formats.nq_open import nq_open_from_nq, read_nq_open
from nqkit.text.html import html_span_text

from conftest import shared_file


def test_real_check_against_nq_open_dev(tmp_path, capsys):
    nq = shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")
    dev = {ex.question: set(ex.answers)
           for ex in read_nq_open(shared_file("data", "nq-open", "NQ-open.dev.jsonl"))}
    out = tmp_path / "out.jsonl"
    assert main(["convert", "nq-open", str(nq), "-o", str(out)]) == 0
    assert "2 of 10 examples" in capsys.readouterr().err
    produced = {ex.question: set(ex.answers) for ex in read_nq_open(out)}
    assert len(produced) == 2
    for question, answers in produced.items():
        assert dev[question] == answers
    with gzip.open(nq, "rt", encoding="utf-8") as f:
        questions = [json.loads(line)["question_text"] for line in f]
    dropped = [q for q in questions if q not in produced]
    assert len(dropped) == 8
    assert not any(q in dev for q in dropped)


def _nq(html: str, spans: list[tuple[int, int, int, int]]) -> dict:
    return {"question_text": "q", "document_html": html, "annotations": [
        {"short_answers": [{"start_byte": a, "end_byte": b, "start_token": c, "end_token": d}
                           for a, b, c, d in spans]}]}


def _full_record(html: str, spans: list[tuple[int, int, int, int]], n: int) -> dict:
    """A complete original-format record around :func:`_nq`, as a file holds it."""
    import re as _re

    tokens = [{"token": m.group(), "start_byte": m.start(), "end_byte": m.end(),
               "html_token": m.group().startswith("<")}
              for m in _re.finditer(r"<[^>]*>|[^\s<]+", html)]
    null = {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1,
            "candidate_index": -1}
    obj = _nq(html, spans)
    obj["annotations"][0].update(annotation_id=n, long_answer=null, yes_no_answer="NONE")
    obj.update(example_id=n, document_title="t", document_url="http://example.org",
               document_tokens=tokens, long_answer_candidates=[])
    return obj


def test_small_cases():
    html = "<P>Tom &amp; <B>Jerry</B> and a very long answer of many tokens</P>"
    b = html.encode()
    s = b.index(b"Tom")
    e = b.index(b"</B>") + len(b"</B>")
    far = b.index(b"</P>")
    ex = nq_open_from_nq(_nq(html, [(s, e, 1, 4), (s, e, 1, 4), (s, far, 1, 14)]), "x")
    assert ex is not None and ex.answers == ("Tom & Jerry",)  # deduplicated, long one dropped
    assert nq_open_from_nq(_nq(html, [(s, far, 1, 14)]), "x") is None
    assert html_span_text("R\u00f6ntgen</A>, x".encode(), 0, 8) == "R\u00f6ntgen"


# Tokens of this page: 0 "<P>", 1 "one", ..., 7 "seven", 8 "</P>"; a short answer spans
# [start_token, end_token). NQ-open keeps short answers "with at most 5 tokens"
# (nq_open/README.md of the NQ repository): 5 is in, 6 is out.
WORDS = ["one", "two", "three", "four", "five", "six", "seven"]
PAGE = "<P>" + " ".join(WORDS) + "</P>"


def _words_span(first: int, n: int) -> tuple[int, int, int, int]:
    b = PAGE.encode()
    start = b.index(WORDS[first].encode())
    end = b.index(WORDS[first + n - 1].encode()) + len(WORDS[first + n - 1])
    return start, end, first + 1, first + 1 + n


@pytest.mark.parametrize(("n_tokens", "kept"), [(1, True), (4, True), (5, True), (6, False),
                                                 (7, False)])
def test_five_token_limit_boundary(n_tokens, kept):
    ex = nq_open_from_nq(_nq(PAGE, [_words_span(0, n_tokens)]), "x")
    if kept:
        assert ex is not None and ex.answers == (" ".join(WORDS[:n_tokens]),)
    else:
        assert ex is None


def test_five_token_limit_keeps_only_the_short_enough_answers():
    # one annotation with a 6-token and a 5-token answer, another with a 2-token one
    obj = _nq(PAGE, [_words_span(0, 6), _words_span(1, 5)])
    obj["annotations"].append(_nq(PAGE, [_words_span(5, 2)])["annotations"][0])
    ex = nq_open_from_nq(obj, "x")
    assert ex is not None and ex.answers == ("two three four five six", "six seven")


@pytest.mark.parametrize(("max_tokens", "kept"), [(None, ["q5"]), ("6", ["q5", "q6"]),
                                                  ("4", [])])
def test_cli_token_limit_boundary(tmp_path, capsys, max_tokens, kept):
    src = tmp_path / "nq.jsonl"
    lines = []
    for n in (5, 6):
        obj = _full_record(PAGE, [_words_span(0, n)], n)
        obj["question_text"] = f"q{n}"
        lines.append(json.dumps(obj))
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    extra = [] if max_tokens is None else ["--max-tokens", max_tokens]
    assert main(["convert", "nq-open", str(src), "-o", str(out), *extra]) == 0
    assert f"{len(kept)} of 2 examples" in capsys.readouterr().err
    got = [json.loads(line) for line in out.read_text().splitlines()]
    want = {"q5": "one two three four five", "q6": "one two three four five six"}
    assert got == [{"question": q, "answer": [want[q]]} for q in kept]


def test_bad_input(tmp_path, capsys):
    simplified = tmp_path / "simple.jsonl"
    simplified.write_text(json.dumps({"question_text": "q", "document_text": "a b",
                                      "annotations": []}) + "\n")
    assert main(["convert", "nq-open", str(simplified), "-o", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "simple.jsonl:1: missing string 'document_html' (this looks like the simplified" in err
    assert not (tmp_path / "o.jsonl").exists()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["convert", "nq-open", str(empty), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "the NQ input holds no example" in capsys.readouterr().err
    with pytest.raises(InputError, match=r"bytes \[0, 99\) lie outside"):
        nq_open_from_nq(_nq("<P>x</P>", [(0, 99, 0, 1)]), "x")


def test_short_answers_at_the_first_and_last_byte_of_the_page():
    # A page without markup, "one two three four five six seven": "one" is bytes [0, 3),
    # "seven" [28, 33), ending at the last byte.
    page = " ".join(WORDS)
    assert len(page.encode()) == 33
    ex = nq_open_from_nq(_nq(page, [(0, 3, 0, 1), (28, 33, 6, 7)]), "x")
    assert ex is not None and ex.answers == ("one", "seven")
    with pytest.raises(InputError, match=r"short answer bytes \[28, 34\) lie outside the "
                       r"33-byte document"):
        nq_open_from_nq(_nq(page, [(28, 34, 6, 7)]), "x")


def test_an_empty_short_answer_is_the_readers_error(tmp_path, capsys):
    # Bytes [3, 3) lie inside the page, so the conversion's own bounds check passes; the
    # span is empty, which the NQ reader's check then refuses, with its message.
    src = tmp_path / "nq.jsonl"
    src.write_text(json.dumps(_full_record(PAGE, [(3, 3, 1, 2)], 1)) + "\n")
    assert main(["convert", "nq-open", str(src), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert capsys.readouterr().err == (
        f"nqkit: error: {src}:1: annotations[0].short_answers[0] has start_byte >= end_byte "
        "(3 >= 3) — end offsets are exclusive: end must exceed start\n")
    assert not (tmp_path / "o.jsonl").exists()
