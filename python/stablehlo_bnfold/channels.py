"""Per-channel analysis: where the feature dimension of a linear op lives, and which values
vary only along it.

A *linear op* is a `stablehlo.convolution`, a `stablehlo.dot_general` or a `stablehlo.dot`
(TensorFlow's Dense; a dot_general contracting lhs's last dimension with rhs's first).
Its feature dimension is read from its dimension numbers, never assumed:

- convolution: the result's `output_feature_dimension`, scaled in the kernel (operand 1)
  along `kernel_output_feature_dimension`. This holds for grouped, depthwise,
  batch-grouped and transposed (lhs-dilated) convolutions alike: output feature `o` is
  computed from kernel slice `o` only.
- dot_general: result dimensions are `batch..., lhs free..., rhs free...`; a result
  dimension in the free range of one operand is scaled in that operand along the matching
  free dimension.

A value is *per-channel* for a result dimension when it is a constant (seen through
`broadcast_in_dim`, `dynamic_broadcast_in_dim`, `reshape` and `convert`) whose values vary
only along that dimension, or a small elementwise expression of such values (add,
subtract, multiply, divide, power, negate, sqrt, rsqrt), evaluated here in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, stablehlo

from .constants import constant_attr, dimensions, float_dtype, read_dense, round_to

__all__ = [
    "InputLayout",
    "broadcasts_onto_own_shape",
    "shape_read_from",
    "Narrow",
    "LinearLayout",
    "input_layouts",
    "per_channel_source",
    "linear_layout",
    "per_channel_f64",
    "per_feature_block_f64",
    "producer",
    "single_user",
]


def producer(value: ir.Value, op_class: type) -> ir.OpView | None:
    """The op of class `op_class` that defines `value`, else None (block arguments too)."""
    owner = value.owner
    if isinstance(owner, ir.OpView) and isinstance(owner, op_class):
        return owner
    return None


_SHAPE_READERS = ("shape.shape_of", "stablehlo.get_dimension_size", "tensor.dim")
"""Ops that read only the shape of their operand, never its elements."""


def single_user(value: ir.Value) -> bool:
    """Whether exactly one op reads `value`'s elements.

    Ops that read only its shape (`shape.shape_of`, `get_dimension_size`, `tensor.dim`)
    do not count when all that is computed from them is the shape of dynamic broadcasts
    that only that op reads: they go when it goes. torch-mlir's symbolic-batch chains
    read each value's shape for the broadcasts of the op after it.
    """
    readers, shape_readers = [], []
    for use in value.uses:
        owner = _operation(use.owner)
        (shape_readers if owner.name in _SHAPE_READERS else readers).append(owner)
    if len(readers) != 1:
        return False
    return all(_shape_only_for(reader, readers[0]) for reader in shape_readers)


def _operation(owner) -> ir.Operation:
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _shape_only_for(op: ir.Operation, reader: ir.Operation, depth: int = 0) -> bool:
    """Whether every value computed from `op` ends as the shape operand of a dynamic
    broadcast whose only reader is `reader`."""
    if depth > 16 or len(op.results) == 0:
        return False
    for result in op.results:
        for use in result.uses:
            user = _operation(use.owner)
            if user.name == "stablehlo.dynamic_broadcast_in_dim" and use.operand_number == 1:
                if any(_operation(u.owner) != reader for u in user.results[0].uses):
                    return False
            elif user == reader or not _shape_only_for(user, reader, depth + 1):
                return False
    return True


def broadcasts_onto_own_shape(op: stablehlo.DynamicBroadcastInDimOp) -> bool:
    """Whether `op` is the identity: it broadcasts its operand, with dimensions in order,
    onto a shape that is provably the operand's own.

    torch-mlir's lowering of implicitly broadcasting elementwise ops (through CHLO) with a
    symbolic batch broadcasts both operands onto `shape.broadcast(shape_of(y), [C, 1, 1])`;
    for y of shape [?, C, H, W] that is y's shape. The shape operand is seen through
    `shape.to_extent_tensor`, `arith.index_cast`, `tensor.cast` and integer `convert`, and
    is one of: `shape.shape_of(y)`; `shape.broadcast` of it with constant shapes that
    leave it unchanged (each extent, aligned right, 1 or y's static extent); the sizes of
    y's dimensions in order (`get_dimension_size` or `tensor.dim`, or constants equal to
    y's static extents) joined by `concatenate` or `tensor.from_elements`.

    >>> broadcasts_onto_own_shape(dynamic_broadcast_in_dim(y, shape_of(y), dims=[0, 1, 2, 3]))  # doctest: +SKIP
    True
    """
    operand = op.operand
    rank = ir.ShapedType(operand.type).rank
    if dimensions(op.broadcast_dimensions) != list(range(rank)):
        return False
    if ir.ShapedType(op.result.type).rank != rank:
        return False
    return _is_shape_of(op.output_dimensions, operand)


_SHAPE_CASTS = ("shape.to_extent_tensor", "arith.index_cast", "tensor.cast", "stablehlo.convert")


def _is_shape_of(shape: ir.Value, of: ir.Value) -> bool:
    owner = shape.owner
    if not isinstance(owner, ir.OpView):
        return False
    name, operands = owner.operation.name, list(owner.operation.operands)
    if name in _SHAPE_CASTS:
        return _integer_like(shape) and _is_shape_of(operands[0], of)
    if name == "shape.shape_of":
        return operands[0] == of
    if name == "shape.broadcast":
        return _broadcast_keeps_shape(operands, of)
    if name in ("stablehlo.concatenate", "tensor.from_elements"):
        return _joins_dimension_sizes(operands, of)
    return False


def _integer_like(value: ir.Value) -> bool:
    """An integer or index value or tensor (a shape or a dimension size)."""
    element = value.type
    if isinstance(element, ir.ShapedType):
        element = element.element_type
    return isinstance(element, (ir.IndexType, ir.IntegerType))


def _broadcast_keeps_shape(operands: list[ir.Value], of: ir.Value) -> bool:
    """shape.broadcast(shape(y), c1, ...) = shape(y) when each constant shape c, aligned
    right, has extent 1 or y's static extent at every dimension."""
    target = ir.ShapedType(of.type)
    own = [v for v in operands if _is_shape_of(v, of)]
    if not own:
        return False
    for value in operands:
        if any(value == v for v in own):
            continue
        extents = _constant_extents(value)
        if extents is None or len(extents) > target.rank:
            return False
        for offset, extent in enumerate(reversed(extents)):
            d = target.rank - 1 - offset
            if extent != 1 and (target.is_dynamic_dim(d) or target.shape[d] != extent):
                return False
    return True


def _constant_extents(value: ir.Value) -> list[int] | None:
    """A shape known at compile time: `shape.const_shape`, an integer constant (a scalar
    is one extent), or the shape of a value of static shape."""
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return None
    operation = owner.operation
    if operation.name in ("shape.const_shape", "arith.constant", "stablehlo.constant"):
        attr = operation.attributes["shape" if operation.name == "shape.const_shape" else "value"]
        if isinstance(attr, ir.IntegerAttr):  # a scalar extent (tensor.from_elements)
            return [attr.value]
        if not isinstance(attr, ir.DenseIntElementsAttr):
            return None
        return [int(v) for v in ir.DenseIntElementsAttr(attr)]
    if operation.name == "shape.shape_of":
        shaped = ir.ShapedType(operation.operands[0].type)
        return list(shaped.shape) if shaped.has_static_shape else None
    if operation.name in _SHAPE_CASTS and _integer_like(value):
        return _constant_extents(operation.operands[0])
    return None


def _joins_dimension_sizes(pieces: list[ir.Value], of: ir.Value) -> bool:
    """Piece i is the size of y's dimension i (read, or a constant equal to it)."""
    target = ir.ShapedType(of.type)
    if len(pieces) != target.rank:
        return False
    for d, piece in enumerate(pieces):
        size = _dimension_read(piece, of)
        if size == d:
            continue
        extents = _constant_extents(piece)
        if size is None and extents == [target.shape[d]] and not target.is_dynamic_dim(d):
            continue
        return False
    return True


def _dimension_read(value: ir.Value, of: ir.Value) -> int | None:
    """The dimension of `of` whose size `value` is (seen through reshapes and casts)."""
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return None
    operation = owner.operation
    if operation.name in _SHAPE_CASTS + ("stablehlo.reshape",):
        return _dimension_read(operation.operands[0], of)
    if operation.name == "stablehlo.get_dimension_size" and operation.operands[0] == of:
        return ir.IntegerAttr(operation.attributes["dimension"]).value
    if operation.name == "tensor.dim" and operation.operands[0] == of:
        index = operation.operands[1].owner
        if isinstance(index, ir.OpView) and index.operation.name == "arith.constant":
            return ir.IntegerAttr(index.operation.attributes["value"]).value
    return None


def shape_read_from(shape: ir.Value) -> list[ir.Value]:
    """The values whose shapes the integer shape value `shape` is computed from (the
    operands of the `shape.shape_of`, `get_dimension_size` and `tensor.dim` it reads)."""
    owner = shape.owner
    if not isinstance(owner, ir.OpView):
        return []
    operation = owner.operation
    if operation.name in _SHAPE_READERS:
        return [operation.operands[0]]
    found = []
    for operand in operation.operands:
        if _integer_like(operand) or operation.name in _SHAPE_CASTS:
            found += shape_read_from(operand)
    return found


@dataclass(frozen=True)
class LinearLayout:
    """Where a linear op's feature dimension lives.

    `output` is the result dimension; the op's operand number `weight_operand` holds the
    weights, scaled per feature along its dimension `weight_axis`.
    """

    output: int
    weight_operand: int
    weight_axis: int


def linear_layout(op: ir.OpView, feature: int) -> LinearLayout | None:
    """The layout that puts result dimension `feature` of a linear op in its weights.

    None when `feature` is not a dimension that a per-feature scale of one operand reaches
    (for a convolution: not its output-feature dimension).

    >>> linear_layout(conv, 3)   # NHWC x HWIO   # doctest: +SKIP
    LinearLayout(output=3, weight_operand=1, weight_axis=3)
    """
    if isinstance(op, stablehlo.ConvolutionOp):
        dims = stablehlo.ConvDimensionNumbers(op.dimension_numbers)
        if feature != dims.output_feature_dimension:
            return None
        return LinearLayout(feature, 1, dims.kernel_output_feature_dimension)
    if isinstance(op, (stablehlo.DotGeneralOp, stablehlo.DotOp)):
        return _dot_general_layout(op, feature)
    return None


def _dot_dimensions(op: ir.OpView) -> tuple[tuple[list[int], list[int]], tuple[list[int], list[int]]]:
    """((lhs batch, rhs batch), (lhs contracting, rhs contracting)) of a dot_general, or of
    a `stablehlo.dot` (TensorFlow's Dense): no batch, lhs's last dimension with rhs's
    first."""
    if isinstance(op, stablehlo.DotOp):
        return ([], []), ([ir.ShapedType(op.lhs.type).rank - 1], [0])
    dims = stablehlo.DotDimensionNumbers(op.dot_dimension_numbers)
    return (
        (list(dims.lhs_batching_dimensions), list(dims.rhs_batching_dimensions)),
        (list(dims.lhs_contracting_dimensions), list(dims.rhs_contracting_dimensions)),
    )


def _dot_general_layout(op: ir.OpView, feature: int) -> LinearLayout | None:
    (lhs_batch, rhs_batch), (lhs_contracting, rhs_contracting) = _dot_dimensions(op)
    lhs_free = _free_dims(op.lhs, lhs_batch, lhs_contracting)
    rhs_free = _free_dims(op.rhs, rhs_batch, rhs_contracting)
    index = feature - len(lhs_batch)
    if 0 <= index < len(lhs_free):
        return LinearLayout(feature, 0, lhs_free[index])
    index -= len(lhs_free)
    if 0 <= index < len(rhs_free):
        return LinearLayout(feature, 1, rhs_free[index])
    return None


def _free_dims(value: ir.Value, batch: list[int], contracting: list[int]) -> list[int]:
    rank = ir.ShapedType(value.type).rank
    return [d for d in range(rank) if d not in batch and d not in contracting]


def per_channel_f64(value: ir.Value, feature: int, size: int) -> np.ndarray | None:
    """The `size` float64 values of `value` along dimension `feature`, when it varies only
    along that dimension (a scalar or size-1 feature dimension is broadcast); else None.

    Looks through `broadcast_in_dim`, `reshape` and `convert` down to a `stablehlo.constant`.
    A convert rounds exactly as the op would.

    >>> per_channel_f64(broadcast_in_dim(bias, dims=[3]), feature=3, size=8)  # doctest: +SKIP
    array([...8 values...])
    """
    vector = _per_channel(value, feature)
    if vector is None or vector.shape[0] not in (1, size):
        return None
    return np.broadcast_to(vector, (size,))


_BINARY = {
    stablehlo.AddOp: np.add,
    stablehlo.SubtractOp: np.subtract,
    stablehlo.MulOp: np.multiply,
    stablehlo.DivOp: np.divide,
    stablehlo.PowOp: np.power,
}
_UNARY = {
    stablehlo.NegOp: np.negative,
    stablehlo.SqrtOp: np.sqrt,
    stablehlo.RsqrtOp: lambda v: 1.0 / np.sqrt(v),
}


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
    narrow = _source(value, feature)
    if narrow is None:
        return None
    shape = ir.ShapedType(narrow.value.type).shape
    if narrow.feature is not None and shape[narrow.feature] not in (1, size):
        return None
    return narrow


def _source(value: ir.Value, feature: int | None) -> Narrow | None:
    shaped = ir.ShapedType(value.type)
    owner = value.owner
    if isinstance(owner, (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp)):
        dims = dimensions(owner.broadcast_dimensions)
        return _source(owner.operand, dims.index(feature) if feature in dims else None)
    if isinstance(owner, stablehlo.ReshapeOp) and shaped.has_static_shape:
        operand_shape = ir.ShapedType(owner.operand.type).shape
        wide = [d for d, n in enumerate(operand_shape) if n != 1]
        # With `feature` None a single element is asked for: a reshape of a wide operand
        # ([1, C] -> [C] broadcast along a batch dimension) is not one.
        if all(n == 1 for d, n in enumerate(shaped.shape) if d != feature):
            if len(wide) <= 1:
                return _source(owner.operand, wide[0] if wide else None)
    if not shaped.has_static_shape:
        return None
    if any(n != 1 for d, n in enumerate(shaped.shape) if d != feature):
        return None
    return Narrow(value, feature)


def _per_channel(value: ir.Value, feature: int | None) -> np.ndarray | None:
    """Values along `feature` (None: the value must be uniform), as a 1-D float64 array."""
    shaped = ir.ShapedType(value.type)
    if feature is not None and shaped.is_dynamic_dim(feature):
        return None
    owner = value.owner
    if isinstance(owner, (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp)):
        return _through_broadcast(owner, feature)
    if type(owner) in _BINARY or type(owner) in _UNARY:
        return _elementwise(owner, feature)
    if isinstance(owner, stablehlo.ReshapeOp):
        return _through_reshape(owner, feature)
    if isinstance(owner, stablehlo.ConvertOp):
        inner = _per_channel(owner.operand, feature)
        dtype = float_dtype(shaped.element_type)
        if inner is None or dtype is None:
            return None
        rounded = round_to(dtype, inner)
        return None if rounded is None else rounded.astype(np.float64)
    scalar = _scalar_constant(value)
    if scalar is not None:
        return scalar
    attr = constant_attr(value)
    if attr is None:
        return None
    array = read_dense(attr)
    if array is None:
        return None
    return _vector_along(array, feature)


def _scalar_constant(value: ir.Value) -> np.ndarray | None:
    """A float scalar `arith.constant` (torch-mlir's epsilon) as a 1-element vector."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, ir.FloatAttr):
        return np.array([owner.value.value], dtype=np.float64)
    return None


def _elementwise(op: ir.OpView, feature: int | None) -> np.ndarray | None:
    """An elementwise op on per-channel values, evaluated in float64 (no intermediate
    rounding: the folded value is the exact expression, rounded once by the caller)."""
    if float_dtype(ir.ShapedType(op.result.type).element_type) is None:
        return None
    operands = []
    for operand in op.operands:  # stop at the first that is not per-channel
        vector = _per_channel(operand, feature)
        if vector is None:
            return None
        operands.append(vector)
    sizes = {o.shape[0] for o in operands} - {1}
    if len(sizes) > 1:
        return None
    with np.errstate(all="ignore"):  # non-finite results are refused by the patterns
        if type(op) in _UNARY:
            return _UNARY[type(op)](operands[0])
        return _BINARY[type(op)](operands[0], operands[1])


def _vector_along(array: np.ndarray, feature: int | None) -> np.ndarray | None:
    """The values along `feature` if `array` varies along no other dimension."""
    if array.size == 0:
        return None
    if feature is not None and all(n == 1 for d, n in enumerate(array.shape) if d != feature):
        # Varies along `feature` at most (a [C] or 1x1x1xC constant, as most are): it is
        # its own line, nothing to compare.
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


def _through_broadcast(op: ir.OpView, feature: int | None) -> np.ndarray | None:
    dims = dimensions(op.broadcast_dimensions)
    operand_feature = dims.index(feature) if feature in dims else None
    return _per_channel(op.operand, operand_feature)


def _through_reshape(op: stablehlo.ReshapeOp, feature: int | None) -> np.ndarray | None:
    """A reshape keeps a per-channel vector when the feature dimension is the only
    non-unit dimension on both sides (e.g. C -> 1x1x1xC)."""
    result_type = ir.ShapedType(op.result.type)
    operand_type = ir.ShapedType(op.operand.type)
    if not (result_type.has_static_shape and operand_type.has_static_shape):
        return None
    result_shape, operand_shape = result_type.shape, operand_type.shape
    if feature is None:
        return _per_channel(op.operand, None)
    if any(n != 1 for d, n in enumerate(result_shape) if d != feature):
        return None
    wide = [d for d, n in enumerate(operand_shape) if n != 1]
    if len(wide) > 1:
        return None
    if not wide:
        return _per_channel(op.operand, None)
    return _per_channel(op.operand, wide[0])


@dataclass(frozen=True)
class InputLayout:
    """Where a per-feature value on a linear op's input meets its weights.

    Operand `activation` is read per feature along its dimension `feature`; the weights
    (operand `weight_operand`) are contracted with it along `weight_axis`. A grouped
    convolution (`groups` > 1) reads input feature g * n + i, for an output feature o of
    group g = o // (outputs / groups), from weight index i along `weight_axis` and o along
    `weight_output_axis`. The weights' dimensions `kept` reach the result, in that order,
    as its dimensions `result_dims`; the others are summed over.
    """

    activation: int
    feature: int
    weight_operand: int
    weight_axis: int
    groups: int
    weight_output_axis: int | None
    kept: tuple[int, ...]
    result_dims: tuple[int, ...]


def input_layouts(op: ir.OpView) -> tuple[InputLayout, ...]:
    """The ways a per-feature value on an input of a linear op reaches its weights: for a
    convolution, its lhs along the input-feature dimension; for a dot_general, either
    operand along each of its contracting dimensions.

    >>> input_layouts(dense)   # x[B, 4] . W[4, 8], contracting 1 with 0   # doctest: +SKIP
    (InputLayout(activation=0, feature=1, weight_operand=1, weight_axis=0, groups=1,
                 weight_output_axis=None, kept=(1,), result_dims=(1,)), ...)
    """
    if isinstance(op, stablehlo.ConvolutionOp):
        dims = stablehlo.ConvDimensionNumbers(op.dimension_numbers)
        output = dims.kernel_output_feature_dimension
        return (
            InputLayout(
                activation=0,
                feature=dims.input_feature_dimension,
                weight_operand=1,
                weight_axis=dims.kernel_input_feature_dimension,
                groups=ir.IntegerAttr(op.feature_group_count).value,
                weight_output_axis=output,
                kept=(output,),
                result_dims=(dims.output_feature_dimension,),
            ),
        )
    if not isinstance(op, (stablehlo.DotGeneralOp, stablehlo.DotOp)):
        return ()
    batch, contracting = _dot_dimensions(op)
    free = [_free_dims(v, b, c) for v, b, c in zip(op.operands, batch, contracting)]
    layouts = []
    for activation, weights in ((0, 1), (1, 0)):
        # Result dimensions: batch..., lhs free..., rhs free...
        first_free = len(batch[0]) + (len(free[0]) if weights == 1 else 0)
        result_dims = tuple(range(len(batch[0]))) + tuple(
            range(first_free, first_free + len(free[weights]))
        )
        kept = tuple(batch[weights]) + tuple(free[weights])
        for feature, weight_axis in zip(contracting[activation], contracting[weights]):
            layouts.append(
                InputLayout(activation, feature, weights, weight_axis, 1, None, kept, result_dims)
            )
    return tuple(layouts)


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
        dims = list(owner.broadcast_dimensions)
        order = sorted(range(len(dims)), key=lambda i: dims[i])
        placed = [1] * shaped.rank
        for i in order:
            placed[dims[i]] = inner.shape[i]
        return np.broadcast_to(np.transpose(inner, order).reshape(placed), shaped.shape)
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
