"""Property tests of nqkit.stats: the paired bootstrap's interval and p-value agree on
every input (the interval excludes 0 exactly when p < alpha), and p never goes below its
floor."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nqkit.stats import (
    ItemStats,
    bonferroni,
    holm,
    min_resamples,
    paired_bootstrap,
    significance_level,
)


def f1(sums):
    # rows are [correct, predicted, gold]; F1 = 2c / (p + g)
    return 2 * sums[..., 0] / (sums[..., 1] + sums[..., 2])


def _scores(draw_pairs):
    a, b = zip(*draw_pairs, strict=True)
    return np.array(a, dtype=float), np.array(b, dtype=float)


@settings(max_examples=300)
@given(pairs=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1,
                      max_size=40),
       resamples=st.integers(0, 400), seed=st.integers(0, 2**32 - 1),
       confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_interval_and_p_value_always_agree(pairs, resamples, seed, confidence):
    """For every input: the interval excludes 0 exactly when p < alpha = 1 - confidence,
    and p is never below its floor, reached only as a bound."""
    a, b = _scores(pairs)
    resamples += min_resamples(confidence)
    t = paired_bootstrap(a, b, resamples=resamples, seed=seed, confidence=confidence)
    alpha = significance_level(confidence)
    assert (t.low > 0 or t.high < 0) == (t.p_value < alpha)
    assert t.low <= t.high and t.floor <= t.p_value <= 1.0
    assert t.p_bound == (t.p_value == t.floor)


@settings(max_examples=150)
@given(rows=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(1, 2),
                               st.integers(0, 2), st.integers(0, 2)),
                     min_size=1, max_size=30),
       seed=st.integers(0, 2**32 - 1))
def test_interval_and_p_value_agree_for_f1(rows, seed):
    # [correct, predicted, gold] per item, the same gold for both systems: the resampled
    # differences of two F1s are ratios, so ties come from float noise as often as not
    arr = np.array(rows, dtype=float)
    a = ItemStats(np.stack([np.minimum(arr[:, 0], arr[:, 1]), arr[:, 1], arr[:, 2]], 1), f1)
    b = ItemStats(np.stack([np.minimum(arr[:, 3], arr[:, 4]), arr[:, 4], arr[:, 2]], 1), f1)
    t = paired_bootstrap(a, b, resamples=200, seed=seed)
    assert (t.low > 0 or t.high < 0) == (t.p_value < 0.05)


@settings(max_examples=300)
@given(p=st.lists(st.integers(1, 1000).map(lambda k: k / 1000), min_size=1, max_size=12),
       alpha=st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_adjusted_values_reject_what_the_step_down_procedure_rejects(p, alpha):
    """Holm (1979) as he states it: walk the sorted p-values, reject while
    ``p_(j) <= alpha / (m - j + 1)``, stop at the first that is not. The adjusted values
    reject exactly those (``<= alpha``); they lie between the p-value and Bonferroni's."""
    m = len(p)
    assume(all(abs(x * (m - j) - alpha) > 1e-9 for x in p for j in range(m)))
    rejected = set()
    for j, i in enumerate(sorted(range(m), key=lambda i: p[i])):
        if p[i] > alpha / (m - j):
            break
        rejected.add(i)
    adjusted = holm(p)
    assert {i for i in range(m) if adjusted[i] <= alpha} == rejected
    assert all(x <= a <= b for x, a, b in zip(p, adjusted, bonferroni(p), strict=True))
