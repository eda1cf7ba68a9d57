"""Shared input validation, pinned where it lives (the CLI view is tests/test_catalogue.py):
64-bit example ids, spans inside the document, candidate indices, mixed gold id types,
symlink loops, invalid UTF-8, DPR scores, regex references, NQ-open prediction forms,
capped listings and the argparse number types."""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from nqkit.errors import InputError, examples
from nqkit.formats.dpr import read_dpr_qa_tsv, read_dpr_results
from nqkit.formats.nq import read_nq
from nqkit.formats.nq_gold import read_nq_gold
from nqkit.formats.nq_open import read_nq_open, read_nq_open_predictions
from nqkit.formats.nq_predictions import read_nq_predictions
from nqkit.formats.simplify import simplify_example, simplify_line
from nqkit.formats.squad import squad_articles_from_json
from nqkit.io import expand_paths
from nqkit.metrics import nq_open as nq_open_metric
from nqkit.metrics.nq_open import score_nq_open
from nqkit.settings import float_in, int_in

# A page of 4 tokens: "<P>" (bytes 0-3), "Paris" (3-8), "here" (9-13), "</P>" (13-17).
HTML = "<P>Paris here</P>"
TOKENS = [{"token": "<P>", "start_byte": 0, "end_byte": 3, "html_token": True},
          {"token": "Paris", "start_byte": 3, "end_byte": 8, "html_token": False},
          {"token": "here", "start_byte": 9, "end_byte": 13, "html_token": False},
          {"token": "</P>", "start_byte": 13, "end_byte": 17, "html_token": True}]


def span(sb: int, eb: int, st: int, et: int) -> dict[str, int]:
    return {"start_byte": sb, "end_byte": eb, "start_token": st, "end_token": et}


def example(example_id: object = 7, long: dict | None = None, cand: object = 0,
            candidate: dict | None = None) -> dict:
    long = long or span(0, 17, 0, 4)
    ann = {"annotation_id": 1, "long_answer": {**long, "candidate_index": cand},
           "short_answers": [], "yes_no_answer": "NONE"}
    return {"annotations": [ann, ann], "document_html": HTML, "document_title": "t",
            "document_tokens": TOKENS, "document_url": "u", "example_id": example_id,
            "long_answer_candidates": [{**(candidate or span(0, 17, 0, 4)), "top_level": True}],
            "question_text": "where", "question_tokens": ["where"]}


def write_lines(path, *objs) -> str:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return str(path)


# --------------------------------------------------------------------------- example ids

@pytest.mark.parametrize(("example_id", "ok"), [
    (2**63 - 1, True), (-(2**63), True), (2**63, False), (-(2**63) - 1, False),
    (2**70, False)])
def test_example_ids_are_int64_in_every_reader(tmp_path, example_id, ok):
    path = write_lines(tmp_path / "g.jsonl", example(example_id))
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps({"predictions": [{
        "example_id": example_id, "long_answer": span(-1, -1, -1, -1),
        "long_answer_score": 0, "short_answers": [], "short_answers_score": 0}]}))
    readers = [lambda: read_nq_gold(path, workers=1), lambda: list(read_nq(path)),
               lambda: read_nq_predictions(preds)]
    for read in readers:
        if ok:
            read()
        else:
            with pytest.raises(InputError, match="does not fit in 64 bits"):
                read()


def test_mixed_gold_id_types_are_named_at_the_gold_line(tmp_path):
    path = write_lines(tmp_path / "g.jsonl", example(7), example("8"))
    with pytest.raises(InputError) as e:
        read_nq_gold(path, workers=1)
    assert e.value.where == f"{path}:2"
    assert "is a string, but the ids before it (from line 1) are integers" in e.value.problem


# --------------------------------------------------------------------------- spans

