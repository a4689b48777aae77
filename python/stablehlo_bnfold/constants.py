"""Constant evaluation: dense attributes <-> numpy, float64 math, and the one rounding step.

Every folded value is computed in float64 from the exact values stored in the module and
rounded once, by `round_to`, to the element type it will be stored in. Reading is zero-copy
for f16/f32/f64; bf16 has no buffer view in jaxlib's bindings, so it is read from the
attribute's printed form (hex for large tensors, shortest round-trip decimals for small ones,
both exact).
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, stablehlo

__all__ = [
    "broadcast_in_dim_array",
    "constant_f64",
    "constant_attr",
    "dense_attr",
    "dense_attr_of",
    "dimensions",
    "float_dtype",
    "product_f64",
    "read_dense",
    "round_to",
    "scale_along",
]

_BF16 = np.dtype(ml_dtypes.bfloat16)


def float_dtype(element_type: ir.Type) -> np.dtype | None:
    """The numpy dtype of a supported float element type (f16, bf16, f32, f64), else None.

    >>> float_dtype(ir.F32Type.get())   # doctest: +SKIP
    dtype('float32')
    """
    # The bindings hand out each element type as its own class (a type read from a value
    # is never a plain `ir.Type`): one look-up, against up to four `isinstance` calls and
    # a dtype made on every call.
    return _FLOAT_DTYPES.get(type(element_type))


_FLOAT_DTYPES = {
    ir.F32Type: np.dtype(np.float32),
    ir.F64Type: np.dtype(np.float64),
    ir.F16Type: np.dtype(np.float16),
    ir.BF16Type: _BF16,
}


def constant_attr(value: ir.Value) -> ir.DenseElementsAttr | None:
    """The dense attribute of the `stablehlo.constant` (or `arith.constant`, as torch-mlir
    emits for epsilon) that defines `value`, else None."""
    return dense_attr_of(value.owner)


def dense_attr_of(op) -> ir.DenseElementsAttr | None:
    """`constant_attr` of an op already read (a value's `owner`: an op or a block)."""
    if not isinstance(op, (stablehlo.ConstantOp, arith.ConstantOp)):
        return None
    attr = op.attributes["value"]  # what `op.value` reads, one Python call fewer
    if not isinstance(attr, ir.DenseElementsAttr):
        # dense_resource blobs cannot be read back through jaxlib's Python API.
        return None
    return ir.DenseElementsAttr(attr)


def read_dense(attr: ir.DenseElementsAttr) -> np.ndarray | None:
    """The values of a float dense attribute in their own dtype, with the attribute's shape.

    Zero-copy for f16/f32/f64 (a read-only view of the attribute's storage; a splat is
    broadcast without copying). None for element types other than f16, bf16, f32, f64.
    """
    shaped = attr.type  # a dense attribute's type is shaped (the bindings give its class)
    dtype = _FLOAT_DTYPES.get(type(shaped.element_type))  # `float_dtype`
    if dtype is None:
        return None
    shape = shaped.shape
    if dtype is _BF16:
        flat = _read_bf16(attr)
    else:
        flat = np.asarray(attr)
    if attr.is_splat:
        return np.broadcast_to(flat.reshape(-1)[:1].reshape(()), shape)
    return flat.reshape(shape)


_HEX = re.compile(r'^dense<"0x([0-9A-Fa-f]*)">')
_NUMBER = re.compile(r"[-+]?(?:inf|nan|0x[0-9A-Fa-f]+|[0-9.]+(?:[eE][-+]?[0-9]+)?)")


def _read_bf16(attr: ir.DenseElementsAttr) -> np.ndarray:
    """bf16 values from the printed attribute: hex bytes (large) or exact decimals (small)."""
    text = str(attr)
    match = _HEX.match(text)
    if match:
        return np.frombuffer(bytes.fromhex(match.group(1)), dtype="<u2").view(_BF16)
    body = text[len("dense<") : text.rindex(">", 0, text.rindex(":"))]
    values = []
    for token in _NUMBER.findall(body):
        if token.lower().startswith("0x"):
            values.append(np.array([int(token, 16)], dtype=np.uint16).view(_BF16)[0])
        else:
            values.append(float(token))
    # Decimals printed by MLIR round-trip exactly: the nearest bf16 is the stored value.
    return np.asarray(values, dtype=np.float64).astype(_BF16)


def constant_f64(value: ir.Value) -> np.ndarray | None:
    """The float64 values of a float `stablehlo.constant`, else None.

    >>> constant_f64(bn.scale)   # doctest: +SKIP
    array([1., 2.])
    """
    attr = constant_attr(value)
    if attr is None:
        return None
    array = read_dense(attr)
    return None if array is None else array.astype(np.float64)


def round_to(dtype: np.dtype, values: np.ndarray) -> np.ndarray | None:
    """Round float64 `values` once, to nearest-even, into `dtype`; None if any is not finite.

    bf16 is rounded through float32 with round-to-odd, which makes the two steps equal to
    one correct rounding (ml_dtypes' own float64 -> bf16 cast rounds twice).
    """
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported as None
        if dtype == _BF16:
            rounded = _round_to_odd_f32(values).astype(_BF16)
        else:
            rounded = values.astype(dtype)
    finite = np.isfinite(rounded)
    # Counted: on a [C] vector `.all()`'s reduction costs 0.7 us, about twice `isfinite` and
    # the count together (np.all's dispatch costs more still).
    if np.count_nonzero(finite) != finite.size:
        return None
    return rounded


def _round_to_odd_f32(values: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding toward zero, with the last bit set when inexact."""
    with np.errstate(over="ignore"):
        nearest = values.astype(np.float32)
    toward_zero = np.where(
        np.abs(nearest.astype(np.float64)) > np.abs(values),
        np.nextafter(nearest, np.float32(0)),
        nearest,
    )
    inexact = toward_zero.astype(np.float64) != values
    bits = toward_zero.view(np.uint32) | inexact.astype(np.uint32)
    return bits.view(np.float32)


_BLOCK = 1 << 17
"""Elements per block in `scale_along`: a float64 buffer of 1 MiB, which stays in cache."""


def scale_along(
    array: np.ndarray, scale: np.ndarray, axis: int, dtype: np.dtype
) -> np.ndarray | None:
    """`array * scale` with `scale` laid along `axis`, in float64, rounded once to `dtype`.

    Equal, bit for bit, to `round_to(dtype, array.astype(np.float64) * scale)`: each element
    is widened exactly to float64, multiplied once and rounded once. For f16/f32/f64
    targets that is done a block at a time through one float64 buffer that stays in
    cache: a float64 copy of the whole array is never made, and the plain float64 loops
    (widen, multiply, round) are faster than numpy's mixed-type multiply into a narrower
    output. None when a product is not finite in `dtype`.

    >>> scale_along(np.ones((3, 2), np.float32), np.array([2.0, 3.0]), 1, np.dtype(np.float32))
    array([[2., 3.],
           [2., 3.],
           [2., 3.]], dtype=float32)
    """
    scale = np.asarray(scale, dtype=np.float64)
    if dtype == _BF16:
        return round_to(dtype, product_f64(array, scale, axis))
    out = np.empty(array.shape, dtype=dtype)
    if out.size == 0:
        return out
    # Rows of a 2-D view, each multiplied by the scale: (outer, C) times the vector when
    # `axis` is the last non-unit axis, else (outer * C, inner) times one value per row.
    outer = int(np.prod(array.shape[:axis], dtype=np.int64))
    channels = array.shape[axis]
    inner = out.size // (outer * channels)
    if inner == 1:
        rows = (outer, channels)
        row_scale = None
    else:
        rows = (outer * channels, inner)
        row_scale = np.tile(scale, outer)[:, None]
    rows_in, rows_out = array.reshape(rows), out.reshape(rows)
    width = rows_in.shape[1]
    step = max(1, _BLOCK // width)
    # Both buffers are allocated once per call, not once per block.
    block = (min(step, rows_in.shape[0]), width)
    buffer = None if out.dtype == np.float64 else np.empty(block)
    finite = np.empty(block, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported as None
        for start in range(0, rows_in.shape[0], step):
            stop = min(start + step, rows_in.shape[0])
            block_out = rows_out[start:stop]
            product = block_out if buffer is None else buffer[: stop - start]
            product[...] = rows_in[start:stop]  # exact: every float type widens to float64
            factor = scale if row_scale is None else row_scale[start:stop]
            np.multiply(product, factor, out=product)
            if buffer is not None:
                block_out[...] = product  # the one rounding
            if not np.isfinite(block_out, out=finite[: stop - start]).all():
                return None
    return out


def product_f64(array: np.ndarray, scale: np.ndarray, axis: int) -> np.ndarray:
    """`array * scale` in float64, not rounded, `scale` laid along `axis` (a scalar
    anywhere): what `scale_along` rounds, as one float64 array.

    >>> product_f64(np.ones((2, 2), np.float32), np.array([2.0, 3.0]), 0).tolist()
    [[2.0, 2.0], [3.0, 3.0]]
    """
    scale = np.asarray(scale, dtype=np.float64)
    if scale.ndim:
        shape = [1] * array.ndim
        shape[axis] = scale.shape[0]
        scale = scale.reshape(shape)
    return array.astype(np.float64) * scale


def dense_attr(array: np.ndarray, tensor_type: ir.RankedTensorType) -> ir.DenseElementsAttr:
    """A dense attribute of `tensor_type` holding `array` (already in the element dtype)."""
    array = np.ascontiguousarray(array)
    if array.dtype == _BF16:
        array = array.view(np.uint16)
    return ir.DenseElementsAttr.get(
        array, type=tensor_type.element_type, shape=list(tensor_type.shape)
    )


def broadcast_in_dim_array(operand: np.ndarray, dims: list[int], shape: list[int]) -> np.ndarray:
    """What `broadcast_in_dim(operand, dims)` of result `shape` holds: a read-only view of
    `operand` (no copy), its dimension i laid along result dimension `dims[i]`.

    >>> broadcast_in_dim_array(np.array([1.0, 2.0]), [1], [3, 2]).tolist()
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    """
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    placed = [1] * len(shape)
    for i in order:
        placed[dims[i]] = operand.shape[i]
    view = np.transpose(operand, order).reshape(placed)
    if placed == list(shape):  # nothing to broadcast (np.broadcast_to costs some us)
        view.flags.writeable = False
        return view
    return np.broadcast_to(view, shape)


def dimensions(attr: ir.DenseI64ArrayAttr) -> list[int]:
    """The integers of an i64 array attribute (`broadcast_in_dim`'s `broadcast_dimensions`).

    Read by length and index: iterating the attribute ends with the bindings throwing and
    catching a C++ exception (4x slower per call, 2.4% of a pass's instructions in issue
    22's profile).

    >>> dimensions(op.broadcast_dimensions)   # doctest: +SKIP
    [3]
    """
    return [attr[i] for i in range(len(attr))]
