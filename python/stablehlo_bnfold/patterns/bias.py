"""Per-channel shifts after a linear op, merged into one bias.

    (L(x, K) + b) + c = L(x, K) + (b + c)
    (L(x, K) [+ b]) - c = L(x, K) + (b - c)

A shift never touches the weights, so these hold for any linear op, constant weights or
not. A lone `L + c` is already canonical and is left as it is.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.shapes import broadcasts_onto_own_shape
from ..constants import float_dtype
from .affine import chain_bias, combine, fold_affine, linear_chain
from .base import FoldRewriter, Outcome, Pattern
from .decomposed import match_per_channel

__all__ = [
    "FOLD_SHIFT_INTO_BIAS",
    "FOLD_SUBTRAHEND_INTO_BIAS",
    "REMOVE_IDENTITY_BROADCAST",
    "REMOVE_IDENTITY_RESHAPE",
]


def _fold_shift(op: ir.OpView, rw: FoldRewriter, sign: int) -> Outcome:
    if float_dtype(ir.RankedTensorType(op.result.type).element_type) is None:
        return rw.not_candidate(op, "element type is not f16, bf16, f32 or f64")
    orders = ((0, 1),) if sign < 0 else ((0, 1), (1, 0))
    if sign > 0 and not any(_has_bias_add(op.operands[i]) for i, _ in orders):
        # Decided before any per-channel analysis: most such adds are the ones this pass
        # builds, L + broadcast_in_dim(b).
        return rw.not_candidate(op, "no linear op plus a bias on either side")
    match = match_per_channel(op, orders, rw.in_graph)
    if match is None:
        return rw.not_candidate(op, "not a linear op plus a per-channel value")
    chain, feature, shift = match
    if sign > 0 and chain.bias_add is None:
        return rw.not_candidate(op, "already a single bias add")
    channels = ir.RankedTensorType(op.result.type).shape[feature]
    bias = chain_bias(chain, feature, channels, rw.in_graph)
    if isinstance(bias, str):
        return rw.skip(op, bias)
    if isinstance(shift, np.ndarray) and not np.all(np.isfinite(shift)):
        return rw.skip(op, "per-channel shift is not finite")
    ufunc = np.add if sign > 0 else np.subtract
    return fold_affine(rw, op, chain, feature, None, combine(rw, ufunc, bias, shift, op.result), None)


def _has_bias_add(value: ir.Value) -> bool:
    chain = linear_chain(value)
    return chain is not None and chain.bias_add is not None


def fold_shift_into_bias(op: stablehlo.AddOp, rw: FoldRewriter) -> Outcome:
    """(L(x, K) + b) + c = L(x, K) + (b + c)

    Holds when, in this order: the element type is f16, bf16, f32 or f64; one operand is
    L + b and the other, c, is per-channel along a dimension L produces; the add is the
    chain's only user (and the bias add is L's); b and c are finite; b + c is finite in
    the element type.
    """
    return _fold_shift(op, rw, +1)


def fold_subtrahend_into_bias(op: stablehlo.SubtractOp, rw: FoldRewriter) -> Outcome:
    """(L(x, K) [+ b]) - c = L(x, K) + (b - c)

    Flax's and torch-mlir's `y - mean`. Holds when the conditions of
    `fold_shift_into_bias` hold, with c the right operand and the bias add optional.
    """
    return _fold_shift(op, rw, -1)


def remove_identity_reshape(op: stablehlo.ReshapeOp, rw: FoldRewriter) -> Outcome:
    """reshape(reshape(y)) = y when the outer result type is y's type

    Equinox under vmap puts such a pair between a convolution and its batch norm. A
    row-major reshape never moves elements, so two that restore the shape are the
    identity. Applied only when y is a linear op or its bias add, to leave the rest of
    the module as it was.

    Holds when, in this order: the operand is a reshape; the outer result type equals
    the inner operand's type; that operand is a linear op or a linear op plus a bias.
    """
    inner = op.operand.owner
    if not isinstance(inner, stablehlo.ReshapeOp):
        return rw.not_candidate(op, "operand is not a reshape")
    source = inner.operand
    if source.type != op.result.type:
        return rw.not_candidate(op, "the reshapes do not restore the shape")
    if linear_chain(source) is None:
        return rw.not_candidate(op, "not after a linear op")
    return rw.replaced(op, source)


def remove_identity_broadcast(op: stablehlo.DynamicBroadcastInDimOp, rw: FoldRewriter) -> Outcome:
    """dynamic_broadcast_in_dim(y, shape(y), dims = [0, ..., r-1]) = y

    torch-mlir with a symbolic batch broadcasts a convolution's result onto its own shape
    before each step of a batch norm (`analysis.shapes.broadcasts_onto_own_shape` says
    which shape operands are provably y's shape). Applied only when y is a linear op or its
    bias add, to leave the rest of the module as it was.

    Holds when, in this order: the result type is y's type; the dimensions are in order
    and the shape operand is y's shape; y is a linear op or a linear op plus a bias.
    """
    if op.result.type != op.operand.type:
        return rw.not_candidate(op, "the broadcast changes the type")
    if not broadcasts_onto_own_shape(op):
        return rw.not_candidate(op, "the shape is not provably the operand's own")
    if linear_chain(op.operand) is None:
        return rw.not_candidate(op, "not after a linear op")
    return rw.replaced(op, op.operand)


FOLD_SHIFT_INTO_BIAS = Pattern("fold_shift_into_bias", stablehlo.AddOp, fold_shift_into_bias)
FOLD_SUBTRAHEND_INTO_BIAS = Pattern(
    "fold_subtrahend_into_bias", stablehlo.SubtractOp, fold_subtrahend_into_bias
)
REMOVE_IDENTITY_RESHAPE = Pattern(
    "remove_identity_reshape", stablehlo.ReshapeOp, remove_identity_reshape
)
REMOVE_IDENTITY_BROADCAST = Pattern(
    "remove_identity_broadcast", stablehlo.DynamicBroadcastInDimOp, remove_identity_broadcast
)
