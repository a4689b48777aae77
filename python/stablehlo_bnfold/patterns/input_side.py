"""Batch norm *before* a linear op: a per-feature affine map on its input folds into it.

The algebra. Let the input of a linear op L be x * s + t, with s and t per feature along a
dimension that L contracts with its weights K (a dot_general's contracting dimension, a
convolution's input-feature dimension). L is linear in its input, and input feature f
meets only the weights' slice f along that dimension, so

    L(x * s + t, K) = L(x * s, K) + L(t, K) = L(x, K * s) + L(t, K)

where L(t, K), t broadcast over the input, is a constant: the weights summed against t
over every contracted dimension (for a convolution, also over the window). In a grouped
convolution output feature o reads only the input features of its group, so s and t are
laid over the weights group by group.

For a convolution that holds only when every window tap reads the input: zero padding and
lhs dilation insert zeros, which the original shifts by t and the folded one would not.
There the scale still folds, moving the shift in front of it,

    conv(x * s + t, K) = conv(x + t / s, K * s)     when no s is zero,

since zero padding commutes with a per-feature scale (0 * s = 0); the shift stays, and the
report says why at the add that keeps it. A shift alone before such a convolution has
nothing to fold and is not a candidate.

The affine map is any chain of `batch_norm_inference` (constant statistics) and
per-feature add, subtract, multiply and divide by constants, each read only by the next
(Flax's `(x - mean) * inv + bias`, input normalization `(x - mean) / std`, a BNNeck before
a classifier). Everything is computed in float64 from the stored values and rounded once.
The weights must be constants.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..channels import InputLayout, input_layouts, single_user
from ..constants import constant_attr, float_dtype, read_dense, round_to, scale_along
from .affine import AFFINE_OPS, NARROW_WEIGHTS, affine_step
from .base import FoldRewriter, Outcome, Pattern

__all__ = [
    "FOLD_INPUT_AFFINE_INTO_CONV",
    "FOLD_INPUT_AFFINE_INTO_DOT_GENERAL",
    "fold_input_affine_into_conv",
    "fold_input_affine_into_dot_general",
]


@dataclass(frozen=True)
class _Affine:
    """`value = x * scale + shift` per feature, computed by the ops from `top` down."""

    top: ir.OpView
    x: ir.Value
    scale: np.ndarray
    shift: np.ndarray
    batch_norm: bool
    """Whether one of the ops is a `batch_norm_inference`."""


def fold_input_affine_into_conv(conv: stablehlo.ConvolutionOp, rw: FoldRewriter) -> Outcome:
    """conv(x * s + t, K) = conv(x, K * s) + broadcast_in_dim(sum(K * t))

    s and t are per feature along the input's feature dimension; K is scaled along its
    input-feature dimension (group by group for a grouped convolution), and sum(K * t) has
    one value per output feature. When the convolution pads its input or dilates it (lhs
    dilation), only the scale folds: conv(x + t / s, K * s).

    Holds when, in this order: the input is a chain of per-feature affine ops (batch norm
    with constant, finite statistics and variance + epsilon > 0, or add, subtract,
    multiply, divide by finite per-feature constants, no divisor zero; a value with other
    users ends the chain); the chain's result is read only by the convolution; shapes are
    static; the kernel is a finite constant of a supported float type at least as wide as
    the activation and result; with padding or lhs dilation, s is not all ones (a shift
    alone is not a candidate) and has no zero; the bias (or t / s) and K * s are finite in
    their element types; with padding or lhs dilation, rounding K * s, magnified by t / s,
    errs by at most eps of sum |K * t| per output feature.
    """
    return _fold_input_affine(conv, rw)


def fold_input_affine_into_dot_general(dot: stablehlo.DotGeneralOp, rw: FoldRewriter) -> Outcome:
    """dot_general(x * s + t, W) = dot_general(x, W * s) + broadcast_in_dim(W . t)

    s and t are per feature along a contracting dimension of either operand; W, the other
    operand, is scaled along the matching contracting dimension, and W . t (t contracted
    with W over every contracting dimension) varies along W's batch and free dimensions.

    Holds when, in this order: the operand is a chain of per-feature affine ops (as for
    `fold_input_affine_into_conv`) read only by the next; the chain's result is read only
    by the dot_general; shapes are static; W is a finite constant of a supported float
    type at least as wide as the activation and result; W . t and W * s are finite in their
    element types.
    """
    return _fold_input_affine(dot, rw)


_CHAIN_OPS = (stablehlo.BatchNormInferenceOp, *AFFINE_OPS)


def _fold_input_affine(linear: ir.OpView, rw: FoldRewriter) -> Outcome:
    # Every linear op of a model comes here; most read a relu or another linear op, so
    # look at the operands' producers before reading any dimension numbers.
    if not any(isinstance(v.owner, _CHAIN_OPS) for v in linear.operands):
        return rw.not_candidate(linear, "input is not a per-feature affine map")
    for layout in input_layouts(linear):
        activation = linear.operands[layout.activation]
        shaped = ir.RankedTensorType(activation.type)
        if float_dtype(shaped.element_type) is None or shaped.is_dynamic_dim(layout.feature):
            continue
        affine = _input_affine(activation, layout.feature, shaped.shape[layout.feature])
        if isinstance(affine, str):
            return rw.skip(activation.owner, affine)
        if affine is not None:
            return _fold(linear, layout, affine, rw)
    return rw.not_candidate(linear, "input is not a per-feature affine map")


def _input_affine(value: ir.Value, feature: int, channels: int) -> _Affine | str | None:
    """The affine ops that compute `value`, as x * scale + shift in float64; None when its
    op is not one; a reason when it is one that cannot be folded."""
    top, scale, shift = None, np.ones(channels), np.zeros(channels)
    batch_norm = False
    while top is None or single_user(value):
        step = _step(value.owner, feature, channels)
        if step is None or (isinstance(step, str) and top is not None):
            break  # x is `value`: the chain ends here
        if isinstance(step, str):
            return step
        down, s, t = step
        # value = (down * s + t) * scale + shift
        scale, shift = scale * s, shift + t * scale
        if top is None:
            top = value.owner
        batch_norm = batch_norm or isinstance(value.owner, stablehlo.BatchNormInferenceOp)
        value = down
    if top is None:
        return None
    return _Affine(top, value, scale, shift, batch_norm)


def _step(op: ir.OpView, feature: int, channels: int) -> tuple[ir.Value, np.ndarray, np.ndarray] | str | None:
    """(y, s, t) with op = y * s + t per feature, y the operand that is not a constant."""
    if isinstance(op, stablehlo.BatchNormInferenceOp):
        sides = ((op.operand, None),)
    elif isinstance(op, (stablehlo.SubtractOp, stablehlo.DivOp)):
        sides = ((op.lhs, op.rhs),)
    elif isinstance(op, (stablehlo.AddOp, stablehlo.MulOp)):
        sides = ((op.lhs, op.rhs), (op.rhs, op.lhs))
    else:
        return None
    for down, constant in sides:
        step = affine_step(op, feature, channels, constant)
        if isinstance(step, str):
            return step
        if step is not None:
            return (down, *step)
    return None


def _fold(linear: ir.OpView, layout: InputLayout, affine: _Affine, rw: FoldRewriter) -> Outcome:
    top = affine.top
    activation = linear.operands[layout.activation]
    if not single_user(activation):
        return rw.skip(top, "affine result has other users")
    result_type = ir.RankedTensorType(linear.result.type)
    activation_type = ir.RankedTensorType(activation.type)
    if not (result_type.has_static_shape and activation_type.has_static_shape):
        return rw.skip(top, "result shape is dynamic")
    weights = linear.operands[layout.weight_operand]
    weights_type = ir.RankedTensorType(weights.type)
    dtype = float_dtype(weights_type.element_type)
    result_dtype = float_dtype(result_type.element_type)
    activation_dtype = float_dtype(activation_type.element_type)
    if result_dtype is None:
        return rw.skip(top, "element type is not f16, bf16, f32 or f64")
    if dtype is None:
        return rw.skip(top, "weight element type is not f16, bf16, f32 or f64")
    if dtype.itemsize < max(activation_dtype.itemsize, result_dtype.itemsize):
        # x * s is computed in the wider type, with the weights exact: rounding W * s to
        # the weights' type would add an error the original never made.
        return rw.skip(top, NARROW_WEIGHTS)
    attr = constant_attr(weights)
    if attr is None and not affine.batch_norm:
        # Most adds and multiplies before a linear op with weights that are arguments
        # (attention's q * scale, a bias add) are no batch norm: not candidates.
        return rw.not_candidate(top, "weights are not a constant")
    if attr is None:
        return rw.skip(top, "weights are not a constant")
    stored = read_dense(attr)
    if not np.all(np.isfinite(stored)):
        return rw.skip(top, "weights are not finite")

    x, moved, bias = affine.x, None, None
    if not np.any(affine.shift) or _reads_every_tap(linear):
        shift = _along_input(layout, affine.shift, stored.shape)
        bias = round_to(result_dtype, _contract(stored, shift, layout))
        if bias is None:
            return rw.skip(top, "folded bias overflows its element type")
    elif np.all(affine.scale == 1):
        return rw.not_candidate(top, "a shift alone cannot pass the zeros of padding or lhs dilation")
    elif not np.all(affine.scale != 0):
        return rw.skip(top, "convolution pads or dilates its input and a scale is zero")
    else:
        with np.errstate(all="ignore"):
            moved = round_to(activation_dtype, affine.shift / affine.scale)
        if moved is None:
            return rw.skip(top, "shift over scale overflows its element type")
    scaled = _scaled(stored, layout, affine.scale, dtype)
    if scaled is None:
        return rw.skip(top, "folded weights overflow their element type")
    if moved is not None and _magnified(scaled, stored, layout, affine):
        return rw.skip(top, "folded weights underflow their element type")

    if moved is not None:
        x = rw.add_per_feature(x, moved, layout.feature, x)
        kept = x.owner
    new_weights = rw.constant(scaled, weights_type, weights.owner.location)
    result = rw.with_operands(linear, {layout.activation: x, layout.weight_operand: new_weights})
    if bias is not None and np.any(bias):
        bias_type = ir.RankedTensorType.get(list(bias.shape), result_type.element_type)
        constant = rw.constant(bias, bias_type, top.location)
        broadcast = rw.broadcast(constant, result, list(layout.result_dims))
        result = rw.elementwise(stablehlo.AddOp, result, broadcast)
    outcome = rw.folded(linear, result, linear, folded=top)
    if moved is not None:
        rw.note(kept, _SHIFT_KEPT)
    return outcome


_SHIFT_KEPT = "convolution pads or dilates its input: the shift cannot pass its zeros"


def _scaled(stored: np.ndarray, layout: InputLayout, scale: np.ndarray, dtype: np.dtype):
    """The weights times `scale` laid over their input features, in float64, rounded once
    to `dtype`; None if a product is not finite there."""
    if layout.groups == 1:
        return scale_along(stored, scale, layout.weight_axis, dtype)
    with np.errstate(over="ignore"):
        return round_to(dtype, stored.astype(np.float64) * _along_input(layout, scale, stored.shape))


def _magnified(scaled: np.ndarray, stored: np.ndarray, layout: InputLayout, affine: _Affine) -> bool:
    """Whether, in conv(x + t / s, K * s), the rounding of K * s times t / s errs by more
    than one rounding (eps) of sum |K * t| for some output feature.

    A rounding of K * s to a normal number errs by at most eps / 2 of it, which t / s
    turns into eps / 2 of |K * t|: never more. Among subnormals (a tiny scale, as in a
    near-dead channel) the error is absolute, and t / s magnifies it past what the
    original computes."""
    exact = stored.astype(np.float64) * _along_input(layout, affine.scale, stored.shape)
    magnifier = np.abs(_along_input(layout, affine.shift / affine.scale, stored.shape))
    error = _contract(np.abs(scaled.astype(np.float64) - exact), magnifier, layout)
    size = _contract(np.abs(stored), np.abs(_along_input(layout, affine.shift, stored.shape)), layout)
    return bool(np.any(error > float(ml_dtypes.finfo(scaled.dtype).eps) * size))


def _reads_every_tap(linear: ir.OpView) -> bool:
    """Whether every window tap reads an input element: a dot_general, or a convolution
    without positive padding and without lhs dilation (both insert zeros)."""
    if not isinstance(linear, stablehlo.ConvolutionOp):
        return True
    padding = linear.padding
    if padding is not None and np.any(np.asarray(ir.DenseIntElementsAttr(padding)) > 0):
        return False
    dilation = linear.lhs_dilation
    return dilation is None or all(d == 1 for d in dilation)


def _along_input(layout: InputLayout, vector: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`vector` (one value per input feature) laid over weights of `shape`, broadcastable:
    along `weight_axis`, or for a grouped convolution along (weight_axis,
    weight_output_axis), output feature o reading the inputs of its group."""
    laid = [1] * len(shape)
    axis = layout.weight_axis
    if layout.groups == 1:
        laid[axis] = shape[axis]
        return vector.reshape(laid)
    output = layout.weight_output_axis
    per_group, outputs = shape[axis], shape[output]
    group_of = np.arange(outputs) // (outputs // layout.groups)
    table = vector.reshape(layout.groups, per_group)[group_of]  # [outputs, per_group]
    if axis < output:
        table = table.T
    laid[axis], laid[output] = per_group, outputs
    return table.reshape(laid)


def _contract(kernel: np.ndarray, shift: np.ndarray, layout: InputLayout) -> np.ndarray:
    """L(t, K): the weights times the laid-out shift, in float64, summed over every
    dimension that does not reach the result; its dimensions in `layout.kept` order."""
    summed_axes = tuple(d for d in range(kernel.ndim) if d not in layout.kept)
    summed = (kernel.astype(np.float64) * shift).sum(axis=summed_axes)
    ascending = sorted(layout.kept)
    return np.transpose(summed, [ascending.index(d) for d in layout.kept])


FOLD_INPUT_AFFINE_INTO_CONV = Pattern(
    "fold_input_affine_into_conv", stablehlo.ConvolutionOp, fold_input_affine_into_conv
)
FOLD_INPUT_AFFINE_INTO_DOT_GENERAL = Pattern(
    "fold_input_affine_into_dot_general",
    stablehlo.DotGeneralOp,
    fold_input_affine_into_dot_general,
)
