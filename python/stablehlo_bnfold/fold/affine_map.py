"""The one analysis of per-channel affine maps around a linear op: pure, no IR created.

Canonical form: `L(x, K) [+ bias]`, where L is a convolution or dot_general and the bias is
per-channel along L's feature dimension. A per-channel affine map folds into it:

    (L(x, K) + b) * s + t = L(x, K * s) + (b * s + t)

since each output feature c of L is computed from weight slice c only. When s is all ones
the weights are left as they are and need not be constants.

Per-channel values are `PerChannel`: a float64 vector when every input is a constant (the
exact path: float64 math, one rounding, overflow refused), or, when some input is a
function argument (weights passed as arguments, the usual `jax.export` of `model.apply`),
a `Narrow` IR value or a `Computed` one: arithmetic the build step turns into ops on [C]
vectors, in the element type (`per_channel_op`). The folded weights `K *
broadcast_in_dim(s)` and the C-sized bias are then computed in the graph and equal the
original for finite parameters. Weights that are themselves computed by a linear op
(attention's k in `q @ k^T`) are an activation, not a parameter: scaling them would move
an op from one activation onto another and remove none, so they are refused
(`computed_by_linear_op`).

What is here: `biased_linear` (L or L + b, seen from a value), `chain_bias` and
`weights_of` (what a fold would rewrite, or why not), `batch_norm_statistics` and
`batch_norm_scale` (the one batch norm -> s), `factor_reason` (the one finite /
zero-divisor check), `AFFINE_UFUNC` (the affine ops of the one op -> ufunc table,
`analysis.per_channel.BINARY_UFUNC`), and `affine_chain`, the one walk over a chain of
per-feature affine ops (batch norm, add, subtract, multiply, divide), shared by the input
side (the chain before a linear op) and mixed precision (the chain over a widening
convert). What to build from it is `plan.py`'s.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Union

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.layouts import LinearLayout, linear_layout, linear_layouts
from ..analysis.per_channel import (
    BINARY_UFUNC,
    Narrow,
    per_channel_f64,
    per_channel_or_source,
    per_channel_source,
    uniform_f64,
)
from ..analysis.users import single_user
from ..constants import constant_attr, constant_f64, dimensions, float_dtype, read_dense, round_to
from . import reasons
from .reasons import Reason

__all__ = [
    "AFFINE_OPS",
    "AFFINE_UFUNC",
    "CHAIN_OPS",
    "LINEAR_NAMES",
    "LINEAR_OPS",
    "NOT_FUNCTIONS_OF_OPERANDS",
    "AffineChain",
    "AffineStep",
    "BiasedLinear",
    "Computed",
    "PerChannel",
    "Unrounded",
    "Weights",
    "affine_chain",
    "affine_step",
    "all_finite",
    "are_data_arguments",
    "batch_norm_scale",
    "batch_norm_statistics",
    "bias_and_weights",
    "biased_linear",
    "cancellation",
    "chain_bias",
    "computed_by_linear_op",
    "computed_from_constants",
    "computed_from_data",
    "factor_reason",
    "is_data_argument",
    "master_value",
    "master_weights",
    "per_channel",
    "per_channel_op",
    "reads_an_argument",
    "square_root",
    "StoredWeights",
    "stored_source",
    "stored_weights",
    "unrounded_bias",
    "weights_of",
]

LINEAR_OPS = (stablehlo.ConvolutionOp, stablehlo.DotGeneralOp, stablehlo.DotOp)
LINEAR_NAMES = frozenset(op.OPERATION_NAME for op in LINEAR_OPS)
"""Their names, for `op.name in` (a name costs less than an OpView)."""
_LINEAR_CLASSES = frozenset(LINEAR_OPS)
"""Their classes, for `type(owner) in`: `value.owner` is the registered class itself, and
`isinstance` against a tuple of nanobind classes tries each in turn."""

AFFINE_UFUNC = {
    op: BINARY_UFUNC[op]
    for op in (stablehlo.AddOp, stablehlo.SubtractOp, stablehlo.MulOp, stablehlo.DivOp)
}
"""Each elementwise op that is a per-channel affine map when one operand is per-channel,
and the ufunc it computes (from `analysis.per_channel.BINARY_UFUNC`, the one table)."""

AFFINE_OPS = tuple(AFFINE_UFUNC)
"""The ops of `AFFINE_UFUNC`, for `isinstance`."""

_ORDER = itertools.count()


@dataclass(frozen=True, eq=False)
class Computed:
    """`ufunc(*operands)` on per-channel values, computed in the graph in `element_type`
    by the build step, in the order the analysis computed them (`order`)."""

    ufunc: np.ufunc
    operands: tuple
    element_type: ir.Type
    channels: int
    order: int = field(default_factory=lambda: next(_ORDER))


PerChannel = Union[np.ndarray, Narrow, Computed, ir.Value]
"""A per-channel vector: float64 values, a narrow IR value, a value the build step
computes, or (built already) an IR vector of shape [C]."""


@dataclass(frozen=True)
class BiasedLinear:
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

    @property
    def layouts(self) -> dict[int, LinearLayout]:
        """`linear_layouts` of `linear`, read from its dimension numbers once for the
        chain (a matcher and then `weights_of` ask)."""
        # (Kept in the instance's dict, as `functools.cached_property` would, without the
        # lock it takes on Python 3.11.)
        layouts = self.__dict__.get("_layouts")
        if layouts is None:
            layouts = self.__dict__["_layouts"] = linear_layouts(self.linear)
        return layouts


def biased_linear(value: ir.Value) -> BiasedLinear | None:
    """The linear op (and bias add) that `value` is, else None. Structure only: users,
    constants and dimensions are checked by `chain_bias` and `weights_of`."""
    owner = value.owner  # each accessor is a call into the bindings: read once
    branches = _linear_branches(value, owner)
    if branches:
        return BiasedLinear(value, branches, None, None)
    if type(owner) is stablehlo.AddOp:
        lhs, rhs = owner.lhs, owner.rhs
        for linear_value, bias_value in ((lhs, rhs), (rhs, lhs)):
            branches = _linear_branches(linear_value, linear_value.owner)
            if branches:
                return BiasedLinear(linear_value, branches, owner, bias_value)
    return None


def _linear_branches(value: ir.Value, owner) -> tuple[ir.OpView, ...]:
    """The linear ops that produce `value` (whose `owner` is given): itself, or one per
    `stablehlo.case` branch."""
    kind = type(owner)
    if kind in _LINEAR_CLASSES:
        return (owner,)
    if kind is not stablehlo.CaseOp:
        return ()
    index = ir.OpResult(value).result_number
    branches = []
    for region in owner.regions:
        returned = region.blocks[0].operations[len(region.blocks[0].operations) - 1].operands[index]
        if type(returned.owner) not in _LINEAR_CLASSES:
            return ()
        branches.append(returned.owner)
    return tuple(branches)


def per_channel(
    value: ir.Value, feature: int, channels: int, fold_weight_arguments: bool
) -> PerChannel | None:
    """`value` as a per-channel vector along `feature`: float64 constants if it is one,
    else (with `fold_weight_arguments`) the narrow IR value it is broadcast from; None if
    neither."""
    return per_channel_or_source(value, feature, channels, fold_weight_arguments)


Unrounded = Callable[[ir.Value, int], "np.ndarray | None"]
"""The float64 values a bias (a value broadcast along a feature) was rounded from, where
a fold of this pass run built it: `FoldRewriter.unrounded`."""


def chain_bias(
    chain: BiasedLinear,
    feature: int,
    channels: int,
    fold_weight_arguments: bool = False,
    seen: PerChannel | None = None,
    unrounded: Unrounded | None = None,
) -> PerChannel | Reason:
    """The chain's bias per channel (zeros without a bias add), or why the chain cannot
    be rewritten: another user reads part of it, or the bias is not a finite per-channel
    value. `seen`, when a matcher has read it already, is the bias as `per_channel` read
    it with weight arguments (it is not read again). A constant bias an earlier fold
    built is read as the float64 values it was rounded from (`unrounded`, the
    rewriter's), so that a chain folded one op at a time rounds it once."""
    reason = _chain_users_reason(chain)
    if reason:
        return reason
    if chain.bias_value is None:
        return np.zeros(channels)
    if seen is None:
        bias = per_channel(chain.bias_value, feature, channels, fold_weight_arguments)
    else:  # per_channel without weight arguments: the constant, or nothing
        bias = seen if fold_weight_arguments or isinstance(seen, np.ndarray) else None
    if bias is None:
        return reasons.BIAS_NOT_PER_CHANNEL
    if isinstance(bias, np.ndarray) and not all_finite(bias):
        return reasons.BIAS_NOT_FINITE
    return unrounded_bias(chain.bias_value, feature, bias, unrounded)


def unrounded_bias(
    value: ir.Value, feature: int, bias: PerChannel, unrounded: Unrounded | None
) -> PerChannel:
    """`bias`, the values of the bias `value` along `feature` as `per_channel` read them,
    or the float64 values an earlier fold of this pass run rounded them from
    (`unrounded`), where they round to those: the constant they were recorded for, not
    another one since. A fold adding to the bias reads these, so that the bias is
    rounded once however many folds of a chain build it."""
    if not isinstance(bias, np.ndarray) or unrounded is None:
        return bias
    exact = unrounded(value, feature)
    dtype = float_dtype(ir.RankedTensorType(value.type).element_type)
    if exact is None or dtype is None or exact.shape != bias.shape:
        return bias
    rounded = round_to(dtype, exact)
    return exact if rounded is not None and np.array_equal(rounded.astype(np.float64), bias) else bias


def bias_and_weights(
    chain: BiasedLinear, feature: int, channels: int, fold_weight_arguments: bool = False,
    unrounded: Unrounded | None = None,
) -> tuple[PerChannel, tuple[Weights, ...]] | Reason:
    """`chain_bias`, then `weights_of`: both, or the first reason."""
    bias = chain_bias(chain, feature, channels, fold_weight_arguments, unrounded=unrounded)
    if isinstance(bias, Reason):
        return bias
    weights = weights_of(chain, feature, fold_weight_arguments)
    return weights if isinstance(weights, Reason) else (bias, weights)


def _chain_users_reason(chain: BiasedLinear) -> Reason | None:
    """Why the chain cannot be rewritten in place because something else reads it."""
    if chain.bias_add is not None and not single_user(chain.bias_add.result):
        return reasons.BIAS_ADD_USERS
    if not single_user(chain.linear_value):
        return reasons.PRODUCER_USERS
    branches = chain.branches
    if len(branches) == 1 and chain.linear_value == branches[0].results[0]:
        return None  # the linear op's result is `linear_value`, just asked about
    if not all(single_user(linear.result) for linear in branches):
        return reasons.PRODUCER_USERS
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
    master: ir.Value | None = None
    """Master weights passed as an argument, which `value` is a convert of, or a reshape
    of that convert (`values` None): the graph scales them in their own wider type and
    converts the product once, `convert_T(reshape(W_F) * s)` (mixed precision, see
    `master_value`)."""
    source: StoredWeights | None = None
    """Where `values` are stored, when `weights_of` read them from there
    (`stored_source`): what a fold's new weights are noted as scaled from."""


def weights_of(
    chain: BiasedLinear, feature: int, fold_weight_arguments: bool = False
) -> tuple[Weights, ...] | Reason:
    """The weights of each linear op in the chain that produce result dimension
    `feature`, or why they can't be scaled."""
    found = []
    for linear in chain.branches:
        layout = chain.layouts.get(feature) if linear is chain.linear else linear_layout(linear, feature)
        weights = _weights(linear, layout, fold_weight_arguments)
        if isinstance(weights, str):
            return weights
        found.append(weights)
    return tuple(found)


def _weights(linear: ir.OpView, layout: LinearLayout | None, fold_weight_arguments: bool) -> Weights | Reason:
    if layout is None:
        return reasons.NOT_OUTPUT_FEATURE
    value = linear.operands[layout.weight_operand]
    tensor_type = ir.RankedTensorType(value.type)
    dtype = float_dtype(tensor_type.element_type)
    if dtype is None:
        return reasons.WEIGHT_ELEMENT_TYPE
    if dtype.itemsize < float_dtype(ir.ShapedType(linear.results[0].type).element_type).itemsize:
        # y * s is computed in the wider result type, the weights exact: rounding K * s
        # to the weights' type would add an error the original never made.
        return reasons.NARROW_WEIGHTS
    source = stored_source(value)  # (`stored_weights`, its source kept)
    values = None if source is None else source.values()
    if values is None and not fold_weight_arguments:
        return reasons.WEIGHTS_NOT_CONSTANT
    if values is None and computed_by_linear_op(value):
        # q @ k^T / sqrt(d): k * (1 / sqrt(d)) removes the divide on [T, T] and adds a
        # multiply on k, another activation: nothing is removed.
        return reasons.WEIGHTS_ARE_ACTIVATIONS
    return Weights(layout, value, values, tensor_type, dtype, source=source)


def stored_weights(value: ir.Value) -> np.ndarray | None:
    """The values of the weights `value` when they are constant, in `value`'s shape: a
    `stablehlo.constant`'s (`read_dense`), or the constant a `stablehlo.transpose` reads,
    transposed (torch-mlir writes every `nn.Linear` as `dot_general(x, transpose(%W))`), a
    zero-copy view of its storage for f16/f32/f64. None for anything else.

    A fold writes the weights it scales (K * s, float64 rounded once) as a new constant of
    `value`'s type, which the linear op reads in place of `value`: the transpose is then
    left without readers, as the constant is for plain weights.

    >>> stored_weights(dot.rhs)   # doctest: +SKIP   (rhs = transpose(dense<...> : 10x64))
    array(..., shape=(64, 10), dtype=float32)
    """
    source = stored_source(value)
    return None if source is None else source.values()


@dataclass(frozen=True)
class StoredWeights:
    """Where constant weights are stored: a dense attribute, read as they are or, for
    the constant a `stablehlo.transpose` reads, transposed by `permutation`."""

    attr: ir.DenseElementsAttr
    permutation: tuple[int, ...] | None = None

    def values(self) -> np.ndarray | None:
        """The weights (`read_dense`, transposed), None for a type it does not read."""
        values = read_dense(self.attr)
        if values is None or self.permutation is None:
            return values
        return np.transpose(values, self.permutation)


def stored_source(value: ir.Value) -> StoredWeights | None:
    """Where the weights `value` are stored when they are constant (`stored_weights`),
    else None."""
    owner = value.owner
    if isinstance(owner, stablehlo.TransposeOp):
        attr = constant_attr(owner.operand)
        return None if attr is None else StoredWeights(attr, tuple(dimensions(owner.permutation)))
    attr = constant_attr(value)
    return None if attr is None else StoredWeights(attr)



def computed_by_linear_op(value: ir.Value, budget: int = 64, past_budget: bool = True) -> bool:
    """Whether `value` is computed from the result of a convolution, dot_general or dot (an
    activation, not a parameter); `past_budget` when `budget` producers are visited
    without reaching only constants and function arguments (by default True, the answer
    that never moves an op onto an activation). Parameters passed as arguments reach a
    linear op through a few converts, reshapes or transposes, so the walk is short."""
    # Each accessor is a call into the bindings (the input side asks this of every
    # consumer's weights): each op's `operation` is read once, and its class is compared
    # with `type(owner) in` (a linear op is never among those visited: it would have
    # ended the walk).
    pending, seen = [value], set()
    while pending:
        owner = pending.pop().owner
        if type(owner) in _LINEAR_CLASSES:
            return True
        if not isinstance(owner, ir.OpView):
            continue  # a block argument
        key = hash(owner.operation)
        if key in seen:
            continue
        if len(seen) >= budget:
            return past_budget
        seen.add(key)
        pending.extend(owner.operands)
    return False


def master_weights(weights: ir.Value, wide: np.dtype) -> np.ndarray | None:
    """The values of the constant that `weights` are a convert of (seen through a
    reshape, see `master_value`), in `weights`' shape, when it is at least as `wide` as
    the type a per-channel chain computes in: master weights; else None.

    The original rounds the master weights W to their type T once; a fold of a chain
    computed in the wider type rounds W * s (float64, from the master) to T once: each
    weight carries one rounding to T in both. Weights stored only in T would be rounded
    twice, W already and W * s again (mixed precision: `patterns.precision` and the
    input side). A reshape only moves elements: the master reshaped is the master of the
    reshaped weights (a view, no copy, for f16/f32/f64).

    >>> master_weights(conv.rhs, np.dtype(np.float32))   # doctest: +SKIP   (reshape(convert(dense<...> : 3x3x32x1xf32)))
    array(..., shape=(3, 3, 1, 32), dtype=float32)
    """
    master = master_value(weights, wide)
    attr = None if master is None else constant_attr(master)
    values = None if attr is None else read_dense(attr)
    return None if values is None else np.reshape(values, ir.RankedTensorType(weights.type).shape)


def master_value(weights: ir.Value, wide: np.dtype) -> ir.Value | None:
    """The value that `weights` are a convert of, when its float type is at least as
    `wide` as the type a per-channel chain computes in (a constant, or with weights as
    arguments the argument); else None. Also through a reshape of that convert (Keras's
    mixed-precision depthwise kernels, reshape(convert_T(W_F))): the master is then
    returned in its own shape, and `FoldRewriter.scaled_master` reshapes it.

    With weights as arguments the fold builds `convert_T(W_F * broadcast_in_dim(s_F))`:
    the product rounded to F, then once to T. Against the constant path's float64 product
    rounded once to T, that is a double rounding: the two differ only where W * s lies
    within F's rounding error (2^-24 of it for f32) of a midpoint between two T values,
    and then by one unit in T's last place; s itself carries the few roundings in F of
    the chain's own arithmetic, which the original makes too. Each weight still carries
    one rounding to T, at most half a unit of T plus F's eps, as in the original."""
    if isinstance(weights.owner, stablehlo.ReshapeOp):
        weights = weights.owner.operand
    convert = weights.owner
    if not isinstance(convert, stablehlo.ConvertOp):
        return None
    master = float_dtype(ir.ShapedType(convert.operand.type).element_type)
    if master is None or master.itemsize < wide.itemsize:
        return None
    return convert.operand


NOT_FUNCTIONS_OF_OPERANDS = frozenset({
    "stablehlo.rng", "stablehlo.rng_bit_generator", "stablehlo.custom_call",
    "stablehlo.infeed", "stablehlo.recv", "stablehlo.after_all",
    "stablehlo.replica_id", "stablehlo.partition_id",
    "stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.all_to_all",
    "stablehlo.reduce_scatter", "stablehlo.collective_permute", "stablehlo.collective_broadcast",
    "stablehlo.case", "stablehlo.if", "stablehlo.while",
})
"""Ops whose results are not computed from their operands alone: random numbers, custom
calls (anything, side effects included), values that arrive from outside or from other
replicas, and control flow (its regions read values from above that are not operands).
A value computed through one is never a parameter. Every other op (elementwise
arithmetic, compares, selects, reductions, linear ops, gathers, calls of functions that
hold none of these) computes its results from its operands, and a value computed from
parameters alone through it is a parameter."""

_SIZES_ONLY = {"stablehlo.dynamic_broadcast_in_dim": 1, "stablehlo.dynamic_reshape": 1}
"""Ops and how many of their operands are values: the rest are sizes (read from the batch
argument or the activation's shape), not values."""


def computed_from_data(value: ir.Value, budget: int = 64) -> bool:
    """Whether the per-channel `value` is data rather than a parameter.

    A *parameter* is computed from constants and weight arguments alone, through any ops
    but those of `NOT_FUNCTIONS_OF_OPERANDS` (a call through the function it calls):
    Flax's `reshape(convert(%scale))`, torch-mlir's `rsqrt(var + eps) * gamma`, Equinox's
    running statistics over `where(count == 0, 1, 1 - momentum ** count)`, a weight norm
    `g / ‖v‖`. *Data* is computed from a data argument (`is_data_argument`: the model's
    input, read by a linear op as its activation): a squeeze-excite gate (even at a 1x1
    spatial size), attention weights, a per-token statistic. Folded into weights, such a
    value would make them a run-time value, and every fold after it would see weights
    computed by a linear op. The sizes a dynamic broadcast or reshape reads are not values.

    A function argument that is itself used only as a per-channel factor (a FiLM scale
    passed in) cannot be told from a weight argument; `fold-weight-arguments=false` keeps
    every argument out. True also when `budget` ops are visited (the answer that never
    makes weights depend on the data)."""
    return _parameter_sources(value, budget) == _DATA


def computed_from_constants(value: ir.Value, budget: int = 16) -> bool:
    """Whether `value` is computed from constants alone, through any ops but those of
    `NOT_FUNCTIONS_OF_OPERANDS` (torch-mlir's `transpose(%weight)`, or weights a fold
    scaled in the graph): a parameter for certain, where a function argument may be the
    data. False when a function argument is reached, or such an op, or when `budget` ops
    are visited."""
    return _parameter_sources(value, budget) == _CONSTANTS


_DATA, _ARGUMENTS, _CONSTANTS = "data", "arguments", "constants"


def _parameter_sources(value: ir.Value, budget: int) -> str:
    """What `value` is computed from, walking its producers (a dynamic broadcast's or
    reshape's operand, not its sizes): `_DATA` at a data argument (`is_data_argument`),
    an op of `NOT_FUNCTIONS_OF_OPERANDS`, a call of a function that holds one, a linear op
    with an operand that is not an argument or a constant (`_plain`), or after `budget`
    ops; else `_ARGUMENTS` when a weight argument is reached, else `_CONSTANTS`."""
    # Each accessor is a call into the bindings: an op's hash and name are read from its
    # view (a view hashes as its operation), and most ops (arithmetic, broadcasts,
    # constants) pass one test of their name.
    pending, seen, found = [value], set(), _CONSTANTS
    while pending:
        value = pending.pop()
        owner = value.owner
        if not isinstance(owner, ir.OpView):
            if is_data_argument(value):
                return _DATA
            found = _ARGUMENTS
            continue
        key = hash(owner)
        if key in seen:
            continue
        if len(seen) >= budget:
            return _DATA
        seen.add(key)
        name = owner.name
        if name not in _SOURCES_SPECIAL:
            pending.extend(owner.operands)
            continue
        if name in NOT_FUNCTIONS_OF_OPERANDS:
            return _DATA
        if name == "func.call" and not _passage().pure_callee(owner):
            return _DATA
        operands = owner.operands
        if name in LINEAR_NAMES and not (_plain(operands[0]) and _plain(operands[1])):
            # A linear op with a computed operand: an activation (a squeeze-excite gate's
            # dense layers, attention's q . k), without walking the network back to the
            # data. Weights contracted with weights (W @ u) are two arguments or constants.
            return _DATA
        pending.extend(operands[:_SIZES_ONLY[name]] if name in _SIZES_ONLY else operands)
    return found


_SOURCES_SPECIAL = NOT_FUNCTIONS_OF_OPERANDS | LINEAR_NAMES | {"func.call", *_SIZES_ONLY}
"""The ops `_parameter_sources` does more with than walk on to every operand."""


def is_data_argument(argument: ir.Value, budget: int = 64) -> bool:
    """Whether the block argument `argument` is data the function is called with rather
    than a weight: what the pass can see of a plain module, where every argument is a
    tensor. An argument of the function's entry block is data when, following its users
    forward, a convolution reads it as its input, or a dot_general or dot as the operand
    that is not the weights (`_reads_as_data`); the walk stops where it is broadcast to
    meet the activation (`_places_a_parameter`, or a `batch_norm_inference` statistic,
    which the op broadcasts itself), where an add, subtract, multiply or divide applies it
    to a value computed by a linear op (`_computed_by_a_linear_op`: at batch 1 and a 1x1
    spatial size, or batch 1 after a dense layer, the activation has the shape of a
    reshaped parameter and no broadcast places it), at the sizes a dynamic broadcast or
    reshape reads, and at the function's return; a call it goes into the function called
    (back out to the call's result at its return), a `while` into its regions (as their
    block arguments). A weight argument reaches the kernel, or is broadcast onto the
    activation first (a norm's statistics, a bias). Any other block argument (of a region:
    a loop's state) is data; so is one whose walk passes `budget` ops. The answer is read
    once a pass run (`read_once_a_run`): a fold that contracts a shift argument with the
    weights would otherwise make it read as data after it."""
    return _passage().read_once_a_run(_data_key(argument), lambda: _is_data(argument, budget))


def are_data_arguments(arguments: list[ir.Value], budget: int = 64) -> list[bool]:
    """`is_data_argument` of each of `arguments`, all of one block, read once a run as it
    is: where they are is asked once, and the walks share what they read of an op (its
    uses, whether a broadcast places a parameter): a norm's variance and scale reach the
    same ops (`scale * rsqrt(var + eps)` and its broadcasts).

    >>> are_data_arguments(list(main.regions[0].blocks[0].arguments))   # doctest: +SKIP
    [True, False, False]
    """
    if not arguments:
        return []
    entry, reads = _in_entry_block(arguments[0]), _Reads()
    read_once = _passage().read_once_a_run
    return [
        read_once(_data_key(a), lambda: not entry or _reaches_as_data(a, budget, reads))
        for a in arguments
    ]


def _data_key(argument: ir.Value) -> tuple:
    # A value's hash is the address of the MLIR value behind it: one per argument, the
    # same from every handle, for as long as the function lives.
    return ("data argument", hash(argument))


@cache
def _passage() -> ModuleType:
    """`analysis.passage`, imported on first use (it reads this module). An import in the
    functions that need it cost 1 us a call, more than `is_data_argument`'s answer read
    once a run."""
    from ..analysis import passage

    return passage


def _is_data(argument: ir.Value, budget: int) -> bool:
    """`is_data_argument`, not read once."""
    return not _in_entry_block(argument) or _reaches_as_data(argument, budget, _Reads())


def _in_entry_block(argument: ir.Value) -> bool:
    """Whether the block argument `argument` is one of a `func.func`'s entry block."""
    block = argument.owner
    parent = block.owner
    if parent is None or parent.operation.name != "func.func":
        return False
    return block == parent.regions[0].blocks[0]


class _Reads:
    """What `_reaches_as_data` reads of the IR, kept while the IR stays as it is (the walks
    from one block's arguments, `are_data_arguments`): each value's uses, and whether a
    broadcast places a parameter."""

    def __init__(self) -> None:
        self._uses: dict[int, list[tuple[ir.Operation, str, int]]] = {}
        self._places: dict[int, bool] = {}
        self._meets: dict[tuple[int, int], bool] = {}
        self._expands: dict[tuple[ir.Type, ir.Type], bool] = {}

    def uses(self, value: ir.Value) -> list[tuple[ir.Operation, str, int]]:
        """Each use of `value`: the op that reads it (not its view), its name, the operand
        number."""
        key = hash(value)  # (the address of the value, as `_data_key`'s)
        found = self._uses.get(key)
        if found is None:
            found = self._uses[key] = []
            for use in value.uses:
                operation = use.owner.operation  # (an op's view, or the op: both have one)
                found.append((operation, operation.name, use.operand_number))
        return found

    def places_a_parameter(self, broadcast: ir.Operation) -> bool:
        """`_places_a_parameter(broadcast)`."""
        key = hash(broadcast)
        found = self._places.get(key)
        if found is None:
            found = self._places[key] = _places_a_parameter(broadcast, self)
        return found

    def expands(self, broadcast: ir.Operation, operand: ir.Type, result: ir.Type) -> bool:
        """`_expands` of the broadcast from type `operand` to type `result`, read once a
        pair of static shapes, which alone decide it (a norm's statistics are broadcast
        alike)."""
        key = (operand, result)  # (types are uniqued: hashed and compared by address)
        found = self._expands.get(key)
        if found is None:
            operand_shape, result_shape = ir.ShapedType(operand).shape, ir.ShapedType(result).shape
            found = _static_expansion(operand_shape, result_shape)
            if found is None:
                return _expands(broadcast, operand_shape, result_shape)
            self._expands[key] = found
        return found

    def meets_an_activation(self, operation: ir.Operation, number: int) -> bool:
        """Whether an operand of the elementwise `operation` other than operand `number`
        is computed by a linear op (`_computed_by_a_linear_op`)."""
        key = (hash(operation), number)
        found = self._meets.get(key)
        if found is None:
            operands = operation.operands
            found = self._meets[key] = any(
                _computed_by_a_linear_op(v) for i, v in enumerate(operands) if i != number
            )
        return found


def _reaches_as_data(argument: ir.Value, budget: int, reads: _Reads) -> bool:
    """`is_data_argument`'s walk from an argument of a function's entry block."""
    # Each value with the calls it was passed into, innermost last: at a callee's return
    # the walk goes on from that call's result, in its caller.
    pending: list[tuple[ir.Value, tuple]] = [(argument, ())]
    seen: set = set()
    while pending:
        value, calls = pending.pop()
        for operation, name, number in reads.uses(value):
            if name in LINEAR_NAMES:
                if _reads_as_data(operation, number):
                    return True
                continue
            if name in _SIZES_ONLY and number >= _SIZES_ONLY[name]:
                continue
            if name in _BROADCAST_NAMES and reads.places_a_parameter(operation):
                continue
            if name in _AFFINE_NAMES and reads.meets_an_activation(operation, number):
                continue  # applied to the activation (a norm's statistic at its own size)
            if name == "stablehlo.batch_norm_inference" and number > 0:
                continue  # a statistic: the op itself broadcasts it onto the activation
            if name == "func.return":
                if calls:
                    pending.extend((r, calls[:-1]) for r in calls[-1].results)
                continue
            if name == "stablehlo.while":  # the loop's regions read it as a block argument
                pending.extend((r.blocks[0].arguments[number], calls) for r in operation.regions)
            key = (hash(operation), calls)
            if key in seen:
                continue
            if len(seen) >= budget:
                return True
            seen.add(key)
            body = _passage().callee_body(operation.opview) if name == "func.call" else None
            if body is not None and len(calls) < 8:
                # Into the function: a batch size passed to `call @relu(%b, %x)` for its
                # shapes reaches no value there.
                pending.append((body[0].arguments[number], (*calls, operation)))
            else:
                for result in operation.results:
                    pending.append((result, calls))
    return False


_BROADCAST_NAMES = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.dynamic_broadcast_in_dim"})


_AFFINE_NAMES = frozenset({"stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide"})
"""The elementwise ops of a per-channel affine map: where a value read elementwise with an
activation (`_computed_by_a_linear_op`) is a parameter applied to it."""


def _computed_by_a_linear_op(value: ir.Value, budget: int = 16) -> bool:
    """Whether `value` is computed from the result of a convolution, dot_general or dot
    (an activation), walking its producers through every op; False at `budget` ops (the
    answer that keeps the argument walk going)."""
    return computed_by_linear_op(value, budget, past_budget=False)


def _reads_as_data(linear: ir.Operation, number: int) -> bool:
    """Whether operand `number` of the linear op is its activation, not its weights: a
    convolution's input (operand 0); of a dot_general or dot, an operand whose other is
    weights (`_plain`: an argument or a constant, seen through converts, reshapes,
    transposes and broadcasts) while it is not, or either operand when neither or both
    are (attention's `q @ k^T`; `W @ x` cannot be told from `x @ W`)."""
    if linear.name == "stablehlo.convolution":
        return number == 0
    return not _plain(linear.operands[number]) or _plain(linear.operands[1 - number])


_PLAIN_STEPS = frozenset({
    "stablehlo.convert", "stablehlo.reshape", "stablehlo.transpose", "stablehlo.broadcast_in_dim",
})


def _plain(value: ir.Value) -> bool:
    """Whether `value` is an argument or a constant, seen through `_PLAIN_STEPS`."""
    owner = value.owner
    while isinstance(owner, ir.OpView) and owner.operation.name in _PLAIN_STEPS:
        owner = owner.operands[0].owner
    return not isinstance(owner, ir.OpView) or owner.operation.name in _CONSTANT_NAMES


_CONSTANT_NAMES = frozenset({"stablehlo.constant", "arith.constant"})


_BINARY_ELEMENTWISE = frozenset({
    "stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
    "stablehlo.maximum", "stablehlo.minimum", "stablehlo.power", "stablehlo.compare",
    "stablehlo.select", "stablehlo.clamp",
})


def _places_a_parameter(broadcast: ir.Operation, reads: _Reads) -> bool:
    """Whether the broadcast puts a value where it meets an activation elementwise: onto
    a larger tensor (`_expands`), or with dimensions added only for elementwise ops to
    read it (a [C] bias onto a [1, C] activation at batch 1: the same size, a different
    shape; jax.export's `broadcast_in_dim` of the data that a reshape reads is not one)."""
    operand, result = broadcast.operands[0].type, broadcast.results[0].type
    if operand == result:
        return False
    if reads.expands(broadcast, operand, result):
        return True
    uses = reads.uses(broadcast.results[0])
    return bool(uses) and all(name in _BINARY_ELEMENTWISE for _, name, _ in uses)


def _expands(broadcast: ir.Operation, operand: list[int], result: list[int]) -> bool:
    """Whether the broadcast puts its operand (of shape `operand`) onto a larger tensor
    (of shape `result`): some result dimension larger than one (or dynamic) is new or
    comes from a dimension of size one."""
    static = _static_expansion(operand, result)
    if static is not None:
        return static
    mapped = dimensions(broadcast.attributes["broadcast_dimensions"])
    for d, size in enumerate(result):
        if size != 1 and (d not in mapped or operand[mapped.index(d)] == 1):
            return True
    return False


def _static_expansion(operand: list[int], result: list[int]) -> bool | None:
    """`_expands` where both shapes are static with no dimension of size zero (a dynamic
    one reads as negative): the shapes alone decide it. Else None."""
    if min(operand, default=1) > 0 and min(result, default=1) > 0:
        # Each operand dimension is 1 or the size of the result's it maps to (the
        # verifier's rule), so the result has more elements exactly when one such
        # dimension is there; read without the broadcast's dimensions.
        return math.prod(result) > math.prod(operand)
    return None


def reads_an_argument(values: Iterable[PerChannel | ir.Value], budget: int = 64) -> bool:
    """Whether any of `values` is computed from a function argument (or a region's block
    argument), walking producers through every op; past `budget` ops, assumed so."""
    pending, seen = [], set()
    for value in values:
        _push_ir_values(value, pending)
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, ir.OpView):
            return True
        if hash(owner.operation) in seen:
            continue
        if len(seen) >= budget:
            return True
        seen.add(hash(owner.operation))
        pending.extend(owner.operands)
    return False


