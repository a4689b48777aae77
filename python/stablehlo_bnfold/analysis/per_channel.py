"""Per-channel values: which values vary only along a feature dimension, and what they are.

A value is *per-channel* for a result dimension when it is a constant (seen through
`broadcast_in_dim`, `dynamic_broadcast_in_dim`, `reshape` and `convert`) whose values vary
only along that dimension, or a small elementwise expression of such values (add,
subtract, multiply, divide, power, negate, sqrt, rsqrt, a select on a compare of such
values or integer constants, a call of a function that returns one of its arguments'
such expression: Equinox's `where(count == 0, 1, 1 - momentum ** count)` through
`call @_where`), evaluated here in float64.
A per-channel value that is not a constant (weights passed as function arguments) is a
`Narrow` value broadcast to the activation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, func, stablehlo

from ..constants import (
    broadcast_in_dim_array,
    constant_attr,
    dense_attr_of,
    dimensions,
    float_dtype,
    read_dense,
    round_to,
)

__all__ = [
    "BINARY_UFUNC",
    "UNARY_UFUNC",
    "Narrow",
    "per_channel_f64",
    "per_channel_or_source",
    "per_channel_source",
    "per_feature_block_f64",
    "per_feature_block_source",
    "uniform_f64",
]


def per_channel_f64(value: ir.Value, feature: int, size: int) -> np.ndarray | None:
    """The `size` float64 values of `value` along dimension `feature`, when it varies only
    along that dimension (a scalar or size-1 feature dimension is broadcast); else None.

    Looks through `broadcast_in_dim`, `reshape` and `convert` down to a `stablehlo.constant`.
    A convert rounds exactly as the op would.

    >>> per_channel_f64(broadcast_in_dim(bias, dims=[3]), feature=3, size=8)  # doctest: +SKIP
    array([...8 values...])
    """
    return _sized(_per_channel(value, feature, quiet=False), size)


def _sized(vector: np.ndarray | None, size: int) -> np.ndarray | None:
    """`vector` (values along a feature, as `_per_channel` reads them) as `size` values:
    itself, or its one value broadcast; None if it has another length."""
    if vector is None or vector.shape[0] not in (1, size):
        return None
    if vector.shape[0] == size:
        # Always a new array here: made read-only, as `np.broadcast_to`'s view is (which
        # costs 4 us a call, a tenth of this analysis).
        vector.flags.writeable = False
        return vector
    return np.broadcast_to(vector, (size,))


def per_channel_or_source(
    value: ir.Value, feature: int, size: int, sources: bool
) -> np.ndarray | Narrow | None:
    """`per_channel_f64(value, feature, size)`, else, with `sources`,
    `per_channel_source(value, feature, size)`: the broadcasts both look through walked
    once (weights passed as arguments: the constant walk ends at an argument, and the
    source walk would start over)."""
    value, shaped, owner, feature, dynamic = _past_broadcasts(value, feature)
    if not dynamic:  # (where `_per_channel` finds none; `_source` goes on)
        vector = _sized(_read(value, shaped, owner, feature, quiet=False), size)
        if vector is not None or not sources:
            return vector
    return _source(value, feature, size) if sources else None


def uniform_f64(value: ir.Value) -> float | None:
    """The one float64 value every element of `value` holds (a scalar constant, seen
    through the same ops as `per_channel_f64`); else None.

    >>> uniform_f64(broadcast_in_dim(constant(-inf), dims=[]))  # doctest: +SKIP
    -inf
    """
    vector = _per_channel(value, None, quiet=False)
    return None if vector is None or vector.shape != (1,) else float(vector[0])


BINARY_UFUNC = {
    stablehlo.AddOp: np.add,
    stablehlo.SubtractOp: np.subtract,
    stablehlo.MulOp: np.multiply,
    stablehlo.DivOp: np.divide,
    stablehlo.PowOp: np.power,
}
"""The op -> ufunc table: each elementwise binary op this package evaluates on constants
or builds on per-channel values, and what it computes in float64."""
UNARY_UFUNC = {
    stablehlo.NegOp: np.negative,
    stablehlo.SqrtOp: np.sqrt,
    stablehlo.RsqrtOp: lambda v: 1.0 / np.sqrt(v),
}
"""The same for elementwise unary ops."""


@dataclass(frozen=True)
class Narrow:
    """A per-channel value not known at compile time: `value` has at most one non-unit
    dimension, `feature` (None: a single element), and is broadcast to the activation."""

    value: ir.Value
    feature: int | None


def per_channel_source(value: ir.Value, feature: int, size: int) -> Narrow | None:
    """The narrow value that `value` is broadcast from along dimension `feature`, seen
    through `broadcast_in_dim`, `dynamic_broadcast_in_dim` and `reshape`; else None.

    This is how weights passed as function arguments reach the activation:
    `broadcast_in_dim(reshape(%scale: C -> 1x1x1xC), dims = [0, 1, 2, 3])` has the source
    `Narrow(reshape(%scale), 3)`.
    """
    return _source(value, feature, size)


def _source(value: ir.Value, feature: int | None, size: int) -> Narrow | None:
    """`per_channel_source` along `feature` of `value` (None: a single element)."""
    value, shaped, owner, feature, _ = _past_broadcasts(value, feature, dynamic=None)
    kind = type(owner)  # (the registered class itself: see `_read`)
    if kind is stablehlo.ReshapeOp and shaped.has_static_shape:
        operand = owner.operands[0]
        wide = [d for d, n in enumerate(operand.type.shape) if n != 1]
        # With `feature` None a single element is asked for: a reshape of a wide operand
        # ([1, C] -> [C] broadcast along a batch dimension) is not one.
        if _unit_except(shaped.shape, feature):
            if len(wide) <= 1:
                return _source(operand, wide[0] if wide else None, size)
    if not shaped.has_static_shape:
        return None
    shape = shaped.shape
    if not _unit_except(shape, feature):
        return None
    if feature is not None and shape[feature] not in (1, size):
        return None
    return Narrow(value, feature)


def _per_channel(value: ir.Value, feature: int | None, quiet: bool = True) -> np.ndarray | None:
    """Values along `feature` (None: the value must be uniform), as a 1-D float64 array.
    Numpy's floating-point errors are ignored (non-finite values are refused by the
    patterns): `quiet` says they are already (the readers' own calls); else the reader
    is called under `np.errstate` (`_quietly`: the broadcasts walked to it touch no
    numpy, and most walks with weight arguments end at a block argument, where none is
    entered)."""
    value, shaped, owner, feature, dynamic = _past_broadcasts(value, feature)
    return None if dynamic else _read(value, shaped, owner, feature, quiet)


def _past_broadcasts(
    value: ir.Value, feature: int | None, dynamic: bool | None = False
) -> tuple[ir.Value, ir.ShapedType, object, int | None, bool | None]:
    """`value` seen through the broadcasts that produce it (most per-channel values are,
    walked here in a loop): the first value no broadcast produces, its type, its owner,
    the dimension `feature` maps to there, and whether `feature` was dynamic on the way
    (not asked with `dynamic` None: `_source` never needed it, and the bindings'
    `is_dynamic_dim` reads past a type's rank unchecked)."""
    # Each accessor is a call into the bindings: the type and the owner are read once.
    while True:
        shaped = value.type
        if dynamic is False and feature is not None and shaped.is_dynamic_dim(feature):
            dynamic = True
        owner = value.owner
        kind = type(owner)
        if kind is not stablehlo.BroadcastInDimOp and kind is not stablehlo.DynamicBroadcastInDimOp:
            return value, shaped, owner, feature, dynamic
        feature = _operand_dimension(owner.attributes["broadcast_dimensions"], feature)
        value = owner.operands[0]


def _read(
    value: ir.Value, shaped: ir.ShapedType, owner, feature: int | None, quiet: bool
) -> np.ndarray | None:
    """`_per_channel` of `value` (of type `shaped`, produced by `owner`), no broadcast's
    result: its owner's reader (found by its class: `value.owner` is the registered class
    itself; `isinstance` against each in turn cost a fifth of this analysis), or through
    the call a callee's argument stands for."""
    read = _READERS.get(type(owner))
    if read is not None:
        return read(owner, feature, shaped) if quiet else _quietly(read, owner, feature, shaped)
    if not isinstance(owner, ir.OpView) and _CALLS:
        with _in_caller(value) as operand:  # a callee's argument: the call's operand
            return None if operand is None else _per_channel(operand, feature, quiet)
    return None


@np.errstate(all="ignore")  # as a decorator: half the cost of a `with` block (numpy 2)
def _quietly(
    read, owner: ir.OpView, feature: int | None, shaped: ir.ShapedType
) -> np.ndarray | None:
    """`read(owner, feature, shaped)` with numpy's floating-point errors ignored."""
    return read(owner, feature, shaped)


def _operand_dimension(dims: ir.DenseI64ArrayAttr, feature: int | None) -> int | None:
    """The operand dimension a broadcast's `broadcast_dimensions` `dims` lays along result
    dimension `feature`; None if none does (or `feature` is None). Read by index, as
    `dimensions` reads them; first the one a broadcast that adds no dimension lays there."""
    if feature is not None:
        count = len(dims)
        if feature < count and dims[feature] == feature:
            return feature  # (the dimensions are distinct: the only one)
        for d in range(count):
            if dims[d] == feature:
                return d
    return None


def _unit_except(shape: list[int] | tuple[int, ...], feature: int | None) -> bool:
    """Whether every dimension of `shape` other than `feature` (None, or one out of range:
    every dimension) has size 1."""
    ones = shape.count(1)
    if feature is None or not 0 <= feature < len(shape):
        return ones == len(shape)
    return ones + (shape[feature] != 1) == len(shape)


def _through_convert(
    op: stablehlo.ConvertOp, feature: int | None, shaped: ir.ShapedType
) -> np.ndarray | None:
    """A convert (of type `shaped`) of a per-channel value (or of integer constants),
    rounded to its float type as the op rounds."""
    operand = op.operands[0]
    inner = _per_channel(operand, feature)
    if inner is None:
        inner = _integers_along(operand, feature)
    dtype = float_dtype(shaped.element_type)
    if inner is None or dtype is None:
        return None
    rounded = round_to(dtype, inner)
    return None if rounded is None else rounded.astype(np.float64)


def _constant(op: ir.OpView, feature: int | None, shaped: ir.ShapedType) -> np.ndarray | None:
    """A float constant's values along `feature` (a scalar `arith.constant`, torch-mlir's
    epsilon, as a 1-element vector). `shaped`, the result's type, is not read: the
    attribute's own type is."""
    if type(op) is arith.ConstantOp:
        scalar = _scalar_constant(op)
        if scalar is not None:
            return scalar
    attr = dense_attr_of(op)
    if attr is None:
        return None
    array = read_dense(attr)
    if array is None:
        return None
    return _vector_along(array, feature)


def _integers_along(value: ir.Value, feature: int | None) -> np.ndarray | None:
    """An integer constant's values along `feature`, in float64, where each is exact there
    (|v| <= 2**53): torch-mlir writes a scalar as `arith.constant dense<6> : tensor<1xi64>`
    converted to the float type (hardswish's 6, addmm's alpha). The convert above rounds
    them to its type as the op would. Booleans (i1) are not numbers here."""
    if not isinstance(value.owner, ir.OpView):
        with _in_caller(value) as operand:
            return None if operand is None else _integers_along(operand, feature)
    attr = constant_attr(value)
    if attr is None:
        return None
    element = ir.ShapedType(attr.type).element_type
    if not isinstance(element, ir.IntegerType) or element.width == 1:
        return None
    array = np.asarray(attr)
    if attr.is_splat:
        array = np.broadcast_to(array.reshape(-1)[:1].reshape(()), tuple(ir.ShapedType(attr.type).shape))
    if array.size and np.max(np.abs(array.astype(np.float64))) > 2.0**53:
        return None
    return _vector_along(array.astype(np.float64), feature)


_CALLS: list[tuple[ir.Block, tuple[ir.Value, ...]]] = []
"""The calls `_through_call` is evaluating, innermost last: the callee's block and the
call's operands, which its arguments stand for."""


def _through_call(
    call: func.CallOp, feature: int | None, shaped: ir.ShapedType
) -> np.ndarray | None:
    """The value the function `call` calls returns, evaluated with its arguments bound to
    the call's operands (`_in_caller`); None where its body is not one block returning one
    value, or calls nest more than 8 deep."""
    from .passage import callee_body  # (passage reads this module)

    body = callee_body(call)
    if body is None or len(_CALLS) >= 8:
        return None
    _CALLS.append((body[0], tuple(call.operands)))
    try:
        return _per_channel(body[1], feature)
    finally:
        _CALLS.pop()


@contextlib.contextmanager
def _in_caller(argument: ir.Value) -> Iterator[ir.Value | None]:
    """The call operand that the block argument `argument` of the innermost evaluated
    call's callee stands for, read in the caller (that call set aside meanwhile); None
    for any other block argument (a function's own: no constant)."""
    if not _CALLS or argument.owner != _CALLS[-1][0]:
        yield None
        return
    frame = _CALLS.pop()
    try:
        yield frame[1][ir.BlockArgument(argument).arg_number]
    finally:
        _CALLS.append(frame)


_COMPARE = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal,
}


def _select(
    op: stablehlo.SelectOp, feature: int | None, shaped: ir.ShapedType
) -> np.ndarray | None:
    """select(pred, a, b) of type `shaped` on per-channel values, pred a compare of
    per-channel values or integer constants (`_predicate`). A scalar pred (jnp.where on a
    scalar condition) must be uniform: it has no dimension `feature` (reading one past its
    rank crashed the bindings)."""
    pred_type = ir.ShapedType(op.pred.type)
    pred = _predicate(op.pred, feature if pred_type.rank == shaped.rank else None)
    on_true = _per_channel(op.on_true, feature) if pred is not None else None
    on_false = _per_channel(op.on_false, feature) if on_true is not None else None
    if on_false is None or len({pred.shape[0], on_true.shape[0], on_false.shape[0]} - {1}) > 1:
        return None
    return np.where(pred, on_true, on_false)


def _predicate(value: ir.Value, feature: int | None) -> np.ndarray | None:
    """A boolean per-channel value: a `compare` (not TOTALORDER, which orders NaNs and
    signed zeros as numpy does not) of per-channel values or integer constants (exact in
    float64 up to 2**53)."""
    if not isinstance(value.owner, ir.OpView):
        with _in_caller(value) as operand:
            return None if operand is None else _predicate(operand, feature)
    op = value.owner
    if not isinstance(op, stablehlo.CompareOp):
        return None
    kind = op.compare_type
    if kind is not None and "TOTALORDER" in str(kind):
        return None
    direction = str(op.comparison_direction).rsplit(" ", 1)[-1].rstrip(">")
    sides = []
    for operand in (op.lhs, op.rhs):
        number = _per_channel(operand, feature)
        if number is None:
            number = _integers_along(operand, feature)
        if number is None:
            return None
        sides.append(number)
    if direction not in _COMPARE or len({s.shape[0] for s in sides} - {1}) > 1:
        return None
    return _COMPARE[direction](sides[0], sides[1])


def _scalar_constant(owner: ir.OpView) -> np.ndarray | None:
    """A float scalar `arith.constant` (torch-mlir's epsilon) as a 1-element vector."""
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, ir.FloatAttr):
        return np.array([owner.value.value], dtype=np.float64)
    return None


