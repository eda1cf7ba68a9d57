"""Confidence intervals and paired significance tests (nqkit.stats), values derived by hand."""

from __future__ import annotations

import numpy as np
import pytest

from nqkit.errors import InputError
from nqkit.stats import (
    MAX_RESAMPLES,
    MIN_DIFFERING_ITEMS,
    ItemStats,
    adjust_p_values,
    approximate_randomization,
    bonferroni,
    bootstrap_interval,
    holm,
    interval_warnings,
    min_resamples,
    paired_bootstrap,
    paired_warnings,
    significance_level,
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
    # the smallest exact p-value over 3 differing items is that same 2/8; exact, no bound
    assert (t.floor, t.p_bound, t.items, t.differing) == (0.25, False, 4, 3)


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
    # every resample differs by exactly 1: none on the far side of 0, p = 2 * 1 / 1000,
    # the floor of the test, which is a bound
    assert (t.difference, t.low, t.high) == (1.0, 1.0, 1.0)
    assert (t.p_value, t.floor, t.p_bound) == (2 / 1000, 2 / 1000, True)
    r = approximate_randomization(a, b, trials=999)
    # a random swap of 50 items keeps |mean difference| = 1 only for all-or-none swaps
    # (probability 2**-49): in practice c = 0
    assert (r.p_value, r.floor, r.p_bound) == (1 / 1000, 1 / 1000, True)


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


def _draws(n_items, resamples, seed):
    # the bootstrap's draws, made again: one block of resamples x items indices
    return np.random.default_rng(seed).integers(0, n_items, size=(resamples, n_items))


@pytest.mark.parametrize(("resamples", "k"), [(999, 23), (1000, 24), (100, 1), (40, 0)])
def test_paired_bootstrap_by_its_definition(resamples, k):
    # k by hand: the largest far-side count with 2 (k + 1) / (R + 1) < 0.05, e.g. R = 999:
    # k + 1 < 25; R = 1000: k + 1 < 25.025; R = 100: k + 1 < 2.525; R = 40: k + 1 < 1.025
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 2, size=25).astype(float), rng.integers(0, 2, size=25).astype(float)
    t = paired_bootstrap(a, b, resamples=resamples, seed=9)
    idx = _draws(25, resamples, 9)
    diffs = np.sort(b[idx].mean(axis=1) - a[idx].mean(axis=1))
    diffs[np.abs(diffs) < 1e-12] = 0.0
    far = min(np.count_nonzero(diffs <= 0), np.count_nonzero(diffs >= 0))
    assert t.p_value == pytest.approx(min(1.0, 2 * (far + 1) / (resamples + 1)), abs=1e-15)
    assert (t.low, t.high) == (diffs[k], diffs[resamples - 1 - k])
    assert (t.items, t.differing) == (25, int(np.count_nonzero(a != b)))


def test_paired_bootstrap_one_deciding_item():
    # B is right on one item of ten, A on none: a resample favours B exactly when it draws
    # that item, and ties otherwise, with probability (9/10)**10 = 0.3487. So p is about
    # 2 * 0.3487 = 0.697 and the interval, whose lower end sits among the ties, holds 0.
    a, b = np.zeros(10), np.eye(10)[4]
    t = paired_bootstrap(a, b, resamples=20000, seed=2)
    assert t.p_value == pytest.approx(2 * 0.9**10, abs=0.03)
    assert t.low == 0.0 < t.high and not t.p_bound
    # the centred p-value this replaced gave 1 / (R + 1) here: nothing contradicts now
    assert t.p_value >= significance_level(0.95)


def test_paired_bootstrap_needs_enough_resamples_for_an_interval():
    # 2 / (R + 1) < 0.05 needs R >= 40; at 99%, 2 / (R + 1) < 0.01 needs R >= 200
    assert (min_resamples(0.95), min_resamples(0.99), min_resamples(0.9)) == (40, 200, 20)
    with pytest.raises(InputError, match="at least 40 resamples, not 39"):
        paired_bootstrap([1, 0], [0, 1], resamples=39)
    assert paired_bootstrap([1, 0], [0, 1], resamples=40).p_value == 1.0


