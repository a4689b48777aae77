"""analysis.per_channel: the shortcuts in the per-channel analysis give the answers of the
plain definitions.

`_vector_along` looks at the last element and skips zero-stride (splat) dimensions before
comparing a whole constant to its line; these tests hold it to the definition (the whole
array equal, NaNs included, to the line along `feature` broadcast back) on arrays built to
hit each shortcut: per-channel ones, ones that differ only at the last element or only in
the middle, NaNs where the line has them and where it does not, splats, every float type.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from stablehlo_bnfold.analysis.per_channel import _vector_along

DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]


def definition(array: np.ndarray, feature: int | None) -> np.ndarray | None:
    if array.size == 0:
        return None
    if feature is None:
        first = array.reshape(-1)[:1]
        uniform = np.array_equal(array, np.broadcast_to(first, array.shape), equal_nan=True)
        return first.astype(np.float64) if uniform else None
    index = tuple(slice(None) if d == feature else slice(0, 1) for d in range(array.ndim))
    line = array[index]
    if not np.array_equal(array, np.broadcast_to(line, array.shape), equal_nan=True):
        return None
    return line.reshape(-1).astype(np.float64)


def per_channel_array(rng, shape, feature, dtype) -> np.ndarray:
    line_shape = [1] * len(shape)
    line_shape[feature] = shape[feature]
    line = rng.standard_normal(line_shape).astype(dtype)
    return np.ascontiguousarray(np.broadcast_to(line, shape))


def variants(rng, shape, feature, dtype) -> dict[str, np.ndarray]:
    """Arrays that are per-channel along `feature`, and ones that just miss."""
    base = per_channel_array(rng, shape, feature, dtype)
    out = {"per-channel": base}
    last = base.copy()
    last.reshape(-1)[-1] = dtype(7.0)
    out["last element differs"] = last
    middle = base.copy()
    middle.reshape(-1)[base.size // 2] = dtype(7.0)
    out["middle element differs"] = middle
    nan_line = base.copy()
    index = [slice(None)] * len(shape)
    index[feature] = 0
    nan_line[tuple(index)] = np.nan  # the whole channel 0 is NaN, as in the line
    out["NaN along a channel"] = nan_line
    nan_inside = base.copy()
    nan_inside.reshape(-1)[-1] = np.nan  # NaN off the line
    out["NaN off the line"] = nan_inside
    out["splat"] = np.broadcast_to(base.reshape(-1)[:1].reshape(()), shape)
    out["splat NaN"] = np.broadcast_to(np.array(np.nan, dtype=dtype), shape)
    line = tuple(slice(None) if d == feature else slice(0, 1) for d in range(len(shape)))
    out["broadcast line"] = np.broadcast_to(base[line], shape)
    return out


def assert_same(got: np.ndarray | None, want: np.ndarray | None, case: str) -> None:
    assert (got is None) == (want is None), (case, got, want)
    if want is not None:
        assert got.dtype == want.dtype == np.float64, case
        np.testing.assert_array_equal(got, want, err_msg=case)  # NaNs in the same places


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, feature", [((1, 4, 5, 3), 3), ((6, 2, 1), 0), ((3, 7), 1),
                                            ((5,), 0), ((2, 3, 4), 1), ((1, 1, 1, 6), 3),
                                            ((1, 6), 0)])
def test_vector_along_answers_as_the_whole_array_comparison_does(shape, feature, dtype):
    rng = np.random.default_rng([len(shape), feature])
    for name, array in variants(rng, shape, feature, dtype).items():
        for axis in (feature, None):
            assert_same(_vector_along(array, axis), definition(array, axis), f"{name}, {axis}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_along_refuses_a_constant_that_is_not_per_channel_and_accepts_one_that_is(dtype):
    rng = np.random.default_rng(5)
    varying = rng.standard_normal((2, 8, 8, 4)).astype(dtype)
    assert _vector_along(varying, 3) is None
    assert _vector_along(np.zeros((0, 4), dtype), 1) is None
    per_channel = per_channel_array(rng, (2, 8, 8, 4), 3, dtype)
    np.testing.assert_array_equal(_vector_along(per_channel, 3),
                                  per_channel[0, 0, 0].astype(np.float64))