def _elementwise(op: ir.OpView, feature: int | None, shaped: ir.ShapedType) -> np.ndarray | None:
    """An elementwise op (of type `shaped`) on per-channel values, evaluated in float64
    (no intermediate rounding: the folded value is the exact expression, rounded once by
    the caller)."""
    if float_dtype(shaped.element_type) is None:
        return None
    operands = op.operands
    first = _per_channel(operands[0], feature)  # stop at the first that is not per-channel
    if first is None:
        return None
    kind = type(op)
    if kind in UNARY_UFUNC:
        return UNARY_UFUNC[kind](first)
    second = _per_channel(operands[1], feature)
    if second is None:
        return None
    if first.shape[0] != second.shape[0] and 1 not in (first.shape[0], second.shape[0]):
        return None
    return BINARY_UFUNC[kind](first, second)


def _vector_along(array: np.ndarray, feature: int | None) -> np.ndarray | None:
    """The values along `feature` if `array` varies along no other dimension."""
    if array.size == 0:
        return None
    if feature == 0 and array.ndim == 1:  # a [C] constant, as most are
        return array.astype(np.float64)
    if feature is not None and _unit_except(array.shape, feature):
        # Varies along `feature` at most (a 1x1x1xC constant): it is its own line, nothing
        # to compare.
        return array.reshape(-1).astype(np.float64)
    if 0 in array.strides:  # a splat, as read_dense returns it: one element repeated
        keep = (slice(0, 1) if s == 0 and d != feature else slice(None)
                for d, s in enumerate(array.strides))
        array = array[tuple(keep)]
    if feature is None:
        first = array.reshape(-1)[:1]
        # NaN != NaN: compared with ==, a uniform NaN would read as "not uniform", and the
        # value would be folded in the graph, past the patterns' finiteness checks.
        same = np.isnan(array) if np.isnan(first[0]) else array == first[0]
        return first.astype(np.float64) if np.all(same) else None
    index = tuple(slice(None) if d == feature else slice(0, 1) for d in range(array.ndim))
    line = array[index]
    # Most constants that are not per-channel differ at their last element: look there
    # before comparing the whole array.
    last, line_last = array[(-1,) * array.ndim], line[(-1,) * array.ndim]
    if last != line_last and not (np.isnan(last) and np.isnan(line_last)):
        return None
    # NaNs compare equal only where the line has them, so without any the plain
    # comparison (no isnan passes) gives the same answer.
    equal_nan = bool(np.isnan(line).any())
    if not np.array_equal(array, np.broadcast_to(line, array.shape), equal_nan=equal_nan):
        return None
    return line.reshape(-1).astype(np.float64)


