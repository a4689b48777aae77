"""Batch norm as producers decompose it: per-channel multiply and divide after a linear op.

Flax, Haiku, Equinox, torch-mlir and TensorFlow never emit `batch_norm_inference`; they
compute (y - mean) * (scale * rsqrt(var + eps)) + offset, or divide by sqrt(var + eps),
with per-channel values reaching the activation through reshapes and broadcasts. The
subtract and add are handled by `bias.py`; the multiply and divide fold into the weights
here, so that any such chain ends as `L(x, K') + broadcast_in_dim(b')`.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.layouts import linear_layout
from ..analysis.per_channel import (
    Narrow,
    per_channel_f64,
    per_channel_source,
    per_feature_block_f64,
    per_feature_block_source,
)
from ..analysis.users import single_user
from ..constants import constant_attr, float_dtype, read_dense, round_to
from ..fold import reasons
from ..fold.affine_map import (
    BiasedLinear,
    Computed,
    PerChannel,
    Weights,
    all_finite,
    biased_linear,
    chain_bias,
    computed_by_linear_op,
    computed_from_constants,
    computed_from_data,
    factor_reason,
    per_channel,
    per_channel_op,
    weights_of,
)
from ..fold.plan import FoldPlan, NewWeights, build, build_chain, per_call_larger, plan_fold
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern
from .input_side import may_fold_into

__all__ = [
    "FOLD_DIVISOR_INTO_LINEAR",
    "FOLD_SCALE_INTO_LINEAR",
    "PATTERN_NAMES",
    "fold_chain",
    "linear_operands",
    "match_per_channel",
    "per_channel_matches",
]


PATTERN_NAMES: dict[type, str] = {
    stablehlo.SubtractOp: "fold_subtrahend_into_bias",
    stablehlo.AddOp: "fold_shift_into_bias",
    stablehlo.MulOp: "fold_scale_into_linear",
    stablehlo.DivOp: "fold_divisor_into_linear",
}
"""The pattern that folds each per-channel op of a chain after a linear op (here and in
`bias.py`), by the op's class: the name a fold of that op is reported under."""


def fold_chain(plan: FoldPlan, rw: FoldRewriter) -> Outcome:
    """Build `plan` and, in the same application, the plans of the ops above its root
    that the patterns of this module and `bias.py` would fold next, one after the other
    (`_plan_above`): Flax's `(L(x, K) - mean) * c + offset` is one application, with one
    analysis and one build, instead of three, each rebuilding `L + b` and reading it back.
    The output and the report are those of the three (`plan.build_chain`), but for a
    constant bias: computed in float64 through the chain and rounded once, where the
    three would round it after each step (hundreds of ulps apart where mean * c nearly
    cancels the offset).

    A shift computed in the graph that would be a linear op's first bias (Flax's `L -
    mean` with the statistics arguments) is refused for its cost when the scale above it
    is (`fold.plan.per_call_larger`), with a static or a symbolic batch: alone it would
    only trade the subtract for an add of `0 - mean` computed on every call."""
    plans = [plan]
    # The op above first: most folds that have none (Keras's `y * inv` before its bias
    # add, a batch norm's) are decided there, before the linear op's input is looked at.
    # A first bias computed in the graph asks it too, whatever the shape (a symbolic
    # batch): alone, it would remove no op.
    plain, first_bias = _plain(plan), _first_bias_in_graph(plan)
    above = _plan_above(plans, rw) if plain or first_bias else None
    if plain and isinstance(above, FoldPlan) and _left_alone(plan):
        plans.append(above)
        while isinstance(above := _plan_above(plans, rw), FoldPlan):
            plans.append(above)
    elif above == reasons.COST_WEIGHTS_LARGER and first_bias:
        return rw.skip(plan.root, reasons.COST_WEIGHTS_LARGER)
    return build_chain(tuple(plans), tuple([PATTERN_NAMES[type(p.root)] for p in plans]), rw)


