"""Batch norm *before* a linear op: a per-feature affine map on its input folds into it.

The algebra. Let the input of a linear op L be x * s + t, with s and t per feature along a
dimension that L contracts with its weights K (a dot_general's contracting dimension, a
convolution's input-feature dimension). L is linear in its input, and input feature f
meets only the weights' slice f along that dimension, so

    L(x * s + t, K) = L(x * s, K) + L(t, K) = L(x, K * s) + L(t, K)

where L(t, K), t broadcast over the input, is a constant: the weights summed against t
over every contracted dimension (for a convolution, also over the window). In a grouped
convolution output feature o reads only the input features of its group, so s and t are
laid over the weights group by group.

For a convolution that holds only when every window tap reads the input: zero padding and
lhs dilation insert zeros, which the original shifts by t and the folded one would not.
There the scale still folds, moving the shift in front of it,

    conv(x * s + t, K) = conv(x + t / s, K * s)     when no s is zero,

since zero padding commutes with a per-feature scale (0 * s = 0); the shift stays, and the
report says why at the add that keeps it. A shift alone before such a convolution has
nothing to fold and is not a candidate.

The affine map is any chain of `batch_norm_inference` (constant statistics, or with
`fold-weight-arguments` statistics passed as arguments, s and t computed in the graph) and
per-feature add, subtract, multiply and divide, each read only by the next (Flax's
`(x - mean) * inv + bias`, input normalization `(x - mean) / std`, a BNNeck before a
classifier, LayerNorm's `x * gamma + beta`, RMSNorm's `x * gamma`), found by
`fold.affine_map.affine_chain`. Flax writes LayerNorm and RMSNorm as
`v * (r * gamma) [+ beta]`, the per-token factor r times the per-feature scale first;
there gamma is split off the product, `v * (r * gamma) = (v * r) * gamma`: the fold
builds v * r and the product's multiply goes with the chain. Its result may be read by
several linear ops (Q, K and V projections; LLaMA's gate and up projections; two 1x1
convolution branches): when every user reads it along the feature under the conditions
of one fold, it folds into each, each with its own weights and bias; else the report
names the user that blocks it.

Mixed precision: Flax computes LayerNorm, RMSNorm and BatchNorm in f32 and converts the
result to bf16 or f16 before the layer, L_T(convert_T(A_F(x)), convert_T(W_F)). The chain
is read through that convert: the fold computes round_T(W * s) in float64 from the master
weights W_F and keeps the convert, on x + t / s, with the shift in F before it:
L_T(convert_T(x + t / s), round_T(W_F * s)). As in `patterns.precision` (the output side),
each weight carries one rounding to T in both, and the activation one at the convert, of
A(x) / s instead of A(x): the same relative error. The shift never becomes a bias after
the layer here: L(x, W * s) rounded to T at the size of x, then L(t, W) added, cancels
T's few digits when the mean is large against the spread (x near 1000 with variance 1
lost every digit of bf16). Weights stored only in T (Flax's `dtype=param_dtype=bfloat16`)
are rounded a second time, round_T(W_T * s) in float64, with `fold-narrow-weights` (the
default; the report marks the fold `rounded again in bf16`), and are refused without
it; the shift stays in F in front all the same. With weights as arguments (the master weights and the chain's values
arguments), the scale folds in the graph as convert_T(W_F * broadcast_in_dim(s_F)), s
computed in F and the product rounded to T once (the double rounding is argued in
`fold.affine_map.master_value`); a shift would stay before the convert as x + t / s,
which in the graph cannot be checked (a zero s, `_magnified`), and is refused.

Statistics far from zero: where the chain is a norm's, (x - mean) * rsqrt(var + eps) *
gamma + beta or a `batch_norm_inference`, and the data's mean is large against its spread
(`fold.affine_map.cancellation`), L(x, K * s) sums terms |mean| / sqrt(var + eps) times
the norm's result, and L(t, K) cancels them: the layer's rounding error grows by that
factor where the original subtracted the mean first (a mean of 2 and a variance of 1e-4
before a transpose and a convolution in f32: 150 to 240 times the original's error
against float64). Above `CANCELLATION_BOUND` (the root mean square of the factor over
channels) the subtract of the mean stays in front, as the original computes it, and the
chain above it folds (its shift into the bias, or kept as x' + t' / s behind a relu); a
`batch_norm_inference`, which XLA computes as x * s + t, keeps its shift in front as x + t
/ s, which rounds the same, or is refused where that cannot be built or removes no op.

Constants are computed in float64 from the stored values and rounded once. With
`fold-weight-arguments`, per-feature values and weights that are function arguments fold
in the graph, in the element type, as the output side does: the weights become
`W * broadcast_in_dim(s)` (weight-sized) and L(t, W) a `dot_general` of t with W (C-sized
values only). Weights that are themselves computed by a linear op (attention's k) are an
activation: scaling them would only move the op, and is not done.

Forward across a relu, a leaky relu, a clamp, a max-pool, a zero pad, a sum, a transpose,
a reshape (static or dynamic), a slice, a concatenate or torch-mlir's broadcast of a value
onto its own shape (`analysis.passage`): a chain's result may reach its linear ops through ops that commute
with a positive per-feature scale and keep the feature dimension whole (pre-activation
networks: BN -> ReLU -> conv in DenseNet and ResNetV2, BN -> ReLU -> max-pool -> conv,
and their last BN -> ReLU -> global average pool -> Dense, the pool a `reduce` add over
the other dimensions, whose divide folds into the Dense first). For s > 0,

    relu(x * s + t) = relu(x + t / s) * s,   maxpool(v * s) = maxpool(v) * s,
    pad(v * s, 0) = pad(v, 0) * s,           sum(v * s) = sum(v) * s,
    leaky(x * s + t) = leaky(x + t / s) * s  (select(v >= 0, v, a * v), any a),

so the scale folds into every linear op at the end, L(P(x * s + t), K) = L(P(x + t / s),
K * s); the shift cannot pass them (relu(v + t) is not relu(v) + t; a pad's padding, and
a pool's of the lowest finite value, is not shifted) and stays in front as one add x + t /
s, none where t is zero. A max-pool whose windows each hold an element of v, or whose
init value (and padding) is -inf, passes the shift too, maxpool(v + t) = maxpool(v) + t
exactly: with only such pools and the sums below passed, the shift goes into the linear
ops' biases (conv -> ReLU -> BN -> max-pool -> conv leaves no add on the larger tensor). A
negative scale passes a relu too, as a clamp: relu(s * u) = s * clamp(lo, u, hi) with
(lo, hi) = (0, +inf) where s > 0 and (-inf, 0) where s < 0, exactly (s * u >= 0 iff u
is on the side of 0 the sign of s picks); the relu (a maximum, or a call of one, which is
replaced at the call) becomes `clamp` with per-channel bounds when some s is negative.
A max-pool has no such form (the maximum of v * s for s < 0 is s times the minimum of
v), nor a leaky relu (its slope moves to the other side of zero), and a zero scale
leaves no x + t / s: all are refused. A leaky relu is jax's `call @leaky_relu(%v, %a)`
or the inline select(v > 0, v, v * a) of torch-mlir and TensorFlow, whose compare and
multiply read the chain too (only the select may read them); it stays as it is, on x
+ t / s.

A clamp (ReLU6: `stablehlo.clamp`, or jax's `call @relu6(%v)`, replaced by an inline
clamp) with constant bounds passes any constant scale without a zero, its bounds moved:

    clamp(lo, x * s + c, hi) = clamp((lo - c) / s, x, (hi - c) / s) * s + c   (s > 0)

and with the bounds swapped where s < 0 (x * s >= lo iff x <= lo / s; an inverted
clamp, lo > hi, is hi everywhere and is read as clamp(hi, v, hi)). Where nothing else
blocks the shift (no relu, pool or pad), c is the shift (times what the sums before the
clamp add up) and passes the clamp into the linear ops' biases as through a sum: mul +
add + clamp become one clamp, and at most the bias adds the cost rule below allows;
unless |c| > max(|lo|, |hi|) / 2 on some channel (a dead channel, a large gamma), where
the saturated results, exact before, would round at the size of c and cancel against the
bias: there the shift stays in front as x + t / s, c is zero and the bounds are lo / s
and hi / s (in f16 and bf16, where t / s itself rounds at the size of the mean, nothing
moves). The new bounds are per-channel constants, broadcast (no op on the activation), and
are rounded once: the clamp errs by one rounding of the bound, as the folded weights do.

A slice and a concatenate along the feature map channel ranges: a linear op after a
slice reads the chain's channels the slice keeps, and one after concat(w, x * s + t)
reads the chain's on its range and w's, untouched (scale 1, shift 0), on the others, so
it takes s and t laid over its input channels that way; both pass the shift too (a
slice of other dimensions keeps every channel). A concatenate along another dimension
would put w's elements under the scale too, and is refused; one chain folds at a time,
each operand's in its own fold. A scale that is not a
constant has no known sign: refused before a relu, leaky relu, clamp or max-pool, with or
without `fold-weight-arguments`; pads, transposes, reshapes and sums take a scale of any
sign, computed in the graph (timm's ConvNeXt: a channels-last LayerNorm, a permute, a 1x1
convolution), and the shift where it passes them (not a pad's zeros). The
relu, clamp, pool and pad stay one op each; the chain's multiply (and subtract, divide)
go: mul + add + relu become add + relu (or clamp), on the same tensor. Where only sums,
transposes and reshapes are passed (BN -> global average pool -> Dense), the shift passes
them too, sum(v + t) = sum(v) + n * t with n the elements added (static), and folds into
the linear ops' bias as on the plain input side: nothing is left.

Every rewrite removes at least one activation-sized op and never moves one onto a larger
tensor. The chain's ops (a batch norm counts as a multiply and an add) are removed; each
consumer needs a bias add after it, unless the shift is zero or the bias merges into the
consumer's own bias add. When those adds are as many as the chain's ops, or one would be
on a result larger than the input, only the scale folds and the shift stays in front as
one add x + t / s that every consumer reads (as before a padded convolution); when that
cannot be done either, nothing is, and the report says why. In the graph (weights as
arguments) a shift alone, its scale folded elsewhere, is contracted with the weights on
every call: where that builds more ops than its add and broadcast (t laid over a
convolution's kernel, a `dot_general`, an add into the bias), the add stays, so that the
folded graph never has more ops than the original.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.layouts import InputLayout, input_layouts
from ..analysis.commuting import (
    BROADCAST_ONTO_OWN_SHAPE, PASSAGE_OPS, READING_OPS, UP, Passed, bounds_forward, passed_by,
)
from ..analysis.shapes import SHAPE_READERS, shape_read_from, static_elements
from ..analysis.per_channel import Narrow, per_feature_block_f64, per_feature_block_source
from ..analysis.users import single_user
from ..constants import float_dtype, round_to, scale_along
from ..fold import reasons
from ..fold.affine_map import (
    CHAIN_OPS,
    LINEAR_OPS,
    AffineChain,
    AffineStep,
    PerChannel,
    Unrounded,
    affine_chain,
    cancellation,
    computed_by_linear_op,
    computed_from_constants,
    master_value,
    master_weights,
    per_channel,
    stored_weights,
    unrounded_bias,
)
from ..fold.affine_map import biased_linear as linear_chain
from ..fold.plan import combine, per_call_larger
from ..fold.reasons import Reason
from ..fold.rewriter import FoldRewriter, Outcome, Pattern, final_bias_add

__all__ = [
    "FOLD_INPUT_AFFINE_INTO_CONV",
    "FOLD_INPUT_AFFINE_INTO_DOT",
    "FOLD_INPUT_AFFINE_INTO_DOT_GENERAL",
    "fold_input_affine_into_conv",
    "fold_input_affine_into_dot",
    "fold_input_affine_into_dot_general",
    "may_fold_into",
    "reads_chain_op",
]


def fold_input_affine_into_conv(conv: stablehlo.ConvolutionOp, rw: FoldRewriter) -> Outcome:
    """conv(x * s + t, K) = conv(x, K * s) + broadcast_in_dim(sum(K * t))

    s and t are per feature along the input's feature dimension; K is scaled along its
    input-feature dimension (group by group for a grouped convolution), and sum(K * t) has
    one value per output feature. When the convolution pads its input or dilates it (lhs
    dilation), or bias adds after the consumers would remove no op, only the scale folds:
    conv(x + t / s, K * s). Every linear op reading x * s + t is rewritten alike.

    Holds when, in this order: the input is a chain of per-feature affine ops (batch norm
    with finite statistics, variance + epsilon > 0 where constant, not computed from the
    data where arguments, or add, subtract, multiply,
    divide by finite per-feature values, no divisor zero; constants, or narrow arguments
    with `fold-weight-arguments`; innermost, possibly a multiply by a product r * c with c
    per-feature, read as (v * r) * c; a value with other users ends the chain; not a
    subtract of the mean nor an add x + t / s that a fold kept in front for the chain's
    statistics, nor a chain through one; where constant statistics put the data far
    from zero against their spread, without a convert, the chain above its subtract of
    the mean, which stays: `_centring`), or a
    narrowing float convert F -> T of such a chain (a norm computed in f32 before a bf16
    layer), then the chain's only user, or such a chain below relus, leaky relus, clamps,
    max-pools, sum pools, zero pads, sums, transposes, reshapes, slices and concatenates
    (its scale not all ones where one of them blocks the shift or is a clamp: a shift
    alone reached through a relu is no candidate); every user
    of the chain's result (or the convert's) is a linear op reading it along the feature,
    without a convert an op that reads only its shape (torch-mlir's `shape_of` with a
    symbolic batch: it reads x's after the fold), or, without a convert, a relu, leaky relu
    (a call of one, or an inline select whose compare and multiply only it reads), clamp (or
    a call of a relu6), slice, concatenate along the feature (of the walk's value and
    others, not of two values the walk reaches), max-pool, sum pool (`reduce_window` add: an
    average pool before its divide), a sum pool's divide by a count map (an average pool
    that excludes its padding), pad, `reduce` add or maximum, transpose or reshape, whose
    users are walked alike along the feature as it leaves it: a relu's other operand is
    zero, a clamp's bounds are constants (scalars or per channel along the feature), a
    max-pool's init value is -inf or the lowest value and its window, stride, padding and
    dilation along the feature are one, one, none and one, a sum pool's init value is 0 and
    its window along the feature the same, a count map is computed from constants and the
    same along the feature, a pad's padding value is zero and it pads nothing along the
    feature, a reduce reduces other dimensions only, from 0 for an add and -inf or the
    lowest value for a maximum, a reshape keeps the feature whole (static shapes, as many
    elements before it); and for each linear op: no dynamic dimension is contracted or
    windowed (the weights' shape is static); the result and the weights are of a supported
    float type, the weights at least as wide as the activation and result, a constant (or,
    in the graph, not computed by a linear op, and not grouped; through a convert, a convert
    to T of a constant at least as wide as F: master weights, or with
    `fold-weight-arguments` such a value in the graph, or with `fold-narrow-weights` a
    constant stored only in T, not computed by a linear op), and finite; through a convert with
    values or weights in the graph, the shift is zero; with steps in the graph, the chain's
    constants are finite in the activation's type; the fold removes an activation-sized op;
    with ops passed and values in the graph, the scale is a constant where a relu, leaky
    relu, clamp or max-pool is passed, no slice or concatenate lays them over its channels,
    and a shift that is not zero is a constant where a clamp or a sum is passed; with a
    clamp passed, no scale is zero; with a maximum passed (a max-pool, a `reduce` maximum),
    where the scale is a constant, no scale is zero or negative; with a relu, leaky relu,
    max-pool whose lowest finite init value may fill a window alone, pad, count map divide
    or a sum pool that pads or dilates its input passed (not only sums, unpadded sum pools,
    other max-pools, transposes and reshapes, which the shift passes, as n * t through a
    sum of n elements), where the scale is a constant, no scale is zero, no scale is
    negative where a leaky relu is passed, and with a shift the chain has two
    activation-sized ops or more, the shift staying in front as x + t / s (as below); where the convolution pads or dilates its input, or the bias adds the fold needs
    (none where the shift is zero or merges into the consumer's own bias add) are not fewer
    than the chain's ops or one is on a result larger than the input, or a batch norm's
    statistics put the data far from zero against their spread (`_centring`), the shift
    stays in front as x + t / s, which needs s not all ones (and, where it stays for the
    bias adds or the statistics, two removed ops or more), everything a constant and no s
    zero, and t / s finite in the
    activation's type; each clamp's moved bounds are finite in its element type (infinite
    ones stay infinite); for each consumer, the bias and K * s are finite in their element
    types (in the graph, the convolution is not grouped, and the scale and shift, where they
    are constants, are finite in the weights' type), and with x + t / s, rounding K * s, magnified by t / s, errs by at most eps of
    sum |K * t| per output feature; last, in the graph, the consumers' weights that the
    scale multiplies or the shift is contracted with on every call have no more elements in
    all than the chain's result (`fold.plan.per_call_larger`), and a shift alone contracted
    with the weights in the graph builds no more ops than the chain removes (its ops and
    the broadcasts only they read: `_contracted_ops`, `_removed_ops`); both unless
    `fold-larger-weight-arguments`. A chain that stops at a per-feature op it cannot fold (a NaN variance under the bias add) and is refused for
    cost is reported with that op's reason.
    """
    return _fold_input_affine(conv, rw)


def fold_input_affine_into_dot_general(dot: stablehlo.DotGeneralOp, rw: FoldRewriter) -> Outcome:
    """dot_general(x * s + t, W) = dot_general(x, W * s) + broadcast_in_dim(W . t)

    s and t are per feature along a contracting dimension of either operand; W, the other
    operand, is scaled along the matching contracting dimension, and W . t (t contracted
    with W over every contracting dimension) varies along W's batch and free dimensions.
    Every linear op reading x * s + t is rewritten alike.

    Holds when, in this order: W keeps a dimension that is not contracted, or the result
    has more than one element (a W contracted over all of its dimensions into one
    element is the shift t of a bias term t . (K * s) a fold built for one output
    feature, and K is weights, not an input); the conditions of `fold_input_affine_into_conv`, with
    W the weights; the shift never needs to stay in front (every element is read), except
    where bias adds after the consumers would remove no op or sit on a larger result.
    """
    return _fold_input_affine(dot, rw)


def fold_input_affine_into_dot(dot: stablehlo.DotOp, rw: FoldRewriter) -> Outcome:
    """dot(x * s + t, W) = dot(x, W * s) + broadcast_in_dim(W . t)

    `stablehlo.dot` (TensorFlow's Dense) is a dot_general contracting the lhs's last
    dimension with the rhs's first.

    Holds when, in this order: the conditions of `fold_input_affine_into_dot_general`.
    """
    return _fold_input_affine(dot, rw)


def _fold_input_affine(linear: ir.OpView, rw: FoldRewriter) -> Outcome:
    """Decide, then build: the chain on an input of `linear` (here), the fold of it into
    every op that reads it or the skip (`_plan`, which creates no IR), the IR of that plan
    (`_build`)."""
    # Every linear op of a model comes here; most read a relu of L + b or another linear
    # op, so look at the operands' producers before reading any dimension numbers. A bias
    # add reached through relus or pools is a shift alone, which nothing passes: the loop
    # below would skip it for every layout (its walk ends there, or sooner at an op that
    # is no chain). A convolution's lhs alone is read per feature (`input_layouts`): its
    # weights, scaled in the graph by an earlier fold (a multiply), are not looked at.
    if not may_fold_into(linear):
        return rw.not_candidate(linear, reasons.INPUT_NOT_AFFINE)
    for layout in input_layouts(linear):
        if not layout.kept and all(n == 1 for n in ir.RankedTensorType(linear.result.type).shape):
            # t . W, contracted over every dimension of t into one element (the bias
            # L(t, W) a fold built for one output feature): W is weights, not an input. A
            # fold's W * s, s one element, reads as scaled along any dimension: folded
            # onto t it would remove no op.
            continue
        activation = linear.operands[layout.activation]
        shaped = ir.RankedTensorType(activation.type)
        if float_dtype(shaped.element_type) is None or shaped.is_dynamic_dim(layout.feature):
            continue
        chained, narrowing, feature = _chained(activation, layout.feature)
        if chained != activation and narrowing is None and _bias_add(chained.owner):
            # L + b before a relu (every CNN's): a shift alone, which nothing passes;
            # decided before any constant is read.
            continue
        if narrowing is None and chained == activation and _bias_add_read_elsewhere(linear, chained):
            # (MobileNetV2's L + b read by the next block and its residual add.) Decided
            # here, before the chain's constants are read: `_consumers` would refuse the
            # add, and at a bias add in final form that refusal is no report line.
            return rw.not_candidate(linear, reasons.AFFINE_USERS)
        if _adds_activations(chained):  # a residual sum: no chain, decided on its ops alone
            continue
        # Through a slice or concatenate the chain has channels of its own.
        channels = shaped.shape[layout.feature] if chained == activation else ir.RankedTensorType(chained.type).shape[feature]
        arguments = rw.fold_weight_arguments
        affine = affine_chain(chained, feature, channels, arguments, split=True)
        if isinstance(affine, str):
            return rw.skip(chained.owner, affine)
        if affine is not None and _left_by_a_fold(affine, rw):
            continue
        if affine is not None:
            # One norm, wherever it is refused (the output side at its subtract, here at
            # its add): the report counts it once; two norms in one chain twice.
            for norm in _norms(affine.steps):
                rw.same_norm(norm)
            affine, centring, cancels = _centring(affine, narrowing)
            plan = _plan(linear, layout, feature, affine, narrowing, rw, cancels)
            if isinstance(plan, Outcome):
                return plan
            return _build(replace(plan, centring=centring) if centring is not None else plan, rw)
    return rw.not_candidate(linear, reasons.INPUT_NOT_AFFINE)


def _left_by_a_fold(affine: AffineChain, rw: FoldRewriter) -> bool:
    """Whether `affine` is what a fold built or kept, not an input to fold, in this order:
    W * broadcast_in_dim(s), weights a fold scaled in the graph (read as an input, the
    scale would fold back into the activation, and again); a chain on constants (the
    shift a fold contracted with the weights, t / d with d an argument: parameter
    arithmetic, whose fold would build another such term, and again); x - mean or x + t /
    s a fold kept in front for its statistics (folded on its own into the bias, or as a
    step of a longer chain, x * a - mean + t' / s behind a relu with the add kept for the
    relu, it would cancel as the whole chain would have)."""
    if isinstance(affine.top, stablehlo.MulOp) and rw.was_built(affine.top):
        return True
    if computed_from_constants(affine.x):
        return True
    return any(rw.kept_for(step.op, _KEPT_FOR_CANCELLING) for step in affine.steps)


CANCELLATION_BOUND = 1.0
"""The largest root-mean-square over channels of |mean| / sqrt(var + eps)
(`fold.affine_map.cancellation`) at which a chain computed from statistics folds whole.
Folded, the layer's terms x * s are |mean| / sqrt(var + eps) times the norm's result per
channel, and their rounding errors add in quadrature: measured through XLA on the CPU in
f32 (a norm -> transpose -> 3x3 convolution, 16 and 64 channels, against a float64
evaluation), the folded error is about sqrt(1 + rms(c)^2) times the original's: 1.28 to
1.44 times at c = 1 on every channel, 1.6 to 1.9 at 1.5, 2.1 to 2.4 at 2, 4.3 for one
channel at 16 among 16. At 1 it stays within 1.5 times."""

_KEPT_FOR_CANCELLING = (reasons.CENTRING_KEPT, reasons.SHIFT_KEPT_CANCELS)


def _centring(
    affine: AffineChain, narrowing: stablehlo.ConvertOp | None
) -> tuple[AffineChain, ir.OpView | None, bool]:
    """Where a chain computed from statistics (`cancellation`) puts its data far from zero
    against their spread (the root-mean-square of |centre| / spread over channels above
    `CANCELLATION_BOUND`), what folds: the chain above its subtract of the mean, which
    stays in front as the original computes it (the subtract returned, to rebuild); or for
    a batch norm, the chain with its shift kept in front as x + t / s (True), which rounds
    as the original's x * s + t. Else the chain as it is. Through a narrowing convert the
    shift stays before it in the wide type anyway, where its rounding is far below the
    narrow type's."""
    found = cancellation(affine) if narrowing is None and affine.constant else None
    if found is None or np.sqrt(np.mean(np.square(found[1]))) <= CANCELLATION_BOUND:
        return affine, None, False
    index = found[0]
    step = affine.steps[index]
    if isinstance(step.op, stablehlo.SubtractOp) and index > 0:
        return replace(affine, steps=affine.steps[:index], x=step.op.result, stopped=None), step.op, False
    return affine, None, True


# The walk's and the declines' tests are `type(op) in` a set or a dictionary (`UP`, the
# rows of `analysis.commuting.TABLE` by op class): `isinstance` against a tuple of OpView
# classes (nanobind types) costs about 60 ns a class it is not, 0.45 us for an add against
# the passage ops; `value.owner` is the registered class itself.
_PASSAGE = frozenset(PASSAGE_OPS)
"""The ops `_chained` walks through (`UP`'s classes)."""

_WALKED = frozenset((*PASSAGE_OPS, *CHAIN_OPS))
"""The ops `_chained` walks to: through `_PASSAGE`, to `CHAIN_OPS`."""

_CHAIN = frozenset(CHAIN_OPS)
"""The ops a chain may end at."""


def _may_start_chain(value: ir.Value) -> bool:
    """Whether a chain may end below `value` (`_chained` along any feature): a per-feature
    affine op, and not a bias add reached through the ops a scale passes, nor an add of two
    activations (a residual add: `affine_chain` finds no per-channel side in it)."""
    # Every linear op of a model comes here, and nearly all are refused: each producer is
    # read once (a binding call each), the add's operands' for both of its checks. Along
    # any feature: a reshape merging the dimensions before the feature (torch's view(-1, C)
    # before a Linear) keeps it whole, but no other dimension.
    op = value.owner
    walked = _walked(value, None, op)
    moved = walked is not None
    if moved:
        op = walked[1]
    elif type(op) is stablehlo.ConvertOp:
        # Through a narrowing convert a bias add is still a candidate (the loop below
        # skips it only behind the ops a scale passes).
        op = _narrowed(value)[0].owner
    if type(op) is not stablehlo.AddOp:
        return type(op) in _CHAIN
    producers = []
    for operand in op.operands:
        producer = operand.owner
        if moved and type(producer) in _LINEAR:
            return False  # a bias add (`_bias_add`)
        producers.append(producer)
    for producer in producers:
        if not _activation(producer, 2):
            return True
    return False


_LINEAR = frozenset(LINEAR_OPS)
"""`LINEAR_OPS`, for `type(op) in`: a bias add's other side."""

_ACTIVATION = frozenset((*LINEAR_OPS, stablehlo.MaxOp))
"""What `_activation` takes for an activation without looking further."""


def _activation(op: ir.OpView | ir.Block, depth: int) -> bool:
    """Whether `op` (a value's producer) is a linear op, a maximum (a relu, which
    `per_channel_f64` never evaluates), or, `depth` adds deep, an add of such a value: not
    per-channel, and broadcast from nothing narrower (`per_channel_source` is the value
    itself), whatever the feature. Reads only the ops, never a constant."""
    kind = type(op)
    if kind in _ACTIVATION:
        return True
    if depth == 0 or kind is not stablehlo.AddOp:
        return False
    for operand in op.operands:
        if _activation(operand.owner, depth - 1):
            return True
    return False


_ARITHMETIC = frozenset((stablehlo.AddOp, stablehlo.SubtractOp, stablehlo.MulOp, stablehlo.DivOp))
"""The elementwise binary ops `_computed` looks through."""


def _adds_activations(value: ir.Value) -> bool:
    """Whether `value` is an add of two values computed from activations (`_computed`),
    where `affine_chain` finds neither a step nor a reason: no side is a per-channel
    constant or a value broadcast from a narrower one, and an add splits no product.
    Reads only the ops, never a constant."""
    add = value.owner
    return type(add) is stablehlo.AddOp and all(_computed(v.owner, 4) for v in add.operands)


def _computed(op: ir.OpView | ir.Block, depth: int) -> bool:
    """Whether `op` (a value's producer) is a linear op or a maximum (`_ACTIVATION`), or,
    `depth` ops deep, an add, subtract, multiply or divide of such a value: never a
    per-channel constant (`per_channel_f64` evaluates an elementwise op only where each
    operand is one, and none of these ops), nor broadcast (`per_channel_source` is the
    value itself where it is narrow, else None)."""
    kind = type(op)
    if kind in _ACTIVATION:
        return True
    if depth == 0 or kind not in _ARITHMETIC:
        return False
    for operand in op.operands:
        if _computed(operand.owner, depth - 1):
            return True
    return False


def _norms(steps: tuple[AffineStep, ...]) -> list[list[ir.OpView]]:
    """The ops of `steps` (outermost first) by the norm each belongs to, for the report: a
    chain may hold several maps one after the other (two batch norms, or a norm after its
    layer's bias add). A norm ends at its shift, an add (several adds in a row are one
    shift), or is one `batch_norm_inference`; the op after either begins the next.
    A subtract is read as a norm's centring (x - mean), so a shift written as a subtract
    (x * s - c) joins the norm after it."""
    norms: list[list[ir.OpView]] = [[]]
    below = None
    for step in reversed(steps):
        op = step.op
        if below is not None and (
            type(below) is stablehlo.BatchNormInferenceOp or type(op) is stablehlo.BatchNormInferenceOp
            or (type(below) is stablehlo.AddOp and type(op) is not stablehlo.AddOp)
        ):
            norms.append([])
        norms[-1].append(op)
        below = op
    return norms


def _bias_add_read_elsewhere(linear: ir.OpView, value: ir.Value) -> bool:
    """Whether `value`, read by the convolution `linear` (one input layout: refusing it
    here ends the pattern as the loop's end would), is a bias add in final form
    (`final_bias_add`: every refusal of a chain topped by it is no report line) that an op
    reads which is no linear op, no shape read and of no class a map passes
    (`READING_OPS`): `_consumers` refuses its chain, whatever else holds."""
    if not isinstance(linear, stablehlo.ConvolutionOp):
        return False
    # (Each user read once: `use.owner` is a call into the bindings, 0.6 us.)
    foreign = any(
        type(user) not in READING_OPS and type(user) not in _LINEAR and user.operation.name not in SHAPE_READERS
        for user in (use.owner for use in value.uses)
    )
    return foreign and final_bias_add(value.owner)


def _bias_add(op) -> bool:
    """Whether `op` adds something to a linear op's result (a chain of it is one add: its
    scale is all ones)."""
    return isinstance(op, stablehlo.AddOp) and any(isinstance(v.owner, LINEAR_OPS) for v in op.operands)


def _chained(value: ir.Value, feature: int) -> tuple[ir.Value, stablehlo.ConvertOp | None, int]:
    """Where a chain on `value`, per feature along `feature`, would end, and that feature
    there: below the relus, pools, pads, sums and reshapes that compute `value` from a
    per-feature affine op (`analysis.passage`; which of them pass is decided from the
    chain, reader by reader), else `_narrowed(value)`."""
    walked = _walked(value, feature, value.owner)
    if walked is not None:
        return walked[0], None, walked[2]
    return (*_narrowed(value), feature)


def _walked(
    value: ir.Value, feature: int | None, op: ir.OpView | ir.Block
) -> tuple[ir.Value, ir.OpView, int | None] | None:
    """Below the passage ops that compute `value` (`op`, its producer; `_chained`): the
    value there, its op and the feature; None where `op` is none of them or the walk stops
    inside them. A `feature` of None walks along any feature (`_may_start_chain`): through
    every reshape, and to a divide after a sum pool as to a chain's."""
    # Every accessor is a call into the bindings (every linear op of a model comes here):
    # each op is read once, each operand only when the ones before it are not walked to.
    below, below_feature = value, feature
    while True:
        ups = UP.get(type(op))
        if ups is None:
            break
        row, datas = ups[0][0], None
        if row.joins:
            return _walked_operand(op, below_feature)
        for row, up in ups:  # the first way up the op's rows find (`Row.up`)
            datas = up(op, below_feature)
            if datas is None or datas:
                break
        if datas is None:
            break  # a per-feature divide: a chain ends here
        for data in datas:
            owner = data.owner
            if type(owner) in _WALKED and (
                type(owner) is not stablehlo.DynamicBroadcastInDimOp or BROADCAST_ONTO_OWN_SHAPE.up(owner, None)
            ):
                # (A dynamic broadcast of anything else is torch-mlir's of a constant: a
                # relu's zero.)
                break
        else:
            return None
        # (`Row.below` None: the op keeps every dimension; along any feature, none is mapped.)
        if row.below is not None and feature is not None:
            below_feature = row.below(op, below_feature)
            if below_feature is None:
                return None
        below, op = data, owner
    return None if below is value else (below, op, below_feature)


def _walked_operand(concat: stablehlo.ConcatenateOp, feature: int) -> tuple[ir.Value, ir.OpView, int] | None:
    """`_walked` below a concatenate: the first operand computed by a per-feature affine
    op other than a bias add (each operand is another candidate: the other operands stay
    as they are), directly or below passage ops; None if there is none."""
    for data in concat.operands:
        owner = data.owner
        if type(owner) in _CHAIN:
            found = (data, owner, feature)
        elif type(owner) in _PASSAGE:
            found = _walked(data, feature, owner)
        else:
            continue
        if found is not None and not _bias_add(found[1]):
            return found
    return None


def _narrowed(value: ir.Value) -> tuple[ir.Value, stablehlo.ConvertOp | None]:
    """`value`, or for a narrowing float convert `convert_T(v)` (a norm computed in a
    wider type F before a layer in T: Flax's LayerNorm in f32 before a bf16 Dense) v and
    that convert."""
    convert = value.owner
    if isinstance(convert, stablehlo.ConvertOp):
        wide = float_dtype(ir.RankedTensorType(convert.operand.type).element_type)
        narrow = float_dtype(ir.RankedTensorType(value.type).element_type)
        if wide is not None and narrow is not None and wide.itemsize > narrow.itemsize:
            return convert.operand, convert
    return value, None


@dataclass(frozen=True)
class _Consumer:
    """A linear op reading the affine value, where, and its weights (`stored` None when
    they are not a constant)."""

    linear: ir.OpView
    layout: InputLayout
    weights: ir.Value
    stored: np.ndarray | None
    dtype: np.dtype
    result_dtype: np.dtype
    master: ir.Value | None = None
    """The master weights in a wider type that `weights` are a convert of, when they are
    scaled in the graph before the convert (mixed precision with weights as arguments)."""
    rounded_again: bool = False
    """Whether `stored` are weights stored only in their narrow type, read through a
    narrowing convert with no wider master copy: W * s rounded to that type again."""
    shift_factor: float = 1.0
    """What a shift is multiplied by on the way to this op: the number of elements of
    each sum passed (`analysis.passage.Passed.shift_factor`)."""
    chain_channels: np.ndarray | None = None
    """The chain's channel each of its input channels holds, -1 for none (past a slice or
    concatenate); None when they are the chain's own."""

    def takes(self, scale: PerChannel, shift: PerChannel) -> tuple[PerChannel, PerChannel]:
        """The scale and shift this op's input channels meet: the chain's, laid over them
        (`_taken`), the shift times what the sums on the way add up."""
        scale, shift = _taken(scale, self.chain_channels, 1.0), _taken(shift, self.chain_channels, 0.0)
        return scale, shift * self.shift_factor if self.shift_factor != 1.0 else shift

    @property
    def every_tap(self) -> bool:
        return _reads_every_tap(self.linear)

    def own_bias(
        self, fold_weight_arguments: bool, exact: bool, unrounded: Unrounded | None = None
    ) -> tuple[stablehlo.AddOp, PerChannel] | None:
        """The add of the linear op's own per-feature bias, when it is the op's only user,
        and that bias (a finite constant or, with `fold_weight_arguments`, a narrow value
        not computed by a linear op): the folded bias merges into it at no op's cost. A
        folded bias over several dimensions (DenseGeneral's [heads, head_dim]) merges, on
        the `exact` path, into a finite constant over the same dimensions; in the graph,
        into a value of exactly that block (a bias argument) of the result's element
        type, not computed by a linear op. At batch 1
        another linear op's result ([1, N], as in `x @ W1 + x @ W2`) is narrow too: it is
        an activation, not a bias. A per-feature constant an earlier fold built is read as
        the float64 values it was rounded from (`unrounded_bias`)."""
        users = list(self.linear.result.uses)
        if len(users) != 1:
            return None
        add = users[0].owner
        if not isinstance(add, stablehlo.AddOp) or add.lhs == add.rhs:
            return None
        other = add.rhs if add.lhs == self.linear.result else add.lhs
        if len(self.layout.result_dims) != 1:
            if not exact and fold_weight_arguments:
                # In the graph: a block of the result's element type, passed as an argument.
                block = per_feature_block_source(other, self.layout.result_dims)
                element = ir.RankedTensorType(other.type).element_type
                if block is None or ir.RankedTensorType(block.type).element_type != element:
                    return None
                if computed_by_linear_op(block):
                    return None
                return add, block
            block = per_feature_block_f64(other, self.layout.result_dims) if exact else None
            if block is None or not np.all(np.isfinite(block)):
                return None
            return add, block
        dim = self.layout.result_dims[0]
        size = ir.RankedTensorType(self.linear.result.type).shape[dim]
        bias = per_channel(other, dim, size, fold_weight_arguments)
        if bias is None or (isinstance(bias, np.ndarray) and not np.all(np.isfinite(bias))):
            return None
        if isinstance(bias, Narrow) and computed_by_linear_op(bias.value):
            return None
        return add, unrounded_bias(other, dim, bias, unrounded)


def _consumers(
    activation: ir.Value, feature: int, fold_weight_arguments: bool, wide: np.dtype | None,
    channels: int | None, fold_narrow_weights: bool = True,
) -> tuple[list[_Consumer], list[Passed]] | str:
    """Every op that reads `activation`, each a linear op reading it along `feature` under
    the conditions of one fold (with master weights at least as `wide`, when the chain is
    computed in that wider type, or with `fold_narrow_weights` constant weights stored
    only in the narrow type); or why one of them cannot take it (the first). With
    `channels` (no narrowing convert between), a reader may also be a relu, leaky relu,
    clamp, max-pool, pad, sum, transpose, reshape, slice or concatenate that a positive
    scale passes (`analysis.passage.passed_by`), whose readers are walked alike, along the
    feature as it leaves each: the linear ops (each with the factor the sums on its way
    multiply a shift by, and the chain's channel each of its input channels holds), and
    the ops passed on the way, in the order walked."""
    found, passed = [], []
    pending = [(activation, feature, 1.0, None)]
    while pending:
        value, feature, factor, taken = pending.pop(0)
        # Past a slice or concatenate the value has channels of its own.
        size = channels if taken is None else len(taken)
        for use in value.uses:
            user = use.owner
            if channels is not None and user.operation.name in SHAPE_READERS:
                # Reads only the shape (torch-mlir's `shape_of` with a symbolic batch, for
                # the broadcasts of the op after it), which x (+ t / s) has too: `_build`
                # makes it read that.
                continue
            if channels is not None:
                step = passed_by(user, value, feature, size)
                prior = next((p for p in passed if isinstance(step, Passed) and p.op == step.op), None)
                if prior is not None and prior.data == step.data:
                    continue  # an inline leaky relu (compare, multiply, select), concat(v, v)
                if prior is not None:
                    # A concatenate of two values of the walk: one map per operand.
                    return reasons.AFFINE_USERS.detailed(user.name)
                if isinstance(step, Passed):
                    step_taken = _composed(taken, step.picks)
                    if factor != 1.0 or step_taken is not None:
                        step = replace(step, shift_before=factor, chain_channels=step_taken)
                    passed.append(step)
                    factor_after = factor * (step.shift_factor or 1.0)
                    pending.append((step.op.results[0], step.feature, factor_after, step_taken))
                    continue
                if step is not None:
                    return step
            layout = next(
                (
                    l for l in input_layouts(user)
                    if l.activation == use.operand_number and l.feature == feature
                    and user.operands[l.weight_operand] != value
                ),
                None,
            )
            if layout is None or any(c.linear == user for c in found):
                # (Also a linear op reaching the chain twice, through two operands.)
                return reasons.AFFINE_USERS.detailed(user.name)
            consumer = _consumer(user, layout, fold_weight_arguments, wide, fold_narrow_weights)
            if isinstance(consumer, str):
                return consumer
            # (`replace` is 5 us: only past a sum, slice or concatenate, where it changes
            # a field from its default.)
            if factor != 1.0 or taken is not None:
                consumer = replace(consumer, shift_factor=factor, chain_channels=taken)
            found.append(consumer)
    return found, passed


def _composed(taken: np.ndarray | None, picks: np.ndarray | None) -> np.ndarray | None:
    """The chain's channel each channel of a passed op's result holds (-1: none), from the
    map at its operand (`taken`, None: the chain's own) and the op's `picks`."""
    if picks is None:
        return taken
    if taken is None:
        return picks
    return np.where(picks >= 0, taken[np.maximum(picks, 0)], -1)


def _taken(values: PerChannel, chain_channels: np.ndarray | None, fill: float) -> PerChannel:
    """A per-channel value of the chain laid over the channels of an op after a slice or
    concatenate (`chain_channels`): the chain's value where a channel holds one, `fill`
    (1 for a scale, 0 for a shift: the other operands' identity) elsewhere."""
    if chain_channels is None:
        return values
    return np.where(chain_channels >= 0, values[np.maximum(chain_channels, 0)], fill)


def _consumer(
    linear: ir.OpView, layout: InputLayout, fold_weight_arguments: bool, wide: np.dtype | None,
    fold_narrow_weights: bool,
) -> _Consumer | str:
    activation = linear.operands[layout.activation]
    result_type = ir.RankedTensorType(linear.result.type)
    activation_type = ir.RankedTensorType(activation.type)
    weights = linear.operands[layout.weight_operand]
    if not _dynamic_dims_pass_through(linear, layout):
        return reasons.DYNAMIC_NOT_PASSED
    dtype = float_dtype(ir.RankedTensorType(weights.type).element_type)
    result_dtype = float_dtype(result_type.element_type)
    activation_dtype = float_dtype(activation_type.element_type)
    if result_dtype is None:
        return reasons.ELEMENT_TYPE
    if dtype is None:
        return reasons.WEIGHT_ELEMENT_TYPE
    if dtype.itemsize < max(activation_dtype.itemsize, result_dtype.itemsize):
        # x * s is computed in the wider type, with the weights exact: rounding W * s to
        # the weights' type would add an error the original never made.
        return reasons.NARROW_WEIGHTS
    stored, master, rounded_again = stored_weights(weights), None, False
    if wide is not None:
        # The chain is computed in the wider type: W * s is rounded to the weights' type
        # once, from master weights, as the original rounds W and the chain's result at
        # the convert, which the fold keeps on x (or x * r): see `master_weights`; with
        # weights as arguments, convert_T(W_F * s) in the graph (`master_value`).
        stored = master_weights(weights, wide)
        if stored is not None or fold_weight_arguments:
            # Also for a constant master: a scale computed in the graph scales W_F and
            # rounds to T once, never the weights already rounded to T.
            master = master_value(weights, wide)
        if stored is None and master is None:
            if computed_by_linear_op(weights):
                return reasons.WEIGHTS_ARE_ACTIVATIONS
            # Stored only in T: W * s from them, rounded to T again (`fold-narrow-weights`).
            stored = stored_weights(weights) if fold_narrow_weights else None
            if stored is None:
                return reasons.NO_MASTER_WEIGHTS
            rounded_again = True
    if stored is None and not fold_weight_arguments:
        return reasons.WEIGHTS_NOT_CONSTANT
    if stored is None and computed_by_linear_op(weights):
        return reasons.WEIGHTS_ARE_ACTIVATIONS
    if stored is None and layout.groups != 1:
        return reasons.GROUPED_NOT_CONSTANT
    if stored is not None and not np.all(np.isfinite(stored)):
        return reasons.WEIGHTS_NOT_FINITE
    return _Consumer(linear, layout, weights, stored, dtype, result_dtype, master, rounded_again)


def _dynamic_dims_pass_through(linear: ir.OpView, layout: InputLayout) -> bool:
    """Whether every dynamic dimension of the activation reaches the result unchanged (a
    symbolic batch): the weights' shape is static (so a dot_general's dynamic dimensions
    are free ones), and a convolution's only dynamic input dimension is its batch. The
    activation-sized ops the cost rule compares then share those dimensions, and their
    static sizes compare as the whole would."""
    if not ir.RankedTensorType(linear.operands[layout.weight_operand].type).has_static_shape:
        return False
    activation_type = ir.RankedTensorType(linear.operands[layout.activation].type)
    if not isinstance(linear, stablehlo.ConvolutionOp):
        return True
    batch = stablehlo.ConvDimensionNumbers(linear.dimension_numbers).input_batch_dimension
    return all(
        not activation_type.is_dynamic_dim(d) for d in range(activation_type.rank) if d != batch
    )


def _per_feature_overflow(affine: AffineChain, dtype: np.dtype) -> bool:
    """Whether, with steps in the graph, a float64 constant of the chain's (scale, shift)
    is not finite in the activation's type `dtype` (`rw.vector` has no value for it: x *
    1000 * 1000 * gamma in f16): a step's s and t, and the scale and shift accumulated
    (`AffineChain.affine`) below the first step in the graph and below each step under
    it."""
    if affine.constant:
        return False
    steps = affine.steps
    first = max(i for i, step in enumerate(steps) if not step.constant)
    read = [v for step in steps if step.constant for v in (step.s, step.t)]
    # The steps below `first` are constants: (scale, shift) below each of them, from the
    # innermost out, as `AffineChain.affine` computes them (the same float64 operations in
    # the same order). Below no step they are ones and zeros, finite in every type.
    if first + 1 < len(steps):
        scale, shift = np.ones(affine.channels), np.zeros(affine.channels)
        with np.errstate(all="ignore"):
            for step in reversed(steps[first + 1:]):
                scale, shift = scale * step.s, shift * step.s + step.t
                read.extend((scale, shift))
    return any(round_to(dtype, v) is None for v in read)


@dataclass(frozen=True)
class _ConsumerPlan:
    """How one linear op is rebuilt: its weights times the scale (`scaled`, rounded, on
    the exact path; else in the graph) and, unless `no_shift`, its bias L(shift, K)
    (`bias` in float64 on the exact path; else in the graph) added after it, or merged
    into its own bias add `own`."""

    consumer: _Consumer
    scaled: np.ndarray | None
    bias: np.ndarray | None
    own: tuple[stablehlo.AddOp, PerChannel] | None
    no_shift: bool


@dataclass(frozen=True)
class _Plan:
    """A decided input-side fold: the chain, its (scale, shift) from `AffineChain.affine`
    (`Computed` where the graph computes them), the shift kept in front (`moved` = t / s
    rounded, or None), each consumer's rebuild, and the narrowing convert between the
    chain and its consumers (kept, on the chain's input), if any."""

    linear: ir.OpView
    layout: InputLayout
    affine: AffineChain
    scale: PerChannel
    shift: PerChannel
    moved: np.ndarray | None
    kept_reason: str | None
    consumers: tuple[_ConsumerPlan, ...]
    narrowing: stablehlo.ConvertOp | None
    passed: tuple[Passed, ...] = ()
    """The relus, pools, pads, sums and reshapes between the chain and consumers that
    read it through them, in the order walked."""
    negative: np.ndarray | None = None
    """Where the scale is negative, when a relu is passed: each relu becomes a clamp."""
    feature: int = 0
    """The chain's feature dimension (the layout's, unless a reduce, reshape or transpose
    is passed)."""
    clamps: tuple[tuple[Passed, np.ndarray, np.ndarray], ...] = ()
    """Each clamp passed (or call of a relu6) with its moved bounds, rounded: it is
    rebuilt as a clamp with them."""
    centring: ir.OpView | None = None
    """The chain's subtract of the mean, kept in front (rebuilt), when `affine` is the
    chain above it (`_centring`)."""


def _plan(
    linear: ir.OpView, layout: InputLayout, feature: int, affine: AffineChain,
    narrowing: stablehlo.ConvertOp | None, rw: FoldRewriter, cancels: bool = False,
) -> _Plan | Outcome:
    """The fold of `affine`, per feature along `feature`, (read through `narrowing`, when
    it is not None) into every linear op that reads it, decided in the order of
    `fold_input_affine_into_conv`'s conditions (after the chain itself); or the skip."""
    top, activation, x = affine.top, linear.operands[layout.activation], affine.x
    activation_dtype = float_dtype(ir.RankedTensorType(x.type).element_type)
    # Through a convert, values computed in the graph are computed in the chain's type F.
    # The walk reads the scale only for a shift alone reached through ops; elsewhere it is
    # computed after the walk (a chain a residual add reads is refused without it).
    like, through = activation if narrowing is None else x, narrowing is None and activation != top.result
    scale, shift = affine.affine(like) if through else (None, None)
    walked = _walked_consumers(activation, feature, affine, scale, narrowing, rw)
    if isinstance(walked, Outcome):
        return walked
    if not through:
        scale, shift = affine.affine(like)
    consumers, passed, blocked = walked
    exact = affine.constant and all(c.stored is not None for c in consumers)
    if _per_feature_overflow(affine, activation_dtype):
        return rw.skip(top, reasons.PER_FEATURE_OVERFLOW)
    no_shift = isinstance(shift, np.ndarray) and not np.any(shift)
    if narrowing is not None and not exact and not no_shift:
        # The shift would stay in F before the convert, x + t / s: with s in the graph no
        # zero can be excluded (t / 0), nor the weights' rounding checked (`_magnified`).
        return rw.skip(top, reasons.SHIFT_NOT_CONSTANT)
    removed = affine.activation_ops()

    # Either the shift becomes a bias after each consumer, or it stays in front as one add
    # x + t / s that every consumer reads: where a window tap reads padding, or where the
    # bias adds would remove no op or sit on a result larger than the input.
    if removed < 1:
        # v * (r * c) with r * c read elsewhere too: v * r would replace it, one for one.
        return rw.skip(top, affine.stopped or reasons.COST_NOTHING_REMOVED)
    placed = _shift_placed(
        affine, passed, consumers, (scale, shift), narrowing is not None, removed, blocked, exact, rw,
        cancels,
    )
    if isinstance(placed, str):  # a Reason, or the op the chain stopped at
        return rw.skip(top, placed)
    owns, kept_reason, negative = placed
    moved = None
    if kept_reason is not None:
        moved = _kept_shift(rw, top, activation_dtype, scale, shift, exact)
        if not isinstance(moved, np.ndarray):
            return moved
    clamps = _moved_clamps(passed, scale, shift if moved is None and not no_shift else None)
    if clamps is None:
        return rw.skip(top, reasons.CLAMP_BOUNDS_OVERFLOW)

    plans = _consumer_plans(consumers, owns, scale, shift, exact, moved is not None)
    if isinstance(plans, str):
        return rw.skip(top, plans)
    refused = _cost_refused(affine, consumers, plans, (scale, shift), exact, moved is not None, rw)
    if refused is not None:
        return rw.skip(top, refused)
    return _Plan(
        linear, layout, affine, scale, shift, moved, kept_reason, tuple(plans), narrowing,
        tuple(passed), negative, feature, clamps,
    )


def _walked_consumers(
    activation: ir.Value, feature: int, affine: AffineChain, scale, narrowing: stablehlo.ConvertOp | None,
    rw: FoldRewriter,
) -> tuple[list[_Consumer], list[Passed], bool] | Outcome:
    """(the linear ops that read the chain, the ops passed on the way, whether one of them
    stops the shift), or the skip: an island's chain read by another op too; no consumer
    (`_consumers`' reason); a shift alone (the shift an output-side fold left behind a
    relu) that cannot pass every op, or meets a clamp."""
    top = affine.top
    # A shift alone reached through ops: a candidate only where every op passed passes it
    # and none is a clamp (a max-pool, a sum). (`scale` is None where none is reached.)
    shift_alone = (
        narrowing is None and activation != top.result
        and isinstance(scale, np.ndarray) and bool(np.all(scale == 1))
    )
    if narrowing is not None and not single_user(top.result):
        return rw.skip(top, reasons.ISLAND_USERS)
    wide = float_dtype(ir.RankedTensorType(affine.x.type).element_type) if narrowing is not None else None
    channels = affine.channels if narrowing is None else None  # no op passed after a convert
    walked = _consumers(
        activation if narrowing is not None else top.result, feature,
        rw.fold_weight_arguments, wide, channels, rw.fold_narrow_weights,
    )
    if isinstance(walked, str) and shift_alone:
        return rw.not_candidate(top, reasons.SHIFT_ALONE)
    if isinstance(walked, str):
        return _refuse(rw, affine, walked)
    consumers, passed = walked
    narrow = next((c.dtype for c in consumers if c.rounded_again), None)
    if narrow is not None:
        rw.rounds_again(narrow)  # the report marks the fold
    blocked = any(p.shift_factor is None for p in passed)
    if shift_alone and (blocked or any(p.bounds is not None for p in passed)):
        # Nothing would pass the relu (or pad, or padded pool); through a clamp the moved
        # bounds and the bias would cancel at the size of t, for no scale moved.
        return rw.not_candidate(top, reasons.SHIFT_ALONE)
    return consumers, passed, blocked


def _shift_placed(
    affine: AffineChain, passed: list[Passed], consumers: list[_Consumer], parameters: tuple,
    narrowed: bool, removed: int, blocked: bool, exact: bool, rw: FoldRewriter, cancels: bool = False,
) -> tuple[list, Reason | None, np.ndarray | None] | Reason:
    """Where the shift goes, in the order of the docstring's conditions: (each consumer's
    own bias add or None, why the shift stays in front as x + t / s or None, the channels
    whose negative scale turns a relu into a clamp or None); or why nothing folds. Either
    the shift becomes a bias after each consumer, or it stays in front as one add x + t / s
    that every consumer reads: where a window tap reads padding, or where the bias adds
    would remove no op or sit on a result larger than the input."""
    scale, shift = parameters
    no_shift = isinstance(shift, np.ndarray) and not np.any(shift)
    unit_scale = isinstance(scale, np.ndarray) and np.all(scale == 1)
    activation_dtype = float_dtype(ir.RankedTensorType(affine.x.type).element_type)
    owns = [None] * len(consumers)
    kept_reason = None
    negative = None
    # Only sums, max-pools, transposes and reshapes passed (`blocked` False): the shift
    # passes them too, times what the sums add up (below).
    refused = _passage_checked(passed, affine.constant, scale, shift, no_shift, removed, blocked)
    if refused is not None:
        return refused
    if blocked:  # (a shift alone is no candidate there: the scale is not all ones)
        if isinstance(scale, np.ndarray) and any(p.is_relu for p in passed) and np.any(scale < 0):
            negative = scale < 0
        kept_reason = None if no_shift else reasons.SHIFT_KEPT_PASSED
    elif not no_shift and narrowed:
        # L(x, K * s) + L(t, K) rounds L(x, K * s) in T at the size of x: with a large
        # mean (|t| much larger than |x * s + t|) the bias cancels all of T's digits.
        # x + t / s in F, then the convert, rounds A(x) / s: A(x)'s own relative error.
        kept_reason = reasons.SHIFT_KEPT_WIDE
    elif not no_shift and not all(c.every_tap for c in consumers):
        kept_reason = reasons.SHIFT_KEPT
    elif not no_shift and _clamp_cancels(passed, shift):
        if activation_dtype.itemsize <= 2:
            # x + t / s would round t / s in T at the size of the mean: as lossy.
            return reasons.CLAMP_SHIFT_CANCELS
        kept_reason = reasons.SHIFT_KEPT_CLAMP
    elif not no_shift and cancels:
        # A batch norm's data far from zero against its spread (`_centring`): as a bias
        # L(x, K * s) + L(t, K) sums terms of the size of the mean; x + t / s rounds as
        # the original's x * s + t does.
        if unit_scale or removed < 2 or not exact or not np.all(scale != 0):
            return reasons.STATISTICS_CANCEL
        kept_reason = reasons.SHIFT_KEPT_CANCELS
    elif not no_shift:
        owns = [c.own_bias(rw.fold_weight_arguments, exact, rw.unrounded) for c in consumers]
        x_size = static_elements(affine.top.result)
        larger = any(static_elements(c.linear.result) > x_size for c, own in zip(consumers, owns) if own is None)
        if owns.count(None) >= removed or larger:
            kept_reason = reasons.COST_LARGER if larger else reasons.COST_NOTHING_REMOVED
            if unit_scale or removed < 2 or not exact or not np.all(scale != 0):
                # No scale to fold, or x + t / s would remove nothing (one op for one),
                # or could not be built (t / s with a zero s), or its weights could not
                # be checked in the graph (see `_magnified`). When the chain stopped at
                # a per-channel op it cannot fold (a NaN variance under the bias add),
                # that op is why: folded whole, the chain would remove more.
                return affine.stopped or kept_reason
            owns = [None] * len(consumers)
    return owns, kept_reason, negative


def _consumer_plans(
    consumers: list[_Consumer], owns: list, scale, shift, exact: bool, kept: bool
) -> list[_ConsumerPlan] | str:
    """Each consumer's plan (its part of the scale, and of the shift past sums), or why
    one cannot be made."""
    plans = []
    for consumer, own in zip(consumers, owns):
        taken_scale, taken_shift = consumer.takes(scale, shift)  # a constant, past sums
        plan = _consumer_plan(consumer, taken_scale, taken_shift, exact, kept, own)
        if isinstance(plan, str):
            return plan
        plans.append(plan)
    return plans


def _cost_refused(
    affine: AffineChain, consumers: list[_Consumer], plans: list[_ConsumerPlan], parameters: tuple,
    exact: bool, kept: bool, rw: FoldRewriter,
) -> Reason | None:
    """The cost rules, last, so that a refusal the option could not lift is reported
    first: the weights scaled by s, or contracted with t (L(t, K)), on every call, larger
    than the activation; a shift alone traded for more ops than it removes."""
    scale, shift = parameters
    no_shift = isinstance(shift, np.ndarray) and not np.any(shift)
    unit_scale = isinstance(scale, np.ndarray) and np.all(scale == 1)
    met = ((() if unit_scale else (scale,)) + (() if no_shift or kept else (shift,)))
    if not exact and met and not rw.fold_larger_weight_arguments and per_call_larger(
        (c.weights if c.master is None else c.master for c in consumers), met, affine.top.result
    ):
        return reasons.COST_WEIGHTS_LARGER
    if (
        not exact and unit_scale and not no_shift and not rw.fold_larger_weight_arguments
        and _contracted_ops(plans, shift) > _removed_ops(affine)
    ):
        # A shift alone: one add (and its broadcast) traded for L(t, W) on every call.
        return reasons.COST_MORE_OPS
    return None


def _removed_ops(affine: AffineChain) -> int:
    """The ops a fold of `affine` removes: its steps, and the broadcasts (of reshapes) of
    their per-channel operands that only the step reads."""
    removed = 0
    for step in affine.steps:
        removed += 1
        for operand in step.op.operands:
            while operand != step.down and isinstance(operand.owner, _LAYING) and single_user(operand):
                removed += 1
                operand = operand.owner.operands[0]
    return removed


_LAYING = (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp, stablehlo.ReshapeOp)
"""The ops that lay a per-channel value over an activation."""


def _contracted_ops(plans: list[_ConsumerPlan], shift: PerChannel) -> int:
    """The ops `_contract_in_graph` and the bias add build, in the graph, for the consumers
    of `plans`: the `shift` made a [C] vector (a reshape, and a broadcast for a single
    element), laid over the weights' summed dimensions (a broadcast, when there are more
    than one), the `dot_general`, a transpose and a convert where needed, and an add into
    the consumer's own bias (a reshape of it first where it is not [C]) or a new broadcast
    and add."""
    built = 0
    for plan in plans:
        built += _vector_ops(shift)
        layout = plan.consumer.layout
        weights_type = ir.RankedTensorType(plan.consumer.weights.type)
        summed = [d for d in range(weights_type.rank) if d not in layout.kept]
        built += 1 + (len(summed) > 1) + (list(layout.kept) != sorted(layout.kept))
        result_element = ir.RankedTensorType(plan.consumer.linear.result.type).element_type
        built += result_element != weights_type.element_type
        built += 2 if plan.own is None else 1 + _vector_ops(plan.own[1])
    return built


def _vector_ops(value: PerChannel) -> int:
    """The ops `FoldRewriter.vector` builds to make `value` a [C] vector: none for a
    [C] value, a reshape for one of C elements, a reshape and a broadcast for a scalar."""
    if not isinstance(value, Narrow):
        return 0
    shaped = ir.RankedTensorType(value.value.type)
    if shaped.rank == 1:
        return 0
    return 1 if int(np.prod(shaped.shape)) > 1 else 2


def _moved_clamps(
    passed: list[Passed], scale: np.ndarray, shift: np.ndarray | None
) -> tuple[tuple[Passed, np.ndarray, np.ndarray], ...] | None:
    """Each clamp of `passed` with its bounds moved (`analysis.commuting.bounds_forward`:
    clamp(lo, v * s + c, hi) = clamp((lo - c) / s, v, (hi - c) / s) * s + c for s > 0,
    swapped for s < 0), rounded, or None when a finite one is not finite in the clamp's
    element type. The clamp read v * s + c, c the `shift` times what the sums before it
    added (none when the shift stays in front or is zero), and reads v after the fold,
    exactly up to the bounds' rounding; infinite bounds stay infinite."""
    clamps = []
    for p in passed:
        if p.bounds is None:
            continue
        s = _taken(scale, p.chain_channels, 1.0)
        c = 0.0 if shift is None else _taken(shift, p.chain_channels, 0.0) * p.shift_before
        lower, upper = bounds_forward(p.bounds, s, c)
        dtype = float_dtype(ir.RankedTensorType(p.op.results[0].type).element_type)
        rounded = [_rounded_bound(dtype, bound) for bound in (lower, upper)]
        if rounded[0] is None or rounded[1] is None:
            return None
        clamps.append((p, rounded[0], rounded[1]))
    return tuple(clamps)


def _clamp_cancels(passed: list[Passed], shift: np.ndarray) -> bool:
    """Whether the shift c reaching a passed clamp is too large against its bounds to pass
    it into the linear ops' biases. Passed, the clamp's saturated results, exact in the
    original (lo or hi), become L((lo - c) / s, K * s) + L(c, K), rounded at the size of c
    and cancelled by the bias: relative to the clamp's range max(|lo|, |hi|) the error
    grows by |c| / max(|lo|, |hi|) (a dead channel, s ~ 316, or a large gamma: every digit
    of bf16 lost). Kept in front as x + t / s it rounds as the original's x * s + t does,
    so the shift passes only where |c| <= max(|lo|, |hi|) / 2 on every channel and both
    bounds are finite (with an open side the range is the data's, unknown here). In f16
    and bf16 the kept x + t / s is no better: t / s rounds in T at the size of the mean,
    an error |c| / max(|lo|, |hi|) times the original's (which XLA computes in f32 and
    rounds once), so such a fold is refused there."""
    for p in passed:
        if p.bounds is None:
            continue
        c = np.abs(_taken(shift, p.chain_channels, 0.0) * p.shift_before)
        lo, hi = np.minimum(*p.bounds), p.bounds[1]
        reach = np.maximum(np.abs(lo), np.abs(hi))
        if not np.all(np.isfinite(reach)) or np.any(c > reach / 2):
            return True
    return False


def _rounded_bound(dtype: np.dtype, bound: np.ndarray) -> np.ndarray | None:
    """`bound` rounded to `dtype` (`round_to`), its infinite entries kept; None when a
    finite one overflows or one is NaN."""
    infinite = np.isinf(bound)
    rounded = round_to(dtype, np.where(infinite, 0.0, bound))
    return None if rounded is None else np.where(infinite, bound, rounded).astype(dtype)


def _passage_checked(
    passed: list[Passed], constant: bool, scale: PerChannel, shift: PerChannel, no_shift: bool,
    removed: int, blocked: bool,
) -> Reason | None:
    """Why the chain's map cannot move forward across the `passed` ops, in this order:
    values the graph computes that an op cannot take (`_passage_refused_in_graph`), a
    clamp passed with a zero scale (its bounds move to (lo - c) / s: a dead channel has
    none), a constant scale an op refuses (`_passage_refused`); None when it can, or when
    the scale is all ones (a shift alone, decided by the caller)."""
    unit_scale = isinstance(scale, np.ndarray) and np.all(scale == 1)
    if passed and not unit_scale and not constant:
        refused = _passage_refused_in_graph(passed, scale, shift, no_shift)
        if refused is not None:
            return refused
    if any(p.bounds is not None for p in passed) and np.any(scale == 0):
        return reasons.SCALE_ZERO
    if passed and not unit_scale and isinstance(scale, np.ndarray):
        return _passage_refused(passed, scale, no_shift, removed, blocked)
    return None


def _kept_shift(
    rw: FoldRewriter, top: ir.OpView, dtype: np.dtype, scale: PerChannel, shift: PerChannel, exact: bool
) -> np.ndarray | Outcome:
    """The shift kept in front of the scale, x + t / s, as t / s rounded to `dtype`; or
    the skip, in this order: the scale is all ones (a shift alone: L + b after another
    linear op is the canonical form, no candidate), a value is not a constant (reported:
    the scale is what would fold, as before a padded convolution whose kernel is an
    argument), a scale is zero, t / s overflows `dtype`."""
    if isinstance(scale, np.ndarray) and np.all(scale == 1):
        if linear_chain(top.result) is not None:
            return rw.not_candidate(top, reasons.SHIFT_ALONE)
        return rw.skip(top, reasons.SHIFT_ALONE)
    if not exact:
        return rw.skip(top, reasons.SHIFT_NOT_CONSTANT)
    if not np.all(scale != 0):
        return rw.skip(top, reasons.PAD_SCALE_ZERO)
    with np.errstate(all="ignore"):
        moved = round_to(dtype, shift / scale)
    if moved is None:
        return rw.skip(top, reasons.SHIFT_OVER_SCALE_OVERFLOW)
    return moved


def _passage_refused_in_graph(
    passed: list[Passed], scale: PerChannel, shift: PerChannel, no_shift: bool
) -> Reason | None:
    """Why a scale or shift the graph computes (not both constants) cannot move forward
    across the `passed` ops: a scale of unknown sign meets an op only a positive scale
    passes (`Row.positive`: a relu, max-pool, leaky relu or clamp); a slice or concatenate would lay the values over
    its channels; a shift would be multiplied by what a sum adds up, or move a clamp's
    bounds. Pads, transposes, reshapes, sums and count map divides take any scale, of any
    sign: pad(v * s, 0) = pad(v, 0) * s, sum(v * s) = sum(v) * s."""
    if not isinstance(scale, np.ndarray) and any(p.row.positive for p in passed):
        return reasons.SCALE_NOT_CONSTANT
    if any(p.picks is not None for p in passed):
        return reasons.PICKS_NOT_CONSTANT
    if not no_shift and not isinstance(shift, np.ndarray):
        if any(p.bounds is not None for p in passed):
            return reasons.CLAMP_SHIFT_NOT_CONSTANT
        if any(p.shift_factor not in (None, 1.0) for p in passed):
            return reasons.SUM_NOT_CONSTANT
    return None


def _passage_refused(
    passed: list[Passed], scale: np.ndarray, no_shift: bool, removed: int, blocked: bool
) -> Reason | None:
    """Why a constant scale cannot move forward across the `passed` relus, max-pools,
    pads and sums (the shift kept in front where one of them is `blocked`): a scale is
    zero where something blocks the shift or a maximum is passed, a negative one meets a
    maximum (a relu becomes a clamp instead) or a leaky relu, or the add x + t / s left
    in front would remove no op."""
    maxima = any(p.takes_max for p in passed)
    if (blocked or maxima) and np.any(scale == 0):
        return reasons.SCALE_ZERO
    if np.any(scale < 0) and maxima:
        return reasons.SCALE_NEGATIVE_POOL
    if np.any(scale < 0) and any(p.leaky for p in passed):
        return reasons.SCALE_NEGATIVE_LEAKY
    if blocked and not no_shift and removed < 2:
        return reasons.COST_NOTHING_REMOVED
    return None


def _refuse(rw: FoldRewriter, affine: AffineChain, reason: str) -> Outcome:
    """Skip at the chain's top op with `reason`; a chain with no batch norm in it whose
    linear op's weights are not constants (a reason of `reasons.NOT_CONSTANT`) is no
    candidate (attention's q * scale before q @ k^T, a chain before a layer whose
    weights are arguments without `fold-weight-arguments`)."""
    if reason in reasons.NOT_CONSTANT and not any(
        isinstance(s.op, stablehlo.BatchNormInferenceOp) for s in affine.steps
    ):
        return rw.not_candidate(affine.top, reason)
    return rw.skip(affine.top, reason)


def _consumer_plan(
    consumer: _Consumer, scale: PerChannel, shift: PerChannel, exact: bool, moved: bool,
    own: tuple[stablehlo.AddOp, PerChannel] | None,
) -> _ConsumerPlan | str:
    """How the consumer takes `scale` and, unless the shift is `moved` in front, its bias
    L(shift, K) (merged into `own`, its own bias add, when there is one); or why not."""
    layout, stored = consumer.layout, consumer.stored
    scaled = bias = None  # float64 before rounding (exact path)
    if exact:
        if not moved and np.any(shift):
            laid = _along_input(layout, shift, stored.shape)
            bias = _contract(stored, laid, layout)
            total = bias + own[1] if own is not None and isinstance(own[1], np.ndarray) else bias
            if round_to(consumer.result_dtype, total) is None:
                return reasons.FOLDED_BIAS_OVERFLOW
        scaled = _scaled(stored, layout, scale, consumer.dtype)
        if scaled is None:
            return reasons.FOLDED_WEIGHTS_OVERFLOW
        if moved and _magnified(scaled, stored, layout, scale, shift):
            return reasons.FOLDED_WEIGHTS_UNDERFLOW
    else:
        if layout.groups != 1:
            # `_scaled_in_graph` and `_contract_in_graph` lay [C] vectors over the weights'
            # input-feature axis, which holds one group's features: an invalid module.
            return reasons.GROUPED_IN_GRAPH
        # In the graph a constant scale and shift become vectors in the weights' type
        # (f16 weights as arguments after x * 1000 * 1000): they must fit there.
        if isinstance(scale, np.ndarray) and round_to(consumer.dtype, scale) is None:
            return reasons.FOLDED_WEIGHTS_OVERFLOW
        if isinstance(shift, np.ndarray) and round_to(consumer.dtype, shift) is None:
            return reasons.FOLDED_BIAS_OVERFLOW
    no_shift = moved or (isinstance(shift, np.ndarray) and not np.any(shift))
    return _ConsumerPlan(consumer, scaled, bias, own, no_shift)


def _build(plan: _Plan, rw: FoldRewriter) -> Outcome:
    """The IR of a decided fold: the scale and shift the graph computes, x * split, the
    shift kept in front, the narrowing convert, each consumer rebuilt; then the fold
    recorded."""
    affine = plan.affine
    top, x = affine.top, affine.x
    # With ops passed, a dynamic shape is read from the chain's own broadcast (Keras's
    # symbolic-batch export builds it from the batch argument), not from the data.
    like = _shape_source(affine) if plan.passed else x
    with rw.building_before(top):
        if plan.centring is not None:
            # x - mean rebuilt, so that the input side knows it for what it is (`kept_for`).
            x = centred = rw.elementwise(stablehlo.SubtractOp, plan.centring.lhs, plan.centring.rhs)
            like = x if like == affine.x else like
        scale, shift = rw.realize(plan.scale, plan.shift)
        if affine.split is not None:
            x = rw.elementwise(stablehlo.MulOp, x, affine.split)
        if plan.moved is not None:
            x = kept = rw.add_per_feature(x, plan.moved, plan.feature, like)
        if plan.narrowing is not None:
            x = rw.build(stablehlo.ConvertOp, plan.narrowing.result.type, x)
    reads = top.result if plan.narrowing is None else plan.narrowing.result
    root_result = None
    for consumer_plan in plan.consumers:
        linear = consumer_plan.consumer.linear
        taken_scale, taken_shift = consumer_plan.consumer.takes(scale, shift)
        with rw.building_before(linear):
            result = _build_consumer(rw, consumer_plan, x, reads, taken_scale, taken_shift, top)
        if linear == plan.linear:
            root_result = result
        else:
            rw.replace_inside(linear, result)
    _rebuild_clamps(plan, rw, like)
    reported, through = _reported(plan)
    outcome = rw.folded(plan.linear, root_result, plan.linear, folded=reported, through=through)
    if plan.passed or (plan.narrowing is None and _shape_read(top.result)):
        # The relus, pools and pads, and the shape reads `_consumers` skipped, read the
        # chain: they read x (+ t / s) instead.
        rw.replace_inside(top, x)
    if plan.moved is not None:
        rw.note(kept.owner, plan.kept_reason)
    if plan.centring is not None:
        rw.note(centred.owner, reasons.CENTRING_KEPT)
    return outcome


def _reported(plan: _Plan) -> tuple[ir.OpView, str]:
    """The op the report names for `plan`'s fold, and the ops it passed: the chain's top
    and the ops passed after it; for a chain that is only a split product v * (a * c),
    the product a * c, whose factor c folds, passing the multiply by v (exact GELU's
    x * 0.5 times the erf term: the 0.5 goes into the next layer through that multiply)."""
    names = [p.name for p in plan.passed]
    steps = plan.affine.steps
    if len(steps) == 1 and steps[0].split is not None:
        return steps[0].product, ", ".join([steps[0].op.operation.name, *names])
    return plan.affine.top, ", ".join(names)


def _shape_read(value: ir.Value) -> bool:
    """Whether an op reads `value`'s shape (`analysis.shapes.SHAPE_READERS`)."""
    return any(use.owner.operation.name in SHAPE_READERS for use in value.uses)


def _shape_source(affine: AffineChain) -> ir.Value:
    """A value of the chain's type to read a dynamic shape from: a per-feature operand of
    the chain broadcast by `dynamic_broadcast_in_dim` when there is one whose shape is not
    read from the chain's own steps (torch-mlir reads each step's shape for the next:
    reading it would keep the chain alive beside the fold), else x."""
    results = [step.op.result for step in affine.steps]
    for step in affine.steps:
        for operand in step.op.operands:
            if (
                operand != step.down and operand.type == step.op.result.type
                and isinstance(operand.owner, stablehlo.DynamicBroadcastInDimOp)
                and not any(v == r for v in shape_read_from(operand.owner.operands[1]) for r in results)
            ):
                return operand
    return affine.x


def _rebuild_clamps(plan: _Plan, rw: FoldRewriter, like: ir.Value) -> None:
    """Rebuild each passed relu (where some scale is negative) and clamp as a clamp with
    its moved bounds, the last one walked first: each reads the op walked before it
    (`Passed.data`), which must still be there when it is read (relu(relu(v)): the
    second read the first after the first's rebuild erased it, a crash)."""
    moved = {id(passed): (lower, upper) for passed, lower, upper in plan.clamps}
    for passed in reversed(plan.passed):
        if id(passed) in moved:
            _clamp(rw, passed, *moved[id(passed)], like)
        elif plan.negative is not None and passed.is_relu:
            # relu(s * u) = s * clamp(lo, u, hi): (0, +inf) where s > 0, (-inf, 0) where s < 0.
            dtype = float_dtype(ir.RankedTensorType(passed.data.type).element_type)
            negative = _taken(plan.negative, passed.chain_channels, False)
            lower = np.where(negative, -np.inf, 0.0).astype(dtype)
            upper = np.where(negative, 0.0, np.inf).astype(dtype)
            _clamp(rw, passed, lower, upper, like)


def _clamp(rw: FoldRewriter, passed: Passed, lower: np.ndarray, upper: np.ndarray, like: ir.Value) -> None:
    """Replace `passed` (a relu, a clamp, or a call of either) by `clamp(lower, v, upper)`
    with per-channel bounds along its feature, broadcast to the shape of `like` when it
    has v's type (a dynamic shape read from the chain's broadcast), else of v. A call is
    replaced at the call (the callee stays)."""
    data = passed.data
    shaped = like if data.type == like.type else data
    element = ir.RankedTensorType(data.type).element_type
    vector = ir.RankedTensorType.get([len(lower)], element)
    with rw.building_before(passed.op):
        bounds = [
            rw.broadcast(rw.constant(b, vector, passed.op.location), shaped, passed.feature)
            for b in (lower, upper)
        ]
        clamped = rw.build(stablehlo.ClampOp, bounds[0], data, bounds[1])
    rw.replace_inside(passed.op, clamped)


def _build_consumer(
    rw: FoldRewriter, plan: _ConsumerPlan, x: ir.Value, reads: ir.Value, scale: PerChannel,
    shift: PerChannel, top: ir.OpView,
) -> ir.Value:
    """The new linear op reading `x` where it read `reads` (the chain's result, or its
    narrowing convert), else what it read (a relu, pool or pad the scale passed); its
    bias added after it, or merged into its own bias add (which is replaced here)."""
    consumer, own = plan.consumer, plan.own
    layout = consumer.layout
    if plan.scaled is not None:
        weights_type = ir.RankedTensorType(consumer.weights.type)
        new_weights = rw.constant(plan.scaled, weights_type, consumer.weights.owner.location)
    else:
        new_weights = _scaled_in_graph(rw, consumer, scale)
    operands = {layout.weight_operand: new_weights}
    if consumer.linear.operands[layout.activation] == reads:
        operands[layout.activation] = x
    result = rw.with_operands(consumer.linear, operands)
    if plan.no_shift:
        return result
    if own is None:
        folded = plan.bias if plan.scaled is not None else _contract_in_graph(rw, consumer, shift)
        return _add_bias(rw, result, folded, layout, consumer.result_dtype, top)
    # The own bias may be defined after the linear op (a bias argument converted
    # there): the merged bias is built where the bias add is.
    with rw.building_before(own[0]):
        folded = plan.bias if plan.scaled is not None else _contract_in_graph(rw, consumer, shift)
        folded = combine(rw, np.add, folded, own[1], own[0].result)
        added = _add_bias(rw, result, folded, layout, consumer.result_dtype, top)
    rw.replace_inside(own[0], added)
    return result


def _add_bias(
    rw: FoldRewriter, result: ir.Value, bias: PerChannel, layout: InputLayout,
    dtype: np.dtype, top: ir.OpView,
) -> ir.Value:
    """`result + broadcast_in_dim(bias)` along `layout.result_dims`: float64 values rounded
    once to `dtype` (all zeros add nothing), or an IR value (per feature, or the weights'
    kept dimensions from `_contract_in_graph`)."""
    element = ir.RankedTensorType(result.type).element_type
    dims = list(layout.result_dims)
    if isinstance(bias, np.ndarray):
        if not np.any(bias):
            return result
        rounded = round_to(dtype, bias)
        vector = rw.constant(rounded, ir.RankedTensorType.get(list(rounded.shape), element), top.location)
        rw.rounded_from(vector, bias)  # (a fold of the layer's own norm after it reads it)
    elif len(dims) == 1:
        vector = rw.vector(bias, ir.RankedTensorType(result.type).shape[dims[0]], element)
    else:
        vector = bias
    return rw.elementwise(stablehlo.AddOp, result, rw.broadcast(vector, result, dims))


def _scaled_in_graph(rw: FoldRewriter, consumer: _Consumer, scale) -> ir.Value:
    """W * broadcast_in_dim(s) along the weights' input-feature axis (weight-sized); for
    master weights, convert_T(W_F * broadcast_in_dim(s))."""
    if isinstance(scale, np.ndarray) and np.all(scale == 1):
        return consumer.weights
    if consumer.master is not None:
        # convert_T(W_F * s): the product in the master's type, rounded to T once.
        weights_type = ir.RankedTensorType(consumer.weights.type)
        return rw.scaled_master(consumer.master, weights_type, scale, consumer.layout.weight_axis)
    return rw.scaled(consumer.weights, scale, consumer.layout.weight_axis)


def _contract_in_graph(rw: FoldRewriter, consumer: _Consumer, shift) -> ir.Value:
    """L(t, W) in the graph: t laid over the weights' summed dimensions, contracted with
    them by a dot_general; its dimensions in `layout.kept` order, in the result type."""
    layout, weights = consumer.layout, consumer.weights
    weights_type = ir.RankedTensorType(weights.type)
    element = weights_type.element_type
    summed = [d for d in range(weights_type.rank) if d not in layout.kept]
    channels = weights_type.shape[layout.weight_axis]
    vector = rw.vector(shift, channels, element)
    laid_type = ir.RankedTensorType.get([weights_type.shape[d] for d in summed], element)
    laid = vector
    if len(summed) > 1:
        dims = [summed.index(layout.weight_axis)]
        laid = rw.build(stablehlo.BroadcastInDimOp, laid_type, vector, dims)
    ascending = sorted(layout.kept)
    out_type = ir.RankedTensorType.get([weights_type.shape[d] for d in ascending], element)
    dims = stablehlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[],
        rhs_batching_dimensions=[],
        lhs_contracting_dimensions=list(range(len(summed))),
        rhs_contracting_dimensions=summed,
    )
    value = rw.build(stablehlo.DotGeneralOp, out_type, laid, weights, dims)
    order = [ascending.index(d) for d in layout.kept]
    if order != sorted(order):
        value = rw.build(stablehlo.TransposeOp, value, order)
    result_element = ir.RankedTensorType(consumer.linear.result.type).element_type
    if result_element != element:
        converted = ir.RankedTensorType.get(list(ir.RankedTensorType(value.type).shape), result_element)
        value = rw.build(stablehlo.ConvertOp, converted, value)
    return value


def _scaled(stored: np.ndarray, layout: InputLayout, scale: np.ndarray, dtype: np.dtype):
    """The weights times `scale` laid over their input features, in float64, rounded once
    to `dtype`; None if a product is not finite there."""
    if layout.groups == 1:
        return scale_along(stored, scale, layout.weight_axis, dtype)
    with np.errstate(over="ignore"):
        return round_to(dtype, stored.astype(np.float64) * _along_input(layout, scale, stored.shape))


def _magnified(
    scaled: np.ndarray, stored: np.ndarray, layout: InputLayout, scale: np.ndarray, shift: np.ndarray
) -> bool:
    """Whether, in conv(x + t / s, K * s), the rounding of K * s times t / s errs by more
    than one rounding (eps) of sum |K * t| for some output feature.

    A rounding of K * s to a normal number errs by at most eps / 2 of it, which t / s
    turns into eps / 2 of |K * t|: never more. Among subnormals (a tiny scale, as in a
    near-dead channel) the error is absolute, and t / s magnifies it past what the
    original computes."""
    exact = stored.astype(np.float64) * _along_input(layout, scale, stored.shape)
    magnifier = np.abs(_along_input(layout, shift / scale, stored.shape))
    error = _contract(np.abs(scaled.astype(np.float64) - exact), magnifier, layout)
    size = _contract(np.abs(stored), np.abs(_along_input(layout, shift, stored.shape)), layout)
    return bool(np.any(error > float(ml_dtypes.finfo(scaled.dtype).eps) * size))


def _reads_every_tap(linear: ir.OpView) -> bool:
    """Whether every window tap reads an input element: a dot_general, or a convolution
    without positive padding and without lhs dilation (both insert zeros)."""
    if not isinstance(linear, stablehlo.ConvolutionOp):
        return True
    padding = linear.padding
    if padding is not None and np.any(np.asarray(ir.DenseIntElementsAttr(padding)) > 0):
        return False
    dilation = linear.lhs_dilation
    return dilation is None or all(d == 1 for d in dilation)


def _along_input(layout: InputLayout, vector: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`vector` (one value per input feature) laid over weights of `shape`, broadcastable:
    along `weight_axis`, or for a grouped convolution along (weight_axis,
    weight_output_axis), output feature o reading the inputs of its group."""
    laid = [1] * len(shape)
    axis = layout.weight_axis
    if layout.groups == 1:
        laid[axis] = shape[axis]
        return vector.reshape(laid)
    output = layout.weight_output_axis
    per_group, outputs = shape[axis], shape[output]
    group_of = np.arange(outputs) // (outputs // layout.groups)
    table = vector.reshape(layout.groups, per_group)[group_of]  # [outputs, per_group]
    if axis < output:
        table = table.T
    laid[axis], laid[output] = per_group, outputs
    return table.reshape(laid)


def _contract(kernel: np.ndarray, shift: np.ndarray, layout: InputLayout) -> np.ndarray:
    """L(t, K): the weights times the laid-out shift, in float64, summed over every
    dimension that does not reach the result; its dimensions in `layout.kept` order."""
    summed_axes = tuple(d for d in range(kernel.ndim) if d not in layout.kept)
    # An array also when nothing is kept (x[T, C] . w[C]): a sum over every axis is a
    # numpy scalar, which the bias add would take for an IR value.
    summed = np.asarray((kernel.astype(np.float64) * shift).sum(axis=summed_axes))
    ascending = sorted(layout.kept)
    return np.transpose(summed, [ascending.index(d) for d in layout.kept])


FOLD_INPUT_AFFINE_INTO_CONV = Pattern(
    "fold_input_affine_into_conv", stablehlo.ConvolutionOp, fold_input_affine_into_conv
)
FOLD_INPUT_AFFINE_INTO_DOT = Pattern(
    "fold_input_affine_into_dot", stablehlo.DotOp, fold_input_affine_into_dot
)
FOLD_INPUT_AFFINE_INTO_DOT_GENERAL = Pattern(
    "fold_input_affine_into_dot_general",
    stablehlo.DotGeneralOp,
    fold_input_affine_into_dot_general,
)


def reads_chain_op(linear: ir.OpView) -> bool:
    """Whether an input of `linear` is computed by an op a chain may end at (`CHAIN_OPS`)
    itself, not through ops a scale passes: where `may_fold_into` may hold, read from the
    producers' classes alone (the driver's revisit of a rebuilt linear op asks it)."""
    return any(type(v.owner) in _CHAIN for v in _inputs(linear))


def may_fold_into(linear: ir.OpView) -> bool:
    """Whether an input-side pattern may fold a chain into `linear`: False where it
    declines at once, on its inputs' producers alone (`_may_start_chain`). The output
    side folds a chain after `linear` in one application only where this is False: one
    fold of the input side between the chain's ops (merging a shift into the bias add
    the first of them builds) would change what the rest of them fold into."""
    return any(_may_start_chain(v) for v in _inputs(linear))


def _inputs(linear: ir.OpView) -> list[ir.Value]:
    """The operands of `linear` a chain before it may reach: a convolution's input alone
    (its weights, scaled in the graph by an earlier fold, are not looked at), a
    dot_general's or dot's either operand."""
    operands = list(linear.operands)
    return operands[:1] if isinstance(linear, stablehlo.ConvolutionOp) else operands
