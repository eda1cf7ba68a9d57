"""Confidence intervals and paired significance tests (nqkit.stats), values derived by hand."""

from __future__ import annotations

import numpy as np
import pytest

from nqkit.errors import InputError
from nqkit.stats import (
    MAX_RESAMPLES,
    ItemStats,
    approximate_randomization,
    bootstrap_interval,
    paired_bootstrap,
)


def f1(sums):
    # rows are [correct, predicted, gold]; F1 = 2c / (p + g)
    return 2 * sums[..., 0] / (sums[..., 1] + sums[..., 2])


def test_exact_randomization_by_hand():
    # Items 1-3 favour A by one point each, item 4 is a tie (never swapped). Of the
    # 2**3 swaps of items 1-3, only "none" and "all" keep |difference| = 3/4: p = 2/8.
    t = approximate_randomization([1, 1, 1, 0], [0, 0, 0, 0], exact=True)
    assert (t.score_a, t.score_b, t.difference) == (0.75, 0.0, -0.75)
    assert t.p_value == 0.25
    assert t.resamples == 8 and t.exact


def test_exact_randomization_unequal_gaps():
    # Per-item differences b - a: +1, +1, -1 (observed |sum| = 1). Every swap pattern
    # gives a sum of three +-1 terms, so |sum| is 1 or 3, never below 1: p = 1.
    assert approximate_randomization([0, 0, 1], [1, 1, 0], exact=True).p_value == 1.0
    # +1, +1, +1, -1: observed |sum| = 2; patterns with |sum| >= 2 are those with 0 or 4
    # minus signs (|4|) or 1 or 3 minus signs (|2|): 2 + 4 + 4 = 10 of 16.
    assert approximate_randomization([0, 0, 0, 1], [1, 1, 1, 0], exact=True).p_value == 10 / 16


def test_identical_systems_are_never_significant():
    a = [1, 0, 1, 1, 0]
    assert approximate_randomization(a, a, exact=True).p_value == 1.0
    assert approximate_randomization(a, a, trials=200).p_value == 1.0
    t = paired_bootstrap(a, a, resamples=200)
    assert (t.difference, t.low, t.high, t.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_a_system_better_on_every_item():
    a, b = np.zeros(50), np.ones(50)
    t = paired_bootstrap(a, b, resamples=999)
    # every resample differs by exactly 1, so no centred difference reaches 1
    assert (t.difference, t.low, t.high) == (1.0, 1.0, 1.0)
    assert t.p_value == 1 / 1000
    r = approximate_randomization(a, b, trials=999)
    # a random swap of 50 items keeps |mean difference| = 1 only for all-or-none swaps
    # (probability 2**-49): in practice c = 0
    assert r.p_value == 1 / 1000


def test_bootstrap_interval_two_items():
    # The mean of two draws from {0, 1} is 0, 1/2 or 1 with probability 1/4, 1/2, 1/4:
    # the 2.5th percentile is 0 and the 97.5th is 1.
    iv = bootstrap_interval([0.0, 1.0], resamples=4000, seed=3)
    assert (iv.score, iv.low, iv.high) == (0.5, 0.0, 1.0)
    const = bootstrap_interval([1, 1, 1], resamples=100)
    assert (const.low, const.high) == (1.0, 1.0)


def test_sufficient_statistics_f1():
    # correct, predicted, gold per example; F1 on all = 2*3/(4+5) = 2/3
    stats = [[1, 1, 1], [1, 1, 1], [1, 2, 1], [0, 0, 2]]
    iv = bootstrap_interval(ItemStats(np.array(stats, dtype=float), f1), resamples=500)
    assert iv.score == pytest.approx(2 / 3)
    assert 0.0 <= iv.low <= iv.score <= iv.high <= 1.0


def test_resampled_sums_equal_direct_gathering():
    # The bincount shortcut must give exactly what gathering the drawn rows gives.
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 2, size=37).astype(float)
    iv = bootstrap_interval(scores, resamples=300, seed=11)
    draws = np.random.default_rng(11).integers(0, 37, size=(300, 37))
    means = scores[draws].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    assert (iv.low, iv.high) == (low, high)


def test_bounds_and_shapes_are_checked():
    with pytest.raises(InputError, match="resamples"):
        bootstrap_interval([1, 0], resamples=0)
    with pytest.raises(InputError, match="resamples"):
        paired_bootstrap([1, 0], [0, 1], resamples=MAX_RESAMPLES + 1)
    with pytest.raises(InputError, match="different items"):
        paired_bootstrap([1, 0], [0, 1, 1])
    with pytest.raises(InputError, match="no items"):
        bootstrap_interval([])
    with pytest.raises(InputError, match="2\\*\\*21"):
        approximate_randomization(np.zeros(21), np.ones(21), exact=True)


def test_same_seed_same_result_and_other_seed_differs():
    rng = np.random.default_rng(0)
    a, b = rng.random(200), rng.random(200)
    t1 = paired_bootstrap(a, b, resamples=300, seed=5)
    assert t1 == paired_bootstrap(a, b, resamples=300, seed=5)
    assert t1 != paired_bootstrap(a, b, resamples=300, seed=6)


def test_non_decomposable_statistic():
    # The best item of each system: a statistic that no sum of rows gives.
    def best(stacks):
        return stacks[..., 0].max(axis=1)

    a = ItemStats(np.array([[0.0], [0.0], [1.0]]), best, decomposable=False)
    b = ItemStats(np.array([[0.0], [0.0], [0.0]]), best, decomposable=False)
    t = approximate_randomization(a, b, exact=True)
    # one differing item; swapping it or not leaves |max A - max B| = 1: p = 2/2
    assert (t.score_a, t.score_b, t.p_value, t.resamples) == (1.0, 0.0, 1.0, 2)
    # max of two draws from {0, 1} is 0 with probability 1/4: percentiles 0 and 1
    two = ItemStats(np.array([[0.0], [1.0]]), best, decomposable=False)
    iv = bootstrap_interval(two, resamples=2000, seed=1)
    assert (iv.score, iv.low, iv.high) == (1.0, 0.0, 1.0)
    # on every resample the two systems are scored on the same drawn items
    same = paired_bootstrap(two, two, resamples=100)
    assert (same.low, same.high, same.p_value) == (0.0, 0.0, 1.0)
