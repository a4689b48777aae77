"""Batch norm as producers decompose it: per-channel multiply and divide after a linear op.

Flax, Haiku, Equinox, torch-mlir and TensorFlow never emit `batch_norm_inference`; they
compute (y - mean) * (scale * rsqrt(var + eps)) + offset, or divide by sqrt(var + eps),
with per-channel values reaching the activation through reshapes and broadcasts. The
subtract and add are handled by `bias.py`; the multiply and divide fold into the weights
here, so that any such chain ends as `L(x, K') + broadcast_in_dim(b')`.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..channels import linear_layout
from ..constants import float_dtype
from .affine import (
    LinearChain,
    PerChannel,
    chain_bias,
    combine,
    fold_affine,
    linear_chain,
    per_channel,
    weights_of,
)
from .base import FoldRewriter, Outcome, Pattern

__all__ = ["FOLD_DIVISOR_INTO_LINEAR", "FOLD_SCALE_INTO_LINEAR", "match_per_channel"]


def match_per_channel(
    op: ir.OpView, orders: tuple[tuple[int, int], ...], in_graph: bool
) -> tuple[LinearChain, int, PerChannel] | None:
    """(chain, feature, c) when, for one (chain operand, other operand) order, one operand
    of `op` is a linear chain (L, or L + b with b narrow along the feature: a residual
    add is none) and the other is per-channel along a dimension the chain's linear op
    produces from its weights; else None (not a candidate)."""
    shape = ir.RankedTensorType(op.result.type).shape
    for chain_index, other_index in orders:
        chain = linear_chain(op.operands[chain_index])
        if chain is None:
            continue
        for feature in range(len(shape)):
            if shape[feature] < 0 or linear_layout(chain.linear, feature) is None:
                continue
            if chain.bias_value is not None and per_channel(
                chain.bias_value, feature, shape[feature], True
            ) is None:
                # L + r with r an activation (a residual connection) is no bias add:
                # `r` is not even narrow, so this is no linear chain at all.
                continue
            factor = per_channel(op.operands[other_index], feature, shape[feature], in_graph)
            if factor is not None:
                return chain, feature, factor
    return None


def _fold_factor(op: ir.OpView, rw: FoldRewriter, divide: bool) -> Outcome:
    """The shared body of the multiply and divide patterns (their conditions are the same)."""
    if float_dtype(ir.RankedTensorType(op.result.type).element_type) is None:
        return rw.not_candidate(op, "element type is not f16, bf16, f32 or f64")
    orders = ((0, 1),) if divide else ((0, 1), (1, 0))
    match = match_per_channel(op, orders, rw.in_graph)
    if match is None:
        return rw.not_candidate(op, "not a linear op times a per-channel value")
    chain, feature, factor = match
    channels = ir.RankedTensorType(op.result.type).shape[feature]
    bias = chain_bias(chain, feature, channels, rw.in_graph)
    if isinstance(bias, str):
        return rw.skip(op, bias)
    weights = weights_of(chain, feature, rw.in_graph)
    if isinstance(weights, str):
        return rw.skip(op, weights)
    if isinstance(factor, np.ndarray):
        if not np.all(np.isfinite(factor)):
            return rw.skip(op, "per-channel factor is not finite")
        if divide and not np.all(factor != 0):
            return rw.skip(op, "per-channel divisor has a zero")
    if divide:
        factor = combine(rw, np.divide, np.ones(channels), factor, op.result)
    shift = combine(rw, np.multiply, bias, factor, op.result)
    return fold_affine(rw, op, chain, feature, factor, shift, weights)


def fold_scale_into_linear(op: stablehlo.MulOp, rw: FoldRewriter) -> Outcome:
    """(L(x, K) [+ b]) * c = L(x, K * c) [+ b * c]

    c is per-channel along a dimension L produces from its weights (for a convolution, the
    output-feature dimension); the multiply may have c on either side.

    Holds when, in this order: the element type is f16, bf16, f32 or f64; one operand is
    L or L + b and the other is per-channel; the multiply is the chain's only user (and L
    the bias add's); b is a finite per-channel constant; the weights are a float constant;
    c is finite; K * c and b * c are finite in their element types.
    """
    return _fold_factor(op, rw, divide=False)


def fold_divisor_into_linear(op: stablehlo.DivOp, rw: FoldRewriter) -> Outcome:
    """(L(x, K) [+ b]) / c = L(x, K * (1/c)) [+ b * (1/c)]

    Equinox's form: (y - mean) / sqrt(var + eps). 1/c is exact in float64 and the product
    is rounded once, so the folded weights are K / c correctly rounded to within one
    float64 rounding.

    Holds when, in this order: the conditions of `fold_scale_into_linear` with c the
    divisor (right operand only); and no c is zero.
    """
    return _fold_factor(op, rw, divide=True)


FOLD_SCALE_INTO_LINEAR = Pattern("fold_scale_into_linear", stablehlo.MulOp, fold_scale_into_linear)
FOLD_DIVISOR_INTO_LINEAR = Pattern(
    "fold_divisor_into_linear", stablehlo.DivOp, fold_divisor_into_linear
)