def _push_ir_values(value: PerChannel | ir.Value, pending: list[ir.Value]) -> None:
    """The IR values `value` is computed from: none for float64 constants."""
    if isinstance(value, Narrow):
        pending.append(value.value)
    elif isinstance(value, Computed):
        for operand in value.operands:
            _push_ir_values(operand, pending)
    elif isinstance(value, ir.Value):
        pending.append(value)


def per_channel_op(ufunc: np.ufunc, a: PerChannel, b: PerChannel, like: ir.Value) -> PerChannel:
    """`ufunc(a, b)` per channel: in float64 when both are constants, else (unless an
    identity makes it one of them) a `Computed` value, built by the build step as an op
    on [C] vectors in the element type of `like`."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        with np.errstate(all="ignore"):
            return ufunc(a, b)
    simpler = _identity(ufunc, a, b)
    if simpler is not None:
        return simpler
    moved = _negation_moved(ufunc, a, b, like)
    if moved is not None:
        return moved
    return Computed(ufunc, (a, b), ir.ShapedType(like.type).element_type, _channels(a, b))


def _negation_moved(ufunc: np.ufunc, a: PerChannel, b: PerChannel, like: ir.Value) -> PerChannel | None:
    """0 - b = -b (one op, no zero constant), (-p) * c = -(p * c) (and / c), and a
    negation ended where it is added, (-p) + b = b - p, a + (-p) = a - p, a - (-p) = a + p:
    Flax's shift in the graph, (0 - mean) * s + offset, is built as offset - mean * s, two
    ops on [C] vectors instead of a constant and three. Each is exact in every rounding
    mode (negation is exact, and x + (-p) is x - p); None where none applies."""
    element_type = ir.ShapedType(like.type).element_type
    if ufunc is np.subtract and isinstance(a, np.ndarray) and not np.any(a):
        return Computed(np.negative, (b,), element_type, _channels(a, b))
    negated_a, negated_b = _negated(a), _negated(b)
    if ufunc in (np.multiply, np.divide) and negated_a is not None:
        return Computed(np.negative, (per_channel_op(ufunc, negated_a, b, like),), element_type, _channels(a, b))
    if ufunc is np.multiply and negated_b is not None:
        return Computed(np.negative, (per_channel_op(ufunc, a, negated_b, like),), element_type, _channels(a, b))
    if ufunc is np.add and negated_a is not None:
        return per_channel_op(np.subtract, b, negated_a, like)
    if ufunc in (np.add, np.subtract) and negated_b is not None:
        other = np.subtract if ufunc is np.add else np.add
        return per_channel_op(other, a, negated_b, like)
    return None


def _negated(value: PerChannel) -> PerChannel | None:
    """p where `value` is -p: a `Computed` negation, or one an earlier fold built in the
    graph (a [C] vector, read back as a narrow value: the fold of the op below, one
    application before), so that one fold at a time builds what a chain's one fold does."""
    if isinstance(value, Computed):
        return value.operands[0] if value.ufunc is np.negative else None
    vector = value.value if isinstance(value, Narrow) else value
    if not isinstance(vector, ir.Value) or not isinstance(vector.owner, stablehlo.NegOp):
        return None
    shaped = ir.RankedTensorType(vector.type)
    return vector.owner.operand if shaped.rank == 1 else None


