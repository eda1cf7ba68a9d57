"""Each copying baseline's rule, checked exactly on the toy data (values derived by hand
from the toy specs in nqkit.data.toy)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from nqkit.baselines import baseline_names, get_baseline
from nqkit.baselines.nq_closest_question import question_words
from nqkit.baselines.pages import normalize_title, page_keys
from nqkit.data.toy import (
    TOY_PATH,
    TOY_TRAIN_EXAMPLES,
    TOY_TRAIN_PATH,
    build_example,
    build_toy_train_lines,
    simplify_example,
)
from nqkit.errors import InputError
from nqkit.formats.nq import NqExample, SimplifiedNqExample, read_nq, simplified_from_json


@pytest.fixture(scope="module")
def dev() -> dict[int, NqExample]:
    return {ex.example_id: ex for ex in read_nq(TOY_PATH)}  # type: ignore[misc]


@pytest.fixture(scope="module")
def train() -> list:
    return list(read_nq(TOY_TRAIN_PATH))


def chosen(ex, pred) -> int:
    """Index of the predicted candidate, -1 for NULL."""
    if pred.long_answer.is_null:
        return -1
    (idx,) = [i for i, c in enumerate(ex.long_answer_candidates) if c.span == pred.long_answer]
    return idx


def text_of(ex, idx: int) -> str:
    return ex.span_text(ex.long_answer_candidates[idx])


def test_shipped_toy_dev_is_still_what_the_builder_makes():
    from nqkit.data.toy import build_toy_lines

    assert TOY_PATH.read_text(encoding="utf-8") == "\n".join(build_toy_lines()) + "\n"


def test_shipped_toy_train_is_what_the_builder_makes():
    assert TOY_TRAIN_PATH.read_text(encoding="utf-8") == "\n".join(build_toy_train_lines()) + "\n"


def test_toy_train_is_simplified_with_one_annotation_each(train):
    assert all(isinstance(ex, SimplifiedNqExample) for ex in train)
    assert all(len(ex.annotations) == 1 for ex in train)
    # the revision-2 Google page has the founding paragraph at another candidate index
    rev2 = next(ex for ex in train if ex.example_id == 202)
    assert "oldid=2" in rev2.document_url
    assert rev2.annotations[0].candidate_index == 2
    assert text_of(rev2, 2).startswith("Google was founded")


def test_simplify_example_keeps_tokens_and_drops_bytes():
    d = build_example(TOY_TRAIN_EXAMPLES[0])
    s = simplify_example(d)
    assert s["document_text"].split(" ") == [t["token"] for t in d["document_tokens"]]
    assert "start_byte" not in s["long_answer_candidates"][0]
    ex = simplified_from_json(s)
    assert ex.span_text(ex.annotations[0].long_answer).startswith("Google was founded in 1998")


def test_registry_lists_all_baselines():
    assert set(baseline_names()) >= {"first_paragraph", "most_frequent", "closest_question",
                                     "bm25_candidates", "dense_candidates"}


@pytest.mark.parametrize(("title", "norm"), [
    ("Trade_winds", "trade winds"), ("Trade%20winds", "trade winds"),
    ("Tangled:_The_Series", "tangled: the series"), ("  Moon ", "moon"),
    ("AT&amp;T", "at&t"),
])
def test_normalize_title(title, norm):
    assert normalize_title(title) == norm


def test_page_keys_ignore_the_revision(dev, train):
    dev_google = page_keys(dev[101])
    rev2 = page_keys(next(ex for ex in train if ex.example_id == 202))
    assert dev_google == rev2 == [
        "url:https://en.wikipedia.org//w/index.php?title=Google", "title:google"]


# ---------------------------------------------------------------- first paragraph

def test_first_paragraph_is_the_first_p(dev):
    b = get_baseline("first_paragraph")
    for ex in dev.values():
        idx = chosen(ex, b.predict(ex))
        assert ex.candidate_type(idx) == "paragraph"
        assert all(ex.candidate_type(i) != "paragraph" for i in range(idx))


# ---------------------------------------------------------------- most frequent

def test_most_frequent_rule(dev, train):
    b = get_baseline("most_frequent")
    b.fit(train)
    got = {i: b.predict(ex) for i, ex in dev.items()}
    # Google: "Google was founded" 2 votes (one on another revision) > LLC 1 = Search 1
    for i in (101, 102, 103, 104):
        assert text_of(dev[i], chosen(dev[i], got[i])).startswith("Google was founded")
        assert got[i].long_answer_score == 2.0
    # Capitals: Italy row 2 votes > Germany row 1
    assert text_of(dev[105], chosen(dev[105], got[105])) == "Italy Rome"
    assert got[105].long_answer_score == 2.0
    # Nobel: 1-1 tie -> the earlier candidate of the evaluation page (the first paragraph)
    assert chosen(dev[106], got[106]) == 0 and got[106].long_answer_score == 1.0
    # Moon: unseen page -> NULL
    assert got[107].long_answer.is_null
    # original input -> byte and token offsets both given
    assert got[101].long_answer.has_bytes and got[101].long_answer.has_tokens
    assert got[101].short_answers == () and got[101].yes_no_answer == "NONE"


def test_most_frequent_predicts_on_simplified_input(dev, train):
    b = get_baseline("most_frequent")
    b.fit(train)
    simple = simplified_from_json(simplify_example(build_example(TOY_TRAIN_EXAMPLES[0])))
    pred = b.predict(simple)
    assert not pred.long_answer.has_bytes
    assert simple.span_text(pred.long_answer).startswith("Google was founded")


def test_most_frequent_matches_by_title_when_urls_differ(dev, train):
    b = get_baseline("most_frequent")
    b.fit(train)
    moved = replace(dev[105], document_url="https://example.org/some-mirror/42")
    assert text_of(moved, chosen(moved, b.predict(moved))) == "Italy Rome"
    renamed = replace(dev[107], document_title="Capitals of Europe")
    # matched by title, but the Italy row is not on the Moon page: NULL
    assert b.predict(renamed).long_answer.is_null


def test_most_frequent_null_only_page_gives_null(train):
    b = get_baseline("most_frequent")
    only_null = [ex for ex in train if ex.example_id == 205]  # the NULL Google annotation
    b.fit(only_null)
    dev101 = next(ex for ex in read_nq(TOY_PATH) if ex.example_id == 101)
    assert b.predict(dev101).long_answer.is_null


# ---------------------------------------------------------------- closest question

def idf(df: int, n: int = 10) -> float:
    """The smooth idf of the docs, by hand: ln((1+N)/(1+df)) + 1."""
    return math.log((1 + n) / (1 + df)) + 1


def test_question_words():
    assert question_words("Who founded Google?") == {"who", "founded", "google"}
    assert question_words("did larry page co-found google") == {
        "did", "larry", "page", "co", "found", "google"}


# Document frequencies over the 10 toy training questions, counted by hand:
# google 5, who 3 (201, 205, 209), was 1, founded 1, what 5 (202, 203, 204, 206, 207),
# does 1, is 6 (203, 205, 206, 207, 208, 210), the 7, capital 3, of 5 (201, 205-208).
CLOSEST = {
    # dev id: (training question copied, overlap, the copied long answer's first words)
    101: (202, idf(5) + idf(1), "Google was founded"),  # google + founded beats who + google
    102: (202, idf(5) + idf(1) + idf(1), "Google was founded"),  # was, google, founded
    103: (201, idf(5), "Google was founded"),  # only "google" shared: tie -> first (201)
    104: (204, idf(5) + idf(5) + idf(1), "Google Search"),  # what, google, does
    105: (206, idf(5) + idf(6) + idf(7) + idf(3) + idf(5), "Germany Berlin"),  # tie 206/207
}


@pytest.mark.parametrize("dev_id", sorted(CLOSEST))
def test_closest_question_rule(dev, train, dev_id):
    b = get_baseline("closest_question")
    b.fit(train)
    pred = b.predict(dev[dev_id])
    _, overlap, words = CLOSEST[dev_id]
    assert pred.long_answer_score == pytest.approx(overlap, abs=1e-12)
    assert text_of(dev[dev_id], chosen(dev[dev_id], pred)).startswith(words)


def test_closest_question_nobel_and_unseen(dev, train):
    b = get_baseline("closest_question")
    b.fit(train)
    # "who got the first nobel prize in physics" vs 209 "who won the nobel prize in physics
    # in 1901": who, the, nobel, prize, in, physics; vs 210: the, nobel, prize, in, physics
    pred = b.predict(dev[106])
    expected = idf(3) + idf(7) + 4 * idf(2)  # nobel, prize, in, physics: df 2 each
    assert pred.long_answer_score == pytest.approx(expected, abs=1e-12)
    assert text_of(dev[106], chosen(dev[106], pred)).startswith("The first prize")
    assert b.predict(dev[107]).long_answer.is_null  # the Moon page is unseen


def test_closest_question_copies_null(dev, train):
    b = get_baseline("closest_question")
    b.fit(train)
    q = replace(dev[101], question_text="who is the ceo of google")  # exactly 205, a NULL
    assert b.predict(q).long_answer.is_null


def test_baselines_that_need_training_say_so(dev):
    from nqkit.baselines.predict_files import load_system

    with pytest.raises(InputError, match="the most_frequent baseline learns from training "
                       "data, but no training files were given"):
        load_system("most_frequent", None)
    with pytest.raises(InputError, match="unknown baseline 'nope'"):
        get_baseline("nope")


def test_transfer_by_text_across_revisions_and_by_index_within_one(dev, train):
    from nqkit.baselines.pages import copied_answer, transfer

    rev2 = next(ex for ex in train if ex.example_id == 202)
    ans = copied_answer(rev2)
    assert ans is not None and ans.candidate_index == 2
    assert transfer(ans, dev[101]) == 1  # found by its words, not its index
    # not on the page and another revision: nothing
    assert transfer(ans, dev[107]) == -1
    # not on the page but the very same revision (same URL): the index is trusted, if the
    # page has that many candidates (the Capitals page has 6, the Moon page 2)
    assert transfer(ans, replace(dev[105], document_url=rev2.document_url)) == 2
    assert transfer(ans, replace(dev[107], document_url=rev2.document_url)) == -1