def _first_bias_in_graph(plan: FoldPlan) -> bool:
    """Whether `plan` only shifts (a subtract or add of a value computed in the graph) a
    linear op that has no bias add yet, along one feature dimension with no ops passed:
    L - c becomes L + (0 - c), one activation-sized op for another, worth it only when
    the ops above fold too."""
    return (
        plan.scale is None and plan.linear.bias_add is None and not isinstance(plan.bias, np.ndarray)
        and not plan.through and isinstance(plan.feature, int)
    )


def _plain(plan: FoldPlan) -> bool:
    """Whether `plan` is a plain fold, which ops above its root may join: no ops passed,
    one linear op outside a case, one feature dimension, the only one its weights produce
    (a pattern applied above would match the same dimension), a static shape (the bias
    broadcast reads only the type)."""
    linear = plan.linear
    if plan.through or not isinstance(plan.feature, int) or len(linear.branches) != 1:
        return False
    op = linear.linear
    if linear.linear_value != op.results[0] or not ir.RankedTensorType(plan.root.results[0].type).has_static_shape:
        return False
    # A convolution's weights produce one dimension, the one the plan folds along.
    return isinstance(op, stablehlo.ConvolutionOp) or set(linear.layouts) == {plan.feature}


def _left_alone(plan: FoldPlan) -> bool:
    """Whether no other fold would come between the folds of the chain's ops, one at a
    time: the input side leaves the linear op alone (`input_side.may_fold_into`: the
    driver visits it between them, once the first has given it a bias add), and the bias
    reads no linear op's result (`_reads_linear_result`)."""
    return not may_fold_into(plan.linear.linear) and not _reads_linear_result(plan.bias)


def _reads_linear_result(value: PerChannel | None) -> bool:
    """Whether a per-channel value computed in the graph reads a linear op's result (the
    input side's W . t, merged into this chain's bias). The multiply's pattern folds
    such parameter arithmetic once more where the driver reaches it, which it does in
    its first sweep only through the erasure of the bias adds the one-op-at-a-time folds
    build between the chain's ops: a chain built whole would leave it to a second sweep,
    and a third to confirm it."""
    if isinstance(value, Computed):
        return any(_reads_linear_result(operand) for operand in value.operands)
    if isinstance(value, Narrow):
        value = value.value
    return isinstance(value, ir.Value) and biased_linear(value) is not None


def _plan_above(plans: list[FoldPlan], rw: FoldRewriter) -> FoldPlan | Reason | None:
    """The plan of the one op that reads the last plan's root, when that op's pattern,
    applied to it after a build of `plans`, would fold it: the same conditions, read
    from the plans instead of from the built `L' + b` (its bias is the last plan's, its
    only reader that op; a constant one not rounded: `FoldPlan.shift`). None when it
    would not, or might not: at most one op of a
    chain scales the weights (a second would round them twice), and a bias the build
    converts first (a narrow value) ends it; the driver then applies that op's pattern
    as ever, to the built IR. Where the op's own plan is refused (`plan_fold`), the
    reason instead of None (`fold_chain` reads the cost rule's)."""
    below = plans[-1]
    root_result = below.root.results[0]  # (read once: each accessor is a call into the bindings)
    reader = _only_reader(root_result)
    if reader is None:
        return None
    op, index = reader
    kind = type(op)
    if kind not in PATTERN_NAMES or (result := op.results[0]).type != root_result.type:
        return None
    if index != 0 and kind in (stablehlo.SubtractOp, stablehlo.DivOp):
        return None  # c - (L + b), c / (L + b): no per-channel affine map of L
    if kind is stablehlo.AddOp and below.bias is None:
        return None  # L + c with no bias add: already canonical (ALREADY_BIAS_ADD)
    scales = kind in (stablehlo.MulOp, stablehlo.DivOp)
    for plan in plans if scales else ():  # (a loop: a generator costs a microsecond here)
        if plan.scale is not None:
            return None
    bias = below.bias
    if bias is None:
        bias = np.zeros(ir.RankedTensorType(root_result.type).shape[below.feature])
    elif isinstance(bias, np.ndarray):
        bias = below.shift  # in float64: the chain's bias is rounded once, at its end
    elif not isinstance(bias, Computed):
        return None
    other = op.operands[1 - index]
    feature = below.feature
    channels = bias.shape[0] if isinstance(bias, np.ndarray) else bias.channels
    factor = per_channel(other, feature, channels, rw.fold_weight_arguments)
    if factor is None:
        return None
    # Two chains: the pattern would look at the other one first. (Constants are never
    # one: `per_channel_f64` evaluates no linear op, nor an add of one.)
    if not isinstance(factor, np.ndarray) and biased_linear(other) is not None:
        return None
    chain = below.linear  # L alone, no bias add: made once, for the first op above
    if chain.bias_add is not None:
        chain = BiasedLinear(chain.linear_value, chain.branches, None, None)
    has_bias_add = below.bias is not None
    if not scales:
        if isinstance(factor, np.ndarray) and not all_finite(factor):
            return None
        ufunc = np.add if kind is stablehlo.AddOp else np.subtract
        shift = per_channel_op(ufunc, bias, factor, result)
        return plan_fold(op, chain, feature, scale=None, shift=shift, weights=None, bias_add=has_bias_add)
    divide = kind is stablehlo.DivOp
    if isinstance(factor, Narrow) and computed_from_data(factor.value):
        return None
    weights = weights_of(chain, feature, rw.fold_weight_arguments)
    if isinstance(weights, Reason):
        return None
    if isinstance(factor, np.ndarray) and factor_reason(factor, divide) is not None:
        return None
    if divide:
        factor = per_channel_op(np.divide, np.ones(channels), factor, result)
    shift = per_channel_op(np.multiply, bias, factor, result)
    return plan_fold(
        op, chain, feature, scale=factor, shift=shift, weights=weights, bias_add=has_bias_add,
        larger_weights=rw.fold_larger_weight_arguments,
    )


