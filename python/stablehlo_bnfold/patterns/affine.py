"""The canonical form every pattern drives toward, and the one way to rewrite into it.

Canonical form: `L(x, K) [+ bias]`, where L is a convolution or dot_general and the bias is
per-channel along L's feature dimension. A per-channel affine map folds into it:

    (L(x, K) + b) * s + t = L(x, K * s) + (b * s + t)

since each output feature c of L is computed from weight slice c only. When s is all ones
the weights are left as they are and need not be constants.

Per-channel values are `PerChannel`: a float64 vector when every input is a constant (the
exact path: float64 math, one rounding, overflow refused), or IR when some input is a
function argument (weights passed as arguments, the usual `jax.export` of `model.apply`):
then the folded weights `K * broadcast_in_dim(s)` and the C-sized bias are computed in the
graph, in the element type, and equal the original for finite parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..channels import (
    LinearLayout,
    Narrow,
    linear_layout,
    per_channel_f64,
    per_channel_source,
    single_user,
)
from ..constants import constant_attr, float_dtype, read_dense, round_to, scale_along
from .base import FoldRewriter, Outcome

__all__ = [
    "LinearChain",
    "PerChannel",
    "Weights",
    "chain_bias",
    "chain_users_reason",
    "combine",
    "fold_affine",
    "linear_chain",
    "per_channel",
    "square_root",
    "weights_of",
]

LINEAR_OPS = (stablehlo.ConvolutionOp, stablehlo.DotGeneralOp)

PerChannel = Union[np.ndarray, Narrow, ir.Value]
"""A per-channel vector: float64 values, a narrow IR value, or an IR vector of shape [C]."""


@dataclass(frozen=True)
class LinearChain:
    """`value = linear(...)` or `value = bias_add(linear(...), bias)`, seen from `value`."""

    linear: ir.OpView
    bias_add: stablehlo.AddOp | None
    bias_value: ir.Value | None


def linear_chain(value: ir.Value) -> LinearChain | None:
    """The linear op (and bias add) that `value` is, else None. Structure only: users,
    constants and dimensions are checked by `chain_users_reason`, `chain_bias` and
    `weights_of`."""
    owner = value.owner
    if isinstance(owner, LINEAR_OPS):
        return LinearChain(owner, None, None)
    if isinstance(owner, stablehlo.AddOp):
        for linear_value, bias_value in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            if isinstance(linear_value.owner, LINEAR_OPS):
                return LinearChain(linear_value.owner, owner, bias_value)
    return None


def per_channel(value: ir.Value, feature: int, channels: int, in_graph: bool) -> PerChannel | None:
    """`value` as a per-channel vector along `feature`: float64 constants if it is one,
    else (with `in_graph`) the narrow IR value it is broadcast from; None if neither."""
    constant = per_channel_f64(value, feature, channels)
    if constant is not None:
        return constant
    return per_channel_source(value, feature, channels) if in_graph else None


def chain_bias(
    chain: LinearChain, feature: int, channels: int, in_graph: bool = False
) -> PerChannel | str:
    """The chain's bias per channel (zeros without a bias add), or why it has none."""
    if chain.bias_value is None:
        return np.zeros(channels)
    bias = per_channel(chain.bias_value, feature, channels, in_graph)
    if bias is None:
        return "bias is not a per-channel constant"
    if isinstance(bias, np.ndarray) and not np.all(np.isfinite(bias)):
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
    """The weights of a linear op and where its features lie in them; `values` is None
    when they are not a constant (weights passed as arguments)."""

    layout: LinearLayout
    value: ir.Value
    values: np.ndarray | None
    tensor_type: ir.RankedTensorType
    dtype: np.dtype


def weights_of(linear: ir.OpView, feature: int, in_graph: bool = False) -> Weights | str:
    """The weights that produce result dimension `feature`, or why they can't be scaled."""
    layout = linear_layout(linear, feature)
    if layout is None:
        return "feature_index is not the output-feature dimension"
    value = linear.operands[layout.weight_operand]
    tensor_type = ir.RankedTensorType(value.type)
    dtype = float_dtype(tensor_type.element_type)
    if dtype is None:
        return "weight element type is not f16, bf16, f32 or f64"
    attr = constant_attr(value)
    if attr is None and not in_graph:
        return "weights are not a constant"
    values = None if attr is None else read_dense(attr)
    return Weights(layout, value, values, tensor_type, dtype)


_OPS = {
    np.add: stablehlo.AddOp,
    np.subtract: stablehlo.SubtractOp,
    np.multiply: stablehlo.MulOp,
    np.divide: stablehlo.DivOp,
}


