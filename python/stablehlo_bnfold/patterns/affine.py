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
graph, in the element type, and equal the original for finite parameters. Weights that
are themselves computed by a linear op (attention's k in `q @ k^T`) are an activation, not
a parameter: scaling them would move an op from one activation onto another and remove
none, so they are refused (`computed_by_linear_op`).

`affine_chain` is the one walk over a chain of per-feature affine ops (batch norm, add,
subtract, multiply, divide), shared by the input side (the chain before a linear op) and
mixed precision (the chain over a widening convert).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.layouts import LinearLayout, linear_layout
from ..analysis.per_channel import Narrow, per_channel_f64, per_channel_source
from ..analysis.shapes import shape_read_from
from ..analysis.users import single_user
from ..constants import constant_attr, constant_f64, float_dtype, read_dense, round_to, scale_along
from .base import FoldRewriter, Outcome

__all__ = [
    "AFFINE_OPS",
    "CHAIN_OPS",
    "DATA_DEPENDENT",
    "NARROW_WEIGHTS",
    "WEIGHTS_ARE_ACTIVATIONS",
    "AffineChain",
    "LinearChain",
    "PerChannel",
    "Weights",
    "affine_chain",
    "affine_step",
    "computed_by_linear_op",
    "computed_from_data",
    "chain_bias",
    "combine",
    "fold_affine",
    "linear_chain",
    "per_channel",
    "square_root",
    "weights_of",
]

LINEAR_OPS = (stablehlo.ConvolutionOp, stablehlo.DotGeneralOp, stablehlo.DotOp)

NARROW_WEIGHTS = "weights are narrower than the computation: folding would round them again"
"""Why weights in a narrower type than the values they are multiplied with are not scaled."""

AFFINE_OPS = (stablehlo.AddOp, stablehlo.SubtractOp, stablehlo.MulOp, stablehlo.DivOp)
"""Elementwise ops that are a per-channel affine map when one operand is per-channel."""

PerChannel = Union[np.ndarray, Narrow, ir.Value]
"""A per-channel vector: float64 values, a narrow IR value, or an IR vector of shape [C]."""


@dataclass(frozen=True)
class LinearChain:
    """`value = linear(...)` or `value = bias_add(linear(...), bias)`, seen from `value`.

    `linear_value` is the linear op's result, or the result of a `stablehlo.case` each of
    whose branches returns a linear op there (multi-platform exports lower a convolution
    once per platform); `branches` are those linear ops, `linear` the first of them.
    """

    linear_value: ir.Value
    branches: tuple[ir.OpView, ...]
    bias_add: stablehlo.AddOp | None
    bias_value: ir.Value | None

    @property
    def linear(self) -> ir.OpView:
        return self.branches[0]


def linear_chain(value: ir.Value) -> LinearChain | None:
    """The linear op (and bias add) that `value` is, else None. Structure only: users,
    constants and dimensions are checked by `chain_bias` and `weights_of`."""
    branches = _linear_branches(value)
    if branches:
        return LinearChain(value, branches, None, None)
    owner = value.owner
    if isinstance(owner, stablehlo.AddOp):
        for linear_value, bias_value in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            branches = _linear_branches(linear_value)
            if branches:
                return LinearChain(linear_value, branches, owner, bias_value)
    return None


def _linear_branches(value: ir.Value) -> tuple[ir.OpView, ...]:
    """The linear ops that produce `value`: itself, or one per `stablehlo.case` branch."""
    owner = value.owner
    if isinstance(owner, LINEAR_OPS):
        return (owner,)
    if not isinstance(owner, stablehlo.CaseOp):
        return ()
    index = ir.OpResult(value).result_number
    branches = []
    for region in owner.regions:
        returned = region.blocks[0].operations[len(region.blocks[0].operations) - 1].operands[index]
        if not isinstance(returned.owner, LINEAR_OPS):
            return ()
        branches.append(returned.owner)
    return tuple(branches)


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
    """The chain's bias per channel (zeros without a bias add), or why the chain cannot
    be rewritten: another user reads part of it, or the bias is not a finite per-channel
    value."""
    reason = _chain_users_reason(chain)
    if reason:
        return reason
    if chain.bias_value is None:
        return np.zeros(channels)
    bias = per_channel(chain.bias_value, feature, channels, in_graph)
    if bias is None:
        return "bias is not a per-channel constant"
    if isinstance(bias, np.ndarray) and not np.all(np.isfinite(bias)):
        return "bias is not finite"
    return bias


def _chain_users_reason(chain: LinearChain) -> str | None:
    """Why the chain cannot be rewritten in place because something else reads it."""
    if chain.bias_add is not None and not single_user(chain.bias_add.result):
        return "bias add result has other users"
    if not single_user(chain.linear_value) or not all(
        single_user(linear.result) for linear in chain.branches
    ):
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


def weights_of(
    chain: LinearChain, feature: int, in_graph: bool = False
) -> tuple[Weights, ...] | str:
    """The weights of each linear op in the chain that produce result dimension
    `feature`, or why they can't be scaled."""
    found = []
    for linear in chain.branches:
        weights = _weights(linear, feature, in_graph)
        if isinstance(weights, str):
            return weights
        found.append(weights)
    return tuple(found)


def _weights(linear: ir.OpView, feature: int, in_graph: bool) -> Weights | str:
    layout = linear_layout(linear, feature)
    if layout is None:
        return "feature_index is not the output-feature dimension"
    value = linear.operands[layout.weight_operand]
    tensor_type = ir.RankedTensorType(value.type)
    dtype = float_dtype(tensor_type.element_type)
    if dtype is None:
        return "weight element type is not f16, bf16, f32 or f64"
    if dtype.itemsize < float_dtype(ir.ShapedType(linear.result.type).element_type).itemsize:
        # y * s is computed in the wider result type, the weights exact: rounding K * s
        # to the weights' type would add an error the original never made.
        return NARROW_WEIGHTS
    attr = constant_attr(value)
    if attr is None and not in_graph:
        return "weights are not a constant"
    if attr is None and computed_by_linear_op(value):
        # q @ k^T / sqrt(d): k * (1 / sqrt(d)) removes the divide on [T, T] and adds a
        # multiply on k, another activation: nothing is removed.
        return WEIGHTS_ARE_ACTIVATIONS
    values = None if attr is None else read_dense(attr)
    return Weights(layout, value, values, tensor_type, dtype)


WEIGHTS_ARE_ACTIVATIONS = "weights are computed by a linear op: the op would only move onto them"
"""Why in-graph weights that are themselves an activation (attention's k) are not scaled."""


def computed_by_linear_op(value: ir.Value, budget: int = 64) -> bool:
    """Whether `value` is computed from the result of a convolution or dot_general (an
    activation, not a parameter); also True when `budget` producers are visited without
    reaching only constants and function arguments (the answer that never moves an op
    onto an activation). Parameters passed as arguments reach a linear op through a few
    converts, reshapes or transposes, so the walk is short."""
    pending, seen = [value], set()
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, ir.OpView) or hash(owner.operation) in seen:
            continue  # a block argument, or visited
        if isinstance(owner, LINEAR_OPS) or len(seen) >= budget:
            return True
        seen.add(hash(owner.operation))
        pending.extend(owner.operands)
    return False