def _through_reshape(
    op: stablehlo.ReshapeOp, feature: int | None, shaped: ir.ShapedType
) -> np.ndarray | None:
    """A reshape (to `shaped`) keeps a per-channel vector when the feature dimension is
    the only non-unit dimension on both sides (e.g. C -> 1x1x1xC)."""
    operand = op.operands[0]
    operand_type = operand.type
    if not (shaped.has_static_shape and operand_type.has_static_shape):
        return None
    if feature is None:
        return _per_channel(operand, None)
    if not _unit_except(shaped.shape, feature):
        return None
    wide = [d for d, n in enumerate(operand_type.shape) if n != 1]
    if len(wide) > 1:
        return None
    if not wide:
        return _per_channel(operand, None)
    return _per_channel(operand, wide[0])


_READERS = {
    **{kind: _elementwise for kind in (*BINARY_UFUNC, *UNARY_UFUNC)},
    stablehlo.SelectOp: _select,
    func.CallOp: _through_call,
    stablehlo.ReshapeOp: _through_reshape,
    stablehlo.ConvertOp: _through_convert,
    stablehlo.ConstantOp: _constant,
    arith.ConstantOp: _constant,
}
"""How `_per_channel` reads a value, by its producer's class and with the value's type:
through the ops a per-channel value is seen through (broadcasts are walked by
`_per_channel` itself), evaluating the elementwise ones, down to constants."""


