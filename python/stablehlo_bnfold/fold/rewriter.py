"""What a pattern is and what it may do: skip with a reason, build ops, fold.

`FoldRewriter` is the only handle a pattern has on the IR; the build step (`plan.build`)
is the only code of the output-side patterns that uses its building methods."""

from __future__ import annotations

import contextlib
import enum
import logging
import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs._mlir import rewrite
from jaxlib.mlir.dialects import stablehlo

from ..analysis.per_channel import BINARY_UFUNC, UNARY_UFUNC, Narrow
from ..constants import dense_attr, dimensions, float_dtype, product_f64, round_to
from ..report import Recorder, op_key
from .affine_map import LINEAR_OPS, Computed, StoredWeights, computed_from_data, stored_source, stored_weights

__all__ = [
    "SHORT_NAMES", "FoldRewriter", "Outcome", "Pattern", "ScaledWeights", "going_with",
    "unrounded_bias_of", "unrounded_weights",
]

_log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    """What a pattern did with the op it was given."""

    FOLDED = "folded"
    """Rewritten, and the fold recorded."""
    REMOVED = "removed"
    """Replaced by a value it equals (an identity op): rewritten, nothing recorded."""
    SKIPPED = "skipped"
    """Left as it is."""


_BIAS_BROADCASTS = frozenset((stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp))
"""How a bias add after a linear op broadcasts its [C] constant (a dynamic shape: the
second); for `type(op) in`."""


def final_bias_add(op: ir.OpView) -> bool:
    """Whether `op` is `L(x, W) + broadcast_in_dim(b)`, a linear op's result plus the
    broadcast of a value computed from parameters (constants or weight arguments, not the
    data: `computed_from_data`): the form every fold ends in."""
    if not isinstance(op, stablehlo.AddOp):
        return False
    owners = [operand.owner for operand in op.operands]
    linear = [isinstance(o, LINEAR_OPS) for o in owners]
    if sum(linear) != 1:
        return False
    broadcast = owners[linear.index(False)]
    if type(broadcast) not in _BIAS_BROADCASTS:
        return False
    return not computed_from_data(broadcast.operand, budget=16)


@dataclass(frozen=True)
class ScaledWeights:
    """Weights a fold built as `source` times `scale` along `axis`, rounded once
    (`constants.scale_along`): the recipe of the float64 values they were rounded from."""

    source: StoredWeights
    scale: np.ndarray
    axis: int

    def float64(self) -> np.ndarray | None:
        """The product in float64, not rounded; None where the source is not read."""
        values = self.source.values()
        return None if values is None else product_f64(values, self.scale, self.axis)


def unrounded_bias_of(recorder: Recorder, bias: ir.Value, feature: int) -> np.ndarray | None:
    """The float64 values a fold of this pass run rounded the bias `bias` from: a [C]
    constant it built (`FoldRewriter.add_per_feature`), broadcast along `feature`; else
    None. (`affine_map.unrounded_bias` uses them where they round to the stored values.)"""
    broadcast = bias.owner
    if type(broadcast) not in _BIAS_BROADCASTS or dimensions(broadcast.broadcast_dimensions) != [feature]:
        return None
    constant = broadcast.operand.owner
    if not isinstance(constant, ir.OpView):
        return None
    found = recorder.unrounded.get(op_key(constant.operation))
    return found if isinstance(found, np.ndarray) else None


def unrounded_weights(recorder: Recorder, weights: ir.Value) -> np.ndarray | None:
    """The float64 values a fold of this pass run rounded the weights constant `weights`
    from (`FoldRewriter.scaled_weights`), where they round to its stored values:
    that constant, not another one built at its address since; else None."""
    owner = weights.owner
    if not isinstance(owner, stablehlo.ConstantOp):
        return None
    scaled = recorder.unrounded.get(op_key(owner.operation))
    if not isinstance(scaled, ScaledWeights):
        return None
    stored = stored_weights(weights)
    exact = scaled.float64()
    if stored is None or exact is None or exact.shape != stored.shape:
        return None
    rounded = round_to(stored.dtype, exact)
    return exact if rounded is not None and np.array_equal(rounded, stored) else None


