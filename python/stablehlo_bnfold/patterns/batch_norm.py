"""`stablehlo.batch_norm_inference` after a convolution or dot_general.

The algebra. Inference batch norm is, per feature c of dimension `feature_index`,

    bn(y)[..c..] = (y - mean[c]) * scale[c] / sqrt(variance[c] + epsilon) + offset[c]
                 = y * s[c] + (offset[c] - mean[c] * s[c]),   s = scale / sqrt(variance + epsilon)

and a linear op L (convolution, dot_general) computes each output feature c from the weight
slice c only, so y * s = L(x, K * s) with s laid along the weights' feature dimension.
With a per-channel bias between them, y = L(x, K) + bias, the bias passes through:
bn(y) = L(x, K * s) + (offset + (bias - mean) * s).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.per_channel import Narrow
from ..constants import constant_f64, float_dtype
from .affine import (
    chain_bias,
    combine,
    fold_affine,
    linear_chain,
    square_root,
    weights_of,
)
from .base import FoldRewriter, Outcome, Pattern

__all__ = ["FOLD_BN_INTO_LINEAR", "fold_bn_into_linear"]


def fold_bn_into_linear(bn: stablehlo.BatchNormInferenceOp, rw: FoldRewriter) -> Outcome:
    """batch_norm_inference(L(x, K) [+ bias]) = L(x, K * s) + broadcast_in_dim(t)

    L is a convolution or dot_general, s = scale / sqrt(variance + epsilon) and
    t = offset + (bias - mean) * s, one value per feature; K is scaled along the weights'
    dimension that produces `feature_index`.

    Holds when, in this order: the element type is f16, bf16, f32 or f64; the feature
    dimension is static; the operand is L or L + bias; the
    bias add's only user is the batch norm and L's only user is the bias add or the batch
    norm; the bias is a finite per-channel constant; `feature_index` is a dimension the
    weights produce (a convolution's output-feature dimension); the weights are a constant
    of a supported float type; the four batch-norm operands are constants; they are
    finite; variance + epsilon > 0; K * s and t are finite in their element types. Other
    dimensions may be dynamic (a symbolic batch): the bias broadcast reads the shape of
    the new linear op.
    """
    result_type = ir.RankedTensorType(bn.result.type)
    if float_dtype(result_type.element_type) is None:
        return rw.skip(bn, "element type is not f16, bf16, f32 or f64")
    feature = bn.feature_index.value
    if result_type.is_dynamic_dim(feature):
        return rw.skip(bn, "feature dimension is dynamic")
    channels = result_type.shape[feature]
    chain = linear_chain(bn.operand)
    if chain is None:
        return rw.skip(bn, "operand is not a convolution or dot_general")
    bias = chain_bias(chain, feature, channels, rw.in_graph)
    if isinstance(bias, str):
        return rw.skip(bn, bias)
    weights = weights_of(chain, feature, rw.in_graph)
    if isinstance(weights, str):
        return rw.skip(bn, weights)
    stats = _statistics(bn, channels, rw.in_graph)
    if stats is None:
        return rw.skip(bn, "batch-norm operands are not constants")
    scale, offset, mean, variance = stats
    epsilon = np.full(channels, float(ir.FloatAttr(bn.epsilon).value))
    known = [a for a in stats if isinstance(a, np.ndarray)]
    if not all(np.all(np.isfinite(a)) for a in known):
        return rw.skip(bn, "batch-norm operands are not finite")
    denominator = combine(rw, np.add, variance, epsilon, bn.result)
    if isinstance(denominator, np.ndarray) and not np.all(denominator > 0):
        return rw.skip(bn, "variance + epsilon is not positive")
    s = combine(rw, np.divide, scale, square_root(rw, denominator, bn.result), bn.result)
    centred = combine(rw, np.subtract, bias, mean, bn.result)
    shift = combine(rw, np.add, offset, combine(rw, np.multiply, centred, s, bn.result), bn.result)
    return fold_affine(rw, bn, chain, feature, s, shift, weights)


def _statistics(bn: stablehlo.BatchNormInferenceOp, channels: int, in_graph: bool) -> list | None:
    """scale, offset, mean, variance as float64 constants or, with `in_graph`, [C] values."""
    stats = []
    for value in (bn.scale, bn.offset, bn.mean, bn.variance):
        constant = constant_f64(value)
        if constant is None and not in_graph:
            return None
        stats.append(constant if constant is not None else Narrow(value, 0))
    return stats


FOLD_BN_INTO_LINEAR = Pattern(
    "fold_bn_into_linear", stablehlo.BatchNormInferenceOp, fold_bn_into_linear
)