def square_root(a: PerChannel, like: ir.Value) -> PerChannel:
    """sqrt(a): in float64 for constants, else a `Computed` `stablehlo.sqrt` on the [C]
    vector."""
    if isinstance(a, np.ndarray):
        with np.errstate(all="ignore"):
            return np.sqrt(a)
    return Computed(np.sqrt, (a,), ir.ShapedType(like.type).element_type, _channels(a))


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


def _channels(*values: PerChannel) -> int:
    for value in values:
        if isinstance(value, np.ndarray):
            return value.shape[0]
    for value in values:
        if isinstance(value, Computed):
            return value.channels
        if isinstance(value, Narrow) and value.feature is not None:
            return ir.ShapedType(value.value.type).shape[value.feature]
        if not isinstance(value, Narrow):
            return ir.ShapedType(value.type).shape[0]
    return 1


def batch_norm_statistics(
    bn: stablehlo.BatchNormInferenceOp, fold_weight_arguments: bool
) -> list[PerChannel] | Reason:
    """scale, offset, mean, variance as float64 constants or, with
    `fold_weight_arguments`, the narrow values they are; `BN_NOT_CONSTANT` when one is
    neither."""
    stats = []
    for value in (bn.scale, bn.offset, bn.mean, bn.variance):
        constant = constant_f64(value)
        if constant is None and not fold_weight_arguments:
            return reasons.BN_NOT_CONSTANT
        stats.append(constant if constant is not None else Narrow(value, 0))
    return stats