@pytest.mark.parametrize(("long", "message", "gold_scanner_too"), [
    (span(0, 17, 0, 4), None, True),  # the whole page: the last token ends at byte 17
    # The gold scanner never counts the tokens (that would cost a pass over the line):
    # it bounds token offsets by the page's last byte only (next test).
    (span(0, 17, 0, 5), "ends at token 5, past the end of the document (4 tokens)", False),
    (span(0, 18, 0, 4), "ends at byte 18, past the end of the document (17 bytes)", True),
    (span(0, 17, -5, -3), "start_token is -5, not a position or -1", True),
])
def test_spans_must_lie_inside_the_document(tmp_path, long, message, gold_scanner_too):
    path = write_lines(tmp_path / "g.jsonl", example(long=long))
    if message is None:
        assert len(list(read_nq(path))) == 1
        assert len(read_nq_gold(path, workers=1)) == 1
        return
    with pytest.raises(InputError, match=re.escape(message)):
        list(read_nq(path))
    if gold_scanner_too:
        with pytest.raises(InputError, match=re.escape(message.split(" (")[0])):
            read_nq_gold(path, workers=1)


def test_gold_fast_path_bounds_tokens_by_the_last_byte(tmp_path):
    # 10**6 tokens cannot fit in a 17-byte page: refused without parsing the page.
    path = write_lines(tmp_path / "g.jsonl", example(long=span(0, 17, 0, 10**6)))
    with pytest.raises(InputError, match="ends at token 1,000,000, past the end"):
        read_nq_gold(path, workers=1)


@pytest.mark.parametrize(("cand", "message"), [
    ([], "candidate_index must be an integer >= -1, found \\[\\]"),
    ("0", "candidate_index must be an integer >= -1"),
    (-1, "candidate_index is -1 but the long answer is not null"),
    (3, "candidate_index is 3 but the example has 1 candidates"),
])
def test_candidate_index(tmp_path, cand, message):
    path = write_lines(tmp_path / "g.jsonl", example(cand=cand))
    with pytest.raises(InputError, match=message):
        list(read_nq(path))