def test_warnings_when_the_items_cannot_support_a_test():
    ties = paired_bootstrap([1, 0, 1], [1, 0, 1], resamples=100)
    few = paired_bootstrap([1, 0, 1, 1], [0, 0, 1, 0], resamples=100)
    assert (ties.differing, few.differing) == (0, 2)
    (w,) = paired_warnings({"em": ties})
    assert w.code == "all-ties" and "every one of the 3 items for em" in w.message
    w1, w2 = paired_warnings({"em": ties, "f1": few, "f1b": few})
    assert (w1.code, w2.code) == ("all-ties", "few-items")
    assert w2.message.startswith("2 of 4 items differ between A and B for f1, f1b, fewer "
                                 "than the 30 a paired test needs")
    # different counts are listed one by one
    other = paired_bootstrap([1, 0, 1, 1], [0, 1, 1, 0], resamples=100)
    (w,) = paired_warnings({"f1": few, "em": other})
    assert "2 of 4 for f1, 3 of 4 for em" in w.message
    # 30 differing items are enough, whatever the rest
    a = np.r_[np.zeros(MIN_DIFFERING_ITEMS), np.ones(100)]
    b = np.r_[np.ones(MIN_DIFFERING_ITEMS), np.ones(100)]
    enough = approximate_randomization(a, b, trials=100)
    assert enough.differing == MIN_DIFFERING_ITEMS and paired_warnings({"em": enough}) == []
    short = approximate_randomization(a[1:], b[1:], trials=100)
    assert [w.code for w in paired_warnings({"em": short})] == ["few-items"]


def test_interval_warning_below_thirty_items():
    assert interval_warnings({"em": bootstrap_interval(np.ones(30), resamples=50)}) == []
    (w,) = interval_warnings({"em": bootstrap_interval(np.ones(29), resamples=50)})
    assert w.code == "few-items" and "of em from only 29 items" in w.message


# ---------------------------------------------------------------- multiple testing
# The four p-values of the worked example of the Holm-Bonferroni method (H1..H4 with
# p = 0.01, 0.04, 0.03, 0.005; at alpha = 0.05 Holm rejects H4 and H1 only). By hand:
# sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 give 0.02, 0.03, 0.06, 0.04; the running
# maximum makes the last 0.06.
TEXTBOOK = [0.01, 0.04, 0.03, 0.005]


def test_holm_textbook():
    assert holm(TEXTBOOK) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert [p < 0.05 for p in holm(TEXTBOOK)] == [True, False, False, True]


def test_bonferroni_textbook():
    # 4 * p, capped at 1: only H4 (0.02) is rejected at 0.05
    assert bonferroni(TEXTBOOK) == pytest.approx([0.04, 0.16, 0.12, 0.02], abs=1e-15)
    assert bonferroni([0.3, 0.5, 0.01]) == pytest.approx([0.9, 1.0, 0.03], abs=1e-15)


def test_holm_caps_ties_and_single():
    # 3 * 0.4 = 1.2 is capped at 1; the running maximum carries the cap to the rest
    assert holm([0.4, 0.5, 0.9]) == [1.0, 1.0, 1.0]
    # tied p-values get equal adjusted values (2 * 0.02 for both, not 0.04 and 0.02)
    assert holm([0.02, 0.02]) == pytest.approx([0.04, 0.04], abs=1e-15)
    # one comparison: nothing to correct
    assert holm([0.037]) == bonferroni([0.037]) == [0.037]


def test_adjusted_bounds():
    floor = 2 / 1001  # the paired bootstrap's floor at 1,000 resamples
    # three bounds: each adjusted value is 3 * floor, and still a bound
    assert adjust_p_values([floor] * 3, [True] * 3, "holm") == [(3 * floor, True)] * 3
    assert adjust_p_values([floor] * 3, [True] * 3, "bonferroni") == [(3 * floor, True)] * 3
    # a bound ahead of exact p-values: Holm's value for 0.04 is max(3 * 0.001, 2 * 0.04)
    # = 0.08 whatever the bounded p-value is below 0.001 — exact; Bonferroni's 3 * p too
    got = adjust_p_values([0.001, 0.04, 0.3], [True, False, False], "holm")
    assert got == [(0.003, True), (pytest.approx(0.08, abs=1e-15), False),
                   (pytest.approx(0.3, abs=1e-15), False)]
    got = adjust_p_values([0.001, 0.04, 0.3], [True, False, False], "bonferroni")
    assert got == [(0.003, True), (pytest.approx(0.12, abs=1e-15), False),
                   (pytest.approx(0.9, abs=1e-15), False)]
    # Holm's value for the exact 0.021 is max(2 * 0.02, 1 * 0.021) = 0.04, which comes
    # from the bounded 0.02: the true value is anywhere in [0.021, 0.04] — a bound
    got = adjust_p_values([0.02, 0.021], [True, False], "holm")
    assert got == [(0.04, True), (0.04, True)]
    # a bound above an exact p-value: if the true value of the bounded one is below 0.01,
    # the exact 0.01 is sorted second and adjusted to 0.01, not 2 * 0.01 — a bound
    assert adjust_p_values([0.05, 0.01], [True, False], "holm") == [(0.05, True),
                                                                     (0.02, True)]
    # capped at 1 from a bound: still a bound (the true value may be far below 1)
    assert adjust_p_values([0.5, 0.9, 0.9], [True, False, False], "bonferroni")[0] == (1.0,
                                                                                     True)
    # no correction: the p-values and their bounds as given
    assert adjust_p_values([0.01, 0.2], [True, False], "none") == [(0.01, True), (0.2, False)]
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_p_values([0.1], [False], "sidak")