DATA_DEPENDENT = "per-channel value is computed from the data: folding would make the weights depend on it"
"""Why a per-channel value that is not a parameter (a squeeze-excite gate, attention
weights, a per-token statistic) is not folded into weights."""

_PARAMETER_OPS = frozenset({
    "stablehlo.constant", "arith.constant", "stablehlo.iota",
    "stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.convert",
    "stablehlo.transpose", "stablehlo.slice",
    "stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
    "stablehlo.power", "stablehlo.maximum", "stablehlo.minimum", "stablehlo.negate",
    "stablehlo.abs", "stablehlo.sqrt", "stablehlo.rsqrt", "stablehlo.exponential",
    "stablehlo.log", "stablehlo.logistic", "stablehlo.tanh", "stablehlo.clamp",
    "stablehlo.select", "stablehlo.compare",
})
"""Ops that compute each element of their result from the elements at the same index
of their operands (or only move elements, or make constants): a value computed through
them from parameters is a parameter."""


def computed_from_data(value: ir.Value, budget: int = 64) -> bool:
    """Whether the per-channel `value` is data rather than a parameter.

    A *parameter* is a constant, or a function argument (weights passed as arguments,
    with `fold-weight-arguments`), or a value computed from parameters by ops in
    `_PARAMETER_OPS` only: elementwise arithmetic, broadcasts, reshapes, converts,
    transposes and slices (Flax's `reshape(convert(%scale))`, torch-mlir's
    `rsqrt(var + eps) * gamma`). Any other op on the way combines many elements of a
    tensor: a reduction (a squeeze-excite gate's global mean, a per-token statistic), a
    convolution or dot_general (the gate's dense layers, attention weights), a gather,
    a custom call. Such a value depends on the data: folded into weights, it would make
    them a run-time value, and every fold after it would see weights computed by a
    linear op. The shape operand of a dynamic broadcast is not read (only sizes).

    A function argument that is itself used as a per-channel factor (a FiLM scale passed
    in) cannot be told from a weight argument; `fold-weight-arguments=false` keeps every
    argument out. True also when `budget` ops are visited (the answer that never makes
    weights depend on the data)."""
    pending, seen = [value], set()
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, ir.OpView) or hash(owner.operation) in seen:
            continue  # a function argument, or visited
        if len(seen) >= budget:
            return True
        seen.add(hash(owner.operation))
        name = owner.operation.name
        if name == "stablehlo.dynamic_broadcast_in_dim":
            pending.append(owner.operands[0])
        elif name in _PARAMETER_OPS:
            pending.extend(owner.operands)
        else:
            return True
    return False


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
    simpler = _identity(ufunc, a, b)
    if simpler is not None:
        return simpler
    element_type = ir.ShapedType(like.type).element_type
    channels = _channels(a, b)
    return rw.elementwise(_OPS[ufunc], rw.vector(a, channels, element_type), rw.vector(b, channels, element_type))