def test_candidates_and_tokens_are_checked(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", example(candidate=span(0, 17, 2, 9)))
    with pytest.raises(InputError, match=r"long_answer_candidates\[0\] ends at token 9"):
        list(read_nq(path))
    bad = example()
    bad["document_tokens"] = [*TOKENS[:2], 5, *TOKENS[3:]]
    path = write_lines(tmp_path / "t.jsonl", bad)
    with pytest.raises(InputError, match=r"document_tokens\[2\] must be a JSON object"):
        list(read_nq(path))


def test_simplify_refuses_what_the_reader_of_its_output_would_refuse():
    """simplify copies annotations as the official function does, but only those every
    reader accepts: an impossible id or span is refused at once, not written for the
    next tool to trip on."""
    with pytest.raises(InputError, match=r"example_id 1.18059e\+21 does not fit in 64 bits"):
        simplify_line(json.dumps(example(2**70)).encode(), "x.jsonl:1")
    with pytest.raises(InputError, match=r"^x\.jsonl:1: annotations\[0\]\.long_answer ends "
                       "at token 6, past the end of the document"):
        simplify_line(json.dumps(example(long=span(0, 17, 0, 6))).encode(), "x.jsonl:1")
    out = simplify_line(json.dumps(example(long=span(0, 17, 0, 4))).encode(), "x.jsonl:1")
    assert b'"document_text": "<P> Paris here </P>"' in out


def _tokens_with(i: int, **changes: object) -> list[dict]:
    tokens = [dict(t) for t in TOKENS]
    tokens[i].update(changes)
    return tokens


# The long answer of these cases is tokens 1-3 ("Paris here"); token 2 is its last.
TOKEN_DEFECTS = [
    (_tokens_with(3, start_byte=13, end_byte=40),
     r"document_tokens\[3\] spans bytes 13 to 40, outside the document \(17 bytes\)"),
    (_tokens_with(0, start_byte=-3), r"document_tokens\[0\] spans bytes -3 to 3, outside"),
    (_tokens_with(2, start_byte=12, end_byte=9),
     r"document_tokens\[2\] spans bytes 12 to 9, reversed \(17 bytes\)"),
    (_tokens_with(1, start_byte="3"),
     r"document_tokens\[1\] byte offsets must be integers, found '3' and 8"),
]


def _page_of(n: int) -> tuple[str, list[dict]]:
    """A page of ``n`` words ("w0 w1 ...") inside <P>, and its tokens."""
    words = [f"w{i}" for i in range(n)]
    html = "<P>" + " ".join(words) + "</P>"
    tokens = [{"token": "<P>", "start_byte": 0, "end_byte": 3, "html_token": True}]
    at = 3
    for w in words:
        tokens.append({"token": w, "start_byte": at, "end_byte": at + len(w),
                       "html_token": False})
        at += len(w) + 1
    tokens.append({"token": "</P>", "start_byte": at - 1, "end_byte": at + 3,
                   "html_token": True})
    return html, tokens


def _middle(change: Callable[[dict], object]) -> dict:
    """A 12-token page whose long answer is the whole paragraph, with token 6 (a word in
    the middle, where no span begins or ends) changed by ``change``."""
    html, tokens = _page_of(10)
    change(tokens[6])
    n = len(html)
    return {**example(long=span(0, n, 0, 12), candidate=span(0, n, 0, 12)),
            "document_html": html, "document_tokens": tokens}


_OUTSIDE = ("token offsets must index the page's HTML; check the file is unmodified NQ "
            "data")
_FORMAT = "check the file is in the Natural Questions format"
# (change to token 6, the message, whether simplify refuses it too: it reads a token's
# text and html_token, not its byte offsets, which the simplified format drops)
MIDDLE_DEFECTS = [  # issue 30: accepted without a word before
    (lambda t: t.update(start_byte=90, end_byte=99),
     f"document_tokens[6] spans bytes 90 to 99, outside the document (36 bytes) — {_OUTSIDE}",
     False),
    (lambda t: t.update(start_byte=t["end_byte"], end_byte=t["start_byte"]),
     f"document_tokens[6] spans bytes 20 to 18, reversed (36 bytes) — {_OUTSIDE}", False),
    (lambda t: t.update(start_byte=-1),
     f"document_tokens[6] spans bytes -1 to 20, outside the document (36 bytes) — {_OUTSIDE}",
     False),
    (lambda t: t.update(end_byte=18.0),
     f"document_tokens[6] byte offsets must be integers, found 18 and 18.0 — {_FORMAT}",
     False),
    (lambda t: t.update(start_byte=True),
     f"document_tokens[6] byte offsets must be integers, found True and 20 — {_FORMAT}",
     False),
    (lambda t: t.update(end_byte=2**63),  # beyond int64 (orjson reads it, as a uint64)
     "document_tokens[6] spans bytes 18 to 9,223,372,036,854,775,808, outside the document "
     f"(36 bytes) — {_OUTSIDE}", False),
    (lambda t: t.pop("end_byte"), f"missing key 'end_byte' in document_tokens[6] — {_FORMAT}",
     False),
    (lambda t: t.pop("html_token"),
     f"missing key 'html_token' in document_tokens[6] — {_FORMAT}", True),
    (lambda t: t.update(html_token=None),
     f"document_tokens[6].html_token must be bool/int, found NoneType None — {_FORMAT}", True),
    (lambda t: t.update(html_token="no"),
     f"document_tokens[6].html_token must be bool/int, found str 'no' — {_FORMAT}", True),
]
OFFSET_READERS = ("read_nq", "validate_nq_json")


def _page_readers(tmp_path: Path, d: dict) -> dict[str, Callable[[], object]]:
    """Every reader of original-format pages, on the example ``d`` at ``t.jsonl:1``."""
    from nqkit.formats.nq import validate_nq_json

    path = write_lines(tmp_path / "t.jsonl", d)
    line = json.dumps(d).encode()
    return {"read_nq": lambda: list(read_nq(path)),
            "validate_nq_json": lambda: validate_nq_json(d, f"{path}:1"),
            "simplify_line": lambda: simplify_line(line, f"{path}:1"),
            "simplify_example": lambda: simplify_example(json.loads(line), f"{path}:1")}


@pytest.mark.parametrize(("tokens", "message"), TOKEN_DEFECTS)
def test_token_offsets_outside_the_page_are_refused_by_every_reader_of_offsets(
        tmp_path, tokens, message):
    bad = {**example(long=span(3, 13, 1, 3)), "document_tokens": tokens}
    for name in OFFSET_READERS:
        with pytest.raises(InputError, match=rf"^{re.escape(str(tmp_path))}/t\.jsonl:1: "
                           rf"{message}"):
            _page_readers(tmp_path, bad)[name]()


@pytest.mark.parametrize(("change", "message", "simplify_too"), MIDDLE_DEFECTS)
def test_every_token_is_checked_not_only_those_spans_point_at(tmp_path, change, message,
                                                               simplify_too):
    d = _middle(lambda t: None)
    for read in _page_readers(tmp_path, d).values():
        read()  # the page itself is valid
    bad = _middle(change)
    for name, read in _page_readers(tmp_path, bad).items():
        if name in OFFSET_READERS or simplify_too:
            with pytest.raises(InputError) as e:
                read()
            assert str(e.value) == f"{tmp_path}/t.jsonl:1: {message}", name
        else:  # the documented leniency of simplify (nqkit.formats.simplify)
            read()


def test_tokens_valid_but_out_of_order_or_with_int_flags_are_read(tmp_path):
    # The C loops vouch only for tokens in page order with bool flags; anything else is
    # walked token by token, which accepts what the rules accept.
    html, tokens = _page_of(10)
    tokens[4], tokens[5] = tokens[5], tokens[4]
    tokens[7]["html_token"] = 0
    tokens[8]["start_byte"] = tokens[8]["end_byte"]  # an empty token
    n = len(html)
    d = {**example(long=span(0, n, 0, 12), candidate=span(0, n, 0, 12)),
         "document_html": html, "document_tokens": tokens}
    for read in _page_readers(tmp_path, d).values():
        read()
    (ex,) = read_nq(write_lines(tmp_path / "u.jsonl", d))
    assert ex.document_tokens[7].html_token is False
    assert [t.token for t in ex.document_tokens[3:6]] == ["w2", "w4", "w3"]


def test_the_fast_token_check_never_vouches_for_a_page_the_walk_refuses():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from nqkit.formats.nq import HtmlSize, _Parser, tokens_in_page

    offset = st.one_of(st.integers(-2, 40), st.booleans(), st.floats(0, 40),
                       st.sampled_from(["3", None, 2**64, [1]]))

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.tuples(offset, offset), max_size=8), st.integers(0, 40),
           st.booleans())
    def check(pairs: list[tuple[object, object]], length: int, ordered: bool) -> None:
        if ordered:  # mostly valid pages, as real ones are
            flat = sorted(v for p in pairs for v in p if type(v) is int and v >= 0)
            pairs = list(zip(flat[0::2], flat[1::2], strict=False))  # an odd one left out
        starts, ends = [p[0] for p in pairs], [p[1] for p in pairs]
        size = HtmlSize.of("x" * length)
        assert size is not None
        valid = all(type(s) is int and type(e) is int and 0 <= s <= e <= length
                    for s, e in pairs)
        fast = tokens_in_page(starts, ends, size)
        assert not (fast and not valid)
        try:
            _Parser("f:1").check_tokens(starts, ends, size)
        except InputError:
            assert not valid
        else:
            assert valid

    check()


