"""The fast paths of DPR results: the memoised has-answer check, the results writer built
from per-passage fragments, and the streaming reader.

Oracles: :func:`nqkit.metrics.answer_recall.passage_has_answer` (tokenize both sides, scan
every position) for the check; a reference writer kept here, the one ``nqkit retrieve``
used before (a dict per context, ``orjson.dumps`` per question), for the writer; and
``orjson.loads`` of the whole file for the reader.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import unicodedata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nqkit.errors import InputError
from nqkit.formats.dpr import read_dpr_biencoder, read_dpr_results
from nqkit.metrics.answer_recall import passage_has_answer
from nqkit.retrieval.corpus import Passage
from nqkit.retrieval.open_run import Run, score_values, write_dpr_results
from nqkit.retrieval.questions import Question
from nqkit.text.dpr_tokenize import AnswerCheck, fold, simple_tokenize

from conftest import shared_file

# ----------------------------------------------------------------------------- the check


@pytest.fixture(scope="module")
def biencoder() -> list[Any]:
    return list(read_dpr_biencoder(shared_file("data", "dpr",
                                               "biencoder-nq-dev-sample5.json")))


def test_check_equals_passage_has_answer_on_real_passages(biencoder: list[Any]) -> None:
    passages = [c.text for e in biencoder
                for c in (*e.positive_ctxs, *e.negative_ctxs, *e.hard_negative_ctxs)]
    # every question's answers against every passage, and some answers made of a
    # passage's own tokens (so that hits are not only the gold passages')
    answer_sets = [list(e.answers) for e in biencoder]
    answer_sets += [[" ".join(t.split()[i:i + n])] for t in passages[::97]
                    for i, n in ((0, 1), (3, 2), (10, 4))]
    check = AnswerCheck(limit=100)  # smaller than the passages: the cache is emptied too
    hits = 0
    for answers in answer_sets:
        tokens = check.answers(answers)
        for text in passages:
            want = passage_has_answer(answers, text)
            assert check(tokens, text) is want, (answers, text[:80])
            hits += want
    assert hits > 100  # not vacuous


# besides plain words: the capital sigma, whose lower case depends on its neighbours
# (the one context str.lower knows), dotted I, sharp s, the Kelvin sign (NFD: K)
WORDS = st.sampled_from(["a", "b", "ab", "é", "e\u0301", "1", ",", "-", "the", "B",
                         "ΟΔΟΣ", "Σ", "σ", "ς", "ΟΔΟΣ'Α", "'", "İ", "i\u0307", "ß", "ẞ",
                         "\u212a", "k", "Ǆ", "ǆ"])
TEXT = st.lists(st.one_of(WORDS, st.text(max_size=3)), max_size=30).map(" ".join)


@given(answers=st.lists(st.one_of(TEXT, st.lists(WORDS, max_size=4).map(" ".join)),
                        max_size=4),
       texts=st.lists(TEXT, min_size=1, max_size=4))
def test_check_equals_passage_has_answer_on_generated_strings(answers: list[str],
                                                              texts: list[str]) -> None:
    check = AnswerCheck(limit=2)
    tokens = check.answers(answers)
    for text in [*texts, *texts]:  # the second time from the cache
        assert check(tokens, text) is passage_has_answer(answers, text)


@given(texts=st.lists(TEXT, min_size=1, max_size=3))
def test_every_folded_token_is_a_substring_of_the_folded_text(texts: list[str]) -> None:
    # what makes the prefilter of AnswerCheck exact: a text none of whose folded
    # substrings is an answer token cannot hold the answer
    for text in texts:
        folded = fold(text)
        for token in simple_tokenize(text):
            assert fold(token) in folded, (token, text)


def _full_classes(text: str) -> list[str]:
    """The tokenizer without its ASCII shortcut: the Unicode classes on NFD text."""
    from nqkit.text.dpr_tokenize import _token_re

    return [t.lower() for t in _token_re().findall(unicodedata.normalize("NFD", text))]


def test_the_ascii_shortcut_tokenizes_every_pair_of_ascii_characters_alike() -> None:
    chars = [chr(i) for i in range(128)]
    for a in chars:
        for b in chars:
            assert simple_tokenize(a + b) == _full_classes(a + b), repr(a + b)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_the_ascii_shortcut_tokenizes_ascii_text_alike(text: str) -> None:
    assert simple_tokenize(text) == _full_classes(text)


def test_lower_case_is_stable_on_every_code_point() -> None:
    # fold() relies on it: a lower-cased token lower-cased again is itself
    unstable = [c for c in map(chr, range(sys.maxunicode + 1))
                if not 0xD800 <= ord(c) <= 0xDFFF and c.lower().lower() != c.lower()]
    assert unstable == []


@pytest.mark.parametrize(("answer", "text"), [
    ("οδος", "ΟΔΟΣ'Α"),  # the sigma is medial before the apostrophe and a capital
    ("ΟΔΟΣ", "ΟΔΟΣ'Α"),
    ("οδοσ", "ΟΔΟΣ, Α"),
    ("i̇stanbul", "İSTANBUL"),
    ("kelvin", "\u212aELVIN"),
])
def test_check_with_context_dependent_lower_case(answer: str, text: str) -> None:
    check = AnswerCheck()
    assert check(check.answers([answer]), text) is passage_has_answer([answer], text)


# ----------------------------------------------------------------------------- the writer

def reference_write(path: Path, questions: list[Question], run: Run, store: Any) -> None:
    """The results writer as it was: one dict per context, orjson per question."""
    with open(path, "wb") as f:
        f.write(b"[\n")
        for i, (q, (rows, scores)) in enumerate(zip(questions, run.hits, strict=True)):
            ctxs = []
            for row, value in zip(rows.tolist(), score_values(scores, run.fused), strict=True):
                p = store.get(row)
                ctxs.append({"id": p.id, "title": p.title, "text": p.text, "score": value,
                             "has_answer": passage_has_answer(q.answers, p.text)})
            if i:
                f.write(b",\n")
            f.write(orjson.dumps({"question": q.question, "answers": list(q.answers),
                                  "ctxs": ctxs}))
        f.write(b"\n]\n")


class ListStore:
    def __init__(self, passages: list[Passage]) -> None:
        self.passages = passages

    def get(self, row: int) -> Passage:
        return self.passages[row]


def _passages(biencoder: list[Any]) -> list[Passage]:
    seen: dict[str, Passage] = {}
    for e in biencoder:
        for c in (*e.positive_ctxs, *e.hard_negative_ctxs[:20]):
            seen.setdefault(c.id, Passage(c.id, c.text, c.title))
    # odd characters the encoder must escape as orjson does
    seen["odd"] = Passage("odd", 'quote " backslash \\ tab\t nul\x00 \u2028 \U0001f600', "T\u00e9")
    return list(seen.values())


FLOAT32 = st.one_of(
    st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1e-3, 9.999999e-4, 1e15, 9.99999e14, 1e-5, 1e16, 3.4e38,
                     1.4e-45, 12.345678, -7.25]))


@pytest.mark.parametrize("fused", [False, True])
@given(data=st.data())
def test_fast_writer_equals_the_dict_writer_byte_for_byte(
        biencoder: list[Any], tmp_path_factory: pytest.TempPathFactory, fused: bool,
        data: st.DataObject) -> None:
    passages = _passages(biencoder)
    store = ListStore(passages)
    n_q = data.draw(st.integers(0, 6))
    questions, hits = [], []
    for i in range(n_q):
        e = biencoder[i % len(biencoder)]
        answers = data.draw(st.lists(st.sampled_from([*e.answers, "the", "", "x y"]),
                                     max_size=3))
        k = data.draw(st.integers(0, 12))
        rows = np.asarray(data.draw(st.lists(st.integers(0, len(passages) - 1), min_size=k,
                                             max_size=k)), dtype=np.int64)
        if fused:
            scores = np.asarray(data.draw(st.lists(st.floats(allow_nan=False,
                                                             allow_infinity=False),
                                                   min_size=k, max_size=k)), np.float64)
        else:
            scores = np.asarray(data.draw(st.lists(FLOAT32, min_size=k, max_size=k)),
                                np.float32)
        questions.append(Question(str(i), f"question {i} \u00e9?", tuple(answers)))
        hits.append((rows, scores))
    run = Run(hits, {}, fused, 0.0)
    d = tmp_path_factory.mktemp("w")
    reference_write(d / "want.json", questions, run, store)
    write_dpr_results(d / "got.json", questions, run, SimpleNamespace(store=store))  # type: ignore[arg-type]
    assert (d / "got.json").read_bytes() == (d / "want.json").read_bytes()


def test_fast_writer_on_the_real_run_shape(biencoder: list[Any], tmp_path: Path) -> None:
    """Many questions over repeated passages (the fragment cache hit and emptied), more
    than one block of score formatting."""
    import nqkit.retrieval.open_run as run_module

    passages = _passages(biencoder)
    store = ListStore(passages)
    rng = np.random.default_rng(7)
    questions = [Question(str(i), f"q{i}", tuple(biencoder[i % 5].answers))
                 for i in range(2100)]
    hits = [(rng.integers(0, len(passages), 20).astype(np.int64),
             (rng.standard_normal(20) * 10.0 ** rng.integers(-5, 17)).astype(np.float32))
            for _ in questions]
    run = Run(hits, {}, False, 0.0)
    reference_write(tmp_path / "want.json", questions, run, store)
    old = run_module._ROW_LIMIT
    run_module._ROW_LIMIT = 7
    try:
        write_dpr_results(tmp_path / "got.json", questions, run,
                          SimpleNamespace(store=store))  # type: ignore[arg-type]
    finally:
        run_module._ROW_LIMIT = old
    assert (tmp_path / "got.json").read_bytes() == (tmp_path / "want.json").read_bytes()


# ----------------------------------------------------------------------------- the reader

ITEMS = [{"question": f"q{i}", "answers": ["a", "b c"],
          "ctxs": [{"id": str(j), "title": "t", "text": f"text {i} {j} }}, {{", "score": 1.5 - j,
                    "has_answer": j == i} for j in range(3)]}
         for i in range(4)]


def _layouts() -> dict[str, bytes]:
    items = ITEMS
    one_per_line = b"[\n" + b",\n".join(orjson.dumps(x) for x in items) + b"\n]\n"
    return {
        "nqkit": one_per_line,
        "dpr-indent-4": json.dumps(items, indent=4).encode(),
        "indent-2": json.dumps(items, indent=2).encode(),
        # every line at column 0: each context's end looks like an item's end
        "indent-0": json.dumps([{**x, "ctxs": x["ctxs"] * 10} for x in items],
                               indent=0).encode(),
        "one-line": orjson.dumps(items),
        "two-items-a-line": b"[\n" + orjson.dumps(items[0]) + b", " + orjson.dumps(items[1])
        + b",\n" + orjson.dumps(items[2]) + b",\n" + orjson.dumps(items[3]) + b"\n]",
        "leading-commas": b"[\n" + orjson.dumps(items[0]) + b"\n," + orjson.dumps(items[1])
        + b"\n," + orjson.dumps(items[2]) + b"\n," + orjson.dumps(items[3]) + b"\n]\n",
        "blank-lines-crlf": one_per_line.replace(b"\n", b"\r\n\r\n"),
        "closing-brace-alone": b"[\n" + b",\n".join(orjson.dumps(x)[:-1] + b"\n}"
                                                   for x in items) + b"\n]\n",
    }


@pytest.mark.parametrize("layout", list(_layouts()))
@pytest.mark.parametrize("gz", [False, True])
def test_reader_reads_every_layout_as_the_whole_file(tmp_path: Path, layout: str,
                                                     gz: bool) -> None:
    data = _layouts()[layout]
    path = tmp_path / ("r.json.gz" if gz else "r.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    got = [(r.question, r.answers, [(c.id, c.title, c.text, c.score, c.has_answer)
                                    for c in r.ctxs]) for r in read_dpr_results(path)]
    assert got  # not vacuous
    want = [(x["question"], tuple(x["answers"]),
             [(c["id"], c["title"], c["text"], c["score"], c["has_answer"]) for c in x["ctxs"]])
            for x in orjson.loads(data)]
    assert got == want


@pytest.mark.parametrize(("content", "message"), [
    # broken after items were read: the whole file's error, not a partial result
    (b"[\n" + orjson.dumps(ITEMS[0]) + b",\n" + orjson.dumps(ITEMS[1])[:-5] + b"\n]\n",
     "malformed JSON"),
    (b"[\n" + orjson.dumps(ITEMS[0]) + b",\n" + orjson.dumps(ITEMS[1]) + b",\n", "malformed JSON"),
    (b"[\n" + orjson.dumps(ITEMS[0]) + b"\n]\nextra\n", "malformed JSON"),
    (b"[\n]\n", "holds no question"),
    (b"[\n" + orjson.dumps({**ITEMS[0], "ctxs": [{"title": "t"}]}) + b"\n]\n",
     "question 0, ctxs[0]: a context must be an object with a string 'text'"),
])
def test_reader_errors_are_the_whole_files(tmp_path: Path, content: bytes,
                                           message: str) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=re.escape(message)):
        list(read_dpr_results(path))


def test_reader_truncated_gzip_is_one_error(tmp_path: Path) -> None:
    data = gzip.compress(_layouts()["nqkit"] * 50)
    path = tmp_path / "r.json.gz"
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(InputError, match="truncated or corrupt"):
        list(read_dpr_results(path))