def _identity(ufunc: np.ufunc, a: PerChannel, b: PerChannel) -> PerChannel | None:
    """x + 0 = x, x - 0 = x, x * 1 = x, x / 1 = x, 0 * x = 0: no op built (the in-graph
    path already assumes finite parameters)."""
    def is_const(v, c):
        return isinstance(v, np.ndarray) and np.all(v == c)

    if ufunc in (np.add, np.subtract) and is_const(b, 0):
        return a
    if ufunc is np.add and is_const(a, 0):
        return b
    if ufunc in (np.multiply, np.divide) and is_const(b, 1):
        return a
    if ufunc is np.multiply and is_const(a, 1):
        return b
    if ufunc is np.multiply and (is_const(a, 0) or is_const(b, 0)):
        return a if isinstance(a, np.ndarray) else b
    return None


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
    weights: tuple[Weights, ...] | None,
) -> Outcome:
    """Replace `root` (= chain * scale + shift, per channel) by the canonical form.

    `scale` None means all ones: the linear ops are reused as they are. `shift` already
    holds b * s + t. Constant weights times a constant scale, and a constant shift, take
    the exact path (float64, one rounding, a reason when the result is not finite in its
    element type; a zero bias adds nothing); anything else is computed in the graph.
    """
    channels = ir.RankedTensorType(root.result.type).shape[feature]
    weights_exact = scale is None or (
        isinstance(scale, np.ndarray) and all(w.values is not None for w in weights)
    )
    in_case = chain.linear_value != chain.linear.result
    if in_case and not weights_exact:
        # The factor is computed after the case; the branches cannot see it.
        return rw.skip(root, "weights in case branches are not constants")
    builders = []
    for linear, branch_weights in zip(chain.branches, weights or ()):
        if scale is None:
            break
        build = _scaled_weights(rw, branch_weights, scale, channels, weights_exact)
        if isinstance(build, str):
            return rw.skip(root, build)
        builders.append((linear, branch_weights.layout.weight_operand, build))
    element_type = ir.ShapedType(root.result.type).element_type
    if isinstance(shift, np.ndarray):
        bias = round_to(float_dtype(element_type), shift)
    else:
        bias = rw.vector(shift, channels, element_type)
    if bias is None:
        return rw.skip(root, "folded bias overflows its element type")

    linear_result = chain.linear_value
    for linear, index, build in builders:
        if not in_case:
            linear_result = rw.with_operand(linear, index, build())
            continue
        with rw.building_before(linear):
            rw.replace_inside(linear, rw.with_operand(linear, index, build()))
    like = _full_size_operand(root, chain, linear_result)
    if not isinstance(bias, np.ndarray):
        added = rw.elementwise(stablehlo.AddOp, linear_result, rw.broadcast(bias, like, feature))
    elif chain.bias_add is None and not np.any(bias):
        return rw.folded(root, linear_result, chain.linear)
    else:
        added = rw.add_per_feature(linear_result, bias, feature, like)
    return rw.folded(root, added, chain.linear)


