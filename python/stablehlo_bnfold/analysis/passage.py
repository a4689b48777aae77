"""How an op may be each kind of op a per-channel map passes, and why one cannot be passed:
the recognizers and refusal checks the rows of `analysis.commuting.TABLE` name (the table,
the walks' API and the identities are there).

- `called_maximum`, `is_max_pool`, `max_pool_refused`, `window_may_be_empty`: a relu
  call, a max-pool and why the scale cannot pass one (where the scale passes a
  max-pool, the shift does too); `relu_refused`: a maximum that is no relu;
- `is_sum_pool`, `sum_pool_refused`, `sum_pool_taps`, `sum_reduce`, `reduce_body`,
  `reduce_refused`, `reduced_elements`, `divides_sum_pool_by_map`,
  `pool_divisor_refused`: a sum pool, its divide by a count map and a `reduce` sum or
  maximum, why one cannot be passed, how many elements a shift meets in one;
- `leaky_relu_data`, `called_leaky_relu`: how an op may be a leaky relu, select(v >= 0,
  v, a * v), inline or a call of one;
- `called_relu6`, `clamp_bound_f64`: a call of a relu6 and a clamp's bounds, as float64
  per channel; `activation_data`: the data of a clamp, relu, relu6 call or leaky relu;
  `pad_refused`: a pad a scale would change; `sliced_channels`: the channels a slice
  keeps; `identity_broadcast`: a dynamic broadcast onto its operand's own shape;
- `called_body`: the body of the function a call calls, looked up once a pass run inside
  `callees_read_once`; `called_reads`: what the call rows read of it, one look-up for
  all of them.

`Passed`, `passed_by`, `feature_below` and `PASSAGE_OPS` are `analysis.commuting`'s, read
here too for the callers of this module's earlier API.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import cache
from typing import NamedTuple, TypeVar

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from ..constants import constant_f64, dimensions, float_dtype
from ..fold import reasons
from ..fold.affine_map import NOT_FUNCTIONS_OF_OPERANDS, computed_from_constants
from ..fold.reasons import Reason
from ..report import op_key
from .per_channel import per_channel_f64, uniform_f64
from .shapes import broadcasts_onto_own_shape
from .users import single_user

__all__ = [
    "CalleeReads",
    "activation_data",
    "argument_number",
    "binary_body",
    "called_body",
    "called_maximum",
    "called_reads",
    "called_relu6",
    "callee_body",
    "called_leaky_relu",
    "callees_read_once",
    "clamp_bound_f64",
    "divides_sum_pool_by_map",
    "identity_broadcast",
    "is_max_pool",
    "is_sum_pool",
    "leaky_relu_data",
    "max_pool_refused",
    "pad_refused",
    "pool_divisor_refused",
    "pure_callee",
    "read_once_a_run",
    "reduce_body",
    "reduce_refused",
    "reduced_elements",
    "relu_refused",
    "sliced_channels",
    "sum_pool_refused",
    "sum_pool_taps",
    "sum_reduce",
    "window_may_be_empty",
]

_FROM_TABLE = ("PASSAGE_OPS", "Passed", "feature_below", "passed_by")


def __getattr__(name: str):
    """`analysis.commuting`'s names this module held before the table (it reads this
    module: imported on first use)."""
    if name in _FROM_TABLE:
        from . import commuting

        return getattr(commuting, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def identity_broadcast(op: stablehlo.DynamicBroadcastInDimOp) -> bool:
    """Whether `op` broadcasts its operand onto the operand's own shape, to its own type
    (`analysis.shapes.broadcasts_onto_own_shape`): torch-mlir's step before an elementwise
    op with a symbolic batch, which changes nothing."""
    return op.result.type == op.operand.type and broadcasts_onto_own_shape(op)


def sliced_channels(op: stablehlo.SliceOp, feature: int, channels: int) -> np.ndarray | None:
    """The channels of `op`'s operand along `feature` (`channels` of them) that the slice
    keeps, in order (`np.arange(start, limit, stride)`); None when it keeps all of them.

    >>> sliced_channels(slice(v, [0, 2], [4, 8], [1, 1]), feature=1, channels=8)  # doctest: +SKIP
    array([2, 3, 4, 5, 6, 7])
    """
    start = dimensions(op.start_indices)[feature]
    limit = dimensions(op.limit_indices)[feature]
    stride = dimensions(op.strides)[feature]
    return None if (start, limit, stride) == (0, channels, 1) else np.arange(start, limit, stride)


def activation_data(op: ir.OpView) -> ir.Value | None:
    """The data operand of `op` when it is a clamp, a call of a relu (`called_maximum`),
    of a relu6 (`called_relu6`) or a leaky relu (`leaky_relu_data`); else None. Every
    linear op reading a call comes here: the callee is looked up once for all of them
    and read once a pass run (`called_reads`), not on every visit."""
    if isinstance(op, stablehlo.ClampOp):
        return op.operand
    if not isinstance(op, func.CallOp):
        return leaky_relu_data(op)
    found = called_reads(op)
    if found is None:
        return None
    if found.relu:
        called = _maximum_of(op, found.relu)
        return None if called is None else called[0]
    if found.relu6 or found.leaky is not None:
        data = op.operands[found.relu6[0][0] if found.relu6 else found.leaky[0]]
        return data if data.type == op.results[0].type else None
    # jax's `_where`: an inline leaky relu, read from the call's operands.
    return leaky_relu_data(op) if found.where else None


class CalleeReads(NamedTuple):
    """What the call rows of `analysis.commuting.TABLE` read of a function's body
    (`called_reads`), each empty where the body is not that: `relu`, (argument number of
    v, z) for each way it returns `maximum(v, z)` (`_relu_arguments`); `relu6`, (argument
    number of v, lo, hi) for each way it returns `minimum(maximum(v, lo), hi)`
    (`_relu6_bounds`); `leaky`, (argument number of v,) where it returns a leaky relu of
    v (`_leaky_argument`), else None; `where`, whether it returns the select of its last
    three arguments (jax's `_where`). A body returns one value, of one op: a maximum, a
    minimum or a select, so at most one of them is not empty."""

    relu: list[tuple[int, ir.Value]]
    relu6: list[tuple[int, float, float]]
    leaky: tuple[int] | None
    where: bool

    @property
    def activation(self) -> bool:
        """Whether the body returns a relu, a relu6 or a leaky relu of an argument (what
        `called_maximum`, `called_relu6` and `called_leaky_relu` read)."""
        return bool(self.relu or self.relu6 or self.leaky is not None)


def called_reads(call: func.CallOp) -> CalleeReads | None:
    """What the call rows read of the function `call` calls (`CalleeReads`), when it has
    one block returning one value and takes as many arguments as the call passes; else
    None. One look-up of the callee for all of them, its body read once a pass run inside
    `callees_read_once`."""
    found = _looked_up(call, "reads", _read_callee)
    if found is None or found[1] != len(call.operands):
        return None
    return found[0]


def _read_callee(function: func.FuncOp | None) -> tuple[CalleeReads, int] | None:
    """`function`'s `CalleeReads` and its number of arguments; None where it has no `_body`."""
    body = _body(function)
    if body is None:
        return None
    block, returned, count = body
    reads = CalleeReads(
        _relu_arguments(block, returned), _relu6_bounds(block, returned),
        _leaky_argument(block, returned), _selects_last_three(block, returned),
    )
    return reads, count


def pad_refused(pad: stablehlo.PadOp, feature: int) -> Reason | None:
    """Why a per-channel map cannot pass `pad`: its padding value is not zero (a scale would
    change it), or it pads along `feature`."""
    padding = uniform_f64(pad.padding_value)
    if padding is None or padding != 0:
        return reasons.PAD_NOT_ZERO
    names = ("edge_padding_low", "edge_padding_high", "interior_padding")
    along = [dimensions(getattr(pad, name))[feature] for name in names]
    if any(along):
        return reasons.PAD_SPANS_FEATURE
    return None


def relu_refused(zero: ir.Value, feature: int, channels: int) -> Reason | None:
    """Why a maximum whose other operand is `zero` is no relu along `feature` (of
    `channels` channels): `zero` is not a constant zero on every channel."""
    zeros = per_channel_f64(zero, feature, channels)
    if zeros is None or np.any(zeros):
        return reasons.MAXIMUM_NOT_RELU
    return None


def is_max_pool(op: stablehlo.ReduceWindowOp) -> bool:
    """Whether `op` reduces one operand with a body that returns `maximum` of its two
    arguments."""
    if len(op.inputs) != 1 or len(op.results) != 1:
        return False
    return binary_body(op.body, (stablehlo.MaxOp,)) is stablehlo.MaxOp


def binary_body(region: ir.Region, classes: tuple[type, ...]) -> type | None:
    """The class, among `classes`, of the one op of a reduction's body that combines its
    two arguments and is returned; None for any other body."""
    if len(region.blocks) != 1:
        return None
    block = region.blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or not isinstance(ops[0], classes):
        return None
    if len(ops[1].operands) != 1 or ops[1].operands[0] != ops[0].result:
        return None
    numbers = {argument_number(ops[0].lhs, block), argument_number(ops[0].rhs, block)}
    return type(ops[0]) if numbers == {0, 1} else None


def argument_number(value: ir.Value, block: ir.Block) -> int | None:
    """`value`'s position among `block`'s arguments; None if it is not one of them."""
    if isinstance(value, ir.BlockArgument) and value.owner == block:
        return value.arg_number
    return None


def max_pool_refused(pool: stablehlo.ReduceWindowOp, feature: int) -> Reason | None:
    """Why the scale cannot pass `pool`, a max-pool: an init value (the padding, and each
    maximum's start) other than -inf or the lowest value, which scaling would move off the
    maximum's identity; the lowest finite value where a window may hold padding alone
    (`window_may_be_empty`), whose maximum is that value, not that value times s; or a
    window that mixes or skips channels along `feature`."""
    init = uniform_f64(pool.init_values[0])
    if not _is_lowest(init, pool.results[0]):
        return reasons.POOL_INIT_NOT_LOWEST
    if init != -np.inf and window_may_be_empty(pool):
        return reasons.POOL_LOWEST_SCALED
    return reasons.POOL_SPANS_FEATURE if _window_spans(pool, feature) else None


def window_may_be_empty(pool: stablehlo.ReduceWindowOp) -> bool:
    """Whether some window of `pool` reads no element of its operand, only padding or the
    holes of a base dilation (a dynamic size: it may). A window is empty when, along some
    dimension, none of its taps lands on an element: checked tap by tap for every window
    position along each dimension."""
    shaped = ir.RankedTensorType(pool.inputs[0].type)
    attributes = pool.operation.attributes
    rank = shaped.rank
    windows = dimensions(pool.window_dimensions)
    strides, base, dilation = ([1] * rank if name not in attributes else dimensions(attributes[name])
                               for name in ("window_strides", "base_dilations", "window_dilations"))
    padding = [[0, 0]] * rank
    if "padding" in attributes:
        padding = np.array(ir.DenseIntElementsAttr(attributes["padding"])).reshape(-1, 2).tolist()
    for d in range(rank):
        if shaped.is_dynamic_dim(d):
            return True
        if _empty_along(shaped.shape[d], windows[d], strides[d], base[d], dilation[d], *padding[d]):
            return True
    return False


def _empty_along(size: int, window: int, stride: int, base: int, dilation: int, low: int, high: int) -> bool:
    """Whether along one dimension some window position reads no element: the operand's
    `size` elements sit `base` apart after `low` padding, the window's `window` taps
    `dilation` apart, its positions `stride` apart."""
    dilated = (size - 1) * base + 1 if size else 0
    extent = (window - 1) * dilation + 1
    padded = low + dilated + high
    if padded < extent:
        return False  # no window at all
    for start in range(0, padded - extent + 1, stride):
        taps = (start + k * dilation - low for k in range(window))
        if not any(0 <= q < dilated and q % base == 0 for q in taps):
            return True
    return False


def is_sum_pool(op: stablehlo.ReduceWindowOp) -> bool:
    """Whether `op` reduces one operand with a body that returns `add` of its two
    arguments (a sum pool; an average pool is one followed by a divide)."""
    if len(op.inputs) != 1 or len(op.results) != 1:
        return False
    return binary_body(op.body, (stablehlo.AddOp,)) is stablehlo.AddOp


def sum_pool_refused(pool: stablehlo.ReduceWindowOp, feature: int) -> Reason | None:
    """Why a per-channel map cannot pass `pool`, a sum pool: an init value (the padding,
    and each sum's start) other than 0, which a scale would change (sum(v) * s + c * s is
    not c + sum(v * s)); or a window that mixes or skips channels along `feature`."""
    if uniform_f64(pool.init_values[0]) != 0:
        return reasons.SUM_POOL_INIT_NOT_ZERO
    return reasons.SUM_POOL_SPANS_FEATURE if _window_spans(pool, feature) else None


def sum_pool_taps(pool: stablehlo.ReduceWindowOp) -> float | None:
    """How many elements of its operand each window of `pool` adds: the window's size,
    when neither padding nor base dilation puts the init value in a window; None where
    they do (a shift t would be added once per element of the operand in it, a number
    that differs from window to window: the shift cannot pass)."""
    attributes = pool.operation.attributes
    if "padding" in attributes and np.any(np.array(ir.DenseIntElementsAttr(attributes["padding"]))):
        return None
    if "base_dilations" in attributes and any(n != 1 for n in dimensions(attributes["base_dilations"])):
        return None
    return float(np.prod(dimensions(pool.window_dimensions)))


def _window_spans(pool: stablehlo.ReduceWindowOp, feature: int) -> bool:
    """Whether `pool`'s window, stride, base dilation or padding along `feature` mixes,
    skips or pads channels (anything but one, one, one and none)."""
    attributes = pool.operation.attributes
    along = [dimensions(pool.window_dimensions)[feature]]
    for name in ("window_strides", "base_dilations"):
        if name in attributes:
            along.append(dimensions(attributes[name])[feature])
    padding = [0, 0]
    if "padding" in attributes:
        padding = np.array(ir.DenseIntElementsAttr(attributes["padding"])).reshape(-1, 2)[feature].tolist()
    return any(n != 1 for n in along) or padding != [0, 0]


def divides_sum_pool_by_map(op: stablehlo.DivOp) -> bool:
    """Whether `op` divides a sum pool by a value that is not one scalar (an average
    pool's per-position count, `count_include_pad=False`). A scalar divisor is a
    per-channel factor: a chain takes it in (both directions read it here)."""
    pool = op.lhs.owner
    if not isinstance(pool, stablehlo.ReduceWindowOp) or not is_sum_pool(pool):
        return False
    return uniform_f64(op.rhs) is None


def pool_divisor_refused(divisor: ir.Value, feature: int) -> Reason | None:
    """Why an average pool's divisor m does not pass a per-channel scale, (v / m) * s = (v *
    s) / m: it is computed from the data (not only constants and sum pools of them), or
    it varies along `feature` (not a broadcast of a value one element wide there, nor a
    constant equal across it)."""
    source, along = divisor, feature
    if isinstance(source.owner, stablehlo.BroadcastInDimOp):
        dims = dimensions(source.owner.broadcast_dimensions)
        source = source.owner.operand
        along = dims.index(feature) if feature in dims else None
    data = source.owner.inputs[0] if isinstance(source.owner, stablehlo.ReduceWindowOp) else source
    if isinstance(source.owner, stablehlo.ReduceWindowOp) and not is_sum_pool(source.owner):
        return reasons.DIVISOR_FROM_DATA
    if not computed_from_constants(data):
        return reasons.DIVISOR_FROM_DATA
    if along is None or ir.RankedTensorType(source.type).shape[along] == 1:
        return None
    values = constant_f64(source)
    if values is None or np.any(values != np.take(values, [0], axis=along)):
        return reasons.DIVISOR_ALONG_FEATURE
    return None


def sum_reduce(op: stablehlo.ReduceOp) -> ir.Value | None:
    """The operand of `op` when it is a sum of one operand over some dimensions (a body
    that returns `add` of its two arguments: a global average pool, a mean, before its
    divide); else None."""
    if len(op.inputs) != 1 or len(op.results) != 1:
        return None
    return op.inputs[0] if binary_body(op.body, (stablehlo.AddOp,)) is stablehlo.AddOp else None


def reduced_elements(op: stablehlo.ReduceOp) -> float | None:
    """How many elements of its operand each result element of `op` reduces: the sizes
    of the dimensions it reduces multiplied; None when one is dynamic."""
    shaped = ir.RankedTensorType(op.inputs[0].type)
    reduced = dimensions(op.dimensions)
    if any(shaped.is_dynamic_dim(d) for d in reduced):
        return None
    return float(np.prod([shaped.shape[d] for d in reduced]))


def reduce_body(op: stablehlo.ReduceOp) -> type | None:
    """`stablehlo.AddOp` or `stablehlo.MaxOp` when `op` reduces one operand to one result
    with a body that returns the add or maximum of its two arguments; else None."""
    if len(op.inputs) != 1 or len(op.results) != 1:
        return None
    return binary_body(op.body, (stablehlo.AddOp, stablehlo.MaxOp))


def reduce_refused(op: stablehlo.ReduceOp, feature: int) -> Reason | None:
    """Why a per-channel map cannot pass `op`, a `reduce` add or maximum (`reduce_body`)
    reading its data along `feature`: it reduces `feature`; its init value is not the
    identity of its body (0 for a sum, -inf or the lowest value for a maximum); a maximum
    from the lowest finite value over a size that may be zero (dynamic), whose result is
    that value, not that value times s."""
    if feature in dimensions(op.dimensions):
        return reasons.REDUCE_SPANS_FEATURE
    body = reduce_body(op)
    init = uniform_f64(op.init_values[0])
    if body is stablehlo.AddOp and init != 0:
        return reasons.REDUCE_INIT_NOT_IDENTITY
    if body is stablehlo.MaxOp and not _is_lowest(init, op.results[0]):
        return reasons.REDUCE_INIT_NOT_IDENTITY
    if body is stablehlo.MaxOp and init != -np.inf and not reduced_elements(op):
        return reasons.POOL_LOWEST_SCALED
    return None


def _is_lowest(init: float | None, result: ir.Value) -> bool:
    """Whether `init` is the maximum's identity in `result`'s type: -inf, or the lowest
    finite value."""
    dtype = float_dtype(ir.RankedTensorType(result.type).element_type)
    return init is not None and (init == -np.inf or init == float(ml_dtypes.finfo(dtype).min))


def called_maximum(call: func.CallOp) -> tuple[ir.Value, ir.Value] | None:
    """For a call of a private function whose body returns `maximum(arg, z)` of one of its
    arguments (`jax.nn.relu` is jitted: a jax.export writes it as `call @relu(%x)`, or
    `call @relu(%dim, %x)` with a symbolic batch, dimension sizes first), the call's
    operand passed as that argument (its data operand, of the call's result type) and the
    value z in the callee; else None. The pass runs on the whole module, so the callee may
    be read; it is never changed (a fold calls it again, or builds a clamp in place of
    the call)."""
    # The callee first (read once a run): most calls are of other functions (relu6's
    # clip), refused before the call's operands are read.
    reads = called_reads(call)
    return None if reads is None else _maximum_of(call, reads.relu)


def _maximum_of(call: func.CallOp, relus: list[tuple[int, ir.Value]]) -> tuple[ir.Value, ir.Value] | None:
    """`called_maximum` of `call`, its callee's `CalleeReads.relu` read."""
    if not relus or not _fed_from_below(call):
        return None
    for number, other in relus:
        data = call.operands[number]
        if data.type == call.results[0].type:
            return data, other
    return None


def _relu_arguments(block: ir.Block, returned: ir.Value) -> list[tuple[int, ir.Value]]:
    """(argument number of v, z) for each way `returned` is `maximum(v, z)` of an argument
    v of `block` and another value z, in the order tried; empty for any other value."""
    maximum = returned.owner
    if not isinstance(maximum, stablehlo.MaxOp):
        return []
    found = []
    for value, other in ((maximum.lhs, maximum.rhs), (maximum.rhs, maximum.lhs)):
        number = argument_number(value, block)
        if number is not None and other != value:
            found.append((number, other))
    return found


def called_body(call: func.CallOp) -> tuple[ir.Block, ir.Value] | None:
    """The body of the private function `call` calls and the one value it returns, when
    an operand of the call's result type comes from an op a fold could pass and the
    callee takes as many arguments as the call passes; else None."""
    if not _fed_from_below(call):
        return None
    return callee_body(call)


_Read = TypeVar("_Read")


def _callee_read(call: func.CallOp, what: str, read: Callable[[ir.Block, ir.Value], _Read]) -> _Read | None:
    """`read(block, returned)` of the function `call` calls, by the name `what`, when
    `callee_body` finds its body; else None."""
    found = _looked_up(call, what, lambda function: _read_body(function, read))
    if found is None or found[1] != len(call.operands):
        return None
    return found[0]


def _read_body(
    function: func.FuncOp | None, read: Callable[[ir.Block, ir.Value], _Read]
) -> tuple[_Read, int] | None:
    """`read(block, returned)` of `function`'s `_body` and its number of arguments; None
    where it has no such body."""
    body = _body(function)
    return None if body is None else (read(body[0], body[1]), body[2])


def _fed_from_below(call: func.CallOp) -> bool:
    """Whether `call` has one result and an operand of its type computed by an op a fold
    could pass (`_below`)."""
    if len(call.results) != 1:
        return False
    result_type = call.results[0].type
    below = _below()
    return any(v.type == result_type and type(v.owner) in below for v in call.operands)


def callee_body(call: func.CallOp) -> tuple[ir.Block, ir.Value] | None:
    """The body of the function `call` calls and the one value it returns, when it takes
    as many arguments as the call passes; else None."""
    return _callee_read(call, "body", lambda block, returned: (block, returned))


def _body(function: func.FuncOp | None) -> tuple[ir.Block, ir.Value, int] | None:
    """`function`'s one block, the one value it returns and its number of arguments; None
    when it has no single block or returns other than one value."""
    if function is None or len(function.regions[0].blocks) != 1:
        return None
    block = function.regions[0].blocks[0]
    returned = block.operations[len(block.operations) - 1].operands
    if len(returned) != 1:
        return None
    return block, returned[0], len(block.arguments)


@cache
def _below() -> frozenset[type]:
    """What a relu's data may be computed by for a fold to pass it: a linear op or L + b (the
    output side), a per-feature affine op (the input side), or an op of a row of
    `analysis.commuting.TABLE` (read on first use: that module reads this one); a set, for
    `type(op) in`: `isinstance` against a tuple of OpView classes (nanobind types) costs
    about 60 ns a class it is not, and `value.owner` is the registered class itself."""
    from .commuting import PASSAGE_OPS

    return frozenset((
        stablehlo.ConvolutionOp, stablehlo.DotGeneralOp, stablehlo.DotOp, stablehlo.AddOp,
        stablehlo.SubtractOp, stablehlo.MulOp, stablehlo.DivOp, stablehlo.BatchNormInferenceOp,
        *PASSAGE_OPS,
    ))


_callees: ContextVar[dict[tuple[str, int, ir.Attribute], object] | None] = ContextVar(
    "_callees", default=None
)
"""What `_looked_up` found in this pass run, by (what, module, symbol); None outside
`callees_read_once`."""


@contextlib.contextmanager
def callees_read_once() -> Iterator[None]:
    """Within it (one pass run), `called_body` and `called_reads` look each function up and
    read its body once, not on every visit of every call (a scan of the module each):
    the pass never changes, adds or removes a function. The handles they keep die with
    it (MLIR invalidates them across runs).

    >>> with callees_read_once():   # doctest: +SKIP
    ...     rewrite.apply_patterns_and_fold_greedily(module, patterns, config)
    """
    token = _callees.set({})
    try:
        yield
    finally:
        _callees.reset(token)


def _looked_up(call: func.CallOp, what: str, read):
    """`read(the function call calls, or None)`, once a run per function inside
    `callees_read_once`; on every call outside it."""
    # The symbol as the key (an attribute, uniqued by the context: hashed and compared
    # by address), its name read only to look a function up.
    symbol = call.operation.attributes["callee"]
    module = call.operation.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    found = _callees.get()
    if found is None:
        return read(_functions(module).get(ir.FlatSymbolRefAttr(symbol).value))
    where = 0 if module is None else op_key(module.operation)
    key = (what, where, symbol)
    value = found.get(key, _MISSING)
    if value is _MISSING:
        functions = read_once_a_run(("functions", where), lambda: _functions(module))
        value = found[key] = read(functions.get(ir.FlatSymbolRefAttr(symbol).value))
    return value


_MISSING = object()
"""Not looked up yet (a read may be None)."""


def read_once_a_run(key: tuple, read: Callable[[], _Read]) -> _Read:
    """`read()`, once a pass run for `key` inside `callees_read_once` (the first answer
    kept: what the module as given says, not what the rewrites made of it so far); on
    every call outside it. `key` must not hold op handles (`op_key` addresses instead)."""
    found = _callees.get()
    if found is None:
        return read()
    value = found.get(key, _MISSING)
    if value is _MISSING:
        value = found[key] = read()
    return value


def _functions(module: ir.Operation | None) -> dict[str, func.FuncOp]:
    """The functions of `module` by name (one scan of its ops, the first of a name kept);
    none without a module."""
    table: dict[str, func.FuncOp] = {}
    for op in module.regions[0].blocks[0].operations if module is not None else ():
        if isinstance(op, func.FuncOp):
            table.setdefault(ir.StringAttr(op.sym_name).value, op)
    return table


def called_leaky_relu(call: func.CallOp) -> ir.Value | None:
    """For a call of a private function whose body returns `select(v >= 0, v, a * v)` (or
    `v > 0`) of one of its arguments v, a a broadcast scalar argument or constant
    (`jax.nn.leaky_relu`: jax.export writes `call @leaky_relu(%v, %alpha)`, its select a
    call of `_where`), the call's operand passed as v; else None. Positively homogeneous
    for any a: leaky(v) * s = leaky(v * s) for s > 0. The callee is read once a pass run
    (`called_reads`)."""
    reads = called_reads(call)
    if reads is None or reads.leaky is None or not _fed_from_below(call):
        return None
    data = call.operands[reads.leaky[0]]
    return data if data.type == call.results[0].type else None


def _leaky_argument(block: ir.Block, value: ir.Value) -> tuple[int] | None:
    """(argument number of v,) when `value`, returned by `block`, is `select(v >= 0, v,
    a * v)` of an argument v (`called_leaky_relu`; a tuple, so that argument 0 is not
    read as none); else None."""
    selected = _selected(value)
    if selected is None:
        return None
    test, v, otherwise = selected
    if not _is_sign_test(test, v) or not _is_scalar_multiple(otherwise, v):
        return None
    number = argument_number(v, block)
    return None if number is None else (number,)


def leaky_relu_data(op: ir.OpView) -> ir.Value | None:
    """The data operand v of `op` when it is a leaky relu, select(v >= 0 (or v > 0), v,
    a * v): a call of a function that returns one (`called_leaky_relu`), or inline, a
    select or a call of jax's `_where` whose compare and multiply only it reads
    (torch-mlir's and TensorFlow's lowering, `select(v > 0, v, v * constant_like(a))`);
    else None.

    >>> leaky_relu_data(select_op)   # doctest: +SKIP
    <the value v>
    """
    if isinstance(op, func.CallOp):
        data = called_leaky_relu(op)
        if data is not None:
            return data
    if not isinstance(op, (stablehlo.SelectOp, func.CallOp)) or len(op.results) != 1:
        return None
    selected = _selected(op.results[0])
    if selected is None:
        return None
    test, v, otherwise = selected
    if not _is_sign_test(test, v) or not _is_scalar_multiple(otherwise, v):
        return None
    # The compare and the multiply read v too: a fold that changes v changes them, which
    # only the leaky relu may see.
    if not (single_user(test) and single_user(otherwise)) or v.type != op.results[0].type:
        return None
    return v


def _selected(value: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value] | None:
    """(predicate, on true, on false) when `value` is a `select`, or a call of a function
    that returns the select of its last three arguments in order (jax's `_where`, after
    dimension sizes with a symbolic batch)."""
    owner = value.owner
    if isinstance(owner, stablehlo.SelectOp):
        return owner.pred, owner.on_true, owner.on_false
    if not isinstance(owner, func.CallOp) or len(owner.operands) < 3 or len(owner.results) != 1:
        return None
    body = callee_body(owner)  # as many arguments as the call passes
    if body is None or not _selects_last_three(*body):
        return None
    return tuple(owner.operands)[len(owner.operands) - 3:]


def _selects_last_three(block: ir.Block, returned: ir.Value) -> bool:
    """Whether `returned`, returned by `block`, is the select of its last three
    arguments, in order (jax's `_where`)."""
    select, count = returned.owner, len(block.arguments)
    if not isinstance(select, stablehlo.SelectOp) or count < 3:
        return False
    numbers = [argument_number(v, block) for v in (select.pred, select.on_true, select.on_false)]
    return numbers == [count - 3, count - 2, count - 1]


def _is_sign_test(test: ir.Value, v: ir.Value) -> bool:
    """Whether `test` is `v >= 0` or `v > 0`."""
    compare = test.owner
    if not isinstance(compare, stablehlo.CompareOp) or compare.lhs != v:
        return False
    direction = stablehlo.ComparisonDirectionAttr(compare.comparison_direction).value
    return direction in ("GE", "GT") and uniform_f64(compare.rhs) == 0


def _is_scalar_multiple(value: ir.Value, v: ir.Value) -> bool:
    """Whether `value` is `v` times a broadcast scalar that is an argument or a constant
    (converted or not), or times a splat constant (torch-mlir's and TensorFlow's inline
    leaky relu, `chlo.constant_like(alpha)`): a factor that does not depend on `v`."""
    product = value.owner
    if not isinstance(product, stablehlo.MulOp):
        return False
    for this, other in ((product.lhs, product.rhs), (product.rhs, product.lhs)):
        if this == v and isinstance(other.owner, stablehlo.ConstantOp) and uniform_f64(other) is not None:
            return True
        broadcast = (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp)
        if this != v or not isinstance(other.owner, broadcast):
            continue
        scalar = other.owner.operand
        while isinstance(scalar.owner, stablehlo.ConvertOp):
            scalar = scalar.owner.operand
        if ir.RankedTensorType(scalar.type).rank == 0 and (
            isinstance(scalar, ir.BlockArgument) or isinstance(scalar.owner, stablehlo.ConstantOp)
        ):
            return True
    return False


def clamp_bound_f64(bound: ir.Value, feature: int, channels: int) -> np.ndarray | None:
    """A clamp's bound as `channels` float64 values: a scalar (rank 0) one repeated, else
    `per_channel_f64` along `feature`; None when it is not a constant."""
    if ir.RankedTensorType(bound.type).rank == 0:
        value = uniform_f64(bound)
        return None if value is None else np.full(channels, value)
    return per_channel_f64(bound, feature, channels)


def called_relu6(call: func.CallOp) -> tuple[ir.Value, float, float] | None:
    """For a call of a private function whose body returns `minimum(maximum(v, lo), hi)`
    of one of its arguments v, lo and hi scalar constants (`jax.nn.relu6`: jax.export
    writes `call @relu6(%v)`, the dimension sizes first with a symbolic batch), the call's
    operand passed as v, lo and hi; else None. A clamp whose bounds sit in the callee:
    a fold replaces the call by an inline clamp with moved bounds."""
    # The callee's bounds are read once a pass run (`called_reads`), not on each visit.
    reads = called_reads(call)
    if reads is None or not reads.relu6 or not _fed_from_below(call):
        return None
    for number, lo, hi in reads.relu6:
        if call.operands[number].type == call.results[0].type:
            return call.operands[number], lo, hi
    return None


def _relu6_bounds(block: ir.Block, value: ir.Value) -> list[tuple[int, float, float]]:
    """(argument number of v, lo, hi) for each way `value`, returned by `block`, is
    `minimum(maximum(v, lo), hi)` with lo and hi scalar constants, in the order tried."""
    minimum = value.owner
    if not isinstance(minimum, stablehlo.MinOp):
        return []
    found = []
    for inner, upper in ((minimum.lhs, minimum.rhs), (minimum.rhs, minimum.lhs)):
        maximum = inner.owner
        if not isinstance(maximum, stablehlo.MaxOp):
            continue
        hi = uniform_f64(upper)
        if hi is None:
            continue
        for v, lower in ((maximum.lhs, maximum.rhs), (maximum.rhs, maximum.lhs)):
            number, lo = argument_number(v, block), uniform_f64(lower)
            if number is not None and lo is not None:
                found.append((number, lo, hi))
    return found


def pure_callee(call: func.CallOp, depth: int = 8) -> bool:
    """Whether the function `call` calls computes its results from its arguments alone: it
    holds no op of `affine_map.NOT_FUNCTIONS_OF_OPERANDS` (a random number, a custom
    call, control flow) and calls only such functions, `depth` calls deep at most. A
    function reads nothing but its arguments and constants, so a call of a pure one
    depends on its operands only (jax.export's `call @_where`, `call @relu`). Read once
    a pass run per function inside `callees_read_once`."""
    return bool(_looked_up(call, "pure", lambda function: _pure(function, depth)))


def _pure(function: func.FuncOp | None, depth: int) -> bool:
    if function is None or depth <= 0:
        return False
    found = True

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal found
        if op.name in NOT_FUNCTIONS_OF_OPERANDS or (
            op.name == "func.call" and not pure_callee(op.opview, depth - 1)
        ):
            found = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    function.operation.walk(visit)
    return found
