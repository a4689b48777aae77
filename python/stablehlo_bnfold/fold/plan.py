"""What a fold builds (`FoldPlan`), decided without touching the IR, and the one place
that builds it (`build`).

A pattern decides: it matches, checks its conditions from `affine_map`'s analysis, and
ends with `plan_fold`, which checks what only the folded numbers can tell (finite weights
and bias in their element types) and returns a plan or a reason. Only then does
`build(plan, rw)` create ops, so nothing is created that a skip would have to erase.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.shapes import shape_read_from, static_elements
from ..constants import float_dtype, round_to, scale_along
from . import reasons
from .affine_map import BiasedLinear, Computed, PerChannel, Weights, per_channel_op, reads_an_argument
from .reasons import Reason
from .rewriter import FoldRewriter, Outcome

__all__ = [
    "FoldPlan", "MovedOperands", "NewWeights", "build", "build_chain", "combine", "plan_fold",
    "per_call_larger", "shape_read_from_chain",
]


@dataclass(frozen=True)
class NewWeights:
    """Weights a fold gives one linear op: `values` (rounded to the weights' type) on the
    exact path, else the weights times the plan's scale, computed in the graph."""

    weights: Weights
    values: np.ndarray | None


@dataclass(frozen=True)
class MovedOperands:
    """Per-channel constants (rounded) that replace operands of an op a fold passes (a
    clamp's bounds times the scale): `values` pairs an operand's index with its [C]
    values, broadcast along `feature` to the op's result type. With `as_clamp` the op (a
    call of a clamp whose bounds sit in the callee) is replaced by `stablehlo.clamp` of
    operands 0 and 2 around the value below."""

    feature: int
    values: tuple[tuple[int, np.ndarray], ...]
    as_clamp: bool = False


@dataclass
class FoldPlan:
    """Replace `root` (= linear * scale + shift, per channel along `feature`) by
    `L(x, K') + broadcast_in_dim(bias)`. Never changed once made (not frozen only for
    its cost: a frozen dataclass sets each of the fourteen fields through
    `object.__setattr__`, five times the cost, and a chain fold makes one per op).

    `weights` holds one `NewWeights` per linear op of `linear` (none when the scale is all
    ones: the linear ops stay as they are); `bias` is rounded float64 values, or a value
    computed in the graph; None when the bias is zero and there is no bias add to replace.
    `scale` is read only by weights computed in the graph. A `feature` of several
    dimensions is a constant bias over a block of them (a scalar times L + b with a
    [heads, head_dim] b), which reads its dynamic shape from the new linear op; or, in
    the graph, the block b itself (an IR value of those dimensions), with `scale` the
    one-element scalar c: the build computes b * c.

    With `through` (the ops between the linear op and `root`'s chain that the scale passes,
    the one reading the linear op first: relus, `maximum(linear, 0)` or calls of one,
    max-pools, clamps, leaky relus, reshapes, transposes, slices, a concatenate), the root is
    P(linear) * scale + after: the ops P are rebuilt on the new linear op and the rounded
    shift `after` (None when zero) added behind them, along `after_feature` (the root's
    feature dimension, where reshapes or transposes among `through` move it; None: the
    same as `feature`). `moved` holds, per op of `through`, the operands it is rebuilt
    with besides the one below (None: none; empty: none for any op); `names` how the
    report names them. When the first of them is a concatenate, `parts` pairs each of its
    other operands with the plan of the linear op that computes it (its own weights and
    bias, its range of the scale; root and `through` unused). `after_reason`, when set,
    is why the add of `after` stays where the ops passed are linear (the report notes it
    at that add). `shift` is a constant `bias` before its rounding (float64), which the
    rest of the chain carries on (`patterns.decomposed.fold_chain`; once built, a fold of
    the op above reads it, `fold.affine_map.chain_bias`): rounded once, at its end."""

    root: ir.OpView
    linear: BiasedLinear
    feature: int | tuple[int, ...]
    scale: PerChannel | None
    weights: tuple[NewWeights, ...]
    bias: np.ndarray | PerChannel | None
    through: tuple[ir.OpView, ...] = ()
    after: np.ndarray | None = None
    after_feature: int | None = None
    moved: tuple[MovedOperands | None, ...] = ()
    names: tuple[str, ...] = ()
    parts: tuple[tuple[int, FoldPlan], ...] = ()
    after_reason: Reason | None = None
    shift: np.ndarray | None = None


def plan_fold(
    root: ir.OpView,
    linear: BiasedLinear,
    feature: int,
    *,
    scale: PerChannel | None,
    shift: PerChannel,
    weights: tuple[Weights, ...] | None,
    through: tuple[ir.OpView, ...] = (),
    after: np.ndarray | None = None,
    after_feature: int | None = None,
    moved: tuple[MovedOperands | None, ...] = (),
    names: tuple[str, ...] = (),
    bias_add: bool | None = None,
    larger_weights: bool = False,
    after_reason: Reason | None = None,
) -> FoldPlan | Reason:
    """The plan that replaces `root` (= linear * scale + shift, per channel) by the
    canonical form, or why there is none. With `through` (relus and max-pools between
    them, see `FoldPlan`), `root` = P(linear) * scale + after, `shift` the bias times the
    scale, and `after` the constant shift kept behind the last of them, along
    `after_feature` of `root` (None: `feature`), kept for `after_reason` when one is given.

    `scale` None means all ones: the linear ops are reused as they are. `shift` already
    holds b * s + t, in the order the pattern's algebra states it (its float64 rounding
    is part of the output). Constant weights times a constant scale, and a constant shift,
    take the exact path (float64, one rounding, a reason when the result is not finite in
    its element type; a zero bias adds nothing where there is no bias add to replace:
    `bias_add`, by default whether `linear` has one); anything else is computed in the graph,
    unless weights it scales on every call are larger than `root`'s result
    (`per_call_larger`: refused, a cost, unless `larger_weights`, the pass option
    `fold-larger-weight-arguments`).
    """
    channels = _channels(root, linear, feature, after_feature)
    weights_exact = scale is None or (
        isinstance(scale, np.ndarray) and all(w.values is not None for w in weights)
    )
    if not weights_exact and linear.linear_value != linear.linear.result:
        # The factor is computed after the case; the branches cannot see it.
        return reasons.CASE_WEIGHTS_NOT_CONSTANT
    new_weights = []
    for branch_weights in weights or ():
        if scale is None:
            break
        values = _scaled_weights(branch_weights, scale, channels, weights_exact)
        if isinstance(values, Reason):
            return values
        new_weights.append(NewWeights(branch_weights, values))
    bias = shift
    if isinstance(shift, np.ndarray):
        bias = round_to(float_dtype(ir.ShapedType(root.results[0].type).element_type), shift)
        if bias is None:
            return reasons.FOLDED_BIAS_OVERFLOW
        if bias_add is None:
            bias_add = linear.bias_add is not None
        if not bias_add and not np.count_nonzero(bias):  # (`bias.any()` at a third of the cost)
            bias = None
    if after is not None:
        after = round_to(float_dtype(ir.ShapedType(root.result.type).element_type), after)
        if after is None:
            return reasons.FOLDED_BIAS_OVERFLOW
        after = after if np.any(after) else None
    if not weights_exact and scale is not None and not larger_weights and per_call_larger(
        (w.value if w.master is None else w.master for w in weights), (scale,), root.result
    ):
        return reasons.COST_WEIGHTS_LARGER
    return FoldPlan(
        root, linear, feature, scale, tuple(new_weights), bias, through, after, after_feature, moved, names,
        after_reason=after_reason if after is not None else None,
        shift=shift if isinstance(shift, np.ndarray) else None,
    )


def _channels(
    root: ir.OpView, linear: BiasedLinear, feature: int | tuple[int, ...], after_feature: int | None
) -> int:
    """How many channels the weights of `linear` produce, along `feature` of its result
    (a slice of them before `root` keeps fewer); for a block `feature`, `root`'s along
    `after_feature`."""
    if isinstance(feature, int):
        return ir.RankedTensorType(linear.linear_value.type).shape[feature]
    return ir.RankedTensorType(root.result.type).shape[feature if after_feature is None else after_feature]


def per_call_larger(weights: Iterable[ir.Value], parameters: Iterable[PerChannel], activation: ir.Value) -> bool:
    """Whether a fold would compute in the graph, on every call, ops over `weights` (each
    the value it multiplies by the scale or contracts with the shift: the weights, or their
    master in a wider type) with more elements in all than `activation`, the tensor the
    folded op is on now (a dynamic dimension counted as 1, the smallest it can be): it would
    move that op onto a larger tensor. Such ops run on every call when the weights or one
    of `parameters` (the scale or shift they meet) read a function argument; computed from
    constants alone (torch-mlir's `transpose(%W)`, `exp` of a constant), compilers compute
    them once. Measured in docs/dev/benchmarks.md ("GPU latency"): at batch 1 such folds made
    inference slower."""
    # Both conditions are asked, the sizes first: they read only types, and decide most
    # (weights no larger than the activation), where the walk would read every producer
    # of the scale. The walk takes the weights first (it pops the last): an argument
    # ends it at once. Its answer does not depend on the order.
    weights = tuple(weights)
    if not all(isinstance(v.type, ir.RankedTensorType) for v in (*weights, activation)):
        return reads_an_argument((*weights, *parameters)) and _larger(weights, activation)
    return _larger(weights, activation) and reads_an_argument((*parameters, *weights))


def _larger(weights: tuple[ir.Value, ...], activation: ir.Value) -> bool:
    """Whether `weights` have more elements in all than `activation` (`static_elements`)."""
    return sum(static_elements(w) for w in weights) > static_elements(activation)


def _scaled_weights(
    weights: Weights, scale: PerChannel, channels: int, exact: bool
) -> np.ndarray | None | Reason:
    """The weights times `scale`, rounded (exact path), None (computed in the graph), or
    why they cannot be."""
    if exact:
        values = scale_along(weights.values, scale, weights.layout.weight_axis, weights.dtype)
        if values is None:
            if not np.all(np.isfinite(weights.values)):
                return reasons.WEIGHTS_NOT_FINITE
            return reasons.FOLDED_WEIGHTS_OVERFLOW
        return values
    if isinstance(scale, np.ndarray) and round_to(weights.dtype, np.broadcast_to(scale, (channels,))) is None:
        # In the graph the factor is a constant of the weights' type: one that does not
        # fit would make rw.vector give nothing to broadcast (an internal error).
        return reasons.FOLDED_WEIGHTS_OVERFLOW
    return None


def _built_linear(
    plan: FoldPlan, rw: FoldRewriter, own_shape: bool, linear_result: ir.Value | None = None
) -> ir.Value:
    """The new linear op of `plan`, its weights replaced, plus its bias; the bias is
    broadcast to the new linear op's own shape with `own_shape` (a fold through ops, or
    one operand of a concatenate), else to a full-size operand of the root.
    `linear_result`: the linear op an earlier step of the same build made (`build_chain`)."""
    root, linear, feature = plan.root, plan.linear, plan.feature
    linear_result, bias = _new_linear(plan, rw, linear_result)
    if isinstance(feature, tuple) or own_shape:
        like = linear_result
    else:
        like = _full_size_operand(root, linear, linear_result)
    shape = None if bias is None or like != linear_result else _shape_donor(root, linear, like)
    added = linear_result
    if bias is not None and not isinstance(bias, np.ndarray):
        added = rw.elementwise(stablehlo.AddOp, linear_result, rw.broadcast(bias, like, feature, shape))
    elif bias is not None:
        added = rw.add_per_feature(linear_result, bias, feature, like, shape, unrounded=plan.shift)
    return added


_SHAPE_WALK = (
    stablehlo.AddOp, stablehlo.SubtractOp, stablehlo.MulOp, stablehlo.DivOp, stablehlo.ConvertOp,
)
"""The ops `_shape_donor` looks below: a chain's steps and the converts around it."""

_SHAPE_WALK_OPS = 12
"""How many ops `_shape_donor` looks at, nearest first: a chain's few, never the network
below an operand that is an activation."""


def _shape_donor(root: ir.OpView, linear: BiasedLinear, like: ir.Value) -> ir.Value | None:
    """The shape operand of a dynamic broadcast the chain below `root` reads (a
    per-channel value broadcast to the activation, jax.export's symbolic batch: its
    shape built from the batch size argument), of `like`'s shape (`like` dynamic, and no
    dynamic broadcast itself) and not read from the chain (`shape_read_from_chain`): the
    bias broadcast reuses it where it would build `like`'s shape again (the precision
    island's root, a convert, has no operand of its type to read it from: a
    `get_dimension_size` and a reshape each dynamic dimension, a constant and a
    concatenate each fold; `FoldRewriter._shape_of`)."""
    like_type = ir.RankedTensorType(like.type)
    if like_type.has_static_shape or isinstance(like.owner, stablehlo.DynamicBroadcastInDimOp):
        return None
    dims = list(like_type.shape)
    pending = [root]
    for _ in range(_SHAPE_WALK_OPS):
        if not pending:
            break
        op = pending.pop(0)
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, stablehlo.DynamicBroadcastInDimOp):
                if list(ir.RankedTensorType(operand.type).shape) == dims and not shape_read_from_chain(operand, linear):
                    return owner.output_dimensions
            elif isinstance(owner, _SHAPE_WALK) and operand != linear.linear_value:
                pending.append(owner)
    return None


