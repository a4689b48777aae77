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
the weights are already stored in T (no wider master copy: Flax's `dtype=param_dtype=
bfloat16`), folding adds a rounding of K * s that the original never made. With
`fold-narrow-weights` (the default) the island folds anyway, as the all-f16 case and the
tools users compare with do: K * s is computed in float64 from the stored K and rounded
to T once more, so each weight carries two roundings to T (K's own, then K * s's), and
the report marks the fold `rounded again in bf16`. On whole networks the folded model
stays within 1.5x the original's error against a float64 evaluation (docs/networks.md).
Without the option, the island is left as it is.

With weights as arguments (`model.apply(variables, x)`), the master weights W_F and the
chain's values are arguments, and the graph computes what the constant path computes in
float64: s and b * s + t on [C] vectors in F (the same ops on the same values as the
chain's own arithmetic in F), the weights as convert_T(W_F * broadcast_in_dim(s)), and
the bias converted to T once. The difference from the constant path is the product's
rounding to F before the one rounding to T: a double rounding, which differs from
round_T(W * s) only where W * s lies within F's rounding error (2^-24 relative for f32)
of a midpoint between two values of T, and then by one unit in T's last place. Each
weight still carries one rounding to T (half a unit, plus F's eps), as in the original;
weights passed only in T are refused (scaled in the graph they would meet s rounded to T
as well). The constant path is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.layouts import linear_layout
from ..analysis.commuting import feature_below
from ..analysis.users import single_user
from ..constants import constant_attr, float_dtype
from ..fold import reasons
from ..fold.affine_map import (
    AffineChain,
    BiasedLinear,
    Weights,
    affine_chain,
    biased_linear,
    chain_bias,
    computed_by_linear_op,
    master_value,
    master_weights,
    per_channel_op,
    stored_weights,
)
from ..fold.plan import build, plan_fold
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern

__all__ = ["FOLD_PRECISION_ISLAND", "fold_precision_island"]


def fold_precision_island(op: stablehlo.ConvertOp, rw: FoldRewriter) -> Outcome:
    """convert_T(A(convert_F(P(L(x, convert_T(W)) [+ b])))) = P(L(x, round_T(W * s)) + round_T(b * s + t))

    A is a chain of per-channel affine ops in the wider type F, together y * s + t; P
    is none, or reshapes and transposes in T that keep the feature dimension whole.

    Holds when, in this order: the convert narrows a float type F to T; below it is a chain
    of per-channel affine ops, each read only by the next, whose per-channel values are
    finite constants with variance + epsilon > 0 for a batch norm (or, with
    `fold-weight-arguments`, values broadcast from narrow arguments, not computed from the
    data: s and t are then computed in F in the graph), ending in a widening convert from T
    of L or L + b, or of P of it, along a dimension L's weights produce (mapped through P);
    no reshape of P splits or merges that dimension; the widening convert has no other user,
    nor has any op of P but the next, nor have the bias add and L; b is a finite per-channel
    constant (or a narrow argument); the weights are a convert to T of master weights at
    least as wide as F, or a reshape of that convert: a constant, or with
    `fold-weight-arguments` a value not computed by a linear op (then convert_T(W_F * s) in
    the graph), or with `fold-narrow-weights` a constant stored only in T (rounded again,
    the report says so); W * s and b * s + t are finite in T (for a constant s in the
    graph, s in T).
    """
    target = _float_element(op.result)
    wide = _float_element(op.operand)
    if target is None or wide is None or wide.itemsize <= target.itemsize:
        return rw.not_candidate(op, reasons.NOT_NARROWING_CONVERT)
    island = _island(op.operand, target)
    arguments = rw.fold_weight_arguments
    if island is None and arguments:
        # Weights as arguments: the chain's values are arguments too, computed on in F.
        found = _island(op.operand, target, True)
        island = found if isinstance(found, tuple) else None
    if island is None:
        return rw.not_candidate(op, reasons.NO_ISLAND)
    if isinstance(island, Reason):
        return rw.skip(op, island)
    affine, widen, linear, feature, moved = island
    if moved.linear_feature is None:
        return rw.skip(op, reasons.RESHAPE_SPLITS_FEATURE)
    if not single_user(widen.result):
        return rw.skip(op, reasons.WIDEN_USERS)
    if not all(single_user(passed.result) for passed in moved.ops):
        return rw.skip(op, reasons.MOVED_USERS)
    linear_feature = moved.linear_feature
    shape = ir.RankedTensorType(op.result.type).shape
    like = op.operand  # values computed in the graph are computed in F
    scale, shift = affine.affine(like)
    bias = chain_bias(linear, linear_feature, shape[feature], arguments, unrounded=rw.unrounded)
    if isinstance(bias, Reason):
        return rw.skip(op, bias)
    weights = _master_weights(linear, linear_feature, wide, arguments, rw.fold_narrow_weights)
    if isinstance(weights, Reason):
        return rw.skip(op, weights)
    if any(master_value(w.value, wide) is None for w in weights):
        rw.rounds_again(target)  # weights stored only in T (`fold-narrow-weights`)
    shift = per_channel_op(np.add, per_channel_op(np.multiply, bias, scale, like), shift, like)
    plan = plan_fold(
        op, linear, linear_feature, scale=scale, shift=shift, weights=weights,
        through=moved.ops, after_feature=feature if moved.ops else None,
        names=tuple(passed.operation.name for passed in moved.ops),
        larger_weights=rw.fold_larger_weight_arguments,
    )
    if isinstance(plan, Reason):
        return rw.skip(op, plan)
    return build(plan, rw)


def _float_element(value: ir.Value) -> np.dtype | None:
    return float_dtype(ir.ShapedType(value.type).element_type)


@dataclass(frozen=True)
class _Moved:
    """The reshapes and transposes between a linear op (or its bias add) and the widening
    convert, the one reading the linear op first (`ops`, often none), and the linear op's
    dimension that the chain's feature dimension comes from (None when a reshape splits
    or merges it)."""

    ops: tuple[ir.OpView, ...]
    linear_feature: int | None


def _moved_from_linear(value: ir.Value, feature: int) -> tuple[BiasedLinear, _Moved] | None:
    """L or L + b below `value` through reshapes and transposes (none or more), and those
    ops with L's feature dimension for `value`'s `feature`; None when `value` is none."""
    ops: list[ir.OpView] = []
    chain = biased_linear(value)
    while chain is None and isinstance(value.owner, _MOVING):
        ops.append(value.owner)
        value = value.owner.operand
        chain = biased_linear(value)
    if chain is None:
        return None
    linear_feature: int | None = feature
    for op in ops:
        if linear_feature is None:
            break
        linear_feature = feature_below(op, linear_feature)
    return chain, _Moved(tuple(reversed(ops)), linear_feature)


_MOVING = (stablehlo.ReshapeOp, stablehlo.TransposeOp)
"""Ops that only move elements, passed below the widening convert (in T, rebuilt there)."""


def _island(
    value: ir.Value, target: np.dtype, fold_weight_arguments: bool = False
) -> tuple[AffineChain, stablehlo.ConvertOp, BiasedLinear, int, _Moved] | Reason | None:
    """The chain of per-channel affine ops that computes `value` from a widening convert of
    a linear op (or its bias add) in `target`, or of reshapes and transposes of it, along
    a dimension that linear op produces: (chain, convert, linear chain, feature, the ops
    between); None if there is none; the reason when the chain stops at an op it cannot
    fold. A reshape that splits or merges the feature is returned too (its `_Moved` has
    no linear feature): the fold names it."""
    if not single_user(value):
        return None
    shape = ir.RankedTensorType(value.type).shape
    reason, split = None, None
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
        found = _moved_from_linear(widen.operand, feature)
        if found is None or _float_element(widen.operand) != target:
            continue
        chain, moved = found
        if moved.linear_feature is None:
            split = split or (affine, widen, chain, feature, moved)
            continue
        if linear_layout(chain.linear, moved.linear_feature) is not None:
            return affine, widen, chain, feature, moved
        reason = reason or reasons.CHAIN_NOT_ALONG_FEATURE
    return split if split is not None else reason


def _master_weights(
    chain: BiasedLinear, feature: int, wide: np.dtype, fold_weight_arguments: bool,
    fold_narrow_weights: bool,
) -> tuple[Weights, ...] | Reason:
    """Each branch's weights as a convert (or a reshape of a convert) of master weights at
    least as wide as `wide`: a constant, or with `fold_weight_arguments` a value not
    computed by a linear op (the master weights passed as an argument, scaled in the
    graph); with `fold_narrow_weights`, also a constant stored only in the narrow type
    (no master: W * s in float64 from it, rounded to that type again)."""
    found = []
    for linear in chain.branches:
        layout = linear_layout(linear, feature)
        value = linear.operands[layout.weight_operand]
        tensor_type = ir.RankedTensorType(value.type)
        dtype = float_dtype(tensor_type.element_type)
        values = master_weights(value, wide)
        if values is not None:
            # The master rides along: a scale computed in the graph (the chain's values
            # are arguments) scales it in F, never the weights already rounded to T.
            master = master_value(value, wide)
            found.append(Weights(layout, value, values, tensor_type, dtype, master))
            continue
        master = master_value(value, wide) if fold_weight_arguments else None
        if master is None or constant_attr(master) is not None:
            narrow = stored_weights(value) if fold_narrow_weights and master is None else None
            if narrow is None:
                return reasons.NO_MASTER_WEIGHTS
            found.append(Weights(layout, value, narrow, tensor_type, dtype))
            continue
        if computed_by_linear_op(master):
            return reasons.WEIGHTS_ARE_ACTIVATIONS
        found.append(Weights(layout, value, None, tensor_type, dtype, master))
    return tuple(found)


FOLD_PRECISION_ISLAND = Pattern(
    "fold_precision_island", stablehlo.ConvertOp, fold_precision_island
)