def _only_reader(value: ir.Value) -> tuple[ir.OpView, int] | None:
    """The one op that reads `value` and the operand it reads it as; None where none or
    several do."""
    uses = iter(value.uses)
    use = next(uses, None)
    if use is None or next(uses, None) is not None:
        return None
    op = use.owner
    return (op.opview if isinstance(op, ir.Operation) else op), use.operand_number


def linear_operands(
    op: ir.OpView, orders: tuple[tuple[int, int], ...]
) -> list[tuple[BiasedLinear, ir.Value]]:
    """For each (chain operand, other operand) order, in turn, the linear chain (L, or
    L + b: `biased_linear`) and the other operand, when the chain operand is one; each
    operand read once."""
    operands = tuple(op.operands)
    found = []
    for chain_index, other_index in orders:
        chain = biased_linear(operands[chain_index])
        if chain is not None:
            found.append((chain, operands[other_index]))
    return found


def per_channel_matches(
    op: ir.OpView,
    orders: tuple[tuple[int, int], ...],
    fold_weight_arguments: bool,
    candidates: list[tuple[BiasedLinear, ir.Value]] | None = None,
) -> list[tuple[BiasedLinear, int, PerChannel, PerChannel | None]]:
    """Every (chain, feature, c, b) where, for one (chain operand, other operand) order, one
    operand of `op` is a linear chain (L, or L + b with b narrow along the feature: a
    residual add is none) and the other is per-channel along a dimension the chain's
    linear op produces from its weights; in operand-order, then dimension order. A scalar
    c is per-channel along every dimension: each is a match. b is the bias as that check
    read it (`per_channel` with weight arguments; None without a bias add), for
    `chain_bias`. `candidates` are `linear_operands(op, orders)` when already read."""
    if candidates is None:
        candidates = linear_operands(op, orders)
    if not candidates:
        return []
    shape = ir.RankedTensorType(op.result.type).shape
    # Both operands linear chains (a residual add of two blocks' L + b): each is the
    # other's c, an activation, which `per_channel_f64` never evaluates (it reads no
    # linear op, nor an add of one): only its narrow source may match (with weight
    # arguments, a [1, N] result at batch 1), and nothing without them.
    chains = len(candidates) == 2 and tuple(orders) == ((0, 1), (1, 0))
    found = []
    for chain, other in candidates:
        if chains and not fold_weight_arguments:
            continue
        layouts = chain.layouts
        for feature in range(len(shape)):
            if shape[feature] < 0 or feature not in layouts:
                continue
            # The other operand first: where it is no per-channel value (a residual add
            # of two chains, each other's activation), the chain's bias, which with
            # weight arguments is a computed vector walked to its arguments, is not read.
            if chains:
                factor = per_channel_source(other, feature, shape[feature])
            else:
                factor = per_channel(other, feature, shape[feature], fold_weight_arguments)
            if factor is None:
                continue
            bias = None
            if chain.bias_value is not None:
                bias = per_channel(chain.bias_value, feature, shape[feature], True)
                if bias is None:
                    # L + r with r an activation (a residual connection) is no bias add:
                    # `r` is not even narrow, so this is no linear chain at all.
                    continue
            found.append((chain, feature, factor, bias))
    return found