def _new_linear(
    plan: FoldPlan, rw: FoldRewriter, linear_result: ir.Value | None
) -> tuple[ir.Value, np.ndarray | ir.Value | None]:
    """The linear op of `plan` with its weights replaced (`linear_result`, by default
    the chain's own, when none are), and the bias to add to it: rounded values, or a
    vector built in the graph."""
    root, linear, feature = plan.root, plan.linear, plan.feature
    scale, bias = rw.realize(plan.scale, plan.bias)
    if bias is not None and not isinstance(bias, np.ndarray) and isinstance(feature, tuple):
        # A block bias in the graph, b over [heads, head_dim]: b * c (see `FoldPlan`).
        bias = rw.scaled(bias, scale, 0)
    elif bias is not None and not isinstance(bias, np.ndarray):
        element_type = ir.RankedTensorType(root.result.type).element_type
        bias = rw.vector(bias, _channels(root, linear, feature, plan.after_feature), element_type)
    if linear_result is None:
        linear_result = linear.linear_value
    in_case = bool(plan.weights) and linear.linear_value != linear.linear.results[0]
    for op, new in zip(linear.branches, plan.weights):
        weights = new.weights
        index = weights.layout.weight_operand
        with rw.building_before(op) if in_case else contextlib.nullcontext():
            if new.values is not None:
                value = rw.scaled_weights(
                    new.values, weights.value, weights.tensor_type, scale, weights.layout.weight_axis, weights.source
                )
            elif weights.master is not None:
                # convert_T(W_F * s): the product in the master's type F, rounded to T once.
                value = rw.scaled_master(weights.master, weights.tensor_type, scale, weights.layout.weight_axis)
            else:
                value = rw.scaled(weights.value, scale, weights.layout.weight_axis)
            replacement = rw.with_operand(op, index, value)
            if in_case:
                rw.replace_inside(op, replacement)
            else:
                linear_result = replacement
    return linear_result, bias


