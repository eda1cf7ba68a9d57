"""``nqkit.arrays.distinct``: np.unique's values and dtype, by a sort."""

from __future__ import annotations

import numpy as np
import pytest

from nqkit.arrays import distinct


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32, np.uint64, bool])
def test_distinct_equals_np_unique(dtype: type) -> None:
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 3, 17, 1000, 50_000):
        for high in (2, 50, 10 * n + 2):
            a = rng.integers(0, high, n).astype(dtype)
            got, want = distinct(a), np.unique(a)
            assert got.dtype == want.dtype
            assert np.array_equal(got, want)


def test_distinct_extremes_and_shapes() -> None:
    big = np.array([2**64 - 1, 0, 2**63, 2**64 - 1, 1], dtype=np.uint64)
    assert distinct(big).tolist() == [0, 1, 2**63, 2**64 - 1]
    low = np.array([-2**63, 2**63 - 1, -1, -2**63], dtype=np.int64)
    assert distinct(low).tolist() == [-2**63, -1, 2**63 - 1]
    grid = np.array([[3, 1], [1, 2]])
    assert np.array_equal(distinct(grid), np.unique(grid))  # flattened, as np.unique
    view = np.arange(20)[::-3]  # not contiguous
    assert np.array_equal(distinct(view), np.unique(view))
    source = np.array([3, 1, 3])
    distinct(source)
    assert source.tolist() == [3, 1, 3]  # the input is not sorted in place


def test_distinct_refuses_floats() -> None:
    with pytest.raises(TypeError, match="integers"):
        distinct(np.array([0.5, np.nan]))
