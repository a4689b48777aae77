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
from ..analysis.walk import ops_named
from ..constants import (
    broadcast_in_dim_array,
    dense_attr,
    dense_attr_of,
    dimensions,
    float_dtype,
    read_dense,
    round_to,
)
from ..report import Recorder, op_key
from . import reasons
from .affine_map import LINEAR_NAMES, LINEAR_OPS
from .reasons import Reason

__all__ = ["EVALUATED", "LITERAL_NAMES", "evaluate_literals", "float64_value"]

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


def evaluate_literals(root: ir.Operation, recorder: Recorder, ops: list[ir.Operation] | None = None) -> bool:
    """Replace, in every function under `root`, each operand of a linear op and each value
    a bias add after one broadcasts (`broadcast_in_dim`, or `dynamic_broadcast_in_dim`
    with a symbolic batch) that is computed from constants alone by one constant, where
    the conditions of this module's docstring hold. `ops`: the ops named `LITERAL_NAMES`
    under `root` in walk order, where the caller has them (`analysis.walk.ops_named`).
    Whether it replaced any (and so changed the IR).

    >>> evaluate_literals(module.operation, recorder)   # doctest: +SKIP
    """
    if ops is None:
        (ops,) = ops_named(root, LITERAL_NAMES)
    linear = [(hash(op), op.opview) for op in ops if op.name in LINEAR_NAMES]
    # With the debug log on, every value is tried, so that it names each refusal.
    computed = None if _log.isEnabledFor(logging.DEBUG) else _from_constants(ops)
    if computed is not None and not any(_read_as_a_literal(op) for op in computed.values()):
        return False  # no value it would try is computed from constants alone
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
            if _evaluate_value(op.operands[index], recorder, erased, computed) is reasons.LITERAL_SHARED:
                shared.append(op.operands[index])
        for add, index in _bias_adds(op.result):
            bias = add.operands[index]
            owner = bias.owner
            if isinstance(owner, _BROADCASTS):  # its shape operand is not a value
                bias = owner.operand
            if _evaluate_value(bias, recorder, erased, computed) is reasons.LITERAL_SHARED:
                shared.append(bias)
        if len(shared) > 1:
            # The weights and the bias of one layer computed from the same constants (an
            # input-side fold's K * s and its bias contracted from K): evaluated together,
            # the constants they share go with both.
            _evaluate_value(shared, recorder, erased, computed)
    return bool(erased)  # (an evaluation erases at least the ops of its values)


_CONSTANT_NAMES = frozenset({stablehlo.ConstantOp.OPERATION_NAME, "arith.constant"})

LITERAL_NAMES = LINEAR_NAMES | _CONSTANT_NAMES
"""The ops `evaluate_literals` reads: the linear ops whose operands and biases it
evaluates, and the constants they may be computed from."""


def _from_constants(ops: list[ir.Operation]) -> dict[int, ir.OpView]:
    """The ops of `EVALUATED` that the constants among `ops` alone compute, by address
    (`op_key`): each such op's every operand is a constant or another of them, found
    by following the constants' uses. A value `_subgraph` takes is a constant's or one of
    theirs (each op of a subgraph is a constant, or of `EVALUATED` with every operand in
    it); any other value is refused without walking its producers (in a network whose
    weights are arguments, that is all of them)."""
    pending = [op for op in ops if op.name in _CONSTANT_NAMES]
    operands_in: dict[int, int] = {}  # of each op reached, by address: its operands in
    computed: dict[int, ir.OpView] = {}
    while pending:
        for result in pending.pop().results:
            for use in result.uses:
                user = use.owner
                if type(user) not in _EVALUATED:
                    continue
                key = op_key(user.operation)
                count = operands_in[key] = operands_in.get(key, 0) + 1
                if count == len(user.operands):
                    computed[key] = user
                    pending.append(user)
    return computed