def test_html_size_bounds_hold_for_any_text_and_escaping():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from nqkit.formats.nq import HtmlSize

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.characters(blacklist_categories=("Cs",))) | st.sampled_from(
        ["", "\\", "\\u", "a\nb", "\ud800x"]), st.booleans())
    def check(text: str, ascii_only: bool) -> None:
        exact = len(text.encode("utf-8", errors="surrogatepass"))
        size = HtmlSize.of_json(json.dumps(text, ensure_ascii=ascii_only).encode(
            "utf-8", errors="surrogatepass"))
        assert size.lo <= exact <= size.hi
        assert size.covers(exact) and not size.covers(exact + 1)
        assert size.exact() == exact
        plain = HtmlSize.of(text)
        assert plain is not None and plain.covers(exact) and not plain.covers(exact + 1)

    check()


def test_example_ids_name_both_places_of_a_repeat():
    from nqkit.formats.nq import ExampleIds

    ids = ExampleIds(["a.jsonl", "b.jsonl", "a.jsonl"])
    ids.add(5, 0, 1)
    ids.add("5", 0, 2)  # a string id is another id (browse reads both kinds)
    ids.add(6, 1, 4_000_000_000)
    with pytest.raises(InputError, match=r"^b\.jsonl:7: duplicate example_id 5 \(first at "
                       r"a\.jsonl:1\) — give each example once"):
        ids.add(5, 1, 7)
    with pytest.raises(InputError, match=r"^a\.jsonl:1: duplicate example_id 6 \(first at "
                       r"b\.jsonl:4000000000\)"):
        ids.add(6, 2, 1)  # the same file given twice is read twice


