"""The Bayes-optimal NULL decision (NQ paper §5.1, footnote 11), checked independently."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nqkit.analysis.nq_bayes import (
    answer_margin,
    bayes_prediction,
    null_threshold,
    prob_answer_correct,
    prob_null_correct,
    should_answer,
)
from nqkit.errors import InputError
from nqkit.formats.nq import NULL_SPAN, Span


def brute_force(gamma: float, gamma_null: float, n: int, beta: int) -> tuple[float, float]:
    """P(l* right), P(NULL right) by enumerating all 3^n annotation vectors of h_beta."""
    rest = 1 - gamma - gamma_null
    p_ans = p_null = 0.0
    for labels in itertools.product(("best", "other", "null"), repeat=n):
        p = 1.0
        for lab in labels:
            p *= {"best": gamma, "other": rest, "null": gamma_null}[lab]
        g = sum(lab != "null" for lab in labels)
        if g >= beta and "best" in labels:
            p_ans += p
        if g < beta:
            p_null += p
    return p_ans, p_null


def test_alpha_for_beta_2_of_5_matches_the_paper():
    assert round(null_threshold(2, 5), 5) == 0.31381


def test_alpha_solves_the_footnote_polynomial_independently():
    # alpha_bar^5 + 5 alpha_bar^4 (1 - alpha_bar) = 0.5  <=>  -4x^5 + 5x^4 - 0.5 = 0
    roots = np.roots([-4, 5, 0, 0, 0, -0.5])
    (x,) = [r.real for r in roots if abs(r.imag) < 1e-12 and 0 < r.real < 1]
    assert null_threshold(2, 5) == pytest.approx(1 - x, abs=1e-10)


@pytest.mark.parametrize(("beta", "n"), [(1, 5), (3, 5), (2, 3), (2, 4)])
def test_alpha_is_where_both_choices_tie(beta, n):
    alpha = null_threshold(beta, n)
    p_ans, p_null = brute_force(alpha, 1 - alpha, n, beta)
    assert p_ans == pytest.approx(0.5, abs=1e-9) and p_null == pytest.approx(0.5, abs=1e-9)


def test_beta_1_has_a_closed_form():
    # beta=1: NULL right iff all n are NULL: gamma_null^n = 1/2
    assert null_threshold(1, 5) == pytest.approx(1 - 0.5 ** (1 / 5), abs=1e-10)


@pytest.mark.parametrize(("gamma", "gamma_null", "n", "beta"), [
    (0.3, 0.7, 5, 2), (0.2, 0.5, 5, 2), (0.1, 0.1, 5, 2), (0.5, 0.0, 5, 3),
    (0.25, 0.6, 4, 2), (0.4, 0.3, 6, 3), (0.0, 0.9, 5, 2),
])
def test_probabilities_equal_brute_force(gamma, gamma_null, n, beta):
    p_ans, p_null = brute_force(gamma, gamma_null, n, beta)
    assert prob_answer_correct(gamma, gamma_null, n, beta) == pytest.approx(p_ans, abs=1e-12)
    assert prob_null_correct(gamma_null, n, beta) == pytest.approx(p_null, abs=1e-12)
    assert answer_margin(gamma, gamma_null, n, beta) == pytest.approx(p_ans - p_null)
    assert should_answer(gamma, gamma_null, n, beta) == (p_ans >= p_null)


def test_the_decision_flips_at_alpha():
    alpha = null_threshold()
    assert should_answer(alpha + 1e-6, 1 - alpha - 1e-6)
    assert not should_answer(alpha - 1e-6, 1 - alpha + 1e-6)
    # mass on other answers makes answering l* less attractive than gamma alone suggests:
    # gamma=0.35 with gamma_null=0.3: P(l* right) vs P(NULL right) by enumeration
    p_ans, p_null = brute_force(0.35, 0.3, 5, 2)
    assert should_answer(0.35, 0.3) == (p_ans >= p_null)


def test_bayes_prediction():
    span = Span(10, 20, 1, 3)
    yes = bayes_prediction(7, span, 0.6, 0.4)
    assert yes.long_answer == span and yes.long_answer_score > 0
    no = bayes_prediction(7, span, 0.2, 0.8)
    assert no.long_answer == NULL_SPAN and no.long_answer_score < 0
    assert no.long_answer_score == pytest.approx(answer_margin(0.2, 0.8))


def test_bayes_prediction_answers_at_the_tolerance_boundary():
    # n = 1, beta = 1: P(l* right) = gamma = 0 and P(NULL right) = gamma_null = 1e-9, both
    # exact in floating point, so the margin is exactly -1e-9: a tie within the 1e-9
    # tolerance, where the rule (P(l* right) >= P(NULL right)) answers.
    span = Span(10, 20, 1, 3)
    assert answer_margin(0.0, 1e-9, n=1, beta=1) == -1e-9
    assert should_answer(0.0, 1e-9, n=1, beta=1)
    p = bayes_prediction(7, span, 0.0, 1e-9, n=1, beta=1)
    assert (p.long_answer, p.long_answer_score) == (span, -1e-9)
    # just past it, NULL
    assert bayes_prediction(7, span, 0.0, 2e-9, n=1, beta=1).long_answer == NULL_SPAN


@pytest.mark.parametrize(("args", "message"), [
    ((0.7, 0.6), "probabilities out of range: p(best)=0.7, p(NULL)=0.6"),
    ((-0.1, 0.5), "probabilities out of range"),
])
def test_bad_probabilities(args, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        should_answer(*args)


def test_bad_beta():
    with pytest.raises(InputError, match="need 1 <= beta <= n annotators, got beta=6, n=5"):
        null_threshold(6, 5)


def test_paper_defaults_and_range_boundaries():
    # the official setting is beta = 2 of n = 5
    assert prob_null_correct(0.3) == prob_null_correct(0.3, 5, 2)
    assert prob_answer_correct(0.4, 0.3) == prob_answer_correct(0.4, 0.3, 5, 2)
    # boundaries are allowed: beta = n, beta = 1, probabilities summing to exactly 1
    p_ans, p_null = brute_force(0.6, 0.4, 3, 3)
    assert prob_answer_correct(0.6, 0.4, 3, 3) == pytest.approx(p_ans, abs=1e-12)
    assert prob_null_correct(0.4, 3, 3) == pytest.approx(p_null, abs=1e-12)
    assert prob_null_correct(0.4, 1, 1) == pytest.approx(0.4)  # NULL right iff it is NULL
    assert prob_answer_correct(1.0, 0.0, 5, 2) == pytest.approx(1.0)
    assert prob_null_correct(1.0, 5, 2) == pytest.approx(1.0)
    for bad in [(0.5, 0.3, 5, 6), (0.5, 0.3, 5, 0), (0.5, 0.3, 0, 1), (0.8, 0.3, 5, 2),
                (-0.1, 0.3, 5, 2)]:
        with pytest.raises(InputError):
            prob_answer_correct(*bad)
