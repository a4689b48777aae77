"""A report line for every per-channel chain the patterns left without one.

The patterns report what they try: a batch norm, an affine op after a linear op, an
affine chain before one. A chain with no linear op on either side (a pre-activation batch
norm, `bn -> relu -> conv` in DenseNet and ResNetV2, or one before a pooling) is no
pattern's candidate, and would leave the report silent ("skipped 0"). After the greedy
driver, `report_chains_left` walks the function once and gives each such chain one line,
at its outermost op, naming what it reads and what reads it; a chain on a statistic of
the data broadcast over the activation (gamma inside a LayerNorm's per-token factor, as
TensorFlow lowers Keras's LayerNormalization: rsqrt(var + eps) * gamma) says that instead.

A *per-channel chain* is a run of add, subtract, multiply and divide, each by a
per-channel value (a constant, or a parameter broadcast from a narrow one; never a value
computed from the data, and never a uniform scalar such as GELU's 0.5) along a dimension
of size more than one, each op read only by the next. A bias add after a linear op (`L +
b`) is the canonical form, not a chain left; a chain a linear op reads was the input
side's to report (it leaves weights scaled in the graph, `W * s`, and attention's `q *
scale` unreported). Without `fold-weight-arguments` no pattern takes a chain that
applies parameters passed as arguments: each gets its line (`ARGUMENTS_NOT_FOLDED`),
whatever is next to it.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.per_channel import per_channel_f64, per_channel_source
from ..analysis.users import single_user
from ..analysis.walk import ops_named
from ..constants import dimensions, float_dtype
from ..fold.affine_map import AFFINE_OPS, LINEAR_NAMES, biased_linear, computed_from_data
from ..fold.reasons import ARGUMENTS_NOT_FOLDED, NO_LINEAR_OP, PER_TOKEN_FACTOR
from ..report import Recorder

__all__ = ["CHAIN_NAMES", "REPORTER", "report_chains_left"]

REPORTER = "stablehlo-fold-batch-norm"
"""The name report lines of chains left carry in place of a pattern's."""

def report_chains_left(
    function: ir.Operation, recorder: Recorder, fold_weight_arguments: bool,
    affine: list[ir.Operation] | None = None,
) -> None:
    """Record `NO_LINEAR_OP` (`PER_TOKEN_FACTOR` for a chain on a broadcast statistic of
    the data; `ARGUMENTS_NOT_FOLDED` for a chain that applies parameters passed as
    arguments when `fold_weight_arguments` is off) for the outermost op of each
    per-channel chain in `function` that no pattern folded or reported. `affine`: the ops
    named `CHAIN_NAMES` in `function` in walk order, where the caller has them
    (`analysis.walk.ops_named`)."""
    if affine is None:
        (affine,) = ops_named(function, CHAIN_NAMES)
    # Whether an op is in a chain (`_down` is not None) is asked only of the ops the loop
    # below reaches, once each: most affine ops are skipped, or were built, before it
    # matters. `members` stands for the set of the chains' ops. Ops are read as
    # operations, not views: a view is made only for a line recorded.
    members = _Members(fold_weight_arguments)
    for op in affine:
        if recorder.built_or_skipped(op):
            continue
        # L + b is the canonical form. Asked before whether the op is in a chain: that
        # reads its bias per channel, costly where it is still computed from constants
        # (Keras's `beta - mean * inv` after the scale folded).
        if op.name == "stablehlo.add" and biased_linear(op.results[0]) is not None:
            continue
        if not members.holds(op):
            continue
        users = [use.owner.operation for use in op.results[0].uses]  # (a view's, or the op)
        if len(users) == 1 and members.holds(users[0]):
            continue  # not the outermost op: the line goes on the top of the chain
        if len(users) == 1 and recorder.has_skip(users[0]):
            continue  # a precision island's convert above it says why
        found = _bottom(op, members, recorder)
        if found is None:
            continue  # a pattern already said why this chain stays
        down, arguments = found
        if arguments:  # no pattern's candidate, wherever it is (the option is off)
            recorder.keep(op.opview, REPORTER, ARGUMENTS_NOT_FOLDED)
            continue
        if any(u.name in LINEAR_NAMES for u in users):
            continue  # the input side looked at it (weights scaled in the graph, ...)
        if _broadcast_statistic(down):
            # Keras's LayerNormalization as TensorFlow lowers it: gamma * rsqrt(var + eps),
            # the per-token factor, read by x * inv and mean * inv. A linear op may follow
            # the norm, but the chain is on the factor, not on an activation it reads.
            recorder.keep(op.opview, REPORTER, PER_TOKEN_FACTOR)
            continue
        reads = _name(down.owner)
        read_by = ", ".join(sorted({u.name for u in users})) or "nothing"
        recorder.keep(op.opview, REPORTER, NO_LINEAR_OP.detailed(f"reads {reads}, read by {read_by}"))


CHAIN_NAMES = frozenset(op.OPERATION_NAME for op in AFFINE_OPS)
"""The ops a per-channel chain is made of (`report_chains_left`)."""


def _broadcast_statistic(value: ir.Value) -> bool:
    """Whether `value` is broadcast from fewer elements computed from the data (a norm's
    per-token statistic, [B, T, 1] broadcast to [B, T, C]): a chain on it scales that
    factor, not an activation."""
    broadcast = value.owner
    if not isinstance(broadcast, (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp)):
        return False
    source = ir.ShapedType(broadcast.operand.type)
    target = ir.ShapedType(value.type)
    if not (source.has_static_shape and target.has_static_shape):
        return False
    fewer = int(np.prod(source.shape)) < int(np.prod(target.shape))
    return fewer and computed_from_data(broadcast.operand)


