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
`Dense`), and any framework's conv -> ReLU -> BN. Issue 21 extends this module to the
other ops a per-channel map commutes with (LeakyReLU, max-pool, mean, reshape, concat).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from ..analysis.layouts import linear_layout
from ..analysis.per_channel import per_channel_f64
from ..analysis.users import single_user
from ..constants import constant_attr, float_dtype
from ..fold import reasons
from ..fold.affine_map import (
    CHAIN_OPS,
    AffineChain,
    BiasedLinear,
    affine_chain,
    biased_linear,
    chain_bias,
    per_channel_op,
    weights_of,
)
from ..fold.plan import build, plan_fold, shape_read_from_chain
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern

__all__ = ["FOLD_SCALE_THROUGH_RELU", "FOLD_SCALE_THROUGH_RELU_CALL", "fold_scale_through_relu"]


def fold_scale_through_relu(relu: stablehlo.MaxOp | func.CallOp, rw: FoldRewriter) -> Outcome:
    """relu(L(x, K) [+ b]) * s + t = relu(L(x, K * s) [+ b * s]) + t

    relu is `maximum(v, 0)`, in the function or as a call of a private function whose
    body returns it of one of its arguments (`jax.nn.relu` is jitted: jax.export writes
    `call @relu(%v)`, or `call @relu(%dim, %v)` with a symbolic batch); A(y) =
    y * s + t is the chain of per-channel affine ops that
    reads it (a batch_norm_inference, or the subtract, multiply, divide and add of a
    decomposed batch norm, each read only by the next), with s and t one value per
    feature of a dimension L produces from its weights. The scale moves into the weights
    (and the bias) before the relu; t stays behind it as one add. The fold and its
    skips are reported at the chain's outermost op.

    Activation-sized ops never increase: the chain had at least one, and what replaces
    it is at most one add (none when t is zero); the bias add of L + b stays one add. A
    chain whose scale is all ones moves nothing and is not a candidate (a lone shift
    after a relu, as this fold leaves it).

    Holds when, in this order: the element type is f16, bf16, f32 or f64; one operand
    of the maximum is L or L + b; a per-channel affine chain reads it, along a
    dimension L's weights produce, with a scale that is not all ones; some reader of the
    chain is not a linear op (the input side folds scale and shift into the linear ops
    after it, which leaves no add where their padding allows; here t stays); the maximum's
    other operand is a zero constant (a relu), whose shape, when dynamic, is not read
    from L or L + b (the rebuilt relu would keep them computed); the relu's only user is
    the chain; the
    bias add's only user is the relu and L's the bias add or the relu; b is a finite
    per-channel value; the weights can be scaled (a float constant, or with
    `fold-weight-arguments` a parameter); the chain's scale and shift are constants; no
    scale is zero; no scale is negative; K * s, b * s and t are finite in their element
    types.
    """
    result_type = ir.RankedTensorType(relu.result.type)
    if float_dtype(result_type.element_type) is None:
        return rw.not_candidate(relu, reasons.ELEMENT_TYPE)
    found = _linear_operand(relu)
    if found is None:
        return rw.not_candidate(relu, reasons.NOT_RELU_OF_LINEAR)
    linear, zero = found
    above = _chain_above(relu, linear)
    if above is None:
        return rw.not_candidate(relu, reasons.NO_CHAIN_ABOVE)
    chain, feature = above
    scale, shift = chain.affine(relu.result)
    if isinstance(scale, np.ndarray) and np.all(scale == 1):
        return rw.not_candidate(relu, reasons.SCALE_ONE)
    if _read_only_by_linear_ops(chain.top.result):
        return rw.not_candidate(relu, reasons.READ_BY_LINEAR_OPS)
    top, channels = chain.top, chain.channels
    zeros = per_channel_f64(zero, feature, channels)
    if zeros is None or np.any(zeros):
        return rw.skip(top, reasons.MAXIMUM_NOT_RELU)
    if shape_read_from_chain(zero, linear):
        return rw.skip(top, reasons.ZERO_SHAPE_FROM_LINEAR)
    if not single_user(relu.result):
        return rw.skip(top, reasons.RELU_USERS)
    bias = chain_bias(linear, feature, channels, rw.fold_weight_arguments)
    if isinstance(bias, Reason):
        return rw.skip(top, bias)
    weights = weights_of(linear, feature, rw.fold_weight_arguments)
    if isinstance(weights, Reason):
        return rw.skip(top, weights)
    if not chain.constant:
        return rw.skip(top, reasons.SCALE_NOT_CONSTANT)
    if np.any(scale == 0):
        return rw.skip(top, reasons.SCALE_ZERO)
    if np.any(scale < 0):
        return rw.skip(top, reasons.SCALE_NEGATIVE)
    inner_shift = per_channel_op(np.multiply, bias, scale, top.result)
    plan = plan_fold(
        top, linear, feature, scale=scale, shift=inner_shift, weights=weights,
        through=relu, after=shift,
    )
    if isinstance(plan, Reason):
        return rw.skip(top, plan)
    return build(plan, rw)


