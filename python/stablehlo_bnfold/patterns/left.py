"""A report line for every per-channel chain the patterns left without one.

The patterns report what they try: a batch norm, an affine op after a linear op, an
affine chain before one. A chain with no linear op on either side (a pre-activation batch
norm, `bn -> relu -> conv` in DenseNet and ResNetV2, or one before a pooling) is no
pattern's candidate, and would leave the report silent ("skipped 0"). After the greedy
driver, `report_chains_left` walks the function once and gives each such chain one line,
at its outermost op, naming what it reads and what reads it.

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
from ..constants import float_dtype
from ..fold.affine_map import AFFINE_OPS, biased_linear, computed_from_data
from ..fold.reasons import NO_LINEAR_OP
from ..report import Recorder

__all__ = ["REPORTER", "report_chains_left"]

REPORTER = "stablehlo-fold-batch-norm"
"""The name report lines of chains left carry in place of a pattern's."""

def report_chains_left(
    function: ir.Operation, recorder: Recorder, fold_weight_arguments: bool
) -> None:
    """Record `NO_LINEAR_OP` for the outermost op of each per-channel chain in `function`
    that no pattern folded or reported."""
    chains: list[ir.OpView] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        view = op.opview
        if isinstance(view, AFFINE_OPS) and _down(view, fold_weight_arguments) is not None:
            chains.append(view)
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    members = {hash(op.operation) for op in chains}
    for op in chains:
        if recorder.has_skip(op) or recorder.was_built(op):
            continue
        users = list(op.result.uses)
        if len(users) == 1 and hash(_operation(users[0].owner)) in members:
            continue  # not the outermost op: the line goes on the top of the chain
        if len(users) == 1 and recorder.has_skip(_operation(users[0].owner)):
            continue  # a precision island's convert above it says why
        if any(_operation(u.owner).name in _LINEAR for u in users):
            continue  # the input side looked at it (weights scaled in the graph, ...)
        down, inner = _bottom(op, members, fold_weight_arguments)
        if isinstance(down.owner, AFFINE_OPS):
            inner.append(down.owner)  # a step the chain stopped at may carry the reason
        if any(recorder.has_skip(o) or recorder.was_built(o) for o in inner):
            continue  # a pattern already said why this chain stays
        if isinstance(op, stablehlo.AddOp) and biased_linear(op.result) is not None:
            continue  # L + b: the canonical form
        reads = _name(down.owner)
        read_by = ", ".join(sorted({_operation(u.owner).name for u in users})) or "nothing"
        recorder.keep(op, REPORTER, NO_LINEAR_OP.detailed(f"reads {reads}, read by {read_by}"))


_LINEAR = ("stablehlo.convolution", "stablehlo.dot_general", "stablehlo.dot")


def _operation(owner) -> ir.Operation:
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _name(owner) -> str:
    return _operation(owner).name if isinstance(owner, ir.OpView) else "an argument"


def _bottom(
    op: ir.OpView, members: set, fold_weight_arguments: bool
) -> tuple[ir.Value, list[ir.OpView]]:
    """The value the chain topped by `op` reads, and the chain's ops."""
    inner = [op]
    value = _down(op, fold_weight_arguments)
    while isinstance(value.owner, AFFINE_OPS) and hash(value.owner.operation) in members:
        if not single_user(value):
            break
        inner.append(value.owner)
        value = _down(value.owner, fold_weight_arguments)
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
        for feature, size in enumerate(shaped.shape):
            if size <= 1:
                continue
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


def _is_parameter(value: ir.Value) -> bool:
    """A value with at most one dimension larger than one, not computed from the data:
    the per-channel values' own arithmetic (`rsqrt(var + eps) * gamma`), not a chain."""
    shaped = ir.ShapedType(value.type)
    return sum(1 for n in shaped.shape if n != 1) <= 1 and not computed_from_data(value)
