"""Every reason a pattern gives for leaving an op, as a named constant.

A `Reason` is the short lowercase phrase the report prints; code compares reasons by
identity (`reason is WEIGHTS_NOT_CONSTANT`, `reason in NOT_CONSTANT`), never by their text,
so rewording one changes the report and nothing else. A reason that carries a detail (what
a chain left reads) is text made by `Reason.detailed`: nothing compares it.
"""

from __future__ import annotations

__all__ = [
    "ARGUMENTS_NOT_FOLDED",
    "BRANCH_GROUPS",
    "BRANCH_LAYOUT",
    "BRANCH_MORE_OPS",
    "BRANCH_NOT_CONSTANT",
    "BRANCH_NOT_FINITE",
    "BRANCH_OTHER_BLOCK",
    "BRANCH_PRECISION",
    "BRANCH_STRIDES",
    "BRANCH_TAPS",
    "BRANCH_TRANSPOSED",
    "BRANCH_USERS",
    "IDENTITY_FEATURES",
    "IDENTITY_NO_CENTRE",
    "IDENTITY_RESIZES",
    "AFFINE_USERS",
    "ALREADY_BIAS_ADD",
    "BIAS_ADD_USERS",
    "BIAS_NOT_FINITE",
    "BIAS_NOT_PER_CHANNEL",
    "BN_NOT_CONSTANT",
    "BN_NOT_FINITE",
    "BROADCAST_CHANGES_TYPE",
    "CLAMP_BOUNDS_NOT_CONSTANT",
    "CLAMP_BOUNDS_OVERFLOW",
    "CLAMP_SHIFT_CANCELS",
    "CLAMP_SHIFT_NOT_CONSTANT",
    "CLAMP_USERS",
    "CENTRING_KEPT",
    "CONCAT_OPERAND_NOT_LINEAR",
    "CONCAT_SPANS_OTHER_DIMENSION",
    "CONCAT_USERS",
    "CASE_WEIGHTS_NOT_CONSTANT",
    "CHAIN_NOT_ALONG_FEATURE",
    "COST_LARGER",
    "COST_MORE_OPS",
    "COST_MORE_OPS_IN_GRAPH",
    "COST_WEIGHTS_LARGER",
    "COST_NOTHING_REMOVED",
    "DATA_DEPENDENT",
    "DIVISOR_ZERO",
    "DYNAMIC_NOT_PASSED",
    "ELEMENT_TYPE",
    "FACTOR_NOT_FINITE",
    "FEATURE_DYNAMIC",
    "FOLDED_BIAS_OVERFLOW",
    "FOLDED_WEIGHTS_OVERFLOW",
    "FOLDED_WEIGHTS_UNDERFLOW",
    "GROUPED_IN_GRAPH",
    "GROUPED_NOT_CONSTANT",
    "INPUT_NOT_AFFINE",
    "ISLAND_USERS",
    "LEAKY_RELU_USERS",
    "LITERAL_CONSTANT_TYPE",
    "LITERAL_LARGER",
    "LITERAL_NOT_FINITE",
    "LITERAL_OP",
    "LITERAL_READS_ARGUMENT",
    "LITERAL_SHAPE_OR_TYPE",
    "LITERAL_SHARED",
    "MAXIMUM_NOT_RELU",
    "MOVED_NOT_CONSTANT",
    "MOVED_USERS",
    "NARROW_WEIGHTS",
    "NOT_AFTER_LINEAR",
    "NOT_AFTER_LINEAR_OR_AFFINE",
    "NOT_CONSTANT",
    "NOT_LINEAR",
    "NOT_LINEAR_PLUS_PER_CHANNEL",
    "NOT_LINEAR_TIMES_PER_CHANNEL",
    "NOT_NARROWING_CONVERT",
    "NOT_OUTPUT_FEATURE",
    "NOT_RELU_OF_LINEAR",
    "NOT_RESHAPE",
    "NO_BIAS_ADD",
    "NO_CHAIN_ABOVE",
    "READ_BY_LINEAR_OPS",
    "NO_ISLAND",
    "NO_LINEAR_OP",
    "NO_MASTER_WEIGHTS",
    "PAD_NOT_ZERO",
    "PAD_SCALE_ZERO",
    "PAD_SPANS_FEATURE",
    "PER_FEATURE_OVERFLOW",
    "PER_TOKEN_FACTOR",
    "PICKS_NOT_CONSTANT",
    "PRODUCER_USERS",
    "POOL_INIT_NOT_LOWEST",
    "POOL_LOWEST_SCALED",
    "POOL_SPANS_FEATURE",
    "POOL_USERS",
    "REDUCE_INIT_NOT_IDENTITY",
    "REDUCE_SPANS_FEATURE",
    "RELU_USERS",
    "RESHAPES_CHANGE_SHAPE",
    "RESHAPE_SHAPE_FROM_LINEAR",
    "RESHAPE_SPLITS_FEATURE",
    "Reason",
    "SCALE_NEGATIVE",
    "SCALE_NEGATIVE_LEAKY",
    "SCALE_NEGATIVE_POOL",
    "SCALE_NOT_CONSTANT",
    "SCALE_ONE",
    "SCALE_ZERO",
    "SHAPE_NOT_OWN",
    "SHIFT_ALONE",
    "SHIFT_KEPT",
    "SHIFT_KEPT_CANCELS",
    "STATISTICS_CANCEL",
    "SHIFT_KEPT_CLAMP",
    "SHIFT_KEPT_PASSED",
    "SHIFT_KEPT_WIDE",
    "SHIFT_NOT_CONSTANT",
    "SHIFT_NOT_FINITE",
    "SHIFT_OVER_SCALE_OVERFLOW",
    "SLICE_NOT_CONSTANT",
    "SLICE_NOT_FIRST",
    "SLICE_USERS",
    "SHIFT_KEPT_SUM",
    "SHIFT_KEPT_MAP",
    "DIVIDE_USERS",
    "DIVISOR_FROM_DATA",
    "DIVISOR_ALONG_FEATURE",
    "SUM_NOT_CONSTANT",
    "SUM_POOL_INIT_NOT_ZERO",
    "SUM_POOL_SPANS_FEATURE",
    "SUM_POOL_USERS",
    "REDUCE_USERS",
    "VARIANCE_NOT_POSITIVE",
    "WEIGHTS_ARE_ACTIVATIONS",
    "WEIGHTS_NOT_CONSTANT",
    "WEIGHTS_NOT_FINITE",
    "WEIGHT_ELEMENT_TYPE",
    "WIDEN_USERS",
    "ZERO_SHAPE_FROM_LINEAR",
]