def batch_norm_scale(
    bn: stablehlo.BatchNormInferenceOp, stats: list[PerChannel], channels: int
) -> PerChannel | Reason:
    """s = scale / sqrt(variance + epsilon) per channel from `batch_norm_statistics`, or
    why there is none: a constant statistic is not finite, or variance + epsilon <= 0."""
    scale, _, _, variance = stats
    epsilon = np.full(channels, float(ir.FloatAttr(bn.epsilon).value))
    if not all(np.isfinite(a).all() for a in stats if isinstance(a, np.ndarray)):
        return reasons.BN_NOT_FINITE
    denominator = per_channel_op(np.add, variance, epsilon, bn.result)
    if isinstance(denominator, np.ndarray) and not np.all(denominator > 0):
        return reasons.VARIANCE_NOT_POSITIVE
    return per_channel_op(np.divide, scale, square_root(denominator, bn.result), bn.result)


def all_finite(values: np.ndarray) -> bool:
    """Whether every one of `values` is finite: `np.isfinite(values).all()` at half the
    cost on the [C] vectors a fold checks (`ndarray.all` goes through a Python function)."""
    return np.count_nonzero(np.isfinite(values)) == values.size


def factor_reason(c: np.ndarray, divide: bool) -> Reason | None:
    """Why the constant per-channel factor `c` (a divisor with `divide`) cannot be folded
    into weights: it is not finite, or a divisor has a zero."""
    if not all_finite(c):
        return reasons.FACTOR_NOT_FINITE
    if divide and not (c != 0).all():
        return reasons.DIVISOR_ZERO
    return None