def test_read_nq_refuses_a_repeated_example_unless_asked_not_to(tmp_path):
    a = write_lines(tmp_path / "a.jsonl", example(1), example(2))
    b = write_lines(tmp_path / "b.jsonl", example(3), example(1))
    with pytest.raises(InputError, match=rf"^{re.escape(b)}:2: duplicate example_id 1 "
                       rf"\(first at {re.escape(a)}:1\)"):
        list(read_nq([a, b]))
    assert [ex.example_id for ex in read_nq([a, b], unique=False)] == [1, 2, 3, 1]


def test_questions_to_retrieve_for_must_not_be_empty(tmp_path):
    from nqkit.retrieval.questions import read_questions

    tsv = tmp_path / "q.qa.tsv"
    tsv.write_text("who?\t['a']\n\n\t['b']\nwhat?\t['c']\n  \t['d']\n\t['e']\n\t['f']\n"
                   "\t['g']\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(tsv))}:3: empty question \(5 in "
                       rf"all, e\.g\. {re.escape(str(tsv))}:5, {re.escape(str(tsv))}:6, "
                       rf"{re.escape(str(tsv))}:7\) — give its text or remove it"):
        read_questions(tsv)
    jsonl = write_lines(tmp_path / "q.jsonl", {"question": "who?", "answer": ["a"]},
                        {"question": "", "answer": ["b"]})
    with pytest.raises(InputError, match=rf"^{re.escape(jsonl)}:2: empty question — "):
        read_questions(jsonl)
    ambig = tmp_path / "q.json"
    ambig.write_text(json.dumps([{"id": "1", "question": " ", "annotations": [
        {"type": "singleAnswer", "answer": ["a"]}]}]))
    with pytest.raises(InputError, match=rf"^{re.escape(str(ambig))}: example 0: empty "):
        read_questions(ambig)
    tsv.write_text("who?\t['a']\n")
    assert [q.question for q in read_questions(tsv)] == ["who?"]


# --------------------------------------------------------------------------- files

def test_symlink_loops_and_dangling_links(tmp_path):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    with pytest.raises(InputError, match="the gold path is a loop of symbolic links"):
        expand_paths(str(tmp_path / "a"), what="gold")
    with pytest.raises(InputError, match="loop of symbolic links"):
        expand_paths(str(tmp_path / "[ab]"), what="gold")  # through a glob too
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    with pytest.raises(InputError, match="a symbolic link to a missing file"):
        expand_paths(str(tmp_path / "dangling"))


def test_invalid_utf8_in_a_qa_tsv(tmp_path):
    path = tmp_path / "qa.tsv"
    path.write_bytes(b"q1\t['a']\nq\xc3\x28x\t['b']\n")
    with pytest.raises(InputError) as e:
        list(read_dpr_qa_tsv(path))
    assert e.value.message == (f"{path}:2: invalid UTF-8 (byte 0xc3 at column 2) — save the "
                               "file as UTF-8")


@pytest.mark.parametrize(("score", "expected"), [
    ("81.5", 81.5), (3, 3.0), (None, None), ("", None), ("high", "high"), (True, "True"),
    ([1], "[1]")])
def test_dpr_context_scores(tmp_path, score, expected):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"question": "q", "answers": ["a"], "ctxs": [
        {"id": "1", "title": "t", "text": "x", "score": score}]}]))
    if expected is None or isinstance(expected, float):
        assert next(read_dpr_results(path)).ctxs[0].score == expected
    else:
        with pytest.raises(InputError, match=r"question 0, ctxs\[0\]: 'score' must be a "
                           r"number, found " + repr(score)[:8].replace("[", r"\[")):
            list(read_dpr_results(path))


