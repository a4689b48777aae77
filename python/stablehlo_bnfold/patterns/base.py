"""What a pattern is and what it may do: skip with a reason, build ops, fold."""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs._mlir import rewrite
from jaxlib.mlir.dialects import stablehlo

from ..constants import dense_attr
from ..report import Recorder

__all__ = ["FoldRewriter", "Outcome", "Pattern"]

_log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    """What a pattern did with the op it was given."""

    FOLDED = "folded"
    SKIPPED = "skipped"


class FoldRewriter:
    """What a pattern may do: skip with a reason, build ops before the root op, fold.

    Every op is built through this class, right before the root op, so that a pattern
    that fails halfway can have what it built erased.
    """

    def __init__(
        self,
        root: ir.OpView,
        rewriter: rewrite.PatternRewriter,
        recorder: Recorder,
        pattern: str,
    ):
        self._root = root
        self._rewriter = rewriter
        self._recorder = recorder
        self._pattern = pattern
        self._created: list[ir.Operation] = []

    def skip(self, op: ir.OpView, reason: str) -> Outcome:
        """Leave `op` as it is and record why (a short lowercase phrase)."""
        _log.debug("%s: not folded: %s [%s]", op.location, reason, self._pattern)
        self._recorder.skip(op, self._pattern, reason)
        return Outcome.SKIPPED

    def not_candidate(self, op: ir.OpView, reason: str) -> Outcome:
        """Leave `op` alone without a report entry: it is not a batch-norm candidate at
        all (most multiplies and adds of a model), so only the debug log says why."""
        _log.debug("%s: not a candidate: %s [%s]", op.location, reason, self._pattern)
        return Outcome.SKIPPED

    def constant(self, values: np.ndarray, tensor_type: ir.Type, loc: ir.Location) -> ir.Value:
        """A `stablehlo.constant` of `tensor_type` holding `values` (already rounded)."""
        attr = dense_attr(values, ir.RankedTensorType(tensor_type))
        return self._track(stablehlo.ConstantOp(attr, loc=loc, ip=self._ip())).result

    def with_operand(self, op: ir.OpView, index: int, value: ir.Value) -> ir.Value:
        """A copy of `op` (same attributes and location) whose operand `index` is `value`."""
        operands = list(op.operands)
        operands[index] = value
        named = op.operation.attributes
        attributes = {named[i].name: named[i].attr for i in range(len(named))}
        clone = ir.Operation.create(
            op.operation.name,
            results=[op.result.type],
            operands=operands,
            attributes=attributes,
            loc=op.location,
            ip=self._ip(),
        )
        return self._track(clone).result

    def add_per_feature(
        self, value: ir.Value, bias: np.ndarray, feature: int, loc: ir.Location
    ) -> ir.Value:
        """`value + broadcast_in_dim(bias, dims=[feature])` with `bias` already rounded."""
        result_type = ir.RankedTensorType(value.type)
        bias_type = ir.RankedTensorType.get([bias.shape[0]], result_type.element_type)
        constant = self.constant(bias, bias_type, loc)
        broadcast = self._track(
            stablehlo.BroadcastInDimOp(result_type, constant, [feature], loc=loc, ip=self._ip())
        )
        return self._track(
            stablehlo.AddOp(value, broadcast.result, loc=loc, ip=self._ip())
        ).result

    def _ip(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self._root)

    def _track(self, op):
        self._created.append(op.operation)
        return op

    def folded(self, op: ir.OpView, replacement: ir.Value, producer: ir.OpView) -> Outcome:
        """Replace `op`'s single result with `replacement` and record the fold."""
        self._recorder.fold(op, self._pattern, producer.operation.name)
        self._rewriter.replace_op(op, [replacement])
        self._created.clear()
        return Outcome.FOLDED

    def replaced(self, op: ir.OpView, value: ir.Value) -> Outcome:
        """Replace `op`'s single result with an existing `value` (no fold is recorded)."""
        self._rewriter.replace_op(op, [value])
        self._created.clear()
        return Outcome.FOLDED

    def discard_created(self) -> None:
        """Erase the ops this pattern created, newest first."""
        for created in reversed(self._created):
            created.erase()
        self._created.clear()


@dataclass(frozen=True)
class Pattern:
    """A named rewrite rooted at ops of class `root`."""

    name: str
    root: type
    apply: Callable[[ir.OpView, FoldRewriter], Outcome]
