"""Symbolic-shape provenance: which values an integer shape value is computed from, and
whether a dynamic broadcast's target shape is provably its operand's own (the identity
torch-mlir's lowering of implicitly broadcasting elementwise ops writes with a symbolic
batch).
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..constants import dimensions

__all__ = ["SHAPE_READERS", "broadcasts_onto_own_shape", "shape_read_from", "static_elements"]

SHAPE_READERS = ("shape.shape_of", "stablehlo.get_dimension_size", "tensor.dim")
"""Ops that read only the shape of their operand, never its elements."""


def static_elements(value: ir.Value) -> int:
    """The number of elements of `value`'s ranked tensor type, a dynamic dimension
    counted as 1 (the smallest it can be), for comparing the sizes of two tensors."""
    shaped = ir.RankedTensorType(value.type)
    count = 1
    for d, n in enumerate(shaped.shape):
        if not shaped.is_dynamic_dim(d):
            count *= n
    return count


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
    if operation.name in SHAPE_READERS:
        return [operation.operands[0]]
    found = []
    for operand in operation.operands:
        if _integer_like(operand) or operation.name in _SHAPE_CASTS:
            found += shape_read_from(operand)
    return found
