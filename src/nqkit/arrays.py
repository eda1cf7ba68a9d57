"""Array helpers that numpy's own functions do slowly.

:func:`distinct` is ``np.unique(a)`` by a sort. Since numpy 2.3, ``np.unique`` without
``return_index``, ``return_inverse`` or ``return_counts`` finds the values by hashing and
then sorts them; on this project's machines that took 10 to 50 times as long as sorting
(318,677 term ids: 0.34 s against 0.006 s; 1,000,000 ints: 0.37-1.1 s against 0.02 s;
``benchmarks/bench_unique.py`` measures it side by side). The calls with a ``return_*``
argument still sort and are not affected.
"""

from __future__ import annotations

import numpy as np

__all__ = ["distinct"]


def distinct(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an integer array (flattened): what ``np.unique(a)``
    returns, the same values and dtype, found by a sort."""
    if a.dtype.kind not in "iub":
        raise TypeError(f"distinct() takes integers, not {a.dtype}")
    out = np.sort(a, axis=None)
    if out.shape[0] > 1:
        keep = np.empty(out.shape[0], dtype=bool)
        keep[0] = True
        np.not_equal(out[1:], out[:-1], out=keep[1:])
        out = out[keep]
    return out
