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

from stablehlo_bnfold.analysis.per_channel import _unit_except, _vector_along

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


@pytest.mark.parametrize("shape", [(), (1,), (5,), (1, 1, 1, 6), (1, 6, 1, 1), (2, 1, 3),
                                   (1, 0, 1), (0,), (1, 1), (4, 4)])
def test_unit_except_answers_as_the_plain_definition(shape):
    for feature in (None, -1, *range(len(shape) + 2)):
        want = all(n == 1 for d, n in enumerate(shape) if d != feature)
        assert _unit_except(list(shape), feature) == want, (shape, feature)
        assert _unit_except(shape, feature) == want, (shape, feature)


_TRANSPOSED = """
func.func @main() -> (tensor<1x3xf32>, tensor<1x4x3xf32>, tensor<1x3x4xf32>) {
  %c = stablehlo.constant dense<[[1.5], [2.5], [-3.5]]> : tensor<3x1xf32>
  %t = stablehlo.broadcast_in_dim %c, dims = [1, 0] : (tensor<3x1xf32>) -> tensor<1x3xf32>
  %r = stablehlo.reshape %c : (tensor<3x1xf32>) -> tensor<1x3xf32>
  %a = stablehlo.broadcast_in_dim %r, dims = [0, 2] : (tensor<1x3xf32>) -> tensor<1x4x3xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<1x3x4xf32>
  return %t, %a, %b : tensor<1x3xf32>, tensor<1x4x3xf32>, tensor<1x3x4xf32>
}
"""


def test_a_broadcast_that_moves_the_feature_dimension_is_read_along_its_operand_dimension():
    from jaxlib.mlir import ir

    from stablehlo_bnfold.analysis.per_channel import per_channel_f64, per_channel_source
    from stablehlo_bnfold.io import make_context

    values = np.array([1.5, 2.5, -3.5])
    with make_context():
        module = ir.Module.parse(_TRANSPOSED)
        returned = module.body.operations[0].regions[0].blocks[0].operations[-1]
        transposed, added, kept = returned.operands
        np.testing.assert_array_equal(per_channel_f64(transposed, 1, 3), values)
        assert per_channel_f64(transposed, 0, 1) is None  # varies along result dimension 1
        np.testing.assert_array_equal(per_channel_f64(added, 2, 3), values)
        assert per_channel_f64(added, 1, 4) is None
        np.testing.assert_array_equal(per_channel_f64(kept, 1, 3), values)
        assert per_channel_f64(kept, 2, 4) is None
        source = per_channel_source(added, 2, 3)  # through the reshape: %c's dimension 0
        assert source is not None and source.feature == 0
        assert source.value.owner.name == "stablehlo.constant"
        assert per_channel_source(added, 1, 4) is None



_CONSTANT_OR_SOURCE = """
func.func @main(%s: tensor<3xf32>, %n: tensor<2xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<2x3xf32>) {
  %c = stablehlo.constant dense<[1.5, 2.5, -3.5]> : tensor<3xf32>
  %bc = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %dc = stablehlo.dynamic_broadcast_in_dim %c, %n, dims = [1] : (tensor<3xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  %ds = stablehlo.dynamic_broadcast_in_dim %s, %n, dims = [1] : (tensor<3xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  %m = stablehlo.multiply %bc, %bs : tensor<2x3xf32>
  return %bc, %bs, %dc, %ds, %m : tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<2x3xf32>
}
"""


def test_the_constant_or_the_source_in_one_walk_answers_as_the_two_walks_do():
    from jaxlib.mlir import ir

    from stablehlo_bnfold.analysis.per_channel import (
        per_channel_f64,
        per_channel_or_source,
        per_channel_source,
    )
    from stablehlo_bnfold.io import make_context

    with make_context():
        module = ir.Module.parse(_CONSTANT_OR_SOURCE)
        returned = module.body.operations[0].regions[0].blocks[0].operations[-1]
        answers = []
        for value in returned.operands:
            for feature, size in ((0, 2), (1, 3), (1, 1)):
                for sources in (False, True):
                    got = per_channel_or_source(value, feature, size, sources)
                    want = per_channel_f64(value, feature, size)
                    if want is None and sources:
                        want = per_channel_source(value, feature, size)
                    if isinstance(want, np.ndarray):
                        np.testing.assert_array_equal(got, want)
                    else:
                        assert got == want, (value, feature, size, sources)
                    answers.append(type(got).__name__)
        # Each kind of answer is met: a constant (static), a source (also where the
        # feature dimension is dynamic: the constant walk stops there), nothing.
        assert {"ndarray", "Narrow", "NoneType"} <= set(answers)
        dynamic_constant = returned.operands[2]
        assert per_channel_f64(dynamic_constant, 1, 3) is None
        assert per_channel_or_source(dynamic_constant, 1, 3, True) == per_channel_source(dynamic_constant, 1, 3)


_DEBIAS = """
func.func @main() -> tensor<3xf32> {{
  %count = stablehlo.constant dense<{count}> : tensor<i32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %onef = stablehlo.constant dense<1.0> : tensor<f32>
  %momentum = stablehlo.constant dense<0.99> : tensor<f32>
  %mean = stablehlo.constant dense<[0.3, -0.6, 0.9]> : tensor<3xf32>
  %first = stablehlo.compare EQ, %count, %zero, {compare_type} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %n = stablehlo.convert %count : (tensor<i32>) -> tensor<f32>
  %p = stablehlo.power %momentum, %n : tensor<f32>
  %debias = stablehlo.subtract %onef, %p : tensor<f32>
  %d = call @_where(%first, %one, %debias) : (tensor<i1>, tensor<i32>, tensor<f32>) -> tensor<f32>
  %db = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %m = stablehlo.divide %mean, %db : tensor<3xf32>
  return %m : tensor<3xf32>
}}
func.func private @_where(%pred: tensor<i1>, %on: tensor<i32>, %off: tensor<f32>) -> tensor<f32> {{
  %on_f = stablehlo.convert %on : (tensor<i32>) -> tensor<f32>
  %r = stablehlo.select %pred, %on_f, %off : tensor<i1>, tensor<f32>
  return %r : tensor<f32>
}}
"""


def _debiased_mean(count: int, compare_type: str = "SIGNED") -> np.ndarray | None:
    """per_channel_f64 of Equinox's mean / where(count == 0, 1, 1 - 0.99 ** count), the
    returned value of `_DEBIAS`."""
    from jaxlib.mlir import ir

    from stablehlo_bnfold.analysis.per_channel import per_channel_f64
    from stablehlo_bnfold.io import make_context

    with make_context():
        module = ir.Module.parse(_DEBIAS.format(count=count, compare_type=compare_type))
        main = module.body.operations[0]
        returned = main.regions[0].blocks[0].operations[-1].operands[0]
        return per_channel_f64(returned, 0, 3)


@pytest.mark.parametrize("count", [0, 1, 3, 1000])
def test_a_select_on_a_compare_through_a_call_is_evaluated_in_float64(count):
    mean = np.array([0.3, -0.6, 0.9], np.float32).astype(np.float64)
    momentum = float(np.float32(0.99))
    expected = mean / (1.0 if count == 0 else 1.0 - momentum**count)
    np.testing.assert_array_equal(_debiased_mean(count), expected)


def test_a_totalorder_compare_is_not_evaluated():
    # numpy's comparisons do not order NaNs and signed zeros as TOTALORDER does.
    assert _debiased_mean(3, "TOTALORDER") is None
