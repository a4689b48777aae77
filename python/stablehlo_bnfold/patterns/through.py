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
scale also passes a VGG or ResNet stem, conv -> ReLU -> max-pool -> BN. Without the relu
the shift passes the max-pool too, maxpool(v) + t = maxpool(v + t) exactly (rounding is
monotonic, and -inf + t = -inf), where every window holds an element of v or the init
value is -inf; like a sum's (below), it goes into a bias add L already has.

A reshape or a transpose only moves elements. When it keeps the feature dimension whole
(a transpose always does; a reshape, static or dynamic, when the same number of elements
follow a dimension of the same size on both sides), element i of its result holds the
channel its source element held, so for any per-channel s and t, of any sign,

    reshape(v) * s + t = reshape(v * s + t)

with s and t read along the mapped dimension. Between the linear op and the chain with
nothing else, the whole map goes into the weights and the bias: LeViT's `Linear ->
flatten -> BatchNorm1d -> reshape`, a Flax Dense -> reshape -> BatchNorm.

A clamp (ReLU6: `jax.lax.clamp`, torch-mlir's hardtanh, TensorFlow's Relu6) commutes
with a positive scale when its bounds move with it, exactly as the maximum does:

    clamp(lo, v, hi) * s = clamp(lo * s, v * s, hi * s)     (s > 0)

so a clamp whose bounds are constants is rebuilt with the per-channel bounds lo * s and
hi * s. `jax.nn.relu6` is exported as a call of `minimum(maximum(v, 0), 6)`, its bounds in
the callee: the call is replaced by an inline clamp with the moved bounds. A leaky relu,
select(v >= 0, v, a * v), is positively homogeneous for any a: for s > 0 the sign of
v * s is the sign of v, so leaky(v) * s = leaky(v * s) and the op is rebuilt as it is.
jax.export writes `jax.nn.leaky_relu` as a call (`call @leaky_relu(%v, %alpha)`); that
form is recognized. An inline select reads v three times (compare, multiply, select),
which the single-user rule of the linear op refuses.

A concatenate of linear ops along the feature dimension is linear too: operand i holds
the channels [o_i, o_i + c_i), so

    concat(L_1, ..., L_n) * s + t = concat(L_1 * s_1 + t_1, ..., L_n * s_n + t_n)

with s_i, t_i those channels of s and t (the whole of them along another dimension).
Each linear op takes its range into its weights and bias: an Inception-style block
concat(conv, conv) -> BN.

A sum pool (`reduce_window` whose body is `add`, init 0: an average pool before its divide)
and a sum over other dimensions (`reduce` add, init 0: a mean or a global average pool
before its divide) are linear too. With a window of one along the channels, for any
per-channel s of any sign, pool(v) * s = pool(v * s) (0 * s = 0 in the padding); an
average pool's divide by a scalar is part of the chain after it (its scale 1 / d). A
shift passes as well where each output adds the same number n of elements of v (no
padding, no base dilation; a reduce over static dimensions):

    pool(v) * s + t = pool(v * s + t / n)

so conv + b -> avg_pool -> BN folds whole into the kernel and the bias (t / n into the
bias add L has). With padding (a window at the edge adds fewer elements), or where L has
no bias add (t / n would need a new add on L's larger result), t stays behind the sums as
one add, and the report says why at that add. An average pool that excludes its padding
(flax's count_include_pad=False) divides the sum pool by a count per position m, a map
over H and W computed from constants (a sum pool of ones), the same for every channel:

    (pool(v) / m) * s = pool(v * s) / m

for any s, so the divide is passed too (up to the rounding of the quotient); t / m is not
per-channel, and the shift stays behind the divide as one add. A divisor computed from
the data, or one that differs along the channels, is refused.

A slice only selects elements. Along other dimensions (a crop, a slice of the batch) it
keeps every channel, and any per-channel map passes it as it passes a reshape. Along the
feature dimension it keeps the channels picks = start:limit:stride of L's, so

    slice(v) * s + t = slice(v * s' + t')

with s' and t' s and t on the channels it keeps and 1 and 0 on the others: torch's chunk
or split of a convolution's output channels with a norm on one chunk folds into the
convolution, its other channels left as they were (a strided slice too: the picks are any
channels). That needs the slice to read L or L + b (an op below it would meet L's other
channels) and to be L's only reader (torch's chunk, two slices of one convolution, stays:
the other chunk would see the scaled channels). The slice's result is smaller than L's, so
t goes into a bias add L already has, as through a sum; without one it stays behind the
slice as one add.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from ..analysis.layouts import linear_layout
from ..analysis.commuting import (
    DOWN, DOWN_CLASSES, RELU6_CALL, SHIFT_AS_IS, SHIFT_NONE, SLICE, Passed, bounds_back, data_down, feature_below,
)
from ..analysis.shapes import shape_read_from
from ..analysis.users import single_user
from ..constants import float_dtype, round_to
from ..fold import reasons
from ..fold.affine_map import (
    CHAIN_OPS,
    LINEAR_OPS,
    AffineChain,
    BiasedLinear,
    PerChannel,
    Weights,
    affine_chain,
    biased_linear,
    bias_and_weights,
    per_channel_op,
    stored_weights,
)
from ..fold.plan import FoldPlan, MovedOperands, build, per_call_larger, plan_fold, shape_read_from_chain
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern

__all__ = [
    "FOLD_SCALE_THROUGH_MAX_POOL",
    "FOLD_SCALE_THROUGH_OTHER_OPS",
    "FOLD_SCALE_THROUGH_RELU",
    "FOLD_SCALE_THROUGH_RELU_CALL",
    "fold_scale_through_relu",
]


def fold_scale_through_relu(root: ir.OpView, rw: FoldRewriter) -> Outcome:
    """P(L(x, K) [+ b]) * s + t = P(L(x, K * s) [+ b * s]) + t

    P is a relu, a max-pool, a clamp, a leaky relu, a reshape or transpose that keeps the
    feature dimension whole, a slice, a sum pool (and its divide by a count map), a sum over
    other dimensions, or a chain of them, each read only by the next (conv -> relu ->
    max-pool -> BN, dense -> reshape -> BN, conv -> ReLU6 -> BN, conv -> avg_pool -> BN,
    conv -> mean -> BN); its first op may be a concatenate of L_i [+ b_i], each taking its
    range of s and t. A relu is `maximum(v, 0)`, in the function or as a call of a private
    function whose body returns it of one of its arguments (`jax.nn.relu` is jitted:
    jax.export writes `call @relu(%v)`, or `call @relu(%dim, %v)` with a symbolic batch); a
    max-pool is a `reduce_window` of one operand whose body is `maximum`; a clamp is rebuilt
    with its bounds times s (a call of `jax.nn.relu6` replaced by such a clamp); a leaky
    relu is a call of a function returning `select(v >= 0, v, a * v)` (`jax.nn.leaky_relu`);
    a sum pool is a `reduce_window` of one operand whose body is `add`, a sum a `reduce` of
    one operand whose body is `add`, a count map's divide one of a sum pool by a value that
    is not a scalar. A(y) = y * s + t is the chain of per-channel affine ops that reads P (a
    batch_norm_inference, or the subtract, multiply, divide and add of a decomposed batch
    norm, each read only by the next), with s and t one value per feature of a dimension L
    produces from its weights, mapped through P's reshapes and transposes. The scale moves
    into the weights (and the bias) before P; t stays behind it as one add, or goes into the
    bias too when P is only reshapes and transposes (and concatenates; they are linear: no
    add is left, whatever the sign of s), or slices, sums and max-pools too (a slice's s and
    t are 1 and 0 on the channels of L it drops), as t / n with n the elements each output
    of the sums adds, where every sum adds the same number (no padding or base dilation,
    static reduced dimensions; no count map's divide: t / m is not per-channel), every
    max-pool's window holds an element of v or its init value is -inf (maxpool(v + t) =
    maxpool(v) + t) and, with a sum, a slice or a max-pool, L (and each L_i) has a bias add
    to take it; else t stays behind P, the report noting why at its add. The fold and its skips are reported at the chain's outermost op.

    Activation-sized ops never increase: the chain had at least one, and what replaces
    it is at most one add (none when t is zero); the bias add of L + b stays one add. A
    chain whose scale is all ones moves nothing and is not a candidate (a lone shift
    after a relu, as this fold leaves it).

    Holds when, in this order: the element type is f16, bf16, f32 or f64; P's ops lead down,
    each through its data operand, to L or L + b; a per-channel affine chain reads P, along
    a dimension L's weights produce, with a scale that is not all ones; some reader of the
    chain is not a linear op (the input side folds scale and shift into the linear ops after
    it, which leaves no add where their padding allows; here t stays); no reshape of P
    splits or merges the chain's feature dimension; a slice that keeps some of the feature
    dimension's channels is P's first op (reads L or L + b; the ops below a later one would
    meet channels the chain has no values for); each maximum's other operand is a zero
    constant (a relu), whose shape, when dynamic, is not read from L, L + b or an op of P
    below it (the rebuilt relu would keep them computed, or read a value defined after it);
    no dynamic reshape's shape is read from L, L + b or an op of P below it (for the same
    reason); each max-pool's init value is -inf or the type's lowest value; each max-pool's
    window, stride, padding and dilation along the feature dimension are one, one, none and
    one; each sum pool's init value is 0, and its window along the feature dimension as a
    max-pool's; each sum's init value is 0; each count map is computed from constants
    (through broadcasts and sum pools of them) and is the same along the feature dimension;
    each clamp's bounds are constants, scalars or per-channel along the feature; each op of
    P has the next as its only user (the last one the chain); the bias add's only user is
    P's first op and L's the bias add or P's first op; b is a finite per-channel value; the
    weights can be scaled (a float constant, or with `fold-weight-arguments` a parameter);
    each operand of a concatenate is L_i or L_i + b_i under the same conditions, its weights
    a constant (each range is scaled exactly); where P is only reshapes, transposes,
    slices and a concatenate and the chain's scale and shift are not constants, the cost
    rule of `plan_fold` is asked first (weights that the graph would scale on every call,
    larger than the chain's result, are that reason); the chain's scale and shift are
    constants, unless P is only reshapes and transposes (then they are computed in the
    graph, into the weights and bias: LeViT's statistics as arguments); unless P is only
    reshapes, transposes, slices, sums, sum pools (and their divides) and a concatenate, no
    scale is zero and no scale is negative; each clamp's bounds times s are finite in their
    element type; K * s, b * s and t (b * s + t), for each L_i of a concatenate with its
    range, are finite in theirs.
    """
    candidate = _candidate(root)
    if isinstance(candidate, Reason):
        return rw.not_candidate(root, candidate)
    passed, linear, above, scale, shift = candidate
    chain, feature, features, top, channels = above.chain, above.feature, above.features, above.chain.top, above.chain.channels
    if above.linear_feature is None:
        return rw.skip(top, reasons.RESHAPE_SPLITS_FEATURE)
    picks = _picked_channels(passed, features)
    if isinstance(picks, Reason):
        return rw.skip(top, picks)
    refused = _passage_refused(passed, features, channels, linear, above.linear_feature)
    if refused is not None:
        return rw.skip(top, refused)
    bounds = _clamp_bounds(passed, features, channels)
    if isinstance(bounds, Reason):
        return rw.skip(top, bounds)
    shared = next((step for step in passed if not single_user(step.op.results[0])), None)
    if shared is not None:
        return rw.skip(top, shared.row.users)
    channels_below = ir.RankedTensorType(linear.linear_value.type).shape[above.linear_feature]
    found = bias_and_weights(linear, above.linear_feature, channels_below, rw.fold_weight_arguments, rw.unrounded)
    if isinstance(found, Reason):
        return rw.skip(top, found)
    bias, weights = found
    parts = _concat_parts(passed[0].op, above.linear_feature) if passed[0].row.joins else []
    if isinstance(parts, str):
        return rw.skip(top, parts)
    kinds = _Kinds.of(passed)
    refused = _values_refused(chain, kinds, weights, (scale, shift), top, rw)
    if refused is not None:
        return rw.skip(top, refused)
    moved = _moved_bounds(bounds, scale, passed, features, ir.RankedTensorType(root.results[0].type).element_type)
    if moved is None:
        return rw.skip(top, reasons.CLAMP_BOUNDS_OVERFLOW)
    # Each linear op of a concatenate takes its range of the channels. Reshapes,
    # transposes, sums and a concatenate are linear: the shift passes them too, into the
    # biases, divided by the elements each sum adds (sum(v + t / n) = sum(v) + t).
    own = next((part.channels for part in parts if part.value == passed[0].data), slice(None))
    into_bias, kept = _placed_shift(passed, kinds, linear, parts, shift)
    if picks is not None:  # slice(v) * s + t = slice(v * s' + t'): L's other channels take 1 and 0.
        scale, into_bias = _spread(scale, picks, channels_below, 1.0), _spread(into_bias, picks, channels_below, 0.0)
    inner_shift = _scaled_bias(bias, scale, into_bias, own, top.result)
    others = _part_plans(parts, passed[0].data, top, above, scale, into_bias, rw)
    if isinstance(others, Reason):
        return rw.skip(top, others)
    plan = plan_fold(
        top, linear, above.linear_feature, scale=scale if own == slice(None) else scale[own],
        shift=inner_shift, weights=weights,
        through=tuple(step.op for step in passed), after=None if into_bias is not None else shift,
        after_feature=feature, after_reason=kept,
        moved=tuple(moved.get(i) for i in range(len(passed))) if moved else (),
        names=tuple(step.name for step in passed), larger_weights=rw.fold_larger_weight_arguments,
    )
    if isinstance(plan, Reason):
        return rw.skip(top, plan)
    # Values the chain computes in the graph are computed after P (the root): the fold is
    # built before the chain.
    with rw.building_before(top) if not chain.constant else contextlib.nullcontext():
        return build(replace(plan, parts=tuple(others)), rw)


def _candidate(root: ir.OpView) -> tuple[tuple[Passed, ...], BiasedLinear, _Above, PerChannel, PerChannel] | Reason:
    """(P's ops, L or L + b, the chain above, its scale and shift) where `root` starts a
    candidate (the docstring's first conditions, in order), else why it is none: an element
    type not f16, bf16, f32 or f64; no path down to L through ops P may hold; no chain
    reading P; a scale of all ones; a chain read by linear ops alone."""
    if float_dtype(ir.RankedTensorType(root.results[0].type).element_type) is None:
        return reasons.ELEMENT_TYPE
    found = _passed_ops(root)
    if found is None:
        return reasons.NOT_RELU_OF_LINEAR
    passed, linear = found
    above = _chain_above(root, linear, passed)
    if above is None:
        return reasons.NO_CHAIN_ABOVE
    scale, shift = above.chain.affine(root.results[0])
    if isinstance(scale, np.ndarray) and np.all(scale == 1):
        return reasons.SCALE_ONE
    if _read_only_by_linear_ops(above.chain.top.result):
        return reasons.READ_BY_LINEAR_OPS
    return passed, linear, above, scale, shift


def _passage_refused(
    passed: tuple[Passed, ...], features: list[int], channels: int, linear: BiasedLinear, linear_feature: int
) -> Reason | None:
    """Why P cannot be passed (the docstring's conditions on P's ops, in order): a maximum
    that is no relu (its row's refusal), or whose zero's shape is read from L; a dynamic
    reshape whose shape is read from L or below; an op its row refuses (`Row.refused`, in
    P's order: a max-pool or sum pool that refuses the scale, a sum from a value other than
    0, a divisor that is no count map), along the feature of its data."""
    for i, step in enumerate(passed):
        if step.zero is None:
            continue
        refused = step.row.refused(step.op, step.zero, features[i], channels)
        if refused is not None:
            return refused
        if shape_read_from_chain(step.zero, linear, tuple(p.op.results[0] for p in passed[:i])):
            return reasons.ZERO_SHAPE_FROM_LINEAR
    for i, step in enumerate(passed):
        if isinstance(step.op, stablehlo.DynamicReshapeOp) and _shape_read_below(
            step.op.output_shape, linear, passed[:i]
        ):
            return reasons.RESHAPE_SHAPE_FROM_LINEAR
    below = (linear_feature, *features)
    for i, step in enumerate(passed):
        if step.zero is None and step.row.refused is not None:
            refused = step.row.refused(step.op, None, below[i], channels)
            if refused is not None:
                return refused
    return None


def _clamp_bounds(
    passed: tuple[Passed, ...], features: list[int], channels: int
) -> dict[int, tuple[np.ndarray, np.ndarray]] | Reason:
    """Each clamp's (or relu6 call's) bounds per channel in float64 (`Row.bounds`), by its
    place in P; `CLAMP_BOUNDS_NOT_CONSTANT` where a bound is not a constant."""
    bounds = {}
    for i, step in enumerate(passed):
        if step.row.bounds is not None:
            found = step.row.bounds(step.op, features[i], channels)
            if isinstance(found, Reason):
                return found
            bounds[i] = found
    return bounds


@dataclass(frozen=True)
class _Kinds:
    """What kinds of ops P holds (their rows in `analysis.commuting.TABLE`), which decide
    what passes: only data movement and selection (`moving_only`), only reshapes and
    transposes (`only_moved`), only linear ops, which take a scale of any sign
    (`linear_only`), an op whose result is smaller than L's, a slice or a max-pool
    (`smaller`), whether a shift may pass every op (`shifting`: the linear ops and those a
    shift passes as it is), and whether one is a slice (`sliced`)."""

    moving_only: bool
    only_moved: bool
    linear_only: bool
    smaller: bool
    shifting: bool
    sliced: bool

    @classmethod
    def of(cls, passed: tuple[Passed, ...]) -> _Kinds:
        return cls(
            moving_only=all(step.row.moves or step.row.picks is not None for step in passed),
            only_moved=all(step.row.moves for step in passed),
            linear_only=all(not step.row.positive for step in passed),
            smaller=any(step.row.smaller for step in passed),
            shifting=all(not step.row.positive or step.row.shift == SHIFT_AS_IS for step in passed),
            sliced=any(step.row is SLICE for step in passed),
        )


def _values_refused(
    chain: AffineChain, kinds: _Kinds, weights: tuple[Weights, ...], parameters: tuple, top: ir.OpView,
    rw: FoldRewriter,
) -> Reason | None:
    """Why the chain's scale and shift cannot pass P (the docstring's conditions on them,
    in order): the cost rule for values computed in the graph through data movement;
    values not constants where P is more than reshapes and transposes; a zero or negative
    scale through an op that is not linear."""
    scale = parameters[0]
    if not chain.constant and kinds.moving_only and _scaled_every_call_larger(weights, parameters, top, rw):
        # What a fold of an argument-valued map would cost decides first: no fold would pay.
        return reasons.COST_WEIGHTS_LARGER
    if not chain.constant and not kinds.only_moved:
        # Reshapes and transposes alone take values computed in the graph (LeViT's
        # statistics as arguments): the scale into the weights, the shift into the bias,
        # channel for channel. A slice or concatenate would pick channels of them.
        if kinds.moving_only:
            return reasons.SLICE_NOT_CONSTANT if kinds.sliced else reasons.MOVED_NOT_CONSTANT
        return reasons.SUM_NOT_CONSTANT if kinds.linear_only else reasons.SCALE_NOT_CONSTANT
    if not kinds.linear_only and np.any(scale == 0):
        return reasons.SCALE_ZERO
    if not kinds.linear_only and np.any(scale < 0):
        return reasons.SCALE_NEGATIVE
    return None


def _placed_shift(
    passed: tuple[Passed, ...], kinds: _Kinds, linear: BiasedLinear, parts: list[_Part], shift: np.ndarray
) -> tuple[np.ndarray | None, Reason | None]:
    """Where the shift t goes: into the biases (t / n, n the elements each sum adds), or
    nowhere (None), staying behind P, and why. A sum or a slice makes its result smaller
    than L's: t / n goes only into a bias add L already has (free); without one, t stays
    behind them as one add on the smaller tensor. A max-pool the scale passes passes the
    shift too (maxpool(v + t) = maxpool(v) + t: each window holds an element of v, or its
    padding is -inf); its result is smaller than L's."""
    taps = _taps(passed) if kinds.shifting else None
    smaller = taps is not None and (taps != 1.0 or kinds.smaller)
    kept = None
    if kinds.shifting and taps is None:
        # (Of the ops a shift may pass back, a count map's divide passes none: t / m is
        # not per-channel.)
        divided = any(step.row.shift == SHIFT_NONE for step in passed)
        kept = reasons.SHIFT_KEPT_MAP if divided else reasons.SHIFT_KEPT_SUM
    elif smaller and not all(p.bias_add is not None for p in (linear, *(q.linear for q in parts))):
        kept, taps = reasons.COST_LARGER, None
    return (None if taps is None else (shift if taps == 1.0 else shift / taps)), kept


def _part_plans(
    parts: list[_Part], own: ir.Value, top: ir.OpView, above: _Above, scale: np.ndarray,
    into_bias: np.ndarray | None, rw: FoldRewriter,
) -> list[tuple[int, FoldPlan]] | Reason:
    """The plan of each other operand's linear op of a concatenate (`own` is the one the
    main plan folds into): its range of the scale and of the shift into its bias."""
    others = []
    for part in parts:
        if part.value == own:
            continue
        part_plan = plan_fold(
            top, part.linear, above.linear_feature, scale=scale[part.channels],
            shift=_scaled_bias(part.bias, scale, into_bias, part.channels, top.result),
            weights=part.weights, after_feature=above.feature, larger_weights=rw.fold_larger_weight_arguments,
        )
        if isinstance(part_plan, Reason):
            return part_plan
        others.append((part.operand, part_plan))
    return others


def _scaled_every_call_larger(
    weights: tuple[Weights, ...], parameters: tuple[PerChannel, ...], top: ir.OpView, rw: FoldRewriter
) -> bool:
    """Whether `plan.per_call_larger` would refuse scaling `weights` by the chain's
    `parameters` in the graph (unless `fold-larger-weight-arguments`), on `top`'s result."""
    if rw.fold_larger_weight_arguments:
        return False
    return per_call_larger((w.value if w.master is None else w.master for w in weights), parameters, top.result)


@dataclass(frozen=True)
class _Part:
    """One operand of a concatenate (`value`, its `operand`-th), L_i or L_i + b_i: its
    range of the chain's channels, bias and constant weights."""

    operand: int
    value: ir.Value
    linear: BiasedLinear
    channels: slice
    bias: np.ndarray
    weights: tuple[Weights, ...]


def _concat_parts(concat: stablehlo.ConcatenateOp, feature: int) -> list[_Part] | str:
    """Each operand of `concat` as a linear op plus a bias, with its range of the channels
    along `feature` (all of them when the concatenate joins another dimension), or why one
    cannot take its range: an operand that is no linear op (named), or `bias_and_weights`'s
    reason (weights that are not constants included: each range is scaled exactly)."""
    axis = ir.IntegerAttr(concat.dimension).value
    parts, offset = [], 0
    for index, operand in enumerate(concat.operands):
        size = ir.RankedTensorType(operand.type).shape[feature]
        linear = biased_linear(operand)
        if linear is None:
            producer = "an argument" if isinstance(operand, ir.BlockArgument) else operand.owner.operation.name
            return reasons.CONCAT_OPERAND_NOT_LINEAR.detailed(producer)
        found = bias_and_weights(linear, feature, size)
        if isinstance(found, Reason):
            return found
        channels = slice(offset, offset + size) if feature == axis else slice(None)
        parts.append(_Part(index, operand, linear, channels, *found))
        offset += size if feature == axis else 0
    return parts


def _picked_channels(passed: tuple[Passed, ...], features: list[int]) -> np.ndarray | Reason | None:
    """The channels of L that P's first op keeps when it is a slice of some of them (the
    chain's channel i is L's channel picks[i]); None when every op of P keeps all of L's
    channels; `SLICE_NOT_FIRST` when a later slice keeps some (the ops below it would
    meet channels the chain has no values for)."""
    picks = None
    for i, step in enumerate(passed):
        if step.row is SLICE:
            size = ir.RankedTensorType(step.op.operand.type).shape[features[i]]
            kept = step.row.picks(step.op, step.data, features[i], size)
            if kept is not None:
                if i > 0:
                    return reasons.SLICE_NOT_FIRST  # a slice of a slice too
                picks = kept
    return picks


def _spread(values: np.ndarray | None, picks: np.ndarray, channels: int, fill: float) -> np.ndarray | None:
    """`values` of the chain's channels laid over L's `channels` at `picks`, `fill` on the
    channels the slice drops (scale 1, shift 0: they are left as they were)."""
    if values is None:
        return None
    spread = np.full(channels, fill)
    spread[picks] = values
    return spread


def _moved_bounds(
    bounds: dict[int, tuple[np.ndarray, np.ndarray]],
    scale: np.ndarray,
    passed: tuple[Passed, ...],
    features: tuple[int, ...],
    element_type: ir.Type,
) -> dict[int, MovedOperands] | None:
    """For each clamp of the ops passed (by position), its bounds times the scale
    (`analysis.commuting.bounds_back`, s > 0: clamp(lo, v, hi) * s = clamp(lo * s, v * s,
    hi * s)), rounded to `element_type`, a call of one (jax.nn.relu6) rebuilt as a clamp;
    None when one is not finite there."""
    moved = {}
    dtype = float_dtype(element_type)
    for i, clamp_bounds in bounds.items():
        with np.errstate(all="ignore"):
            values = [round_to(dtype, bound) for bound in bounds_back(clamp_bounds, scale)]
        if any(v is None for v in values):
            return None
        as_clamp = passed[i].row is RELU6_CALL
        moved[i] = MovedOperands(features[i], ((0, values[0]), (2, values[1])), as_clamp)
    return moved


def _scaled_bias(
    bias: PerChannel, scale: np.ndarray, shift: np.ndarray | None, channels: slice, like: ir.Value
) -> PerChannel:
    """b * s over `channels` of s, plus those of t when `shift` is given (the ops passed
    are linear: t goes into the bias too)."""
    whole = channels == slice(None)  # (values computed in the graph are never sliced)
    scaled = per_channel_op(np.multiply, bias, scale if whole else scale[channels], like)
    if shift is None:
        return scaled
    return per_channel_op(np.add, scaled, shift if whole else shift[channels], like)


def _taps(passed: tuple[Passed, ...]) -> float | None:
    """How many elements of L's result each element of the last op of `passed` adds (the
    sums' window sizes and reduced elements multiplied, `Row.factor`; 1 with none: a
    max-pool's maximum takes one element, shifted); None where a sum pool pads or
    dilates, a reduced size is dynamic (the count is not one number) or a count map
    divides (t / m is not per-channel)."""
    taps = 1.0
    for step in passed:
        count = step.row.factor(step.op)
        if count is None:
            return None
        taps *= count
    return taps


def _passed_ops(root: ir.OpView) -> tuple[tuple[Passed, ...], BiasedLinear] | None:
    """The ops from L or L + b up to `root` (the one reading L first) that the chain's
    map passes back (`analysis.commuting.data_down`: relus, max-pools, clamps, leaky relu
    calls, reshapes, transposes, slices, sums, and last a count map divide, first a
    concatenate), and L or L + b (a concatenate's first operand that is one); None when
    `root` does not lead down to one through such ops."""
    found = data_down(root)
    if found is None:
        return None
    row, pairs = found
    for data, zero in pairs:
        linear = biased_linear(data)
        if linear is not None:
            return (Passed(root, data, zero, None, row),), linear
        below = data.owner
        # A concatenate reads its linear ops directly; the others are checked one by one
        # once the chain is known (`_concat_parts`).
        if type(below) in DOWN and not row.joins:
            found = _passed_ops(below)
            if found is not None:
                return (*found[0], Passed(root, data, zero, None, row)), found[1]
    return None


def _shape_read_below(shape: ir.Value, linear: BiasedLinear, below: tuple[Passed, ...]) -> bool:
    """Whether the shape operand `shape` of a dynamic reshape is read from L, L + b or an
    op passed below it: the rebuilt reshape would keep them computed beside the new ones
    (torch-mlir's flatten reads its operand's dimension sizes)."""
    chain = [linear.linear_value, *([linear.bias_add.result] if linear.bias_add else [])]
    chain += [p.op.results[0] for p in below]
    return any(v == c for v in shape_read_from(shape) for c in chain)


def _features(passed: tuple[Passed, ...], feature: int) -> tuple[list[int], int | None]:
    """The feature dimension of each op of `passed` (in its result), given `feature` in
    the last one's, and the one below the first (L's); None from the first reshape down
    that splits or merges it."""
    features: list[int] = [0] * len(passed)
    below: int | None = feature
    for i in reversed(range(len(passed))):
        if below is None:
            return features, None
        features[i] = below
        below = feature_below(passed[i].op, below)
    return features, below


def _read_only_by_linear_ops(value: ir.Value) -> bool:
    """Whether every op that reads `value` is a convolution, dot_general or dot."""
    readers = [use.owner for use in value.uses]
    return bool(readers) and all(isinstance(reader, LINEAR_OPS) for reader in readers)


def _weights_not_constant(linear: BiasedLinear, layout) -> bool:
    return stored_weights(linear.linear.operands[layout.weight_operand]) is None


@dataclass(frozen=True)
class _Above:
    """The chain that reads the last op passed, along `feature` of its result;
    `features` holds each passed op's feature dimension, `linear_feature` L's (None when
    a reshape splits or merges it)."""

    chain: AffineChain
    feature: int
    features: tuple[int, ...]
    linear_feature: int | None


def _chain_above(root: ir.OpView, linear: BiasedLinear, passed: tuple[Passed, ...]) -> _Above | None:
    """The longest per-channel affine chain (`affine_map.affine_chain`, parameters
    included) that reads `root` (the last op of `passed`) along a dimension `linear`'s
    weights produce, mapped down through `passed`; else along one a reshape splits or
    merges; None if no reader of `root` starts one. The chain is extended reader by
    reader for as long as the one walk from the reader still reaches `root`."""
    result = root.results[0]
    readers = [use.owner for use in result.uses]
    if not any(isinstance(reader, CHAIN_OPS) for reader in readers):
        # Read by linear ops alone (conv -> BN -> ReLU -> conv once the BN is folded, a
        # network with nothing to pass): no chain starts, along any dimension; decided
        # before the layouts are read (36 us a relu of ResNet-50).
        return None
    shape = ir.RankedTensorType(result.type).shape
    layouts = []
    for f in range(len(shape)):
        if shape[f] >= 0:
            features, below = _features(passed, f)
            layout = None if below is None else linear_layout(linear.linear, below)
            layouts.append((f, tuple(features), below, layout))
    # A scalar scale is per-channel along every dimension: constant weights first, as
    # `decomposed` does, never a dot_general's data operand when a constant is there; and
    # a dimension the reshapes of P keep whole before one they split or merge (attention's
    # q . k^T reshaped to [1, T, T]: its weights, not the reshape, are why it stays).
    layouts.sort(
        key=lambda fl: (fl[3] is None, fl[3] is None or _weights_not_constant(linear, fl[3]))
    )
    for feature, features, below, layout in layouts:
        channels = shape[feature]
        if layout is None and below is not None:
            continue
        for reader in readers:
            found = None
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
                return _Above(found, feature, features, below)
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
FOLD_SCALE_THROUGH_OTHER_OPS: tuple[Pattern, ...] = tuple(
    Pattern("fold_scale_through_relu", op_class, fold_scale_through_relu)
    for op_class in DOWN_CLASSES
    if op_class not in (stablehlo.MaxOp, func.CallOp, stablehlo.ReduceWindowOp)
)
"""The same identity with a reshape (LeViT's BatchNorm1d), a dynamic reshape (a symbolic
batch flattened into the tokens), a transpose, a clamp (ReLU6), a concatenate of linear ops,
a slice (a chunk of a convolution's channels, a crop), a sum over other dimensions (a mean,
a global average pool) or a sum pool's divide by a count map (an average pool that excludes
its padding) as the last op passed."""