def _read_only_by_linear_ops(value: ir.Value) -> bool:
    """Whether every op that reads `value` is a convolution, dot_general or dot."""
    names = [use.owner.name for use in value.uses]
    return bool(names) and all(name in _LINEAR_OPS for name in names)


_LINEAR_OPS = frozenset(("stablehlo.convolution", "stablehlo.dot_general", "stablehlo.dot"))


def _linear_operand(relu: ir.OpView) -> tuple[BiasedLinear, ir.Value] | None:
    """(L or L + b, the other operand of the maximum) for a maximum one of whose operands
    is a linear chain, or a call of a function that returns the maximum of an argument
    and another value (`_called_maximum`) on a linear chain; else None."""
    if isinstance(relu, func.CallOp):
        called = _called_maximum(relu)
        linear = None if called is None else biased_linear(called[0])
        return None if linear is None else (linear, called[1])
    for value, other in ((relu.lhs, relu.rhs), (relu.rhs, relu.lhs)):
        linear = biased_linear(value)
        if linear is not None:
            return linear, other
    return None


def _weights_not_constant(linear: BiasedLinear, layout) -> bool:
    return constant_attr(linear.linear.operands[layout.weight_operand]) is None


def _called_maximum(call: func.CallOp) -> tuple[ir.Value, ir.Value] | None:
    """For a call of a private function whose body returns `maximum(arg, z)` of one of its
    arguments (`jax.nn.relu` is jitted: a jax.export writes it as `call @relu(%x)`, or
    `call @relu(%dim, %x)` with a symbolic batch, dimension sizes first), the call's
    operand passed as that argument (its data operand, of the call's result type) and the
    value z in the callee; else None. The pass runs on the whole module, so the callee may
    be read; it is never changed (the fold calls it again)."""
    if len(call.results) != 1:
        return None
    callee = _callee(call)
    if callee is None or len(callee.regions[0].blocks) != 1:
        return None
    block = callee.regions[0].blocks[0]
    returned = block.operations[len(block.operations) - 1].operands
    if len(block.arguments) != len(call.operands) or len(returned) != 1:
        return None
    maximum = returned[0].owner
    if not isinstance(maximum, stablehlo.MaxOp):
        return None
    for value, other in ((maximum.lhs, maximum.rhs), (maximum.rhs, maximum.lhs)):
        if not isinstance(value, ir.BlockArgument) or value.owner != block or other == value:
            continue
        data = call.operands[value.arg_number]
        if data.type == call.results[0].type:
            return data, other
    return None


def _callee(call: func.CallOp) -> func.FuncOp | None:
    """The function `call` calls, found in the module around it; None if it is not there."""
    name = ir.FlatSymbolRefAttr(call.callee).value
    module = call.operation.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return None
    for op in module.regions[0].blocks[0].operations:
        if isinstance(op, func.FuncOp) and ir.StringAttr(op.sym_name).value == name:
            return op
    return None


def _chain_above(relu: stablehlo.MaxOp, linear: BiasedLinear) -> tuple[AffineChain, int] | None:
    """The longest per-channel affine chain (`affine_map.affine_chain`, parameters
    included) that reads `relu` along a dimension `linear`'s weights produce, and that
    dimension; None if no reader of the relu starts one. The chain is extended reader by
    reader for as long as the one walk from the reader still reaches the relu."""
    shape = ir.RankedTensorType(relu.result.type).shape
    layouts = [(f, linear_layout(linear.linear, f)) for f in range(len(shape)) if shape[f] >= 0]
    # A scalar scale is per-channel along every dimension: constant weights first, as
    # `decomposed` does, never a dot_general's data operand when a constant is there.
    layouts.sort(key=lambda fl: fl[1] is None or _weights_not_constant(linear, fl[1]))
    for feature, layout in layouts:
        channels = shape[feature]
        if layout is None:
            continue
        for use in relu.result.uses:
            found, reader = None, use.owner
            while isinstance(reader, CHAIN_OPS):
                chain = affine_chain(reader.result, feature, channels, True)
                if not isinstance(chain, AffineChain) or chain.x != relu.result:
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