def affine_step(
    op: ir.OpView, feature: int, channels: int, constant: ir.Value | None
) -> tuple[np.ndarray, np.ndarray] | str | None:
    """(s, t) with op(y) = y * s + t along `feature`, in float64, for a batch norm or for an
    `AFFINE_OPS` op whose operand `constant` is per-channel there (the other operand is y;
    a subtract or divide has y on the left). None if it is not per-channel along
    `feature`; a reason when it is but cannot be folded (non-constant or non-finite
    statistics, variance + epsilon <= 0, a zero divisor)."""
    if isinstance(op, stablehlo.BatchNormInferenceOp):
        if op.feature_index.value != feature:
            return None
        stats = batch_norm_statistics(op, fold_weight_arguments=False)
        s = stats if isinstance(stats, Reason) else batch_norm_scale(op, stats, channels)
        if isinstance(s, Reason):
            return s
        _, offset, mean, _ = stats
        return s, offset - mean * s
    c = per_channel_f64(constant, feature, channels)
    if c is None:
        return None
    reason = factor_reason(c, divide=isinstance(op, stablehlo.DivOp))
    if reason is not None:
        return reason
    # The unit vectors only now: most operands tried are not per-channel constants (an
    # argument's broadcast, the chain's own activation side), and each is 1.5 us.
    if isinstance(op, stablehlo.MulOp):
        return c, np.zeros(channels)
    if isinstance(op, stablehlo.DivOp):
        return 1.0 / c, np.zeros(channels)
    return np.ones(channels), (c if isinstance(op, stablehlo.AddOp) else -c)