def build(plan: FoldPlan, rw: FoldRewriter) -> Outcome:
    """Create the ops of `plan` before its root, replace the root by them and record the
    fold."""
    root, linear, feature = plan.root, plan.linear, plan.feature
    added = _built_linear(plan, rw, own_shape=bool(plan.through))
    if not plan.through:
        if _costs_ops(plan, rw, [root]):
            return rw.skip(root, reasons.COST_MORE_OPS_IN_GRAPH)
        return rw.folded(root, added, linear.linear)
    reads = linear.bias_add.result if linear.bias_add is not None else linear.linear_value
    passed, rebuilt = added, []
    for position, op in enumerate(plan.through):
        # The operand that reads the op below: of a maximum either one, of a call its data
        # operand (after dimension sizes with a symbolic batch), of a max-pool its input.
        index = next(i for i, v in enumerate(op.operands) if v == reads)
        reads = op.results[0]
        replacements = {index: passed}
        for operand, part in plan.parts if position == 0 else ():
            replacements[operand] = _built_linear(part, rw, own_shape=True)
        moved = plan.moved[position] if plan.moved else None
        bounds = {}
        for operand, values in moved.values if moved is not None else ():
            element_type = ir.RankedTensorType(passed.type).element_type
            vector_type = ir.RankedTensorType.get([values.shape[0]], element_type)
            vector = rw.constant(values, vector_type, op.location)
            bounds[operand] = rw.broadcast(vector, passed, moved.feature)
        if moved is not None and moved.as_clamp:
            passed = rw.build(stablehlo.ClampOp, bounds[0], passed, bounds[2])
        else:
            passed = rw.with_operands(op, {**replacements, **bounds})
        rebuilt.append(passed)
    after_feature = feature if plan.after_feature is None else plan.after_feature
    result = passed if plan.after is None else rw.add_per_feature(passed, plan.after, after_feature, passed)
    if _costs_ops(plan, rw, [root, *plan.through]):
        return rw.skip(root, reasons.COST_MORE_OPS_IN_GRAPH)
    # A call is no pure op: the greedy driver never erases it once dead, and the old
    # linear op would stay computed beside the new one. Only the chain reads the last op,
    # each op only the next. Last, from the chain down: the ops above were built before.
    for op, new in reversed(list(zip(plan.through, rebuilt))):
        rw.replace_inside(op, new)
    outcome = rw.folded(root, result, linear.linear, through=", ".join(plan.names))
    if plan.after_reason is not None:
        rw.note(result.owner, plan.after_reason)
    return outcome


