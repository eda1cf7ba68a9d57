"""Property tests: matchings, Edit-F1, normalization and DPR tokenization invariants."""

from __future__ import annotations

import itertools
import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nqkit.formats.ambignq import AmbigNqExample, AmbigQaPrediction, MultipleQAs, QaPair
from nqkit.metrics.ambigqa import edit_f1, max_weight_matching, score_ambigqa
from nqkit.metrics.answer_recall import passage_has_answer
from nqkit.text.dpr_tokenize import (
    answer_char_spans,
    fold,
    has_answer,
    simple_token_offsets,
    simple_tokenize,
    tokenize_answer,
)
from nqkit.text.normalize import normalize_answer, normalize_answer_nfd

from conftest import require, shared_file

weights = st.lists(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=5),
                   min_size=1, max_size=5).map(
    lambda rows: [r + [0.0] * (max(map(len, rows)) - len(r)) for r in rows])


def brute_force(w):
    n, m = len(w), len(w[0])
    best = 0.0
    if n <= m:
        for cols in itertools.permutations(range(m), n):
            best = max(best, sum(w[i][c] for i, c in enumerate(cols)))
    else:
        for rows in itertools.permutations(range(n), m):
            best = max(best, sum(w[r][j] for j, r in enumerate(rows)))
    return best


@given(weights)
@settings(max_examples=150, deadline=None)
def test_hungarian_equals_brute_force(w):
    assert max_weight_matching(w) == pytest.approx(brute_force(w), abs=1e-9)


ragged = st.lists(st.lists(st.floats(0, 1, allow_nan=False), max_size=5), min_size=1,
                  max_size=5)


@given(ragged)
@settings(max_examples=150, deadline=None)
def test_hungarian_on_ragged_rows_equals_brute_force_on_zero_padding(w):
    # a short row has no edge to the columns it lacks: the same as weight 0 there
    m = max(map(len, w))
    padded = [r + [0.0] * (m - len(r)) for r in w]
    assert max_weight_matching(w) == pytest.approx(brute_force(padded), abs=1e-9)


words = st.sampled_from(["who", "won", "the", "cup", "in", "1990", "2000", "first", "x"])
questions = st.lists(words, min_size=1, max_size=8).map(" ".join)


@given(questions, st.lists(questions, min_size=1, max_size=3), questions)
def test_edit_f1_bounds_and_identity(prompt, refs, gen):
    p, rs, g = normalize_answer(prompt), [normalize_answer(r) for r in refs], \
        normalize_answer(gen)
    value = edit_f1(p, rs, g)
    assert 0 <= value <= 1
    assert edit_f1(p, rs, rs[0]) == 1  # reproducing a gold phrasing gets full credit


answer_sets = st.lists(st.lists(st.sampled_from("abcde"), min_size=1, max_size=3),
                       min_size=1, max_size=4)


@given(answer_sets, st.lists(st.sampled_from("abcdef"), min_size=1, max_size=5),
       st.lists(questions, min_size=5, max_size=5))
@settings(max_examples=100, deadline=None)
def test_optimal_never_below_greedy(gold, pred, qs):
    ex = AmbigNqExample("1", "who won the cup", (MultipleQAs(tuple(
        QaPair(q, tuple(a)) for q, a in zip(qs, gold, strict=False))),))
    p = {"1": AmbigQaPrediction(tuple(pred), tuple(qs[: len(pred)]))}
    greedy = score_ambigqa([ex], p, tokenizer="whitespace").per_example["1"]
    optimal = score_ambigqa([ex], p, tokenizer="whitespace",
                            matching="optimal").per_example["1"]
    for name, value in greedy.items():
        assert optimal[f"{name} [optimal]"] >= value - 1e-12