def _scaled_weights(rw: FoldRewriter, weights: Weights, scale: PerChannel, channels: int, exact: bool):
    """A builder for the weights times `scale`, or why there is none (exact path only)."""
    axis = weights.layout.weight_axis
    if exact:
        values = scale_along(weights.values, scale, axis, weights.dtype)
        if values is None:
            if not np.all(np.isfinite(weights.values)):
                return "weights are not finite"
            return "folded weights overflow their element type"
        return lambda: rw.constant(values, weights.tensor_type, weights.value.owner.location)
    if isinstance(scale, np.ndarray) and round_to(weights.dtype, np.broadcast_to(scale, (channels,))) is None:
        # In the graph the factor is a constant of the weights' type: one that does not
        # fit would make rw.vector give nothing to broadcast (an internal error).
        return "folded weights overflow their element type"

    return lambda: rw.scaled(weights.value, scale, axis)


def _full_size_operand(root: ir.OpView, chain: LinearChain, linear_result: ir.Value) -> ir.Value:
    """A value of the root's shape that is not part of the chain, to read a dynamic shape
    from; else the new linear op (a shape read only for the bias add's broadcast is no
    second user, see `analysis.users.single_user`). Reading it from the replaced chain (or
    from a dynamic broadcast whose shape is read from the chain: torch-mlir's symbolic
    batch) would keep the replaced linear op alive beside the new one."""
    chain_value = chain.bias_add.result if chain.bias_add is not None else chain.linear_value
    for operand in root.operands:
        if operand != chain_value and operand.type == root.result.type:
            if not _shape_read_from_chain(operand, chain):
                return operand
            return linear_result
    return linear_result


def _shape_read_from_chain(value: ir.Value, chain: LinearChain) -> bool:
    if not isinstance(value.owner, stablehlo.DynamicBroadcastInDimOp):
        return False
    chain_values = [chain.linear_value] + ([chain.bias_add.result] if chain.bias_add else [])
    read = shape_read_from(value.owner.output_dimensions)
    return any(v == c for v in read for c in chain_values)