def combine(rw: FoldRewriter, ufunc: np.ufunc, a: PerChannel, b: PerChannel, like: ir.Value) -> PerChannel:
    """`ufunc(a, b)`: in float64 when both are constants, else as an op on [C] vectors in
    the element type of `like` (built before the root op)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        with np.errstate(all="ignore"):
            return ufunc(a, b)
    element_type = ir.ShapedType(like.type).element_type
    channels = _channels(a, b)
    return rw.elementwise(_OPS[ufunc], rw.vector(a, channels, element_type), rw.vector(b, channels, element_type))


def square_root(rw: FoldRewriter, a: PerChannel, like: ir.Value) -> PerChannel:
    """sqrt(a): in float64 for constants, else a `stablehlo.sqrt` on the [C] vector."""
    if isinstance(a, np.ndarray):
        with np.errstate(all="ignore"):
            return np.sqrt(a)
    element_type = ir.ShapedType(like.type).element_type
    vector = rw.vector(a, _channels(a), element_type)
    return rw.unary(stablehlo.SqrtOp, vector)


def _channels(*values: PerChannel) -> int:
    for value in values:
        if isinstance(value, np.ndarray):
            return value.shape[0]
    for value in values:
        if isinstance(value, Narrow) and value.feature is not None:
            return ir.ShapedType(value.value.type).shape[value.feature]
        if not isinstance(value, Narrow):
            return ir.ShapedType(value.type).shape[0]
    return 1


def fold_affine(
    rw: FoldRewriter,
    root: ir.OpView,
    chain: LinearChain,
    feature: int,
    scale: PerChannel | None,
    shift: PerChannel,
    weights: Weights | None,
) -> Outcome:
    """Replace `root` (= chain * scale + shift, per channel) by the canonical form.

    `scale` None means all ones: the linear op is reused as it is. `shift` already holds
    b * s + t. On the exact path, refuses with a reason when a folded value is not finite
    in its element type; a bias that is exactly zero adds nothing.
    """
    channels = ir.RankedTensorType(root.result.type).shape[feature]
    exact = isinstance(shift, np.ndarray) and (
        scale is None or (isinstance(scale, np.ndarray) and weights.values is not None)
    )
    if exact:
        return _fold_exact(rw, root, chain, feature, scale, shift, weights)
    linear_result = chain.linear.result
    if scale is not None:
        factor = rw.vector(scale, channels, weights.tensor_type.element_type)
        broadcast = rw.broadcast(factor, weights.value, weights.layout.weight_axis)
        scaled = rw.elementwise(stablehlo.MulOp, weights.value, broadcast)
        linear_result = rw.with_operand(chain.linear, weights.layout.weight_operand, scaled)
    bias = rw.vector(shift, channels, ir.ShapedType(root.result.type).element_type)
    if bias is None:
        return rw.skip(root, "folded bias overflows its element type")
    like = _full_size_operand(root, chain)
    added = rw.elementwise(stablehlo.AddOp, linear_result, rw.broadcast(bias, like, feature))
    return rw.folded(root, added, chain.linear)


def _full_size_operand(root: ir.OpView, chain: LinearChain) -> ir.Value:
    """A value of the root's shape that is not part of the chain, to read a dynamic shape
    from (reading it from the linear op would give that op a second user)."""
    chain_value = (chain.bias_add or chain.linear).result
    for operand in root.operands:
        if operand != chain_value and operand.type == root.result.type:
            return operand
    return chain_value


def _fold_exact(
    rw: FoldRewriter,
    root: ir.OpView,
    chain: LinearChain,
    feature: int,
    scale: np.ndarray | None,
    shift: np.ndarray,
    weights: Weights | None,
) -> Outcome:
    dtype = float_dtype(ir.RankedTensorType(root.result.type).element_type)
    if scale is not None:
        new_weights = scale_along(weights.values, scale, weights.layout.weight_axis, weights.dtype)
        if new_weights is None:
            return rw.skip(root, "folded weights overflow their element type")
    bias = round_to(dtype, shift)
    if bias is None:
        return rw.skip(root, "folded bias overflows its element type")
    linear_result = chain.linear.result
    if scale is not None:
        constant = rw.constant(new_weights, weights.tensor_type, weights.value.owner.location)
        linear_result = rw.with_operand(chain.linear, weights.layout.weight_operand, constant)
    if chain.bias_add is None and not np.any(bias):
        return rw.folded(root, linear_result, chain.linear)
    like = _full_size_operand(root, chain)
    added = rw.add_per_feature(linear_result, bias, feature, like)
    return rw.folded(root, added, chain.linear)
