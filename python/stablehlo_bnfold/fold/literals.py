"""Literal weights and biases: the constant arithmetic around each linear op, evaluated.

After the patterns reach their fixed point, every linear op whose weights and bias are
constants should read them as one `stablehlo.constant` each,

    L(x, W') + broadcast_in_dim(b')

the form a pattern-matching backend (conv + bias + relu) needs. Producers and folds
leave arithmetic on constants there instead: Keras computes a batch norm's bias
`beta - mean * rsqrt(var + eps) * gamma` and reshapes every bias and depthwise kernel, a
fold into such a kernel leaves `reshape(K) * broadcast_in_dim(s)`, torch-mlir writes
`transpose(W)` and `bias * alpha`, mixed precision `convert(W_f32)`, weight normalization
`g * v / |v|`. `evaluate_literals`
replaces each such value, an operand of a linear op or the value its bias add
broadcasts, by one constant: computed in float64 (a `convert` on the way rounds to its
type there, as the graph does), rounded once to the value's element type
(`constants.round_to`).

Holds when, in this order (each failure a `fold.reasons` constant in the debug log):
the value is computed from constants alone (`LITERAL_READS_ARGUMENT` where it reads a
function or region argument) through the ops of `EVALUATED` only (`LITERAL_OP`); each
constant holds floats, or integers exact in float64 that a convert reads
(`LITERAL_CONSTANT_TYPE`), and each op has a static shape and a float element type
(`LITERAL_SHAPE_OR_TYPE`); every constant and op it is computed from that has more than
one element has no reader outside the subgraph (`LITERAL_SHARED`: a kernel another layer
reads too stays, the constant bytes would grow; a scalar, an epsilon, stays for its other
readers; where a layer's weights and its bias share one, as an input-side fold's `K * s`
and bias `b + L(t, K)` do, the two are evaluated together and K goes with both); the new constant has no more bytes than the constants that go with the
subgraph (`LITERAL_LARGER`), or is one element computed from splats only (written as a
splat: no element of a gigantic splat kernel is materialized); the value is finite in its
element type, and so is every convert's on the way (`LITERAL_NOT_FINITE`).

Nothing is reported: a fold removes an activation-sized op, this removes only ops on
constants. Weights passed as arguments stay computed in the graph.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.passage import binary_body as _binary_body
from ..analysis.per_channel import BINARY_UFUNC, UNARY_UFUNC
from ..constants import (
    broadcast_in_dim_array,
    dense_attr,
    dense_attr_of,
    dimensions,
    float_dtype,
    read_dense,
    round_to,
)
from ..report import Recorder
from . import reasons
from .affine_map import LINEAR_NAMES
from .reasons import Reason

__all__ = ["EVALUATED", "evaluate_literals", "float64_value"]

_log = logging.getLogger(__name__)

_LAYOUT = (stablehlo.ReshapeOp, stablehlo.TransposeOp, stablehlo.BroadcastInDimOp)

_EXTREMA = {stablehlo.MaxOp: np.maximum, stablehlo.MinOp: np.minimum}

_REDUCTIONS = {
    stablehlo.AddOp: np.add, stablehlo.MaxOp: np.maximum, stablehlo.MinOp: np.minimum,
    stablehlo.MulOp: np.multiply,
}
"""A `reduce` body's op -> the ufunc whose `.reduce` it computes."""

EVALUATED = (
    *_LAYOUT, stablehlo.ConvertOp, *BINARY_UFUNC, *UNARY_UFUNC, *_EXTREMA,
    stablehlo.ReduceOp, stablehlo.DotGeneralOp,
)
"""The ops a literal value may be computed through: reshape, transpose, broadcast_in_dim,
convert, the elementwise ops of `analysis.per_channel`'s op -> ufunc tables (add,
subtract, multiply, divide, power, negate, sqrt, rsqrt), maximum and minimum, a `reduce`
of one operand by add, maximum, minimum or multiply (a weight norm's sum of squares),
and a `dot_general` (a weight computed as a product of weights), each in float64."""


