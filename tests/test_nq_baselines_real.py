"""The baselines on the real NQ samples (read in place from the shared data)."""

from __future__ import annotations

from collections import Counter

import pytest

from nqkit.baselines import get_baseline
from nqkit.baselines.pages import page_keys
from nqkit.formats.nq import read_nq

from conftest import require, shared_file


@pytest.fixture(scope="module")
def dev():
    return list(read_nq(shared_file("data", "nq", "nq-dev-sample10.jsonl.gz")))


@pytest.fixture(scope="module")
def dev_simplified():
    return list(read_nq(shared_file("data", "nq", "simplified-nq-dev-sample10.jsonl")))


@pytest.fixture(scope="module")
def train():
    return list(read_nq(shared_file("data", "nq", "simplified-nq-train-sample10.jsonl")))


def test_train_sample_shares_no_page_with_dev_sample(dev, train):
    # why most_frequent and closest_question answer NULL everywhere on the tiny samples
    dev_keys = {k for ex in dev for k in page_keys(ex)}
    assert not dev_keys & {k for ex in train for k in page_keys(ex)}
    for name in ("most_frequent", "closest_question"):
        b = get_baseline(name)
        b.fit(train)
        assert all(b.predict(ex).long_answer.is_null for ex in dev)


def test_most_frequent_carries_answers_across_formats(dev, dev_simplified):
    # Trained on the simplified copy of the same pages (5 annotations each), predicting the
    # original format: each page's most common non-null candidate (ties: the earlier one),
    # found again by its text, with byte offsets of the original page.
    b = get_baseline("most_frequent")
    b.fit(dev_simplified)
    for ex in dev:
        counts = Counter(a.candidate_index for a in ex.annotations if a.has_long)
        pred = b.predict(ex)
        if not counts:
            assert pred.long_answer.is_null
            continue
        top = max(counts.values())
        want = min(i for i, c in counts.items() if c == top)
        assert pred.long_answer == ex.long_answer_candidates[want].span
        assert pred.long_answer_score == top


def test_closest_question_finds_itself(dev, dev_simplified):
    # Each dev question is in the training set (simplified copy): the closest question on
    # its page is itself, so the copied answer is its own (>=2-of-5) answer.
    b = get_baseline("closest_question")
    b.fit(dev_simplified)
    for ex in dev:
        counts = Counter(a.candidate_index for a in ex.annotations if a.has_long)
        pred = b.predict(ex)
        if sum(counts.values()) < 2:
            assert pred.long_answer.is_null
        else:
            top = max(counts.values())
            first = next(a.candidate_index for a in ex.annotations
                         if a.has_long and counts[a.candidate_index] == top)
            assert pred.long_answer == ex.long_answer_candidates[first].span


def test_bm25_is_the_same_on_original_and_simplified_input(dev, dev_simplified):
    require("bm25s")
    b = get_baseline("bm25_candidates")
    for ex, sx in zip(dev, dev_simplified, strict=True):
        p, q = b.predict(ex), b.predict(sx)
        assert p.long_answer.has_bytes and not q.long_answer.has_bytes
        assert (p.long_answer.start_token, p.long_answer.end_token) == \
               (q.long_answer.start_token, q.long_answer.end_token)
        assert p.long_answer_score == pytest.approx(q.long_answer_score)
        idx = [c.span for c in ex.long_answer_candidates].index(p.long_answer)
        assert ex.long_answer_candidates[idx].top_level