def affine_step(
    op: ir.OpView, feature: int, channels: int, constant: ir.Value | None
) -> tuple[np.ndarray, np.ndarray] | str | None:
    """(s, t) with op(y) = y * s + t along `feature`, in float64, for a batch norm or for an
    `AFFINE_OPS` op whose operand `constant` is per-channel there (the other operand is y;
    a subtract or divide has y on the left). None if it is not per-channel along
    `feature`; a reason when it is but cannot be folded (non-constant or non-finite
    statistics, variance + epsilon <= 0, a zero divisor)."""
    zeros, ones = np.zeros(channels), np.ones(channels)
    if isinstance(op, stablehlo.BatchNormInferenceOp):
        if op.feature_index.value != feature:
            return None
        stats = [constant_f64(v) for v in (op.scale, op.offset, op.mean, op.variance)]
        if any(s is None for s in stats):
            return "batch-norm operands are not constants"
        scale, offset, mean, variance = stats
        denominator = variance + float(ir.FloatAttr(op.epsilon).value)
        if not all(np.all(np.isfinite(a)) for a in stats):
            return "batch-norm operands are not finite"
        if not np.all(denominator > 0):
            return "variance + epsilon is not positive"
        s = scale / np.sqrt(denominator)
        return s, offset - mean * s
    c = per_channel_f64(constant, feature, channels)
    if c is None:
        return None
    if not np.all(np.isfinite(c)):
        return "per-channel factor is not finite"
    if isinstance(op, stablehlo.DivOp) and not np.all(c != 0):
        return "per-channel divisor has a zero"
    if isinstance(op, stablehlo.MulOp):
        return c, zeros
    if isinstance(op, stablehlo.DivOp):
        return 1.0 / c, zeros
    return ones, (c if isinstance(op, stablehlo.AddOp) else -c)


CHAIN_OPS = (stablehlo.BatchNormInferenceOp, *AFFINE_OPS)
"""The ops `affine_chain` walks through."""

_IN_GRAPH_UFUNC = {
    stablehlo.AddOp: np.add,
    stablehlo.SubtractOp: np.subtract,
    stablehlo.MulOp: np.multiply,
    stablehlo.DivOp: np.divide,
}


@dataclass(frozen=True)
class AffineStep:
    """`op(down) = down * s + t` per feature: (s, t) as float64 for constants, else
    `ufunc` and the op's per-channel operand `c` (a `Narrow`), applied in the graph."""

    op: ir.OpView
    down: ir.Value
    s: np.ndarray | None
    t: np.ndarray | None
    ufunc: np.ufunc | None = None
    c: Narrow | None = None
    split: ir.Value | None = None
    """For `op = down * (split * c)`, a product whose per-feature factor c is split off
    (Flax's `(x - mean) * (rsqrt(var + eps) * scale)`): the chain reads down * split,
    which the fold builds."""
    product: ir.OpView | None = None
    """The multiply split * c, removed with `op` when `op` is its only user."""


@dataclass(frozen=True)
class AffineChain:
    """`value = x * scale + shift` per feature, computed by `steps` (outermost first),
    each op's result read only by the next. `stopped` says why the walk ended at `x`
    when the op there is per-channel but cannot be folded."""

    steps: tuple[AffineStep, ...]
    x: ir.Value
    stopped: str | None
    channels: int

    @property
    def split(self) -> ir.Value | None:
        """The per-token factor the chain's input is multiplied by (x * split, built by the
        fold), when the innermost op's per-feature factor was split off a product."""
        return self.steps[-1].split

    @property
    def top(self) -> ir.OpView:
        return self.steps[0].op

    @property
    def constant(self) -> bool:
        """Whether every per-channel value is a constant (the exact float64 path)."""
        return all(step.c is None for step in self.steps)

    def activation_ops(self) -> int:
        """The activation-sized ops a fold removes: the chain's (a batch norm is a multiply
        and an add), and a split product read only by the chain, less the x * split the
        fold builds."""
        count = sum(2 if isinstance(s.op, stablehlo.BatchNormInferenceOp) else 1 for s in self.steps)
        product = self.steps[-1].product
        if product is not None:
            whole = product.result.type == self.steps[-1].op.result.type
            count += (single_user(product.result) and whole) - 1
        return count

    def affine(self, rw: FoldRewriter | None = None, like: ir.Value | None = None):
        """(scale, shift), from the innermost op out: float64 vectors for constants, else
        [C] values built by `rw` in the element type of `like`."""
        scale, shift = np.ones(self.channels), np.zeros(self.channels)
        for step in reversed(self.steps):
            if step.c is None:  # (v * s_in + t_in) * s + t
                scale = combine(rw, np.multiply, scale, step.s, like)
                scaled_shift = combine(rw, np.multiply, shift, step.s, like)
                shift = combine(rw, np.add, scaled_shift, step.t, like)
            elif step.ufunc in (np.multiply, np.divide):
                scale = combine(rw, step.ufunc, scale, step.c, like)
                shift = combine(rw, step.ufunc, shift, step.c, like)
            else:
                shift = combine(rw, step.ufunc, shift, step.c, like)
        return scale, shift