def evaluate_literals(root: ir.Operation, recorder: Recorder) -> None:
    """Replace, in every function under `root`, each operand of a linear op and each value
    a bias add after one broadcasts (`broadcast_in_dim`, or `dynamic_broadcast_in_dim`
    with a symbolic batch) that is computed from constants alone by one constant, where
    the conditions of this module's docstring hold.

    >>> evaluate_literals(module.operation, recorder)   # doctest: +SKIP
    """
    linear: list[tuple[int, ir.OpView]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in LINEAR_NAMES:  # (a name costs less than an OpView)
            linear.append((hash(op), op.opview))
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    # Operands are read afresh before each evaluation: one may replace a value that a
    # later one names too (both operands of a dot_general, two adds of one bias).
    # An op an evaluation erased (a dot_general of constants, in a bias) is not read again;
    # its key is taken before: an erased op's Python object no longer hashes as it did.
    erased: set[int] = set()
    for key, op in linear:
        if key in erased:
            continue
        shared = []
        for index in range(len(op.operands)):
            if _evaluate_value(op.operands[index], recorder, erased) is reasons.LITERAL_SHARED:
                shared.append(op.operands[index])
        for add, index in _bias_adds(op.result):
            bias = add.operands[index]
            if isinstance(bias.owner, _BROADCASTS):  # its shape operand is not a value
                bias = bias.owner.operand
            if _evaluate_value(bias, recorder, erased) is reasons.LITERAL_SHARED:
                shared.append(bias)
        if len(shared) > 1:
            # The weights and the bias of one layer computed from the same constants (an
            # input-side fold's K * s and its bias contracted from K): evaluated together,
            # the constants they share go with both.
            _evaluate_value(shared, recorder, erased)


def float64_value(value: ir.Value) -> np.ndarray | None:
    """What `value` holds when it is computed from constants alone through the ops of
    `EVALUATED`, in float64 and not rounded to its type; converts at its top are not
    applied (mixed precision's `convert(W_f32)`: the wider master weights). None where
    it reads an argument or another op, or a convert on the way is not finite."""
    while isinstance(value.owner, stablehlo.ConvertOp):
        value = value.owner.operand
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return None
    subgraph = _subgraph([owner])
    if isinstance(subgraph, Reason):
        return None
    computed = _values(subgraph, splat=False)
    return None if computed is None else np.asarray(computed[hash(owner.operation)], dtype=np.float64)


_BROADCASTS = (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp)


def _bias_adds(result: ir.Value) -> list[tuple[stablehlo.AddOp, int]]:
    """Each add after `result` (seen through reshapes) and its other operand's index: the
    bias adds. Both read the data, so no evaluation erases them."""
    found, pending = [], [result]
    while pending:
        value = pending.pop()
        for use in value.uses:
            user = use.owner
            if isinstance(user, stablehlo.ReshapeOp):
                pending.append(user.result)
            elif isinstance(user, stablehlo.AddOp):
                found.append((user, 1 - use.operand_number))
    return found


@dataclass
class _Subgraph:
    """The ops values are computed from, operands before users; the values' own (the
    tops) among them."""

    ops: list[ir.OpView]
    keys: set[int]
    """`hash(op.operation)` of each op."""
    tops: set[int]
    """`hash(op.operation)` of each op whose value is replaced."""


def _evaluate_value(value: ir.Value | list[ir.Value], recorder: Recorder, erased: set[int]) -> Reason | None:
    """Replace `value` (or each of a list of values, together) by one constant where this
    module's conditions hold, adding to `erased` each op it erases; else why not."""
    values = value if isinstance(value, list) else [value]
    owners = [v.owner for v in values]
    if any(not isinstance(o, ir.OpView) or dense_attr_of(o) is not None for o in owners):
        return None  # an argument (data or weights passed in) or a literal already
    subgraph = _subgraph(owners)
    if isinstance(subgraph, Reason):
        return _not_done(owners[0], subgraph)
    reason = _shared(subgraph)
    if reason is not None:
        return _not_done(owners[0], reason)
    splat = _splat(subgraph)
    if isinstance(splat, Reason):
        return _not_done(owners[0], splat)
    computed = _values(subgraph, splat)
    constants = []
    for owner in owners:
        tensor_type = ir.RankedTensorType(owner.result.type)
        dtype = float_dtype(tensor_type.element_type)
        rounded = None if computed is None else _rounded(dtype, computed[hash(owner.operation)])
        if rounded is None:
            return _not_done(owner, reasons.LITERAL_NOT_FINITE)
        constants.append((owner, _attr(tensor_type, rounded, splat, owner.location)))
    for owner, attr in constants:
        constant = stablehlo.ConstantOp(attr, loc=owner.location, ip=ir.InsertionPoint(owner))
        recorder.created(constant.operation)
        owner.result.replace_all_uses_with(constant.result)
        _log.debug("%s: evaluated into one constant [literals]", constant.location)
    for op in reversed(subgraph.ops):  # users before their operands
        if not any(_has_uses(result) for result in op.results):
            erased.add(hash(op.operation))
            op.operation.erase()
    return None


def _attr(tensor_type: ir.RankedTensorType, rounded: np.ndarray, splat: bool, location: ir.Location):
    """The new constant's attribute: a splat of the one value, or every element."""
    with location:  # where a splat's FloatAttr would report
        if splat:
            return ir.DenseElementsAttr.get_splat(
                tensor_type, ir.FloatAttr.get(tensor_type.element_type, float(rounded))
            )
        return dense_attr(rounded, tensor_type)


def _not_done(op: ir.OpView, reason: Reason) -> Reason:
    _log.debug("%s: not evaluated: %s [literals]", op.location, reason)
    return reason


def _has_uses(value: ir.Value) -> bool:
    return next(iter(value.uses), None) is not None


def _subgraph(tops: list[ir.OpView]) -> _Subgraph | Reason:
    """The ops `tops` are computed from, operands before users, when they are constants and
    ops of `EVALUATED` only (`_op_reason`); else why not."""
    ops: list[ir.OpView] = []
    keys: set[int] = set()
    pending: list[tuple[ir.OpView, bool]] = [(top, False) for top in reversed(tops)]
    while pending:
        op, expanded = pending.pop()
        key = hash(op.operation)
        if expanded:
            if key not in keys:
                keys.add(key)
                ops.append(op)
            continue
        if key in keys:
            continue
        reason = _op_reason(op)
        if reason is not None:
            return reason
        pending.append((op, True))
        for operand in op.operands:
            if not isinstance(operand.owner, ir.OpView):
                return reasons.LITERAL_READS_ARGUMENT
            pending.append((operand.owner, False))
    return _Subgraph(ops, keys, {hash(top.operation) for top in tops})


def _op_reason(op: ir.OpView) -> Reason | None:
    """Why `op` cannot be in a literal's subgraph, else None."""
    attr = dense_attr_of(op)
    if attr is not None:
        floats = float_dtype(ir.ShapedType(attr.type).element_type) is not None
        return None if floats or _exact_integers(attr) else reasons.LITERAL_CONSTANT_TYPE
    if not isinstance(op, EVALUATED) or (isinstance(op, stablehlo.ReduceOp) and _reduction(op) is None):
        return reasons.LITERAL_OP
    shaped = ir.ShapedType(op.results[0].type)
    if not shaped.has_static_shape or float_dtype(shaped.element_type) is None:
        return reasons.LITERAL_SHAPE_OR_TYPE
    return None


def _exact_integers(attr: ir.DenseElementsAttr) -> bool:
    """Integers each exact in float64 (|v| <= 2**53): torch-mlir's scalars,
    `convert(dense<1> : tensor<1xi64>)`. Only a convert reads them in a subgraph: every
    other op there has a float result and operands of its type."""
    if not isinstance(ir.ShapedType(attr.type).element_type, ir.IntegerType):
        return False
    magnitudes = np.abs(np.asarray(attr).astype(np.float64))
    return magnitudes.size == 0 or float(np.max(magnitudes)) <= 2.0**53


def _shared(subgraph: _Subgraph) -> Reason | None:
    """`LITERAL_SHARED` when a value of the subgraph with more than one element (the tops
    aside: all their readers take the constants) has a reader outside it."""
    for op in subgraph.ops:
        if hash(op.operation) in subgraph.tops:
            continue
        result = op.results[0]
        if _elements(result.type) <= 1:
            continue  # a scalar (an epsilon) stays where others read it
        for use in result.uses:
            if hash(_operation(use.owner)) not in subgraph.keys:
                return reasons.LITERAL_SHARED
    return None


def _operation(owner) -> ir.Operation:
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _values(subgraph: _Subgraph, splat: bool) -> dict[int, np.ndarray] | None:
    """The values of the subgraph's ops, by `hash(op.operation)`: layout ops move elements
    (views, in the operand's dtype), converts round to their type, the other ops compute
    in float64. With `splat`, every value is the one element of a uniform value (0-d) and
    layout ops are the identity. None where a convert's result is not finite."""
    values: dict[int, np.ndarray] = {}
    for op in subgraph.ops:
        operands = [values[hash(o.owner.operation)] for o in op.operands]
        value = _evaluate(op, operands, splat)
        if value is None:
            return None
        values[hash(op.operation)] = value
    return values


def _evaluate(op: ir.OpView, operands: list[np.ndarray], splat: bool) -> np.ndarray | None:
    """What `op` computes from `operands` (see `_values`)."""
    if not operands:
        return _read(op, splat)
    shape = ir.ShapedType(op.results[0].type).shape
    if isinstance(op, _LAYOUT) and splat:
        return operands[0]
    if isinstance(op, stablehlo.ReshapeOp):
        return np.reshape(operands[0], shape)
    if isinstance(op, stablehlo.TransposeOp):
        return np.transpose(operands[0], dimensions(op.permutation))
    if isinstance(op, stablehlo.BroadcastInDimOp):
        dims = dimensions(op.broadcast_dimensions)
        return broadcast_in_dim_array(operands[0], dims, shape)
    if isinstance(op, stablehlo.ConvertOp):
        dtype = float_dtype(ir.ShapedType(op.result.type).element_type)
        return _rounded(dtype, operands[0])
    wide = [np.asarray(o, dtype=np.float64) for o in operands]
    with np.errstate(all="ignore"):  # a value not finite is refused where it is rounded
        if isinstance(op, stablehlo.ReduceOp):
            return _reduced(op, *wide, splat)
        if isinstance(op, stablehlo.DotGeneralOp):
            return _dot_general(op, *wide)
        ufunc = UNARY_UFUNC.get(type(op)) or BINARY_UFUNC.get(type(op)) or _EXTREMA[type(op)]
        return np.asarray(ufunc(*wide), dtype=np.float64)


def _reduction(op: stablehlo.ReduceOp) -> np.ufunc | None:
    """The ufunc a `reduce` of one operand computes (`_REDUCTIONS`), else None."""
    if len(op.inputs) != 1 or len(op.results) != 1:
        return None
    return _REDUCTIONS.get(_binary_body(op.body, tuple(_REDUCTIONS)))


def _reduced(op: stablehlo.ReduceOp, values: np.ndarray, init: np.ndarray, splat: bool) -> np.ndarray:
    """init (*) the reduction of `values` over the op's dimensions, in float64. A splat
    operand reduces to its element combined once per element reduced (n x v for a sum)."""
    ufunc = _reduction(op)
    reduced = tuple(dimensions(op.dimensions))
    if splat:
        count = math.prod(ir.RankedTensorType(op.inputs[0].type).shape[d] for d in reduced)
        if ufunc is np.add:
            return np.asarray(init + count * values)
        if ufunc is np.multiply:
            return np.asarray(init * values**count)
        return np.asarray(ufunc(init, values)) if count else np.asarray(init)
    return np.asarray(ufunc(init, ufunc.reduce(values, axis=reduced)), dtype=np.float64)


def _dot_general(op: stablehlo.DotGeneralOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`dot_general(lhs, rhs)` in float64: the batch dimensions, then lhs's and rhs's
    others, in order (StableHLO's result layout)."""
    numbers = stablehlo.DotDimensionNumbers(op.dot_dimension_numbers)
    lb, rb = list(numbers.lhs_batching_dimensions), list(numbers.rhs_batching_dimensions)
    lc, rc = list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    left = [next(letters) for _ in range(lhs.ndim)]
    right = [next(letters) for _ in range(rhs.ndim)]
    for l, r in (*zip(lb, rb), *zip(lc, rc)):
        right[r] = left[l]
    out = [left[d] for d in lb]
    out += [left[d] for d in range(lhs.ndim) if d not in lb and d not in lc]
    out += [right[d] for d in range(rhs.ndim) if d not in rb and d not in rc]
    return np.einsum(f"{''.join(left)},{''.join(right)}->{''.join(out)}", lhs, rhs)


def _read(op: ir.OpView, splat: bool) -> np.ndarray:
    """A constant's values: floats in their own dtype (a view), integers exactly in
    float64 (a convert reads them); with `splat`, its first element only (0-d)."""
    attr = dense_attr_of(op)
    values = read_dense(attr)
    if values is None:  # integers, exact in float64 (a splat may be one element)
        values = np.asarray(attr).astype(np.float64)
        if attr.is_splat and not splat:
            shape = tuple(ir.ShapedType(attr.type).shape)
            return np.broadcast_to(values.reshape(-1)[0], shape)
    return np.asarray(values.reshape(-1)[0]) if splat else values


_BLOCK = 1 << 20
"""Elements rounded at a time: `round_to`'s float64 temporaries stay a few MiB for any
size of weights."""


def _rounded(dtype: np.dtype, values: np.ndarray) -> np.ndarray | None:
    """`values` rounded once to `dtype` (`round_to`, a block at a time); None where one is
    not finite there. Values already of `dtype` are only checked."""
    if values.dtype == dtype:
        return values if np.isfinite(values).all() else None
    if values.size <= _BLOCK:
        return round_to(dtype, values)
    flat = np.reshape(values, -1)
    out = np.empty(flat.shape, dtype=dtype)
    for start in range(0, flat.size, _BLOCK):
        block = round_to(dtype, flat[start : start + _BLOCK])
        if block is None:
            return None
        out[start : start + _BLOCK] = block
    return out.reshape(values.shape)


def _splat(subgraph: _Subgraph) -> bool | Reason:
    """Whether the new constants are written as splats: False when their elements fit in
    the bytes of the constants that go with the subgraph; True when, for one value, only
    one element does and every constant it reads is uniform (a splat or a single element,
    so that no element is ever materialized: a 40 GB splat kernel stays a few bytes); else
    `LITERAL_LARGER`."""
    tops = [ir.ShapedType(op.results[0].type) for op in subgraph.ops if hash(op.operation) in subgraph.tops]
    sizes = [_elements(shaped) * float_dtype(shaped.element_type).itemsize for shaped in tops]
    freed = _freed_bytes(subgraph)
    if sum(sizes) <= freed:
        return False
    leaves = [op for op in subgraph.ops if not op.operands]
    itemsize = float_dtype(tops[0].element_type).itemsize
    if len(tops) == 1 and itemsize <= freed and all(_uniform(op) for op in leaves):
        return True
    return reasons.LITERAL_LARGER


def _uniform(constant: ir.OpView) -> bool:
    attr = dense_attr_of(constant)
    return attr.is_splat or _elements(attr.type) <= 1


def _elements(shaped: ir.Type) -> int:
    return math.prod(ir.ShapedType(shaped).shape)  # (np.prod costs 10 us a call)


def _freed_bytes(subgraph: _Subgraph) -> int:
    """The bytes of the subgraph's constants that no op outside it reads (a splat counts
    one element): what goes when the tops are replaced."""
    staying: set[int] = set()
    freed = 0
    for op in reversed(subgraph.ops):
        if hash(op.operation) in subgraph.tops:
            continue
        # Only a scalar may have readers outside (`_shared`); whatever such a reader
        # reads stays with it.
        outside = _elements(op.results[0].type) <= 1 and any(
            hash(_operation(use.owner)) not in subgraph.keys for use in op.results[0].uses
        )
        if outside or (staying and _read_by(op, staying)):
            staying.add(hash(op.operation))
            continue
        attr = dense_attr_of(op)
        if attr is not None:
            count = 1 if attr.is_splat else _elements(attr.type)
            freed += count * max(1, ir.ShapedType(attr.type).element_type.width // 8)
    return freed


def _read_by(op: ir.OpView, ops: set[int]) -> bool:
    """Whether an op of `ops` reads `op`'s result."""
    return any(hash(_operation(use.owner)) in ops for use in op.results[0].uses)
