"""constants.scale_along: the blocked float64 multiply equals one float64 product per element,
rounded once, bit for bit.

The reference is the definition: `round_to(dtype, array.astype(np.float64) * scale)`. Arrays
come in the forms `read_dense` returns (contiguous read-only views of an attribute, a splat
broadcast with zero strides) and, to be safe, strided and transposed views; blocks are made
small so that every case spans several of them, including a partial last one.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir import ir

from stablehlo_bnfold import constants
from stablehlo_bnfold.constants import read_dense, round_to, scale_along

BF16 = np.dtype(ml_dtypes.bfloat16)

# (stored dtype, target dtype): the same type, and the mixed-precision pattern's master
# weights rounded to a narrower type.
DTYPE_PAIRS = [
    (np.float16, np.float16),
    (np.float32, np.float32),
    (np.float64, np.float64),
    (np.float32, np.float16),
    (np.float64, np.float32),
    (np.float64, np.float16),
    (BF16, BF16),
    (np.float32, BF16),
]

SHAPES_AND_AXES = [
    ((3, 3, 4, 8), 3),  # HWIO: scaled along the last axis
    ((8, 4, 3, 3), 0),  # OIHW: along the first
    ((3, 5, 7, 2), 2),  # in the middle
    ((5, 7), 0),
    ((5, 7), 1),
    ((2, 3, 5, 7, 11), 1),
    ((4, 1, 1), 0),  # unit dimensions after the axis
    ((9,), 0),
    ((0, 3), 1),  # empty
]


def reference(array: np.ndarray, scale: np.ndarray, axis: int, dtype) -> np.ndarray | None:
    shape = [1] * array.ndim
    shape[axis] = scale.shape[0]
    with np.errstate(over="ignore"):  # an overflow is the None being tested
        return round_to(np.dtype(dtype), array.astype(np.float64) * scale.reshape(shape))


def assert_bit_identical(got: np.ndarray | None, want: np.ndarray | None) -> None:
    assert (got is None) == (want is None), (got, want)
    if want is None:
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    bits = np.dtype(f"u{want.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


def awkward_values(rng: np.random.Generator, shape, dtype, within=None) -> np.ndarray:
    """Values across the exponent range of `within` (default: `dtype`), normal and
    subnormal, and signed zeros, stored as `dtype`."""
    within = np.dtype(dtype if within is None else within)
    info = np.finfo(np.float32 if within == BF16 else within)
    size = int(np.prod(shape))
    exponents = rng.integers(int(info.minexp) - 8, int(info.maxexp) - 4, size)
    values = rng.uniform(1.0, 2.0, size) * np.exp2(exponents.astype(np.float64))
    values *= rng.choice([-1.0, 1.0], size)
    values[rng.random(size) < 0.05] = 0.0
    values[rng.random(size) < 0.05] = -0.0
    return values.astype(dtype).reshape(shape)


def full_mantissa_scale(rng: np.random.Generator, channels: int) -> np.ndarray:
    """float64 factors with all 53 bits used, so that the product is rarely exact."""
    return rng.uniform(0.25, 4.0, channels) * rng.choice([-1.0, 1.0], channels)


@pytest.mark.parametrize("block", [7, 64, constants._BLOCK])
@pytest.mark.parametrize("stored, target", DTYPE_PAIRS)
@pytest.mark.parametrize("shape, axis", SHAPES_AND_AXES)
def test_scale_along_equals_one_float64_product_rounded_once(
    monkeypatch, shape, axis, stored, target, block
):
    monkeypatch.setattr(constants, "_BLOCK", block)
    rng = np.random.default_rng([sum(shape), axis, block])
    array = awkward_values(rng, shape, stored)
    array.flags.writeable = False  # read_dense's views are read-only
    scale = full_mantissa_scale(rng, shape[axis])
    got = scale_along(array, scale, axis, np.dtype(target))
    assert_bit_identical(got, reference(array, scale, axis, target))


@pytest.mark.parametrize("stored, target", DTYPE_PAIRS)
def test_scale_along_reads_strided_transposed_and_splat_arrays(stored, target):
    rng = np.random.default_rng(1)
    base = awkward_values(rng, (6, 10, 8), stored, within=target)
    arrays = {
        "strided": (base[::2, 1::3, :], 2),
        "transposed": (base.transpose(2, 0, 1), 0),
        "splat": (np.broadcast_to(base.reshape(-1)[:1].reshape(()), (3, 3, 5, 16)), 3),
        "broadcast row": (np.broadcast_to(base[0, 0], (40, 8)), 1),
    }
    for name, (array, axis) in arrays.items():
        for scale in (
            full_mantissa_scale(rng, array.shape[axis]),
            np.broadcast_to(full_mantissa_scale(rng, 1), (array.shape[axis],)),  # one value
        ):
            got = scale_along(array, scale, axis, np.dtype(target))
            want = reference(array, scale, axis, target)
            assert_bit_identical(got, want)
            assert got is not None, name


@pytest.mark.parametrize("kind", ["dense", "splat"])
@pytest.mark.parametrize("element", ["f16", "f32", "f64"])
def test_scale_along_matches_the_reference_on_what_read_dense_returns(kind, element):
    dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[element]
    rng = np.random.default_rng(2)
    shape = (3, 3, 64, 256)  # 147456 elements: more than one block of the default size
    with ir.Context(), ir.Location.unknown():
        element_type = ir.Type.parse(element)
        if kind == "dense":
            values = np.ascontiguousarray(awkward_values(rng, shape, dtype))
            attr = ir.DenseElementsAttr.get(values, type=element_type, shape=list(shape))
        else:
            attr = ir.DenseElementsAttr.get_splat(
                ir.RankedTensorType.get(list(shape), element_type),
                ir.FloatAttr.get(element_type, 0.3),
            )
        array = read_dense(attr)
        for axis in (3, 0, 2):
            scale = full_mantissa_scale(rng, shape[axis])
            got = scale_along(array, scale, axis, np.dtype(dtype))
            assert_bit_identical(got, reference(array, scale, axis, dtype))


@pytest.mark.parametrize("block", [5, constants._BLOCK])
@pytest.mark.parametrize("stored, target", DTYPE_PAIRS)
def test_scale_along_is_none_exactly_when_a_product_is_not_finite(
    monkeypatch, stored, target, block
):
    monkeypatch.setattr(constants, "_BLOCK", block)
    rng = np.random.default_rng(3)
    largest = float(np.finfo(np.float32 if np.dtype(target) == BF16 else target).max)
    shape, axis = (6, 4, 5), 1
    scale = full_mantissa_scale(rng, shape[axis])
    for where in [(0, 0, 0), (5, 3, 4), (3, 1, 2)]:  # first, last, inside a block
        for bad in (np.nan, np.inf, -np.inf, "overflow"):
            array = rng.uniform(-1.0, 1.0, shape).astype(stored)
            if bad == "overflow":
                array[where] = np.asarray(largest / 1.5, dtype=stored)
                local = scale.copy()
                local[where[axis]] = 2.0  # finite in float64, beyond the target's range
            else:
                array[where] = bad
                local = scale
            got = scale_along(array, local, axis, np.dtype(target))
            assert got is None
            assert reference(array, local, axis, target) is None


def test_scale_along_keeps_products_just_below_the_overflow_threshold():
    # f16's largest finite value is 65504; 65519.99 rounds down to it and 65520 rounds up
    # to infinity: the rounding, not the float64 product, decides.
    array = np.array([[65504.0], [65504.0]], dtype=np.float32)
    below = scale_along(array, np.array([65519.99 / 65504.0]), 1, np.dtype(np.float16))
    assert below is not None and below[0, 0] == np.float16(65504.0)
    assert scale_along(array, np.array([65520.0 / 65504.0]), 1, np.dtype(np.float16)) is None


def test_dimensions_reads_every_integer_of_an_i64_array_attribute_in_order():
    from jaxlib.mlir import ir

    from stablehlo_bnfold.constants import dimensions

    with ir.Context():
        for values in ([], [3], [0, 2, 1, 5]):
            assert dimensions(ir.DenseI64ArrayAttr.get(values)) == values
