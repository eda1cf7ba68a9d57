"""Significance and confidence for any metric that is a function of per-item statistics.

Every nqkit metric can be written as ``score = compute(stats.sum(axis=0))`` over a matrix
of per-item sufficient statistics (one row per question or example), as sacrebleu writes
BLEU: exact match and F1_ans are a mean (the row is ``[score_i, 1]``), MRR and R@k too,
and a precision/recall F1 keeps ``[correct_i, predicted_i, gold_i]``. On that one shape:

* :func:`bootstrap_interval` — a percentile confidence interval of one system's score
  (Efron & Tibshirani 1993; Koehn 2004 for MT metrics);
* :func:`paired_bootstrap` — the difference ``B - A`` with its percentile interval and the
  p-value of the paired bootstrap test, the items resampled jointly for both systems
  (Koehn 2004, "Statistical significance tests for machine translation evaluation",
  EMNLP). The p-value is the one the interval implies (see below): the two never
  disagree;
* :func:`approximate_randomization` — the paired approximate randomization test
  (Noreen 1989; Riezler & Maxwell 2005): each item's pair of outputs is swapped with
  probability 1/2; the p-value is ``(c + 1) / (R + 1)`` where ``c`` counts trials whose
  absolute difference is at least the observed one. With ``exact=True`` and up to
  :data:`EXACT_AR_MAX_ITEMS` items that differ, all ``2**d`` swaps are enumerated and the
  p-value is the exact share ``c / 2**d``.

The paired bootstrap p-value. sacrebleu (``significance.py``, after Moses'
``bootstrap-hypothesis-difference-significance.pl`` and Clark et al.'s multeval) centres
the resampled absolute differences on their mean and counts those above the observed
difference, ``(c + 1) / (R + 1)``. That p-value and the percentile interval answer two
different questions and can contradict each other: on a bimodal difference (ten items, a
system right on one of them) no centred difference reaches the observed one, so the p sits
at its floor (0.001) while the interval runs from 0 to 1. nqkit keeps Koehn's own reading
of the paired bootstrap — B is better with confidence ``1 - p`` when B wins in that share
of the resamples — and makes it two-sided with the ``+1`` correction of sacrebleu:

    ``p = min(1, 2 * (1 + min(#{d* <= 0}, #{d* >= 0})) / (R + 1))``

over the ``R`` resampled differences ``d*`` (those within 1e-12 of 0 are ties, 0). The
interval is read off the same sorted differences at the matching order statistics:
``low = d*_(k)`` and ``high = d*_(R-1-k)`` (0-based), ``k`` the largest count of
resamples on one side of zero whose p-value is still below ``alpha = 1 - confidence``.
So, for every input and by construction, the interval excludes 0 exactly when
``p < alpha`` (``tests/test_stats_properties.py`` checks it on random inputs). With
``R = 1000`` at 95% that is the 25th smallest and the 25th largest difference, where
``numpy.percentile`` would interpolate between the 25th and the 26th. An interval with
``k < 0`` would have no lower end: the test asks for at least :func:`min_resamples`
resamples (40 at 95%).

Resolution. A resampling p-value cannot go below its floor, :attr:`PairedTest.floor`:
``2 / (R + 1)`` for the paired bootstrap and ``1 / (R + 1)`` for approximate
randomization; a p-value at its floor means no resample was on the other side, and is
reported as a bound (``< 0.002``, :attr:`PairedTest.p_bound`). The exact randomization
test has floor ``2 / 2**d`` (doing nothing and swapping every differing item both keep
the observed difference), but its p-value is exact, never a bound.

Support. A paired test on few items that differ cannot support a conclusion: below
:data:`MIN_DIFFERING_ITEMS` items whose statistics differ between the systems the
resampled difference takes few distinct values and both tests move in coarse steps (with
five or fewer no randomization test can reach 0.05 at all: ``2 / 2**5 > 0.05``); when no
item differs (all ties) nothing can be tested. :func:`paired_warnings` turns those cases
into warnings (``few-items``, ``all-ties``), :func:`interval_warnings` warns about a
single system's interval from fewer than :data:`MIN_ITEMS` items. A warning never changes
a number (:class:`nqkit.signature.ResultWarning`).

Several comparisons. :func:`adjust_p_values` corrects a family of p-values for multiple
testing: Holm's step-down procedure (Holm 1979, "A simple sequentially rejective multiple
test procedure", Scand. J. Statist. 6) or Bonferroni's. A p-value that is a bound (the true
p-value at most that) gives an adjusted p-value that is a bound too, unless the adjustment
does not depend on it (see :func:`adjust_p_values`).

Resampling draws come from ``numpy.random.default_rng(seed)`` and are made in blocks, so
memory stays bounded for any number of resamples; results depend only on the seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nqkit.errors import InputError
from nqkit.signature import ResultWarning

__all__ = [
    "CORRECTIONS",
    "EXACT_AR_MAX_ITEMS",
    "MAX_RESAMPLES",
    "MIN_DIFFERING_ITEMS",
    "MIN_ITEMS",
    "Interval",
    "ItemStats",
    "PairedTest",
    "adjust_p_values",
    "approximate_randomization",
    "bonferroni",
    "bootstrap_interval",
    "holm",
    "interval_warnings",
    "mean_score",
    "min_resamples",
    "paired_bootstrap",
    "paired_warnings",
    "significance_level",
]

MAX_RESAMPLES = 1_000_000  # more would not change a reported digit and only cost time
EXACT_AR_MAX_ITEMS = 20  # 2**20 swaps: about a second
_BLOCK_ELEMENTS = 1 << 22  # index matrix elements drawn at once (32 MB of int64)
# told how many resamples (or trials) a block just did: a progress display's update
Progress = Callable[[int], object]
# Fewer items than these and a test or an interval gets a warning (see the module
# docstring): 30 is the usual rule of thumb below which a resampling distribution over the
# items is too coarse for its 2.5% tails.
MIN_DIFFERING_ITEMS = 30  # paired tests: items whose statistics differ between A and B
MIN_ITEMS = 30  # one system's bootstrap interval: items scored
CORRECTIONS = ("holm", "bonferroni", "none")  # multiple-testing corrections, default first
_TIE = 1e-12  # resampled differences closer to 0 are ties (float noise of two sums)

Compute = Callable[[NDArray[np.float64]], NDArray[np.float64]]


def mean_score(sums: NDArray[np.float64]) -> NDArray[np.float64]:
    """``compute`` for a mean: statistics rows are ``[score_i, 1]``."""
    return sums[..., 0] / sums[..., 1]


@dataclass(frozen=True)
class ItemStats:
    """Per-item statistics of one metric for one system, and how they make the score.

    ``decomposable``: the score is ``compute(rows.sum(axis=0))`` (means, precision/recall
    counts) and ``compute`` maps ``(..., k)`` sums to scores. Otherwise (a best-threshold
    F1, whose threshold is tuned on the items themselves) ``compute`` maps ``(R, n, k)``
    stacks of rows to ``R`` scores.
    """

    rows: NDArray[np.float64]  # n items x k statistics
    compute: Compute = mean_score
    decomposable: bool = True
    # a resample whose items sum to 0 in this column has no gold to score against (an NQ
    # F1 with no gold answer): such resamples are counted in Interval.degenerate
    empty_column: int | None = None

    @classmethod
    def of(cls, stats: ItemStats | ArrayLike, what: str = "scores") -> ItemStats:
        """Wrap per-item scores (a vector: their mean) or an n x k matrix of sums."""
        if isinstance(stats, ItemStats):
            if stats.rows.shape[0] == 0:
                raise _no_items(what)
            return stats
        arr = np.asarray(stats, dtype=np.float64)
        if arr.ndim == 1:
            arr = np.stack([arr, np.ones_like(arr)], axis=1)
        if arr.ndim != 2 or arr.shape[0] == 0:
            raise _no_items(what)
        return cls(arr)

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])

    def score(self) -> float:
        if self.decomposable:
            return float(self.compute(self.rows.sum(axis=0)))
        return float(self.compute(self.rows[None])[0])

    def on_resamples(self, counts: NDArray[np.int64],
                     idx: NDArray[np.int64]) -> NDArray[np.float64]:
        """Scores on resamples given as draw counts (R x n) and drawn indices (R x n)."""
        if self.decomposable:
            return self.compute(_weighted_sums(counts, self.rows))
        return self.compute(self.rows[idx])

    def on_stacks(self, stacks: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of R alternative row stacks (R x n x k)."""
        if self.decomposable:
            return self.compute(stacks.sum(axis=1))
        return self.compute(stacks)