def _read_as_a_literal(op: ir.OpView) -> bool:
    """Whether `evaluate_literals` may try `op`'s result: a linear op reads it, or a bias
    add after one (`_bias_adds`) adds it, or (when `op` is no broadcast) adds a broadcast
    of it."""
    broadcast = type(op) in _BROADCAST_CLASSES
    for use in op.results[0].uses:
        user = use.owner
        kind = type(user)
        if kind in _LINEAR_CLASSES:
            return True
        if kind is stablehlo.AddOp and not broadcast and _adds_to_a_linear_op(user, use.operand_number):
            return True
        if kind in _BROADCAST_CLASSES and any(
            type(u.owner) is stablehlo.AddOp and _adds_to_a_linear_op(u.owner, u.operand_number)
            for u in user.results[0].uses
        ):
            return True
    return False


def _adds_to_a_linear_op(add: stablehlo.AddOp, index: int) -> bool:
    """Whether the add's other operand than `index` is a linear op's result, seen through
    reshapes (`_bias_adds` found it from there)."""
    value = add.operands[1 - index]
    while type(value.owner) is stablehlo.ReshapeOp:
        value = value.owner.operand
    return type(value.owner) in _LINEAR_CLASSES


_LINEAR_CLASSES = frozenset(LINEAR_OPS)


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
_BROADCAST_CLASSES = frozenset(_BROADCASTS)


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


@dataclass(slots=True)
class _Node:
    """One op of a subgraph, read once for every phase that asks (`_shared`, `_staying`,
    `_splat`, `_values`, the erasing): the keys of its operands' ops, its result and type."""

    op: ir.OpView
    key: int
    """`hash(op.operation)`."""
    operands: list[int]
    """The keys of the ops its operands are results of, in operand order."""
    result: ir.Value
    shaped: ir.ShapedType
    """The result's type."""
    elements: int
    dtype: np.dtype | None
    """Its element type's (None: integers, which only a constant holds)."""
    attr: ir.DenseElementsAttr | None
    """A constant's value; None for the other ops."""


@dataclass
class _Subgraph:
    """The ops values are computed from, operands before users; the values' own (the
    tops) among them."""

    nodes: dict[int, _Node]
    """Each op's node by its key, operands before users."""
    tops: set[int]
    """The keys of the ops whose values are replaced."""
    reads: dict[int, int]
    """Per key, how many operands of the subgraph's ops read that op's result: fewer than
    its uses where an op outside the subgraph reads it too."""


def _evaluate_value(
    value: ir.Value | list[ir.Value], recorder: Recorder, erased: set[int], computed: set[int] | None = None
) -> Reason | None:
    """Replace `value` (or each of a list of values, together) by one constant where this
    module's conditions hold, adding to `erased` each op it erases; else why not (None
    where there is nothing to say: an argument, a constant, or with `computed` (the
    addresses of `_from_constants`) a value whose op is not one of them)."""
    values = value if isinstance(value, list) else [value]
    owners = [v.owner for v in values]
    for owner in owners:
        if not isinstance(owner, ir.OpView) or dense_attr_of(owner) is not None:
            return None  # an argument (data or weights passed in) or a literal already
    if type(owners[0]) not in _EVALUATED:  # (the first op `_subgraph` would refuse)
        return _not_done(owners[0], reasons.LITERAL_OP)
    if computed is not None and any(op_key(owner.operation) not in computed for owner in owners):
        return None  # `_subgraph` would refuse it (it reads an argument, or another op)
    subgraph = _subgraph(owners)
    if isinstance(subgraph, Reason):
        return _not_done(owners[0], subgraph)
    reason = _shared(subgraph)
    if reason is not None:
        return _not_done(owners[0], reason)
    staying = _staying(subgraph)
    splat = _splat(subgraph, staying)
    if isinstance(splat, Reason):
        return _not_done(owners[0], splat)
    computed = _values(subgraph, splat)
    constants = []
    for owner in owners:
        node = subgraph.nodes[hash(owner.operation)]
        tensor_type = ir.RankedTensorType(node.shaped)
        rounded = None if computed is None else _rounded(node.dtype, computed[node.key])
        if rounded is None:
            return _not_done(owner, reasons.LITERAL_NOT_FINITE)
        location = owner.location
        constants.append((owner, location, _attr(tensor_type, rounded, splat, location)))
    for owner, location, attr in constants:
        constant = stablehlo.ConstantOp(attr, loc=location, ip=ir.InsertionPoint(owner))
        recorder.created(constant.operation)
        owner.result.replace_all_uses_with(constant.result)
        _log.debug("%s: evaluated into one constant [literals]", constant.location)
    # With the tops' readers gone, an op has none left unless it stays (`_staying`).
    for node in reversed(subgraph.nodes.values()):  # users before their operands
        if node.key not in staying:
            erased.add(node.key)
            node.op.operation.erase()
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


