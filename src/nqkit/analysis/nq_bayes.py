"""The Bayes-optimal NULL decision for the NQ long-answer measure (NQ paper §5.1, fn. 11).

The measure ``h_beta(a, l)`` judges a prediction ``l`` against ``n`` annotations ``a``:
a non-null ``l`` is right when at least ``beta`` annotators gave a non-null answer and one
of them gave ``l``; NULL is right when fewer than ``beta`` gave a non-null answer. If the
annotations are drawn IID from ``p(l | q, d)`` and a model knows

* ``gamma``      = p(l*), the probability of its best non-null answer l*, and
* ``gamma_null`` = p(NULL),

the expected score of each choice is (``r = 1 - gamma - gamma_null`` is the mass of the
other non-null answers; ``g`` counts non-null annotations):

* P(NULL right) = P(g < beta) = sum_{j < beta} C(n, j) (1 - gamma_null)^j gamma_null^(n-j)
* P(l* right)   = P(l* among a and g >= beta)
                = sum over i >= 1 copies of l*, j copies of other answers, i + j >= beta,
                  of n! / (i! j! (n-i-j)!) gamma^i r^j gamma_null^(n-i-j)

and the Bayes-optimal rule answers l* when P(l* right) >= P(NULL right). When the model
puts all non-null mass on l* (``gamma + gamma_null = 1``), l* is in ``a`` whenever
``g >= 1``, so P(l* right) = 1 - P(NULL right) and the rule becomes "answer when
P(NULL right) <= 1/2", i.e. ``gamma >= alpha`` with ``alpha = 1 - alpha_bar`` and
``P_null(alpha_bar) = 1/2``. For ``beta = 2, n = 5``:
``alpha_bar^5 + 5 alpha_bar^4 (1 - alpha_bar) = 0.5`` gives ``alpha ~= 0.31381``.
"""

from __future__ import annotations

from math import comb, factorial

from nqkit.errors import InputError
from nqkit.formats.nq import NULL_SPAN, Span
from nqkit.formats.nq_predictions import NqPrediction

_EPS = 1e-9


def _check(n: int, beta: int) -> None:
    if n < 1 or not 1 <= beta <= n:
        raise InputError(None, f"need 1 <= beta <= n annotators, got beta={beta}, n={n}",
                         "the official setting is beta=2 of n=5")


def _check_probs(gamma: float, gamma_null: float) -> None:
    if not (0.0 <= gamma <= 1.0 and 0.0 <= gamma_null <= 1.0) or gamma + gamma_null > 1 + _EPS:
        raise InputError(None, f"probabilities out of range: p(best)={gamma}, "
                         f"p(NULL)={gamma_null}",
                         "give probabilities in [0, 1] whose sum is at most 1")


def prob_null_correct(gamma_null: float, n: int = 5, beta: int = 2) -> float:
    """P(h_beta(a, NULL) = 1): fewer than ``beta`` of ``n`` IID annotations are non-null."""
    _check(n, beta)
    _check_probs(0.0, gamma_null)
    p = 1.0 - gamma_null
    return sum(comb(n, j) * p**j * gamma_null ** (n - j) for j in range(beta))


def prob_answer_correct(gamma: float, gamma_null: float, n: int = 5, beta: int = 2) -> float:
    """P(h_beta(a, l*) = 1): at least ``beta`` non-null annotations, l* among them."""
    _check(n, beta)
    _check_probs(gamma, gamma_null)
    rest = max(0.0, 1.0 - gamma - gamma_null)
    total = 0.0
    for i in range(1, n + 1):
        for j in range(0, n - i + 1):
            if i + j < beta:
                continue
            k = n - i - j
            coef = factorial(n) // (factorial(i) * factorial(j) * factorial(k))
            total += coef * gamma**i * rest**j * gamma_null**k
    return total


def null_threshold(beta: int = 2, n: int = 5, tol: float = 1e-12) -> float:
    """alpha: with all non-null mass on one answer, answering is optimal iff p >= alpha.

    Solves ``P_null(alpha_bar) = 1/2`` by bisection (``P_null`` increases with
    ``alpha_bar``) and returns ``1 - alpha_bar``; about 0.31381 for beta=2, n=5.
    """
    _check(n, beta)
    lo, hi = 0.0, 1.0  # P_null(0) = 0 < 1/2 <= 1 = P_null(1)
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if prob_null_correct(mid, n, beta) < 0.5:
            lo = mid
        else:
            hi = mid
    return 1.0 - (lo + hi) / 2


def answer_margin(gamma: float, gamma_null: float, n: int = 5, beta: int = 2) -> float:
    """P(l* right) - P(NULL right): the expected gain of answering over NULL."""
    return prob_answer_correct(gamma, gamma_null, n, beta) - prob_null_correct(gamma_null, n, beta)


def should_answer(gamma: float, gamma_null: float, n: int = 5, beta: int = 2) -> bool:
    """The Bayes-optimal decision of footnote 11: answer l* iff P(l* right) >= P(NULL right)."""
    return answer_margin(gamma, gamma_null, n, beta) >= -_EPS


def bayes_prediction(example_id: int | str, best_span: Span, p_best: float, p_null: float,
                     *, n: int = 5, beta: int = 2) -> NqPrediction:
    """Turn model probabilities into a prediction by the Bayes-optimal rule.

    ``best_span`` is the model's best non-null long answer, ``p_best`` its probability and
    ``p_null`` the probability of NULL. The prediction is ``best_span`` when answering is
    optimal, else NULL; its long-answer score is :func:`answer_margin`, so scores are
    comparable across examples and the rule is the threshold 0 on them.
    """
    margin = answer_margin(p_best, p_null, n, beta)
    span = best_span if margin >= -_EPS and not best_span.is_null else NULL_SPAN
    return NqPrediction(example_id, span, margin, (), 0.0, "NONE")