@given(st.text(max_size=40))
def test_normalization_is_idempotent(text):
    once = normalize_answer(text)
    assert normalize_answer(once) == once
    nfd = normalize_answer_nfd(text)
    # Not quite idempotent, as DPR's rule is not: removing an article or a punctuation
    # mark can bring two combining marks together ("À{𑑂" gives "\u0300\U00011442"),
    # and NFD's canonical ordering then swaps them. A second pass changes nothing else.
    assert normalize_answer_nfd(nfd) == unicodedata.normalize("NFD", nfd)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1,
               max_size=60), st.data())
@settings(deadline=None)  # the first call builds the tokenizer's character classes
def test_any_token_run_of_a_passage_is_found(text, data):
    tokens = simple_tokenize(text)
    if not tokens:
        return
    i = data.draw(st.integers(0, len(tokens) - 1))
    j = data.draw(st.integers(i + 1, len(tokens)))
    # the run, re-joined with spaces, must tokenize back to itself to be an answer
    answer = " ".join(tokens[i:j])
    if simple_tokenize(answer) == tokens[i:j]:
        assert passage_has_answer([answer], text)


TEXTS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
# letters with accents, precomposed or not, marks in and out of canonical order, symbols
# that decompose into a symbol and a mark (U+2260), casing that changes length (U+0130)
TRICKY = st.text(alphabet=st.sampled_from(
    [*"aAeE oO,.-", "\u00e9", "\u0301", "\u0316", "\u0308", "\u0130", "\u2260", "\u01c5",
     "\u0344", "\u1fb2", "\u03a3", "\u00f6", "\u0345"]),
    max_size=30)


@given(st.one_of(TEXTS, TRICKY))
@settings(max_examples=200, deadline=None)
def test_token_offsets_are_the_tokens_and_cover_their_source(text):
    words, starts, ends = simple_token_offsets(text)
    assert words == simple_tokenize(text)
    assert starts == sorted(starts) and ends == sorted(ends)
    for w, a, b in zip(words, starts, ends, strict=True):
        assert 0 <= a < b <= len(text)
        assert fold(w) in fold(text[a:b])
        if text.isascii():
            assert text[a:b].lower() == w


@given(st.one_of(TEXTS, TRICKY), st.lists(st.one_of(TEXTS, TRICKY), max_size=3), st.data())
@settings(max_examples=150, deadline=None)
def test_answer_spans_exactly_when_has_answer(text, answers, data):
    tokens = simple_tokenize(text)
    if tokens:  # often an answer that is there: a run of the text's own tokens
        i = data.draw(st.integers(0, len(tokens) - 1))
        j = data.draw(st.integers(i + 1, min(len(tokens), i + 4)))
        answers = [*answers, " ".join(tokens[i:j])]
    runs = [tokenize_answer(a) for a in answers]
    spans = answer_char_spans(runs, text)
    assert bool(spans) == has_answer(runs, tokens)
    for (a, b), nxt in zip(spans, [*spans[1:], (len(text) + 1, 0)], strict=False):
        assert 0 <= a < b <= len(text) and b < nxt[0]  # sorted, apart
        words = simple_tokenize(text[a:b])
        assert any(words[k:k + len(r)] == list(r) for r in runs if r
                   for k in range(len(words)))


def test_dpr_tokenizer_agrees_with_regex_module():
    regex = require("regex")
    pattern = regex.compile(r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])",
                            flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)

    def reference(t):
        return [m.group().lower() for m in pattern.finditer(unicodedata.normalize("NFD", t))]

    data = json.loads(shared_file("data", "dpr", "biencoder-nq-dev-sample5.json").read_text())
    texts = [c["text"] for x in data
             for k in ("positive_ctxs", "negative_ctxs", "hard_negative_ctxs") for c in x[k]]
    # every assigned code point of the basic multilingual plane (unassigned ones differ
    # only in Unicode version between Python and the regex module)
    texts.append("".join(chr(c) for c in range(0x20, 0xFFFF)
                         if unicodedata.category(chr(c)) not in ("Cn", "Cs")))
    for t in texts:
        assert simple_tokenize(t) == reference(t)
