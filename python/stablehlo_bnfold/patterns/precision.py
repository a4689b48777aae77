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

from ..analysis.layouts import linear_layout
from ..analysis.users import single_user
from ..constants import float_dtype, read_dense
from ..fold import reasons
from ..fold.affine_map import (
    AffineChain,
    BiasedLinear,
    Weights,
    affine_chain,
    biased_linear,
    chain_bias,
    master_weights,
)
from ..fold.plan import build, plan_fold
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern

__all__ = ["FOLD_PRECISION_ISLAND", "fold_precision_island"]


def fold_precision_island(op: stablehlo.ConvertOp, rw: FoldRewriter) -> Outcome:
    """convert_T(A(convert_F(L(x, convert_T(W)) [+ b]))) = L(x, round_T(W * s)) + round_T(b * s + t)

    A is a chain of per-channel affine ops in the wider type F, together y * s + t.

    Holds when, in this order: the convert narrows a float type F to T; below it is a
    chain of per-channel affine ops, each read only by the next, whose per-channel values
    are finite constants (values that are function arguments, with weights as arguments,
    are reported and left) with variance + epsilon > 0 for a batch norm, ending in a
    widening convert from T of L or L + b along a dimension L's weights produce; the
    widening convert has no other user, nor have the bias add and L; b is a finite
    per-channel constant; the weights are a convert to T of a constant at least as wide
    as F (master weights); W * s and b * s + t are finite in T.
    """
    target = _float_element(op.result)
    wide = _float_element(op.operand)
    if target is None or wide is None or wide.itemsize <= target.itemsize:
        return rw.not_candidate(op, reasons.NOT_NARROWING_CONVERT)
    island = _island(op.operand, target)
    arguments = rw.fold_weight_arguments
    if island is None and arguments and isinstance(_island(op.operand, target, True), tuple):
        # Weights as arguments: the chain's values are arguments too. Rounding W * s to T
        # in the graph could not be checked against the master weights.
        return rw.skip(op, reasons.ISLAND_NOT_CONSTANT)
    if island is None:
        return rw.not_candidate(op, reasons.NO_ISLAND)
    if isinstance(island, Reason):
        return rw.skip(op, island)
    affine, widen, linear, feature = island
    if not single_user(widen.result):
        return rw.skip(op, reasons.WIDEN_USERS)
    shape = ir.RankedTensorType(op.result.type).shape
    scale, shift = affine.affine()
    bias = chain_bias(linear, feature, shape[feature])
    if isinstance(bias, Reason):
        return rw.skip(op, bias)
    weights = _master_weights(linear, feature, wide)
    if isinstance(weights, Reason):
        return rw.skip(op, weights)
    plan = plan_fold(op, linear, feature, scale=scale, shift=bias * scale + shift, weights=weights)
    if isinstance(plan, Reason):
        return rw.skip(op, plan)
    return build(plan, rw)


def _float_element(value: ir.Value) -> np.dtype | None:
    return float_dtype(ir.ShapedType(value.type).element_type)


def _island(
    value: ir.Value, target: np.dtype, fold_weight_arguments: bool = False
) -> tuple[AffineChain, stablehlo.ConvertOp, BiasedLinear, int] | Reason | None:
    """The chain of per-channel affine ops that computes `value` from a widening convert of
    a linear op (or its bias add) in `target`, along a dimension that linear op produces:
    (chain, convert, linear chain, feature); None if there is none; the reason when the
    chain stops at an op it cannot fold."""
    if not single_user(value):
        return None
    shape = ir.RankedTensorType(value.type).shape
    reason = None
    for feature, channels in enumerate(shape):
        if channels < 0:
            continue
        affine = affine_chain(value, feature, channels, fold_weight_arguments)
        if isinstance(affine, Reason) or (affine is not None and affine.stopped):
            reason = reason or (affine if isinstance(affine, Reason) else affine.stopped)
            continue
        if affine is None or not isinstance(affine.x.owner, stablehlo.ConvertOp):
            continue
        widen = affine.x.owner
        chain = biased_linear(widen.operand)
        if chain is None or _float_element(widen.operand) != target:
            continue
        if linear_layout(chain.linear, feature) is not None:
            return affine, widen, chain, feature
        reason = reason or reasons.CHAIN_NOT_ALONG_FEATURE
    return reason


def _master_weights(chain: BiasedLinear, feature: int, wide: np.dtype) -> tuple[Weights, ...] | Reason:
    """Each branch's weights as a convert of a constant at least as wide as `wide`."""
    found = []
    for linear in chain.branches:
        layout = linear_layout(linear, feature)
        value = linear.operands[layout.weight_operand]
        attr = master_weights(value, wide)
        if attr is None:
            return reasons.NO_MASTER_WEIGHTS
        tensor_type = ir.RankedTensorType(value.type)
        found.append(
            Weights(layout, value, read_dense(attr), tensor_type, float_dtype(tensor_type.element_type))
        )
    return tuple(found)


FOLD_PRECISION_ISLAND = Pattern(
    "fold_precision_island", stablehlo.ConvertOp, fold_precision_island
)