def match_per_channel(
    op: ir.OpView,
    orders: tuple[tuple[int, int], ...],
    fold_weight_arguments: bool,
    candidates: list[tuple[BiasedLinear, ir.Value]] | None = None,
) -> tuple[BiasedLinear, int, PerChannel, PerChannel | None] | None:
    """The first of `per_channel_matches`, else None (not a candidate)."""
    matches = per_channel_matches(op, orders, fold_weight_arguments, candidates)
    return matches[0] if matches else None


def _onto_weights(
    matches: list[tuple[BiasedLinear, int, PerChannel, PerChannel | None]], rw: FoldRewriter
) -> tuple[BiasedLinear, int, PerChannel, PerChannel, tuple[Weights, ...]] | Reason:
    """The match whose factor goes onto weights: (chain, feature, c, bias, weights), or
    the first match's reason. A scalar c matches every result dimension, and a dimension
    of a dot_general's lhs puts it on the lhs: constant weights are taken first, then
    weights computed from constants alone, then the first weights that can be scaled on
    the rhs, then on the lhs, never an operand computed by a linear op (torch's `addmm`
    alpha after `x @ W^T`: dimension 0 is x's, and x may be the function's data
    argument)."""
    refused, scalable = [], []
    for chain, feature, factor, seen in matches:
        channels = ir.RankedTensorType(chain.linear_value.type).shape[feature]
        bias = chain_bias(chain, feature, channels, rw.fold_weight_arguments, seen, rw.unrounded)
        if isinstance(bias, Reason):
            refused.append(bias)
            continue
        weights = weights_of(chain, feature, rw.fold_weight_arguments)
        if isinstance(weights, Reason):
            refused.append(weights)
            continue
        if all(w.values is not None for w in weights):
            return chain, feature, factor, bias, weights
        scalable.append((chain, feature, factor, bias, weights))
    # Weights computed from constants (torch-mlir's `transpose(%W)`) before any that read
    # a function argument, which may be the data itself (a dense layer on the input); then
    # the rhs before the lhs: with both operands of a dot_general arguments (`f(x, W) =
    # (x @ W) * c`), the rhs is where producers put the weights (Flax's and Keras's
    # `x @ W`, torch's `addmm`, TensorFlow's `dot`); the lhs produces result dimension 0.
    scalable.sort(key=lambda m: (
        not all(computed_from_constants(w.value) for w in m[4]),
        not all(w.layout.weight_operand == 1 for w in m[4]),
    ))
    return scalable[0] if scalable else refused[0]


def _fold_factor(op: ir.OpView, rw: FoldRewriter, divide: bool) -> Outcome:
    """The shared body of the multiply and divide patterns (their conditions are the same)."""
    if float_dtype(ir.RankedTensorType(op.result.type).element_type) is None:
        return rw.not_candidate(op, reasons.ELEMENT_TYPE)
    orders = ((0, 1),) if divide else ((0, 1), (1, 0))
    candidates = linear_operands(op, orders)
    matches = per_channel_matches(op, orders, rw.fold_weight_arguments, candidates)
    if not matches:
        return _fold_scalar_over_block_bias(op, rw, candidates, divide)
    factor = matches[0][2]
    if isinstance(factor, Narrow) and computed_from_data(factor.value):
        return rw.skip(op, reasons.DATA_DEPENDENT)
    match = _onto_weights(matches, rw)
    if isinstance(match, Reason):
        return rw.skip(op, match)
    linear, feature, factor, bias, weights = match
    channels = ir.RankedTensorType(op.result.type).shape[feature]
    reason = factor_reason(factor, divide) if isinstance(factor, np.ndarray) else None
    if reason is not None:
        return rw.skip(op, reason)
    if divide:
        factor = per_channel_op(np.divide, np.ones(channels), factor, op.result)
    shift = per_channel_op(np.multiply, bias, factor, op.result)
    plan = plan_fold(
        op, linear, feature, scale=factor, shift=shift, weights=weights,
        larger_weights=rw.fold_larger_weight_arguments,
    )
    if isinstance(plan, Reason):
        return rw.skip(op, plan)
    return fold_chain(plan, rw)