def _never(op: ir.OpView) -> bool:
    return False


def _added_to(op: ir.OpView) -> bool:
    """Whether an add reads `op`'s result (a bias add: the driver visited `op` after the
    fold that built it, which kept `op`)."""
    return any(type(use.owner) is stablehlo.AddOp for use in op.results[0].uses)


def going_with(replaced: list[ir.OpView], staying: set[ir.Operation] = frozenset()) -> list[ir.Operation]:
    """`replaced` and every op all of whose results only they and the ops going read, users
    before their operands: what goes once `replaced` go. A call (which the driver never
    erases), an op without results and the ops of `staying` stay."""
    going = [op.operation for op in replaced]
    seen = set(going)
    pending = [operand.owner for op in replaced for operand in op.operands]
    while pending:
        owner = pending.pop()
        if isinstance(owner, ir.Block):
            continue
        op = owner.operation
        if op in seen or op in staying or op.name == "func.call" or not len(op.results):
            continue
        if all(use.owner.operation in seen for result in op.results for use in result.uses):
            going.append(op)
            seen.add(op)
            pending.extend(operand.owner for operand in op.operands)
    return going


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
        fold_weight_arguments: bool = True,
        fold_larger_weight_arguments: bool = False,
        fold_narrow_weights: bool = True,
    ):
        self.fold_weight_arguments = fold_weight_arguments
        """The pass option `fold-weight-arguments`: whether per-channel values and weights
        that are function arguments may be folded, in the graph."""
        self.fold_larger_weight_arguments = fold_larger_weight_arguments
        """The pass option `fold-larger-weight-arguments`: whether weights the graph scales
        on every call may be larger than the activation the scale leaves
        (`fold.plan.per_call_larger`)."""
        self.fold_narrow_weights = fold_narrow_weights
        """The pass option `fold-narrow-weights`: whether weights stored only in a narrow
        type, with no wider master copy, may be scaled and rounded to that type again."""
        self.rounded_again: np.dtype | None = None
        """The narrow type of weights this application scales with no wider master copy
        (set by the pattern while it decides, `rounds_again`); the fold is recorded with
        it, and the report marks it."""
        self._anchor = root
        self._at = root
        """The op whose location new ops take (the root, or the op `acting_for` names)."""
        self._realized: dict[Computed, ir.Value] = {}
        """The `Computed` values built so far this application, keyed by the object itself
        (identity: `Computed` is `eq=False`), which the key keeps alive: keyed by `id()`, a
        value freed during the application left its address to a new one, which then read
        the op built for the old (a wrong bias, or one that does not dominate its use)."""
        self._narrow_vectors: list[tuple[ir.Value, int, ir.OpView, ir.Value]] = []
        """Each narrow value made a [C] vector so far this application (a reshape, or a
        reshape and a broadcast), with its channels and the op it was built before:
        built once there however many values read it (the scale, which the weights and
        the shift both read), never reused before another op (it might not dominate)."""
        self._rewriter = rewriter
        self._recorder = recorder
        self._pattern = pattern
        self._created: list[ir.Operation] = []
        self.revisits: Callable[[ir.OpView], bool] = _never
        """Which linear ops this application rebuilds (new weights) the driver should visit
        again (`_revisit_rebuilt_linear`): those reading a chain's last op, which an
        input-side pattern may fold into (unless an add reads them already)."""
        self._rebuilt_linear: list[ir.OpView] = []

    def skip(self, op: ir.OpView, reason: str) -> Outcome:
        """Leave `op` as it is and record why (a short lowercase phrase); erases anything
        the pattern built on the way. A bias add in its final form (`final_bias_add`) is
        no norm left: only the debug log says why it was not moved further."""
        if final_bias_add(op):
            return self.not_candidate(op, reason)
        self.discard_created()
        _log.debug("%s: not folded: %s [%s]", op.location, reason, self._pattern)
        self._recorder.skip(op, self._pattern, str(reason))
        return Outcome.SKIPPED

    def same_norm(self, ops: list[ir.OpView]) -> None:
        """Note that `ops` are one chain of per-channel ops, one norm however many of them
        patterns refuse (`Recorder.same_norm`)."""
        self._recorder.same_norm(ops)

    def not_candidate(self, op: ir.OpView, reason: str) -> Outcome:
        """Leave `op` alone without a report entry: it is not a batch-norm candidate at
        all (most multiplies and adds of a model), so only the debug log says why."""
        if self._created or self._rebuilt_linear or self._narrow_vectors:
            self.discard_created()
        if _log.isEnabledFor(logging.DEBUG):  # (most callbacks end here: no location read)
            _log.debug("%s: not a candidate: %s [%s]", op.location, reason, self._pattern)
        return Outcome.SKIPPED

    def rounds_again(self, dtype: np.dtype) -> None:
        """Note that the fold scales weights stored only in `dtype` (no wider master
        copy): W * s rounded to `dtype` again, which the report marks."""
        self.rounded_again = dtype

    def constant(
        self, values: np.ndarray, tensor_type: ir.Type, loc: ir.Location, rounded_from: object = None,
    ) -> ir.Value:
        """A `stablehlo.constant` of `tensor_type` holding `values` (already rounded);
        `rounded_from`, when given, noted as what they were rounded from
        (`Recorder.unrounded`: see `rounded_from` and `scaled_weights`)."""
        attr = dense_attr(values, ir.RankedTensorType(tensor_type))
        return self._created_op("stablehlo.constant", attr.type, (), {"value": attr}, loc, rounded_from).result

    def with_operand(self, op: ir.OpView, index: int, value: ir.Value) -> ir.Value:
        """A copy of `op` (same attributes and location) whose operand `index` is `value`."""
        return self.with_operands(op, {index: value})

    def with_operands(self, op: ir.OpView, replacements: dict[int, ir.Value]) -> ir.Value:
        """A copy of `op` (same attributes, regions and location) with operand i replaced
        by `replacements[i]`."""
        # Cloned: the attributes (and a max-pool's body) are copied inside MLIR, 2 us for a
        # convolution, against 11 us to read each attribute out and create the op anew.
        copy = op.operation.clone(ip=self._ip())
        for index, value in replacements.items():
            copy.operands[index] = value
        if isinstance(op, LINEAR_OPS) and self.revisits(op) and not _added_to(op):
            self._rebuilt_linear.append(copy)
        return self._track(copy).result

    def add_per_feature(
        self, value: ir.Value, bias: np.ndarray, feature: int | tuple[int, ...], like: ir.Value,
        shape: ir.Value | None = None, unrounded: np.ndarray | None = None,
    ) -> ir.Value:
        """`value + broadcast_in_dim(bias, dims=[feature])` (or `dims=feature` for a tuple,
        one entry per dimension of `bias`) with `bias` already rounded; `like` has
        `value`'s type and gives a dynamic shape, or `shape` does (see `broadcast`).
        `unrounded`: the float64 values `bias` was rounded from, which the next fold of
        the chain reads (`unrounded`)."""
        element_type = ir.ShapedType(value.type).element_type
        bias_type = ir.RankedTensorType.get(list(bias.shape), element_type)
        # (`rounded_from`'s note, made with the constant: its address read once)
        note = unrounded if unrounded is not None and unrounded.shape == bias.shape else None
        constant = self.constant(bias, bias_type, self._at.location, note)
        return self.elementwise(stablehlo.AddOp, value, self.broadcast(constant, like, feature, shape))

    def rounded_from(self, constant: ir.Value, unrounded: np.ndarray) -> None:
        """Note the float64 values the bias constant `constant`, built here, was rounded
        from, for the next fold of its chain (`unrounded`)."""
        if unrounded.shape == tuple(ir.RankedTensorType(constant.type).shape):
            self._recorder.unrounded[op_key(constant.owner.operation)] = unrounded

    def unrounded(self, bias: ir.Value, feature: int) -> np.ndarray | None:
        """The float64 values a fold of this pass run rounded the bias `bias` from
        (`unrounded_bias_of`)."""
        return unrounded_bias_of(self._recorder, bias, feature)

    def scaled_weights(
        self, values: np.ndarray, weights: ir.Value, tensor_type: ir.Type, scale: np.ndarray, axis: int,
        source: StoredWeights | None = None,
    ) -> ir.Value:
        """A constant of `tensor_type` holding `values`, the weights `weights` (a constant,
        stored at `source`, by default `stored_source(weights)`) times `scale` along
        `axis`, rounded once, with `weights`' location; noted as such (`Recorder.unrounded`):
        a merge of parallel branches sums them unrounded (`unrounded_weights`). The
        recipe, not the float64 product: it holds the attribute, which the context keeps
        anyway, and a [C] vector."""
        if source is None:
            source = stored_source(weights)
        note = None if source is None else ScaledWeights(source, scale, axis)
        return self.constant(values, tensor_type, weights.owner.location, note)

    def broadcast(
        self, vector: ir.Value, like: ir.Value, dim: int | tuple[int, ...] | list[int],
        shape: ir.Value | None = None,
    ) -> ir.Value:
        """`vector` ([C], or one dimension per entry of a sequence `dim`) broadcast along
        `dim` to the type of `like`; a dynamic type gets a `dynamic_broadcast_in_dim` whose
        shape is `shape` when given (a shape value of `like`'s shape, defined before the
        op built), else that of `like` (reused when `like` is itself a dynamic broadcast,
        else built: `_shape_of`)."""
        dims = [dim] if isinstance(dim, int) else list(dim)
        result_type = ir.RankedTensorType(like.type)
        if result_type.has_static_shape:
            attributes = {"broadcast_dimensions": ir.DenseI64ArrayAttr.get(dims)}
            return self._created_op("stablehlo.broadcast_in_dim", result_type, (vector,), attributes).result
        if shape is not None and not self._defined_before(shape):
            shape = None  # (a shape computed after the op built: it would not dominate it)
        if shape is not None or isinstance(like.owner, stablehlo.DynamicBroadcastInDimOp):
            shape = like.owner.output_dimensions if shape is None else shape
            op = stablehlo.DynamicBroadcastInDimOp(result_type, vector, shape, dims, ip=self._ip())
            return self._track(op).result
        shape = self._shape_of(like, result_type)
        op = stablehlo.DynamicBroadcastInDimOp(result_type, vector, shape, dims, ip=self._ip())
        return self._track(op).result

    def _shape_of(self, like: ir.Value, result_type: ir.RankedTensorType) -> ir.Value:
        """The shape of `like` (of the dynamic `result_type`) as a 1-D i32 tensor: each
        dynamic dimension's size read with `get_dimension_size` (reshaped to one element),
        each run of static ones a constant, joined by a concatenate where there are
        several parts (a symbolic batch: one size read, one constant)."""
        parts, static = [], []
        i32 = ir.IntegerType.get_signless(32)
        for d, size in enumerate(result_type.shape):
            if not result_type.is_dynamic_dim(d):
                static.append(size)
                continue
            if static:
                parts.append(self._sizes(static, i32))
                static = []
            read = self._track(stablehlo.GetDimensionSizeOp(like, d, ip=self._ip()))
            one = ir.RankedTensorType.get([1], ir.RankedTensorType(read.result.type).element_type)
            parts.append(self._track(stablehlo.ReshapeOp(one, read.result, ip=self._ip())).result)
        if static:
            parts.append(self._sizes(static, i32))
        if len(parts) == 1:
            return parts[0]
        return self._track(stablehlo.ConcatenateOp(parts, 0, ip=self._ip())).result

    def _sizes(self, sizes: list[int], element_type: ir.Type) -> ir.Value:
        """A constant 1-D tensor of `sizes`."""
        kind = ir.RankedTensorType.get([len(sizes)], element_type)
        attr = ir.DenseElementsAttr.get(np.array(sizes, dtype=np.int32), type=kind)
        return self._track(stablehlo.ConstantOp(attr, ip=self._ip())).result

    def _defined_before(self, value: ir.Value) -> bool:
        """Whether `value` is an argument, or computed before the op the next op is built
        before, in its block."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            return True
        anchor = self._anchor.operation
        return owner.operation.block == anchor.block and owner.operation.is_before_in_block(anchor)

    def was_built(self, op: ir.OpView) -> bool:
        """Whether a fold of this pass built `op`."""
        return self._recorder.was_built(op)

    def build(self, op_class: type, *args, **kwargs) -> ir.Value:
        """The result of any op built by its Python builder (`op_class(*args, **kwargs)`),
        placed and tracked like the others."""
        return self._track(op_class(*args, **kwargs, ip=self._ip())).result

    def scaled(self, value: ir.Value, scale, axis: int) -> ir.Value | None:
        """`value * broadcast_in_dim(scale)` along `axis`, in the graph (weights times a
        per-channel factor); None if a constant `scale` does not fit `value`'s type."""
        value_type = ir.RankedTensorType(value.type)
        if isinstance(scale, Narrow) and _laid_along(scale.value, value_type, axis):
            # Keras's inv, [1, 1, 1, C], broadcast onto the weights as it is: no reshape.
            op = stablehlo.BroadcastInDimOp(value_type, scale.value, list(range(value_type.rank)), ip=self._ip())
            return self.elementwise(stablehlo.MulOp, value, self._track(op).result)
        factor = self.vector(scale, value_type.shape[axis], value_type.element_type)
        if factor is None:
            return None
        return self.elementwise(stablehlo.MulOp, value, self.broadcast(factor, value, axis))

    def scaled_master(
        self, master: ir.Value, weights_type: ir.RankedTensorType, scale, axis: int
    ) -> ir.Value:
        """`convert_T(reshape(W_F) * broadcast_in_dim(scale))`: master weights scaled in
        their own wider type F and rounded once to the weights' type T; `axis` is a
        dimension of `weights_type`, whose shape the master is first reshaped to when it
        differs (see `fold.affine_map.master_value`)."""
        master_type = ir.RankedTensorType(master.type)
        if list(master_type.shape) != list(weights_type.shape):
            shaped = ir.RankedTensorType.get(weights_type.shape, master_type.element_type)
            master = self.build(stablehlo.ReshapeOp, shaped, master)
        return self.build(stablehlo.ConvertOp, weights_type, self.scaled(master, scale, axis))

    def unary(self, op_class: type, operand: ir.Value) -> ir.Value:
        """A unary elementwise op."""
        return self._track(op_class(operand, ip=self._ip())).result

    def elementwise(self, op_class: type, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        """A binary elementwise op on two values of the same type."""
        lhs_type = lhs.type
        if lhs_type == rhs.type:  # the type the builder would infer, without inferring it
            return self._created_op(op_class.OPERATION_NAME, lhs_type, (lhs, rhs)).result
        return self._track(op_class(lhs, rhs, ip=self._ip())).result

    def vector(self, value, channels: int, element_type: ir.Type) -> ir.Value | None:
        """A per-channel value (float64 array, `Narrow` or [C] IR vector) as an IR vector
        of shape [C] in `element_type`; None if a constant overflows that type."""
        if isinstance(value, np.ndarray):
            if value.shape != (channels,):
                value = np.broadcast_to(value, (channels,))  # 4 us: only where needed
            rounded = round_to(float_dtype(element_type), value)
            if rounded is None:
                return None
            vector_type = ir.RankedTensorType.get([channels], element_type)
            return self.constant(rounded, vector_type, self._at.location)
        if isinstance(value, Narrow):
            value = self._vector_from_narrow(value, channels)
        # A vector of the element type already (nearly every one: a computed value, an
        # argument) needs no type made for it.
        if ir.RankedTensorType(value.type).element_type != element_type:
            converted = ir.RankedTensorType.get([channels], element_type)
            value = self._track(stablehlo.ConvertOp(converted, value, ip=self._ip())).result
        return value

    def realize(self, *values):
        """`values` with each `Computed` one built as ops on [C] vectors, every computed
        value they read built once, in the order the analysis computed them; one built
        already in this application (an earlier op of the chain `acting_for` builds) is
        reused."""
        for value in values:
            if isinstance(value, Computed):
                break
        else:
            return values  # constants and IR already: nothing to build (most calls)
        realized = self._realized
        pending = [v for v in values if isinstance(v, Computed) and v not in realized]
        if pending:
            if len(pending) == 1 and not any(isinstance(o, Computed) for o in pending[0].operands):
                order = pending  # one op on values at hand (`plan.combine`)
            else:
                nodes = set()
                while pending:
                    value = pending.pop()
                    if isinstance(value, Computed) and value not in nodes and value not in realized:
                        nodes.add(value)
                        pending.extend(value.operands)
                order = sorted(nodes, key=_ORDER)
            for node in order:
                operands = [
                    self.vector(realized[o] if isinstance(o, Computed) else o, node.channels, node.element_type)
                    for o in node.operands
                ]
                op_class = _OP_OF_UFUNC[node.ufunc]
                if len(operands) == 1:
                    realized[node] = self.unary(op_class, *operands)
                else:
                    realized[node] = self.elementwise(op_class, *operands)
        return tuple(realized[v] if isinstance(v, Computed) else v for v in values)

    def _vector_from_narrow(self, narrow: Narrow, channels: int) -> ir.Value:
        for value, size, anchor, built in self._narrow_vectors:
            if value == narrow.value and size == channels and anchor == self._anchor:
                return built
        built = self._new_vector_from_narrow(narrow, channels)
        self._narrow_vectors.append((narrow.value, channels, self._anchor, built))
        return built

    def _new_vector_from_narrow(self, narrow: Narrow, channels: int) -> ir.Value:
        source_type = ir.RankedTensorType(narrow.value.type)
        element_type = source_type.element_type
        if list(source_type.shape) == [channels]:
            return narrow.value
        size = 1
        for n in source_type.shape:
            size *= n
        if size == channels:
            target = ir.RankedTensorType.get([channels], element_type)
            return self._track(stablehlo.ReshapeOp(target, narrow.value, ip=self._ip())).result
        scalar = ir.RankedTensorType.get([], element_type)
        value = self._track(stablehlo.ReshapeOp(scalar, narrow.value, ip=self._ip())).result
        target = ir.RankedTensorType.get([channels], element_type)
        return self._track(stablehlo.BroadcastInDimOp(target, value, [], ip=self._ip())).result

    @contextlib.contextmanager
    def building_before(self, op: ir.OpView):
        """Build the ops of this block before `op` instead of the root (inside a region
        the root's operands are defined in)."""
        previous, self._anchor = self._anchor, op
        try:
            yield
        finally:
            self._anchor = previous

    def acting_for(self, op: ir.OpView) -> _ActingFor:
        """Build before `op`, and give new ops `op`'s location, as a pattern applied to
        `op` would: a fold of a chain in one application builds each op's share where
        the fold of that op alone would have (`plan.build_chain`)."""
        return _ActingFor(self, op)

    def adds_ops(self, replaced: list[ir.OpView]) -> bool:
        """Whether the ops built so far outnumber those that go once `replaced` (the ops
        the fold replaces) are (`going_with`)."""
        return len(self._created) > len(going_with(replaced, set(self._created)))

    def replace_inside(self, op: ir.OpView, value: ir.Value) -> None:
        """Replace an op other than the root (a linear op in a `case` branch, a relu
        rebuilt on a new linear op) by `value`."""
        self._rewriter.replace_op(op, [value])

    def _ip(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self._anchor)

    def _created_op(
        self, name: str, result_type: ir.Type, operands: tuple, attributes: dict | None = None,
        loc: ir.Location | None = None, rounded_from: object = None,
    ) -> ir.Operation:
        """An op `name` of one result of `result_type`, built and tracked like the others
        (`rounded_from`: see `constant`): the generic builder, a third of the cost of an
        op class's (which reads its context, checks each attribute and infers the result
        type)."""
        ip = ir.InsertionPoint(self._anchor)
        op = ir.Operation.create(name, (result_type,), operands, attributes, loc=loc, ip=ip)
        self._created.append(op)
        key = self._recorder.created(op)
        if rounded_from is not None:
            self._recorder.unrounded[key] = rounded_from
        return op

    def _track(self, op):
        self._created.append(op.operation)
        self._recorder.created(op.operation)
        return op

    def folded(
        self,
        op: ir.OpView,
        replacement: ir.Value,
        linear: ir.OpView,
        folded: ir.OpView | None = None,
        through: str = "",
    ) -> Outcome:
        """Replace `op`'s single result with `replacement` and record that `folded` (by
        default `op`; for an input-side fold, the outermost affine op before the linear op
        `op`) was folded into `linear`, passing across the ops named in `through` (a relu's
        `stablehlo.maximum`, a max-pool's `stablehlo.reduce_window`) when given."""
        reported = op if folded is None else folded
        norm = self._recorder.norm_of(reported)
        if folded is None and not isinstance(op, LINEAR_OPS):
            # The rest of a norm folded in steps (its subtract first) reads this op.
            self._recorder.continued_by([use.owner for use in op.result.uses], norm)
        self._recorder.fold(
            reported,
            self._pattern,
            linear.operation.name,
            through,
            self._rounded_again_name(),
            norm=norm,
        )
        self._revisit_rebuilt_linear()
        self._rewriter.replace_op(op, [replacement])
        self._created.clear()
        return Outcome.FOLDED

    def folded_chain(
        self, steps: tuple[tuple[ir.OpView, str], ...], replacement: ir.Value, linear: ir.OpView
    ) -> Outcome:
        """Replace the last op of `steps` (each op read only by the next) by `replacement`
        and record each op folded into `linear` under its pattern's name, as one
        application of each pattern in turn would have; the ops below the last are left
        without readers, for the driver to erase."""
        recorder, name, rounded_again = self._recorder, linear.operation.name, self._rounded_again_name()
        norm = recorder.norm_of(steps[0][0])
        for op, pattern in steps:
            recorder.fold(op, pattern, name, "", rounded_again, norm=norm)
        self._revisit_rebuilt_linear()
        self._rewriter.replace_op(steps[-1][0], [replacement])
        self._erase_unread_created()
        return Outcome.FOLDED

    def _revisit_rebuilt_linear(self) -> None:
        """Have the driver visit again, after the ops this fold leaves without readers, each
        linear op it rebuilt (new weights) that an input-side pattern may fold into
        (`revisits`), as it visits one that a fold keeps and gives a bias add: the chain before
        it may fold into that bias add now, in this sweep rather than the next (which
        would cost one more sweep of every op). The driver learns of no op built here;
        erasing a reader of its result through the rewriter tells it."""
        for linear in self._rebuilt_linear:
            # (Before its block's terminator: the op a fold builds before may be gone.)
            at_end = ir.InsertionPoint.at_block_terminator(linear.operation.block)
            result = linear.results[0]
            reader = ir.Operation.create("stablehlo.negate", (result.type,), (result,), ip=at_end)
            self._rewriter.erase_op(reader)
        self._rebuilt_linear.clear()

    def _erase_unread_created(self) -> None:
        """Erase, newest first, the ops this chain's build made that nothing reads (it
        realizes the shift of each step, as one application per step would, and the last
        step's bias reads past the negation the first built), and forget the rest. Only
        at the end of an application (the caller builds nothing after it): the driver
        would erase them only in a sweep of its own, then sweep once more over every op
        to confirm nothing changed. Only per-channel values computed in the graph can be
        left unread (`realize`, and the vectors of narrow values): with none built, no
        op is looked at (a chain on constants)."""
        if not self._realized and not self._narrow_vectors:
            self._created.clear()
            return
        for created in reversed(self._created):
            for result in created.results:
                if next(iter(result.uses), None) is not None:
                    break  # read
            else:
                self._rewriter.erase_op(created)
        self._created.clear()

    def _rounded_again_name(self) -> str:
        dtype = self.rounded_again
        return "" if dtype is None else SHORT_NAMES.get(dtype.name, dtype.name)

    def note(self, op: ir.OpView, reason: str) -> None:
        """Record why `op`, which a fold built to keep what it could not fold, stays."""
        _log.debug("%s: kept: %s [%s]", op.location, reason, self._pattern)
        self._recorder.keep(op, self._pattern, str(reason), kept=True)

    def kept_for(self, op: ir.OpView, kept: tuple[str, ...]) -> bool:
        """Whether `op` is an op a fold built to keep what it could not fold, noted
        (`note`) for one of the reasons `kept`."""
        if not self.was_built(op):
            return False
        key, texts = op_key(op.operation), {str(reason) for reason in kept}
        return any(k[0] == key and entry[3] in texts for k, entry in self._recorder.skips.items())

    def removed(self, op: ir.OpView, value: ir.Value) -> Outcome:
        """Replace `op`, an identity, by an existing `value` it equals; no fold is
        recorded (the report names what is folded, not the ops a fold step passes)."""
        self._rewriter.replace_op(op, [value])
        self._created.clear()
        return Outcome.REMOVED

    def discard_created(self) -> None:
        """Erase the ops this pattern created, newest first."""
        for created in reversed(self._created):
            created.erase()
        self._created.clear()
        self._rebuilt_linear.clear()
        self._narrow_vectors.clear()


class _ActingFor:
    """`FoldRewriter.acting_for`'s context: a class, not a generator (a third of the cost)."""

    __slots__ = ("_rw", "_op", "_previous", "_location")

    def __init__(self, rw: FoldRewriter, op: ir.OpView):
        self._rw, self._op = rw, op

    def __enter__(self) -> None:
        rw, op = self._rw, self._op
        self._previous = rw._anchor, rw._at
        rw._anchor, rw._at = op, op
        self._location = op.location
        self._location.__enter__()

    def __exit__(self, *exc_info) -> None:
        try:
            self._location.__exit__(*exc_info)
        finally:
            self._rw._anchor, self._rw._at = self._previous


def _laid_along(value: ir.Value, target: ir.RankedTensorType, axis: int) -> bool:
    """Whether `value` is already laid along `axis` of `target` (static): the same rank and
    element type, its dimension `axis` of the same size and every other one 1, so that
    `broadcast_in_dim` with the identity dimensions reaches `target` with no reshape."""
    shaped = ir.RankedTensorType(value.type)
    if shaped.rank != target.rank or shaped.element_type != target.element_type or not target.has_static_shape:
        return False
    return all(n == (target.shape[axis] if d == axis else 1) for d, n in enumerate(shaped.shape))


_ORDER = operator.attrgetter("order")

SHORT_NAMES = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}
"""How the report names a type weights are rounded to again (MLIR's names)."""

_OP_OF_UFUNC = {
    ufunc: op for table in (BINARY_UFUNC, UNARY_UFUNC) for op, ufunc in table.items()
}
"""The op that computes a ufunc of `Computed` (the op -> ufunc table read backwards)."""


@dataclass(frozen=True)
class Pattern:
    """A named rewrite rooted at ops of class `root`."""

    name: str
    root: type
    apply: Callable[[ir.OpView, FoldRewriter], Outcome]