class Reason(str):
    """Why a pattern leaves an op: its text is what the report prints; two reasons are
    equal only when they are the same constant.

    A `str` so that it prints and serializes as the phrase it is, so that code which
    tells a reason from a result with `isinstance(x, str)` keeps working, and so that a
    test can compare a report's text with the constant."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Reason):
            return self is other
        return NotImplemented  # plain text: compared as text (a report read back)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = object.__hash__

    def detailed(self, detail: str) -> str:
        """This reason's text followed by `detail` in parentheses: text for the report,
        which no code compares."""
        return f"{self} ({detail})"


# The element types.
ELEMENT_TYPE = Reason("element type is not f16, bf16, f32 or f64")
WEIGHT_ELEMENT_TYPE = Reason("weight element type is not f16, bf16, f32 or f64")

# The linear op and its bias add.
NOT_LINEAR = Reason("operand is not a convolution or dot_general")
FEATURE_DYNAMIC = Reason("feature dimension is dynamic")
NOT_OUTPUT_FEATURE = Reason("feature_index is not the output-feature dimension")
BIAS_ADD_USERS = Reason("bias add result has other users")
PRODUCER_USERS = Reason("producer result has other users")
BIAS_NOT_PER_CHANNEL = Reason("bias is not a per-channel constant")
BIAS_NOT_FINITE = Reason("bias is not finite")

# The weights.
WEIGHTS_NOT_CONSTANT = Reason("weights are not a constant")
WEIGHTS_NOT_FINITE = Reason("weights are not finite")
NARROW_WEIGHTS = Reason("weights are narrower than the computation: folding would round them again")
"""Why weights in a narrower type than the values they are multiplied with are not scaled."""
WEIGHTS_ARE_ACTIVATIONS = Reason("weights are computed by a linear op: the op would only move onto them")
"""Why in-graph weights that are themselves an activation (attention's k) are not scaled."""
CASE_WEIGHTS_NOT_CONSTANT = Reason("weights in case branches are not constants")
GROUPED_NOT_CONSTANT = Reason("weights of a grouped convolution are not a constant")
GROUPED_IN_GRAPH = Reason("scale or shift of a grouped convolution would be computed in the graph")
"""Why a grouped convolution's constant weights take no scale or shift the graph computes:
the graph lays a per-channel vector over the kernel's input-feature axis whole, which in a
grouped convolution holds one group's features (the output feature's group decides which)."""
NO_MASTER_WEIGHTS = Reason("weights have no wider master copy: folding would round them again")

# The per-channel values.
BN_NOT_CONSTANT = Reason("batch-norm operands are not constants")
BN_NOT_FINITE = Reason("batch-norm operands are not finite")
VARIANCE_NOT_POSITIVE = Reason("variance + epsilon is not positive")
FACTOR_NOT_FINITE = Reason("per-channel factor is not finite")
DIVISOR_ZERO = Reason("per-channel divisor has a zero")
SHIFT_NOT_FINITE = Reason("per-channel shift is not finite")
DATA_DEPENDENT = Reason(
    "per-channel value is computed from the data: folding would make the weights depend on it"
)
"""Why a per-channel value that is not a parameter (a squeeze-excite gate, attention
weights, a per-token statistic) is not folded into weights."""

# What the fold computes.
FOLDED_WEIGHTS_OVERFLOW = Reason("folded weights overflow their element type")
FOLDED_WEIGHTS_UNDERFLOW = Reason("folded weights underflow their element type")
FOLDED_BIAS_OVERFLOW = Reason("folded bias overflows its element type")
PER_FEATURE_OVERFLOW = Reason("per-feature values overflow their element type")
SHIFT_OVER_SCALE_OVERFLOW = Reason("shift over scale overflows its element type")

# Not candidates of the output-side patterns (debug log only).
NOT_LINEAR_TIMES_PER_CHANNEL = Reason("not a linear op times a per-channel value")
NO_BIAS_ADD = Reason("no linear op plus a bias on either side")
NOT_LINEAR_PLUS_PER_CHANNEL = Reason("not a linear op plus a per-channel value")
ALREADY_BIAS_ADD = Reason("already a single bias add")
NOT_RESHAPE = Reason("operand is not a reshape")
RESHAPES_CHANGE_SHAPE = Reason("the reshapes do not restore the shape")
NOT_AFTER_LINEAR = Reason("not after a linear op")
NOT_AFTER_LINEAR_OR_AFFINE = Reason("not after a linear op or a per-channel affine op")
BROADCAST_CHANGES_TYPE = Reason("the broadcast changes the type")
SHAPE_NOT_OWN = Reason("the shape is not provably the operand's own")

# Mixed precision.
NOT_NARROWING_CONVERT = Reason("not a narrowing float convert")
NO_ISLAND = Reason("no per-channel chain over a widening convert")
WIDEN_USERS = Reason("widening convert result has other users")
CHAIN_NOT_ALONG_FEATURE = Reason("the chain is not per-channel constants along the output feature")

# The input side.
INPUT_NOT_AFFINE = Reason("input is not a per-feature affine map")
AFFINE_USERS = Reason("affine result has other users")
"""Why a chain before a linear op stays: another op reads its result; the line names it
(`Reason.detailed`)."""
ISLAND_USERS = Reason("affine result has other users than the narrowing convert")
DYNAMIC_NOT_PASSED = Reason("a dynamic dimension is contracted or windowed: only the batch may be dynamic")
COST_NOTHING_REMOVED = Reason("folding would add as many activation-sized ops as it removes")
COST_LARGER = Reason("folding would move an add onto a larger tensor")
COST_MORE_OPS = Reason(
    "folding in the graph would build more ops than it removes: a shift alone contracted "
    "with the weights on every call"
)
"""Why a shift alone before a linear op whose weights are arguments stays: its add and
broadcast would become L(t, W) computed on every call, a `dot_general` and the ops laying
t over the weights and adding the result, more ops in all (the activation-sized add goes,
the graph grows)."""
COST_MORE_OPS_IN_GRAPH = Reason(
    "folding in the graph would build more ops than it removes: the scale, weights and "
    "bias computed from arguments on every call"
)
"""Why a fold whose weights or statistics are arguments stays: the ops it would build
to compute the folded weights and bias on every call outnumber the ops it removes (a
`batch_norm_inference` is one op; its scale, the scaled kernel and the bias take about
ten). `fold-larger-weight-arguments` folds it anyway; `fold_parameters` folds it once."""
COST_WEIGHTS_LARGER = Reason(
    "weights the graph would scale or contract on every call have more elements than the "
    "activation: the fold would move the op onto a larger tensor"
)
"""Weights passed as arguments, or constant weights and a scale or shift that is one: see
`fold.plan.per_call_larger` and the pass option `fold-larger-weight-arguments`."""
PAD_SCALE_ZERO = Reason("convolution pads or dilates its input and a scale is zero")
SHIFT_ALONE = Reason("a shift alone cannot pass the zeros of padding or lhs dilation")
SHIFT_KEPT = Reason("convolution pads or dilates its input: the shift cannot pass its zeros")
SHIFT_KEPT_WIDE = Reason(
    "the shift stays before the narrowing convert: as a bias after the layer it would "
    "cancel in the narrow type at the size of x, not of the norm's result"
)
SHIFT_NOT_CONSTANT = Reason("the shift stays in front and the weights or scale are not constants")
NOT_CONSTANT = frozenset({WEIGHTS_NOT_CONSTANT, WEIGHTS_ARE_ACTIVATIONS, GROUPED_NOT_CONSTANT})
"""The reasons that say a linear op's weights are not constants: an input-side chain with
no batch norm in it is then no candidate."""

# Through a ReLU (patterns/through.py).
NOT_RELU_OF_LINEAR = Reason("not a maximum of a linear op and a constant")
NO_CHAIN_ABOVE = Reason("no per-channel affine chain reads the maximum")
READ_BY_LINEAR_OPS = Reason(
    "only linear ops read the chain: the input side folds all of it into them"
)
SCALE_ONE = Reason("the scale is all ones: nothing passes the maximum")
MAXIMUM_NOT_RELU = Reason("the maximum is not against zero: not a relu")
RELU_USERS = Reason("relu result has other users")
POOL_USERS = Reason("max-pool result has other users")
POOL_INIT_NOT_LOWEST = Reason(
    "the max-pool's init value is not -inf or the lowest value: scaling would change its padding"
)
POOL_SPANS_FEATURE = Reason("the max-pool's window spans the feature dimension")
POOL_LOWEST_SCALED = Reason(
    "the max-pool's init value is the lowest finite value, not -inf, and a window may hold "
    "only padding: the scale cannot pass it (its maximum is the lowest value, not the "
    "lowest value times s)"
)
"""Why a scale stays behind a max-pool (or a `reduce` maximum over a size that may be
zero) whose init value is the lowest finite value: a window of padding alone gives that
value, where scaling the pooled value gives it times s (or -inf past the range); -inf
padding stays -inf under any s > 0."""
ZERO_SHAPE_FROM_LINEAR = Reason("the relu's zero reads its shape from the linear op: it would stay computed")
SCALE_NOT_CONSTANT = Reason("per-channel scale or shift is not a constant: the scale's sign is unknown")
PICKS_NOT_CONSTANT = Reason(
    "per-channel scale or shift is not a constant: only constants are laid over the channels "
    "a slice or concatenate keeps"
)
"""Why values computed in the graph do not pass a slice or concatenate of the channels
forward: each linear op after it would take them on the channels it reads (1 and 0 on the
others), a selection the build makes of float64 values only."""
CLAMP_SHIFT_NOT_CONSTANT = Reason(
    "per-channel shift is not a constant: the clamp's bounds cannot move by it"
)
"""Why a shift computed in the graph does not pass a clamp forward: the bounds would move
to (lo - c) / s, which must be constants to round and check."""
SCALE_ZERO = Reason("per-channel scale has a zero: a dead channel is not moved through a relu, clamp or pool")
SCALE_NEGATIVE = Reason("per-channel scale is negative: a maximum (relu, clamp, max-pool) times s < 0 is a minimum")
"""Why a negative scale does not pass a relu: max(v, 0) * s = min(v * s, 0) for s < 0.
Making it positive (Samsung ONE's gamma = 1e-10) would change the results."""

# Forward through a ReLU, max-pool or pad (patterns/input_side.py, analysis/passage.py).
PAD_NOT_ZERO = Reason("the pad's padding value is not zero: scaling would change it")
PAD_SPANS_FEATURE = Reason("the pad pads the feature dimension")
SCALE_NEGATIVE_POOL = Reason(
    "per-channel scale is negative before a max-pool: maxpool(v * s) is not maxpool(v) * s"
)
"""Why a negative scale does not pass a max-pool forward: the maximum of v * s for s < 0
is s times the minimum of v (a relu has an exact clamp for it; a max-pool has none)."""
CONCAT_SPANS_OTHER_DIMENSION = Reason(
    "the concatenate joins another dimension: its other operands would meet the scale too"
)
SCALE_NEGATIVE_LEAKY = Reason(
    "per-channel scale is negative before a leaky relu: leaky(v * s) is not leaky(v) * s"
)
"""Why a negative scale does not pass a leaky relu forward: for s < 0 the slope a moves
to the other side of zero, leaky(v * s) = s * select(v > 0, a * v, v), which no op after
it can take."""
REDUCE_SPANS_FEATURE = Reason("the reduce reduces the feature dimension")
REDUCE_INIT_NOT_IDENTITY = Reason("the reduce's init value is not its identity: scaling would change it")
SHIFT_KEPT_PASSED = Reason("the shift cannot pass the ops after it (a relu, a pool, a pad, or a sum over a dynamic size)")
"""Why the add x + t / s stays in front of the ops a scale passed into the linear ops after
them: relu(v + t) is not relu(v) + t, and a pool's or pad's padding is not shifted."""
SHIFT_KEPT_CLAMP = Reason(
    "the shift is large against the clamp's bounds: passed into the bias it would cancel "
    "the clamp's saturated results at its size"
)
"""Why the add x + t / s stays in front of a clamp the scale passed: the moved bounds
(lo - c) / s and the bias L(c, K) round at the size of the shift c, and the saturated
results, exact before, would err by |c| / max(|lo|, |hi|) ulps."""
CENTRING_KEPT = Reason(
    "the data's mean is large against its spread: its subtraction stays in front, as the "
    "original computes it (folded into the bias it would cancel at the size of the mean)"
)
"""Why the subtract x - mean of a chain computed from statistics stays in front of the
linear ops its scale and shift fold into (`fold.affine_map.cancellation`): folded whole,
conv(x, K * s) sums terms of size |mean| * s and a bias of that size cancels them, an
error |mean| / sqrt(var + eps) times the norm's result's; the original subtracts the mean
first, nearly exactly."""
SHIFT_KEPT_CANCELS = Reason(
    "the data's mean is large against its spread: the shift stays in front (x + t / s); "
    "as a bias after the layer it would cancel at the size of the mean"
)
"""Why the add x + t / s stays in front where a batch norm's statistics put its data far
from zero against its spread (`fold.affine_map.cancellation`): it rounds as the original's
x * s + t does, where L(x, K * s) + L(t, K) sums terms of that size in every output."""
STATISTICS_CANCEL = Reason(
    "the data's mean is large against its spread: folded, the layer would cancel at the "
    "size of the mean, and the shift cannot stay in front"
)
"""Why a chain computed from statistics whose data lie far from zero against their spread
stays (`SHIFT_KEPT_CANCELS`), where x + t / s cannot be built or would remove no op."""
CLAMP_SHIFT_CANCELS = Reason(
    "the shift is large against the clamp's bounds: in f16 or bf16 it would cancel the "
    "clamp's saturated results, as a bias or as x + t / s"
)
"""Why a per-channel map is not moved across a clamp in a 2-byte type: passed into the
bias, the shift cancels the saturated results (`SHIFT_KEPT_CLAMP`); kept in front, t / s
rounds in the narrow type at the size of the mean, |c| / max(|lo|, |hi|) times the
original's error."""

# Through a sum pool (an average pool before its divide) or a sum over other dimensions
# (a mean, a global average pool), both directions (patterns/through.py,
# analysis/passage.py).
SUM_POOL_INIT_NOT_ZERO = Reason(
    "the sum pool's init value is not 0: scaling would change its padding"
)
SUM_POOL_SPANS_FEATURE = Reason("the sum pool's window spans the feature dimension")
SUM_POOL_USERS = Reason("sum pool result has other users")
REDUCE_USERS = Reason("reduce result has other users")
SUM_NOT_CONSTANT = Reason(
    "per-channel scale or shift is not a constant: only constants pass a sum pool or reduce"
)
SHIFT_KEPT_SUM = Reason(
    "a sum pool pads or dilates its input, or a sum's size is dynamic: the shift cannot pass it"
)
"""Why the add of the shift stays behind a sum (pool(v) * s + t with t / n into the bias
needs every window to add n elements of v): only the scale moved back into the linear op."""
DIVISOR_FROM_DATA = Reason("the average pool's divisor is computed from the data")
DIVISOR_ALONG_FEATURE = Reason("the average pool's divisor varies along the feature dimension")
DIVIDE_USERS = Reason("average pool divide result has other users")
SHIFT_KEPT_MAP = Reason(
    "the average pool divides by a count per position: the shift cannot pass it (t / m is not per-channel)"
)
"""Why the add of the shift stays behind an average pool that excludes its padding
(`count_include_pad=False`): (v / m) * s = (v * s) / m, but t / m varies by position."""

# Chains no pattern looked at.
NO_LINEAR_OP = Reason("no convolution or dot_general next to the chain")
"""Why a per-channel chain that is no pattern's candidate stays; the line adds what it
reads and what reads it."""
ARGUMENTS_NOT_FOLDED = Reason("the per-channel values are function arguments and fold-weight-arguments is off")
"""Why a per-channel chain that applies parameters passed as arguments stays (Flax's
batch norm of `model.apply(variables, x)`) when the pass folds constants only: no
pattern takes it, wherever it is."""
PER_TOKEN_FACTOR = Reason(
    "the per-channel value multiplies a per-token value (a norm's statistic), not an "
    "activation a linear op reads"
)
"""Why a per-channel chain on a statistic broadcast from the data stays (gamma inside a
LayerNorm's per-token factor, as TensorFlow lowers Keras's LayerNormalization)."""

# Through a reshape or transpose (patterns/through.py).
RESHAPE_SPLITS_FEATURE = Reason("a reshape splits or merges the feature dimension")
"""Why a chain after a reshape stays: its channels are not one dimension of the linear
op's result (a Dense layer's [B, N, C] seen as [B, N * C])."""
MOVED_USERS = Reason("reshape or transpose result has other users")
MOVED_NOT_CONSTANT = Reason(
    "per-channel scale or shift is not a constant: only constants pass a concatenate"
)
RESHAPE_SHAPE_FROM_LINEAR = Reason(
    "the dynamic reshape reads its shape from the linear op: it would stay computed"
)

# Through a clamp (patterns/through.py).
CLAMP_BOUNDS_NOT_CONSTANT = Reason(
    "the clamp's bounds are not per-channel constants: they cannot move with the scale"
)
CLAMP_USERS = Reason("clamp result has other users")
CLAMP_BOUNDS_OVERFLOW = Reason("the clamp's bounds times the scale overflow their element type")

# Through a leaky relu (patterns/through.py).
LEAKY_RELU_USERS = Reason("leaky relu result has other users")

# Through a concatenate (patterns/through.py).
CONCAT_OPERAND_NOT_LINEAR = Reason("an operand of the concatenate is not a linear op")
"""Why a chain after a concatenate stays: one operand's range of the scale has no
weights to go into; the line names what computes it (`Reason.detailed`)."""
CONCAT_USERS = Reason("concatenate result has other users")

# Through a slice (patterns/through.py).
SLICE_NOT_FIRST = Reason(
    "the slice of the channels does not read the linear op: the ops below it have other channels"
)
"""Why a chain after a slice of some channels stays when the slice is not the first op
after L or L + b: a relu, clamp or pool below it would meet all of L's channels, the
chain only the kept ones."""
SLICE_USERS = Reason("slice result has other users")
SLICE_NOT_CONSTANT = Reason("per-channel scale or shift is not a constant: only constants pass a slice")

# Literal weights and biases (fold/literals.py: debug log only, nothing is reported).
LITERAL_READS_ARGUMENT = Reason("the value reads a function or region argument")
"""Weights or a bias computed from an argument (weights passed in) stay computed in the
graph."""
LITERAL_OP = Reason("the value is computed by an op that is not evaluated on constants")
"""Only reshape, transpose, broadcast_in_dim, convert, add, subtract, multiply, divide,
power, negate, sqrt, rsqrt, maximum, minimum, a reduce by add, maximum, minimum or
multiply, and dot_general are evaluated (`fold.literals.EVALUATED`)."""
LITERAL_SHAPE_OR_TYPE = Reason(
    "an op on the way has a dynamic shape, or an element type other than f16, bf16, f32 or f64"
)
LITERAL_CONSTANT_TYPE = Reason(
    "a constant on the way holds neither f16, bf16, f32 or f64 values nor integers exact in float64"
)
LITERAL_SHARED = Reason(
    "a constant or op the value is computed from has another reader: its bytes would stay"
)
"""A kernel another layer reads too: evaluated, its bytes would be in the module twice.
Scalars (an epsilon) may have other readers: they stay for them."""
LITERAL_NOT_FINITE = Reason("the value is not finite in its element type")
LITERAL_LARGER = Reason("the new constant would be larger than the constants it replaces")
"""A vector broadcast to a whole kernel: evaluated, the module would hold every element. A
value computed from splats only is written as a splat."""

# Parallel branches (fold/branches.py): a sum of convolutions of one input left unmerged.
BRANCH_TRANSPOSED = Reason("a branch is a transposed convolution (lhs dilation) or reverses its window")
BRANCH_STRIDES = Reason("the branches' convolutions have different strides")
BRANCH_GROUPS = Reason("the branches' convolutions have different feature or batch group counts")
BRANCH_LAYOUT = Reason("the branches' convolutions have different dimension numbers")
BRANCH_PRECISION = Reason("the branches' convolutions have different precision configs")
BRANCH_OTHER_BLOCK = Reason("a branch is computed in another block than the sum")
BRANCH_USERS = Reason("a branch's convolution or bias add has other readers")
"""What another op reads stays computed: the merged convolution would not remove it."""
BRANCH_TAPS = Reason("no branch's kernel holds the other branches' taps")
"""Each branch's window must land on the taps of one kernel: its padding offset a whole
number of that kernel's dilations, its dilation a multiple of it (or its kernel one tap
wide there), its taps inside it. ACNet's 1x3 and 3x1 merge only with its 3x3."""
BRANCH_NOT_CONSTANT = Reason("a branch's weights or bias are not constants")
"""With `fold-weight-arguments=false`, weights passed as arguments stay in their branches;
with it, a bias that is no per-channel value."""
BRANCH_MORE_OPS = Reason("merging in the graph would build more ops than it removes")
"""Weights passed as arguments are padded and added in the graph on every call: where
that takes more ops than the branches' convolutions, bias adds and sums that go, the
branches stay."""
BRANCH_NOT_FINITE = Reason("the merged weights or bias are not finite in their element type")
IDENTITY_RESIZES = Reason("the identity branch's convolution is strided or changes the size")
IDENTITY_NO_CENTRE = Reason("the identity branch's convolution has no tap at offset zero")
IDENTITY_FEATURES = Reason(
    "the identity branch's convolution does not map its input features to the same output features"
)
"""Input and output features equal in number and in the same layout, no batch groups:
output feature o then reads input feature o at kernel index o mod (I / groups)."""