def test_squad_answer_must_be_at_its_offset():
    doc = {"data": [{"title": "t", "paragraphs": [{"context": "Paris is big.", "qas": [
        {"id": "1", "question": "q", "answers": [{"text": "big", "answer_start": 9}]}]}]}]}
    (article,) = squad_articles_from_json(doc, "s.json")
    assert article.paragraphs[0].context == "Paris is big."
    doc["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = 8
    with pytest.raises(InputError, match="the answer text 'big' is not at answer_start 8"):
        list(squad_articles_from_json(doc, "s.json"))


# --------------------------------------------------------------------------- NQ-open

def test_regex_references_are_checked_where_they_are(tmp_path, monkeypatch):
    refs = write_lines(tmp_path / "r.jsonl", {"question": "q1", "answer": ["19[0-9]{2}"]},
                       {"question": "q2", "answer": ["(unclosed"]})
    preds = [nq_open_metric.NqOpenPrediction("q1", "1969"),
             nq_open_metric.NqOpenPrediction("q2", "x")]
    with pytest.raises(InputError) as e:
        score_nq_open(read_nq_open(refs), preds, regex=True)
    assert e.value.where == f"{refs}:2"
    assert "'(unclosed' is not a valid regular expression" in e.value.problem
    # Without --regex the same strings are plain answers: no error.
    assert score_nq_open(read_nq_open(refs), preds).num_total == 2

    monkeypatch.setattr(nq_open_metric, "REGEX_TIMEOUT", 0.05)
    refs = write_lines(tmp_path / "s.jsonl", {"question": "q1", "answer": ["(a|aa)+$"]})
    with pytest.raises(InputError, match="catastrophic backtracking") as e:
        score_nq_open(read_nq_open(refs), [nq_open_metric.NqOpenPrediction(
            "q1", "a" * 60 + "!")], regex=True)
    assert e.value.where == f"{refs}:1"


def test_nq_open_prediction_forms_read_the_same(tmp_path):
    pairs = {"who is it": "me", "where": "here"}
    lines = write_lines(tmp_path / "p.jsonl", *({"question": q, "prediction": p}
                                                for q, p in pairs.items()))
    (tmp_path / "o.json").write_text(json.dumps(pairs, indent=2))
    (tmp_path / "l.json").write_text(json.dumps([{"question": q, "prediction": p}
                                                 for q, p in pairs.items()]))
    want = [(q, p) for q, p in pairs.items()]
    for path in (lines, tmp_path / "o.json", tmp_path / "l.json"):
        assert [(x.question, x.prediction) for x in read_nq_open_predictions(path)] == want
    (tmp_path / "bad.json").write_text(json.dumps({"where": ["here"]}))
    with pytest.raises(InputError, match="question 'where': the prediction must be a string"):
        list(read_nq_open_predictions(tmp_path / "bad.json"))


def test_listings_in_messages_are_capped():
    assert examples(range(3610)) == "0, 1, 2 and 3,607 more"
    assert examples(["a" * 80], quote=True, width=10) == "'aaaaaa..."
    assert examples(["x"]) == "x"


def test_a_wrong_key_listing_stays_short(tmp_path):
    path = write_lines(tmp_path / "p.jsonl", {f"question {i}": "a" for i in range(3610)}
                       | {"question": "q"})
    with pytest.raises(InputError) as e:
        list(read_nq_open_predictions(path))
    assert "missing key 'prediction' (found question, question 0, question 1 and 3,608 " \
           "more)" in e.value.message


# --------------------------------------------------------------------------- argparse

def test_number_types():
    assert int_in(1)("3") == 3
    assert float_in(0, 1)("1") == 1.0
    for parse, text, message in [
        (int_in(1), "0", "must be >= 1, found 0"),
        (int_in(1, 65535), "70000", "must be in [1, 65535], found 70000"),
        (int_in(1), "x", "expected an integer, found 'x'"),
        (float_in(0), "-1", "must be >= 0, found -1"),
        (float_in(0, 1), "7", "must be in [0, 1], found 7"),
        (float_in(0), "inf", "must be a finite number, found 'inf'"),
        (float_in(0), "nan", "must be a finite number, found 'nan'"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError, match=message.replace("[", r"\[")):
            parse(text)