class _Members:
    """The ops of per-channel chains (the affine ops whose `_down` is not None), each op's
    `_down` computed when first asked."""

    def __init__(self, fold_weight_arguments: bool):
        self._downs: dict[int, tuple[ir.Value, bool] | None] = {}
        self._fold_weight_arguments = fold_weight_arguments

    def holds(self, op: ir.Operation) -> bool:
        """Whether `op` is an op of a chain."""
        return op.name in CHAIN_NAMES and self._read(op) is not None

    def down(self, op: ir.Operation) -> ir.Value | None:
        """`_down(op)`'s activation operand of an affine op (None: no chain's op)."""
        found = self._read(op)
        return None if found is None else found[0]

    def of_arguments(self, op: ir.Operation) -> bool:
        """Whether the chain's op `op` applies a parameter passed as an argument, which no
        pattern folds with `fold-weight-arguments` off."""
        found = self._read(op)
        return found is not None and found[1] and not self._fold_weight_arguments

    def _read(self, op: ir.Operation) -> tuple[ir.Value, bool] | None:
        """`_down(op)`, computed once per op (`_bottom` asks it again of the ops `holds`
        asked: reading a per-channel value costs more than the rest of the walk)."""
        key = hash(op)  # (the operation's, the same from every handle while it lives)
        if key not in self._downs:
            self._downs[key] = _down(op)
        return self._downs[key]


def _name(owner) -> str:
    return owner.operation.name if isinstance(owner, ir.OpView) else "an argument"


def _bottom(op: ir.Operation, members: _Members, recorder: Recorder) -> tuple[ir.Value, bool] | None:
    """The value the chain topped by `op` reads, and whether an op of the chain applies a
    parameter passed as an argument that no pattern folds (`_Members.of_arguments`); None
    when a pattern built or reported an op of the chain below `op`, or the affine op the
    chain stops at (a step that may carry the reason): it already said why this chain
    stays."""
    value, arguments = members.down(op), members.of_arguments(op)
    while isinstance(value.owner, AFFINE_OPS):
        below = value.owner.operation
        if recorder.built_or_skipped(below):
            return None
        if not members.holds(below) or not single_user(value):
            break
        value, arguments = members.down(below), arguments or members.of_arguments(below)
    return value, arguments


def _down(op: ir.Operation) -> tuple[ir.Value, bool] | None:
    """The activation operand of the affine op `op` when the other is a per-channel value
    along a dimension of size more than one (not a uniform scalar, not data), and whether
    that value is a parameter computed in the graph (from arguments) rather than a
    constant; else None."""
    operands = op.operands
    lhs, rhs = operands[0], operands[1]
    sides = [(lhs, rhs)]
    if op.name in _COMMUTATIVE:
        sides.append((rhs, lhs))
    # Per-channel values reach an activation through a broadcast (or are a constant of
    # its shape); looking only there keeps the walk off residual adds, whose other
    # operand is an activation computed far up the network. Asked first: it reads no
    # type, and decides most ops that are no chain's (a norm's own arithmetic on [C]).
    sides = [(down, other) for down, other in sides if isinstance(other.owner, _BROADCASTS)]
    if not sides:
        return None
    shaped = ir.RankedTensorType(op.results[0].type)
    if float_dtype(shaped.element_type) is None:
        return None
    for down, other in sides:
        if _is_parameter(down):
            continue
        for feature in _features(other, shaped.shape):
            size = shaped.shape[feature]
            vector = per_channel_f64(other, feature, size)
            if vector is not None:
                # NaN != NaN: a non-finite vector counts (its pattern says why it stays).
                if len(np.unique(vector)) > 1 or not np.all(np.isfinite(vector)):
                    return down, False
                continue
            narrow = per_channel_source(other, feature, size)
            if (
                narrow is not None and narrow.value != other and narrow.feature is not None
                and not computed_from_data(narrow.value)
            ):
                return down, True
    return None


_COMMUTATIVE = frozenset({stablehlo.AddOp.OPERATION_NAME, stablehlo.MulOp.OPERATION_NAME})

_BROADCASTS = (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp, stablehlo.ConstantOp)


def _features(other: ir.Value, shape: list[int]) -> list[int]:
    """The dimensions of size more than one, those that `other` is broadcast along from a
    dimension of size more than one (where a per-channel value lies) first. `_down` asks
    whether any of them holds a per-channel value: the order changes only how soon it
    knows (a chain's op asked in feature order read its value along H and W first)."""
    features = [d for d, n in enumerate(shape) if n > 1]
    broadcast = other.owner
    if isinstance(broadcast, (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp)):
        source = ir.ShapedType(broadcast.operand.type)
        sizes = source.shape if source.has_rank else []
        wide = {d for d, n in zip(dimensions(broadcast.broadcast_dimensions), sizes) if n != 1}
        features.sort(key=lambda d: d not in wide)  # (a stable sort: feature order otherwise)
    return features


def _is_parameter(value: ir.Value) -> bool:
    """A value with at most one dimension larger than one, not computed from the data:
    the per-channel values' own arithmetic (`rsqrt(var + eps) * gamma`), not a chain."""
    shaped = ir.ShapedType(value.type)
    return sum(1 for n in shaped.shape if n != 1) <= 1 and not computed_from_data(value)