def _fold_scalar_over_block_bias(
    op: ir.OpView, rw: FoldRewriter, candidates: list[tuple[BiasedLinear, ir.Value]], divide: bool
) -> Outcome:
    """(L(x, W) + b) * c = L(x, W * c) + b * c for a scalar constant c and a bias b over
    several of the weights' result dimensions (Flax attention's `query / sqrt(head_dim)`
    after a DenseGeneral with a [heads, head_dim] bias), one linear op: constant weights
    and a constant b (exact path), or with `fold-weight-arguments` the rhs's weights and a
    b that are arguments (`per_feature_block_source`), or a bias a fold built from them,
    scaled in the graph, weights not larger than the result (`per_call_larger`);
    else not a candidate."""
    for chain, other in candidates:  # `linear_operands`, in order
        factor = _uniform(other)
        if factor is None or chain.bias_add is None or len(chain.branches) != 1:
            continue
        linear = chain.linear
        result_rank = ir.RankedTensorType(linear.result.type).rank
        layouts = [linear_layout(linear, d) for d in range(result_rank)]
        constant = [l for l in layouts if l is not None and constant_attr(linear.operands[l.weight_operand]) is not None]
        # A multiply a fold built (b * c on a block bias L(t, W) + b computed in the
        # graph) is that fold's own parameter arithmetic: no candidate.
        in_graph = [] if constant or not rw.fold_weight_arguments or rw.was_built(op) else [
            l for l in layouts if l is not None and l.weight_operand == 1
        ]
        chosen = constant or in_graph
        if not chosen:
            continue
        weight_operand = chosen[0].weight_operand
        dims = tuple(d for d, l in enumerate(layouts) if l is not None and l.weight_operand == weight_operand)
        weights = linear.operands[weight_operand]
        if constant:
            block = per_feature_block_f64(chain.bias_value, dims)
        else:
            block = _block_in_graph(chain.bias_value, dims, rw)
            if computed_by_linear_op(weights):
                continue  # an activation (attention's k): nothing to scale
        if block is None:
            continue
        if not (single_user(chain.bias_add.result) and single_user(linear.result)):
            return rw.skip(op, reasons.BIAS_ADD_USERS)
        finite = not isinstance(block, np.ndarray) or np.all(np.isfinite(block))
        reason = reasons.FACTOR_NOT_FINITE if not finite else factor_reason(factor, divide)
        if reason is not None:
            return rw.skip(op, reason)
        c = float(factor[0])
        c = 1.0 / c if divide else c
        weights_type = ir.RankedTensorType(weights.type)
        dtype = float_dtype(weights_type.element_type)
        result_dtype = float_dtype(ir.RankedTensorType(op.result.type).element_type)
        if dtype is None or dtype.itemsize < result_dtype.itemsize:
            return rw.skip(op, reasons.NARROW_WEIGHTS)
        if not constant:
            # In the graph: W * c and b * c, c a constant of the weights' type.
            if round_to(dtype, np.array([c])) is None:
                return rw.skip(op, reasons.FOLDED_WEIGHTS_OVERFLOW)
            if not rw.fold_larger_weight_arguments and per_call_larger((weights,), (), op.result):
                return rw.skip(op, reasons.COST_WEIGHTS_LARGER)
            new_weights = NewWeights(Weights(chosen[0], weights, None, weights_type, dtype), None)
            return build(FoldPlan(op, chain, dims, np.array([c]), (new_weights,), block), rw)
        stored = read_dense(constant_attr(weights))
        scaled = None if stored is None else round_to(dtype, stored.astype(np.float64) * c)
        bias = round_to(result_dtype, block * c)
        if scaled is None or bias is None:
            return rw.skip(op, reasons.FOLDED_WEIGHTS_OVERFLOW)
        new_weights = NewWeights(Weights(constant[0], weights, stored, weights_type, dtype), scaled)
        return build(FoldPlan(op, chain, dims, None, (new_weights,), bias), rw)
    return rw.not_candidate(op, reasons.NOT_LINEAR_TIMES_PER_CHANNEL)


