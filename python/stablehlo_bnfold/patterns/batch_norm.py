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

from ..constants import float_dtype
from ..fold import reasons
from ..fold.affine_map import (
    batch_norm_scale,
    batch_norm_statistics,
    biased_linear,
    bias_and_weights,
    per_channel_op,
)
from ..fold.plan import build, plan_fold
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern

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
        return rw.skip(bn, reasons.ELEMENT_TYPE)
    feature = bn.feature_index.value
    if result_type.is_dynamic_dim(feature):
        return rw.skip(bn, reasons.FEATURE_DYNAMIC)
    channels = result_type.shape[feature]
    linear = biased_linear(bn.operand)
    if linear is None:
        return rw.skip(bn, reasons.NOT_LINEAR)
    found = bias_and_weights(linear, feature, channels, rw.fold_weight_arguments, rw.unrounded)
    if isinstance(found, Reason):
        return rw.skip(bn, found)
    bias, weights = found
    stats = batch_norm_statistics(bn, rw.fold_weight_arguments)
    if isinstance(stats, Reason):
        return rw.skip(bn, stats)
    s = batch_norm_scale(bn, stats, channels)
    if isinstance(s, Reason):
        return rw.skip(bn, s)
    _, offset, mean, _ = stats
    centred = per_channel_op(np.subtract, bias, mean, bn.result)
    shift = per_channel_op(np.add, offset, per_channel_op(np.multiply, centred, s, bn.result), bn.result)
    plan = plan_fold(
        bn, linear, feature, scale=s, shift=shift, weights=weights, larger_weights=rw.fold_larger_weight_arguments
    )
    if isinstance(plan, Reason):
        return rw.skip(bn, plan)
    return build(plan, rw)


FOLD_BN_INTO_LINEAR = Pattern(
    "fold_bn_into_linear", stablehlo.BatchNormInferenceOp, fold_bn_into_linear
)
