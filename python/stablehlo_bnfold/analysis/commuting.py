"""The one table of the ops a per-channel affine map v * s + t commutes with, read by both
directions.

For s > 0 per channel, element by element and exactly in every rounding mode,

    relu(v * s) = max(v * s, 0) = max(v, 0) * s = relu(v) * s
    maxpool(v * s) = maxpool(v) * s      (a window of one along the channels; its init
                                          -inf, or every window holding an element
                                          of v: `window_may_be_empty`)
    maxpool(v + c) = maxpool(v) + c      (any c; the same windows)
    pad(v * s, 0) = pad(v, 0) * s        (no padding along the channels)
    leaky(v * s) = leaky(v) * s          (select(v >= 0, v, a * v), any a; up to
                                          the rounding of a * v)
    clamp(lo, v * s, hi) = clamp(lo / s, v, hi / s) * s   (up to the rounding of the
                                          moved bounds; lo and hi swapped for s < 0)

since multiplying by a positive number is monotonic and maps 0 to 0 (and -inf, the maximum's
identity, to itself). A pad commutes with any s (0 * s = 0), and so does a sum over
dimensions other than the channels' (a global average pool's `reduce` add, init 0: sum(v *
s) = sum(v) * s, up to the rounding of the sum's terms), and a sum pool whose window is one
channel wide (`reduce_window` add, init 0: an average pool before its divide; a shift passes
it as n * t where no padding or base dilation puts the init value in a window, n the
window's size), and the divide of one that excludes its padding by a count per position m
computed from constants, the same for every channel ((v * s) / m = (v / m) * s; no shift
passes it: t / m is not per-channel); a `reduce` maximum over them (a global max pool) is a
max-pool. The feature dimension keeps its size through each of them, and its index except
where a `reduce` drops dimensions before it; a transpose and a reshape that keeps it whole
(as many elements before it; with a symbolic batch, a dynamic reshape, as many after it)
move it, and any per-channel map passes them, and torch-mlir's dynamic broadcast of a value
onto its own shape; so it does a slice and a concatenate along the feature, channel by
channel: a linear op after them meets the channels they keep, or the other operands' (scale
1, shift 0), and a clamp, its bounds moved.

`TABLE` holds one `Row` per op kind: how an op is that kind (its data operands, read
walking up from a linear op's input, down from a chain to a linear op, or forward from a
value it reads), how the channel dimension maps through it both ways, which scales pass
(positive only, or any sign), whether and as what the shift passes, its refusals (named
reasons of `fold.reasons`), its report name, and how it moves clamp bounds. `ROWS` finds
an op's rows by its class (`ROWS[type(op)]`: `value.owner` is the registered class itself,
and `isinstance` against OpView classes, nanobind types, costs about 60 ns a class it is
not). The walkers read the rows and nothing else about these ops:

- the input side (`patterns.input_side`: a scale moved forward from a chain into the linear
  ops after these ops): `UP` (walking up from a linear op's input to the chain) and
  `passed_by` (forward from the chain, reader by reader);
- the output side (`patterns.through`: a scale moved back from a chain after these ops into
  the linear op before them): `data_down` and `DOWN` (walking down from the chain to the
  linear op), and the rows' refusals, users' reasons and shift factors;
- both: `feature_below`, `Passed` (one op passed, either direction),
  `bounds_back` and `bounds_forward` (a clamp's bounds moved).

The recognizers and refusal checks the rows name (what a relu call, a max-pool, a leaky
relu is; why a max-pool is refused) live in `analysis.passage`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from ..constants import dimensions
from ..fold import reasons
from ..fold.affine_map import per_channel
from ..fold.reasons import Reason
from .passage import (
    activation_data,
    called_leaky_relu,
    called_maximum,
    called_reads,
    called_relu6,
    clamp_bound_f64,
    divides_sum_pool_by_map,
    identity_broadcast,
    is_max_pool,
    is_sum_pool,
    leaky_relu_data,
    max_pool_refused,
    pad_refused,
    pool_divisor_refused,
    reduce_refused,
    reduced_elements,
    reduce_body,
    relu_refused,
    sliced_channels,
    sum_pool_refused,
    sum_pool_taps,
    sum_reduce,
)

__all__ = [
    "DOWN",
    "DOWN_CLASSES",
    "PASSAGE_OPS",
    "READING_OPS",
    "ROWS",
    "SHIFT_AS_IS",
    "SHIFT_INTO_BOUNDS",
    "SHIFT_NONE",
    "SHIFT_TIMES_N",
    "SLICE",
    "TABLE",
    "UP",
    "Passed",
    "Row",
    "bounds_back",
    "bounds_forward",
    "data_down",
    "feature_below",
    "passed_by",
]

SHIFT_NONE = "no"
"""The shift does not pass the op (relu(v + t) is not relu(v) + t)."""
SHIFT_AS_IS = "as it is"
"""The shift passes the op unchanged (maxpool(v + t) = maxpool(v) + t)."""
SHIFT_TIMES_N = "as n * t"
"""The shift passes the op times the n elements it adds (sum(v + t) = sum(v) + n * t), where
n is one number (`Row.factor`)."""
SHIFT_INTO_BOUNDS = "into the bounds"
"""The shift passes the op forward with its bounds moved by it (a clamp); back, it stays."""

_Pairs = list[tuple[ir.Value, "ir.Value | None"]]


@dataclass(frozen=True)
class Row:
    """One op kind a per-channel map passes (`TABLE`): the columns both directions read.

    `ops` are the op classes an op of the kind may be (`parts`: classes of ops inside it
    that read its data too, an inline leaky relu's compare and multiply). How an op is
    the kind: `up(op, feature)` its data operands, walking up from a linear op's input (an
    empty list: the walk cannot go on; None: the op ends the walk where it is, a divide
    that is a chain's step); `read(op, value, feature)` (the op, the maximum's other
    operand) when it reads `value` as its data, else None; `down(op)` its (data operand,
    the maximum's other operand) pairs walking down to a linear op, None where the output
    side does not pass the kind (`last`: only as the last op before the chain).

    How the feature maps: `below(op, feature)` the data operand's dimension of the
    result's `feature`, `above(op, feature)` the other way (None for either: the same
    dimension; a function's None: the op splits or merges it). Which scales pass:
    `positive`, only s > 0 (the op takes a maximum, or the sign of v), else any sign
    (`negative`: why a negative one does not pass forward, where it does not). The shift:
    `shift` (`SHIFT_NONE`, `SHIFT_AS_IS`, `SHIFT_TIMES_N`, `SHIFT_INTO_BOUNDS`) and
    `factor(op)`, what it is multiplied by passing the op, None where it does not pass.

    Its refusals (`refusals`, both directions, and `forward_refusals`, in the order
    checked): `refused(op, zero, feature, channels)`, why an op of the kind reading its
    data along `feature` cannot be passed; `bounds(op, feature, channels)`, a clamp's
    bounds per channel in float64 or why not (moved by `bounds_back` and
    `bounds_forward`); `picks(op, value, feature, channels)`, the channel of `value` each
    channel of the result holds (-1: another operand's; None: all of them, in order) or,
    forward, why not; a feature `above` or `below` does not map
    (`RESHAPE_SPLITS_FEATURE`); `users`, the output side's reason where its result has
    other users. `name` is the op as the
    report names it. `joins`: it joins several operands, each a path of its own;
    `moves`: it only moves elements, so values computed in the graph pass it, channel for
    channel; `smaller`: its result may be smaller than its data whatever its size (the
    output side puts a shift after it only into a bias add the linear op has)."""

    kind: str
    ops: tuple[type, ...]
    name: str
    identity: str
    positive: bool
    shift: str
    up: Callable[[ir.OpView, int | None], Sequence[ir.Value] | None]
    read: Callable[[ir.OpView, ir.Value, int], tuple[ir.OpView, ir.Value | None] | None]
    down: Callable[[ir.OpView], _Pairs] | None
    factor: Callable[[ir.OpView], float | None]
    refusals: tuple[Reason, ...] = ()
    forward_refusals: tuple[Reason, ...] = ()
    refused: Callable[[ir.OpView, ir.Value | None, int, int], Reason | None] | None = None
    bounds: Callable[[ir.OpView, int, int], tuple[np.ndarray, np.ndarray] | Reason] | None = None
    picks: Callable[[ir.OpView, ir.Value, int, int], np.ndarray | Reason | None] | None = None
    below: Callable[[ir.OpView, int], int | None] | None = None
    above: Callable[[ir.OpView, int], int | None] | None = None
    users: Reason | None = None
    negative: Reason | None = None
    parts: tuple[type, ...] = ()
    joins: bool = False
    moves: bool = False
    smaller: bool = False
    last: bool = False


@dataclass(frozen=True)
class Passed:
    """One op a per-channel map passes, either direction: `op` of the kind `row`, read
    through its operand `data` (`zero`: a relu's other operand, else None). `feature` is
    the feature dimension of its result (None walking down, until the chain above is
    known). Forward (`passed_by`) also: `shift_factor`, what a shift is multiplied by
    passing it (`Row.factor`; None: it does not pass); `bounds`, a clamp's lower and upper
    bounds per channel in float64; `picks`, for each channel of its result the channel of
    `data` it holds, or -1 where another operand of a concatenate supplies it (that
    operand's map is the identity: scale 1, shift 0), None where the channels are
    `data`'s own; `shift_before`, what a shift is multiplied by on the way to the op, and
    `chain_channels`, the chain's channel each channel of its result holds (-1: none;
    None: the chain's own), both set by the walk that reaches it."""

    op: ir.OpView
    data: ir.Value
    zero: ir.Value | None
    feature: int | None
    row: Row
    shift_factor: float | None = None
    bounds: tuple[np.ndarray, np.ndarray] | None = None
    picks: np.ndarray | None = None
    shift_before: float = 1.0
    chain_channels: np.ndarray | None = None

    @property
    def is_relu(self) -> bool:
        return self.zero is not None

    @property
    def takes_max(self) -> bool:
        """Whether the op takes a maximum over elements of a channel (a max-pool, a
        `reduce` maximum)."""
        return self.row is MAX_POOL or self.row is REDUCE_MAX

    @property
    def leaky(self) -> bool:
        """Whether the op is a leaky relu (inline, or a call of one)."""
        return self.row is LEAKY_RELU or self.row is LEAKY_RELU_CALL

    @property
    def name(self) -> str:
        """The op as the report names it (`Row.name`): a relu, a maximum or a call of
        one, is `stablehlo.maximum`; a leaky relu, a select or a call of one,
        `stablehlo.select`; a call of a relu6 `stablehlo.clamp`."""
        return self.row.name


def passed_by(op: ir.OpView, value: ir.Value, feature: int, channels: int) -> Passed | Reason | None:
    """`op`, which reads `value`, as an op of a row of `TABLE` that a per-channel map along
    `feature` (of `channels` channels) passes forward: the first row of its class that
    `read`s it, checked by that row (`_passed`). The reason when `op` is of a row but
    cannot be passed; None when it is of none.

    >>> passed_by(maximum_op, chain_result, feature=3, channels=8)   # doctest: +SKIP
    Passed(op=<maximum>, data=chain_result, zero=<the zero>, feature=3, row=RELU)
    """
    for row in _READERS.get(type(op), ()):
        read = row.read(op, value, feature)
        if read is not None:
            return _passed(row, read[0], value, read[1], feature, channels)
    return None


def _passed(
    row: Row, op: ir.OpView, value: ir.Value, zero: ir.Value | None, feature: int, channels: int
) -> Passed | Reason:
    """`op`, of `row`, reading `value` along `feature`, as a passed op, or why not, in the
    order of `Row.refusals`: `refused`, `bounds`, `picks`, then a feature the op splits
    or merges."""
    refused = None if row.refused is None else row.refused(op, zero, feature, channels)
    if refused is not None:
        return refused
    bounds = None if row.bounds is None else row.bounds(op, feature, channels)
    if isinstance(bounds, Reason):
        return bounds
    picks = None if row.picks is None else row.picks(op, value, feature, channels)
    if isinstance(picks, Reason):
        return picks
    above = feature if row.above is None else row.above(op, feature)
    if above is None:
        return reasons.RESHAPE_SPLITS_FEATURE
    return Passed(op, value, zero, above, row, row.factor(op), bounds, picks)


def data_down(op: ir.OpView) -> tuple[Row, _Pairs] | None:
    """The first row of `op`'s class that the output side passes and its (data operand,
    the maximum's other operand) pairs (`Row.down`), when there are any; else None. A
    call of a function that is no relu, relu6 or leaky relu of an argument has none: one
    look-up of its callee (`called_reads`) answers for all the call rows."""
    if type(op) is func.CallOp:
        reads = called_reads(op)
        if reads is None or not reads.activation:
            return None
    for row in _DOWN_ROWS.get(type(op), ()):
        pairs = row.down(op)
        if pairs:
            return row, pairs
    return None


def feature_below(op: ir.OpView, feature: int) -> int | None:
    """The dimension of `op`'s data operand that its result's dimension `feature` comes
    from (`Row.below`; the same for an op of no row): below a `reduce`, the operand's
    dimensions that it does not reduce, in order, a transpose's, and a reshape's (static
    or dynamic) that keeps it whole (None where it does not)."""
    rows = ROWS.get(type(op))
    below = None if rows is None else rows[0].below
    return feature if below is None else below(op, feature)


def bounds_back(bounds: tuple[np.ndarray, np.ndarray], scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A clamp's bounds with a scale s > 0 moved back into the op before it (unrounded):
    clamp(lo, v, hi) * s = clamp(lo * s, v * s, hi * s)."""
    return bounds[0] * scale, bounds[1] * scale


def bounds_forward(
    bounds: tuple[np.ndarray, np.ndarray], scale: np.ndarray, shift: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]:
    """A clamp's bounds with the map v * s + c it read moved forward past it (unrounded):
    clamp(lo, v * s + c, hi) = clamp((lo - c) / s, v, (hi - c) / s) * s + c for s > 0, and
    with the bounds swapped for s < 0 (v * s >= lo iff v <= lo / s). The swap holds only
    for lo <= hi: StableHLO's clamp is min(max(v, lo), hi), hi everywhere where lo > hi, so
    such a lower bound is first lowered to hi, which computes the same."""
    lo, hi = bounds
    with np.errstate(all="ignore"):
        lower, upper = ((bound - shift) / scale for bound in (np.minimum(lo, hi), hi))
    return np.where(scale < 0, upper, lower), np.where(scale < 0, lower, upper)


# How each row reads an op: small functions, one per way an op may be written.


def _operand(op: ir.OpView, feature: int | None = None) -> list[ir.Value]:
    return [op.operand]


def _operand_pair(op: ir.OpView) -> _Pairs:
    return [(op.operand, None)]


def _reads_operand(op: ir.OpView, value: ir.Value, feature: int) -> tuple[ir.OpView, None] | None:
    return (op, None) if op.operand == value else None


def _one(op: ir.OpView) -> float:
    return 1.0


def _none(op: ir.OpView) -> None:
    return None


def _zero_other(pairs: _Pairs, op: ir.OpView, value: ir.Value) -> tuple[ir.OpView, ir.Value] | None:
    """(op, the maximum's other operand) for the first pair whose data is `value` and whose
    other operand is not."""
    for data, zero in pairs:
        if data == value and zero != value:
            return op, zero
    return None


def _maximum_pairs(op: stablehlo.MaxOp) -> _Pairs:
    return [(op.lhs, op.rhs), (op.rhs, op.lhs)]


def _relu_refused(op: ir.OpView, zero: ir.Value, feature: int, channels: int) -> Reason | None:
    return relu_refused(zero, feature, channels)


def _called_maximum_pairs(op: func.CallOp) -> _Pairs:
    called = called_maximum(op)
    return [] if called is None else [called]


def _activation(op: ir.OpView, feature: int | None) -> list[ir.Value]:
    """[the data] of a clamp, a call of a relu, a relu6 or a leaky relu, or a leaky relu
    (`activation_data`: one look-up of a call's callee for all of them), else []."""
    data = activation_data(op)
    return [] if data is None else [data]


def _relu6_read(op: func.CallOp, value: ir.Value, feature: int) -> tuple[ir.OpView, None] | None:
    relu6 = called_relu6(op)
    return (op, None) if relu6 is not None and relu6[0] == value else None


def _relu6_pairs(op: func.CallOp) -> _Pairs:
    relu6 = called_relu6(op)
    return [] if relu6 is None else [(relu6[0], None)]


def _relu6_bounds(op: func.CallOp, feature: int, channels: int) -> tuple[np.ndarray, np.ndarray]:
    _, lower, upper = called_relu6(op)
    return np.full(channels, lower), np.full(channels, upper)


def _clamp_read(op: stablehlo.ClampOp, value: ir.Value, feature: int) -> tuple[ir.OpView, None] | None:
    return (op, None) if op.operand == value and value not in (op.min, op.max) else None


def _clamp_bounds(op: stablehlo.ClampOp, feature: int, channels: int) -> tuple[np.ndarray, np.ndarray] | Reason:
    """A clamp's bounds per channel along `feature` (`clamp_bound_f64`), or why not: a bound
    is not a constant, scalar or per channel."""
    lower = clamp_bound_f64(op.min, feature, channels)
    upper = clamp_bound_f64(op.max, feature, channels)
    if lower is None or upper is None:
        return reasons.CLAMP_BOUNDS_NOT_CONSTANT
    return lower, upper


def _leaky_read(op: ir.OpView, value: ir.Value, feature: int) -> tuple[ir.OpView, None] | None:
    """The leaky relu of `value` (`leaky_relu_data`) that `op`, a reader of `value`, is or
    is part of: `op` itself, or for an inline one's compare or multiply the select (or
    `_where` call) that reads its result; else None."""
    root = op
    if type(op) in (stablehlo.CompareOp, stablehlo.MulOp):
        users = list(op.results[0].uses)
        if len(users) != 1:
            return None
        root = users[0].owner
    if type(root) not in (stablehlo.SelectOp, func.CallOp):
        return None
    data = leaky_relu_data(root)
    return (root, None) if data is not None and data == value else None


def _called_leaky_pairs(op: func.CallOp) -> _Pairs:
    data = called_leaky_relu(op)
    return [] if data is None else [(data, None)]


def _max_pool_data(op: stablehlo.ReduceWindowOp, feature: int | None) -> list[ir.Value]:
    return [op.inputs[0]] if is_max_pool(op) else []


def _max_pool_read(op: stablehlo.ReduceWindowOp, value: ir.Value, feature: int) -> tuple[ir.OpView, None] | None:
    return (op, None) if is_max_pool(op) and op.inputs[0] == value else None


def _max_pool_pairs(op: stablehlo.ReduceWindowOp) -> _Pairs:
    return [(op.inputs[0], None)] if is_max_pool(op) else []


def _max_pool_refused(op: stablehlo.ReduceWindowOp, zero: None, feature: int, channels: int) -> Reason | None:
    return max_pool_refused(op, feature)


def _sum_pool_data(op: stablehlo.ReduceWindowOp, feature: int | None) -> list[ir.Value]:
    return [op.inputs[0]] if is_sum_pool(op) else []


def _sum_pool_read(op: stablehlo.ReduceWindowOp, value: ir.Value, feature: int) -> tuple[ir.OpView, None] | None:
    return (op, None) if is_sum_pool(op) and op.inputs[0] == value else None


def _sum_pool_pairs(op: stablehlo.ReduceWindowOp) -> _Pairs:
    return [(op.inputs[0], None)] if is_sum_pool(op) else []


def _sum_pool_refused(op: stablehlo.ReduceWindowOp, zero: None, feature: int, channels: int) -> Reason | None:
    return sum_pool_refused(op, feature)


def _divided(op: stablehlo.DivOp, feature: int | None) -> list[ir.Value] | None:
    """[the sum pool] a count map divides, walking along `feature`; None where the divide
    is a chain's step (a per-feature divisor, or the walk along any feature, where a
    divide after a sum pool ends the walk as a chain's op does)."""
    if not divides_sum_pool_by_map(op) or feature is None or _per_feature_divisor(op, feature):
        return None
    return [op.lhs]


def _per_feature_divisor(divide: stablehlo.DivOp, feature: int) -> bool:
    """Whether `divide`'s divisor is a per-feature value along `feature` (a constant, or a
    narrow value broadcast, that varies along no other dimension): a step of a chain, not
    an average pool's count per position, even right after a sum pool."""
    channels = ir.RankedTensorType(divide.result.type).shape[feature]
    return per_channel(divide.rhs, feature, channels, True) is not None


def _divide_read(op: stablehlo.DivOp, value: ir.Value, feature: int) -> tuple[ir.OpView, None] | None:
    if op.lhs == value and op.rhs != value and divides_sum_pool_by_map(op):
        return op, None
    return None


def _divide_pairs(op: stablehlo.DivOp) -> _Pairs:
    return [(op.lhs, None)] if divides_sum_pool_by_map(op) else []


def _divisor_refused(op: stablehlo.DivOp, zero: None, feature: int, channels: int) -> Reason | None:
    return pool_divisor_refused(op.rhs, feature)


def _one_input(op: stablehlo.ReduceOp, feature: int | None) -> list[ir.Value]:
    return list(op.inputs) if len(op.inputs) == 1 else []


def _reduce_reader(body: type) -> Callable[[stablehlo.ReduceOp, ir.Value, int], tuple[ir.OpView, None] | None]:
    """How a `reduce` of one operand to one result whose body is `body` (an add or a
    maximum: `reduce_body`) reads `value`."""

    def read(op: stablehlo.ReduceOp, value: ir.Value, feature: int) -> tuple[ir.OpView, None] | None:
        if len(op.inputs) != 1 or op.inputs[0] != value or len(op.results) != 1:
            return None
        return (op, None) if reduce_body(op) is body else None

    return read


def _sum_reduce_pairs(op: stablehlo.ReduceOp) -> _Pairs:
    data = sum_reduce(op)
    return [] if data is None else [(data, None)]


def _reduce_refused(op: stablehlo.ReduceOp, zero: None, feature: int, channels: int) -> Reason | None:
    return reduce_refused(op, feature)


def _kept_below(op: stablehlo.ReduceOp, feature: int) -> int:
    """The operand's dimension a `reduce`'s result dimension `feature` keeps: its result
    holds the dimensions it does not reduce, in order."""
    reduced = set(dimensions(op.dimensions))
    kept = [d for d in range(ir.RankedTensorType(op.inputs[0].type).rank) if d not in reduced]
    return kept[feature]


def _kept_above(op: stablehlo.ReduceOp, feature: int) -> int:
    """The result's dimension of a `reduce`'s operand dimension `feature` (not reduced)."""
    return feature - sum(d < feature for d in dimensions(op.dimensions))


def _pad_refused(op: stablehlo.PadOp, zero: None, feature: int, channels: int) -> Reason | None:
    return pad_refused(op, feature)


def _transpose_below(op: stablehlo.TransposeOp, feature: int) -> int:
    return dimensions(op.permutation)[feature]


def _transpose_above(op: stablehlo.TransposeOp, feature: int) -> int:
    return dimensions(op.permutation).index(feature)


def _reshape_below(op: stablehlo.ReshapeOp | stablehlo.DynamicReshapeOp, feature: int) -> int | None:
    return _whole(op.result, op.operand, feature)


def _reshape_above(op: stablehlo.ReshapeOp | stablehlo.DynamicReshapeOp, feature: int) -> int | None:
    return _whole(op.operand, op.result, feature)


def _whole(source: ir.Value, target: ir.Value, feature: int) -> int | None:
    """The dimension of `target` (a reshape of `source`, or the other way round) that
    holds `source`'s dimension `feature` whole: as many elements before it, and as many
    in it, both static; None if there is none. With a dynamic dimension (a symbolic
    batch, a dynamic reshape): as many elements after it, static, and as many in it
    (static, or dynamic with as many elements before it, static): both hold the same
    number of elements, so the same number before it too, and element i lies in the same
    channel, (i // after) % size, on both sides."""
    source_type, target_type = ir.RankedTensorType(source.type), ir.RankedTensorType(target.type)
    if not (source_type.has_static_shape and target_type.has_static_shape):
        return _whole_dynamic(source_type.shape, target_type.shape, feature)
    before = int(np.prod(source_type.shape[:feature]))
    size = source_type.shape[feature]
    for d in range(target_type.rank):
        if target_type.shape[d] == size and int(np.prod(target_type.shape[:d])) == before:
            return d
    return None


def _whole_dynamic(source: list[int], target: list[int], feature: int) -> int | None:
    """`_whole` where a shape has a dynamic dimension (negative in `source` and `target`)."""
    size, after = source[feature], _static_elements(source[feature + 1:])
    before = _static_elements(source[:feature])
    if after is None or (size < 0 and before is None):
        return None
    for d in range(len(target)):
        if target[d] != size or _static_elements(target[d + 1:]) != after:
            continue
        if size >= 0 or _static_elements(target[:d]) == before:
            return d
    return None


def _static_elements(shape: list[int]) -> int | None:
    """How many elements a block of dimensions holds; None when one is dynamic."""
    return None if any(n < 0 for n in shape) else int(np.prod(shape, dtype=np.int64))


def _broadcast_data(op: stablehlo.DynamicBroadcastInDimOp, feature: int | None) -> list[ir.Value]:
    return [op.operand] if identity_broadcast(op) else []


def _broadcast_read(
    op: stablehlo.DynamicBroadcastInDimOp, value: ir.Value, feature: int
) -> tuple[ir.OpView, None] | None:
    return (op, None) if op.operand == value and identity_broadcast(op) else None


def _slice_picks(op: stablehlo.SliceOp, value: ir.Value, feature: int, channels: int) -> np.ndarray | None:
    return sliced_channels(op, feature, channels)


def _operands(op: ir.OpView, feature: int | None = None) -> list[ir.Value]:
    return list(op.operands)


def _concatenate_read(
    op: stablehlo.ConcatenateOp, value: ir.Value, feature: int
) -> tuple[ir.OpView, None] | None:
    """A concatenate with `value` among its operands, each of a static size along
    `feature`."""
    if not any(v == value for v in op.operands):
        return None
    if any(ir.RankedTensorType(v.type).shape[feature] < 0 for v in op.operands):
        return None
    return op, None


def _concatenate_pairs(op: stablehlo.ConcatenateOp) -> _Pairs:
    return [(operand, None) for operand in op.operands]


def _concatenate_picks(
    op: stablehlo.ConcatenateOp, value: ir.Value, feature: int, channels: int
) -> np.ndarray | Reason:
    """concat(v * s + t, w) = concat(v, w) * s' + t', s' and t' the chain's values on
    `value`'s range of channels, 1 and 0 on the others (each operand that is `value` takes
    them): the channel of `value` each channel of the result holds, -1 on the others'; or
    why not: it joins another dimension, where the other operands would meet the scale
    too."""
    if ir.IntegerAttr(op.dimension).value != feature:
        return reasons.CONCAT_SPANS_OTHER_DIMENSION
    sizes = [ir.RankedTensorType(v.type).shape[feature] for v in op.operands]
    picks = [np.arange(n) if v == value else np.full(n, -1) for v, n in zip(op.operands, sizes)]
    return np.concatenate(picks)


RELU = Row(
    "relu", (stablehlo.MaxOp,), "stablehlo.maximum", "relu(v * s) = relu(v) * s",
    positive=True, shift=SHIFT_NONE,
    up=lambda op, feature: op.operands, read=lambda op, value, feature: _zero_other(_maximum_pairs(op), op, value),
    down=_maximum_pairs, factor=_none, refusals=(reasons.MAXIMUM_NOT_RELU,), refused=_relu_refused,
    users=reasons.RELU_USERS,
)
"""`maximum(v, z)`, z a zero constant; for s < 0 forward, relu(v * s) = clamp(-inf, v, 0) * s
(`patterns.input_side` rebuilds it as a clamp)."""

RELU_CALL = Row(
    "relu call", (func.CallOp,), "stablehlo.maximum", "relu(v * s) = relu(v) * s",
    positive=True, shift=SHIFT_NONE,
    up=_activation, read=lambda op, value, feature: _zero_other(_called_maximum_pairs(op), op, value),
    down=_called_maximum_pairs, factor=_none, refusals=(reasons.MAXIMUM_NOT_RELU,), refused=_relu_refused,
    users=reasons.RELU_USERS,
)
"""A call of a function returning `maximum(v, z)` of an argument (`called_maximum`:
`jax.nn.relu`, `call @relu(%v)`)."""

CLAMP = Row(
    "clamp", (stablehlo.ClampOp,), "stablehlo.clamp", "clamp(lo, v * s, hi) = clamp(lo / s, v, hi / s) * s",
    positive=True, shift=SHIFT_INTO_BOUNDS,
    up=_operand, read=_clamp_read, down=_operand_pair, factor=_one,
    refusals=(reasons.CLAMP_BOUNDS_NOT_CONSTANT,), bounds=_clamp_bounds, users=reasons.CLAMP_USERS,
)
"""A clamp with constant bounds, scalars or per channel (ReLU6: `jax.lax.clamp`,
torch-mlir's hardtanh); forward, with s < 0 its bounds swap."""

RELU6_CALL = Row(
    "relu6 call", (func.CallOp,), "stablehlo.clamp", "clamp(lo, v * s, hi) = clamp(lo / s, v, hi / s) * s",
    positive=True, shift=SHIFT_INTO_BOUNDS,
    up=_activation, read=_relu6_read, down=_relu6_pairs, factor=_one,
    bounds=_relu6_bounds, users=reasons.CLAMP_USERS,
)
"""A call of a function returning `minimum(maximum(v, lo), hi)` of an argument
(`called_relu6`: `jax.nn.relu6`), replaced by an inline clamp with the moved bounds."""

LEAKY_RELU = Row(
    "leaky relu", (stablehlo.SelectOp,), "stablehlo.select", "leaky(v * s) = leaky(v) * s",
    positive=True, shift=SHIFT_NONE,
    up=_activation, read=_leaky_read, down=None, factor=_none,
    users=reasons.LEAKY_RELU_USERS, negative=reasons.SCALE_NEGATIVE_LEAKY,
    parts=(stablehlo.CompareOp, stablehlo.MulOp),
)
"""select(v >= 0 (or v > 0), v, a * v) inline (`leaky_relu_data`: torch-mlir's and
TensorFlow's), or a call of jax's `_where` computing it; its compare and multiply read v
too. Forward only: back, the select reads the linear op three times."""

LEAKY_RELU_CALL = Row(
    "leaky relu call", (func.CallOp,), "stablehlo.select", "leaky(v * s) = leaky(v) * s",
    positive=True, shift=SHIFT_NONE,
    up=_activation, read=_leaky_read, down=_called_leaky_pairs, factor=_none,
    users=reasons.LEAKY_RELU_USERS, negative=reasons.SCALE_NEGATIVE_LEAKY,
)
"""A call of a function returning a leaky relu of an argument (`called_leaky_relu`:
`jax.nn.leaky_relu`, `call @leaky_relu(%v, %alpha)`)."""

MAX_POOL = Row(
    "max-pool", (stablehlo.ReduceWindowOp,), "stablehlo.reduce_window",
    "maxpool(v * s + t) = maxpool(v) * s + t",
    positive=True, shift=SHIFT_AS_IS,
    up=_max_pool_data, read=_max_pool_read, down=_max_pool_pairs, factor=_one,
    refusals=(reasons.POOL_INIT_NOT_LOWEST, reasons.POOL_LOWEST_SCALED, reasons.POOL_SPANS_FEATURE),
    refused=_max_pool_refused, users=reasons.POOL_USERS, negative=reasons.SCALE_NEGATIVE_POOL,
    smaller=True,
)
"""A `reduce_window` maximum (`is_max_pool`), its window one channel wide."""

SUM_POOL = Row(
    "sum pool", (stablehlo.ReduceWindowOp,), "stablehlo.reduce_window",
    "pool(v * s + t) = pool(v) * s + n * t",
    positive=False, shift=SHIFT_TIMES_N,
    up=_sum_pool_data, read=_sum_pool_read, down=_sum_pool_pairs, factor=sum_pool_taps,
    refusals=(reasons.SUM_POOL_INIT_NOT_ZERO, reasons.SUM_POOL_SPANS_FEATURE),
    refused=_sum_pool_refused, users=reasons.SUM_POOL_USERS,
)
"""A `reduce_window` add (`is_sum_pool`: an average pool before its divide), its window one
channel wide; the shift passes where no padding or base dilation puts the init value in a
window (`sum_pool_taps`)."""

COUNT_MAP_DIVIDE = Row(
    "count map divide", (stablehlo.DivOp,), "stablehlo.divide", "(v * s) / m = (v / m) * s",
    positive=False, shift=SHIFT_NONE,
    up=_divided, read=_divide_read, down=_divide_pairs, factor=_none,
    refusals=(reasons.DIVISOR_FROM_DATA, reasons.DIVISOR_ALONG_FEATURE),
    refused=_divisor_refused, users=reasons.DIVIDE_USERS, last=True,
)
"""A sum pool divided by a count per position m (`divides_sum_pool_by_map`: an average pool
that excludes its padding), the same for every channel; t / m is not per-channel."""

REDUCE_SUM = Row(
    "reduce sum", (stablehlo.ReduceOp,), "stablehlo.reduce", "sum(v * s + t) = sum(v) * s + n * t",
    positive=False, shift=SHIFT_TIMES_N,
    up=_one_input, read=_reduce_reader(stablehlo.AddOp), down=_sum_reduce_pairs, factor=reduced_elements,
    refusals=(reasons.REDUCE_SPANS_FEATURE, reasons.REDUCE_INIT_NOT_IDENTITY),
    refused=_reduce_refused, below=_kept_below, above=_kept_above, users=reasons.REDUCE_USERS,
)
"""A `reduce` add over dimensions other than the feature, from 0 (a mean or a global
average pool before its divide); n static."""

REDUCE_MAX = Row(
    "reduce maximum", (stablehlo.ReduceOp,), "stablehlo.reduce", "max(v * s + t) = max(v) * s + t",
    positive=True, shift=SHIFT_AS_IS,
    up=_one_input, read=_reduce_reader(stablehlo.MaxOp), down=None, factor=_one,
    refusals=(reasons.REDUCE_SPANS_FEATURE, reasons.REDUCE_INIT_NOT_IDENTITY, reasons.POOL_LOWEST_SCALED),
    refused=_reduce_refused, below=_kept_below, above=_kept_above,
    negative=reasons.SCALE_NEGATIVE_POOL, smaller=True,
)
"""A `reduce` maximum over dimensions other than the feature (a global max pool), from -inf
or the lowest value: a max-pool. Forward only."""

PAD = Row(
    "pad", (stablehlo.PadOp,), "stablehlo.pad", "pad(v * s, 0) = pad(v, 0) * s",
    positive=False, shift=SHIFT_NONE,
    up=_operand, read=_reads_operand, down=None, factor=_none,
    refusals=(reasons.PAD_NOT_ZERO, reasons.PAD_SPANS_FEATURE), refused=_pad_refused,
)
"""A pad with zero padding, none along the feature. Forward only."""

RESHAPE = Row(
    "reshape", (stablehlo.ReshapeOp,), "stablehlo.reshape", "reshape(v * s + t) = reshape(v) * s + t",
    positive=False, shift=SHIFT_AS_IS,
    up=_operand, read=_reads_operand, down=_operand_pair, factor=_one,
    refusals=(reasons.RESHAPE_SPLITS_FEATURE,), below=_reshape_below, above=_reshape_above,
    users=reasons.MOVED_USERS, moves=True,
)
"""A reshape that keeps the feature whole (`_whole`), s and t read along the mapped
dimension."""

DYNAMIC_RESHAPE = Row(
    "dynamic reshape", (stablehlo.DynamicReshapeOp,), "stablehlo.dynamic_reshape",
    "reshape(v * s + t) = reshape(v) * s + t",
    positive=False, shift=SHIFT_AS_IS,
    up=_operand, read=_reads_operand, down=_operand_pair, factor=_one,
    refusals=(reasons.RESHAPE_SPLITS_FEATURE,), below=_reshape_below, above=_reshape_above,
    users=reasons.MOVED_USERS, moves=True,
)
"""A reshape to a shape operand (a symbolic batch) that keeps the feature whole."""

TRANSPOSE = Row(
    "transpose", (stablehlo.TransposeOp,), "stablehlo.transpose",
    "transpose(v * s + t) = transpose(v) * s + t",
    positive=False, shift=SHIFT_AS_IS,
    up=_operand, read=_reads_operand, down=_operand_pair, factor=_one,
    below=_transpose_below, above=_transpose_above, users=reasons.MOVED_USERS, moves=True,
)
"""A transpose: the feature moves to its place in the permutation."""

BROADCAST_ONTO_OWN_SHAPE = Row(
    "broadcast onto its own shape", (stablehlo.DynamicBroadcastInDimOp,), "stablehlo.dynamic_broadcast_in_dim",
    "broadcast(v * s + t) = broadcast(v) * s + t",
    positive=False, shift=SHIFT_AS_IS,
    up=_broadcast_data, read=_broadcast_read, down=None, factor=_one, moves=True,
)
"""torch-mlir's dynamic broadcast of a value onto its own shape (`identity_broadcast`): the
identity. Forward only."""

SLICE = Row(
    "slice", (stablehlo.SliceOp,), "stablehlo.slice", "slice(v * s + t) = slice(v) * s' + t'",
    positive=False, shift=SHIFT_AS_IS,
    up=_operand, read=_reads_operand, down=_operand_pair, factor=_one,
    picks=_slice_picks, users=reasons.SLICE_USERS, smaller=True,
)
"""A slice: s' and t' the channels it keeps along the feature (`sliced_channels`; all of
them when it slices other dimensions)."""

CONCATENATE = Row(
    "concatenate", (stablehlo.ConcatenateOp,), "stablehlo.concatenate",
    "concat(v * s + t, w) = concat(v, w) * s' + t'",
    positive=False, shift=SHIFT_AS_IS,
    up=_operands, read=_concatenate_read, down=_concatenate_pairs, factor=_one,
    forward_refusals=(reasons.CONCAT_SPANS_OTHER_DIMENSION,), picks=_concatenate_picks,
    users=reasons.CONCAT_USERS, joins=True,
)
"""A concatenate along the feature: s' and t' the chain's on its operand's range, 1 and 0 on
the others'. Back, each operand's linear op takes its range (along another dimension, all
of s and t); forward, one along another dimension is refused."""

TABLE: tuple[Row, ...] = (
    RELU, RELU_CALL, CLAMP, RELU6_CALL, LEAKY_RELU, LEAKY_RELU_CALL, MAX_POOL, SUM_POOL,
    COUNT_MAP_DIVIDE, REDUCE_SUM, REDUCE_MAX, PAD, RESHAPE, DYNAMIC_RESHAPE, TRANSPOSE,
    BROADCAST_ONTO_OWN_SHAPE, SLICE, CONCATENATE,
)
"""Every op kind a per-channel map passes, one row each."""


def _by_class(rows: tuple[Row, ...], parts: bool) -> dict[type, tuple[Row, ...]]:
    """The rows of each op class, in the order of `TABLE` (with `parts`, also by the
    classes of their parts)."""
    found: dict[type, tuple[Row, ...]] = {}
    for row in rows:
        for op_class in (*row.ops, *(row.parts if parts else ())):
            found[op_class] = (*found.get(op_class, ()), row)
    return found


ROWS = _by_class(TABLE, parts=False)
"""The rows an op of each class may be, in the order tried."""

PASSAGE_OPS = tuple(ROWS)
"""The op classes of the rows (`type(op) in`, or as a tuple for `isinstance`)."""

_READERS = _by_class(TABLE, parts=True)
"""The rows an op of each class may be, or be part of, reading a value (`passed_by`)."""

READING_OPS = frozenset(_READERS)
"""The op classes `passed_by` may pass as a reader of a value (`type(op) in`): an op of
any other class that reads a per-channel map's result is never passed."""

def _ups(rows: tuple[Row, ...]) -> tuple[tuple[Row, Callable], ...]:
    """(row, `Row.up`) for the first of `rows` with each `up`: the call rows share one,
    `activation_data`'s, which looks a call's callee up once for all of them (the first
    call row stands for them all; none maps the feature or joins operands)."""
    firsts: dict[Callable, Row] = {}
    for row in rows:
        firsts.setdefault(row.up, row)
    return tuple((row, up) for up, row in firsts.items())


UP = {op_class: _ups(rows) for op_class, rows in ROWS.items()}
"""For each class, its rows' ways up (`_ups`), in the order tried."""

_DOWN_ROWS = _by_class(tuple(row for row in TABLE if row.down is not None), parts=False)
"""The rows the output side passes, by class (`data_down`)."""

DOWN = frozenset(op_class for op_class, rows in _DOWN_ROWS.items() if not all(row.last for row in rows))
"""The classes the output side walks down through (not only as the last op)."""

DOWN_CLASSES = tuple(_DOWN_ROWS)
"""The classes of every op the output side passes, in the order of `TABLE`: the roots of
its pattern (a chain after one of them is moved back across it)."""