def _block_in_graph(bias: ir.Value, dims: tuple[int, ...], rw: FoldRewriter) -> ir.Value | None:
    """The [heads, head_dim] value `bias` is broadcast from, of its element type: a
    parameter passed as an argument, or the bias a fold built from them (a shift
    contracted with the weights, `L(t, W) + b`, is a dot_general of parameters); None for
    any other value (one computed by a linear op is an activation)."""
    block = per_feature_block_source(bias, dims) if len(dims) > 1 else None
    if block is None:
        return None
    if ir.RankedTensorType(block.type).element_type != ir.RankedTensorType(bias.type).element_type:
        return None
    built = isinstance(block.owner, ir.OpView) and rw.was_built(block.owner)
    return block if built or not computed_by_linear_op(block) else None


def _uniform(value: ir.Value) -> np.ndarray | None:
    """`value` as one float64 value (in a 1-element array) when it is a constant with
    every element equal, else None."""
    shape = ir.RankedTensorType(value.type).shape
    static = [d for d, n in enumerate(shape) if n >= 0]
    if not static:
        return None
    vector = per_channel_f64(value, static[0], shape[static[0]])
    if vector is None or not np.all(vector == vector[0]):
        return None
    return vector[:1]


def fold_scale_into_linear(op: stablehlo.MulOp, rw: FoldRewriter) -> Outcome:
    """(L(x, K) [+ b]) * c = L(x, K * c) [+ b * c]

    c is per-channel along a dimension L produces from its weights (for a convolution, the
    output-feature dimension); the multiply may have c on either side.

    c goes onto the weights only: a scalar c (per-channel along every dimension) is laid
    along the first dimension whose weights are a constant, else the first whose weights
    can be scaled in the graph, the rhs before the lhs (with both operands arguments, the
    rhs holds the weights: `x @ W`); never onto an operand computed by a linear op. A scalar
    constant c after L + b with a b over several of the weights' result dimensions
    (Flax attention's `query / sqrt(head_dim)` after a [heads, head_dim] bias) folds as
    L(x, K * c) + b * c, one linear op: constant weights and b, or in the graph the rhs's
    weights and a b that are arguments (or a bias a fold computed from them).

    Holds when, in this order: the element type is f16, bf16, f32 or f64; one operand is
    L or L + b and the other is per-channel; c, when not a constant, is a parameter, not
    computed from the data (`affine_map.computed_from_data`: a squeeze-excite gate or an
    attention weight would make the weights a run-time value); the multiply is the
    chain's only user (and L the bias add's); b is a finite per-channel constant; the
    weights are a float constant; c is finite; K * c and b * c are finite in their
    element types.
    """
    return _fold_factor(op, rw, divide=False)


def fold_divisor_into_linear(op: stablehlo.DivOp, rw: FoldRewriter) -> Outcome:
    """(L(x, K) [+ b]) / c = L(x, K * (1/c)) [+ b * (1/c)]

    Equinox's form: (y - mean) / sqrt(var + eps). 1/c is exact in float64 and the product
    is rounded once, so the folded weights are K / c correctly rounded to within one
    float64 rounding.

    Holds when, in this order: the conditions of `fold_scale_into_linear` with c the
    divisor (right operand only); and no c is zero.
    """
    return _fold_factor(op, rw, divide=True)


FOLD_SCALE_INTO_LINEAR = Pattern(
    PATTERN_NAMES[stablehlo.MulOp], stablehlo.MulOp, fold_scale_into_linear
)
FOLD_DIVISOR_INTO_LINEAR = Pattern(
    PATTERN_NAMES[stablehlo.DivOp], stablehlo.DivOp, fold_divisor_into_linear
)
