"""The canonical form every pattern drives toward, and the one way to rewrite into it.

Canonical form: `L(x, K) [+ bias]`, where L is a convolution or dot_general and the bias is
a per-channel constant along L's feature dimension. A per-channel affine map folds into it:

    (L(x, K) + b) * s + t = L(x, K * s) + (b * s + t)

since each output feature c of L is computed from weight slice c only. When s is all ones
the weights are left as they are and need not be constants.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..channels import LinearLayout, linear_layout, per_channel_f64, single_user
from ..constants import constant_attr, float_dtype, read_dense, round_to, scale_along
from .base import FoldRewriter, Outcome

__all__ = ["LinearChain", "fold_affine", "linear_chain", "weights_of"]

LINEAR_OPS = (stablehlo.ConvolutionOp, stablehlo.DotGeneralOp)


@dataclass(frozen=True)
class LinearChain:
    """`value = linear(...)` or `value = bias_add(linear(...), bias)`, seen from `value`."""

    linear: ir.OpView
    bias_add: stablehlo.AddOp | None
    bias_value: ir.Value | None


def linear_chain(value: ir.Value) -> LinearChain | None:
    """The linear op (and bias add) that `value` is, else None. Structure only: users,
    constants and dimensions are checked by `weights_of` and `chain_bias`."""
    owner = value.owner
    if isinstance(owner, LINEAR_OPS):
        return LinearChain(owner, None, None)
    if isinstance(owner, stablehlo.AddOp):
        for linear_value, bias_value in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            if isinstance(linear_value.owner, LINEAR_OPS):
                return LinearChain(linear_value.owner, owner, bias_value)
    return None


def chain_bias(chain: LinearChain, feature: int, channels: int) -> np.ndarray | str:
    """The chain's bias per channel (zeros without a bias add), or why it has none."""
    if chain.bias_value is None:
        return np.zeros(channels)
    bias = per_channel_f64(chain.bias_value, feature, channels)
    if bias is None:
        return "bias is not a per-channel constant"
    if not np.all(np.isfinite(bias)):
        return "bias is not finite"
    return bias


def chain_users_reason(chain: LinearChain) -> str | None:
    """Why the chain cannot be rewritten in place because something else reads it."""
    if chain.bias_add is not None and not single_user(chain.bias_add.result):
        return "bias add result has other users"
    if not single_user(chain.linear.result):
        return "producer result has other users"
    return None


@dataclass(frozen=True)
class Weights:
    """The constant weights of a linear op and where its features lie in them."""

    layout: LinearLayout
    values: np.ndarray
    tensor_type: ir.RankedTensorType
    dtype: np.dtype
    location: ir.Location


def weights_of(linear: ir.OpView, feature: int) -> Weights | str:
    """The constant weights that produce result dimension `feature`, or why there are none."""
    layout = linear_layout(linear, feature)
    if layout is None:
        return "feature_index is not the output-feature dimension"
    value = linear.operands[layout.weight_operand]
    tensor_type = ir.RankedTensorType(value.type)
    dtype = float_dtype(tensor_type.element_type)
    if dtype is None:
        return "weight element type is not f16, bf16, f32 or f64"
    attr = constant_attr(value)
    if attr is None:
        return "weights are not a constant"
    return Weights(layout, read_dense(attr), tensor_type, dtype, value.owner.location)


def fold_affine(
    rw: FoldRewriter,
    root: ir.OpView,
    chain: LinearChain,
    feature: int,
    scale: np.ndarray | None,
    shift: np.ndarray,
    weights: Weights | None,
) -> Outcome:
    """Replace `root` (= chain * scale + shift, per channel) by the canonical form.

    `scale` None means all ones: the linear op is reused as it is. `shift` already holds
    b * s + t in float64. Refuses, with a reason, when a folded value is not finite in its
    element type.
    """
    result_type = ir.RankedTensorType(root.result.type)
    dtype = float_dtype(result_type.element_type)
    linear_result = chain.linear.result
    if scale is not None:
        new_weights = scale_along(weights.values, scale, weights.layout.weight_axis, weights.dtype)
        if new_weights is None:
            return rw.skip(root, "folded weights overflow their element type")
    bias = round_to(dtype, shift)
    if bias is None:
        return rw.skip(root, "folded bias overflows its element type")
    if scale is not None:
        constant = rw.constant(new_weights, weights.tensor_type, weights.location)
        linear_result = rw.with_operand(chain.linear, weights.layout.weight_operand, constant)
    return rw.folded(root, rw.add_per_feature(linear_result, bias, feature, root.location), chain.linear)
