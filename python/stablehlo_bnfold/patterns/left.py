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
per-channel value (a constant, or with `fold-weight-arguments` a parameter broadcast from
a narrow one; never a value computed from the data, and never a uniform scalar such as
GELU's 0.5) along a dimension of size more than one, each op read only by the next. A
bias add after a linear op (`L + b`) is the canonical form, not a chain left; a chain a
linear op reads was the input side's to report (it leaves weights scaled in the graph,
`W * s`, and attention's `q * scale` unreported).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.per_channel import per_channel_f64, per_channel_source
from ..analysis.users import single_user
from ..constants import dimensions, float_dtype
from ..fold.affine_map import AFFINE_OPS, LINEAR_NAMES, biased_linear, computed_from_data
from ..fold.reasons import NO_LINEAR_OP, PER_TOKEN_FACTOR
from ..report import Recorder

__all__ = ["REPORTER", "report_chains_left"]

REPORTER = "stablehlo-fold-batch-norm"
"""The name report lines of chains left carry in place of a pattern's."""

def report_chains_left(
    function: ir.Operation, recorder: Recorder, fold_weight_arguments: bool
) -> None:
    """Record `NO_LINEAR_OP` (`PER_TOKEN_FACTOR` for a chain on a broadcast statistic of
    the data) for the outermost op of each per-channel chain in `function` that no
    pattern folded or reported."""
    affine: list[ir.OpView] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in _AFFINE_NAMES:  # (an op's view is made only for these)
            affine.append(op.opview)
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    # Whether an op is in a chain (`_down` is not None) is asked only of the ops the loop
    # below reaches, once each: most affine ops are skipped, or were built, before it
    # matters. `members` stands for the set of the chains' ops, by hash.
    members = _Members(affine, fold_weight_arguments)
    for op in affine:
        if recorder.has_skip(op) or recorder.was_built(op):
            continue
        # L + b is the canonical form. Asked before whether the op is in a chain: that
        # reads its bias per channel, costly where it is still computed from constants
        # (Keras's `beta - mean * inv` after the scale folded).
        if isinstance(op, stablehlo.AddOp) and biased_linear(op.result) is not None:
            continue
        if not members.holds(hash(op.operation)):
            continue
        users = list(op.result.uses)
        if len(users) == 1 and members.holds(hash(_operation(users[0].owner))):
            continue  # not the outermost op: the line goes on the top of the chain
        if len(users) == 1 and recorder.has_skip(_operation(users[0].owner)):
            continue  # a precision island's convert above it says why
        if any(_operation(u.owner).name in LINEAR_NAMES for u in users):
            continue  # the input side looked at it (weights scaled in the graph, ...)
        down, inner = _bottom(op, members)
        if isinstance(down.owner, AFFINE_OPS):
            inner.append(down.owner)  # a step the chain stopped at may carry the reason
        if any(recorder.has_skip(o) or recorder.was_built(o) for o in inner):
            continue  # a pattern already said why this chain stays
        if _broadcast_statistic(down):
            # Keras's LayerNormalization as TensorFlow lowers it: gamma * rsqrt(var + eps),
            # the per-token factor, read by x * inv and mean * inv. A linear op may follow
            # the norm, but the chain is on the factor, not on an activation it reads.
            recorder.keep(op, REPORTER, PER_TOKEN_FACTOR)
            continue
        reads = _name(down.owner)
        read_by = ", ".join(sorted({_operation(u.owner).name for u in users})) or "nothing"
        recorder.keep(op, REPORTER, NO_LINEAR_OP.detailed(f"reads {reads}, read by {read_by}"))


_AFFINE_NAMES = frozenset(op.OPERATION_NAME for op in AFFINE_OPS)


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
    """The ops of per-channel chains among `ops` (those whose `_down` is not None), by
    hash, each op's `_down` computed when first asked."""

    def __init__(self, ops: list[ir.OpView], fold_weight_arguments: bool):
        self._ops: dict[int, list[ir.OpView]] = {}
        for op in ops:
            self._ops.setdefault(hash(op.operation), []).append(op)
        self._known: dict[int, bool] = {}
        self._downs: dict[ir.Operation, ir.Value | None] = {}
        self._fold_weight_arguments = fold_weight_arguments

    def holds(self, key: int) -> bool:
        """Whether an op of a chain has the hash `key`."""
        known = self._known.get(key)
        if known is None:
            known = any(self.down(op) is not None for op in self._ops.get(key, ()))
            self._known[key] = known
        return known

    def down(self, op: ir.OpView) -> ir.Value | None:
        """`_down(op)`, computed once per op (`_bottom` asks it again of the ops `holds`
        asked: reading a per-channel value costs more than the rest of the walk)."""
        key = op.operation  # (compared by the operation it stands for, not by handle)
        if key not in self._downs:
            self._downs[key] = _down(op, self._fold_weight_arguments)
        return self._downs[key]


def _operation(owner) -> ir.Operation:
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _name(owner) -> str:
    return _operation(owner).name if isinstance(owner, ir.OpView) else "an argument"


def _bottom(op: ir.OpView, members: _Members) -> tuple[ir.Value, list[ir.OpView]]:
    """The value the chain topped by `op` reads, and the chain's ops."""
    inner = [op]
    value = members.down(op)
    while isinstance(value.owner, AFFINE_OPS) and members.holds(hash(value.owner.operation)):
        if not single_user(value):
            break
        inner.append(value.owner)
        value = members.down(value.owner)
    return value, inner


def _down(op: ir.OpView, fold_weight_arguments: bool) -> ir.Value | None:
    """The activation operand of `op` when the other is a per-channel value along a
    dimension of size more than one (not a uniform scalar, not data); else None."""
    shaped = ir.RankedTensorType(op.result.type)
    if float_dtype(shaped.element_type) is None:
        return None
    sides = [(op.lhs, op.rhs)]
    if isinstance(op, (stablehlo.AddOp, stablehlo.MulOp)):
        sides.append((op.rhs, op.lhs))
    for down, other in sides:
        # Per-channel values reach an activation through a broadcast (or are a constant
        # of its shape); looking only there keeps the walk off residual adds, whose other
        # operand is an activation computed far up the network.
        if not isinstance(other.owner, _BROADCASTS) or _is_parameter(down):
            continue
        for feature in _features(other, shaped.shape):
            size = shaped.shape[feature]
            vector = per_channel_f64(other, feature, size)
            if vector is not None:
                # NaN != NaN: a non-finite vector counts (its pattern says why it stays).
                if len(np.unique(vector)) > 1 or not np.all(np.isfinite(vector)):
                    return down
                continue
            if not fold_weight_arguments:
                continue
            narrow = per_channel_source(other, feature, size)
            if (
                narrow is not None and narrow.value != other and narrow.feature is not None
                and not computed_from_data(narrow.value)
            ):
                return down
    return None


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