def _weighted_sums(counts: NDArray[np.int64],
                   rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """``counts @ rows`` (R x n by n x k) without BLAS: products, then numpy's own sum.

    A BLAS matrix product adds in an order that depends on the CPU's kernel (AVX2 and
    AVX-512 builds of OpenBLAS differ in the last bit), so the same seed would give
    intervals that differ between machines. numpy's reduction order depends only on the
    shapes, and each product is one correctly rounded multiplication.
    """
    return np.add.reduce(counts[:, :, None] * rows[None, :, :], axis=1)


def _no_items(what: str) -> InputError:
    return InputError(None, f"{what}: no items to resample",
                      "score at least one item before asking for intervals or tests")


def _check_resamples(n: int) -> None:
    if not 1 <= n <= MAX_RESAMPLES:
        raise InputError(None, f"the number of resamples must be 1..{MAX_RESAMPLES:,}, not {n}",
                         "1,000 gives intervals to about 0.5 points; 10,000 for p-values")


def _resampled_scores(stats: list[ItemStats], n: int, rng: np.random.Generator,
                      degenerate: list[int] | None = None,
                      progress: Progress | None = None) -> list[NDArray[np.float64]]:
    """Scores of each system on the same ``n`` bootstrap resamples of the items.

    ``degenerate``, when given, receives per system the number of resamples whose
    ``empty_column`` sums to 0; ``progress``, the number of resamples done after each
    block of them.
    """
    if degenerate is not None:
        degenerate[:] = [0] * len(stats)
    items = stats[0].n
    width = max(s.rows.shape[1] for s in stats)
    out = [np.empty(n) for _ in stats]
    block = max(1, _BLOCK_ELEMENTS // (items * width))
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        rows = hi - lo
        idx = rng.integers(0, items, size=(rows, items))
        # how often each item is drawn in each resample: one flat bincount, exact integers
        flat = idx + np.arange(rows)[:, None] * items
        counts = np.bincount(flat.ravel(), minlength=rows * items).reshape(rows, items)
        for j, (s, o) in enumerate(zip(stats, out, strict=True)):
            o[lo:hi] = s.on_resamples(counts, idx)
            if degenerate is not None and s.empty_column is not None:
                column = _weighted_sums(counts, s.rows[:, s.empty_column:s.empty_column + 1])
                degenerate[j] += int(np.count_nonzero(column == 0))
        if progress is not None:
            progress(rows)
    return out


@dataclass(frozen=True, slots=True)
class Interval:
    """A percentile confidence interval."""

    score: float  # the score on all items
    low: float
    high: float
    confidence: float  # e.g. 0.95
    resamples: int
    seed: int
    degenerate: int = 0  # resamples without gold (see ItemStats.empty_column)
    items: int = 0  # items resampled


@dataclass(frozen=True, slots=True)
class PairedTest:
    """The result of a paired significance test of system B against system A."""

    test: str  # "paired-bootstrap" or "approximate-randomization"
    score_a: float
    score_b: float
    difference: float  # score_b - score_a
    low: float  # percentile interval of the difference (paired bootstrap; else nan)
    high: float
    p_value: float
    resamples: int  # bootstrap resamples or randomization trials (2**d when exact)
    seed: int
    exact: bool = False
    floor: float = 0.0  # the smallest p-value the test can give with these resamples
    # p_value is at the floor of a resampling estimate (no resample on the other side):
    # the true p-value may be smaller; report it as "< floor" (never for the exact test)
    p_bound: bool = False
    items: int = 0  # paired items
    differing: int = 0  # items whose statistics differ between A and B


def significance_level(confidence: float) -> float:
    """``alpha = 1 - confidence``, rounded to 12 decimals so that 0.95 gives 0.05 (not
    0.05000000000000004): an interval at ``confidence`` excludes 0 exactly when the
    paired bootstrap p-value is below this."""
    return round(1.0 - confidence, 12)


def min_resamples(confidence: float = 0.95) -> int:
    """The fewest paired bootstrap resamples whose interval at ``confidence`` has ends:
    ``2 / (R + 1) < 1 - confidence`` (40 at 95%)."""
    alpha = significance_level(confidence)
    r = 1
    while _two_sided_p(0, r) >= alpha:
        r += 1
    return r


def _two_sided_p(count: int, resamples: int) -> float:
    """The paired bootstrap p-value when ``count`` resamples lie on the far side of 0."""
    return min(1.0, 2.0 * (count + 1) / (resamples + 1))


def _tail_index(resamples: int, confidence: float) -> int:
    """The largest count ``k`` of far-side resamples with ``p < 1 - confidence``; the
    interval ends are the order statistics ``k`` and ``R - 1 - k``. Found with the very
    expression of the p-value, so that the two agree in floating point too."""
    alpha = significance_level(confidence)
    k = int(alpha * (resamples + 1) / 2)  # within one or two of the answer
    while k >= 0 and _two_sided_p(k, resamples) >= alpha:
        k -= 1
    while _two_sided_p(k + 1, resamples) < alpha:
        k += 1
    return k


def _percentiles(values: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_interval(stats: ItemStats | ArrayLike, *, resamples: int = 1000, seed: int = 0,
                       confidence: float = 0.95, progress: Progress | None = None
                       ) -> Interval:
    """Percentile bootstrap interval of a score.

    ``stats`` is an :class:`ItemStats`, an items x k matrix of sums with ``mean_score``'s
    layout, or a vector of per-item scores (then the score is their mean). ``progress``
    is called with the number of resamples done after each block of them (for a
    progress display; it changes nothing).
    """
    _check_resamples(resamples)
    s = ItemStats.of(stats, "bootstrap")
    rng = np.random.default_rng(seed)
    degenerate: list[int] = []
    (scores,) = _resampled_scores([s], resamples, rng, degenerate, progress)
    low, high = _percentiles(scores, confidence)
    return Interval(s.score(), low, high, confidence, resamples, seed, degenerate[0], s.n)


def _pair(a: ItemStats | ArrayLike, b: ItemStats | ArrayLike) -> tuple[ItemStats, ItemStats]:
    sa, sb = ItemStats.of(a, "system A"), ItemStats.of(b, "system B")
    if sa.rows.shape != sb.rows.shape:
        raise InputError(None, f"the two systems cover different items ({sa.n:,} vs "
                         f"{sb.n:,} rows)",
                         "score both systems against the same gold, item for item")
    return sa, sb


def _differing(sa: ItemStats, sb: ItemStats) -> NDArray[np.int64]:
    """Indices of the items whose statistics differ between the two systems."""
    return np.flatnonzero(np.any(sa.rows != sb.rows, axis=1))


def paired_bootstrap(a: ItemStats | ArrayLike, b: ItemStats | ArrayLike, *,
                     resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
                     progress: Progress | None = None) -> PairedTest:
    """Paired bootstrap test of B against A over the same items (two-sided).

    Both systems are scored on the same ``R`` resamples of the items (Koehn 2004).
    With ``d*`` the resampled differences ``B - A`` (ties within 1e-12 of 0 set to 0):

    * ``p = min(1, 2 * (1 + min(#{d* <= 0}, #{d* >= 0})) / (R + 1))`` — twice the share
      of resamples on the far side of zero, with sacrebleu's ``+1`` correction;
    * the interval is ``d*_(k) .. d*_(R-1-k)`` (sorted, 0-based), ``k`` the largest
      far-side count whose p-value is below ``alpha = 1 - confidence``
      (:func:`significance_level`).

    So the interval excludes 0 exactly when ``p < alpha``. The p-value cannot go below
    ``floor = 2 / (R + 1)``; at the floor it is a bound (``p_bound``). See the module
    docstring for why this is not sacrebleu's centred p-value. Needs at least
    :func:`min_resamples` resamples (40 at 95%). ``progress`` is called with the number
    of resamples done after each block of them.
    """
    _check_resamples(resamples)
    sa, sb = _pair(a, b)
    fewest = min_resamples(confidence)
    if resamples < fewest:
        raise InputError(None, f"a {confidence:.0%} paired bootstrap interval needs at least "
                         f"{fewest:,} resamples, not {resamples:,}",
                         "1,000 resamples are usual")
    score_a, score_b = sa.score(), sb.score()
    rng = np.random.default_rng(seed)
    res_a, res_b = _resampled_scores([sa, sb], resamples, rng, progress=progress)
    diffs = np.sort(res_b - res_a)
    diffs[np.abs(diffs) < _TIE] = 0.0
    k = _tail_index(resamples, confidence)
    far = min(int(np.count_nonzero(diffs <= 0)), int(np.count_nonzero(diffs >= 0)))
    p = _two_sided_p(far, resamples)
    return PairedTest("paired-bootstrap", score_a, score_b, score_b - score_a,
                      float(diffs[k]), float(diffs[resamples - 1 - k]), p, resamples, seed,
                      floor=_two_sided_p(0, resamples), p_bound=far == 0, items=sa.n,
                      differing=len(_differing(sa, sb)))


def approximate_randomization(a: ItemStats | ArrayLike, b: ItemStats | ArrayLike, *,
                              trials: int = 10000, seed: int = 0, exact: bool = False,
                              progress: Progress | None = None) -> PairedTest:
    """Paired approximate randomization test of B against A (two-sided).

    Items where both systems have equal statistics cannot change the difference and are
    left in place. ``exact=True`` enumerates every swap of the differing items (at most
    :data:`EXACT_AR_MAX_ITEMS` of them) and returns the exact p-value, whose floor is
    ``2 / 2**d`` (no swap and all swaps keep the observed difference); the approximate
    test's floor is ``1 / (trials + 1)``, and a p-value there is a bound (``p_bound``).
    ``progress`` is called with the number of trials (swaps, when exact) done after each
    block of them.
    """
    sa, sb = _pair(a, b)
    score_a, score_b = sa.score(), sb.score()
    observed = abs(score_b - score_a) - _TIE
    differ = _differing(sa, sb)

    def count(swaps: NDArray[np.bool_]) -> int:
        # swaps: trials x d; where True, that item's outputs are exchanged
        m = np.zeros((swaps.shape[0], sa.n), dtype=bool)
        m[:, differ] = swaps
        new_a = np.where(m[..., None], sb.rows[None], sa.rows[None])
        new_b = np.where(m[..., None], sa.rows[None], sb.rows[None])
        diff = sb.on_stacks(new_b) - sa.on_stacks(new_a)
        if progress is not None:
            progress(swaps.shape[0])
        return int(np.count_nonzero(np.abs(diff) >= observed))

    d = len(differ)
    block = max(1, _BLOCK_ELEMENTS // (sa.n * sa.rows.shape[1]))
    if exact:
        if d > EXACT_AR_MAX_ITEMS:
            raise InputError(None, f"the exact test enumerates 2**{d} swaps (over "
                             f"{EXACT_AR_MAX_ITEMS} differing items)",
                             "use the approximate test (exact=False)")
        total = 2**d
        bits = (np.arange(total)[:, None] >> np.arange(d)[None, :]) & 1
        c = sum(count(bits[lo:lo + block].astype(bool)) for lo in range(0, total, block))
        return PairedTest("approximate-randomization", score_a, score_b, score_b - score_a,
                          float("nan"), float("nan"), c / total, total, seed, exact=True,
                          floor=min(1.0, 2 / total), items=sa.n, differing=d)
    _check_resamples(trials)
    rng = np.random.default_rng(seed)
    c = 0
    for lo in range(0, trials, block):
        hi = min(trials, lo + block)
        c += count(rng.integers(0, 2, size=(hi - lo, d)).astype(bool))
    return PairedTest("approximate-randomization", score_a, score_b, score_b - score_a,
                      float("nan"), float("nan"), (c + 1) / (trials + 1), trials, seed,
                      floor=1 / (trials + 1), p_bound=c == 0, items=sa.n, differing=d)


def paired_warnings(tests: Mapping[str, PairedTest], between: tuple[str, str] = ("A", "B")
                    ) -> list[ResultWarning]:
    """Warnings for the metrics (name -> any paired test of it) whose items cannot
    support a test: ``all-ties`` when no item differs between A and B, ``few-items`` when
    fewer than :data:`MIN_DIFFERING_ITEMS` do. One warning per kind, naming the metrics;
    ``between`` names the two systems in the messages."""
    a, b = between
    ties = [name for name, t in tests.items() if t.differing == 0]
    few = {name: t for name, t in tests.items() if 0 < t.differing < MIN_DIFFERING_ITEMS}
    out = []
    if ties:
        items = tests[ties[0]].items
        out.append(ResultWarning(
            "all-ties", f"{a} and {b} score the same on every one of the {items:,} items for "
            f"{', '.join(ties)}: no test can tell them apart (p = 1) — compare systems "
            "that differ, or on other items"))
    if few:
        counts = {(t.differing, t.items) for t in few.values()}
        if len(counts) == 1:
            ((d, n),) = counts
            what = f"{d:,} of {n:,} items differ between {a} and {b} for {', '.join(few)}"
        else:
            what = f"few items differ between {a} and {b}: " + ", ".join(
                f"{t.differing:,} of {t.items:,} for {name}" for name, t in few.items())
        out.append(ResultWarning(
            "few-items", f"{what}, fewer than the {MIN_DIFFERING_ITEMS} a paired test needs: "
            "the interval and p-values are too coarse to support a conclusion — compare "
            "on more items"))
    return out


def interval_warnings(intervals: Mapping[str, Interval]) -> list[ResultWarning]:
    """A ``few-items`` warning when the intervals come from fewer than
    :data:`MIN_ITEMS` items."""
    few = [name for name, iv in intervals.items() if iv.items < MIN_ITEMS]
    if not few:
        return []
    n = intervals[few[0]].items
    return [ResultWarning(
        "few-items", f"bootstrap intervals of {', '.join(few)} from only {n:,} items (fewer "
        f"than {MIN_ITEMS}): the resampled scores take too few values for their 2.5% tails "
        "to mean much — score more items")]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (Holm 1979).

    With the ``m`` p-values sorted ascending, ``p_(1) <= ... <= p_(m)``, the adjusted
    value of ``p_(i)`` is ``max_{j <= i} min(1, (m - j + 1) * p_(j))``. Rejecting the
    hypotheses whose adjusted p-value is below ``alpha`` is Holm's procedure at
    family-wise error rate ``alpha``; tied p-values get equal adjusted values.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):  # rank = j - 1
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def bonferroni(p_values: Sequence[float]) -> list[float]:
    """Bonferroni-adjusted p-values: ``min(1, m * p)`` for each of the ``m``."""
    m = len(p_values)
    return [min(1.0, m * p) for p in p_values]


def adjust_p_values(p_values: Sequence[float], bounds: Sequence[bool], correction: str
                    ) -> list[tuple[float, bool]]:
    """Adjusted p-values of one family and whether each is a bound.

    ``correction`` is one of :data:`CORRECTIONS` (``none`` returns the p-values as
    given). ``bounds[i]`` says that ``p_values[i]`` is an upper bound (a resampling
    p-value at its floor, :attr:`PairedTest.p_bound`): the true p-value lies in
    ``(0, p_values[i]]``. Both adjustments are non-decreasing in every p-value, so the
    adjusted value computed from the bounds is an upper bound of the true adjusted value;
    it is exact when the adjustment does not change with the bounded p-values anywhere in
    that range — which, by monotonicity, is when setting every bounded p-value to 0 gives
    the same adjusted value. Otherwise the adjusted value is itself a bound.
    """
    if len(p_values) != len(bounds):
        raise ValueError("one bound flag per p-value")
    if correction == "none":
        return list(zip((float(p) for p in p_values), (bool(b) for b in bounds), strict=True))
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; one of {', '.join(CORRECTIONS)}")
    adjust = holm if correction == "holm" else bonferroni
    high = adjust(p_values)
    low = adjust([0.0 if b else p for p, b in zip(p_values, bounds, strict=True)])
    return [(h, lo != h) for h, lo in zip(high, low, strict=True)]