CHAIN_OPS = (stablehlo.BatchNormInferenceOp, *AFFINE_OPS)
"""The ops `affine_chain` walks through."""


@dataclass(frozen=True)
class AffineStep:
    """`op(down) = down * s + t` per feature: (s, t) as float64 for constants, else
    `ufunc` and the op's per-channel operand `c` (a `Narrow`), applied in the graph."""

    op: ir.OpView
    down: ir.Value
    s: PerChannel | None
    t: PerChannel | None
    """float64 constants; for a batch norm whose statistics are arguments, values the
    graph computes (`Computed`)."""
    ufunc: np.ufunc | None = None
    c: Narrow | None = None
    split: ir.Value | None = None
    """For `op = down * (split * c)`, a product whose per-feature factor c is split off
    (Flax's `(x - mean) * (rsqrt(var + eps) * scale)`): the chain reads down * split,
    which the fold builds."""
    product: ir.OpView | None = None
    """The multiply split * c, removed with `op` when `op` is its only user."""

    @property
    def constant(self) -> bool:
        """Whether s and t are float64 constants (not applied in the graph)."""
        return (
            self.c is None and isinstance(self.s, np.ndarray) and isinstance(self.t, np.ndarray)
        )


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
        return all(step.constant for step in self.steps)

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

    def affine(self, like: ir.Value | None = None) -> tuple[PerChannel, PerChannel]:
        """(scale, shift), from the innermost op out: float64 vectors for constants, else
        `Computed` values in the element type of `like`, for the build step to build."""
        scale, shift = np.ones(self.channels), np.zeros(self.channels)
        for step in reversed(self.steps):
            if step.c is None:  # (v * s_in + t_in) * s + t
                scale = per_channel_op(np.multiply, scale, step.s, like)
                scaled_shift = per_channel_op(np.multiply, shift, step.s, like)
                shift = per_channel_op(np.add, scaled_shift, step.t, like)
            elif step.ufunc in (np.multiply, np.divide):
                scale = per_channel_op(step.ufunc, scale, step.c, like)
                shift = per_channel_op(step.ufunc, shift, step.c, like)
            else:
                shift = per_channel_op(step.ufunc, shift, step.c, like)
        return scale, shift


