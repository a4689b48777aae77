"""Mixed precision: batch norm computed in a wider type between a convert pair.

Flax with `dtype=bfloat16` runs the convolution in bf16, converts its result to f32,
computes the batch norm in f32 and converts back:

    convert_T(A(convert_F(L_T(x, convert_T(W)) [+ b])))

where A is a chain of per-channel affine ops (subtract, multiply, divide, add,
batch_norm_inference) in the wider type F. Folding A into L means rounding the scaled
weights to T. How we decide that this loses nothing the original did not already lose:

- the original rounds the master weights W (a constant in F or wider) to T once, and
  rounds the activation to T after the convolution, after the bias add and at the final
  convert;
- the folded module rounds W * s (exact in float64) to T once, then rounds after the
  convolution and after the single bias add.

So each weight carries one rounding to T in both, and the activation carries fewer. When
the weights are already stored in T (no wider master copy), folding would add a rounding
of K * s that the original never made, and the island is left as it is.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..channels import linear_layout, single_user
from ..constants import constant_attr, float_dtype, read_dense
from .affine import AFFINE_OPS, LinearChain, Weights, affine_step, chain_bias, fold_affine, linear_chain
from .base import FoldRewriter, Outcome, Pattern

__all__ = ["FOLD_PRECISION_ISLAND", "fold_precision_island"]


def fold_precision_island(op: stablehlo.ConvertOp, rw: FoldRewriter) -> Outcome:
    """convert_T(A(convert_F(L(x, convert_T(W)) [+ b]))) = L(x, round_T(W * s)) + round_T(b * s + t)

    A is a chain of per-channel affine ops in the wider type F, together y * s + t.

    Holds when, in this order: the convert narrows a float type F to T; below it is a
    chain of per-channel affine ops, each read only by the next, ending in a widening
    convert from T of L or L + b; the widening convert and the chain have no other users;
    the per-channel values and b are finite constants along a dimension L's weights
    produce; the weights are a convert to T of a constant at least as wide as F (master
    weights); variance + epsilon > 0 for a batch norm; W * s and b * s + t are finite in T.
    """
    target = _float_element(op.result)
    wide = _float_element(op.operand)
    if target is None or wide is None or wide.itemsize <= target.itemsize:
        return rw.not_candidate(op, "not a narrowing float convert")
    island = _island(op.operand)
    if island is None:
        return rw.not_candidate(op, "no per-channel chain over a widening convert")
    steps, widen = island
    chain = linear_chain(widen.operand)
    if chain is None or _float_element(widen.operand) != target:
        return rw.not_candidate(op, "the widening convert is not of a linear op in the same type")
    if not single_user(widen.result):
        return rw.skip(op, "widening convert result has other users")
    shape = ir.RankedTensorType(op.result.type).shape
    affine = _affine_of(steps, chain, shape)
    if isinstance(affine, str):
        return rw.skip(op, affine)
    feature, scale, shift = affine
    bias = chain_bias(chain, feature, shape[feature])
    if isinstance(bias, str):
        return rw.skip(op, bias)
    weights = _master_weights(chain, feature, wide)
    if isinstance(weights, str):
        return rw.skip(op, weights)
    return fold_affine(rw, op, chain, feature, scale, bias * scale + shift, weights)


def _float_element(value: ir.Value) -> np.dtype | None:
    return float_dtype(ir.ShapedType(value.type).element_type)


def _island(value: ir.Value) -> tuple[list[ir.OpView], stablehlo.ConvertOp] | None:
    """The affine ops from `value` down (outermost first) and the widening convert."""
    steps: list[ir.OpView] = []
    while True:
        owner = value.owner
        if isinstance(owner, stablehlo.ConvertOp):
            return (steps, owner) if steps else None
        if not single_user(value):
            return None
        if isinstance(owner, stablehlo.BatchNormInferenceOp):
            steps.append(owner)
            value = owner.operand
        elif isinstance(owner, AFFINE_OPS):
            steps.append(owner)
            value = _operands(owner)[0]
        else:
            return None


def _operands(op: ir.OpView) -> tuple[ir.Value, ir.Value]:
    """(the operand that continues the chain down, the per-channel operand). Subtract and
    divide continue through their left operand only; add and multiply through whichever
    side is itself a chain op."""
    if isinstance(op, (stablehlo.SubtractOp, stablehlo.DivOp)):
        return op.lhs, op.rhs
    down = AFFINE_OPS + (stablehlo.ConvertOp, stablehlo.BatchNormInferenceOp)
    if isinstance(op.lhs.owner, down):
        return op.lhs, op.rhs
    return op.rhs, op.lhs


def _affine_of(
    steps: list[ir.OpView], chain: LinearChain, shape: list[int]
) -> tuple[int, np.ndarray, np.ndarray] | str:
    """(feature, s, t) with A(y) = y * s + t, in float64, from the innermost op out."""
    for feature in range(len(shape)):
        if shape[feature] < 0 or linear_layout(chain.linear, feature) is None:
            continue
        channels = shape[feature]
        scale, shift = np.ones(channels), np.zeros(channels)
        for step in reversed(steps):
            constant = None if isinstance(step, stablehlo.BatchNormInferenceOp) else _operands(step)[1]
            update = affine_step(step, feature, channels, constant)
            if update is None:
                break
            if isinstance(update, str):
                return update
            s, t = update
            scale, shift = scale * s, shift * s + t
        else:
            return feature, scale, shift
    return "the chain is not per-channel constants along the output feature"


def _master_weights(chain: LinearChain, feature: int, wide: np.dtype) -> tuple[Weights, ...] | str:
    """Each branch's weights as a convert of a constant at least as wide as `wide`."""
    found = []
    for linear in chain.branches:
        layout = linear_layout(linear, feature)
        value = linear.operands[layout.weight_operand]
        convert = value.owner
        if not isinstance(convert, stablehlo.ConvertOp):
            return "weights have no wider master copy: folding would round them again"
        attr = constant_attr(convert.operand)
        master = _float_element(convert.operand)
        if attr is None or master is None or master.itemsize < wide.itemsize:
            return "weights have no wider master copy: folding would round them again"
        tensor_type = ir.RankedTensorType(value.type)
        found.append(
            Weights(layout, value, read_dense(attr), tensor_type, float_dtype(tensor_type.element_type))
        )
    return tuple(found)


FOLD_PRECISION_ISLAND = Pattern(
    "fold_precision_island", stablehlo.ConvertOp, fold_precision_island
)