def per_feature_block_f64(value: ir.Value, dims: tuple[int, ...]) -> np.ndarray | None:
    """The float64 values of `value` along its dimensions `dims`, in that order, when it is
    a constant (seen through `broadcast_in_dim`, `reshape` and `convert`) that varies
    along no other dimension; else None. A bias over several result dimensions: Flax's
    DenseGeneral adds a [heads, head_dim] bias to each of attention's q, k, v.

    >>> per_feature_block_f64(broadcast_in_dim(bias_hd, dims=[2, 3]), (2, 3))  # doctest: +SKIP
    array([[...], [...]])   # [H, D]
    """
    array = _constant_array(value)
    if array is None or array.ndim <= max(dims, default=-1):
        return None
    index = tuple(slice(None) if d in dims else slice(0, 1) for d in range(array.ndim))
    line = array[index]
    if not np.array_equal(array, np.broadcast_to(line, array.shape), equal_nan=True):
        return None
    ascending = sorted(dims)
    block = line.reshape([array.shape[d] for d in ascending])
    return np.transpose(block, [ascending.index(d) for d in dims]).astype(np.float64)


def per_feature_block_source(value: ir.Value, dims: tuple[int, ...]) -> ir.Value | None:
    """The value that `value` is broadcast from (through `broadcast_in_dim` and reshapes
    that add or drop unit dimensions) when it varies along `dims` only and holds exactly
    that block: its shape is `value`'s sizes along `dims`, in that order; else None. A
    bias over several result dimensions passed as an argument: Flax's DenseGeneral adds
    `broadcast_in_dim(reshape(%bias: HxD -> 1x1xHxD))` to attention's q, k, v.

    >>> per_feature_block_source(broadcast_in_dim(reshape(%b), dims=[0, 1, 2, 3]), (2, 3))  # doctest: +SKIP
    %b   # tensor<HxDxf32>
    """
    shape = ir.RankedTensorType(value.type).shape
    sizes = [shape[d] for d in dims]
    if any(n <= 1 for n in sizes):
        return None  # a unit or dynamic block dimension cannot be told from the others
    current, along = value, list(dims)
    while True:
        owner = current.owner
        if isinstance(owner, stablehlo.BroadcastInDimOp):
            mapped = dimensions(owner.broadcast_dimensions)
            if any(d not in mapped for d in along):
                return None
            along = [mapped.index(d) for d in along]
        elif isinstance(owner, stablehlo.ReshapeOp):
            result_shape = ir.RankedTensorType(current.type).shape
            if [d for d, n in enumerate(result_shape) if n != 1] != along:
                return None
            along = [d for d, n in enumerate(ir.RankedTensorType(owner.operand.type).shape) if n != 1]
        else:
            break
        current = owner.operand
        current_shape = ir.RankedTensorType(current.type).shape
        if [current_shape[d] for d in along] != sizes or any(
            n != 1 for d, n in enumerate(current_shape) if d not in along
        ):
            return None
    return current if along == list(range(len(sizes))) else None


def _constant_array(value: ir.Value) -> np.ndarray | None:
    """`value` as an array (broadcasts are views, not copies), when it is a float constant
    seen through `broadcast_in_dim`, `reshape` and `convert` (rounded as the op rounds)."""
    shaped = ir.ShapedType(value.type)
    if not shaped.has_static_shape:
        return None
    owner = value.owner
    if isinstance(owner, stablehlo.BroadcastInDimOp):
        inner = _constant_array(owner.operand)
        if inner is None:
            return None
        return broadcast_in_dim_array(inner, dimensions(owner.broadcast_dimensions), shaped.shape)
    if isinstance(owner, stablehlo.ReshapeOp):
        inner = _constant_array(owner.operand)
        return None if inner is None else np.reshape(inner, shaped.shape)
    if isinstance(owner, stablehlo.ConvertOp):
        inner = _constant_array(owner.operand)
        dtype = float_dtype(shaped.element_type)
        if inner is None or dtype is None:
            return None
        rounded = round_to(dtype, inner)
        return None if rounded is None else rounded
    attr = constant_attr(value)
    return None if attr is None else read_dense(attr)