def cancellation(affine: AffineChain) -> tuple[int, np.ndarray] | None:
    """How far from zero a chain's statistics put its data against their spread: (the
    index in `affine.steps` of the step that centres the data, |centre| / spread per
    channel) for the innermost step that is a batch norm with constant statistics (centre
    the mean, spread sqrt(variance + epsilon)) or a subtract of a constant m followed by a
    multiply by rsqrt(v) (or by its product with other per-channel factors) or a divide
    by sqrt(v) (centre m, spread sqrt(v)): (x - mean) * rsqrt(var + eps) * gamma + beta as
    Flax, torch-mlir and Equinox write it. Both are read at the step's input, computed
    from x by the constant steps below it as x * a + b (centre m - b). None for a chain
    with neither (a LayerNorm's gamma and beta, a normalization by constants), or with a
    step the graph computes below it.

    Folded into a linear op after it, such a chain's terms x * s are |centre| / spread
    times the norm's result, and the bias that cancels them as large: the layer's
    rounding error grows with that ratio where the original subtracted the mean first."""
    steps = affine.steps
    below = np.zeros(affine.channels)  # b: the shift of the constant steps below
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        if not step.constant:
            return None
        centred = _centred(step, steps[index - 1] if index else None, affine.channels)
        if centred is not None:
            with np.errstate(all="ignore"):
                return index, np.abs(centred[0] - below) / centred[1]
        below = below * step.s + step.t
    return None