def _uses(value: ir.Value) -> int:
    return len(list(value.uses))


def _subgraph(tops: list[ir.OpView]) -> _Subgraph | Reason:
    """The ops `tops` are computed from, operands before users, when they are constants and
    ops of `EVALUATED` only (`_node`); else why not."""
    nodes: dict[int, _Node] = {}
    reads: dict[int, int] = {}
    types: dict[ir.Type, tuple] = {}
    keys = [hash(top.operation) for top in tops]
    pending: list[tuple[ir.OpView, int, _Node | None]] = [
        (top, key, None) for top, key in zip(reversed(tops), reversed(keys))
    ]
    while pending:
        op, key, node = pending.pop()
        if node is not None:  # the ops of its operands are in
            if key not in nodes:
                nodes[key] = node
                for operand in node.operands:
                    reads[operand] = reads.get(operand, 0) + 1
            continue
        if key in nodes:
            continue
        node = _node(op, key, types)
        if type(node) is not _Node:
            return node
        pending.append((op, key, node))
        for operand in op.operands:
            owner = operand.owner
            if not isinstance(owner, ir.OpView):
                return reasons.LITERAL_READS_ARGUMENT
            operand_key = hash(owner)  # (an OpView hashes as its operation)
            node.operands.append(operand_key)
            pending.append((owner, operand_key, None))
    return _Subgraph(nodes, set(keys), reads)


_EVALUATED = frozenset(EVALUATED)


def _node(op: ir.OpView, key: int, types: dict[ir.Type, tuple]) -> _Node | Reason:
    """`op`'s node (its operands not yet read), else why it cannot be in a literal's
    subgraph. `types` holds each type `_type` read."""
    kind = type(op)  # (a set of classes costs less than isinstance with a tuple)
    if kind not in _EVALUATED:
        attr = dense_attr_of(op)
        if attr is None:
            return reasons.LITERAL_OP
        shaped, elements, dtype = _type(attr.type, types)
        if dtype is None and not _exact_integers(attr):
            return reasons.LITERAL_CONSTANT_TYPE
        return _Node(op, key, [], op.results[0], shaped, elements, dtype, attr)
    if kind is stablehlo.ReduceOp and _reduction(op) is None:
        return reasons.LITERAL_OP
    result = op.results[0]
    shaped, elements, dtype = _type(result.type, types)
    if elements < 0 or dtype is None:
        return reasons.LITERAL_SHAPE_OR_TYPE
    return _Node(op, key, [], result, shaped, elements, dtype, None)


def _type(type_: ir.Type, types: dict[ir.Type, tuple]) -> tuple[ir.ShapedType, int, np.dtype | None]:
    """`type_` as a shaped type, its number of elements (-1 where its shape is dynamic) and
    `float_dtype`; each read once per subgraph (most of its ops have one type)."""
    known = types.get(type_)
    if known is None:
        shaped = ir.ShapedType(type_)
        elements = math.prod(shaped.shape) if shaped.has_static_shape else -1
        known = types[type_] = (shaped, elements, float_dtype(shaped.element_type))
    return known


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
    for node in subgraph.nodes.values():
        if node.key in subgraph.tops or node.elements <= 1:
            continue  # a scalar (an epsilon) stays where others read it
        if _uses(node.result) != subgraph.reads[node.key]:
            return reasons.LITERAL_SHARED
    return None


def _staying(subgraph: _Subgraph) -> set[int]:
    """The keys of the subgraph's ops that stay when the tops are replaced: a scalar an op
    outside reads (only a scalar may have readers outside, `_shared`), and every op such
    an op reads; the others go."""
    staying: set[int] = set()
    read: set[int] = set()  # by an op that stays
    for node in reversed(subgraph.nodes.values()):  # users before their operands
        if node.key in subgraph.tops:
            continue
        outside = node.elements <= 1 and _uses(node.result) != subgraph.reads[node.key]
        if outside or node.key in read:
            staying.add(node.key)
            read.update(node.operands)
    return staying