def build_chain(plans: tuple[FoldPlan, ...], patterns: tuple[str, ...], rw: FoldRewriter) -> Outcome:
    """Build `plans`, a chain's ops folded one after the other (each plan's root read
    only by the next's, see `FoldPlan.root`), as one fold: each step builds what a build
    of its plan alone would leave, before its root and with its root's location (its
    per-channel values and, for the one step that scales, the weights and the new linear
    op), the last one also its bias add, which replaces the last root. The report gets
    one fold per plan, under `patterns`' names. A single plan is `build`."""
    if len(plans) == 1:
        return build(plans[0], rw)
    linear_result = None
    for plan in plans[:-1]:
        if _builds_nothing(plan):
            continue  # (Flax's `L - mean`, a constant shift the steps after it carry on)
        with rw.acting_for(plan.root):
            linear_result, _ = _new_linear(plan, rw, linear_result)
    last = plans[-1]
    with rw.acting_for(last.root):
        added = _built_linear(last, rw, own_shape=False, linear_result=linear_result)
    steps = tuple(zip([plan.root for plan in plans], patterns))
    if any(map(_in_graph, plans)) and _costs_ops(last, rw, [last.root], any_plan=True):
        return rw.skip(last.root, reasons.COST_MORE_OPS_IN_GRAPH)
    return rw.folded_chain(steps, added, last.linear.linear)