def _centred(step: AffineStep, above: AffineStep | None, channels: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(centre, spread) per channel where `step` is a batch norm with constant statistics,
    or a subtract of a constant that `above` divides by its spread (`_spread`)."""
    op = step.op
    if isinstance(op, stablehlo.BatchNormInferenceOp):
        stats = batch_norm_statistics(op, fold_weight_arguments=False)
        epsilon = float(ir.FloatAttr(op.epsilon).value)
        return stats[2], np.sqrt(stats[3] + epsilon)
    if not isinstance(op, stablehlo.SubtractOp) or above is None or not above.constant:
        return None
    spread = _spread(above, channels)
    return None if spread is None else (-step.t, spread)


def _spread(step: AffineStep, channels: int) -> np.ndarray | None:
    """sqrt(v) where `step` multiplies by rsqrt(v) (alone or times other per-channel
    factors: Flax's rsqrt(var + eps) * scale) or divides by sqrt(v), v a constant that
    varies along one dimension at most and is positive; seen through broadcast_in_dim
    (static or dynamic: a symbolic batch), reshape and convert. None for any other step."""
    op = step.op
    if isinstance(op, stablehlo.MulOp):
        root = _root(op.rhs if op.lhs == step.down else op.lhs, stablehlo.RsqrtOp, 2)
    elif isinstance(op, stablehlo.DivOp) and op.lhs == step.down:
        root = _root(op.rhs, stablehlo.SqrtOp, 0)
    else:
        return None
    if root is None:
        return None
    shape = ir.ShapedType(root.operand.type).shape
    wide = [d for d, n in enumerate(shape) if n != 1]
    if len(wide) > 1:
        return None
    if wide:
        v = per_channel_f64(root.operand, wide[0], channels)
    else:
        uniform = uniform_f64(root.operand)
        v = None if uniform is None else np.full(channels, uniform)
    if v is None or not np.all(np.isfinite(v)) or not np.all(v > 0):
        return None
    return np.sqrt(v)


_SEEN_THROUGH = (
    stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp, stablehlo.ReshapeOp, stablehlo.ConvertOp,
)


def _root(value: ir.Value, kind: type, products: int) -> ir.OpView | None:
    """The op of class `kind` that computes `value`, seen through broadcast_in_dim
    (static or dynamic), reshape and convert, and up to `products` multiplies (either
    side)."""
    owner = value.owner
    while isinstance(owner, _SEEN_THROUGH):
        owner = owner.operands[0].owner
    if isinstance(owner, kind):
        return owner
    if products and isinstance(owner, stablehlo.MulOp):
        for operand in owner.operands:
            found = _root(operand, kind, products - 1)
            if found is not None:
                return found
    return None


def affine_chain(
    value: ir.Value,
    feature: int,
    channels: int,
    fold_weight_arguments: bool = False,
    split: bool = False,
) -> AffineChain | Reason | None:
    """The per-feature affine ops that compute `value` along `feature`, from its op down
    while each op's result is read only by the next: batch norms with constant statistics
    (or, with `fold_weight_arguments`, statistics that are parameters: s and t computed in
    the graph, `_batch_norm_in_graph`), and add, subtract, multiply, divide by a per-channel
    constant (a subtract or divide continuing through its left operand only) or, with
    `fold_weight_arguments`, by a per-channel value broadcast from a narrow one (a
    parameter passed as an argument).

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
        step = _affine_op(value.owner, feature, channels, fold_weight_arguments)
        if step is None and split:
            step = _split_product(value.owner, feature, channels, fold_weight_arguments)
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


def _affine_op(
    op, feature: int, channels: int, fold_weight_arguments: bool
) -> AffineStep | Reason | None:
    if not isinstance(op, CHAIN_OPS):
        return None
    if isinstance(op, stablehlo.BatchNormInferenceOp):
        step = affine_step(op, feature, channels, None)
        if step is reasons.BN_NOT_CONSTANT and fold_weight_arguments:
            step = _batch_norm_in_graph(op, channels)
        return step if step is None or isinstance(step, str) else AffineStep(op, op.operand, *step)
    lhs, rhs = op.lhs, op.rhs  # (each a call into the bindings: read once)
    sides = ((lhs, rhs),)
    if isinstance(op, (stablehlo.AddOp, stablehlo.MulOp)):
        sides += ((rhs, lhs),)
    for down, constant in sides:
        step = affine_step(op, feature, channels, constant)
        if isinstance(step, str):
            return step
        if step is not None:
            return AffineStep(op, down, *step)
    if not fold_weight_arguments:
        return None
    for down, other in sides:
        # Only a value broadcast from a narrow one: an activation of shape [1, C] is
        # narrow itself, and is the side the chain continues through.
        narrow = per_channel_source(other, feature, channels)
        if narrow is not None and narrow.value != other:
            if computed_from_data(narrow.value):
                return reasons.DATA_DEPENDENT
            return AffineStep(op, down, None, None, AFFINE_UFUNC[type(op)], narrow)
    return None


def _batch_norm_in_graph(
    op: stablehlo.BatchNormInferenceOp, channels: int
) -> tuple[PerChannel, PerChannel] | Reason:
    """(s, t) of a batch norm whose statistics are parameters in the graph (weights as
    arguments: LeViT's BatchNorm1d), as values the build step computes; or why not: a
    statistic is computed from the data, or a constant one is not finite or makes
    variance + epsilon <= 0."""
    stats = batch_norm_statistics(op, fold_weight_arguments=True)
    if any(isinstance(v, Narrow) and computed_from_data(v.value) for v in stats):
        return reasons.DATA_DEPENDENT
    s = batch_norm_scale(op, stats, channels)
    if isinstance(s, Reason):
        return s
    _, offset, mean, _ = stats
    centred = per_channel_op(np.multiply, mean, s, op.result)
    return s, per_channel_op(np.subtract, offset, centred, op.result)


def _split_product(
    op, feature: int, channels: int, fold_weight_arguments: bool
) -> AffineStep | None:
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
            narrow = None
            if c is None and fold_weight_arguments:
                narrow = per_channel_source(factor, feature, channels)
            if (
                narrow is not None and narrow.value != factor
                and per_channel_source(split, feature, channels) is None
                and not computed_from_data(narrow.value)
            ):
                return AffineStep(op, down, None, None, np.multiply, narrow, split=split, product=inner)
    return None
