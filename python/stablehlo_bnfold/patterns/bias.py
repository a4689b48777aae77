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
from ..fold import reasons
from ..fold.affine_map import CHAIN_OPS, all_finite, biased_linear, chain_bias, per_channel_op
from ..fold.plan import plan_fold
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern
from .decomposed import PATTERN_NAMES, fold_chain, linear_operands, match_per_channel

__all__ = [
    "FOLD_SHIFT_INTO_BIAS",
    "FOLD_SUBTRAHEND_INTO_BIAS",
    "REMOVE_IDENTITY_BROADCAST",
    "REMOVE_IDENTITY_RESHAPE",
]


def _fold_shift(op: ir.OpView, rw: FoldRewriter, sign: int) -> Outcome:
    # Each accessor is a call into the bindings: read once (`results[0]`: the generated
    # `result` reads `operation` first).
    result = op.results[0]
    result_type = ir.RankedTensorType(result.type)
    if float_dtype(result_type.element_type) is None:
        return rw.not_candidate(op, reasons.ELEMENT_TYPE)
    orders = ((0, 1),) if sign < 0 else ((0, 1), (1, 0))
    candidates = linear_operands(op, orders)
    if sign > 0 and not any(chain.bias_add is not None for chain, _ in candidates):
        # Decided before any per-channel analysis: most such adds are the ones this pass
        # builds, L + broadcast_in_dim(b).
        return rw.not_candidate(op, reasons.NO_BIAS_ADD)
    match = match_per_channel(op, orders, rw.fold_weight_arguments, candidates)
    if match is None:
        return rw.not_candidate(op, reasons.NOT_LINEAR_PLUS_PER_CHANNEL)
    linear, feature, shift, seen = match
    if sign > 0 and linear.bias_add is None:
        return rw.not_candidate(op, reasons.ALREADY_BIAS_ADD)
    channels = result_type.shape[feature]
    bias = chain_bias(linear, feature, channels, rw.fold_weight_arguments, seen, rw.unrounded)
    if isinstance(bias, Reason):
        return rw.skip(op, bias)
    if isinstance(shift, np.ndarray) and not all_finite(shift):
        return rw.skip(op, reasons.SHIFT_NOT_FINITE)
    ufunc = np.add if sign > 0 else np.subtract
    shift = per_channel_op(ufunc, bias, shift, result)
    plan = plan_fold(op, linear, feature, scale=None, shift=shift, weights=None)
    if isinstance(plan, Reason):
        return rw.skip(op, plan)
    return fold_chain(plan, rw)


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
        return rw.not_candidate(op, reasons.NOT_RESHAPE)
    source = inner.operand
    if source.type != op.result.type:
        return rw.not_candidate(op, reasons.RESHAPES_CHANGE_SHAPE)
    if biased_linear(source) is None:
        return rw.not_candidate(op, reasons.NOT_AFTER_LINEAR)
    return rw.removed(op, source)


def remove_identity_broadcast(op: stablehlo.DynamicBroadcastInDimOp, rw: FoldRewriter) -> Outcome:
    """dynamic_broadcast_in_dim(y, shape(y), dims = [0, ..., r-1]) = y

    torch-mlir with a symbolic batch broadcasts a convolution's result, and each step of a
    batch norm's, onto its own shape before the next step
    (`analysis.shapes.broadcasts_onto_own_shape` says which shape operands are provably
    y's shape). Applied only when y is a linear op, its bias add or a per-channel affine
    op (`CHAIN_OPS`: a step of a chain, which the input side then reads whole), to leave
    the rest of the module as it was.

    Holds when, in this order: the result type is y's type; the dimensions are in order
    and the shape operand is y's shape; y is a linear op, a linear op plus a bias, or a
    batch norm, add, subtract, multiply or divide.
    """
    if op.result.type != op.operand.type:
        return rw.not_candidate(op, reasons.BROADCAST_CHANGES_TYPE)
    if not broadcasts_onto_own_shape(op):
        return rw.not_candidate(op, reasons.SHAPE_NOT_OWN)
    if biased_linear(op.operand) is None and not isinstance(op.operand.owner, CHAIN_OPS):
        return rw.not_candidate(op, reasons.NOT_AFTER_LINEAR_OR_AFFINE)
    return rw.removed(op, op.operand)


FOLD_SHIFT_INTO_BIAS = Pattern(PATTERN_NAMES[stablehlo.AddOp], stablehlo.AddOp, fold_shift_into_bias)
FOLD_SUBTRAHEND_INTO_BIAS = Pattern(
    PATTERN_NAMES[stablehlo.SubtractOp], stablehlo.SubtractOp, fold_subtrahend_into_bias
)
REMOVE_IDENTITY_RESHAPE = Pattern(
    "remove_identity_reshape", stablehlo.ReshapeOp, remove_identity_reshape
)
REMOVE_IDENTITY_BROADCAST = Pattern(
    "remove_identity_broadcast", stablehlo.DynamicBroadcastInDimOp, remove_identity_broadcast
)