def _values(subgraph: _Subgraph, splat: bool) -> dict[int, np.ndarray] | None:
    """The values of the subgraph's ops, by key: layout ops move elements (views, in the
    operand's dtype), converts round to their type, the other ops compute in float64.
    With `splat`, every value is the one element of a uniform value (0-d) and layout ops
    are the identity. None where a convert's result is not finite."""
    values: dict[int, np.ndarray] = {}
    with np.errstate(all="ignore"):  # a value not finite is refused where it is rounded
        for node in subgraph.nodes.values():
            if node.attr is not None:
                value = _read(node.attr, splat)
            else:
                value = _evaluate(node, [values[key] for key in node.operands], splat)
            if value is None:
                return None
            values[node.key] = value
    return values


_UFUNCS = {**_EXTREMA, **BINARY_UFUNC, **UNARY_UFUNC}


def _evaluate(node: _Node, operands: list[np.ndarray], splat: bool) -> np.ndarray | None:
    """What `node`'s op, not a constant, computes from `operands` (see `_values`)."""
    op, kind = node.op, type(node.op)
    if kind in _LAYOUT and splat:
        return operands[0]
    if kind is stablehlo.ReshapeOp:
        return np.reshape(operands[0], node.shaped.shape)
    if kind is stablehlo.TransposeOp:
        return np.transpose(operands[0], dimensions(op.permutation))
    if kind is stablehlo.BroadcastInDimOp:
        dims = dimensions(op.broadcast_dimensions)
        return broadcast_in_dim_array(operands[0], dims, node.shaped.shape)
    if kind is stablehlo.ConvertOp:
        return _rounded(node.dtype, operands[0])
    wide = [np.asarray(o, dtype=np.float64) for o in operands]
    if kind is stablehlo.ReduceOp:
        return _reduced(op, *wide, splat)
    if kind is stablehlo.DotGeneralOp:
        return _dot_general(op, *wide)
    return np.asarray(_UFUNCS[kind](*wide), dtype=np.float64)


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


def _read(attr: ir.DenseElementsAttr, splat: bool) -> np.ndarray:
    """A constant's values: floats in their own dtype (a view), integers exactly in
    float64 (a convert reads them); with `splat`, its first element only (0-d)."""
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


def _splat(subgraph: _Subgraph, staying: set[int]) -> bool | Reason:
    """Whether the new constants are written as splats: False when their elements fit in
    the bytes of the constants that go with the subgraph (those not `staying`); True
    when, for one value, only one element does and every constant it reads is uniform (a
    splat or a single element, so that no element is ever materialized: a 40 GB splat
    kernel stays a few bytes); else `LITERAL_LARGER`."""
    tops = [subgraph.nodes[key] for key in subgraph.tops]
    freed = _freed_bytes(subgraph, staying)
    if sum(top.elements * top.dtype.itemsize for top in tops) <= freed:
        return False
    leaves = [node for node in subgraph.nodes.values() if not node.operands]
    itemsize = tops[0].dtype.itemsize
    if len(tops) == 1 and itemsize <= freed and all(_uniform(node) for node in leaves):
        return True
    return reasons.LITERAL_LARGER


def _uniform(constant: _Node) -> bool:
    return constant.attr.is_splat or constant.elements <= 1


def _itemsize(constant: _Node) -> int:
    if constant.dtype is not None:
        return constant.dtype.itemsize
    return max(1, constant.shaped.element_type.width // 8)  # integers: i1 counts a byte


def _freed_bytes(subgraph: _Subgraph, staying: set[int]) -> int:
    """The bytes of the subgraph's constants that go when the tops are replaced (a splat
    counts one element)."""
    freed = 0
    for node in subgraph.nodes.values():
        if node.attr is not None and node.key not in staying and node.key not in subgraph.tops:
            count = 1 if node.attr.is_splat else node.elements
            freed += count * _itemsize(node)
    return freed
