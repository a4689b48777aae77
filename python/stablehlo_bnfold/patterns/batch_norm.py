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

from ..channels import linear_layout, per_channel_f64, single_user
from ..constants import constant_attr, constant_f64, float_dtype, read_dense, scale_along, round_to
from .base import FoldRewriter, Outcome, Pattern

__all__ = ["FOLD_BN_INTO_LINEAR", "fold_bn_into_linear"]

_LINEAR_OPS = (stablehlo.ConvolutionOp, stablehlo.DotGeneralOp)


def fold_bn_into_linear(bn: stablehlo.BatchNormInferenceOp, rw: FoldRewriter) -> Outcome:
    """batch_norm_inference(L(x, K) [+ bias]) = L(x, K * s) + broadcast_in_dim(t)

    L is a convolution or dot_general, s = scale / sqrt(variance + epsilon) and
    t = offset + (bias - mean) * s, one value per feature; K is scaled along the weights'
    dimension that produces `feature_index`.

    Holds when, in this order: the element type is f16, bf16, f32 or f64; the result shape
    is static; the operand is L, or L plus a per-channel constant bias whose only user is
    the batch norm; L's only user is that bias add or the batch norm; `feature_index` is a
    dimension the weights produce (a convolution's output-feature dimension); the weights
    are a constant of a supported float type; the four batch-norm operands are constants;
    they are finite; variance + epsilon > 0; K * s and t are finite in their element types.
    """
    result_type = ir.RankedTensorType(bn.result.type)
    dtype = float_dtype(result_type.element_type)
    if dtype is None:
        return rw.skip(bn, "element type is not f16, bf16, f32 or f64")
    feature = bn.feature_index.value
    if result_type.is_dynamic_dim(feature):
        return rw.skip(bn, "feature dimension is dynamic")
    if not result_type.has_static_shape:
        return rw.skip(bn, "result shape is dynamic")
    channels = result_type.shape[feature]

    linear, bias_add, bias = _linear_and_bias(bn.operand, feature, channels)
    if linear is None:
        return rw.skip(bn, "operand is not a convolution or dot_general")
    if bias_add is not None and not single_user(bias_add.result):
        return rw.skip(bn, "bias add result has other users")
    if bias_add is not None and bias is None:
        return rw.skip(bn, "bias is not a per-channel constant")
    if not single_user(linear.result):
        return rw.skip(bn, "producer result has other users")
    layout = linear_layout(linear, feature)
    if layout is None:
        return rw.skip(bn, "feature_index is not the output-feature dimension")
    weights_value = linear.operands[layout.weight_operand]
    weights_type = ir.RankedTensorType(weights_value.type)
    weights_dtype = float_dtype(weights_type.element_type)
    if weights_dtype is None:
        return rw.skip(bn, "weight element type is not f16, bf16, f32 or f64")
    weights_attr = constant_attr(weights_value)
    if weights_attr is None:
        return rw.skip(bn, "weights are not a constant")
    stats = [constant_f64(v) for v in (bn.scale, bn.offset, bn.mean, bn.variance)]
    if any(s is None for s in stats):
        return rw.skip(bn, "batch-norm operands are not constants")
    scale, offset, mean, variance = stats
    epsilon = float(ir.FloatAttr(bn.epsilon).value)
    bias = np.zeros(channels) if bias is None else bias
    if not all(np.all(np.isfinite(a)) for a in (scale, offset, mean, variance, bias)):
        return rw.skip(bn, "batch-norm operands are not finite")
    denominator = variance + epsilon
    if not np.all(denominator > 0):
        return rw.skip(bn, "variance + epsilon is not positive")

    s = scale / np.sqrt(denominator)
    new_weights = scale_along(read_dense(weights_attr), s, layout.weight_axis, weights_dtype)
    if new_weights is None:
        return rw.skip(bn, "folded weights overflow their element type")
    shift = round_to(dtype, offset + (bias - mean) * s)
    if shift is None:
        return rw.skip(bn, "folded bias overflows its element type")

    weights = rw.constant(new_weights, weights_type, weights_value.owner.location)
    scaled = rw.with_operand(linear, layout.weight_operand, weights)
    return rw.folded(bn, rw.add_per_feature(scaled, shift, feature, bn.location), linear)


def _linear_and_bias(
    value: ir.Value, feature: int, channels: int
) -> tuple[ir.OpView | None, stablehlo.AddOp | None, np.ndarray | None]:
    """(L, bias add, bias values) for `value` = L(...) or L(...) + per-channel bias.

    The bias values are None when the add's other operand is not a per-channel constant.
    """
    owner = value.owner
    if isinstance(owner, _LINEAR_OPS):
        return owner, None, None
    if not isinstance(owner, stablehlo.AddOp):
        return None, None, None
    for linear_value, bias_value in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
        if isinstance(linear_value.owner, _LINEAR_OPS):
            return linear_value.owner, owner, per_channel_f64(bias_value, feature, channels)
    return None, None, None


FOLD_BN_INTO_LINEAR = Pattern(
    "fold_bn_into_linear", stablehlo.BatchNormInferenceOp, fold_bn_into_linear
)
