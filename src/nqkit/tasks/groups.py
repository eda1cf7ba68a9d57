"""Grouped scores: a task's per-item scores on named groups of its gold items.

Test-train overlap groups (:mod:`nqkit.tasks.overlap`), breakdowns by question type or
answer kind, the questions a human judged: a group is a set of item positions, in the
order of a result's per-item records, and its score is the metric computed on those
items alone, with the same percentile bootstrap as the whole set's interval
(:func:`nqkit.stats.bootstrap_interval`: ``--resamples N --seed S`` mean the same thing
everywhere). A difference between two groups is resampled over the whole item set, so
that the groups' sizes vary as they would in a new sample; its interval is defined for
metrics that are sums of per-item statistics (means, precision and recall counts), and a
difference of a metric tuned on its items (NQ's best-threshold F1) is given without one.

Any task's :class:`~nqkit.tasks.base.Result` offers it for its headline metrics
(:meth:`~nqkit.tasks.base.Result.by_groups`); :func:`score_groups` takes per-item scores
from anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy stays out of start-up
    from nqkit.stats import Interval, ItemStats

__all__ = ["GroupDifference", "GroupScore", "GroupedScores", "score_groups"]


@dataclass(frozen=True, slots=True)
class GroupScore:
    """One metric on one group."""

    group: str
    metric: str
    n: int
    score: float | None  # on the group's items; None for an empty group
    low: float | None = None  # bootstrap 95% interval, when asked for
    high: float | None = None


@dataclass(frozen=True, slots=True)
class GroupDifference:
    """``score(group) - score(minus)`` for one metric, with its bootstrap interval (the
    whole item set resampled, so that group sizes vary as they would in a new sample)."""

    group: str
    minus: str
    metric: str
    difference: float
    low: float | None = None
    high: float | None = None


@dataclass
class GroupedScores:
    """Every metric on every group, and the differences asked for."""

    metrics: tuple[str, ...]
    scores: list[GroupScore]
    differences: list[GroupDifference]
    # "METRIC on GROUP" -> its interval (for nqkit.stats.interval_warnings)
    intervals: dict[str, Interval] = field(default_factory=dict)
    # "GROUP - MINUS" of the differences some resample leaves without one of its groups
    undefined: list[str] = field(default_factory=list)
    resamples: int = 0
    seed: int = 0

    def score(self, group: str, metric: str) -> GroupScore:
        return next(s for s in self.scores if s.group == group and s.metric == metric)


def _as_stats(values: ItemStats | Any) -> ItemStats:
    from nqkit.stats import ItemStats

    return values if isinstance(values, ItemStats) else ItemStats.of(values)


def _subset(s: ItemStats, idx: Any) -> ItemStats:
    from dataclasses import replace

    return replace(s, rows=s.rows[idx])


def _difference(s: ItemStats, a: Any, b: Any) -> ItemStats:
    """The statistics of ``score(a) - score(b)`` over the whole item set: each item's row
    counted in the columns of the groups it is in (a decomposable metric only)."""
    import numpy as np

    from nqkit.stats import ItemStats

    n, k = s.rows.shape
    in_a = np.zeros(n)
    in_a[a] = 1.0
    in_b = np.zeros(n)
    in_b[b] = 1.0
    compute = s.compute

    def difference(sums: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return compute(sums[..., :k]) - compute(sums[..., k:])

    return ItemStats(np.concatenate([s.rows * in_a[:, None], s.rows * in_b[:, None]], axis=1),
                     difference)


def score_groups(per_item: Mapping[str, ItemStats | Any], groups: Mapping[str, Any], *,
                 differences: Sequence[tuple[str, str]] = (), resamples: int = 0,
                 seed: int = 0) -> GroupedScores:
    """Each metric of ``per_item`` (metric -> :class:`~nqkit.stats.ItemStats`, or one
    score per item: their mean) on each group of ``groups`` (group -> item positions), in
    that order, with percentile bootstrap 95% intervals from ``resamples`` resamples
    (each group resampled on its own, as :func:`~nqkit.stats.bootstrap_interval`
    resamples a whole set), and the ``differences`` (group, minus) of each metric (the
    whole item set resampled; a difference some resample leaves without one of its groups
    has no interval, and is listed in ``undefined``)."""
    import numpy as np

    from nqkit.stats import ItemStats, bootstrap_interval

    stats = {m: _as_stats(v) for m, v in per_item.items()}
    # per-item scores given as a vector score a group by numpy's mean of the group's
    # scores (pairwise summation); ItemStats by their own compute
    vectors = {m: None if isinstance(v, ItemStats) else np.asarray(v, dtype=np.float64)
               for m, v in per_item.items()}
    n = {s.n for s in stats.values()}
    if len(n) > 1:
        raise ValueError(f"the metrics cover different items ({sorted(n)})")
    out = GroupedScores(tuple(stats), [], [], resamples=resamples, seed=seed)
    members = {g: np.asarray(idx, dtype=np.int64) for g, idx in groups.items()}

    def on(m: str, idx: Any) -> float:
        vec = vectors[m]
        return float(vec[idx].mean()) if vec is not None else _subset(stats[m], idx).score()

    for g, idx in members.items():
        for m, s in stats.items():
            if not len(idx):
                out.scores.append(GroupScore(g, m, 0, None))
                continue
            if resamples:
                iv = bootstrap_interval(_subset(s, idx), resamples=resamples, seed=seed)
                out.intervals[f"{m} on {g}"] = iv
                out.scores.append(GroupScore(g, m, len(idx), on(m, idx), iv.low, iv.high))
            else:
                out.scores.append(GroupScore(g, m, len(idx), on(m, idx)))
    for a, b in differences:
        if not len(members[a]) or not len(members[b]):
            continue
        for m, s in stats.items():
            vec = vectors[m]
            d = (float(vec[members[a]].mean() - vec[members[b]].mean()) if vec is not None
                 else on(m, members[a]) - on(m, members[b]))
            if resamples and s.decomposable:
                iv = bootstrap_interval(_difference(s, members[a], members[b]),
                                        resamples=resamples, seed=seed)
                if np.isfinite(iv.low) and np.isfinite(iv.high):
                    out.differences.append(GroupDifference(a, b, m, d, iv.low, iv.high))
                    continue
                out.undefined.append(f"{a} - {b}")
            out.differences.append(GroupDifference(a, b, m, d))
    return out