def _builds_nothing(plan: FoldPlan) -> bool:
    """Whether `_new_linear` builds no op for `plan`: it replaces no weights, and its
    scale and bias are constants or none (nothing to realize or make a vector of)."""
    return (
        not plan.weights and not isinstance(plan.scale, Computed)
        and (plan.bias is None or isinstance(plan.bias, np.ndarray))
    )


def _in_graph(plan: FoldPlan) -> bool:
    """Whether `plan` computes weights or a bias in the graph (weights or statistics
    passed as arguments): on every call."""
    for new in plan.weights:  # (loops, not generators: three plans a chain fold)
        if new.values is None:
            return True
    if not (plan.bias is None or isinstance(plan.bias, np.ndarray)):
        return True
    for _, part in plan.parts:
        if _in_graph(part):
            return True
    return False


def _costs_ops(plan: FoldPlan, rw: FoldRewriter, replaced: list, any_plan: bool = False) -> bool:
    """Whether a fold of a `batch_norm_inference` computed in the graph (`_in_graph`)
    would leave more ops than the module had: the ops built outnumber those that go
    (`FoldRewriter.adds_ops`), unless `fold-larger-weight-arguments` asks for the linear
    op + bias form whatever it costs. The op is one op in the module; its scale, the
    scaled kernel and the bias computed in the graph take about ten. A decomposed chain
    holds the ops computing its scale and shift already, which go with it."""
    if rw.fold_larger_weight_arguments or not (any_plan or _in_graph(plan)):
        return False
    if not any(isinstance(op, stablehlo.BatchNormInferenceOp) for op in replaced):
        return False  # a chain computes its scale and shift already: about as many ops go
    return rw.adds_ops(replaced)


def combine(rw: FoldRewriter, ufunc: np.ufunc, a: PerChannel, b: PerChannel, like: ir.Value) -> PerChannel:
    """`per_channel_op(ufunc, a, b, like)` with a computed result built at once by `rw`
    (for a build step that computes per-channel values as it builds: the input side's)."""
    return rw.realize(per_channel_op(ufunc, a, b, like))[0]


def _full_size_operand(root: ir.OpView, linear: BiasedLinear, linear_result: ir.Value) -> ir.Value:
    """A value of the root's shape that is not part of the chain, to read a dynamic shape
    from; else the new linear op (a shape read only for the bias add's broadcast is no
    second user, see `analysis.users.single_user`). Reading it from the replaced chain (or
    from a dynamic broadcast whose shape is read from the chain: torch-mlir's symbolic
    batch) would keep the replaced linear op alive beside the new one."""
    chain_value = linear.bias_add.result if linear.bias_add is not None else linear.linear_value
    for operand in root.operands:
        if operand != chain_value and operand.type == root.results[0].type:
            if not shape_read_from_chain(operand, linear):
                return operand
            return linear_result
    return linear_result


def shape_read_from_chain(value: ir.Value, linear: BiasedLinear, also: tuple[ir.Value, ...] = ()) -> bool:
    """Whether `value` is a dynamic broadcast whose shape is read from `linear`'s chain
    (L or L + b) or from a value in `also` (ops rebuilt after it): an op that keeps
    reading it would keep the replaced chain alive, or read a value defined after it."""
    if not isinstance(value.owner, stablehlo.DynamicBroadcastInDimOp):
        return False
    chain_values = [linear.linear_value] + ([linear.bias_add.result] if linear.bias_add else []) + list(also)
    read = shape_read_from(value.owner.output_dimensions)
    return any(v == c for v in read for c in chain_values)