def affine_chain(
    value: ir.Value, feature: int, channels: int, in_graph: bool = False, split: bool = False
) -> AffineChain | str | None:
    """The per-feature affine ops that compute `value` along `feature`, from its op down
    while each op's result is read only by the next: batch norms with constant statistics,
    and add, subtract, multiply, divide by a per-channel constant (a subtract or divide
    continuing through its left operand only) or, with `in_graph`, by a per-channel value
    broadcast from a narrow one (a parameter passed as an argument).

    With `split`, the walk ends at a multiply by a product `a * c` with c per-channel
    (LayerNorm's and RMSNorm's per-token factor times their scale): c is the step's
    factor, and the chain reads x * a (see `AffineStep.split`).

    None when `value`'s op is not one; the reason when it is one that cannot be folded.
    The same walk serves the input side (the chain before a linear op) and mixed
    precision (the chain over a widening convert).
    """
    steps: list[AffineStep] = []
    stopped = None
    while not steps or single_user(value):
        step = _affine_op(value.owner, feature, channels, in_graph)
        if step is None and split:
            step = _split_product(value.owner, feature, channels, in_graph)
        if isinstance(step, str):
            stopped = step
        if not isinstance(step, AffineStep):
            break
        steps.append(step)
        value = step.down
        if step.split is not None:
            break
    if not steps:
        return stopped
    return AffineChain(tuple(steps), value, stopped, channels)


def _affine_op(op, feature: int, channels: int, in_graph: bool) -> AffineStep | str | None:
    if not isinstance(op, CHAIN_OPS):
        return None
    if isinstance(op, stablehlo.BatchNormInferenceOp):
        step = affine_step(op, feature, channels, None)
        return step if step is None or isinstance(step, str) else AffineStep(op, op.operand, *step)
    sides = ((op.lhs, op.rhs),)
    if isinstance(op, (stablehlo.AddOp, stablehlo.MulOp)):
        sides += ((op.rhs, op.lhs),)
    for down, constant in sides:
        step = affine_step(op, feature, channels, constant)
        if isinstance(step, str):
            return step
        if step is not None:
            return AffineStep(op, down, *step)
    if not in_graph:
        return None
    for down, other in sides:
        # Only a value broadcast from a narrow one: an activation of shape [1, C] is
        # narrow itself, and is the side the chain continues through.
        narrow = per_channel_source(other, feature, channels)
        if narrow is not None and narrow.value != other:
            if computed_from_data(narrow.value):
                return DATA_DEPENDENT
            return AffineStep(op, down, None, None, _IN_GRAPH_UFUNC[type(op)], narrow)
    return None


def _split_product(op, feature: int, channels: int, in_graph: bool) -> AffineStep | None:
    """`op = v * (a * c)`, c per-channel along `feature` and a not: the step v * c with
    the chain reading v * a."""
    if not isinstance(op, stablehlo.MulOp):
        return None
    for down, product in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        inner = product.owner
        if not isinstance(inner, stablehlo.MulOp) or product.type != op.result.type:
            continue
        for split, factor in ((inner.lhs, inner.rhs), (inner.rhs, inner.lhs)):
            if per_channel_f64(split, feature, channels) is not None:
                continue  # the product is per-channel: a plain step, or none
            c = per_channel_f64(factor, feature, channels)
            if c is not None and np.all(np.isfinite(c)):
                return AffineStep(op, down, c, np.zeros(channels), split=split, product=inner)
            narrow = per_channel_source(factor, feature, channels) if c is None and in_graph else None
            if (
                narrow is not None and narrow.value != factor
                and per_channel_source(split, feature, channels) is None
                and not computed_from_data(narrow.value)
            ):
                return AffineStep(op, down, None, None, np.multiply, narrow, split=split, product=inner)
    return None
