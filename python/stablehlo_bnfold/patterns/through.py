"""A per-channel affine map moved across an op it commutes with, into a linear op.

The first such op is ReLU, `maximum(v, 0)`. For a per-channel scale s > 0,

    relu(v) * s = max(v, 0) * s = max(v * s, 0 * s) = relu(v * s)

exactly, element by element: multiplying by a positive number is monotonic and maps 0 to
0, so it commutes with the maximum in every rounding mode (the product of the relu's
result is the relu of the product, both rounded once). A negative s turns the maximum into
a minimum; s = 0 would hold, but a zero scale is a dead channel we do not rewrite;
a scale that is not a constant has no sign to check. A shift does not pass a relu
(relu(v) + t is not relu(v + t)), so it stays behind it as one add. With the scale moved
into the linear op before the relu (`batch_norm.py`'s algebra),

    relu(L(x, K) [+ b]) * s + t = relu(L(x, K * s) [+ b * s]) + t

which is Keras' `Conv2D(activation="relu")` followed by `BatchNormalization` (or a
`Dense`), and any framework's conv -> ReLU -> BN.

Max-pooling commutes the same way: a `reduce_window` whose body is `maximum` takes the
maximum of each window, and for s > 0 per channel, with a window of one along the
channels, maxpool(v) * s = maxpool(v * s) exactly. Its init value pads the windows and
starts each maximum; -inf (or the type's lowest value) is the identity of the maximum
before and after scaling, where any other value would be scaled on one side only. So the
scale also passes a VGG or ResNet stem, conv -> ReLU -> max-pool -> BN. Issue 21 extends
this module to the other ops a per-channel map commutes with (LeakyReLU, mean, reshape,
concat).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from ..analysis.layouts import linear_layout
from ..analysis.passage import data_operands as _data_operands
from ..analysis.passage import max_pool_refused as _max_pool_refused
from ..analysis.per_channel import per_channel_f64
from ..analysis.users import single_user
from ..constants import constant_attr, float_dtype
from ..fold import reasons
from ..fold.affine_map import (
    CHAIN_OPS,
    LINEAR_OPS,
    AffineChain,
    BiasedLinear,
    affine_chain,
    biased_linear,
    bias_and_weights,
    per_channel_op,
)
from ..fold.plan import build, plan_fold, shape_read_from_chain
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern

__all__ = [
    "FOLD_SCALE_THROUGH_MAX_POOL",
    "FOLD_SCALE_THROUGH_RELU",
    "FOLD_SCALE_THROUGH_RELU_CALL",
    "fold_scale_through_relu",
]


def fold_scale_through_relu(
    root: stablehlo.MaxOp | func.CallOp | stablehlo.ReduceWindowOp, rw: FoldRewriter
) -> Outcome:
    """P(L(x, K) [+ b]) * s + t = P(L(x, K * s) [+ b * s]) + t

    P is a relu, a max-pool, or a chain of them, each read only by the next (conv ->
    relu -> max-pool -> BN). A relu is `maximum(v, 0)`, in the function or as a call of
    a private function whose body returns it of one of its arguments (`jax.nn.relu` is
    jitted: jax.export writes `call @relu(%v)`, or `call @relu(%dim, %v)` with a symbolic
    batch); a max-pool is a `reduce_window` of one operand whose body is `maximum`. A(y) =
    y * s + t is the chain of per-channel affine ops that
    reads P (a batch_norm_inference, or the subtract, multiply, divide and add of a
    decomposed batch norm, each read only by the next), with s and t one value per
    feature of a dimension L produces from its weights. The scale moves into the weights
    (and the bias) before P; t stays behind it as one add. The fold and its
    skips are reported at the chain's outermost op.

    Activation-sized ops never increase: the chain had at least one, and what replaces
    it is at most one add (none when t is zero); the bias add of L + b stays one add. A
    chain whose scale is all ones moves nothing and is not a candidate (a lone shift
    after a relu, as this fold leaves it).

    Holds when, in this order: the element type is f16, bf16, f32 or f64; P's ops
    lead down, each through its data operand, to L or L + b; a per-channel affine chain
    reads P, along a dimension L's weights produce, with a scale that is not all ones;
    some reader of the chain is not a linear op (the input side folds scale and shift
    into the linear ops after it, which leaves no add where their padding allows; here t
    stays); each maximum's other operand is a zero constant (a relu), whose shape, when
    dynamic, is not read from L, L + b or an op of P below it (the rebuilt relu would
    keep them computed, or read a value defined after it); each max-pool's init value is
    -inf or the type's lowest value; each max-pool's window, stride, padding and
    dilation along the feature dimension are one, one, none and one; each relu's and
    max-pool's only user is the next op (the last one's the chain); the
    bias add's only user is P's first op and L's the bias add or P's first op; b is a
    finite per-channel value; the weights can be scaled (a float constant, or with
    `fold-weight-arguments` a parameter); the chain's scale and shift are constants; no
    scale is zero; no scale is negative; K * s, b * s and t are finite in their element
    types.
    """
    result_type = ir.RankedTensorType(root.results[0].type)
    if float_dtype(result_type.element_type) is None:
        return rw.not_candidate(root, reasons.ELEMENT_TYPE)
    found = _passed_ops(root)
    if found is None:
        return rw.not_candidate(root, reasons.NOT_RELU_OF_LINEAR)
    passed, linear = found
    above = _chain_above(root, linear)
    if above is None:
        return rw.not_candidate(root, reasons.NO_CHAIN_ABOVE)
    chain, feature = above
    scale, shift = chain.affine(root.results[0])
    if isinstance(scale, np.ndarray) and np.all(scale == 1):
        return rw.not_candidate(root, reasons.SCALE_ONE)
    if _read_only_by_linear_ops(chain.top.result):
        return rw.not_candidate(root, reasons.READ_BY_LINEAR_OPS)
    top, channels = chain.top, chain.channels
    for i, step in enumerate(passed):
        if step.zero is None:
            continue
        zeros = per_channel_f64(step.zero, feature, channels)
        if zeros is None or np.any(zeros):
            return rw.skip(top, reasons.MAXIMUM_NOT_RELU)
        if shape_read_from_chain(step.zero, linear, tuple(p.op.results[0] for p in passed[:i])):
            return rw.skip(top, reasons.ZERO_SHAPE_FROM_LINEAR)
    for step in passed:
        if step.zero is None:
            refused = _max_pool_refused(step.op, feature)
            if refused is not None:
                return rw.skip(top, refused)
    for step in passed:
        if not single_user(step.op.results[0]):
            return rw.skip(top, reasons.RELU_USERS if step.zero is not None else reasons.POOL_USERS)
    found = bias_and_weights(linear, feature, channels, rw.fold_weight_arguments)
    if isinstance(found, Reason):
        return rw.skip(top, found)
    bias, weights = found
    if not chain.constant:
        return rw.skip(top, reasons.SCALE_NOT_CONSTANT)
    if np.any(scale == 0):
        return rw.skip(top, reasons.SCALE_ZERO)
    if np.any(scale < 0):
        return rw.skip(top, reasons.SCALE_NEGATIVE)
    inner_shift = per_channel_op(np.multiply, bias, scale, top.result)
    plan = plan_fold(
        top, linear, feature, scale=scale, shift=inner_shift, weights=weights,
        through=tuple(step.op for step in passed), after=shift,
    )
    if isinstance(plan, Reason):
        return rw.skip(top, plan)
    return build(plan, rw)


@dataclass(frozen=True)
class _Passed:
    """An op the scale passes: a relu (`zero` the maximum's other operand) or a max-pool
    (`zero` None); `data` is the operand that reads the op below it, or L."""

    op: ir.OpView
    data: ir.Value
    zero: ir.Value | None


def _passed_ops(root: ir.OpView) -> tuple[tuple[_Passed, ...], BiasedLinear] | None:
    """The relus and max-pools from L or L + b up to `root` (the one reading L first), and
    L or L + b; None when `root` does not lead down to one through such ops."""
    for data, zero in _data_operands(root):
        linear = biased_linear(data)
        if linear is not None:
            return (_Passed(root, data, zero),), linear
        below = data.owner
        if isinstance(below, (stablehlo.MaxOp, func.CallOp, stablehlo.ReduceWindowOp)):
            found = _passed_ops(below)
            if found is not None:
                return (*found[0], _Passed(root, data, zero)), found[1]
    return None


def _read_only_by_linear_ops(value: ir.Value) -> bool:
    """Whether every op that reads `value` is a convolution, dot_general or dot."""
    readers = [use.owner for use in value.uses]
    return bool(readers) and all(isinstance(reader, LINEAR_OPS) for reader in readers)


def _weights_not_constant(linear: BiasedLinear, layout) -> bool:
    return constant_attr(linear.linear.operands[layout.weight_operand]) is None


def _chain_above(root: ir.OpView, linear: BiasedLinear) -> tuple[AffineChain, int] | None:
    """The longest per-channel affine chain (`affine_map.affine_chain`, parameters
    included) that reads `root` (a relu or max-pool) along a dimension `linear`'s weights
    produce, and that dimension; None if no reader of `root` starts one. The chain is
    extended reader by reader for as long as the one walk from the reader still reaches
    `root`."""
    result = root.results[0]
    shape = ir.RankedTensorType(result.type).shape
    layouts = [(f, linear_layout(linear.linear, f)) for f in range(len(shape)) if shape[f] >= 0]
    # A scalar scale is per-channel along every dimension: constant weights first, as
    # `decomposed` does, never a dot_general's data operand when a constant is there.
    layouts.sort(key=lambda fl: fl[1] is None or _weights_not_constant(linear, fl[1]))
    for feature, layout in layouts:
        channels = shape[feature]
        if layout is None:
            continue
        for use in result.uses:
            found, reader = None, use.owner
            while isinstance(reader, CHAIN_OPS):
                chain = affine_chain(reader.result, feature, channels, True)
                if not isinstance(chain, AffineChain) or chain.x != result:
                    break
                found = chain
                if not single_user(reader.result):
                    break
                reader = next(
                    (u.owner for u in reader.result.uses if isinstance(u.owner, CHAIN_OPS)), None
                )
            if found is not None:
                return found, feature
    return None


FOLD_SCALE_THROUGH_RELU = Pattern(
    "fold_scale_through_relu", stablehlo.MaxOp, fold_scale_through_relu
)
FOLD_SCALE_THROUGH_RELU_CALL = Pattern(
    "fold_scale_through_relu", func.CallOp, fold_scale_through_relu
)
"""The same identity on a relu that is a call (one pattern per root op class)."""
FOLD_SCALE_THROUGH_MAX_POOL = Pattern(
    "fold_scale_through_relu", stablehlo.ReduceWindowOp, fold_scale_through_relu
)
"""The same identity with a max-pool as the last op passed."""
